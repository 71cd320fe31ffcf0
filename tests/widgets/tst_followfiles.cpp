// The dashboard follows the files it opens: the window's totals grow while a file is appended
// (canonical NDJSON and an access log), through a rotation; View > Follow Files off stops it and
// on catches up; a glob's folder brings in a file created later.
#include "dashboard.h"
#include "dashboardcontroller.h"
#include "ingestpage.h"
#include "mainwindow.h"
#include "models/ingestmodels.h"
#include "session/analysissession.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QMimeData>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

namespace {

void appendTo(const QString &path, const QByteArray &data)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Append));
    QCOMPARE(file.write(data), data.size());
}

QByteArray lines(const QByteArray &format, int from, int count)
{
    QByteArray data;
    for (int i = from; i < from + count; ++i) {
        const QByteArray n = QByteArray::number(i);
        if (format == "access")
            data += "10.0.0.1 - u-" + n +
                    " [18/Feb/2026:22:44:09 +0000] \"GET /v1.0/me HTTP/1.1\" 429 120 \"-\" \"m\"\n";
        else
            data += "{\"ts\":\"2026-02-18T22:44:09.512Z\",\"identity\":\"u-" + n +
                    "\",\"service\":\"graph\",\"status\":429}\n";
    }
    return data;
}

MainWindow *shownWindow()
{
    const auto widgets = QApplication::topLevelWidgets();
    for (QWidget *widget : widgets) {
        if (auto *window = qobject_cast<MainWindow *>(widget))
            return window;
    }
    return nullptr;
}

qint64 windowEvents(MainWindow *window)
{
    const auto &snapshot = window->dashboard()->snapshot();
    return snapshot ? snapshot->report.events : -1;
}

// Waits until the session's thread has handled everything queued to it so far.
void syncWithSession(ts::app::DashboardController &controller)
{
    QMetaObject::invokeMethod(
        controller.session(), [] {}, Qt::BlockingQueuedConnection);
}

// The file's events on the Ingest page.
qint64 ingestEvents(MainWindow *window, const QString &path)
{
    const auto *model = window->dashboard()->ingestPage()->sourcesModel();
    for (int row = 0; row < model->rowCount(); ++row) {
        if (model->sourceAt(row).path == path)
            return model->sourceAt(row).events;
    }
    return -1;
}

} // namespace

