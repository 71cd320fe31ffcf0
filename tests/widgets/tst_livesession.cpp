// The dashboard's live session as the operator drives it (issue 17): the controller with its
// window, worker and listener. File > Listen… starts a real loopback listener; POSTs arrive
// and the Ingest page shows the feed; a silent feed turns stale on the page and in the status
// bar. Session hygiene (17.7): New / Close Session, logs join the session without asking, the
// demo runs in a session of its own, scratch workspaces are private and never outlive their
// session (orphans are removed at start), Recent lists only documents that exist, the title
// follows Save As, and policy edits are saved in the workspace and restored when it reopens.
#include "dashboard.h"
#include "dashboardcontroller.h"
#include "dashboardlistener.h"
#include "engine/analysissession.h"
#include "engine/scratchworkspace.h"
#include "ingest/sourcereader.h"
#include "ingestpage.h"
#include "listendialog.h"
#include "mainwindow.h"
#include "models/ingestmodels.h"
#include "models/timerange.h"
#include "store/importjob.h"
#include "store/workspace.h"
#include "store/workspacewriter.h"
#include "testhttp.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QApplication>
#include <QDateTime>
#include <QFile>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

using ts::models::IngestSourcesModel;

namespace {

QByteArray requestLine(int i, int status = 200)
{
    const QByteArray ts = QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs).toUtf8();
    return "{\"ts\":\"" + ts + "\",\"identity\":\"sp-" + QByteArray::number(i)
           + "\",\"service\":\"fabric\",\"method\":\"GET\",\"url\":\"https://"
             "api.fabric.microsoft.com/v1/workspaces\",\"status\":"
           + QByteArray::number(status) + "}";
}

int statusOf(const QByteArray &response)
{
    return response.mid(9, 3).toInt(); // "HTTP/1.1 200 OK"
}

int rowOf(const IngestSourcesModel &model, const QString &path)
{
    for (int row = 0; row < model.rowCount(); ++row) {
        if (model.sourceAt(row).path == path)
            return row;
    }
    return -1;
}

// Where a test that keeps its pictures puts them (TS_SCREENSHOT_DIR), else a temporary dir.
QString picturePath(const QTemporaryDir &dir, const QString &name)
{
    const QByteArray keep = qgetenv("TS_SCREENSHOT_DIR");
    return keep.isEmpty() ? dir.filePath(name) : QString::fromLocal8Bit(keep) + u'/' + name;
}

// A log of `count` canonical lines.
QString writeLog(const QTemporaryDir &dir, const QString &name, int count)
{
    const QString path = dir.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return {};
    for (int i = 0; i < count; ++i)
        file.write(requestLine(i, i % 3 == 0 ? 429 : 200) + '\n');
    return path;
}

qint64 shownEvents(MainWindow *window)
{
    const auto &snapshot = window->dashboard()->snapshot();
    return snapshot ? snapshot->report.events : -1;
}

QStringList shownSources(MainWindow *window)
{
    QStringList paths;
    const auto *model = window->dashboard()->ingestPage()->sourcesModel();
    for (int row = 0; row < model->rowCount(); ++row)
        paths << model->sourceAt(row).path;
    return paths;
}

QString policySource(ts::AnalysisSession *session)
{
    QString source;
    QMetaObject::invokeMethod(session, [&] { source = session->policySource(); },
                              Qt::BlockingQueuedConnection);
    return source;
}

QString workspaceSetting(const QString &path, const QString &key)
{
    ts::Workspace workspace;
    if (!workspace.open(path))
        return QStringLiteral("<cannot open>");
    return workspace.setting(key).value_or(QString());
}

constexpr QFileDevice::Permissions kPrivate = QFileDevice::ReadOwner | QFileDevice::WriteOwner
                                              | QFileDevice::ReadUser | QFileDevice::WriteUser;

} // namespace

