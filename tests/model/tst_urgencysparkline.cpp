// The Overview's sparkline (models::IdentityUrgencyModel, SparklineRole): each sample is the
// peak fill of its slice of the last 5 minutes, read off the usage series the way the Bucket
// chart draws it (models::usageAt, one truth per instant, issue 19.6). A step series holds its
// value until the next point; a token or leaky bucket's series is a line between points, so
// the peak over a slice is the line's value at the slice's start and end plus every point
// inside, never the value of the point before the slice held as a step.
//
// Hand-built series with known peaks (a line crossing slice boundaries, the same points as a
// step series, a line series whose points are still peak bins), then the engine's own series
// for every algorithm checked against the series read at every millisecond of every slice (all
// points and slice ends are whole milliseconds, so that maximum is the exact peak).

#include "engine/throttleengine.h"
#include "models/identityurgencymodel.h"
#include "models/snapshotmath.h"
#include "policy/policy.h"

#include <QAbstractItemModelTester>
#include <QRandomGenerator>
#include <QTest>

#include <cmath>
#include <memory>

using namespace ts;
using namespace ts::models;

namespace {

// 2026-02-18T22:44:00Z; the hand-built snapshots end 5 minutes later, so the sparkline's
// first slice starts here and slice i is [kBase + 5 s * i, kBase + 5 s * (i + 1)].
constexpr qint64 kBase = 1771454640000;
constexpr qint64 kSlice =
    IdentityUrgencyModel::kSparklineMs / IdentityUrgencyModel::kSparklineSamples;

// One scope (capacity 100, fill 0 now) whose usage series is (times, values) in ms after kBase.
std::shared_ptr<const DashboardSnapshot> oneScope(const std::vector<qint64> &times,
                                                  const std::vector<double> &values, bool linear,
                                                  size_t firstExact)
{
    auto snap = std::make_shared<DashboardSnapshot>();
    ScopeSummary scope;
    scope.service = QStringLiteral("sim");
    scope.limit = QStringLiteral("l");
    scope.key = QStringLiteral("alpha");
    scope.policy = QStringLiteral("sim");
    scope.algorithm = linear ? QStringLiteral("token-bucket") : QStringLiteral("fixed-window");
    scope.capacity = 100;
    snap->report.scopes.append(scope);
    snap->report.firstMs = kBase;
    snap->report.lastMs = kBase + IdentityUrgencyModel::kSparklineMs;
    ScopeSeries series;
    for (qint64 t : times)
        series.usageT.push_back(kBase + t);
    series.usage = values;
    series.acceptedUsage = values;
    series.blockedUntil.assign(times.size(), 0);
    series.linear = linear;
    series.firstExact = firstExact;
    snap->series.push_back(series);
    return snap;
}

// The simulated callers of tst_onetruth: bursts and pauses of two identities on "sim".
std::vector<RequestEvent> simScenario(quint32 seed)
{
    QRandomGenerator rng(seed);
    std::vector<RequestEvent> events;
    for (const QString &who : {QStringLiteral("alpha"), QStringLiteral("bravo")}) {
        qint64 t = kBase + qint64(rng.bounded(2000u));
        while (t < kBase + 240000) {
            RequestEvent e;
            e.service = QStringLiteral("sim");
            e.identity = who;
            e.url = QStringLiteral("https://sim.example/v1/items");
            e.method = QStringLiteral("GET");
            e.tsMs = t;
            e.durationMs = double(50 + rng.bounded(4000u));
            e.status = 200;
            events.push_back(e);
            t += rng.bounded(100u) < 85 ? qint64(rng.bounded(60u)) : qint64(rng.bounded(12000u));
        }
    }
    std::stable_sort(events.begin(), events.end(),
                     [](const RequestEvent &a, const RequestEvent &b) { return a.tsMs < b.tsMs; });
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

std::vector<double> sparklineOf(const IdentityUrgencyModel &model, int row)
{
    std::vector<double> result;
    for (const QVariant &v : model.index(row, IdentityUrgencyModel::SparklineColumn)
                                 .data(IdentityUrgencyModel::SparklineRole)
                                 .toList())
        result.push_back(v.toDouble());
    return result;
}

} // namespace

class TestUrgencySparkline : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void handBuiltPeaks_data();
    void handBuiltPeaks();
    void engineSeriesPeaks_data();
    void engineSeriesPeaks();
};

void TestUrgencySparkline::handBuiltPeaks_data()
{
    QTest::addColumn<bool>("linear");
    QTest::addColumn<size_t>("firstExact");
    QTest::addColumn<int>("sample");
    QTest::addColumn<double>("fill");

    // The series: nothing until 12 s, an event's jump 0 -> 100 at 12 s, then (as a line) down
    // to 0 at 32 s, i.e. 5 per second; a second jump 0 -> 40 at 50 s, down to 0 at 58 s.
    // Slices: 2 = [10 s, 15 s] holds the jump; 3 = [15 s, 20 s] is on the line from 85 to 60;
    // 6 = [30 s, 35 s] starts at 10 on the line; 10 = [50 s, 55 s], 11 = [55 s, 60 s].
    const struct
    {
        const char *name;
        int sample;
        double line;
        double step;
    } slices[] = {
        {"before any point", 1, 0.0, 0.0},
        {"slice holding the jump", 2, 1.0, 1.0},
        {"line crosses the slice start", 3, 0.85, 1.0},
        {"line inside", 4, 0.60, 1.0},
        {"line ends inside", 6, 0.10, 1.0},
        {"after the line reached zero", 7, 0.0, 0.0},
        {"second jump", 10, 0.40, 0.40},
        {"second line crosses the start", 11, 0.15, 0.40},
        {"long after", 30, 0.0, 0.0},
    };
    for (const auto &s : slices) {
        QTest::addRow("line: %s", s.name) << true << size_t(0) << s.sample << s.line;
        QTest::addRow("step: %s", s.name) << false << size_t(0) << s.sample << s.step;
        // A line series whose points are all still peak bins: held as steps.
        QTest::addRow("binned line: %s", s.name) << true << size_t(6) << s.sample << s.step;
    }
}

