// One truth per instant (issue 19.6): the report (the engine's summary at an instant), the
// Bucket chart (the usage series it plots, looked up by models::usageAt), the fill grid
// (BucketGridModel, live and at a replay instant), the event detail (models::bucketsAtText's
// buckets of the event's key) and snapshotmath's displayed usage agree on every bucket's usage
// at every instant a scenario is walked through: the engine fed what had happened by then (a
// live session) against the whole log replayed to that instant.
//
// One row per algorithm: between events a fixed window ends, charges leave a sliding window,
// requests in flight end, a token bucket refills and a leaky bucket drains, each at its own
// instant, not at the end of a chart bin. The walk goes every 97 ms (never on a bin boundary
// for long) and at every event's instant and the ms after it. A row whose log starts while the
// bucket is drained has the service's corrections on the way. Step algorithms agree exactly;
// the lines of token and leaky buckets to within rounding (a leaky bucket counts in nginx's
// integer milli-requests, so to within 0.001 of a request).

#include "engine/throttleengine.h"
#include "models/bucketgridmodel.h"
#include "models/snapshotmath.h"
#include "policy/policy.h"

#include <QAbstractItemModelTester>
#include <QRandomGenerator>
#include <QTest>

#include <cmath>
#include <memory>

using namespace ts;

namespace {

// 2026-02-18T22:44:00Z, a minute boundary.
constexpr qint64 kBase = 1771454640000;

RequestEvent fabric(qint64 tsMs, const QString &identity, int status)
{
    RequestEvent e;
    e.service = QStringLiteral("fabric");
    e.identity = identity;
    e.url = QStringLiteral("https://api.fabric.microsoft.com/v1/workspaces");
    e.method = QStringLiteral("GET");
    e.tsMs = tsMs;
    e.status = status;
    if (status == 429)
        e.errorCode = QStringLiteral("RequestBlocked");
    return e;
}

void sortByTime(std::vector<RequestEvent> &events)
{
    std::stable_sort(events.begin(), events.end(),
                     [](const RequestEvent &a, const RequestEvent &b) { return a.tsMs < b.tsMs; });
}

// Fabric (fixed 60 s windows): alpha 10/s from 5 s to 21 s (160 of 200), silent, then 10/s
// from 130 s to 160 s (300: the last 100 refused), then silent while bravo goes on; bravo: one
// every 2 s from 1 s to 240 s.
std::vector<RequestEvent> fabricScenario()
{
    std::vector<RequestEvent> events;
    for (qint64 ms = 1000; ms <= 240000; ms += 2000)
        events.push_back(fabric(kBase + ms, QStringLiteral("bravo"), 200));
    for (qint64 ms = 5000; ms < 21000; ms += 100)
        events.push_back(fabric(kBase + ms, QStringLiteral("alpha"), 200));
    int sent = 0;
    for (qint64 ms = 130000; ms < 160000; ms += 100)
        events.push_back(fabric(kBase + ms, QStringLiteral("alpha"), ++sent > 200 ? 429 : 200));
    sortByTime(events);
    return events;
}

// Two callers on a "sim" service over about three minutes: bursts (gaps of a few ms to 60 ms)
// and pauses (up to 12 s), requests lasting 50 ms to 4 s. drainedStart: alpha's first 15
// answers are 429s, as from a bucket drained before the log began (the service corrects it).
std::vector<RequestEvent> simScenario(quint32 seed, bool drainedStart)
{
    QRandomGenerator rng(seed);
    std::vector<RequestEvent> events;
    for (const QString &who : {QStringLiteral("alpha"), QStringLiteral("bravo")}) {
        qint64 t = kBase + qint64(rng.bounded(2000u));
        int sent = 0;
        while (t < kBase + 180000) {
            RequestEvent e;
            e.service = QStringLiteral("sim");
            e.identity = who;
            e.url = QStringLiteral("https://sim.example/v1/items");
            e.method = QStringLiteral("GET");
            e.tsMs = t;
            e.durationMs = double(50 + rng.bounded(4000u));
            e.status = drainedStart && who == u"alpha" && sent < 15 ? 429 : 200;
            ++sent;
            events.push_back(e);
            t += rng.bounded(100u) < 85 ? qint64(rng.bounded(60u)) : qint64(rng.bounded(12000u));
        }
    }
    sortByTime(events);
    return events;
}

PolicySet simPolicy(const QByteArray &limitJson)
{
    const QByteArray json =
        R"({"name":"sim","match":{"service":"^sim$"},"limits":[)" + limitJson + "]}";
    QString error;
    const auto policy = Policy::fromJsonBytes(json, QStringLiteral("sim"), &error);
    if (!policy)
        qFatal("policy: %s", qPrintable(error));
    PolicySet set;
    set.add(*policy);
    return set;
}

double gridUsage(const models::BucketGridModel &grid, int scopeIndex)
{
    for (int row = 0; row < grid.rowCount(); ++row) {
        for (int column = 1; column < grid.columnCount(); ++column) {
            if (grid.scopeIndexAt(row, column) == scopeIndex)
                return grid.index(row, column).data(models::BucketGridModel::UsageRole).toDouble();
        }
    }
    return -1;
}

} // namespace

