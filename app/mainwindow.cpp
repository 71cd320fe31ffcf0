#include "mainwindow.h"

#include "addsourcedialog.h"
#include "alertspage.h"
#include "dashboard.h"
#include "eventspage.h"
#include "models/eventsmodel.h"
#include "models/timerange.h"
#include "plotstyle.h"
#include "policyeditor.h"
#include "qcp.h"
#include "store/workspace.h"
#include "userguide.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QCoreApplication>
#include <QDateTime>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QSystemTrayIcon>
#include <QToolBar>

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
    : QMainWindow(parent), m_dashboard(new ts::widgets::Dashboard), m_progress(new QProgressBar),
      m_cancel(new QPushButton(tr("Cancel"))), m_statusText(new QLabel)
{
    setObjectName(QStringLiteral("MainWindow"));
    setWindowTitle(tr("Throttlescope"));
    setCentralWidget(m_dashboard);
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
    QAction *showAll = view->addAction(tr("Show &All Time"), this,
                                       [this] { m_dashboard->timeRange()->showAll(); });
    showAll->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    QAction *filter = view->addAction(tr("&Filter Identities"), this, [this] {
        showPage(QStringLiteral("overview"));
        if (auto *edit = m_dashboard->findChild<QLineEdit *>())
            edit->setFocus();
    });
    filter->setShortcut(QKeySequence::Find);
    QAction *fullScreen = view->addAction(
        tr("F&ull Screen"), this, [this] { setWindowState(windowState() ^ Qt::WindowFullScreen); });
    fullScreen->setShortcut(QKeySequence::FullScreen);

    QMenu *analysis = menuBar()->addMenu(tr("&Analysis"));
    QAction *policy = analysis->addAction(tr("&Policy…"), this, &MainWindow::showPolicyEditor);
    policy->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_P));
    toolbar->addAction(policy);
    QAction *demo =
        analysis->addAction(style()->standardIcon(QStyle::SP_MediaPlay), tr("Start &Demo"), this,
                            [this] { Q_EMIT demoRequested(); });
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
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
}

void MainWindow::applySnapshot(std::shared_ptr<const ts::DashboardSnapshot> snapshot)
{
    m_dashboard->applySnapshot(std::move(snapshot));
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
    m_dashboard->showPage(name);
}

void MainWindow::setWorkspacePath(const QString &path)
{
    m_workspacePath = path;
    m_dashboard->setWorkspacePath(path);
    setWindowTitle(path.isEmpty() ? tr("Throttlescope")
                                  : tr("%1 — Throttlescope").arg(QFileInfo(path).fileName()));
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
    return QSettings().value(kRecentKey).toStringList();
}

void MainWindow::addRecentFile(const QString &path)
{
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
}

void MainWindow::requestOpenFiles(const QStringList &paths)
{
    if (paths.isEmpty())
        return;
    for (const QString &path : paths)
        addRecentFile(path);
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
        Q_EMIT openWorkspaceRequested(path);
    }
}

void MainWindow::saveWorkspaceDialog()
{
    QString path = QFileDialog::getSaveFileName(this, tr("Save workspace"), m_workspacePath,
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
    const QString error = ts::widgets::exportPlot(plot, path);
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
                &MainWindow::policyChangeRequested);
    }
    m_policyEditor->show();
    m_policyEditor->raise();
    m_policyEditor->activateWindow();
}

void MainWindow::notifyCriticalAlerts(const QList<ts::Alert> &alerts)
{
    if (!m_tray || alerts.isEmpty())
        return;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    if (now - m_lastNotificationMs < kNotificationGapMs) {
        m_suppressedNotifications += static_cast<int>(alerts.size());
        return;
    }
    const ts::Alert &alert = alerts.constLast();
    const int more = static_cast<int>(alerts.size()) - 1 + m_suppressedNotifications;
    QString text = alert.kind + QStringLiteral(" · ") + alert.key + u'\n' + alert.detail;
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
