#include "mainwindow.h"

#include "addsourcedialog.h"
#include "alertbanner.h"
#include "alertspage.h"
#include "breakerspage.h"
#include "dashboard.h"
#include "eventspage.h"
#include "ingestpage.h"
#include "listendialog.h"
#include "models/alertsmodel.h"
#include "models/breakercounts.h"
#include "models/eventsmodel.h"
#include "models/snapshotmath.h"
#include "models/timerange.h"
#include "pageicons.h"
#include "plotstyle.h"
#include "policyeditor.h"
#include "preferences.h"
#include "qcp.h"
#include "session/scratchworkspace.h"
#include "startpage.h"
#include "store/workspace.h"
#include "theme.h"
#include "userguide.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QCoreApplication>
#include <QDateTime>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMetaMethod>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QStyle>
#include <QSystemTrayIcon>
#include <QToolBar>
#include <QVBoxLayout>

namespace {
constexpr int kMaxRecentFiles = 10;
// Notifications are rate-limited: a retry storm raises many critical alerts within seconds and
// one balloon saying so is more useful than twenty.
constexpr qint64 kNotificationGapMs = 10'000;
const QString kRecentKey = QStringLiteral("recentFiles");

bool isWorkspaceFile(const QString &path)
{
    return ts::looksLikeWorkspaceFile(path); // by content; by name while there is none
}
} // namespace

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent), m_dashboard(new ts::widgets::Dashboard),
      m_banner(new ts::widgets::AlertBanner), m_startPage(new ts::widgets::StartPage),
      m_body(new QStackedWidget), m_progress(new QProgressBar),
      m_cancel(new QPushButton(tr("Cancel"))), m_statusText(new QLabel)
{
    setObjectName(QStringLiteral("MainWindow"));
    setWindowTitle(tr("Throttlescope"));
    auto *central = new QWidget;
    auto *centralLayout = new QVBoxLayout(central);
    centralLayout->setContentsMargins(0, 0, 0, 0);
    centralLayout->setSpacing(0);
    centralLayout->addWidget(m_banner);
    m_body->addWidget(m_startPage);
    m_body->addWidget(m_dashboard);
    centralLayout->addWidget(m_body, 1);
    setCentralWidget(central);
    connect(m_banner, &ts::widgets::AlertBanner::showAlertsRequested, this,
            [this] { showPage(QStringLiteral("alerts")); });
    connect(m_startPage, &ts::widgets::StartPage::openLogsRequested, this,
            &MainWindow::openFilesDialog);
    connect(m_startPage, &ts::widgets::StartPage::listenRequested, this,
            &MainWindow::requestListen);
    connect(m_startPage, &ts::widgets::StartPage::demoRequested, this, [this] {
        showDashboard();
        Q_EMIT demoRequested();
    });
    connect(m_startPage, &ts::widgets::StartPage::recentFileRequested, this,
            [this](const QString &path) {
                if (isWorkspaceFile(path)) {
                    showDashboard();
                    Q_EMIT openWorkspaceRequested(path);
                } else {
                    requestOpenFiles({path});
                }
            });
    // Display preferences before the first paint: theme, thresholds, time zone, refresh rate.
    ts::widgets::Preferences::load().apply(m_dashboard);
    setAcceptDrops(true);
    createActions();
    createStatusBar();
    if (QSystemTrayIcon::isSystemTrayAvailable()) {
        m_tray = new QSystemTrayIcon(this);
        m_tray->setIcon(style()->standardIcon(QStyle::SP_MessageBoxWarning));
        m_tray->setToolTip(tr("Throttlescope"));
        m_tray->show();
    }
    connect(m_dashboard, &ts::widgets::Dashboard::criticalAlertsRaised, this,
            &MainWindow::notifyCriticalAlerts);
    connect(m_dashboard, &ts::widgets::Dashboard::snapshotApplied, this,
            &MainWindow::updateStatusText);
    // An alert withdrawn (work that was pending, not lost) leaves the banner and the tray.
    connect(m_dashboard, &ts::widgets::Dashboard::snapshotApplied, this, [this] {
        const auto &snapshot = m_dashboard->snapshot();
        const QList<ts::Alert> current = snapshot ? snapshot->report.alerts : QList<ts::Alert>{};
        m_banner->withdrawIfGone(current);
        if (m_tray)
            m_tray->setToolTip(trayToolTip());
    });
    connect(m_dashboard->ingestPage(), &ts::widgets::IngestPage::staleFeedsChanged, this,
            &MainWindow::showStaleFeeds);
    connect(m_dashboard->breakersPage(), &ts::widgets::BreakersPage::breakerModelChangeRequested,
            this, &MainWindow::breakerModelChangeRequested);
    m_dashboard->ingestPage()->setStaleAfterSeconds(
        ts::widgets::ListenSettings::load().staleAfterSeconds);
    resize(1280, 800);
    restoreLayout();
    updateStatusText();
}

