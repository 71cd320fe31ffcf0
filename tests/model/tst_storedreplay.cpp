// A policy change analyses the session again as one timeline (session/storedreplay.h): what only
// a workspace holds (opened workspaces, live feeds in the scratch workspace) is merged by time
// into the files' re-read, not replayed after them; and a followed workspace's rows are
// replayed up to what its follower handed over, so its next poll counts none of them twice.
#include "engine/analysis.h"
#include "engine/reportformat.h"
#include "ingest/sourcereader.h"
#include "session/analysissession.h"
#include "session/storedreplay.h"
#include "store/importjob.h"
#include "store/workspace.h"
#include "store/workspacewriter.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

using namespace ts;
using namespace Qt::StringLiterals;

namespace {

constexpr qint64 kStartMs = 1771454400000; // 2026-02-18T22:40:00Z

// One NDJSON line: a OneNote page read by one user (the per-minute and per-hour limits see
// every such line), tagged with where it came from.
QByteArray line(qint64 tsMs, const QByteArray &origin)
{
    return "{\"ts\":" + QByteArray::number(tsMs) +
           ",\"identity\":\"user1@contoso.com\",\"app\":\"bridge\",\"service\":\"graph\","
           "\"method\":\"GET\",\"url\":\"https://graph.microsoft.com/v1.0/users/u1/onenote/"
           "pages/1/content\",\"status\":200,\"operationId\":\"" +
           origin + "\"}\n";
}

QString writeLog(const QTemporaryDir &dir, const QString &name, const QList<qint64> &offsetsMs,
                 const QByteArray &origin)
{
    const QString path = dir.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return {};
    for (const qint64 offset : offsetsMs)
        file.write(line(kStartMs + offset, origin));
    return path;
}

// `import --workspace WS LOG` as the CLI does it.
bool importInto(const QString &workspacePath, const QString &log)
{
    Workspace workspace;
    WorkspaceWriter writer;
    if (!workspace.open(workspacePath) || !writer.start(workspacePath))
        return false;
    QFile probe(log);
    if (!probe.open(QIODevice::ReadOnly))
        return false;
    QString error;
    std::unique_ptr<LogReader> reader = readerFor(probe, log, {}, &error);
    probe.close();
    return reader && importFile(workspace, writer, log, *reader).ok() && writer.finish();
}

QList<qint64> offsets(const QString &spec)
{
    QList<qint64> values;
    for (const QString &part : spec.split(u' ', Qt::SkipEmptyParts))
        values.append(part.toLongLong());
    return values;
}

// Collects what the merge hands on: each event's origin, and the runs it came in.
class Recorder final : public IngestSink
{
public:
    QStringList origins;
    int runs = 0;
    void onEvent(RequestEvent &&event) override { origins.append(event.operationId); }
    void onEvents(std::vector<RequestEvent> &&events) override
    {
        ++runs;
        for (const RequestEvent &event : events)
            origins.append(event.operationId);
    }
    void onMalformed(MalformedRecord &&) override {}
};

std::vector<RequestEvent> fileChunk(const QList<qint64> &offsetsMs)
{
    std::vector<RequestEvent> events;
    for (const qint64 offset : offsetsMs) {
        RequestEvent event;
        event.tsMs = kStartMs + offset;
        event.operationId = u"f"_s;
        events.push_back(event);
    }
    return events;
}

QJsonObject reportOf(const ReportData &report)
{
    QJsonObject json = QJsonDocument::fromJson(reportToJson(report)).object();
    return json;
}

// The analysis of every event of these logs in time order (at one instant, in log order).
QJsonObject timelineReport(const QStringList &logs)
{
    std::vector<RequestEvent> all;
    for (const QString &log : logs) {
        QFile file(log);
        if (!file.open(QIODevice::ReadOnly))
            return {};
        QString error;
        std::unique_ptr<LogReader> reader = readerFor(file, log, {}, &error);
        struct Collect final : IngestSink
        {
            std::vector<RequestEvent> *into;
            void onEvent(RequestEvent &&event) override { into->push_back(std::move(event)); }
            void onMalformed(MalformedRecord &&) override {}
        } collect;
        collect.into = &all;
        if (!reader)
            return {};
        reader->read(file, log, collect, {});
    }
    std::stable_sort(all.begin(), all.end(),
                     [](const RequestEvent &a, const RequestEvent &b) { return a.tsMs < b.tsMs; });
    Analysis analysis(PolicySet::builtin());
    for (RequestEvent &event : all)
        analysis.onEvent(std::move(event));
    return reportOf(analysis.report());
}

struct Shown
{
    std::shared_ptr<const DashboardSnapshot> snapshot;
    Shown(AnalysisSession &session, QObject *context)
    {
        QObject::connect(
            &session, &AnalysisSession::snapshotReady, context,
            [this](std::shared_ptr<const DashboardSnapshot> s) { snapshot = std::move(s); });
    }
    qint64 events() const { return snapshot ? snapshot->report.events : -1; }
};

} // namespace

