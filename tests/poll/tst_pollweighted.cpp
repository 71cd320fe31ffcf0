// Weighted charges (RequestEvent::weight, issue 21.4): push-down hands the engine one event per
// (second, group) that stands for the group's count. Checked here without a store, on rows made
// like a store's and grouped as the push-down query groups them:
//   - the weighted events give the very report (report JSON, byte for byte, but for the
//     breakers' fill-driven transitions) that the same events expanded into single requests
//     give, on every algorithm: in one step where that is exact, one request at a time where
//     order matters;
//   - against the rows themselves (their own milliseconds): every count exact, clock-aligned
//     fixed windows and credit windows exact, the rest within the bound of poll/pushdown.h;
//   - the workspace keeps the weight (schema 5, migrated from 4) and the canonical NDJSON
//     reads and writes it.
#include "../model/sqltestutil.h"
#include "engine/analysis.h"
#include "engine/reportdata.h"
#include "engine/reportformat.h"
#include "ingest/ndjsonreader.h"
#include "live/ndjsonformat.h"
#include "policy/policy.h"
#include "poll/pushdown.h"
#include "store/workspace.h"
#include "store/workspacereader.h"
#include "store/workspacewriter.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <tuple>

using namespace ts;

namespace {

constexpr qint64 kBaseMs = 1771454400000; // 2026-02-18T22:40:00Z, a whole minute

struct Traffic
{
    int seconds = 120;
    int perSecond = 12;     // rows per second and identity (varies by +-50 %)
    int throttleEvery = 0;  // 1 row in N is a 429 (0: none)
    int failureEvery = 0;   // 1 row in N is a 500
    int noStatusEvery = 0;  // 1 row in N has no status
    bool credits = false;   // rows carry credits 1..3
    bool durations = false; // rows carry a duration (concurrency)
};

// Rows of three identities over two apps, each at its own millisecond.
QList<RequestEvent> makeRows(const Traffic &traffic)
{
    QList<RequestEvent> rows;
    quint32 seed = 11;
    auto next = [&seed] { return seed = seed * 1664525u + 1013904223u; };
    int n = 0;
    for (int second = 0; second < traffic.seconds; ++second) {
        for (int who = 0; who < 3; ++who) {
            const int count = traffic.perSecond / 2 + int(next() % quint32(traffic.perSecond + 1));
            for (int i = 0; i < count; ++i, ++n) {
                RequestEvent event;
                event.tsMs = kBaseMs + second * 1000 + (next() >> 8) % 1000;
                event.service = u"wt"_qs;
                event.identity = u"u"_qs + QString::number(who);
                event.app = u"a"_qs + QString::number(who % 2);
                event.method = u"GET"_qs;
                event.url = u"https://wt.example/v1/items"_qs;
                event.status = 200;
                if (traffic.throttleEvery > 0 && n % traffic.throttleEvery == 0) {
                    event.status = 429;
                    event.errorCode = u"TooManyRequests"_qs;
                } else if (traffic.failureEvery > 0 && n % traffic.failureEvery == 0) {
                    event.status = 500;
                } else if (traffic.noStatusEvery > 0 && n % traffic.noStatusEvery == 0) {
                    event.status = 0;
                }
                if (traffic.credits)
                    event.credits = 1 + next() % 3;
                if (traffic.durations)
                    event.durationMs = 900; // every group of a second overlaps the next
                event.secretsMasked = true;
                rows.append(event);
            }
        }
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const RequestEvent &a, const RequestEvent &b) { return a.tsMs < b.tsMs; });
    return rows;
}

// What the push-down query returns for the rows: per second and group, ordered by second.
QList<poll::AggregateRow> aggregate(const QList<RequestEvent> &rows, bool credits)
{
    using Key = std::tuple<qint64, QString, QString, int, QString>;
    QMap<Key, poll::AggregateRow> groups;
    for (const RequestEvent &row : rows) {
        const qint64 second = row.tsMs / 1000 * 1000;
        poll::AggregateRow &group =
            groups[{second, row.identity, row.app, row.status, row.errorCode}];
        if (group.count == 0) {
            group.secondMs = second;
            group.service = row.service;
            group.identity = row.identity;
            group.app = row.app;
            group.method = row.method;
            group.url = row.url;
            group.status = row.status;
            group.errorCode = row.errorCode;
            group.credits = credits ? 0 : -1;
        }
        ++group.count;
        if (credits)
            group.credits += row.credits;
    }
    return groups.values();
}