MainWindow::~MainWindow() = default;

void MainWindow::createActions()
{
    QMenu *file = menuBar()->addMenu(tr("&File"));
    QToolBar *toolbar = addToolBar(tr("Main"));
    toolbar->setObjectName(QStringLiteral("mainToolbar"));
    toolbar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);

    QAction *open = file->addAction(style()->standardIcon(QStyle::SP_DialogOpenButton),
                                    tr("&Open Logs…"), this, &MainWindow::openFilesDialog);
    open->setShortcut(QKeySequence::Open);
    toolbar->addAction(open);
    QAction *openWorkspace =
        file->addAction(tr("Open &Workspace…"), this, &MainWindow::openWorkspaceDialog);
    openWorkspace->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
    QAction *saveWorkspace =
        file->addAction(tr("&Save Workspace As…"), this, &MainWindow::saveWorkspaceDialog);
    saveWorkspace->setShortcut(QKeySequence::Save);
    file->addAction(tr("Add &Source…"), this, [this] {
        AddSourceDialog dialog(this);
        if (dialog.exec() == QDialog::Accepted)
            Q_EMIT addSourceRequested(dialog.url(), dialog.everySeconds());
    });
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    rebuildRecentMenu();
    createSessionActions(file);
    file->addSeparator();
    QAction *exportPlot =
        file->addAction(tr("Export &Plot (PNG, PDF, SVG)…"), this, &MainWindow::exportPlotDialog);
    exportPlot->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    QAction *exportTable =
        file->addAction(tr("Export &Table as CSV…"), this, &MainWindow::exportTableDialog);
    exportTable->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    file->addAction(tr("Export JSON &Report…"), this, &MainWindow::exportReportDialog);
    file->addSeparator();
    QAction *quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu *view = menuBar()->addMenu(tr("&View"));
    const QStringList pages = ts::widgets::Dashboard::pageNames();
    for (int i = 0; i < pages.size(); ++i) {
        const QString name = pages.at(i);
        QAction *action = view->addAction(name.at(0).toUpper() + name.mid(1), this,
                                          [this, name] { showPage(name); });
        action->setShortcut(QKeySequence(Qt::CTRL | static_cast<Qt::Key>(Qt::Key_1 + i)));
    }
    view->addSeparator();
    QAction *live = view->addAction(tr("&Live (follow newest data)"), this,
                                    [this] { m_dashboard->timeRange()->setFollowing(true); });
    live->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    toolbar->addAction(live);
    QAction *follow = view->addAction(tr("F&ollow Files"));
    follow->setObjectName(QStringLiteral("followFilesAction"));
    follow->setCheckable(true);
    follow->setChecked(true);
    follow->setToolTip(tr("Keep reading opened files as they grow, like tail -F"));
    connect(follow, &QAction::toggled, this, &MainWindow::followFilesToggled);
    toolbar->addAction(follow);
    createTimeWindowPicker(toolbar);
    QAction *showAll = view->addAction(tr("Show &All Time"), this,
                                       [this] { m_dashboard->timeRange()->showAll(); });
    showAll->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    QAction *filter = view->addAction(tr("&Filter Identities"), this, [this] {
        showPage(QStringLiteral("overview"));
        if (auto *edit = m_dashboard->findChild<QLineEdit *>())
            edit->setFocus();
    });
    filter->setShortcut(QKeySequence::Find);
    view->addSeparator();
    m_darkTheme = view->addAction(tr("&Dark Theme"), this, &MainWindow::setDarkTheme);
    m_darkTheme->setObjectName(QStringLiteral("darkThemeAction"));
    m_darkTheme->setCheckable(true);
    m_darkTheme->setChecked(ts::widgets::isDark(QApplication::palette()));
    m_darkTheme->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_T));
    QAction *preferences =
        view->addAction(tr("&Preferences…"), this, &MainWindow::showPreferences);
    preferences->setObjectName(QStringLiteral("preferencesAction"));
    preferences->setMenuRole(QAction::PreferencesRole);
    preferences->setShortcut(QKeySequence::Preferences);
    QAction *fullScreen = view->addAction(
        tr("F&ull Screen"), this, [this] { setWindowState(windowState() ^ Qt::WindowFullScreen); });
    fullScreen->setShortcut(QKeySequence::FullScreen);

    QMenu *analysis = menuBar()->addMenu(tr("&Analysis"));
    QAction *policy = analysis->addAction(tr("&Policy…"), this, &MainWindow::showPolicyEditor);
    policy->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_P));
    toolbar->addAction(policy);
    QAction *demo = analysis->addAction(ts::widgets::pageIcon(QStringLiteral("play"), palette()),
                                        tr("Start &Demo"), this, [this] {
                                            showDashboard();
                                            Q_EMIT demoRequested();
                                        });
    demo->setObjectName(QStringLiteral("startDemoAction"));
    m_demoAction = demo;
    demo->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_D));
    toolbar->addAction(demo);
    QAction *cancel =
        analysis->addAction(tr("&Cancel Import"), this, [this] { Q_EMIT cancelRequested(); });
    cancel->setShortcut(QKeySequence(Qt::Key_Escape));

    QMenu *help = menuBar()->addMenu(tr("&Help"));
    QAction *guide =
        help->addAction(tr("&User Guide"), this, [this] { ts::app::openUserGuide(this); });
    guide->setObjectName(QStringLiteral("userGuideAction"));
    guide->setShortcut(QKeySequence::HelpContents);
    help->addAction(tr("&Keyboard Shortcuts"), this, [this] {
        QMessageBox::information(
            this, tr("Keyboard shortcuts"),
            tr("Ctrl+O open logs · Ctrl+Shift+O open workspace · Ctrl+S save workspace\n"
               "Ctrl+1…7 pages · Ctrl+F filter identities · Ctrl+L / End live\n"
               "Ctrl+0 show all time · Ctrl+E export plot · Ctrl+Shift+E export table\n"
               "Ctrl+P policy · Ctrl+D demo · Esc cancel import\n"
               "Ctrl+Shift+T dark theme · Ctrl+, preferences\n"
               "Plots: drag to pan, wheel to zoom, Shift+drag to zoom to a range, "
               "double-click to show all"));
    });
    help->addAction(tr("&About Throttlescope"), this, [this] {
        QMessageBox::about(this, tr("About Throttlescope"),
                           tr("Throttlescope %1\nRate limits, throttles and circuit breakers "
                              "reconstructed from API request logs.")
                               .arg(QCoreApplication::applicationVersion()));
    });
}