class TestOneTruth : public QObject
{
    Q_OBJECT

private slots:
    void everyViewAgreesAtEveryInstant_data();
    void everyViewAgreesAtEveryInstant();
    void pastTheBudgetPeaksThenExact_data();
    void pastTheBudgetPeaksThenExact();
};

void TestOneTruth::everyViewAgreesAtEveryInstant_data()
{
    QTest::addColumn<bool>("fabricLog");
    QTest::addColumn<QByteArray>("limitJson");
    QTest::addColumn<bool>("drainedStart");
    QTest::addColumn<double>("tolerance");

    QTest::newRow("fixed-window") << true << QByteArray() << false << 0.0;
    QTest::newRow("sliding-window")
        << false
        << QByteArray(
               R"({"name":"l","key":"identity","algorithm":"sliding-window","capacity":40,"windowSeconds":10})")
        << false << 0.0;
    QTest::newRow("concurrency")
        << false
        << QByteArray(R"({"name":"l","key":"identity","algorithm":"concurrency","capacity":6})")
        << false << 0.0;
    QTest::newRow("token-bucket")
        << false
        << QByteArray(
               R"({"name":"l","key":"identity","algorithm":"token-bucket","capacity":30,"refillPerSecond":4.5})")
        << false << 1e-6;
    QTest::newRow("leaky-bucket")
        << false
        << QByteArray(
               R"({"name":"l","key":"identity","algorithm":"leaky-bucket","rate":"7r/s","burst":12})")
        << false << 1e-3 + 1e-9;
    QTest::newRow("token-bucket started drained, corrected")
        << false
        << QByteArray(
               R"({"name":"l","key":"identity","algorithm":"token-bucket","capacity":30,"refillPerSecond":2})")
        << true << 1e-6;
}

