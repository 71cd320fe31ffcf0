#pragma once
// A label that shows as much of its text as fits instead of widening the window: identity keys
// ("appId+user@contoso.com") are long, and a headline card must not force the dashboard wider
// than a laptop screen. The first keptPrefix characters (a figure, "31 % ") always show; the
// rest is elided from the left, because a key's end (the user) tells more than its start. The
// whole text stays in the tooltip of the page that sets it.

#include <QLabel>

namespace ts::widgets {

class ElidedLabel : public QLabel
{
    Q_OBJECT

public:
    explicit ElidedLabel(const QString &text = {}, QWidget *parent = nullptr);

    [[nodiscard]] QSize minimumSizeHint() const override;
    void setKeptPrefix(int characters)
    {
        m_keptPrefix = characters;
        update();
    }

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    int m_keptPrefix = 0;
};

} // namespace ts::widgets