void MainWindow::createStatusBar()
{
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(260);
    m_progress->setTextVisible(true);
    m_progress->setVisible(false);
    m_cancel->setVisible(false);
    m_cancel->setToolTip(tr("Stop the import; what was read so far stays (Esc)"));
    connect(m_cancel, &QPushButton::clicked, this, [this] { Q_EMIT cancelRequested(); });
    statusBar()->addWidget(m_statusText, 1);
    m_staleText = new QLabel;
    m_staleText->setObjectName(QStringLiteral("staleFeedsStatus"));
    m_staleText->setStyleSheet(QStringLiteral("QLabel { color: #ffffff; background: #c62828; "
                                              "padding: 1px 6px; font-weight: bold; }"));
    m_staleText->setVisible(false);
    statusBar()->addPermanentWidget(m_staleText);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
}

void MainWindow::applySnapshot(std::shared_ptr<const ts::DashboardSnapshot> snapshot)
{
    if (snapshot)
        showDashboard();
    m_dashboard->applySnapshot(std::move(snapshot));
}

bool MainWindow::isShowingStartPage() const
{
    return m_body->currentWidget() == m_startPage;
}

void MainWindow::showDashboard()
{
    m_body->setCurrentWidget(m_dashboard);
}

void MainWindow::requestListen()
{
    // The start page's Listen is File > Listen…: the same dialog, the same listener; the
    // dashboard shows once listening was asked for (a cancelled dialog stays on the start page).
    listenDialog();
}

