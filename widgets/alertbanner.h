#pragma once
// An in-window banner for a new critical alert, for desktops without a notification area
// (no tray host: many tiling window managers, a remote session, the offscreen platform). It
// names one alert (the most severe) and how many more came with it, offers to show the Alerts
// page, and stays until closed or replaced, or until the alert is withdrawn (an operation that
// was pending, not lost, after all: issue 30.1).

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
    // The alerts standing now: hides the banner when the critical alert it names (its kind and
    // key) is no longer among them.
    void withdrawIfGone(const QList<ts::Alert> &current);

Q_SIGNALS:
    void showAlertsRequested();

protected:
    void changeEvent(QEvent *event) override;

private:
    void applyColours();
    QLabel *m_text;
    QPushButton *m_show;
    QToolButton *m_close;
    QString m_kind; // what the banner names, "" = nothing
    QString m_key;
};

// The one line that names an alert to a person (tray balloon, banner): kind, short key, detail.
QString alertHeadline(const ts::Alert &alert);

// The tray icon's tooltip: the critical alerts standing now ("Throttlescope: 2 critical alerts:
// lost-work · alice, retry-storm · bob"), or that there is none.
QString criticalAlertsSummary(const QList<ts::Alert> &current);

} // namespace ts::widgets
