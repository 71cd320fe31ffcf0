// The dashboard's polled sources (File > Add Source, issue 21.2/21.3): rows and cursor stored
// together wherever the session keeps its data, saved with the session, and resumed from the
// stored cursor when the workspace is opened again, without losing or doubling a row. The
// feed, the session and a loopback NDJSON endpoint run on the test's thread (the session's
// slots are called where it lives, as the controller's queued connections would).
#include "fakestore.h"

#include "poll/pollfeed.h"
#include "session/analysissession.h"
#include "store/workspace.h"
#include "store/workspacereader.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUrlQuery>

#include <map>
#include <memory>

using namespace ts;

namespace {

constexpr qint64 kBaseMs = 1771454400000; // 2026-02-18T22:40:00Z

// An NDJSON endpoint answering "rows with ts >= after", at most 300 per answer.
struct NdjsonStore
{
    std::multimap<qint64, QByteArray> rows;
    testfake::Server server{[this](const testfake::Request &request) {
        const QUrlQuery query(QUrl(QString::fromLatin1(request.target)));
        const qint64 after = query.queryItemValue(u"after"_qs).toLongLong();
        QByteArray body;
        int n = 0;
        for (auto it = rows.lower_bound(after); it != rows.end() && n < 300; ++it, ++n)
            body += it->second + '\n';
        return testfake::Response{200, body, "application/x-ndjson"};
    }};

    void add(int from, int to)
    {
        // Four rows per timestamp: ties at every page boundary and at the cursor.
        for (int i = from; i < to; ++i) {
            const qint64 ts = kBaseMs + (i / 4) * 250;
            rows.insert({ts, "{\"ts\":" + QByteArray::number(ts) +
                                 ",\"service\":\"graph\",\"identity\":\"user-" +
                                 QByteArray::number(i % 3) +
                                 "\",\"status\":200,\"operationId\":\"op-" + QByteArray::number(i) +
                                 "\"}"});
        }
    }
    [[nodiscard]] QString url() const
    {
        return u"http://127.0.0.1:%1/rows?after={cursor}&format=ndjson"_qs.arg(server.port());
    }
};

qint64 eventsOf(const QString &workspacePath)
{
    WorkspaceReader reader;
    if (!reader.open(workspacePath))
        return -1;
    return reader.countEvents();
}

qint64 distinctOperations(const QString &workspacePath)
{
    WorkspaceReader reader;
    if (!reader.open(workspacePath))
        return -1;
    QSet<QString> operations;
    reader.forEachEventInTimeOrder(4096, [&](const QList<RequestEvent> &chunk) {
        for (const RequestEvent &event : chunk)
            operations.insert(event.operationId);
        return true;
    });
    return operations.size();
}

// The events the session's latest snapshot counts.
struct SnapshotWatch
{
    explicit SnapshotWatch(AnalysisSession &session)
    {
        QObject::connect(&session, &AnalysisSession::snapshotReady, &context,
                         [this](const std::shared_ptr<const DashboardSnapshot> &snapshot) {
                             events = snapshot->report.events;
                         });
    }
    QObject context;
    qint64 events = -1;
};

std::unique_ptr<poll::PollFeed> feedFor(const QString &url, AnalysisSession &session)
{
    QString error;
    const std::optional<poll::PollSource> source = poll::PollSource::parse(url, &error);
    if (!source)
        return nullptr;
    auto feed = std::make_unique<poll::PollFeed>(*source, 3600);
    QObject::connect(feed.get(), &poll::PollFeed::rowsPolled, &session,
                     &AnalysisSession::ingestPolled);
    return feed;
}

} // namespace