void MainWindow::changeEvent(QEvent *event)
{
    QMainWindow::changeEvent(event);
    // Drawn icons follow the theme (issue 30.14: the style's play icon vanished on dark).
    if (event->type() == QEvent::PaletteChange && m_demoAction)
        m_demoAction->setIcon(ts::widgets::pageIcon(QStringLiteral("play"), palette()));
}

void MainWindow::setDarkTheme(bool dark)
{
    ts::widgets::Preferences preferences = ts::widgets::Preferences::load();
    preferences.theme = dark ? ts::widgets::ThemeMode::Dark : ts::widgets::ThemeMode::System;
    preferences.save();
    preferences.apply(m_dashboard);
    // "System" may itself be dark: the check mark says what is shown.
    m_darkTheme->setChecked(ts::widgets::isDark(QApplication::palette()));
}

void MainWindow::showPreferences()
{
    ts::widgets::PreferencesDialog dialog(this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    const ts::widgets::Preferences preferences = dialog.preferences();
    preferences.save();
    preferences.apply(m_dashboard);
    Q_EMIT reorderWindowChanged(qint64(preferences.reorderWindowSeconds) * 1000);
    m_darkTheme->setChecked(ts::widgets::isDark(QApplication::palette()));
}

void MainWindow::setProgress(qint64 done, qint64 total)
{
    const bool running = total != 0 && done < total;
    m_progress->setVisible(running);
    m_cancel->setVisible(running);
    if (!running)
        return;
    if (total < 0) {
        // Unknown size (stdin): a busy indicator rather than a made-up percentage.
        m_progress->setRange(0, 0);
        return;
    }
    m_progress->setRange(0, 1000);
    m_progress->setValue(static_cast<int>(done * 1000 / total));
    m_progress->setFormat(
        QStringLiteral("%1 %").arg(QString::number(done * 100.0 / total, 'f', 0)));
}

void MainWindow::setIngestStatus(const ts::IngestStatus &status)
{
    m_dashboard->setIngestStatus(status);
}

void MainWindow::showPage(const QString &name)
{
    showDashboard();
    m_dashboard->showPage(name);
}

void MainWindow::setWorkspacePath(const QString &path)
{
    m_workspacePath = path;
    if (!path.isEmpty())
        showDashboard();
    m_dashboard->setWorkspacePath(path);
    // The session's scratch workspace is not a document: it names no window and is never
    // offered in Recent (it is gone once the session ends).
    if (ts::isScratchWorkspacePath(path))
        return;
    m_documentPath = path;
    updateTitle();
    if (!path.isEmpty())
        addRecentFile(path);
}

void MainWindow::updateStatusText()
{
    const auto &snapshot = m_dashboard->snapshot();
    if (!snapshot) {
        m_statusText->setText(tr("Ready. Open logs (Ctrl+O), drop files here, or start the demo "
                                 "(Ctrl+D)."));
        return;
    }
    m_statusText->setText(tr("%1 events · %2 throttles · %3 buckets")
                              .arg(QLocale().toString(snapshot->report.events))
                              .arg(QLocale().toString(snapshot->report.throttles.total))
                              .arg(snapshot->report.scopes.size()));
}

QStringList MainWindow::recentFiles() const
{
    // Only what can be opened again: files that still exist, never a scratch workspace.
    QStringList recent = QSettings().value(kRecentKey).toStringList();
    recent.removeIf([](const QString &path) {
        return ts::isScratchWorkspacePath(path) || !QFileInfo(path).isFile();
    });
    return recent;
}

void MainWindow::addRecentFile(const QString &path)
{
    if (ts::isScratchWorkspacePath(path) || !QFileInfo(path).isFile())
        return;
    const QString absolute = QFileInfo(path).absoluteFilePath();
    QStringList recent = recentFiles();
    recent.removeAll(absolute);
    recent.prepend(absolute);
    while (recent.size() > kMaxRecentFiles)
        recent.removeLast();
    QSettings().setValue(kRecentKey, recent);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = recentFiles();
    for (const QString &path : recent) {
        m_recentMenu->addAction(QFileInfo(path).fileName() + QStringLiteral("  —  ") + path, this,
                                [this, path] {
                                    if (isWorkspaceFile(path))
                                        Q_EMIT openWorkspaceRequested(path);
                                    else
                                        requestOpenFiles({path});
                                });
    }
    if (!recent.isEmpty()) {
        m_recentMenu->addSeparator();
        m_recentMenu->addAction(tr("Clear"), this, [this] {
            QSettings().remove(kRecentKey);
            rebuildRecentMenu();
        });
    }
    m_recentMenu->setEnabled(!recent.isEmpty());
    m_startPage->setRecentFiles(recent);
}

void MainWindow::requestOpenFiles(const QStringList &paths)
{
    if (paths.isEmpty())
        return;
    for (const QString &path : paths)
        addRecentFile(path);
    showDashboard();
    Q_EMIT openFilesRequested(paths);
}

void MainWindow::openFilesDialog()
{
    const QStringList paths = QFileDialog::getOpenFileNames(
        this, tr("Open logs"), QString(),
        tr("Request logs (*.ndjson *.jsonl *.json *.har *.csv *.log *.txt *.gz);;All files (*)"));
    requestOpenFiles(paths);
}

void MainWindow::openWorkspaceDialog()
{
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open workspace"), QString(),
                                     tr("Workspace (*.tsws *.db *.tsdb *.sqlite);;All files (*)"));
    if (!path.isEmpty()) {
        addRecentFile(path);
        showDashboard();
        Q_EMIT openWorkspaceRequested(path);
    }
}

