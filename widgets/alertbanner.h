#pragma once
// An in-window banner for a new critical alert, for desktops without a notification area
// (no tray host: many tiling window managers, a remote session, the offscreen platform). It
// names one alert (the most severe) and how many more came with it, offers to show the Alerts
// page, and stays until closed or replaced.

#include <QFrame>

class QLabel;
class QPushButton;
class QToolButton;

namespace ts {
struct Alert;
}

namespace ts::widgets {

class AlertBanner : public QFrame
{
    Q_OBJECT
public:
    explicit AlertBanner(QWidget *parent = nullptr);

    // Shows this alert, and "+N more" when others came with it.
    void showAlert(const ts::Alert &alert, int more);
    [[nodiscard]] QString text() const;

Q_SIGNALS:
    void showAlertsRequested();

protected:
    void changeEvent(QEvent *event) override;

private:
    void applyColours();
    QLabel *m_text;
    QPushButton *m_show;
    QToolButton *m_close;
};

// The one line that names an alert to a person (tray balloon, banner): kind, short key, detail.
QString alertHeadline(const ts::Alert &alert);

} // namespace ts::widgets
