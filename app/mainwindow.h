#pragma once
// The main window: a thin host for the Dashboard (pages, replay bar) that adds what a desktop
// application owes its user: menus and shortcuts, drag and drop, recent files, workspace and
// policy actions, exports, a progress bar with Cancel, saved layout, tray notifications and
// offscreen screenshots. It does no work itself: requests go out as signals to the pipeline
// (ts::AnalysisSession, wired in main.cpp), results come back as snapshots.

#include "engine/reportdata.h"
#include "ingest/ingeststatus.h"

#include <QMainWindow>
#include <QVariantMap>

#include <memory>

class QAction;
class QComboBox;
class QLabel;
class QToolBar;
class QStackedWidget;
class QMenu;
class QProgressBar;
class QPushButton;
class QSystemTrayIcon;

namespace ts::widgets {
class AlertBanner;
class Dashboard;
class PolicyEditor;
struct ListenSettings;
class StartPage;
} // namespace ts::widgets

class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    [[nodiscard]] ts::widgets::Dashboard *dashboard() const { return m_dashboard; }
    // Grabs the window at this size (or its current size when invalid) into a PNG, with the
    // latest snapshot applied and every plot drawn; works on the offscreen platform.
    bool saveScreenshot(const QString &path, QSize size = {});
    [[nodiscard]] QStringList recentFiles() const;
    // Where a critical alert is shown when the desktop has no notification area.
    [[nodiscard]] ts::widgets::AlertBanner *alertBanner() const { return m_banner; }
    // What the tray icon's tooltip says now: the critical alerts and the breakers.
    [[nodiscard]] QString trayToolTip() const;
    // Shown until there is something to show (no input yet): Open log, Listen, Demo.
    [[nodiscard]] ts::widgets::StartPage *startPage() const { return m_startPage; }
    [[nodiscard]] bool isShowingStartPage() const;
    [[nodiscard]] QAction *darkThemeAction() const { return m_darkTheme; }

public Q_SLOTS:
    void applySnapshot(std::shared_ptr<const ts::DashboardSnapshot> snapshot);
    void setProgress(qint64 done, qint64 total);
    void setIngestStatus(const ts::IngestStatus &status);
    void showPage(const QString &name);
    // Leaves the start page for the dashboard (input is on its way).
    void showDashboard();
    // View > Preferences; the dialog's values are saved and applied when accepted.
    void showPreferences();
    void setWorkspacePath(const QString &path);
    // Adds to File > Recent (the integrator calls it once files actually opened).
    void addRecentFile(const QString &path);

    // ---- live sessions (issue 17) ----
    // The listener started (feed "http://127.0.0.1:4318") or stopped (empty).
    void setListening(const QString &feed);
    // A new, empty session: untitled, following the newest data.
    void resetSession();
    // The session was saved as `path`: the title and File > Recent follow.
    void setSavedWorkspace(const QString &path);
    // What the opened workspace remembers (AnalysisSession::sessionSettingsLoaded): the time
    // window ("timeWindow": 5m, 15m, 1h, all).
    void applySessionSettings(const QVariantMap &settings);

Q_SIGNALS:
    void openFilesRequested(const QStringList &paths);
    void openWorkspaceRequested(const QString &path);
    void saveWorkspaceRequested(const QString &path);
    void policyChangeRequested(const QString &policyJsonOrName);
    // The Breakers page's reference breaker (AnalysisSession::setBreakerModel).
    void breakerModelChangeRequested(const QString &breakerJson);
    void cancelRequested();
    void demoRequested();
    // View > Follow Files: files opened keep being read as they grow (on by default).
    void followFilesToggled(bool follow);
    void exportReportRequested(const QString &path);
    // ---- live sessions (issue 17) ----
    void listenRequested(const ts::widgets::ListenSettings &settings);
    void stopListeningRequested();
    void newSessionRequested();
    void closeSessionRequested();
    // A view setting the session's workspace should remember (the time window).
    void sessionSettingChanged(const QString &key, const QString &value);
    // File > Add Source…: a store to poll (model/poll), every `everySeconds`.
    void addSourceRequested(const QString &url, int everySeconds);
    // Preferences: the live feeds' reorder window, ms (< 0: auto).
    void reorderWindowChanged(qint64 windowMs);

protected:
    void closeEvent(QCloseEvent *event) override;
    void changeEvent(QEvent *event) override;
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dropEvent(QDropEvent *event) override;

private:
    void createActions();
    void createStatusBar();
    void rebuildRecentMenu();
    void requestOpenFiles(const QStringList &paths);
    void openFilesDialog();
    void openWorkspaceDialog();
    void saveWorkspaceDialog();
    void exportPlotDialog();
    void exportTableDialog();
    void exportReportDialog();
    void showPolicyEditor();
    // Names the most severe of the new critical alerts: in a tray balloon, or in the window's
    // banner when there is no tray host.
    void notifyCriticalAlerts(const QList<ts::Alert> &alerts);
    void requestListen();
    void setDarkTheme(bool dark);
    void updateStatusText();
    void restoreLayout();
    void saveLayout();
    // ---- live sessions (issue 17) ----
    void createSessionActions(QMenu *file);
    void createTimeWindowPicker(QToolBar *toolbar);
    void listenDialog();
    void showStaleFeeds(const QStringList &staleFeeds);

    ts::widgets::Dashboard *m_dashboard;
    ts::widgets::AlertBanner *m_banner;
    ts::widgets::StartPage *m_startPage;
    QStackedWidget *m_body; // the start page, then the dashboard
    QAction *m_darkTheme = nullptr;
    QAction *m_demoAction = nullptr; // its icon is redrawn in the theme's text colour
    ts::widgets::PolicyEditor *m_policyEditor = nullptr;
    QMenu *m_recentMenu = nullptr;
    QProgressBar *m_progress;
    QPushButton *m_cancel;
    QLabel *m_statusText;
    QSystemTrayIcon *m_tray = nullptr;
    QString m_workspacePath;
    QString m_policySetting; // the policy in force as the session keeps it ("" = built-in)
    qint64 m_lastNotificationMs = 0;
    int m_suppressedNotifications = 0;
    // ---- live sessions (issue 17) ----
    QAction *m_listenAction = nullptr;
    QAction *m_stopListeningAction = nullptr;
    QLabel *m_staleText = nullptr; // status bar: stale feeds, in red, while there are any
    // The workspace the session is (opened or saved as): the title, Save As's default. Never
    // the session's scratch workspace.
    QString m_documentPath;
    void updateTitle();
    QComboBox *m_timeWindow = nullptr; // toolbar: last 5 min, 15 min, 1 h, all
};