std::vector<RequestEvent> weightedEvents(const QList<poll::AggregateRow> &aggregates)
{
    std::vector<RequestEvent> events;
    poll::chargesFromAggregates(
        aggregates, u"store"_qs,
        [&](std::vector<RequestEvent> &&chunk) {
            std::move(chunk.begin(), chunk.end(), std::back_inserter(events));
        },
        100);
    return events;
}

std::vector<RequestEvent> expanded(const std::vector<RequestEvent> &weighted)
{
    std::vector<RequestEvent> units;
    for (const RequestEvent &event : weighted) {
        RequestEvent unit = event;
        unit.weight = 1;
        for (qint64 i = 0; i < event.weight; ++i)
            units.push_back(unit);
    }
    return units;
}

ReportData analyse(const PolicySet &policies, std::vector<RequestEvent> events,
                   Analysis::Purpose purpose = Analysis::Purpose::Dashboard)
{
    Analysis analysis(policies, purpose);
    analysis.onEvents(std::move(events));
    return analysis.report();
}

PolicySet policyWith(const QByteArray &limit)
{
    QString error;
    const auto policy = Policy::fromJsonBytes(
        R"({"name": "wt", "match": {"service": "^wt$"}, "limits": [)" + limit + "]}", u"wt"_qs,
        &error);
    if (!policy)
        qFatal("policy: %s", qPrintable(error));
    PolicySet set;
    set.add(*policy);
    return set;
}

bool writeEvents(const QString &path, const QList<RequestEvent> &events)
{
    Workspace workspace;
    if (!workspace.open(path))
        return false;
    const qint64 sourceId =
        workspace.addSource(u"store"_qs, u"ndjson"_qs, 0, 0, QByteArray("weighted"));
    WorkspaceWriter writer;
    if (!writer.start(path))
        return false;
    WriteBatch batch;
    batch.sourceId = sourceId;
    batch.events = events;
    return writer.submit(std::move(batch)) && writer.finish();
}

QList<RequestEvent> readEvents(const QString &path)
{
    QList<RequestEvent> events;
    WorkspaceReader reader;
    if (!reader.open(path))
        return events;
    reader.forEachEventInTimeOrder(1000, [&](const QList<RequestEvent> &chunk) {
        events += chunk;
        return true;
    });
    return events;
}

} // namespace