void TestOneTruth::everyViewAgreesAtEveryInstant()
{
    QFETCH(bool, fabricLog);
    QFETCH(QByteArray, limitJson);
    QFETCH(bool, drainedStart);
    QFETCH(double, tolerance);

    PolicySet policies;
    if (fabricLog)
        policies.add(*PolicySet::builtinPolicy(QStringLiteral("fabric")));
    else
        policies = simPolicy(limitJson);
    const std::vector<RequestEvent> events =
        fabricLog ? fabricScenario() : simScenario(19, drainedStart);

    ThrottleEngine whole(policies);
    whole.addBatch(std::span<const RequestEvent>(events.data(), events.size()));
    auto final = std::make_shared<DashboardSnapshot>();
    whole.fillSnapshot(final.get());
    QCOMPARE(final->report.scopes.size(), 2);
    if (drainedStart) {
        qint64 corrections = 0;
        for (const ScopeSummary &scope : std::as_const(final->report.scopes))
            corrections += scope.corrections;
        QVERIFY(corrections > 0);
    }
    // Every point fits the budget: the series is exact throughout.
    for (const ScopeSeries &series : final->series)
        QCOMPARE(series.firstExact, size_t(0));

    // The instants: every 97 ms, every event's instant and the ms after it.
    std::vector<qint64> instants;
    for (qint64 t = events.front().tsMs; t <= *final->report.lastMs; t += 97)
        instants.push_back(t);
    for (const RequestEvent &e : events) {
        instants.push_back(e.tsMs);
        instants.push_back(std::min(e.tsMs + 1, *final->report.lastMs));
    }
    std::sort(instants.begin(), instants.end());
    instants.erase(std::unique(instants.begin(), instants.end()), instants.end());

    models::BucketGridModel replayGrid;
    QAbstractItemModelTester replayTester(&replayGrid);
    replayGrid.setSnapshot(final);
    models::BucketGridModel liveGrid;
    QAbstractItemModelTester liveTester(&liveGrid);

    const auto agrees = [tolerance](double a, double b) {
        return tolerance == 0 ? a == b : std::abs(a - b) <= tolerance;
    };
    ThrottleEngine live(policies);
    size_t fed = 0;
    int walked = 0;
    int atOrOverLimit = 0;
    int falling = 0; // instants between events where the usage is below the last event's
    double previous[2] = {-1, -1};
    for (size_t step = 0; step < instants.size(); ++step) {
        const qint64 t = instants[step];
        size_t fedBefore = fed;
        while (fed < events.size() && events[fed].tsMs <= t)
            live.add(events[fed++]);
        // The report at t; every 25th instant a whole snapshot for the live grid too.
        const bool snapshotNow = step % 25 == 0;
        auto now = std::make_shared<DashboardSnapshot>();
        if (snapshotNow) {
            live.fillSnapshot(now.get(), t);
            liveGrid.setSnapshot(now);
            replayGrid.setInstant(t);
        } else {
            now->report.scopes = live.scopes(t);
        }
        for (int i = 0; i < now->report.scopes.size(); ++i) {
            const ScopeSummary &scope = now->report.scopes.at(i);
            const ScopeSeries &series = final->series[size_t(i)];
            QCOMPARE(final->report.scopes.at(i).key, scope.key);
            const double report = scope.currentUsage;
            const QString where = QStringLiteral("%1 at +%2 ms").arg(scope.key).arg(t - kBase);
            // The Bucket chart plots this series; the event detail and the grid read it too.
            const double chart = models::usageAt(series, t);
            QVERIFY2(agrees(chart, report),
                     qPrintable(where + QStringLiteral(": chart %1, report %2")
                                            .arg(chart, 0, 'g', 12)
                                            .arg(report, 0, 'g', 12)));
            const double accepted = models::acceptedUsageAt(series, t);
            QVERIFY2(agrees(accepted, scope.currentAcceptedUsage),
                     qPrintable(where + QStringLiteral(": accepted %1, report %2")
                                            .arg(accepted, 0, 'g', 12)
                                            .arg(scope.currentAcceptedUsage, 0, 'g', 12)));
            QVERIFY(agrees(models::displayedUsage(*final, i, t), report));
            if (snapshotNow) {
                QCOMPARE(models::displayedUsage(*now, i, std::nullopt), report);
                QVERIFY2(agrees(gridUsage(replayGrid, i), report), qPrintable(where));
                QVERIFY2(gridUsage(liveGrid, i) == report, qPrintable(where));
            }
            atOrOverLimit += report >= scope.capacity ? 1 : 0;
            if (fed == fedBefore && report < previous[i])
                ++falling;
            previous[i] = report;
        }
        ++walked;
    }
    QVERIFY(walked > 1500);
    QVERIFY(atOrOverLimit > 10); // the walk went through an exhausted bucket
    QVERIFY(falling > 0);        // and through usage falling between events

    // The event detail lists the buckets of the event's key: alpha's for an alpha event.
    const RequestEvent &first = events.front();
    const QList<int> ofKey = models::scopesOfEventKey(*final, first);
    QCOMPARE(ofKey.size(), 1);
    QCOMPARE(final->report.scopes.at(ofKey.first()).key, first.identity);
    QVERIFY(models::bucketsAtText(*final, first, first.tsMs)
                .contains(QStringLiteral("Buckets of this key at")));
}