class TestLiveSession : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // QSettings in a throwaway location
        QCoreApplication::setOrganizationName(QStringLiteral("ThrottlescopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_livesession"));
    }

    void listenFromTheWindow()
    {
        ts::app::DashboardController controller({});
        controller.start();
        MainWindow *window = controller.window();
        ts::widgets::IngestPage *page = window->dashboard()->ingestPage();
        QAbstractItemModelTester tester(page->sourcesModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        window->showPage(QStringLiteral("ingest"));

        ts::widgets::ListenSettings settings;
        settings.port = 0; // any free port
        QString error;
        QVERIFY2(controller.startListening(settings, &error), qPrintable(error));
        const quint16 port = controller.listener()->port();
        const QString feed = controller.listener()->feedName();
        QVERIFY(window->findChild<QAction *>(QStringLiteral("stopListeningAction"))->isEnabled());
        QVERIFY(!window->findChild<QAction *>(QStringLiteral("listenAction"))->isEnabled());
        QTRY_VERIFY(rowOf(*page->sourcesModel(), feed) >= 0);

        QByteArray body;
        for (int i = 0; i < 40; ++i)
            body += requestLine(i, i % 4 == 0 ? 429 : 200) + '\n';
        QCOMPARE(statusOf(ts::testhttp::post(port, "/ingest", body)), 200);
        QCOMPARE(statusOf(ts::testhttp::post(port, "/ingest", requestLine(99) + "\n{oops\n")), 400);
        QTRY_COMPARE(page->sourcesModel()
                         ->index(rowOf(*page->sourcesModel(), feed), IngestSourcesModel::EventsColumn)
                         .data()
                         .toLongLong(),
                     41);
        QTRY_VERIFY(window->dashboard()->snapshot() && window->dashboard()->snapshot()->report.events == 41);
        QTemporaryDir dir;
        QVERIFY(window->saveScreenshot(picturePath(dir, u"listen-live.png"_qs), QSize(1280, 800)));

        // Silence: a short threshold, and the page and the status bar say "stale".
        auto *stale = window->statusBar()->findChild<QLabel *>(QStringLiteral("staleFeedsStatus"));
        QVERIFY(stale);
        QVERIFY(stale->isHidden());
        page->setStaleAfterSeconds(1);
        QTRY_VERIFY_WITH_TIMEOUT(!page->staleFeeds().isEmpty(), 10000);
        QVERIFY(!stale->isHidden());
        QVERIFY2(stale->text().contains(feed), qPrintable(stale->text()));
        QVERIFY(page->summaryText().contains(u"stale"));
        const int row = rowOf(*page->sourcesModel(), feed);
        QCOMPARE(page->sourcesModel()->index(row, IngestSourcesModel::StateColumn).data().toString(),
                 u"stale"_qs);
        QVERIFY(window->saveScreenshot(picturePath(dir, u"listen-stale.png"_qs), QSize(1280, 800)));
        // A new event: fresh again, the status bar clears.
        page->setStaleAfterSeconds(60);
        QCOMPARE(statusOf(ts::testhttp::post(port, "/ingest", requestLine(100))), 200);
        QTRY_VERIFY(page->staleFeeds().isEmpty());
        QTRY_VERIFY(stale->isHidden());

        controller.stopListening();
        QVERIFY(window->findChild<QAction *>(QStringLiteral("listenAction"))->isEnabled());
        QTRY_COMPARE(page->sourcesModel()
                         ->index(rowOf(*page->sourcesModel(), feed), IngestSourcesModel::StateColumn)
                         .data()
                         .toString(),
                     u"finished"_qs);
    }

    void newAndCloseSession();
    void openingLogsAddsToTheSession();
    void demoOpensANewSession();
    void scratchWorkspacesNeverOutliveTheirSession();
    void crashedSessionsEventsAreOffered_data();
    void crashedSessionsEventsAreOffered();
    void recentListsOnlyDocumentsThatExist();
    void titleFollowsSaveAs();
    void policyIsSavedInTheWorkspace_data();
    void policyIsSavedInTheWorkspace();
    void timeWindowIsRememberedPerWorkspace();
    void saveAsKeepsLiveEvents_data();
    void saveAsKeepsLiveEvents();
    void saveAsKeepsOpenedWorkspace();

    void listenRefusals_data()
    {
        QTest::addColumn<QString>("address");
        QTest::addColumn<QString>("token");
        QTest::addColumn<QString>("tokenFile");
        QTest::addColumn<QString>("message");
        QTest::newRow("not an address") << u"localhost.example"_qs << QString() << QString()
                                        << u"not an IP address"_qs;
        QTest::newRow("off loopback, no token") << u"0.0.0.0"_qs << QString() << QString()
                                                << u"bearer token"_qs;
        QTest::newRow("token and file") << u"127.0.0.1"_qs << u"a"_qs << u"/nonexistent"_qs
                                        << u"not both"_qs;
        QTest::newRow("missing token file") << u"127.0.0.1"_qs << QString() << u"/nonexistent/t"_qs
                                            << u"/nonexistent/t"_qs;
    }
    void listenRefusals()
    {
        QFETCH(QString, address);
        QFETCH(QString, token);
        QFETCH(QString, tokenFile);
        QFETCH(QString, message);
        ts::app::DashboardController controller({});
        controller.start();
        ts::widgets::ListenSettings settings;
        settings.address = address;
        settings.port = 0;
        settings.token = token;
        settings.tokenFile = tokenFile;
        QString error;
        QVERIFY(!controller.startListening(settings, &error));
        QVERIFY2(error.contains(message), qPrintable(error));
        QVERIFY(controller.window()->findChild<QAction *>(QStringLiteral("listenAction"))->isEnabled());
    }
};

