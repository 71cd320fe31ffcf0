#include "dashboardcontroller.h"

#include "dashboard.h"
#include "dashboardlistener.h"
#include "engine/analysissession.h"
#include "engine/scratchworkspace.h"
#include "followedsources.h"
#include "listendialog.h"
#include "livesimulator.h"
#include "mainwindow.h"
#include "poll/pollfeed.h"
#include "poll/pollfeeds.h"
#include "preferences.h"
#include "store/workspace.h"

#include <QMessageBox>

#include <QApplication>
#include <QDateTime>
#include <QDir>
#include <QFileDialog>
#include <QMessageBox>
#include <QMetaObject>
#include <QPushButton>
#include <QSemaphore>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTextStream>
#include <QTimer>

#include <algorithm>
#include <memory>

namespace ts::app {

namespace {
// With --screenshot and --demo, how long the simulation runs before the picture is taken, and
// how fast: long enough for the first 429 wave and the retry storm to show.
constexpr int kDemoScreenshotDelayMs = 6000;
// How often a polled source resumed from a workspace is asked (File > Add Source's default).
constexpr int kDefaultPollSeconds = 5;
constexpr double kDemoScreenshotSpeed = 240.0;
// A screenshot run always ends: whatever it waits for (files read, the delay, the last
// snapshot), after this long past its delay it gives up with a message and exit status 1.
constexpr int kScreenshotDeadlineMs = 180'000;
// How long the picture waits for the analysis thread's last snapshot; a busy worker (a large
// file still being read) must not hold the GUI thread, and so the deadline, hostage.
constexpr int kFinalSnapshotWaitMs = 5'000;
} // namespace

DashboardController::DashboardController(DashboardOptions options, QObject *parent)
    : QObject(parent), m_options(std::move(options)), m_window(std::make_unique<MainWindow>()),
      m_feeds(std::make_unique<poll::PollFeeds>())
{
    // Scratch workspaces a crashed dashboard left behind hold events its listener acknowledged:
    // offered back by start(); only the empty ones are removed now.
    m_orphans = findOrphanedScratchWorkspaces();
    m_workerThread.setObjectName(QStringLiteral("analysis"));
    m_session = new AnalysisSession;
    m_session->moveToThread(&m_workerThread);
    connect(&m_workerThread, &QThread::finished, m_session, &QObject::deleteLater);

    // Files opened are followed as they grow (live/followedsources.h), on the session's thread:
    // what the session has read of a file is where following it starts.
    m_followed = new live::FollowedSources;
    m_followed->moveToThread(&m_workerThread);
    connect(&m_workerThread, &QThread::finished, m_followed, &QObject::deleteLater);
    connect(m_session, &AnalysisSession::sourceRead, m_followed,
            &live::FollowedSources::followFile);
    connect(m_followed, &live::FollowedSources::eventsRead, m_session,
            &AnalysisSession::ingestFollowed);
    connect(m_followed, &live::FollowedSources::followedFilesChanged, m_session,
            &AnalysisSession::setFollowedFiles);

    MainWindow *window = m_window.get();
    connect(window, &MainWindow::followFilesToggled, m_followed,
            &live::FollowedSources::setEnabled);
    connect(window, &MainWindow::reorderWindowChanged, m_session,
            &AnalysisSession::setReorderWindow);
    connect(m_session, &AnalysisSession::snapshotReady, window, &MainWindow::applySnapshot);
    connect(m_session, &AnalysisSession::ingestStatusChanged, window, &MainWindow::setIngestStatus);
    connect(m_session, &AnalysisSession::progress, window, &MainWindow::setProgress);
    connect(m_session, &AnalysisSession::policyError, window, [window](const QString &message) {
        window->statusBar()->showMessage(tr("Policy not applied: %1").arg(message), 10000);
    });
    connect(m_session, &AnalysisSession::operationFinished, window,
            [window](bool, const QString &message) {
                window->statusBar()->showMessage(message, 10000);
            });

    connect(window, &MainWindow::openFilesRequested, this, &DashboardController::openFiles);
    connect(m_session, &AnalysisSession::workspaceReady, window, &MainWindow::setWorkspacePath);
    connect(window, &MainWindow::openWorkspaceRequested, this, &DashboardController::openWorkspace);
    connect(window, &MainWindow::saveWorkspaceRequested, m_session,
            &AnalysisSession::saveWorkspace);
    connect(window, &MainWindow::exportReportRequested, m_session, &AnalysisSession::exportReport);
    connect(window, &MainWindow::policyChangeRequested, m_session, &AnalysisSession::setPolicies);
    connect(window, &MainWindow::breakerModelChangeRequested, m_session,
            &AnalysisSession::setBreakerModel);
    // Cancel must not wait behind the read it cancels: requestCancel() is thread-safe.
    connect(window, &MainWindow::cancelRequested, this, [this] { m_session->requestCancel(); });
    connect(window, &MainWindow::demoRequested, this, &DashboardController::startDemo);
    // ---- live sessions (issue 17) ----
    connect(window, &MainWindow::listenRequested, this,
            [this](const widgets::ListenSettings &settings) {
                QString error;
                if (!startListening(settings, &error))
                    QMessageBox::warning(m_window.get(), tr("Listen"), error);
                else
                    rememberListening(true);
            });
    connect(window, &MainWindow::stopListeningRequested, this, [this] {
        stopListening();
        rememberListening(false);
    });
    // A saved session that listened listens again when opened again (issue 30.11), with the
    // settings File > Listen… remembers.
    connect(m_session, &AnalysisSession::listenAgainRequested, this, [this] {
        if (m_listener && m_listener->isListening())
            return;
        QString error;
        if (!startListening(widgets::ListenSettings::load(), &error))
            m_window->statusBar()->showMessage(tr("Not listening again: %1").arg(error), 15000);
    });
    connect(window, &MainWindow::newSessionRequested, this, &DashboardController::newSession);
    connect(window, &MainWindow::closeSessionRequested, this, &DashboardController::closeSession);
    connect(m_session, &AnalysisSession::workspaceSaved, window, &MainWindow::setSavedWorkspace);
    connect(m_session, &AnalysisSession::sessionSettingsLoaded, window,
            &MainWindow::applySessionSettings);
    connect(window, &MainWindow::sessionSettingChanged, m_session,
            &AnalysisSession::setSessionSetting);
    connect(window, &MainWindow::addSourceRequested, this, &DashboardController::addSource);
    connect(m_session, &AnalysisSession::pollSourcesStored, this,
            &DashboardController::resumePollSources);

    m_workerThread.start();
}

DashboardController::~DashboardController()
{
    // The listener first: its last requests are answered by the session's writer.
    m_listener.reset();
    m_feeds.reset(); // stops every feed and waits for its thread
    if (m_simulator)
        QMetaObject::invokeMethod(m_simulator, &live::LiveSimulator::stop,
                                  Qt::BlockingQueuedConnection);
    m_session->requestCancel();
    m_workerThread.quit();
    m_workerThread.wait();
}

void DashboardController::start()
{
    if (!m_options.screenshotPath.isEmpty())
        m_window->resize(m_options.screenshotSize);
    // With input the dashboard shows at once (the demo runs in the first picture); without,
    // the window opens on its start page.
    if (!m_options.files.isEmpty() || m_options.demo)
        m_window->showDashboard();
    m_window->show();
    // A picture asks nobody anything: the orphans stay for an interactive start.
    if (m_options.screenshotPath.isEmpty())
        offerRecovery();
    if (!m_options.screenshotPage.isEmpty())
        m_window->showPage(m_options.screenshotPage);
    // Everything the screenshot waits for is connected before anything that can emit it is
    // started: the files are read on another thread and may finish before start() returns.
    if (!m_options.screenshotPath.isEmpty())
        scheduleScreenshot();
    // The live feeds' reorder window: the command line's, else the Preferences'.
    const qint64 reorderWindowMs = m_options.reorderWindowMs.value_or(
        qint64(widgets::Preferences::load().reorderWindowSeconds) * 1000);
    QMetaObject::invokeMethod(m_session, [session = m_session, reorderWindowMs] {
        session->setReorderWindow(reorderWindowMs);
    });
    if (m_options.demo && !m_options.files.isEmpty()) {
        // The demo runs in a session of its own: real data never mixes into it.
        QTextStream(stderr) << "throttlescope: --demo runs in a session of its own; the files "
                               "given with it are not read"
                            << Qt::endl;
        m_options.files.clear();
    }
    if (!m_options.files.isEmpty())
        openFiles(m_options.files);
    if (m_options.demo)
        startDemo();
}

std::unique_ptr<QMessageBox> DashboardController::recoveryBox(QWidget *parent,
                                                              const OrphanedScratch &orphan)
{
    auto box =
        std::make_unique<QMessageBox>(QMessageBox::Question, tr("Recover events"),
                                      recoveryQuestion(orphan), QMessageBox::NoButton, parent);
    box->setInformativeText(
        tr("A Throttlescope window that ended without closing its session had received them "
           "(answered 200). Recover saves them as a workspace and opens it; Later keeps them "
           "for the next start."));
    QPushButton *recover = box->addButton(tr("Recover…"), QMessageBox::AcceptRole);
    recover->setObjectName(QStringLiteral("recoverButton"));
    box->addButton(tr("Delete"), QMessageBox::DestructiveRole)
        ->setObjectName(QStringLiteral("deleteButton"));
    box->addButton(tr("Later"), QMessageBox::RejectRole);
    box->setDefaultButton(recover);
    return box;
}

namespace {
// The default question: Recover (then where), Delete or Later.
DashboardController::RecoveryAnswer askAboutOrphan(QWidget *parent, const OrphanedScratch &orphan,
                                                   QString *destination)
{
    const std::unique_ptr<QMessageBox> box = DashboardController::recoveryBox(parent, orphan);
    box->exec();
    const QString clicked = box->clickedButton() ? box->clickedButton()->objectName() : QString();
    if (clicked == u"deleteButton")
        return DashboardController::RecoveryAnswer::Delete;
    if (clicked != u"recoverButton")
        return DashboardController::RecoveryAnswer::Later;
    const QString suggested =
        QDir(QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation))
            .filePath(QStringLiteral("recovered-%1.tsws")
                          .arg(QDateTime::currentDateTime().toString(u"yyyyMMdd-HHmmss")));
    *destination = QFileDialog::getSaveFileName(parent, QObject::tr("Save recovered events"),
                                                suggested, QObject::tr("Workspace (*.tsws)"));
    return destination->isEmpty() ? DashboardController::RecoveryAnswer::Later
                                  : DashboardController::RecoveryAnswer::Recover;
}
} // namespace

