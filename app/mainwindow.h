#pragma once
// The main window: a thin host for the Dashboard (pages, replay bar) that adds what a desktop
// application owes its user: menus and shortcuts, drag and drop, recent files, workspace and
// policy actions, exports, a progress bar with Cancel, saved layout, tray notifications and
// offscreen screenshots. It does no work itself: requests go out as signals to the pipeline
// (ts::AnalysisSession, wired in main.cpp), results come back as snapshots.

#include "engine/reportdata.h"
#include "models/ingeststatus.h"

#include <QMainWindow>

#include <memory>

class QAction;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QSystemTrayIcon;

namespace ts::widgets {
class Dashboard;
class PolicyEditor;
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

public Q_SLOTS:
    void applySnapshot(std::shared_ptr<const ts::DashboardSnapshot> snapshot);
    void setProgress(qint64 done, qint64 total);
    void setIngestStatus(const ts::IngestStatus &status);
    void showPage(const QString &name);
    void setWorkspacePath(const QString &path);
    // Adds to File > Recent (the integrator calls it once files actually opened).
    void addRecentFile(const QString &path);

Q_SIGNALS:
    void openFilesRequested(const QStringList &paths);
    void openWorkspaceRequested(const QString &path);
    void saveWorkspaceRequested(const QString &path);
    void policyChangeRequested(const QString &policyJsonOrName);
    void cancelRequested();
    void demoRequested();
    void exportReportRequested(const QString &path);
    // File > Add Source…: a store to poll (model/poll), every `everySeconds`.
    void addSourceRequested(const QString &url, int everySeconds);

protected:
    void closeEvent(QCloseEvent *event) override;
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
    void notifyCriticalAlerts(const QList<ts::Alert> &alerts);
    void updateStatusText();
    void restoreLayout();
    void saveLayout();

    ts::widgets::Dashboard *m_dashboard;
    ts::widgets::PolicyEditor *m_policyEditor = nullptr;
    QMenu *m_recentMenu = nullptr;
    QProgressBar *m_progress;
    QPushButton *m_cancel;
    QLabel *m_statusText;
    QSystemTrayIcon *m_tray = nullptr;
    QString m_workspacePath;
    qint64 m_lastNotificationMs = 0;
    int m_suppressedNotifications = 0;
};