void TestLiveSession::newAndCloseSession()
{
    QTemporaryDir dir;
    const QString a = writeLog(dir, u"a.ndjson"_qs, 7);
    const QString b = writeLog(dir, u"b.ndjson"_qs, 5);
    ts::app::DashboardController controller({});
    controller.start();
    MainWindow *window = controller.window();
    QString scratch;
    // The receiver goes with this function: a queued workspaceReady still on its way when the
    // test ends must not write into `scratch` afterwards.
    QObject receiver;
    connect(controller.session(), &ts::AnalysisSession::workspaceReady, &receiver,
            [&scratch](const QString &path) {
                if (ts::isScratchWorkspacePath(path))
                    scratch = path;
            });
    Q_EMIT window->openFilesRequested({a});
    QTRY_COMPARE(shownEvents(window), 7);
    QTRY_VERIFY(!scratch.isEmpty());
    // The scratch workspace holds the user's logs: private, and so are SQLite's files.
    QCOMPARE(QFile::permissions(scratch) & ~QFileDevice::Permissions(QFileDevice::ExeOwner | QFileDevice::ExeUser), kPrivate);
    if (QFile::exists(scratch + u"-wal"_qs))
        QCOMPARE(QFile::permissions(scratch + u"-wal"_qs), kPrivate);
    QCOMPARE(window->windowTitle(), u"Throttlescope"_qs); // a scratch workspace names nothing

    auto *newSession = window->findChild<QAction *>(u"newSessionAction"_qs);
    QVERIFY(newSession);
    QCOMPARE(newSession->shortcut(), QKeySequence(QKeySequence::New));
    const QString oldScratch = scratch;
    newSession->trigger();
    QTRY_COMPARE(shownEvents(window), 0);
    QTRY_VERIFY(shownSources(window).isEmpty());
    QTRY_VERIFY(!QFile::exists(oldScratch));
    Q_EMIT window->openFilesRequested({b});
    QTRY_COMPARE(shownEvents(window), 5); // b alone: nothing of a
    QCOMPARE(shownSources(window), QStringList{b});
    QTRY_VERIFY(!scratch.isEmpty() && scratch != oldScratch); // made once b is read

    window->findChild<QAction *>(u"closeSessionAction"_qs)->trigger();
    QTRY_COMPARE(shownEvents(window), 0);
    QTRY_VERIFY(!QFile::exists(scratch));
}

void TestLiveSession::openingLogsAddsToTheSession()
{
    QTemporaryDir dir;
    const QString a = writeLog(dir, u"a.ndjson"_qs, 7);
    const QString b = writeLog(dir, u"b.ndjson"_qs, 5);
    ts::app::DashboardController controller({});
    controller.start();
    MainWindow *window = controller.window();
    Q_EMIT window->openFilesRequested({a});
    QTRY_COMPARE(shownEvents(window), 7);
    Q_EMIT window->openFilesRequested({b}); // asks nothing
    QVERIFY(!QApplication::activeModalWidget());
    QTRY_COMPARE(shownEvents(window), 12);
    QCOMPARE(shownSources(window), (QStringList{a, b}));
}

void TestLiveSession::demoOpensANewSession()
{
    QTemporaryDir dir;
    const QString a = writeLog(dir, u"a.ndjson"_qs, 7);
    const QString b = writeLog(dir, u"b.ndjson"_qs, 5);
    ts::app::DashboardController controller({});
    controller.start();
    MainWindow *window = controller.window();
    Q_EMIT window->openFilesRequested({a});
    QTRY_COMPARE(shownEvents(window), 7);
    Q_EMIT window->demoRequested();
    QVERIFY(controller.isDemoSession());
    QTRY_VERIFY(shownSources(window).contains(u"demo"_qs));
    QVERIFY(!shownSources(window).contains(a)); // the real data is not mixed in
    // Real data while the demo runs: the demo's session closes, the log opens in a new one.
    Q_EMIT window->openFilesRequested({b});
    QVERIFY(!controller.isDemoSession());
    QTRY_COMPARE(shownSources(window), QStringList{b});
    QTRY_COMPARE(shownEvents(window), 5);
}