void DashboardController::offerRecovery()
{
    QList<OrphanedScratch> left;
    for (const OrphanedScratch &orphan : std::as_const(m_orphans)) {
        QString destination;
        const RecoveryAnswer answer = m_recoveryPrompt
                                          ? m_recoveryPrompt(orphan, &destination)
                                          : askAboutOrphan(m_window.get(), orphan, &destination);
        if (answer == RecoveryAnswer::Delete) {
            removeScratchWorkspace(orphan.path);
            continue;
        }
        QString error;
        if (answer == RecoveryAnswer::Recover &&
            recoverScratchWorkspace(orphan.path, destination, &error)) {
            openWorkspace(destination);
            continue;
        }
        if (!error.isEmpty())
            QMessageBox::warning(m_window.get(), tr("Recover events"), error);
        left.append(orphan); // kept: offered again at the next start
    }
    m_orphans = left;
}

void DashboardController::scheduleScreenshot()
{
    int delay = m_options.screenshotDelayMs;
    if (delay < 0 && m_options.demo)
        delay = kDemoScreenshotDelayMs;
    QTimer::singleShot(std::max(delay, 0) + kScreenshotDeadlineMs, this, [this] {
        if (m_screenshotTaken)
            return;
        QTextStream(stderr) << "throttlescope: gave up on the screenshot after "
                            << kScreenshotDeadlineMs / 1000
                            << " s: the input was not read in time; nothing was written to "
                            << m_options.screenshotPath << Qt::endl;
        QCoreApplication::exit(1);
    });
    if (delay >= 0) {
        QTimer::singleShot(delay, this, &DashboardController::takeScreenshotAndQuit);
    } else if (!m_options.files.isEmpty()) {
        connect(m_session, &AnalysisSession::filesFinished, this, [this] {
            // Let the last snapshot reach the window before the picture is taken.
            QTimer::singleShot(300, this, &DashboardController::takeScreenshotAndQuit);
        });
    } else {
        QTimer::singleShot(300, this, &DashboardController::takeScreenshotAndQuit);
    }
}