void TestOneTruth::pastTheBudgetPeaksThenExact_data()
{
    QTest::addColumn<QByteArray>("limitJson");
    QTest::addColumn<double>("tolerance");
    QTest::newRow("fixed-window")
        << QByteArray(
               R"({"name":"l","key":"identity","algorithm":"fixed-window","capacity":40,"windowSeconds":10})")
        << 0.0;
    QTest::newRow("sliding-window")
        << QByteArray(
               R"({"name":"l","key":"identity","algorithm":"sliding-window","capacity":40,"windowSeconds":10})")
        << 0.0;
    QTest::newRow("concurrency")
        << QByteArray(R"({"name":"l","key":"identity","algorithm":"concurrency","capacity":6})")
        << 0.0;
    QTest::newRow("token-bucket")
        << QByteArray(
               R"({"name":"l","key":"identity","algorithm":"token-bucket","capacity":30,"refillPerSecond":4.5})")
        << 1e-6;
    QTest::newRow("leaky-bucket")
        << QByteArray(
               R"({"name":"l","key":"identity","algorithm":"leaky-bucket","rate":"7r/s","burst":12})")
        << 1e-3 + 1e-9;
}

// The documented bound: past the point budget the oldest points are peak bins (never below the
// usage of their time) and the newest half of the budget stays exact.
void TestOneTruth::pastTheBudgetPeaksThenExact()
{
    QFETCH(QByteArray, limitJson);
    QFETCH(double, tolerance);

    ThrottleEngine::Options options;
    options.maxSeriesPoints = 100;
    const PolicySet policies = simPolicy(limitJson);
    const std::vector<RequestEvent> events = simScenario(7, false);
    ThrottleEngine whole(policies, options);
    whole.addBatch(std::span<const RequestEvent>(events.data(), events.size()));
    DashboardSnapshot final;
    whole.fillSnapshot(&final);

    ThrottleEngine live(policies);
    size_t fed = 0;
    int exact = 0;
    int binned = 0;
    for (qint64 t = events.front().tsMs; t <= *final.report.lastMs; t += 89) {
        while (fed < events.size() && events[fed].tsMs <= t)
            live.add(events[fed++]);
        const QList<ScopeSummary> scopes = live.scopes(t);
        for (int i = 0; i < scopes.size(); ++i) {
            const ScopeSeries &series = final.series[size_t(i)];
            QVERIFY(series.usageT.size() <= 100 + 2); // (+ the tail to the end of the data)
            QVERIFY(series.firstExact > 0);
            const double chart = models::usageAt(series, t);
            const double report = scopes.at(i).currentUsage;
            const QString where = QStringLiteral("%1 at +%2 ms: chart %3, report %4")
                                      .arg(scopes.at(i).key)
                                      .arg(t - kBase)
                                      .arg(chart, 0, 'g', 12)
                                      .arg(report, 0, 'g', 12);
            if (t >= *models::exactSince(series)) {
                QVERIFY2(std::abs(chart - report) <= tolerance, qPrintable(where));
                ++exact;
            } else {
                QVERIFY2(chart >= report - tolerance, qPrintable(where));
                ++binned;
            }
        }
    }
    QVERIFY(exact > 100);
    QVERIFY(binned > 100);
}

QTEST_GUILESS_MAIN(TestOneTruth)
#include "tst_onetruth.moc"