void MainWindow::saveWorkspaceDialog()
{
    QString path = QFileDialog::getSaveFileName(this, tr("Save workspace"), m_documentPath,
                                                tr("Workspace (*.tsws)"));
    if (path.isEmpty())
        return;
    if (QFileInfo(path).suffix().isEmpty())
        path += u'.' + QLatin1StringView(ts::kWorkspaceSuffix);
    Q_EMIT saveWorkspaceRequested(path);
}

void MainWindow::exportPlotDialog()
{
    QCustomPlot *plot = m_dashboard->currentPlot();
    if (!plot) {
        QMessageBox::information(this, tr("Export plot"), tr("This page has no plot."));
        return;
    }
    QString path = QFileDialog::getSaveFileName(
        this, tr("Export plot"), m_dashboard->currentPageName() + QStringLiteral(".png"),
        tr("PNG image (*.png);;PDF document (*.pdf);;SVG drawing (*.svg)"));
    if (path.isEmpty())
        return;
    if (QFileInfo(path).suffix().isEmpty())
        path += QStringLiteral(".png");
    // The chart stands on its own: the page's title, the time range and the legend.
    const QString error =
        ts::widgets::exportPlot(plot, path, 0, 0, m_dashboard->currentPlotTitle());
    if (!error.isEmpty())
        QMessageBox::warning(this, tr("Export plot"), error);
}