void TestLiveSession::scratchWorkspacesNeverOutliveTheirSession()
{
    QTemporaryDir tmp;
    const QByteArray oldTmp = qgetenv("TMPDIR");
    qputenv("TMPDIR", QFile::encodeName(tmp.path()));
    auto restore = qScopeGuard([&] {
        if (oldTmp.isEmpty())
            qunsetenv("TMPDIR");
        else
            qputenv("TMPDIR", oldTmp);
    });
    QCOMPARE(ts::scratchWorkspaceDirectory(), tmp.path());
    // A dashboard that crashed (its process is gone) left its scratch workspace behind.
    QProcess gone;
    gone.start(u"true"_qs, {});
    QVERIFY(gone.waitForStarted());
    const qint64 deadPid = gone.processId();
    QVERIFY(gone.waitForFinished());
    auto touch = [&](const QString &name) {
        QFile file(tmp.filePath(name));
        return file.open(QIODevice::WriteOnly) && file.write("x") == 1;
    };
    const QString orphan = QStringLiteral("throttlescope-session-%1-1f.db").arg(deadPid);
    QVERIFY(touch(orphan));
    QVERIFY(touch(orphan + u"-wal"_qs));
    QVERIFY(touch(orphan + u"-shm"_qs));
    // A running dashboard's (this process) and a file that only looks alike stay.
    const QString running =
        QStringLiteral("throttlescope-session-%1-abc.db").arg(QCoreApplication::applicationPid());
    QVERIFY(touch(running));
    QVERIFY(touch(u"throttlescope-session-notes.db"_qs));

    QTemporaryDir dir;
    const QString a = writeLog(dir, u"a.ndjson"_qs, 7);
    QString scratch;
    {
        ts::app::DashboardController controller({});
        QVERIFY(!QFile::exists(tmp.filePath(orphan)));
        QVERIFY(!QFile::exists(tmp.filePath(orphan + u"-wal"_qs)));
        QVERIFY(!QFile::exists(tmp.filePath(orphan + u"-shm"_qs)));
        QVERIFY(QFile::exists(tmp.filePath(running)));
        QVERIFY(QFile::exists(tmp.filePath(u"throttlescope-session-notes.db"_qs)));
        controller.start();
        QObject receiver; // see newAndCloseSession
        connect(controller.session(), &ts::AnalysisSession::workspaceReady, &receiver,
                [&scratch](const QString &path) {
                    if (ts::isScratchWorkspacePath(path))
                        scratch = path;
                });
        Q_EMIT controller.window()->openFilesRequested({a});
        QTRY_COMPARE(shownEvents(controller.window()), 7);
        QTRY_VERIFY(!scratch.isEmpty());
        QVERIFY(scratch.startsWith(tmp.path()));
        QVERIFY(QFile::exists(scratch));
        QCOMPARE(QFile::permissions(scratch) & ~QFileDevice::Permissions(QFileDevice::ExeOwner | QFileDevice::ExeUser), kPrivate);
    }
    // The dashboard closed: its scratch workspace went with it.
    QVERIFY(!QFile::exists(scratch));
    QVERIFY(!QFile::exists(scratch + u"-wal"_qs));
    QVERIFY(!QFile::exists(scratch + u"-shm"_qs));
}

// Issue 29.4: File > Listen, 5,000 events answered 200, the dashboard killed (-9): the next
// start offers them back instead of removing the scratch workspace they are in. The dashboard
// is this test binary run again (TS_CRASHING_DASHBOARD): it listens, prints its port and waits
// to be killed.
void TestLiveSession::crashedSessionsEventsAreOffered_data()
{
    QTest::addColumn<QString>("answer");
    QTest::newRow("recover") << u"recover"_qs;
    QTest::newRow("later, then delete") << u"later"_qs;
}