void DashboardController::openFiles(const QStringList &paths)
{
    // Opening logs asks nothing: they join the current session, unless that is the demo's.
    leaveDemoSession();
    // A workspace among the files (`throttlescope migration.tsws`, or opened from the desktop
    // through its MIME type) is opened as one; the rest are read as logs, after it.
    // A folder or a glob (logs/*.ndjson) opens the files in it now; later ones are followed.
    const live::OpenRequest request = live::expandOpenArguments(paths);
    QStringList logs;
    for (const QString &path : request.files) {
        m_window->addRecentFile(path);
        if (looksLikeWorkspaceFile(path))
            QMetaObject::invokeMethod(
                m_session, [session = m_session, path] { session->openWorkspace(path); });
        else
            logs << path;
    }
    if (!logs.isEmpty() || !request.folders.isEmpty()) {
        QMetaObject::invokeMethod(m_session, [session = m_session, followed = m_followed, logs,
                                              folders = request.folders] {
            if (!logs.isEmpty())
                session->openFiles(logs, SourceOptions{});
            else
                Q_EMIT session->filesFinished();
            // After the files in them are read: those continue where their reading stopped.
            for (const auto &folder : folders)
                followed->watchFolder(folder.directory, folder.nameFilters);
        });
    } else {
        // Workspaces only: no logs to read (openFiles would start an empty scratch workspace
        // and show it instead), but whoever waits for the files to be read is told they are.
        QMetaObject::invokeMethod(m_session,
                                  [session = m_session] { Q_EMIT session->filesFinished(); });
    }
}