void MainWindow::exportTableDialog()
{
    QAbstractItemModel *model = m_dashboard->currentTable();
    if (!model) {
        QMessageBox::information(this, tr("Export table"), tr("This page has no table."));
        return;
    }
    QString path = QFileDialog::getSaveFileName(
        this, tr("Export table"), m_dashboard->currentPageName() + QStringLiteral(".csv"),
        tr("CSV (*.csv)"));
    if (path.isEmpty())
        return;
    const QString error = ts::widgets::exportModelCsv(model, path);
    if (!error.isEmpty())
        QMessageBox::warning(this, tr("Export table"), error);
}

void MainWindow::exportReportDialog()
{
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export JSON report"), QStringLiteral("report.json"), tr("JSON (*.json)"));
    if (!path.isEmpty())
        Q_EMIT exportReportRequested(path);
}

void MainWindow::showPolicyEditor()
{
    if (!m_policyEditor) {
        m_policyEditor = new ts::widgets::PolicyEditor(this);
        connect(m_policyEditor, &ts::widgets::PolicyEditor::policyChangeRequested, this,
                [this](const QString &policy) {
                    m_policySetting = policy;
                    Q_EMIT policyChangeRequested(policy);
                });
    }
    // The policy in force, not the first of the list (issue 30.13): the one the session saved
    // or was given, else the built-in policy that replayed the most requests.
    const auto &snapshot = m_dashboard->snapshot();
    m_policyEditor->showPolicyInForce(
        m_policySetting,
        snapshot ? ts::widgets::PolicyEditor::mostUsedPolicy(snapshot->report) : QString());
    m_policyEditor->show();
    m_policyEditor->raise();
    m_policyEditor->activateWindow();
}

QString MainWindow::trayToolTip() const
{
    const auto &snapshot = m_dashboard->snapshot();
    if (!snapshot)
        return tr("Throttlescope");
    // The critical alerts that stand, and the breakers counted as the Overview's card counts
    // them (soft-open apart from open: issue 30.6).
    return ts::widgets::criticalAlertsSummary(snapshot->report.alerts) + u'\n' +
           tr("Breakers: %1")
               .arg(ts::models::breakerCountsText(
                   ts::models::countBreakers(snapshot->report, std::nullopt)));
}

void MainWindow::notifyCriticalAlerts(const QList<ts::Alert> &alerts)
{
    const qsizetype worst = ts::models::AlertsModel::mostSevere(alerts);
    if (worst < 0)
        return;
    const ts::Alert &alert = alerts.at(worst);
    if (!m_tray) {
        // In the window, replaced by each newer batch: no rate limit needed.
        m_banner->showAlert(alert, static_cast<int>(alerts.size()) - 1);
        return;
    }
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    if (now - m_lastNotificationMs < kNotificationGapMs) {
        m_suppressedNotifications += static_cast<int>(alerts.size());
        return;
    }
    const int more = static_cast<int>(alerts.size()) - 1 + m_suppressedNotifications;
    QString text = ts::widgets::alertHeadline(alert);
    if (more > 0)
        text += tr("\n(+%1 more critical alerts)").arg(more);
    m_tray->showMessage(tr("Throttlescope: critical alert"), text, QSystemTrayIcon::Critical, 8000);
    m_lastNotificationMs = now;
    m_suppressedNotifications = 0;
}

void MainWindow::dragEnterEvent(QDragEnterEvent *event)
{
    if (event->mimeData()->hasUrls()) {
        const auto urls = event->mimeData()->urls();
        for (const QUrl &url : urls) {
            if (url.isLocalFile()) {
                event->acceptProposedAction();
                return;
            }
        }
    }
}

void MainWindow::dropEvent(QDropEvent *event)
{
    QStringList logs;
    const auto urls = event->mimeData()->urls();
    for (const QUrl &url : urls) {
        if (!url.isLocalFile())
            continue;
        const QString path = url.toLocalFile();
        if (isWorkspaceFile(path)) {
            addRecentFile(path);
            Q_EMIT openWorkspaceRequested(path);
        } else {
            logs.append(path);
        }
    }
    requestOpenFiles(logs);
    event->acceptProposedAction();
}