void TestLiveSession::crashedSessionsEventsAreOffered()
{
    if (qEnvironmentVariableIsSet("TS_CRASHING_DASHBOARD")) {
        ts::app::DashboardController controller({});
        controller.start();
        ts::widgets::ListenSettings settings;
        settings.port = 0;
        QString error;
        QVERIFY2(controller.startListening(settings, &error), qPrintable(error));
        std::printf("PORT %d\n", int(controller.listener()->port()));
        std::fflush(stdout);
        QTest::qWait(120'000); // killed long before
        return;
    }
    QFETCH(QString, answer);
    QTemporaryDir tmp;
    const QByteArray oldTmp = qgetenv("TMPDIR");
    qputenv("TMPDIR", QFile::encodeName(tmp.path()));
    auto restore = qScopeGuard([&] {
        if (oldTmp.isEmpty())
            qunsetenv("TMPDIR");
        else
            qputenv("TMPDIR", oldTmp);
    });
    QProcess dashboard;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(u"TS_CRASHING_DASHBOARD"_qs, u"1"_qs);
    environment.insert(u"TMPDIR"_qs, tmp.path());
    environment.insert(u"QT_QPA_PLATFORM"_qs, u"offscreen"_qs);
    dashboard.setProcessEnvironment(environment);
    dashboard.start(QCoreApplication::applicationFilePath(),
                    {u"crashedSessionsEventsAreOffered"_qs});
    QVERIFY(dashboard.waitForStarted());
    quint16 port = 0;
    QByteArray out;
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            out += dashboard.readAllStandardOutput();
            const qsizetype at = out.indexOf("PORT ");
            const qsizetype end = out.indexOf('\n', at);
            if (at >= 0 && end > at)
                port = quint16(out.mid(at + 5, end - at - 5).trimmed().toInt());
            return port != 0;
        }(),
        30'000);
    for (int request = 0; request < 5; ++request) {
        QByteArray body;
        for (int i = 0; i < 1000; ++i)
            body += requestLine(request * 1000 + i) + '\n';
        QCOMPARE(statusOf(ts::testhttp::post(port, "/ingest", body)), 200);
    }
    dashboard.kill(); // SIGKILL: nothing of the dashboard's own clean-up runs
    QVERIFY(dashboard.waitForFinished());

    const QString saved = tmp.filePath(u"recovered.tsws"_qs);
    QStringList asked;
    {
        ts::app::DashboardController controller({});
        controller.setRecoveryPrompt([&](const ts::OrphanedScratch &orphan, QString *destination) {
            asked << ts::recoveryQuestion(orphan);
            *destination = saved;
            return answer == u"recover" ? ts::app::DashboardController::RecoveryAnswer::Recover
                                        : ts::app::DashboardController::RecoveryAnswer::Later;
        });
        QCOMPARE(controller.orphanedSessions().size(), 1);
        controller.start();
        QCOMPARE(asked, QStringList{u"Recover 5,000 events received before the crash?"_qs});
        // What the user sees by default (kept with TS_SCREENSHOT_DIR).
        const auto box = ts::app::DashboardController::recoveryBox(
            controller.window(), ts::OrphanedScratch{u"x"_qs, 5000, 1});
        QVERIFY(box->text().contains(u"5,000 events"));
        box->show();
        QVERIFY(QTest::qWaitForWindowExposed(box.get()));
        QVERIFY(box->grab().save(picturePath(tmp, u"recover-events.png"_qs)));
        if (answer == u"recover") {
            QTRY_COMPARE(shownEvents(controller.window()), 5000);
            QVERIFY(controller.orphanedSessions().isEmpty());
        }
    }
    if (answer == u"recover") {
        // Saved where the user said, the scratch file gone with its WAL.
        QCOMPARE(ts::orphanedScratchWorkspaces(tmp.path()), QStringList());
        ts::Workspace workspace;
        QVERIFY(workspace.open(saved));
        return;
    }
    // Later: still there at the next start; Delete: gone.
    QVERIFY(!QFile::exists(saved));
    ts::app::DashboardController again({});
    QCOMPARE(again.orphanedSessions().size(), 1);
    QCOMPARE(again.orphanedSessions().constFirst().events, 5000);
    again.setRecoveryPrompt([](const ts::OrphanedScratch &, QString *) {
        return ts::app::DashboardController::RecoveryAnswer::Delete;
    });
    again.offerRecovery();
    QCOMPARE(ts::orphanedScratchWorkspaces(tmp.path()), QStringList());
}

void TestLiveSession::recentListsOnlyDocumentsThatExist()
{
    QTemporaryDir dir;
    const QString log = writeLog(dir, u"kept.ndjson"_qs, 1);
    const QString removed = writeLog(dir, u"removed.ndjson"_qs, 1);
    const QString scratch = dir.filePath(u"throttlescope-session-123-ab.db"_qs);
    QVERIFY(QFile(scratch).open(QIODevice::WriteOnly));
    MainWindow window;
    QSettings().remove(u"recentFiles"_qs);
    window.addRecentFile(removed);
    window.addRecentFile(log);
    window.addRecentFile(dir.filePath(u"never-existed.ndjson"_qs));
    window.setWorkspacePath(scratch); // the session's scratch workspace: not a document
    QVERIFY(QFile::remove(removed));
    QCOMPARE(window.recentFiles(), QStringList{log});
    // What an older version stored is filtered too.
    QSettings().setValue(u"recentFiles"_qs, QStringList{scratch, log, removed});
    QCOMPARE(window.recentFiles(), QStringList{log});
}

void TestLiveSession::titleFollowsSaveAs()
{
    QTemporaryDir dir;
    const QString a = writeLog(dir, u"a.ndjson"_qs, 7);
    ts::app::DashboardController controller({});
    controller.start();
    MainWindow *window = controller.window();
    Q_EMIT window->openFilesRequested({a});
    QTRY_COMPARE(shownEvents(window), 7);
    QCOMPARE(window->windowTitle(), u"Throttlescope"_qs);
    const QString mine = dir.filePath(u"mine.tsws"_qs);
    Q_EMIT window->saveWorkspaceRequested(mine);
    QTRY_COMPARE(window->windowTitle(), u"mine.tsws — Throttlescope"_qs);
    QVERIFY(window->recentFiles().contains(mine));
    const QString other = dir.filePath(u"other.tsws"_qs);
    Q_EMIT window->saveWorkspaceRequested(other);
    QTRY_COMPARE(window->windowTitle(), u"other.tsws — Throttlescope"_qs);
    window->findChild<QAction *>(u"newSessionAction"_qs)->trigger();
    QCOMPARE(window->windowTitle(), u"Throttlescope"_qs);
}

