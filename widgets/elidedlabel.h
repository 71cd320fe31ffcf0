#pragma once
// A label that shows as much of its text as fits, elided in the middle, instead of widening the
// window: identity keys ("appId+user@contoso.com") are long, and a headline card must not force
// the dashboard wider than a laptop screen. The whole text stays in the tooltip.

#include <QLabel>

namespace ts::widgets {

class ElidedLabel : public QLabel
{
    Q_OBJECT

public:
    explicit ElidedLabel(const QString &text = {}, QWidget *parent = nullptr);

    [[nodiscard]] QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;
};

} // namespace ts::widgets