bool MainWindow::saveScreenshot(const QString &path, QSize size)
{
    if (size.isValid())
        resize(size);
    if (!isVisible())
        show();
    m_dashboard->flushPendingSnapshot();
    // Let layouts settle at the new size, then draw every plot now: queued replots would only
    // happen on a later event-loop turn, after the grab.
    QCoreApplication::sendPostedEvents();
    QCoreApplication::processEvents();
    const auto plots = findChildren<QCustomPlot *>();
    for (QCustomPlot *plot : plots) {
        if (plot->isVisible())
            plot->replot(QCustomPlot::rpImmediateRefresh);
    }
    const QPixmap pixmap = grab();
    return !pixmap.isNull() && pixmap.save(path, "PNG");
}

void MainWindow::restoreLayout()
{
    QSettings settings;
    settings.beginGroup(QStringLiteral("mainWindow"));
    if (settings.contains(QStringLiteral("geometry")))
        restoreGeometry(settings.value(QStringLiteral("geometry")).toByteArray());
    if (settings.contains(QStringLiteral("state")))
        restoreState(settings.value(QStringLiteral("state")).toByteArray());
    if (settings.contains(QStringLiteral("eventsHeader")))
        m_dashboard->eventsPage()->restoreHeaderState(
            settings.value(QStringLiteral("eventsHeader")).toByteArray());
    const QString page = settings.value(QStringLiteral("page")).toString();
    if (!page.isEmpty())
        m_dashboard->showPage(page);
    settings.endGroup();
}

void MainWindow::saveLayout()
{
    QSettings settings;
    settings.beginGroup(QStringLiteral("mainWindow"));
    settings.setValue(QStringLiteral("geometry"), saveGeometry());
    settings.setValue(QStringLiteral("state"), saveState());
    settings.setValue(QStringLiteral("eventsHeader"), m_dashboard->eventsPage()->saveHeaderState());
    settings.setValue(QStringLiteral("page"), m_dashboard->currentPageName());
    settings.endGroup();
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    saveLayout();
    QMainWindow::closeEvent(event);
}

// ---- live sessions (issue 17) --------------------------------------------------------------

void MainWindow::createSessionActions(QMenu *file)
{
    // New and Close head the File menu, as in every document application.
    QAction *first = file->actions().value(0);
    auto *newSession = new QAction(tr("&New Session"), this);
    newSession->setObjectName(QStringLiteral("newSessionAction"));
    newSession->setShortcut(QKeySequence::New);
    newSession->setToolTip(tr("Start an empty session; the current one is closed"));
    connect(newSession, &QAction::triggered, this, [this] { Q_EMIT newSessionRequested(); });
    auto *closeSession = new QAction(tr("&Close Session"), this);
    closeSession->setObjectName(QStringLiteral("closeSessionAction"));
    closeSession->setShortcut(QKeySequence::Close);
    closeSession->setToolTip(tr("Stop listening and the demo, and empty the window"));
    connect(closeSession, &QAction::triggered, this, [this] { Q_EMIT closeSessionRequested(); });
    file->insertAction(first, newSession);
    file->insertAction(first, closeSession);
    file->insertSeparator(first);
    file->addSeparator();
    m_listenAction = file->addAction(tr("&Listen…"), this, &MainWindow::listenDialog);
    m_listenAction->setObjectName(QStringLiteral("listenAction"));
    m_listenAction->setToolTip(tr("Receive request logs over HTTP (POST /ingest, /v1/traces) "
                                  "like `throttlescope serve`"));
    m_stopListeningAction = file->addAction(tr("S&top Listening"), this,
                                            [this] { Q_EMIT stopListeningRequested(); });
    m_stopListeningAction->setObjectName(QStringLiteral("stopListeningAction"));
    m_stopListeningAction->setEnabled(false);
}