class TestPollWeighted : public QObject
{
    Q_OBJECT

private slots:
    void weightedMatchesExpanded_data()
    {
        QTest::addColumn<QByteArray>("limit");
        QTest::addColumn<int>("perSecond");
        QTest::addColumn<int>("throttleEvery");
        QTest::addColumn<int>("failureEvery");
        QTest::addColumn<int>("noStatusEvery");
        QTest::addColumn<bool>("credits");
        // Against the rows: exact (fixed windows and credits on whole seconds), or the most
        // the peak usage may differ by (pushdown.h: a second of the key's traffic).
        QTest::addColumn<bool>("exactVsRows");

        const QByteArray fixed = R"({"name": "w", "key": "identity", "algorithm": "fixed-window",
            "capacity": 400, "windowSeconds": 10, "align": "clock"})";
        QTest::newRow("fixed window") << fixed << 12 << 0 << 0 << 0 << false << true;
        QTest::newRow("fixed window, filled within a second")
            << QByteArray(R"({"name": "w", "key": "identity", "algorithm": "fixed-window",
                 "capacity": 60, "windowSeconds": 10, "align": "clock"})")
            << 12 << 0 << 0 << 0 << false << true;
        QTest::newRow("fixed window, failures and 429s")
            << fixed << 40 << 13 << 7 << 0 << false << false;
        QTest::newRow("credits") << QByteArray(
                                        R"({"name": "w", "key": "app", "algorithm": "credits",
                 "capacity": 200, "windowSeconds": 1, "align": "clock"})")
                                 << 12 << 0 << 0 << 0 << true << true;
        QTest::newRow("credits, filled within a second")
            << QByteArray(R"({"name": "w", "key": "app", "algorithm": "credits",
                 "capacity": 30, "windowSeconds": 1, "align": "clock"})")
            << 12 << 0 << 0 << 0 << true << true;
        QTest::newRow("token bucket")
            << QByteArray(R"({"name": "w", "key": "app", "algorithm": "token-bucket",
                 "capacity": 60, "refillPerSecond": 20})")
            << 12 << 0 << 0 << 0 << false << false;
        QTest::newRow("sliding window")
            << QByteArray(R"({"name": "w", "key": "identity", "algorithm": "sliding-window",
                 "capacity": 150, "windowSeconds": 10})")
            << 12 << 0 << 0 << 0 << false << false;
        QTest::newRow("sliding window of an hour (slotted)")
            << QByteArray(R"({"name": "w", "key": "identity", "algorithm": "sliding-window",
                 "capacity": 3000, "windowSeconds": 3600})")
            << 12 << 0 << 0 << 0 << false << false;
        QTest::newRow("leaky bucket")
            << QByteArray(R"({"name": "w", "key": "identity", "algorithm": "leaky-bucket",
                 "rate": "10r/s", "burst": 5})")
            << 12 << 0 << 0 << 0 << false << false;
        QTest::newRow("concurrency")
            << QByteArray(R"({"name": "w", "key": "identity", "algorithm": "concurrency",
                 "capacity": 8})")
            << 12 << 0 << 0 << 0 << false << false;
        QTest::newRow("no status")
            << QByteArray(R"({"name": "w", "key": "identity", "algorithm": "fixed-window",
                 "capacity": 50, "windowSeconds": 5, "align": "clock"})")
            << 12 << 0 << 0 << 5 << false << false;
        QTest::newRow("three limits, near-limit alerts, 429s")
            << QByteArray(R"({"name": "w", "key": "identity", "algorithm": "fixed-window",
                 "capacity": 100, "windowSeconds": 10, "align": "clock"},
                 {"name": "t", "key": "app", "algorithm": "token-bucket", "capacity": 80,
                  "refillPerSecond": 15},
                 {"name": "s", "key": "identity", "algorithm": "sliding-window",
                  "capacity": 90, "windowSeconds": 5})")
            << 16 << 29 << 0 << 0 << false << false;
    }

    void weightedMatchesExpanded()
    {
        QFETCH(QByteArray, limit);
        QFETCH(int, perSecond);
        QFETCH(int, throttleEvery);
        QFETCH(int, failureEvery);
        QFETCH(int, noStatusEvery);
        QFETCH(bool, credits);
        QFETCH(bool, exactVsRows);
        Traffic traffic;
        traffic.perSecond = perSecond;
        traffic.throttleEvery = throttleEvery;
        traffic.failureEvery = failureEvery;
        traffic.noStatusEvery = noStatusEvery;
        traffic.credits = credits;
        traffic.durations = limit.contains("concurrency");
        const PolicySet policies = policyWith(limit);
        const QList<RequestEvent> rows = makeRows(traffic);
        const std::vector<RequestEvent> weighted = weightedEvents(aggregate(rows, credits));
        QVERIFY(weighted.size() * 3 < size_t(rows.size())); // the groups fold rows
        const ReportData byWeight = analyse(policies, weighted);
        const ReportData byUnit = analyse(policies, expanded(weighted));
        // The very report, both on the inline path (few weighted events) and the batch path
        // (thousands of single ones), plot data included where the JSON shows it.
        // The breakers get the event's fill (after all of its requests) with each of its n
        // samples, where the single requests carry their own rising fills: a breaker may turn
        // soft-open from the fill a few samples earlier (pushdown.h). Their counts are exact.
        QCOMPARE(byWeight.breakers.size(), byUnit.breakers.size());
        for (qsizetype i = 0; i < byUnit.breakers.size(); ++i) {
            QCOMPARE(byWeight.breakers.at(i).scope, byUnit.breakers.at(i).scope);
            QCOMPARE(byWeight.breakers.at(i).requests, byUnit.breakers.at(i).requests);
            QCOMPARE(byWeight.breakers.at(i).failures, byUnit.breakers.at(i).failures);
        }
        ReportData weightRest = byWeight;
        ReportData unitRest = byUnit;
        weightRest.breakers.clear();
        weightRest.breakerTransitions.clear();
        unitRest.breakers.clear();
        unitRest.breakerTransitions.clear();
        const QByteArray weightJson = reportToJson(weightRest);
        const QByteArray unitJson = reportToJson(unitRest);
        if (weightJson != unitJson && qEnvironmentVariableIsSet("TS_DUMP")) {
            QFile a(u"/tmp/weight.json"_qs), b(u"/tmp/unit.json"_qs);
            if (a.open(QIODevice::WriteOnly) && b.open(QIODevice::WriteOnly)) {
                a.write(weightJson);
                b.write(unitJson);
            }
        }
        QCOMPARE(QString::fromUtf8(weightJson), QString::fromUtf8(unitJson));
        QCOMPARE(byWeight.events, qint64(rows.size()));

        // Against the rows, each at its own millisecond.
        const ReportData byRow =
            analyse(policies, std::vector<RequestEvent>(rows.cbegin(), rows.cend()));
        QCOMPARE(byWeight.events, byRow.events);
        QCOMPARE(byWeight.byStatus, byRow.byStatus);
        QCOMPARE(byWeight.throttles.total, byRow.throttles.total);
        QCOMPARE(byWeight.throttles.byErrorCode, byRow.throttles.byErrorCode);
        QCOMPARE(byWeight.throttles.byIdentityAndErrorCode, byRow.throttles.byIdentityAndErrorCode);
        QCOMPARE(byWeight.scopes.size(), byRow.scopes.size());
        // The most one second of one key's traffic can charge: 1.5 x perSecond rows from each
        // of up to two identities (app keys), each up to 3 credits.
        const double secondOfTraffic = 2 * (perSecond * 3 / 2 + 1) * (credits ? 3 : 1);
        for (const ScopeSummary &row : byRow.scopes) {
            const auto it = std::find_if(
                byWeight.scopes.cbegin(), byWeight.scopes.cend(),
                [&](const ScopeSummary &s) { return s.limit == row.limit && s.key == row.key; });
            QVERIFY(it != byWeight.scopes.cend());
            QCOMPARE(it->requests, row.requests);
            if (exactVsRows) {
                QCOMPARE(it->peakUsage, row.peakUsage);
            } else if (!limit.contains("concurrency") && !limit.contains("leaky")) {
                QVERIFY2(std::abs(it->peakUsage - row.peakUsage) <= secondOfTraffic,
                         qPrintable(u"%1 %2: %3 vs %4"_qs.arg(row.limit, row.key)
                                        .arg(it->peakUsage)
                                        .arg(row.peakUsage)));
            }
        }
    }

    // A version 4 workspace gains events.weight (NULL: 1); weighted rows keep their weight,
    // and a report from the workspace is the report from the events.
    void workspaceKeepsWeight()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"w.tsws"_qs);
        Traffic traffic;
        traffic.seconds = 20;
        const QList<RequestEvent> rows = makeRows(traffic);
        QVERIFY(writeEvents(path, rows.mid(0, 10)));
        QCOMPARE(testutil::sqlScalar(path, u"PRAGMA user_version"_qs).toInt(), kWorkspaceSchemaVersion);
        QCOMPARE(kWorkspaceSchemaVersion, 6);
        // What version 4 wrote (version 6 added events.refused, 5 events.weight).
        testutil::sqlScalar(path, u"ALTER TABLE events DROP COLUMN refused"_qs);
        testutil::sqlScalar(path, u"ALTER TABLE events DROP COLUMN weight"_qs);
        testutil::sqlScalar(path, u"PRAGMA user_version = 4"_qs);
        QCOMPARE(testutil::sqlScalar(path, u"SELECT count(*) FROM pragma_table_info('events') WHERE name = "
                              u"'weight'"_qs)
                     .toInt(),
                 0);

        const std::vector<RequestEvent> weighted = weightedEvents(aggregate(rows.mid(10), false));
        QVERIFY(writeEvents(path, QList<RequestEvent>(weighted.cbegin(), weighted.cend())));
        QCOMPARE(testutil::sqlScalar(path, u"PRAGMA user_version"_qs).toInt(), kWorkspaceSchemaVersion);
        QCOMPARE(testutil::sqlScalar(path, u"SELECT count(*) FROM events WHERE weight IS NULL"_qs).toInt(),
                 10 + int(std::count_if(weighted.cbegin(), weighted.cend(),
                                        [](const RequestEvent &e) { return e.weight == 1; })));
        QCOMPARE(testutil::sqlScalar(path, u"SELECT sum(coalesce(weight, 1)) FROM events"_qs).toLongLong(),
                 qint64(rows.size()));

        const QList<RequestEvent> back = readEvents(path);
        qint64 requests = 0;
        for (const RequestEvent &event : back)
            requests += event.weight;
        QCOMPARE(requests, qint64(rows.size()));
        std::vector<RequestEvent> direct(rows.cbegin(), rows.cbegin() + 10);
        direct.insert(direct.end(), weighted.cbegin(), weighted.cend());
        std::stable_sort(direct.begin(), direct.end(),
                         [](const auto &a, const auto &b) { return a.tsMs < b.tsMs; });
        const PolicySet policies = PolicySet::builtin();
        QCOMPARE(analyse(policies, std::vector<RequestEvent>(back.cbegin(), back.cend())).events,
                 analyse(policies, direct).events);
    }

    void ndjsonWeight_data()
    {
        QTest::addColumn<QByteArray>("weight");
        QTest::addColumn<qint64>("expected"); // 0: malformed
        QTest::newRow("absent") << QByteArray() << qint64(1);
        QTest::newRow("one") << QByteArray("1") << qint64(1);
        QTest::newRow("a count") << QByteArray("1250") << qint64(1250);
        QTest::newRow("null") << QByteArray("null") << qint64(1);
        QTest::newRow("zero") << QByteArray("0") << qint64(0);
        QTest::newRow("fraction") << QByteArray("2.5") << qint64(0);
        QTest::newRow("negative") << QByteArray("-3") << qint64(0);
        QTest::newRow("too large") << QByteArray("1e12") << qint64(0);
        QTest::newRow("a number as text") << QByteArray("\"7\"") << qint64(7);
        QTest::newRow("text") << QByteArray("\"seven\"") << qint64(0);
    }

    // The canonical log's optional "weight" (docs/request-log.md), read and written back.
    void ndjsonWeight()
    {
        QFETCH(QByteArray, weight);
        QFETCH(qint64, expected);
        QByteArray line = R"({"ts":1771454400000,"service":"wt","identity":"u1","status":200)";
        if (!weight.isEmpty())
            line += ",\"weight\":" + weight;
        line += '}';
        NdjsonReader reader;
        RequestEvent event;
        QString reason;
        const bool ok = reader.parseLine(line.constData(), line.size(), event, &reason);
        if (expected == 0) {
            QVERIFY(!ok);
            QVERIFY2(reason.contains(u"weight"), qPrintable(reason));
            return;
        }
        QVERIFY2(ok, qPrintable(reason));
        QCOMPARE(event.weight, expected);
        const QByteArray written = live::toNdjsonLine(event);
        QCOMPARE(written.contains("\"weight\""), expected > 1);
        RequestEvent again;
        QVERIFY(reader.parseLine(written.constData(), written.size(), again, &reason));
        QCOMPARE(again.weight, expected);
    }
};

QTEST_GUILESS_MAIN(TestPollWeighted)
#include "tst_pollweighted.moc"