void TestUrgencySparkline::handBuiltPeaks()
{
    QFETCH(bool, linear);
    QFETCH(size_t, firstExact);
    QFETCH(int, sample);
    QFETCH(double, fill);

    QCOMPARE(kSlice, qint64(5000));
    const std::vector<qint64> times = {12000, 12000, 32000, 50000, 50000, 58000};
    const std::vector<double> values = {0, 100, 0, 0, 40, 0};
    IdentityUrgencyModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setSnapshot(oneScope(times, values, linear, firstExact));
    QCOMPARE(model.rowCount(), 1);
    const std::vector<double> sparkline = sparklineOf(model, 0);
    QCOMPARE(sparkline.size(), size_t(IdentityUrgencyModel::kSparklineSamples));
    QVERIFY2(std::abs(sparkline[size_t(sample)] - fill) < 1e-9,
             qPrintable(QStringLiteral("sample %1: %2, expected %3")
                            .arg(sample)
                            .arg(sparkline[size_t(sample)], 0, 'g', 12)
                            .arg(fill)));
}

void TestUrgencySparkline::engineSeriesPeaks_data()
{
    QTest::addColumn<QByteArray>("limitJson");
    QTest::addColumn<bool>("linear");
    QTest::newRow("fixed-window")
        << QByteArray(
               R"({"name":"l","key":"identity","algorithm":"fixed-window","capacity":40,"windowSeconds":10})")
        << false;
    QTest::newRow("sliding-window")
        << QByteArray(
               R"({"name":"l","key":"identity","algorithm":"sliding-window","capacity":40,"windowSeconds":10})")
        << false;
    QTest::newRow("concurrency")
        << QByteArray(R"({"name":"l","key":"identity","algorithm":"concurrency","capacity":6})")
        << false;
    QTest::newRow("token-bucket")
        << QByteArray(
               R"({"name":"l","key":"identity","algorithm":"token-bucket","capacity":30,"refillPerSecond":4.5})")
        << true;
    QTest::newRow("token-bucket slow refill")
        << QByteArray(
               R"({"name":"l","key":"identity","algorithm":"token-bucket","capacity":30,"refillPerSecond":0.2})")
        << true;
    QTest::newRow("leaky-bucket")
        << QByteArray(
               R"({"name":"l","key":"identity","algorithm":"leaky-bucket","rate":"7r/s","burst":12})")
        << true;
}

// Every sample equals the peak of usageAt over its slice, read at every ms of it.
void TestUrgencySparkline::engineSeriesPeaks()
{
    QFETCH(QByteArray, limitJson);
    QFETCH(bool, linear);

    const std::vector<RequestEvent> events = simScenario(23);
    ThrottleEngine engine(simPolicy(limitJson));
    engine.addBatch(std::span<const RequestEvent>(events.data(), events.size()));
    auto snap = std::make_shared<DashboardSnapshot>();
    engine.fillSnapshot(snap.get());
    QCOMPARE(snap->report.scopes.size(), 2);

    IdentityUrgencyModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setSnapshot(snap);
    QCOMPARE(model.rowCount(), 2);
    const qint64 now = *model.referenceMs();
    const qint64 start = now - IdentityUrgencyModel::kSparklineMs;
    int sloped = 0; // slices where holding the point before as a step would read higher
    for (int row = 0; row < model.rowCount(); ++row) {
        const auto &r = model.rowAt(row);
        QCOMPARE(r.scopes.size(), size_t(1));
        const int scopeIndex = r.scopes.front();
        const ScopeSeries &series = snap->series[size_t(scopeIndex)];
        QCOMPARE(series.linear, linear);
        const double capacity = snap->report.scopes.at(scopeIndex).capacity;
        const std::vector<double> sparkline = sparklineOf(model, row);
        for (int i = 0; i + 1 < IdentityUrgencyModel::kSparklineSamples; ++i) {
            const qint64 from = start + i * kSlice;
            double peak = 0;
            for (qint64 t = from; t <= from + kSlice; ++t)
                peak = std::max(peak, usageAt(series, t) / capacity);
            QVERIFY2(std::abs(sparkline[size_t(i)] - peak) < 1e-9,
                     qPrintable(QStringLiteral("%1 sample %2: %3, the series peaks at %4")
                                    .arg(r.key)
                                    .arg(i)
                                    .arg(sparkline[size_t(i)], 0, 'g', 12)
                                    .arg(peak, 0, 'g', 12)));
            // The value held from the point before the slice, as a step would read it.
            const auto after = std::upper_bound(series.usageT.begin(), series.usageT.end(), from);
            if (after != series.usageT.begin() &&
                series.usage[size_t(after - series.usageT.begin() - 1)] / capacity > peak + 1e-9)
                ++sloped;
        }
        // The last sample is "now" at least.
        QVERIFY(sparkline.back() >= r.fill - 1e-12);
    }
    // A line series has slices where the step reading would be wrong: the test sees them.
    QCOMPARE(sloped > 0, linear);
}

QTEST_GUILESS_MAIN(TestUrgencySparkline)
#include "tst_urgencysparkline.moc"