void DashboardController::startDemo()
{
    if (m_simulator)
        return;
    // The demo opens a session of its own: it never mixes into real data.
    newSession();
    m_simulator = new live::LiveSimulator(live::LiveSimulator::demoOptions());
    if (!m_simulator->error().isEmpty()) {
        m_window->statusBar()->showMessage(tr("Demo: %1").arg(m_simulator->error()));
        delete m_simulator;
        m_simulator = nullptr;
        return;
    }
    // A screenshot runs fast enough for the first 429 wave to show in a few seconds, unless
    // --speed says otherwise.
    m_simulator->setSpeed(m_options.demoSpeed.value_or(m_options.screenshotPath.isEmpty()
                                                           ? live::LiveSimulator::kDemoSpeed
                                                           : kDemoScreenshotSpeed));
    m_simulator->moveToThread(&m_workerThread);
    connect(&m_workerThread, &QThread::finished, m_simulator, &QObject::deleteLater);
    // Same thread: the batch goes straight into the analysis, no copy across threads.
    connect(m_simulator, &live::LiveSimulator::eventsReady, m_session,
            &AnalysisSession::ingestBatch);
    connect(m_simulator, &live::LiveSimulator::finished, m_session,
            [session = m_session] { session->finishLiveSource(QStringLiteral("demo")); });
    QMetaObject::invokeMethod(m_simulator, &live::LiveSimulator::start);
    m_window->statusBar()->showMessage(tr("Demo: a OneNote migration, a Fabric deployment and "
                                          "Service Bus producers, looping, live at %1x speed")
                                           .arg(m_simulator->speed()));
}

