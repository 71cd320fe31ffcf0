// The dashboard given a workspace as FILE (`throttlescope migration.tsws`, or the desktop
// opening a .tsws through the package's MIME type) opens it as a workspace, recognised by its
// content whatever its name, and reads the other files as logs.
#include "dashboard.h"
#include "dashboardcontroller.h"
#include "fakestore.h"
#include "ingest/sourcereader.h"
#include "poll/pollcursor.h"
#include "mainwindow.h"
#include "store/importjob.h"
#include "store/workspace.h"
#include "store/workspacewriter.h"

#include <QApplication>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QStatusBar>
#include <QUrlQuery>
#include <QTemporaryDir>
#include <QTest>

namespace {

// A workspace holding the canonical examples, at `path`.
bool makeWorkspace(const QString &path)
{
    ts::Workspace workspace;
    ts::WorkspaceWriter writer;
    const QString log = QStringLiteral(TS_TEST_DATA_DIR "/canonical/spec-examples.ndjson");
    if (!workspace.open(path) || !writer.start(path))
        return false;
    QFile probe(log);
    if (!probe.open(QIODevice::ReadOnly))
        return false;
    QString error;
    const std::unique_ptr<ts::LogReader> reader = ts::readerFor(probe, log, {}, &error);
    probe.close();
    if (!reader)
        return false;
    const bool imported = ts::importFile(workspace, writer, log, *reader).ok();
    return writer.finish() && imported;
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

QByteArray ndjsonRow(qint64 ts, int id)
{
    return "{\"ts\":" + QByteArray::number(ts) + ",\"service\":\"graph\",\"identity\":\"u\","
           "\"status\":200,\"operationId\":\"op-" + QByteArray::number(id) + "\"}";
}

} // namespace

class TestOpenWorkspace : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // QSettings in a throwaway location
        QCoreApplication::setOrganizationName(QStringLiteral("ThrottlescopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_openworkspace"));
    }

    void workspaceGivenAsFile_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow(".tsws") << u"migration.tsws"_qs;
        QTest::newRow("any name") << u"migration.data"_qs;
    }

    void workspaceGivenAsFile()
    {
        QFETCH(QString, name);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(name);
        QVERIFY(makeWorkspace(path));

        ts::app::DashboardOptions options;
        options.files = {path};
        ts::app::DashboardController controller(options);
        controller.start();
        MainWindow *window = shownWindow();
        QVERIFY(window);
        // The window names the workspace it has open (MainWindow::setWorkspacePath).
        QTRY_VERIFY_WITH_TIMEOUT(window->windowTitle().startsWith(name), 60000);
    }

    // A workspace that stores a polled source (File > Add Source, then Save As) resumes
    // polling it from its stored cursor when it is opened again: rows the store got meanwhile
    // arrive, the ones stored before are not read again. Unless another poller stored rows
    // moments ago: then it is left to that one, and the status bar says so.
    void polledSourceResumesFromStoredCursor_data()
    {
        QTest::addColumn<qint64>("cursorAgeMs");
        QTest::addColumn<bool>("resumed");
        QTest::newRow("saved an hour ago") << qint64(3'600'000) << true;
        QTest::newRow("another poller, 5 s ago") << qint64(5'000) << false;
    }

    void polledSourceResumesFromStoredCursor()
    {
        QFETCH(qint64, cursorAgeMs);
        QFETCH(bool, resumed);
        constexpr qint64 kBaseMs = 1771454400000;
        std::multimap<qint64, QByteArray> rows;
        for (int i = 0; i < 100; ++i)
            rows.insert({kBaseMs + i * 100, ndjsonRow(kBaseMs + i * 100, i)});
        ts::testfake::Server store([&](const ts::testfake::Request &request) {
            const QUrlQuery query(QUrl(QString::fromLatin1(request.target)));
            QByteArray body;
            for (auto it = rows.lower_bound(query.queryItemValue(u"after"_qs).toLongLong());
                 it != rows.end(); ++it)
                body += it->second + '\n';
            return ts::testfake::Response{200, body, "application/x-ndjson"};
        });
        const QString url = u"http://127.0.0.1:%1/rows?after={cursor}"_qs.arg(store.port());

        // The saved session: the first 100 rows and the cursor that covers them.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(u"polled.tsws"_qs);
        {
            ts::Workspace workspace;
            QVERIFY(workspace.open(path));
            const qint64 sourceId = workspace.ensurePolledSource(url, u"ndjson-http"_qs);
            QVERIFY(sourceId > 0);
            ts::poll::PollCursor cursor(30'000);
            QList<ts::poll::PollCursor::Row> keys;
            ts::WriteBatch batch;
            batch.sourceId = sourceId;
            for (const auto &[ts, row] : rows) {
                keys.append({ts, ts::poll::rowHash(row.constData(), row.size())});
                ts::RequestEvent event;
                event.tsMs = ts;
                event.service = u"graph"_qs;
                event.identity = u"u"_qs;
                event.status = 200;
                batch.events.append(event);
            }
            cursor.accept(keys);
            batch.pollCursor = cursor.save();
            ts::WorkspaceWriter writer;
            QVERIFY(writer.start(path));
            QVERIFY(writer.submit(std::move(batch)));
            QVERIFY(writer.finish());
            QSqlQuery age(workspace.database());
            QVERIFY(age.exec(u"UPDATE poll_cursors SET updated_ms = %1"_qs.arg(
                QDateTime::currentMSecsSinceEpoch() - cursorAgeMs)));
        }
        for (int i = 100; i < 130; ++i) // written while the dashboard was closed
            rows.insert({kBaseMs + i * 100, ndjsonRow(kBaseMs + i * 100, i)});

        ts::app::DashboardOptions options;
        options.files = {path};
        ts::app::DashboardController controller(options);
        controller.start();
        MainWindow *window = shownWindow();
        QVERIFY(window);
        QTRY_COMPARE_WITH_TIMEOUT(windowEvents(window), 100, 30000);
        if (resumed) {
            QTRY_COMPARE_WITH_TIMEOUT(windowEvents(window), 130, 30000);
            QVERIFY(!store.requests.isEmpty());
            // From the cursor (its overlap before the newest row), not from the beginning (0);
            // the rows of the overlap already stored are recognised, not counted again.
            const QUrlQuery first(QUrl(QString::fromLatin1(store.requests.constFirst().target)));
            QCOMPARE(first.queryItemValue(u"after"_qs).toLongLong(), kBaseMs + 9'900 - 30'000);
            QTest::qWait(500);
            QCOMPARE(windowEvents(window), 130);
        } else {
            QTRY_VERIFY_WITH_TIMEOUT(
                window->statusBar()->currentMessage().contains(u"not resumed"_qs), 30000);
            QTest::qWait(500);
            QVERIFY(store.requests.isEmpty());
            QCOMPARE(windowEvents(window), 100);
        }
    }
};

QTEST_MAIN(TestOpenWorkspace)
#include "tst_openworkspace.moc"