void TestLiveSession::policyIsSavedInTheWorkspace_data()
{
    QTest::addColumn<bool>("editBeforeSaving");
    QTest::newRow("edited, then saved") << true;
    QTest::newRow("saved, then edited") << false;
}

void TestLiveSession::policyIsSavedInTheWorkspace()
{
    QFETCH(bool, editBeforeSaving);
    QTemporaryDir dir;
    const QString a = writeLog(dir, u"a.ndjson"_qs, 7);
    const QString saved = dir.filePath(u"policy.tsws"_qs);
    {
        ts::app::DashboardController controller({});
        controller.start();
        MainWindow *window = controller.window();
        Q_EMIT window->openFilesRequested({a});
        QTRY_COMPARE(shownEvents(window), 7);
        if (editBeforeSaving)
            Q_EMIT window->policyChangeRequested(u"fabric"_qs);
        Q_EMIT window->saveWorkspaceRequested(saved);
        QTRY_VERIFY(window->windowTitle().startsWith(u"policy.tsws"));
        if (!editBeforeSaving)
            Q_EMIT window->policyChangeRequested(u"fabric"_qs);
        QTRY_COMPARE(policySource(controller.session()), u"fabric"_qs);
    }
    QCOMPARE(workspaceSetting(saved, u"policy"_qs), u"fabric"_qs);
    // Reopened in a new dashboard: the workspace's policies are in force again, and written to
    // no other workspace (one without a policy opened before it keeps none).
    const QString plain = dir.filePath(u"plain.tsws"_qs);
    {
        ts::Workspace empty;
        QVERIFY(empty.open(plain));
    }
    ts::app::DashboardController controller({});
    controller.start();
    QCOMPARE(policySource(controller.session()), QString());
    Q_EMIT controller.window()->openWorkspaceRequested(plain);
    QTRY_COMPARE(controller.window()->windowTitle(), u"plain.tsws — Throttlescope"_qs);
    Q_EMIT controller.window()->openWorkspaceRequested(saved);
    QTRY_COMPARE(shownEvents(controller.window()), 7);
    QCOMPARE(policySource(controller.session()), u"fabric"_qs);
    QCOMPARE(workspaceSetting(plain, u"policy"_qs), QString());
    QCOMPARE(controller.window()->windowTitle(), u"policy.tsws — Throttlescope"_qs);
    // Back to the built-in set: the workspace forgets its own.
    Q_EMIT controller.window()->policyChangeRequested(u"builtin"_qs);
    QTRY_COMPARE(workspaceSetting(saved, u"policy"_qs), QString());
}