class TestPollSession : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Polled into an unsaved session, saved, polled on, then "restarted": the workspace opened
    // in a new session resumes from its stored cursor; the workspace and the dashboard hold
    // every row exactly once.
    void savedSessionResumesFromStoredCursor()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString saved = dir.filePath(u"session.tsw"_qs);
        NdjsonStore store;
        store.add(0, 2000);

        {
            AnalysisSession session;
            SnapshotWatch watch(session);
            std::unique_ptr<poll::PollFeed> feed = feedFor(store.url(), session);
            QVERIFY(feed);
            feed->start(); // polls now; the next poll is asked for below
            session.publishIfDirty();
            QCOMPARE(watch.events, 2000);

            QSignalSpy finished(&session, &AnalysisSession::operationFinished);
            session.saveWorkspace(saved);
            QVERIFY(!finished.isEmpty());
            QVERIFY2(finished.constLast().at(0).toBool(),
                     qPrintable(finished.constLast().at(1).toString()));
            QCOMPARE(eventsOf(saved), 2000);

            // Saved: what is polled from now on is stored in the saved workspace too.
            store.add(2000, 2300);
            feed->pollNow();
            session.publishIfDirty();
            QCOMPARE(watch.events, 2300);
            feed->requestStop();
        } // the session's writer commits what is queued as it goes

        QCOMPARE(eventsOf(saved), 2300);
        QCOMPARE(distinctOperations(saved), 2300);
        {
            Workspace workspace;
            QVERIFY(workspace.open(saved));
            const auto polled = workspace.polledSources();
            QVERIFY(polled);
            QCOMPARE(polled->size(), 1);
            QCOMPARE(polled->constFirst().source.path, store.url());
            QVERIFY(!polled->constFirst().cursorState.isEmpty());
        }

        // The restart: rows written meanwhile, some tied with the stored cursor's newest.
        store.add(2300, 2500);
        AnalysisSession session;
        SnapshotWatch watch(session);
        QSignalSpy stored(&session, &AnalysisSession::pollSourcesStored);
        session.openWorkspace(saved);
        QCOMPARE(stored.size(), 1);
        const auto sources = stored.constFirst().at(0).value<QList<StoredPollSource>>();
        QCOMPARE(sources.size(), 1);
        QCOMPARE(sources.constFirst().url, store.url());
        QCOMPARE(watch.events, 2300);

        std::unique_ptr<poll::PollFeed> feed = feedFor(store.url(), session);
        QVERIFY(feed->resumeFrom(sources.constFirst().cursorState, sources.constFirst().rows));
        const qsizetype requestsBefore = store.server.requests.size();
        feed->start();
        // Resumed near the cursor, not from the beginning of the store.
        const QUrlQuery first(
            QUrl(QString::fromLatin1(store.server.requests.at(requestsBefore).target)));
        QVERIFY(first.queryItemValue(u"after"_qs).toLongLong() > kBaseMs);
        // Rows are stored in the opened workspace and counted once its follower sees them.
        QTRY_COMPARE_WITH_TIMEOUT(
            [&] {
                session.publishIfDirty();
                return watch.events;
            }(),
            2500, 10000);
        feed->requestStop();
        feed.reset();
        session.newSession(); // commits and closes the session's writer
        QCOMPARE(eventsOf(saved), 2500);
        QCOMPARE(distinctOperations(saved), 2500);
    }

    // Not saved: the rows reach the dashboard and the scratch workspace (with the cursor), and
    // New Session forgets them.
    void unsavedSessionKeepsRowsInScratch()
    {
        NdjsonStore store;
        store.add(0, 700);
        AnalysisSession session;
        SnapshotWatch watch(session);
        QSignalSpy ready(&session, &AnalysisSession::workspaceReady);
        std::unique_ptr<poll::PollFeed> feed = feedFor(store.url(), session);
        feed->start();
        session.publishIfDirty();
        QCOMPARE(watch.events, 700);
        QVERIFY(!ready.isEmpty());
        const QString scratch = ready.constLast().at(0).toString();
        QTRY_COMPARE(eventsOf(scratch), 700);
        Workspace workspace;
        QVERIFY(workspace.open(scratch));
        const auto polled = workspace.polledSources();
        QVERIFY(polled && polled->size() == 1);
        QVERIFY(!polled->constFirst().cursorState.isEmpty());
        workspace.close();
        feed->requestStop();
        session.newSession();
        session.publishIfDirty();
        QCOMPARE(watch.events, 0);
    }
};

QTEST_GUILESS_MAIN(TestPollSession)
#include "tst_pollsession.moc"
