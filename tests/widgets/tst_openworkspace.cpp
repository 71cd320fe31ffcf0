// The dashboard given a workspace as FILE (`throttlescope migration.tsws`, or the desktop
// opening a .tsws through the package's MIME type) opens it as a workspace, recognised by its
// content whatever its name, and reads the other files as logs.
#include "dashboard.h"
#include "dashboardcontroller.h"
#include "eventspage.h"
#include "fakestore.h"
#include "ingest/sourcereader.h"
#include "mainwindow.h"
#include "models/eventsmodel.h"
#include "poll/pollcursor.h"
#include "store/importjob.h"
#include "store/workspace.h"
#include "store/workspacewriter.h"

#include <QApplication>
#include <QDeadlineTimer>
#include <QMutex>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QUrlQuery>
#include <QWaitCondition>

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

// Holds the workers of GatedSource after they read their page, until opened.
class Gate
{
public:
    void hold()
    {
        QMutexLocker locker(&m_mutex);
        m_holding = true;
    }
    void open()
    {
        QMutexLocker locker(&m_mutex);
        m_holding = false;
        m_changed.wakeAll();
    }
    // On a worker: waits while the gate holds.
    void pass()
    {
        QMutexLocker locker(&m_mutex);
        ++m_held;
        m_changed.wakeAll();
        while (m_holding)
            m_changed.wait(&m_mutex);
        --m_held;
    }
    bool waitUntilHeld(int timeoutMs)
    {
        QMutexLocker locker(&m_mutex);
        QDeadlineTimer deadline(timeoutMs);
        while (m_held == 0) {
            if (!m_changed.wait(&m_mutex, deadline))
                return false;
        }
        return true;
    }

private:
    // Protects m_holding and m_held: set by the test's thread, read and waited on by the
    // thread pool's workers (m_changed signals any change).
    QMutex m_mutex;
    QWaitCondition m_changed;
    bool m_holding = false;
    int m_held = 0; // workers waiting in pass()
};

// The page's workspace source, whose background pages pass the gate once read.
class GatedSource final : public ts::models::EventPageSource
{
public:
    GatedSource(std::shared_ptr<ts::models::EventPageSource> inner, std::shared_ptr<Gate> gate)
        : m_inner(std::move(inner)), m_gate(std::move(gate))
    {
    }
    QList<ts::models::EventRow> fetchPage(const ts::models::EventQuery &query, qint64 afterRowId,
                                          int limit) override
    {
        return m_inner->fetchPage(query, afterRowId, limit);
    }
    qint64 count(const ts::models::EventQuery &query) override { return m_inner->count(query); }
    [[nodiscard]] std::function<qint64()>
    backgroundCounter(const ts::models::EventQuery &query) const override
    {
        return m_inner->backgroundCounter(query);
    }
    [[nodiscard]] std::function<QList<ts::models::EventRow>()>
    backgroundPageFetcher(const ts::models::EventQuery &query, qint64 afterRowId,
                          int limit) const override
    {
        std::function<QList<ts::models::EventRow>()> fetch =
            m_inner->backgroundPageFetcher(query, afterRowId, limit);
        if (!fetch)
            return {};
        return [fetch, gate = m_gate] {
            QList<ts::models::EventRow> page = fetch();
            gate->pass();
            return page;
        };
    }
    [[nodiscard]] QString description() const override { return m_inner->description(); }

private:
    std::shared_ptr<ts::models::EventPageSource> m_inner;
    std::shared_ptr<Gate> m_gate;
};

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
    // A workspace another process is writing: the Events page (here with a search, whose
    // pages come from a worker thread) shows the rows it commits, the last ones too.
    void eventsPageFollowsAnotherProcess();

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

void TestOpenWorkspace::eventsPageFollowsAnotherProcess()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(u"shared.tsws"_qs);
    QVERIFY(makeWorkspace(path));
    ts::app::DashboardOptions options;
    options.files = {path};
    ts::app::DashboardController controller(options);
    controller.start();
    MainWindow *window = shownWindow();
    QVERIFY(window);
    QTRY_VERIFY_WITH_TIMEOUT(windowEvents(window) > 0, 30000);
    const qint64 replayed = windowEvents(window);
    window->showPage(u"events"_qs);
    ts::widgets::EventsPage *page = window->dashboard()->eventsPage();
    ts::models::EventsModel *model = page->model();
    QTRY_VERIFY_WITH_TIMEOUT(model->source() && model->rowCount() > 0, 10000);
    // The page's own source, whose worker can be held after it read a page: a slow search on
    // a large workspace, caught in the act.
    auto gate = std::make_shared<Gate>();
    page->setEventSource(std::make_shared<GatedSource>(model->source(), gate));
    auto release = qScopeGuard([gate] { gate->open(); }); // no worker left waiting
    // A search: its pages come from a worker thread.
    ts::models::EventQuery search;
    search.text = u"/other-process/"_qs;
    page->setFilter(search);
    QSignalSpy fetching(model, &ts::models::EventsModel::fetchingChanged);
    if (model->isFetching())
        QVERIFY(fetching.wait(5000));
    QCOMPARE(model->rowCount(), 0);

    // Another writer (its own connection, as `tail`, `serve` or `import` in another process).
    qint64 sourceId = 0;
    {
        ts::Workspace workspace;
        QVERIFY(workspace.open(path));
        sourceId = workspace.addSource(u"other-process"_qs, u"ndjson"_qs, 0, 0, "other:1");
        QVERIFY(sourceId > 0);
    }
    ts::WorkspaceWriter writer;
    QVERIFY2(writer.start(path), qPrintable(writer.errorString()));
    int committed = 0;
    auto commit = [&](int count) {
        ts::WriteBatch batch;
        batch.sourceId = sourceId;
        for (int i = 0; i < count; ++i, ++committed) {
            ts::RequestEvent event;
            event.tsMs = QDateTime::currentMSecsSinceEpoch();
            event.service = u"graph"_qs;
            event.identity = u"u"_qs;
            event.method = u"GET"_qs;
            event.url = u"https://graph.microsoft.com/v1.0/other-process/%1"_qs.arg(committed);
            event.status = 200;
            batch.events.append(event);
        }
        return writer.submit(std::move(batch)) && writer.flush();
    };
    QSignalSpy applied(window->dashboard(), &ts::widgets::Dashboard::snapshotApplied);
    auto waitForWindowEvents = [&](qint64 events) {
        while (windowEvents(window) != events && applied.wait(5000)) {
        }
        return windowEvents(window) == events;
    };

    // 20 rows: the page looks for them, and its worker has read them when it is held.
    gate->hold();
    QVERIFY(commit(20));
    QVERIFY(waitForWindowEvents(replayed + 20));
    while (!model->isFetching() && fetching.wait(3000)) { // at most a second after the snapshot
    }
    QVERIFY(gate->waitUntilHeld(5000));
    // 30 more while that page is on its way: the page is asked to look again (the operator
    // comes back to it), before the page read without them arrives.
    QVERIFY(commit(30));
    QVERIFY(waitForWindowEvents(replayed + 50));
    window->showPage(u"overview"_qs);
    page->noteNewEvents();
    window->showPage(u"events"_qs);
    QVERIFY(model->isFetching());
    gate->open();
    // Every row shows within a couple of seconds, the last ones too.
    QSignalSpy inserted(model, &QAbstractItemModel::rowsInserted);
    while (model->rowCount() < committed && inserted.wait(2000)) {
    }
    QCOMPARE(model->rowCount(), 50);
    QVERIFY(writer.finish());
}

QTEST_MAIN(TestOpenWorkspace)
#include "tst_openworkspace.moc"