void TestLiveSession::timeWindowIsRememberedPerWorkspace()
{
    // Half an hour of traffic, one request every 3 s.
    QTemporaryDir dir;
    const QString log = dir.filePath(u"half-hour.ndjson"_qs);
    {
        QFile file(log);
        QVERIFY(file.open(QIODevice::WriteOnly));
        const QDateTime start(QDate(2026, 2, 18), QTime(22, 0), Qt::UTC);
        for (int i = 0; i <= 600; ++i) {
            file.write("{\"ts\":\"" + start.addSecs(3 * i).toString(Qt::ISODate).toUtf8()
                       + "\",\"identity\":\"sp-1\",\"service\":\"fabric\",\"method\":\"GET\","
                         "\"url\":\"https://api.fabric.microsoft.com/v1/workspaces\",\"status\":"
                       + (i % 5 == 0 ? "429" : "200") + "}\n");
        }
    }
    const qint64 first = QDateTime(QDate(2026, 2, 18), QTime(22, 0), Qt::UTC).toMSecsSinceEpoch();
    const qint64 last = first + 1800'000;
    const QString saved = dir.filePath(u"window.tsws"_qs);
    {
        ts::app::DashboardController controller({});
        controller.start();
        MainWindow *window = controller.window();
        ts::models::TimeRange *range = window->dashboard()->timeRange();
        auto *combo = window->findChild<QComboBox *>(u"timeWindowCombo"_qs);
        QVERIFY(combo);
        QCOMPARE(combo->count(), 4);
        QCOMPARE(combo->currentData().toLongLong(), 0); // all data by default
        Q_EMIT window->openFilesRequested({log});
        QTRY_COMPARE(shownEvents(window), 601);
        QTRY_COMPARE(range->endMs(), last);
        QCOMPARE(range->startMs(), first); // all of it
        // The operator picks "Last 5 minutes": the charts show the trailing 5 minutes.
        const int fiveMinutes = combo->findData(qint64(5 * 60'000));
        QVERIFY(fiveMinutes >= 0);
        combo->setCurrentIndex(fiveMinutes);
        Q_EMIT combo->activated(fiveMinutes);
        QVERIFY(range->isFollowing());
        QCOMPARE(range->startMs(), last - 5 * 60'000);
        QCOMPARE(range->endMs(), last);
        window->showPage(u"throttles"_qs);
        QVERIFY(window->saveScreenshot(picturePath(dir, u"time-window-5m.png"_qs), QSize(1280, 800)));
        Q_EMIT window->saveWorkspaceRequested(saved);
        QTRY_COMPARE(workspaceSetting(saved, u"timeWindow"_qs), u"5m"_qs);
        // Chosen after saving: written to the workspace at once.
        const int hour = combo->findData(qint64(60 * 60'000));
        combo->setCurrentIndex(hour);
        Q_EMIT combo->activated(hour);
        QCOMPARE(range->startMs(), first); // less data than an hour: all of it, no blank
        QTRY_COMPARE(workspaceSetting(saved, u"timeWindow"_qs), u"1h"_qs);
        combo->setCurrentIndex(fiveMinutes);
        Q_EMIT combo->activated(fiveMinutes);
        QTRY_COMPARE(workspaceSetting(saved, u"timeWindow"_qs), u"5m"_qs);
        // A new session has no workspace: back to all the data.
        window->findChild<QAction *>(u"newSessionAction"_qs)->trigger();
        QCOMPARE(combo->currentData().toLongLong(), 0);
    }
    // Reopened: the workspace's window is chosen again.
    ts::app::DashboardController controller({});
    controller.start();
    MainWindow *window = controller.window();
    auto *combo = window->findChild<QComboBox *>(u"timeWindowCombo"_qs);
    Q_EMIT window->openWorkspaceRequested(saved);
    QTRY_COMPARE(combo->currentData().toLongLong(), 5 * 60'000);
    QTRY_COMPARE(shownEvents(window), 601);
    ts::models::TimeRange *range = window->dashboard()->timeRange();
    QTRY_COMPARE(range->endMs(), last);
    QCOMPARE(range->startMs(), last - 5 * 60'000);
}

void TestLiveSession::saveAsKeepsLiveEvents_data()
{
    QTest::addColumn<bool>("listen");
    QTest::addColumn<bool>("demo");
    QTest::addColumn<bool>("changePolicy");
    QTest::newRow("log and listener") << true << false << false;
    QTest::newRow("log and demo") << false << true << false;
    QTest::newRow("log, listener and demo") << true << true << false;
    // The policy change analyses everything again, the live feeds included: the session
    // still shows what Save As writes.
    QTest::newRow("log, listener and demo, policy changed") << true << true << true;
}

// File > Save As keeps what only the session received (File > Listen…, the demo), not only
// the files it read: reopened, the workspace shows the session's totals, saved twice or once.
void TestLiveSession::saveAsKeepsLiveEvents()
{
    QFETCH(bool, listen);
    QFETCH(bool, demo);
    QFETCH(bool, changePolicy);
    QTemporaryDir dir;
    const QString a = writeLog(dir, u"a.ndjson"_qs, 7);
    const QString saved = dir.filePath(u"live.tsws"_qs);
    qint64 expected = 7;
    ts::ReportData session;
    {
        ts::app::DashboardController controller({});
        controller.start();
        MainWindow *window = controller.window();
        Q_EMIT window->openFilesRequested({a});
        QTRY_COMPARE(shownEvents(window), 7);
        if (listen) {
            ts::widgets::ListenSettings settings;
            settings.port = 0;
            QString error;
            QVERIFY2(controller.startListening(settings, &error), qPrintable(error));
            const quint16 port = controller.listener()->port();
            QByteArray body;
            for (int i = 0; i < 40; ++i)
                body += requestLine(i, i % 4 == 0 ? 429 : 200) + '\n';
            QCOMPARE(statusOf(ts::testhttp::post(port, "/ingest", body)), 200);
            // One event and one malformed record stored, the request refused (400).
            QCOMPARE(statusOf(ts::testhttp::post(port, "/ingest", requestLine(99) + "\n{oops\n")),
                     400);
            expected += 41;
        }
        if (demo) {
            // What the demo's simulator hands the session (AnalysisSession::ingestBatch).
            QList<ts::RequestEvent> events;
            for (int i = 0; i < 25; ++i) {
                ts::RequestEvent event;
                event.tsMs = QDateTime::currentMSecsSinceEpoch() + i;
                event.service = u"graph"_qs;
                event.identity = u"demo-%1"_qs.arg(i % 3);
                event.method = u"GET"_qs;
                event.url = u"https://graph.microsoft.com/v1.0/me"_qs;
                event.status = i % 5 == 0 ? 429 : 200;
                event.source = u"demo"_qs;
                events.append(event);
            }
            ts::AnalysisSession *worker = controller.session();
            QMetaObject::invokeMethod(worker, [worker, events] { worker->ingestBatch(events); });
            expected += 25;
        }
        QTRY_COMPARE(shownEvents(window), expected);
        const qint64 malformed = window->dashboard()->snapshot()->report.malformed;
        if (changePolicy) {
            Q_EMIT window->policyChangeRequested(u"fabric"_qs);
            QCOMPARE(policySource(controller.session()), u"fabric"_qs); // the re-run is over
            QTest::qWait(300); // its snapshots reach the window
            QTRY_COMPARE(shownEvents(window), expected);
            QCOMPARE(window->dashboard()->snapshot()->report.malformed, malformed);
        }
        session = window->dashboard()->snapshot()->report;
        QSignalSpy finished(controller.session(), &ts::AnalysisSession::operationFinished);
        Q_EMIT window->saveWorkspaceRequested(saved);
        QTRY_COMPARE(finished.count(), 1);
        QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(finished.at(0).at(1).toString()));
        // Saved again: replaced, not added a second time.
        Q_EMIT window->saveWorkspaceRequested(saved);
        QTRY_COMPARE(finished.count(), 2);
        QVERIFY2(finished.at(1).at(0).toBool(), qPrintable(finished.at(1).at(1).toString()));
        if (listen)
            controller.stopListening();
    }
    ts::app::DashboardController controller({});
    controller.start();
    MainWindow *window = controller.window();
    Q_EMIT window->openWorkspaceRequested(saved);
    QTRY_COMPARE(shownEvents(window), expected);
    const ts::ReportData &reopened = window->dashboard()->snapshot()->report;
    QCOMPARE(reopened.events, session.events);
    QCOMPARE(reopened.malformed, session.malformed);
    QCOMPARE(reopened.byStatus, session.byStatus);
    QCOMPARE(reopened.throttles.total, session.throttles.total);
}

// File > Save As from a session that opened a workspace: the saved workspace holds that
// workspace's events too (and what was read besides), once however often it is saved.
void TestLiveSession::saveAsKeepsOpenedWorkspace()
{
    QTemporaryDir dir;
    const QString a = writeLog(dir, u"a.ndjson"_qs, 7);
    const QString b = writeLog(dir, u"b.ndjson"_qs, 5);
    const QString opened = dir.filePath(u"opened.tsws"_qs);
    {
        ts::Workspace workspace;
        ts::WorkspaceWriter writer;
        QVERIFY(workspace.open(opened) && writer.start(opened));
        QFile probe(a);
        QVERIFY(probe.open(QIODevice::ReadOnly));
        QString error;
        const std::unique_ptr<ts::LogReader> reader = ts::readerFor(probe, a, {}, &error);
        probe.close();
        QVERIFY2(reader, qPrintable(error));
        QVERIFY(ts::importFile(workspace, writer, a, *reader).ok());
        QVERIFY(writer.finish());
    }
    const QString saved = dir.filePath(u"saved.tsws"_qs);
    ts::ReportData session;
    {
        ts::app::DashboardController controller({});
        controller.start();
        MainWindow *window = controller.window();
        Q_EMIT window->openWorkspaceRequested(opened);
        QTRY_COMPARE(shownEvents(window), 7);
        Q_EMIT window->openFilesRequested({b});
        QTRY_COMPARE(shownEvents(window), 12);
        session = window->dashboard()->snapshot()->report;
        QSignalSpy finished(controller.session(), &ts::AnalysisSession::operationFinished);
        for (int save = 1; save <= 2; ++save) {
            Q_EMIT window->saveWorkspaceRequested(saved);
            QTRY_COMPARE(finished.count(), save);
            QVERIFY2(finished.last().at(0).toBool(), qPrintable(finished.last().at(1).toString()));
        }
    }
    ts::app::DashboardController controller({});
    controller.start();
    MainWindow *window = controller.window();
    Q_EMIT window->openWorkspaceRequested(saved);
    QTRY_COMPARE(shownEvents(window), 12);
    const ts::ReportData &reopened = window->dashboard()->snapshot()->report;
    QCOMPARE(reopened.byStatus, session.byStatus);
    QCOMPARE(reopened.throttles.total, session.throttles.total);
    QTest::qWait(300); // nothing more arrives: each event is in it once
    QCOMPARE(shownEvents(window), 12);
}

QTEST_MAIN(TestLiveSession)
#include "tst_livesession.moc"