void DashboardController::addSource(const QString &url, int everySeconds)
{
    QString error;
    if (!startPollFeed(url, everySeconds, nullptr, &error)) {
        QMessageBox::warning(m_window.get(), tr("Add Source"), error);
        return;
    }
    m_window->statusBar()->showMessage(tr("Polling %1 every %2 s").arg(url).arg(everySeconds));
}

bool DashboardController::startPollFeed(const QString &url, int everySeconds,
                                        const StoredPollSource *resume, QString *error)
{
    const std::optional<poll::PollSource> source = poll::PollSource::parse(url, error);
    if (!source)
        return false;
    poll::PollFeed *feed =
        m_feeds->add(*source, everySeconds, resume ? resume->cursorState : QByteArray(),
                     resume ? resume->rows : 0, error);
    if (!feed)
        return false;
    // Its rows and their cursor go to the session (stored together); its requests become its
    // row on the Ingest page (the source: the URL, which holds no secret).
    connect(feed, &poll::PollFeed::rowsPolled, m_session, &AnalysisSession::ingestPolled);
    connect(feed, &poll::PollFeed::statusChanged, m_session, &AnalysisSession::updatePolledSource);
    m_feeds->start(feed);
    return true;
}

void DashboardController::resumePollSources(const QList<StoredPollSource> &sources)
{
    // A cursor stored moments ago means another poller (`throttlescope poll`, another window)
    // is writing this workspace: polling it here as well would store its rows twice.
    constexpr qint64 kRecentlyPolledMs = 120'000;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    QStringList resumed;
    QStringList problems;
    for (const StoredPollSource &stored : sources) {
        // (This machine's own earlier poller, its process gone, is none: issue 30.11.)
        if (stored.updatedMs > 0 && now - stored.updatedMs < kRecentlyPolledMs &&
            !pollerOwnerIsGone(stored.owner)) {
            problems << tr("%1 not resumed: another poller stored rows %2 s ago")
                            .arg(stored.url)
                            .arg((now - stored.updatedMs) / 1000);
            continue;
        }
        QString error;
        if (startPollFeed(stored.url, kDefaultPollSeconds, &stored, &error))
            resumed << stored.url;
        else
            problems << error;
    }
    QString message;
    if (!resumed.isEmpty())
        message = tr("Polling resumed from the stored cursor: %1")
                      .arg(resumed.join(QStringLiteral(", ")));
    if (!problems.isEmpty())
        message += (message.isEmpty() ? QString() : QStringLiteral("; ")) +
                   problems.join(QStringLiteral("; "));
    m_window->statusBar()->showMessage(message, 15000);
}

void DashboardController::stopPollFeeds()
{
    m_feeds->stopAll();
}

void DashboardController::takeScreenshotAndQuit()
{
    if (m_screenshotTaken)
        return;
    m_screenshotTaken = true;
    // Ask the session for a final snapshot and wait, bounded, until it has been posted to the
    // window: its queued delivery then precedes the timer below.
    auto published = std::make_shared<QSemaphore>();
    QMetaObject::invokeMethod(m_session, [session = m_session, published] {
        session->publishIfDirty();
        published->release();
    });
    if (!published->tryAcquire(1, kFinalSnapshotWaitMs))
        QTextStream(stderr) << "throttlescope: the analysis is still busy; the screenshot shows "
                               "the last snapshot it published"
                            << Qt::endl;
    QTimer::singleShot(200, this, [this] {
        const bool ok =
            m_window->saveScreenshot(m_options.screenshotPath, m_options.screenshotSize);
        QTextStream err(stderr);
        if (ok) {
            // What the picture shows, for a headless check that appends to a followed file.
            const auto &snapshot = m_window->dashboard()->snapshot();
            err << "screenshot written to " << m_options.screenshotPath << " ("
                << (snapshot ? snapshot->report.events : 0) << " events)" << Qt::endl;
        } else {
            err << "could not write the screenshot to " << m_options.screenshotPath << Qt::endl;
        }
        QCoreApplication::exit(ok ? 0 : 1);
    });
}