class TestStoredReplay : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void mergeOrder_data()
    {
        QTest::addColumn<QStringList>("fileChunks"); // offsets (ms) per chunk the files hand on
        QTest::addColumn<QStringList>("stores");     // offsets (ms) per store
        QTest::addColumn<QString>("expected");       // origins in the merged order
        QTest::addColumn<int>("runs");               // onEvents calls downstream
        QTest::newRow("no stores: chunks go through whole")
            << QStringList{u"0 10"_s, u"20"_s} << QStringList{} << u"f f f"_s << 2;
        QTest::newRow("stores after every file event: chunks whole, then the stores")
            << QStringList{u"0 10"_s} << QStringList{u"20 30"_s} << u"f f s0 s0"_s << 2;
        QTest::newRow("interleaved")
            << QStringList{u"0 20 40"_s} << QStringList{u"10 30 50"_s} << u"f s0 f s0 f s0"_s << 6;
        QTest::newRow("same instant: the files, then the stores in the order added")
            << QStringList{u"10"_s} << QStringList{u"10"_s, u"10 5"_s} << u"s1 f s0 s1"_s << 3;
        QTest::newRow("two stores by time")
            << QStringList{} << QStringList{u"0 30"_s, u"10 20 40"_s} << u"s0 s1 s1 s0 s1"_s << 1;
        QTest::newRow("a late file line goes on in its place in the file's order")
            << QStringList{u"0 30 5 40"_s} << QStringList{u"20"_s} << u"f s0 f f f"_s << 3;
    }

    void mergeOrder()
    {
        QFETCH(QStringList, fileChunks);
        QFETCH(QStringList, stores);
        QFETCH(QString, expected);
        QFETCH(int, runs);
        QTemporaryDir dir;
        Recorder recorder;
        StoredReplayMerge merge(recorder);
        for (int i = 0; i < stores.size(); ++i) {
            // A store's rows come back in time order whatever order they were written in.
            const QString log = writeLog(dir, u"s%1.ndjson"_s.arg(i), offsets(stores[i]),
                                         "s" + QByteArray::number(i));
            const QString workspace = dir.filePath(u"s%1.tsws"_s.arg(i));
            QVERIFY(importInto(workspace, log));
            auto reader = std::make_unique<WorkspaceReader>();
            QVERIFY(reader->open(workspace));
            auto cursor = reader->timeOrdered();
            QVERIFY(cursor);
            merge.addStore(std::move(reader), std::move(cursor));
        }
        for (const QString &chunk : std::as_const(fileChunks))
            merge.onEvents(fileChunk(offsets(chunk)));
        merge.finish();
        QCOMPARE(recorder.origins.join(u' '), expected);
        QCOMPARE(recorder.runs, runs);
        QVERIFY(merge.errorString().isEmpty());
    }

    // A workspace opened next to a log of the same hours, and a live feed received meanwhile:
    // after a policy change the session shows the analysis of one timeline, as `report` of the
    // logs merged would, not the log's events and then every stored one clamped to its end.
    void policyChangeReplaysOneTimeline()
    {
        QTemporaryDir dir;
        QList<qint64> fileTimes, workspaceTimes, liveTimes;
        for (int i = 0; i < 150; ++i) {
            fileTimes.append(i * 1000);
            workspaceTimes.append(i * 1000 + 300);
            liveTimes.append(i * 1000 + 600);
        }
        const QString log = writeLog(dir, u"client.ndjson"_s, fileTimes, "file");
        const QString stored = writeLog(dir, u"stored.ndjson"_s, workspaceTimes, "workspace");
        const QString live = writeLog(dir, u"live.ndjson"_s, liveTimes, "live");
        const QString workspace = dir.filePath(u"stored.tsws"_s);
        QVERIFY(importInto(workspace, stored));

        AnalysisSession session;
        Shown shown(session, this);
        session.openFiles({log}, SourceOptions{});
        session.openWorkspace(workspace);
        // What a listener feed hands the session, in the order it arrived.
        QList<RequestEvent> liveEvents;
        {
            QFile file(live);
            QVERIFY(file.open(QIODevice::ReadOnly));
            QString error;
            std::unique_ptr<LogReader> reader = readerFor(file, live, {}, &error);
            QVERIFY(reader);
            struct Collect final : IngestSink
            {
                QList<RequestEvent> *into;
                void onEvent(RequestEvent &&event) override { into->append(std::move(event)); }
                void onMalformed(MalformedRecord &&) override {}
            } collect;
            collect.into = &liveEvents;
            reader->read(file, live, collect, {});
        }
        QCOMPARE(liveEvents.size(), 150);
        QCOMPARE(shown.events(), 300);
        session.ingestBatch(liveEvents);
        session.publishIfDirty();
        QCOMPARE(shown.events(), 450);

        session.setPolicies(u"builtin"_s);
        QVERIFY(shown.snapshot);
        QCOMPARE(shown.events(), 450);
        const QJsonObject expected = timelineReport({log, stored, live});
        const QJsonObject replayed = reportOf(shown.snapshot->report);
        QCOMPARE(replayed.value(u"lateEvents"_s).toInteger(), 0);
        // The scopes (peaks, time at limit, throttles predicted) are the timeline's.
        QCOMPARE(replayed.value(u"scopes"_s), expected.value(u"scopes"_s));
    }

    // A policy change while following a workspace another process writes: the rows committed
    // since the follower's last poll come with its next poll, not with the replay and again.
    void policyChangeLeavesFollowedRowsToThePoll()
    {
        QTemporaryDir dir;
        QList<qint64> first, later;
        for (int i = 0; i < 10; ++i)
            first.append(i * 1000);
        for (int i = 10; i < 15; ++i)
            later.append(i * 1000);
        const QString workspace = dir.filePath(u"followed.tsws"_s);
        QVERIFY(importInto(workspace, writeLog(dir, u"a.ndjson"_s, first, "a")));

        AnalysisSession session;
        Shown shown(session, this);
        session.openWorkspace(workspace);
        QCOMPARE(shown.events(), 10);
        // Another writer commits five more; the session has not polled yet.
        QVERIFY(importInto(workspace, writeLog(dir, u"b.ndjson"_s, later, "b")));
        session.setPolicies(u"builtin"_s);
        QCOMPARE(shown.events(), 10);
        // The follower's poll (every 250 ms) brings the five, once.
        QTRY_COMPARE_WITH_TIMEOUT((session.publishIfDirty(), shown.events()), 15, 5000);
        QTest::qWait(600); // more polls: nothing more
        session.publishIfDirty();
        QCOMPARE(shown.events(), 15);
    }
};

QTEST_GUILESS_MAIN(TestStoredReplay)
#include "tst_storedreplay.moc"