void MainWindow::listenDialog()
{
    ts::widgets::ListenDialog dialog(ts::widgets::ListenSettings::load(), this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    const ts::widgets::ListenSettings settings = dialog.settings();
    settings.save();
    m_dashboard->ingestPage()->setStaleAfterSeconds(settings.staleAfterSeconds);
    showDashboard();
    Q_EMIT listenRequested(settings);
}

void MainWindow::setListening(const QString &feed)
{
    m_listenAction->setEnabled(feed.isEmpty());
    m_stopListeningAction->setEnabled(!feed.isEmpty());
    m_stopListeningAction->setText(feed.isEmpty() ? tr("S&top Listening")
                                                  : tr("S&top Listening on %1").arg(feed));
}

void MainWindow::showStaleFeeds(const QStringList &staleFeeds)
{
    m_staleText->setVisible(!staleFeeds.isEmpty());
    m_staleText->setText(staleFeeds.isEmpty()
                             ? QString()
                             : tr("Stale feed: %1").arg(staleFeeds.join(QStringLiteral(", "))));
}

void MainWindow::resetSession()
{
    m_documentPath.clear();
    updateTitle();
    // A new session has no workspace to remember a time window: the default, all the data.
    m_dashboard->timeRange()->setTrailingWindowMs(0);
    // A new session's data may lie anywhere in time: show it from the start, live.
    m_dashboard->timeRange()->setFollowing(true);
    m_dashboard->timeRange()->showAll();
}

void MainWindow::setSavedWorkspace(const QString &path)
{
    m_documentPath = path;
    updateTitle();
    addRecentFile(path);
}

void MainWindow::updateTitle()
{
    setWindowTitle(m_documentPath.isEmpty()
                       ? tr("Throttlescope")
                       : tr("%1 — Throttlescope").arg(QFileInfo(m_documentPath).fileName()));
}

void MainWindow::createTimeWindowPicker(QToolBar *toolbar)
{
    // Grafana's time picker for live data: while following, the charts show this trailing
    // window (as wide as the data when there is less). Remembered per workspace.
    m_timeWindow = new QComboBox;
    m_timeWindow->setObjectName(QStringLiteral("timeWindowCombo"));
    m_timeWindow->setToolTip(tr("While following the newest data, show this much of it"));
    for (const qint64 window : ts::models::TimeRange::presetWindowsMs()) {
        const QString text = window == 0 ? tr("All data")
                             : window < 3'600'000
                                 ? tr("Last %1 minutes").arg(window / 60'000)
                                 : tr("Last %n hour(s)", nullptr, int(window / 3'600'000));
        m_timeWindow->addItem(text, window);
    }
    m_timeWindow->setCurrentIndex(m_timeWindow->findData(m_dashboard->timeRange()->trailingWindowMs()));
    toolbar->addWidget(m_timeWindow);
    connect(m_timeWindow, &QComboBox::activated, this, [this](int index) {
        const qint64 window = m_timeWindow->itemData(index).toLongLong();
        m_dashboard->timeRange()->setTrailingWindowMs(window);
        Q_EMIT sessionSettingChanged(QStringLiteral("timeWindow"),
                                     ts::models::TimeRange::windowSettingText(window));
    });
    connect(m_dashboard->timeRange(), &ts::models::TimeRange::trailingWindowChanged, this,
            [this](qint64 window) {
                int index = m_timeWindow->findData(window);
                if (index < 0) { // a width a workspace remembers that is no preset
                    m_timeWindow->addItem(tr("Last %1").arg(ts::models::formatDuration(window)),
                                          window);
                    index = m_timeWindow->count() - 1;
                }
                m_timeWindow->setCurrentIndex(index);
            });
}

void MainWindow::applySessionSettings(const QVariantMap &settings)
{
    m_policySetting = settings.value(QStringLiteral("policy")).toString();
    const auto window = ts::models::TimeRange::windowFromSettingText(
        settings.value(QStringLiteral("timeWindow")).toString());
    if (window)
        m_dashboard->timeRange()->setTrailingWindowMs(*window);
}