class TestFollowFiles : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // QSettings in a throwaway location
        QCoreApplication::setOrganizationName(QStringLiteral("ThrottlescopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_followfiles"));
    }

    void totalsGrowWhileAppended_data()
    {
        QTest::addColumn<QByteArray>("format");
        QTest::newRow("ndjson") << QByteArray("ndjson");
        QTest::newRow("access log") << QByteArray("access");
    }

    void totalsGrowWhileAppended()
    {
        QFETCH(QByteArray, format);
        QTemporaryDir dir;
        const QString path = dir.filePath(u"app.log"_qs);
        appendTo(path, lines(format, 0, 100));

        ts::app::DashboardOptions options;
        options.files = {path};
        ts::app::DashboardController controller(options);
        controller.start();
        MainWindow *window = shownWindow();
        QVERIFY(window);
        QTRY_COMPARE_WITH_TIMEOUT(windowEvents(window), 100, 30000);

        appendTo(path, lines(format, 100, 50));
        QTRY_COMPARE_WITH_TIMEOUT(windowEvents(window), 150, 10000);
        appendTo(path, lines(format, 150, 25));
        QVERIFY(QFile::rename(path, path + u".1"_qs));
        appendTo(path, lines(format, 175, 25));
        QTRY_COMPARE_WITH_TIMEOUT(windowEvents(window), 200, 10000);

        // Follow off: appends wait; on: they arrive, once.
        auto *follow = window->findChild<QAction *>(u"followFilesAction"_qs);
        QVERIFY(follow);
        QVERIFY(follow->isChecked());
        follow->setChecked(false);
        QTest::qWait(300);
        appendTo(path, lines(format, 200, 30));
        QTest::qWait(600);
        QCOMPARE(windowEvents(window), 200);
        follow->setChecked(true);
        QTRY_COMPARE_WITH_TIMEOUT(windowEvents(window), 230, 10000);
        QTest::qWait(300);
        QCOMPARE(windowEvents(window), 230);
    }

    // A policy change reads the files again, up to their end: lines appended before it that
    // the follower had not handed over yet, or while it runs, are counted once, not again
    // when the follower delivers them.
    void policyChangeWhileFollowing()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"app.ndjson"_qs);
        appendTo(path, lines("ndjson", 0, 100));
        ts::app::DashboardOptions options;
        options.files = {path};
        ts::app::DashboardController controller(options);
        controller.start();
        MainWindow *window = shownWindow();
        QVERIFY(window);
        QTRY_COMPARE_WITH_TIMEOUT(windowEvents(window), 100, 30000);

        // The follower is held back (Follow off) while 50 lines are appended: the policy's
        // re-read reads them before the follower does.
        auto *follow = window->findChild<QAction *>(u"followFilesAction"_qs);
        QVERIFY(follow);
        follow->setChecked(false);
        syncWithSession(controller);
        appendTo(path, lines("ndjson", 100, 50));
        Q_EMIT window->policyChangeRequested(u"fabric"_qs);
        appendTo(path, lines("ndjson", 150, 25)); // during the re-run, or just after it
        syncWithSession(controller);              // the re-run is over
        follow->setChecked(true);
        appendTo(path, lines("ndjson", 175, 25)); // and more, followed as usual
        QTRY_COMPARE_WITH_TIMEOUT(windowEvents(window), 200, 10000);
        QTRY_COMPARE(ingestEvents(window, path), 200);
        // The follower polls every 100 ms and the session publishes every 100 ms: a second
        // count would show by now.
        QTest::qWait(500);
        syncWithSession(controller);
        QTest::qWait(200);
        QCOMPARE(windowEvents(window), 200);
        QCOMPARE(ingestEvents(window, path), 200);
    }

    void globFolder()
    {
        QTemporaryDir dir;
        appendTo(dir.filePath(u"a.ndjson"_qs), lines("ndjson", 0, 10));
        ts::app::DashboardOptions options;
        options.files = {dir.filePath(u"*.ndjson"_qs)};
        ts::app::DashboardController controller(options);
        controller.start();
        MainWindow *window = shownWindow();
        QVERIFY(window);
        QTRY_COMPARE_WITH_TIMEOUT(windowEvents(window), 10, 30000);
        appendTo(dir.filePath(u"b.ndjson"_qs), lines("ndjson", 10, 7));
        QTRY_COMPARE_WITH_TIMEOUT(windowEvents(window), 17, 10000);
    }
    // Issue 30.11: follow a growing file, Save As, keep watching, quit, open the workspace
    // again: it holds every line written until the quit, and following resumes from there.
    void saveWhileFollowingKeepsTheRest()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"app.ndjson"_qs);
        const QString saved = dir.filePath(u"session.tsws"_qs);
        appendTo(path, lines("ndjson", 0, 100));
        {
            ts::app::DashboardOptions options;
            options.files = {path};
            ts::app::DashboardController controller(options);
            controller.start();
            MainWindow *window = shownWindow();
            QVERIFY(window);
            QTRY_COMPARE_WITH_TIMEOUT(windowEvents(window), 100, 30000);
            appendTo(path, lines("ndjson", 100, 20));
            QTRY_COMPARE_WITH_TIMEOUT(windowEvents(window), 120, 10000);
            Q_EMIT window->saveWorkspaceRequested(saved);
            syncWithSession(controller);
            // Keep watching: lines written after the save reach the window and the workspace.
            appendTo(path, lines("ndjson", 120, 30));
            QTRY_COMPARE_WITH_TIMEOUT(windowEvents(window), 150, 10000);
            QTest::qWait(2500); // the session catches its workspace up every second
            syncWithSession(controller);
        } // quit
        appendTo(path, lines("ndjson", 150, 10)); // written while the app is closed
        ts::app::DashboardOptions options;
        options.files = {saved};
        ts::app::DashboardController controller(options);
        controller.start();
        MainWindow *window = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT((window = shownWindow()) != nullptr, 10000);
        // Every line until the quit, then what was written while closed: following resumed.
        QTRY_COMPARE_WITH_TIMEOUT(windowEvents(window), 160, 30000);
        appendTo(path, lines("ndjson", 160, 5));
        QTRY_COMPARE_WITH_TIMEOUT(windowEvents(window), 165, 10000);
        // The file is followed (through the workspace), and says so.
        const auto *model = window->dashboard()->ingestPage()->sourcesModel();
        bool following = false;
        for (int row = 0; row < model->rowCount(); ++row) {
            if (model->sourceAt(row).path == path)
                following = model->index(row, ts::models::IngestSourcesModel::StateColumn)
                                .data()
                                .toString() == u"following"_qs;
        }
        QVERIFY(following);
    }

    // Issue 30.11: the app's own earlier poller (this machine, its process gone) is no other
    // poller: resuming is not blocked by rows it stored seconds ago.
    void ownEarlierPollerIsGone()
    {
        QVERIFY(ts::pollerOwnerIsGone(ts::thisPollerOwner())); // this process: an earlier session
        QVERIFY(!ts::pollerOwnerIsGone(u"another-host 4242"_qs));
        QVERIFY(!ts::pollerOwnerIsGone(QString()));
        // A process of this machine that still runs (init) is another poller; one that is gone
        // (a pid far past any used here) is not.
        const QString host = ts::thisPollerOwner().section(u' ', 0, 0);
        QVERIFY(!ts::pollerOwnerIsGone(host + u" 1"_qs));
        QVERIFY(ts::pollerOwnerIsGone(host + u" 4194000"_qs));
    }

    // Drag and drop (issue 32.6): files and folders dropped on the window open as File > Open
    // would; the drag is accepted only for local files; a dropped folder is followed (a file
    // created in it later comes in too).
    void dropFilesAndFolders()
    {
        QTemporaryDir dir;
        const QString file = dir.filePath(u"one.ndjson"_qs);
        appendTo(file, lines("ndjson", 0, 12));
        QVERIFY(QDir(dir.path()).mkdir(u"folder"_qs));
        const QString folder = dir.filePath(u"folder"_qs);
        appendTo(folder + u"/a.ndjson"_qs, lines("ndjson", 100, 5));

        ts::app::DashboardOptions options;
        ts::app::DashboardController controller(options);
        controller.start();
        MainWindow *window = shownWindow();
        QVERIFY(window);

        QMimeData remote;
        remote.setUrls({QUrl(u"https://example.com/log.ndjson"_qs)});
        QDragEnterEvent refused(QPoint(10, 10), Qt::CopyAction, &remote, Qt::LeftButton,
                                Qt::NoModifier);
        QApplication::sendEvent(window, &refused);
        QVERIFY(!refused.isAccepted());

        QMimeData dropped;
        dropped.setUrls({QUrl::fromLocalFile(file), QUrl::fromLocalFile(folder)});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &dropped, Qt::LeftButton,
                              Qt::NoModifier);
        QApplication::sendEvent(window, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &dropped, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(window, &drop);
        QTRY_COMPARE_WITH_TIMEOUT(windowEvents(window), 17, 30000);
        appendTo(folder + u"/b.ndjson"_qs, lines("ndjson", 200, 3));
        QTRY_COMPARE_WITH_TIMEOUT(windowEvents(window), 20, 10000);
    }
};

QTEST_MAIN(TestFollowFiles)
#include "tst_followfiles.moc"