// ---- live sessions (issue 17) --------------------------------------------------------------

bool DashboardController::startListening(const widgets::ListenSettings &settings, QString *error)
{
    leaveDemoSession();
    QString problem;
    live::ListenerOptions options;
    if (!options.address.setAddress(settings.address.isEmpty() ? QStringLiteral("127.0.0.1")
                                                               : settings.address)) {
        problem = tr("\"%1\" is not an IP address (127.0.0.1 listens on this machine only)")
                      .arg(settings.address);
    } else if (settings.port < 0 || settings.port > 65535) {
        problem = tr("invalid port %1").arg(settings.port);
    } else if (!settings.token.isEmpty() && !settings.tokenFile.isEmpty()) {
        problem = tr("give a token or a token file, not both");
    } else if (!settings.tokenFile.isEmpty()) {
        live::readTokenFile(settings.tokenFile, &options.bearerToken, &problem);
    } else {
        options.bearerToken = settings.token;
    }
    options.port = quint16(settings.port);
    if (problem.isEmpty()) {
        if (!m_listener) {
            m_listener = std::make_unique<live::DashboardListener>(m_session);
            connect(m_listener.get(), &live::DashboardListener::listeningChanged, m_window.get(),
                    [this](bool listening) {
                        // m_listener is null while its destructor stops it.
                        m_window->setListening(listening && m_listener ? m_listener->feedName()
                                                                       : QString());
                    });
        }
        m_listener->start(options, &problem);
    }
    if (!problem.isEmpty()) {
        m_window->statusBar()->showMessage(tr("Not listening: %1").arg(problem), 10000);
        if (error)
            *error = problem;
        return false;
    }
    m_window->statusBar()->showMessage(
        tr("Listening on %1: POST /ingest (NDJSON), POST /v1/traces (OTLP JSON)")
            .arg(m_listener->feedName()));
    return true;
}

void DashboardController::rememberListening(bool listening)
{
    QMetaObject::invokeMethod(m_session, [session = m_session, listening] {
        session->rememberListening(listening);
    });
}

void DashboardController::stopListening()
{
    if (!m_listener || !m_listener->isListening())
        return;
    const QString feed = m_listener->feedName();
    m_listener->stop();
    m_window->statusBar()->showMessage(tr("Stopped listening on %1").arg(feed), 10000);
}

// ---- session hygiene (issue 17.7) -------------------------------------------------------------

void DashboardController::stopDemo()
{
    if (!m_simulator)
        return;
    live::LiveSimulator *simulator = std::exchange(m_simulator, nullptr);
    // Queued on the worker thread before the session is emptied: the demo's last batch lands
    // in the old session, never in the new one.
    QMetaObject::invokeMethod(simulator, [simulator] {
        simulator->stop();
        simulator->deleteLater();
    });
}

void DashboardController::leaveDemoSession()
{
    if (!m_simulator)
        return;
    newSession();
    m_window->statusBar()->showMessage(tr("The demo was closed: real data opens in a new session"),
                                       10000);
}

void DashboardController::newSession()
{
    stopDemo();
    m_session->requestCancel(); // a long read stops; the session empties right after
    // The old session's files are no longer followed: queued before the session empties, on
    // the same thread, so nothing they read after this reaches the new session.
    QMetaObject::invokeMethod(m_followed, &live::FollowedSources::clear);
    // Polled stores belong to the session (their rows and cursors are stored in its
    // workspace): they stop with it, before the session empties.
    stopPollFeeds();
    QMetaObject::invokeMethod(m_session, &AnalysisSession::newSession);
    m_window->resetSession();
    if (m_listener && m_listener->isListening())
        m_listener->announceFeed(); // it listens on, into the new session
}

void DashboardController::closeSession()
{
    stopListening();
    newSession();
}

void DashboardController::openWorkspace(const QString &path)
{
    leaveDemoSession();
    QMetaObject::invokeMethod(m_session,
                              [session = m_session, path] { session->openWorkspace(path); });
}

} // namespace ts::app
