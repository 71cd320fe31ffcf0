// Pace advice (issue 33.2): per bucket key, the fastest steady pace the limits allow for the
// log's mix of costs and the limit that binds, for every algorithm, a key whose limits charge
// part of its requests (Fabric's API groups), several limits at once (OneNote's minute, hour
// and concurrency), and the report's JSON and text. The advice is checked against the what-if
// simulation: a steady client at the advised pace is never refused, one a little faster is.

#include "engine/analysis.h"
#include "engine/paceadvice.h"
#include "engine/reportformat.h"
#include "engine/throttleengine.h"
#include "whatif/simulation.h"
#include "whatif/workload.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace ts;

namespace {

constexpr qint64 kBase = 1771454640000;

PolicySet policyOf(const QByteArray &limits)
{
    QString error;
    auto policy = Policy::fromJsonBytes(
        R"({"name": "api", "match": {"service": "^api$"}, "limits": )" + limits + "}", u"test"_qs,
        &error);
    Q_ASSERT_X(policy, "policyOf", qPrintable(error));
    PolicySet set;
    set.add(*policy);
    return set;
}

// n requests of one identity, 100 ms apart; every third a POST; each takes durationMs.
std::vector<RequestEvent> requests(int n, double durationMs = 100,
                                   const QString &service = u"api"_qs)
{
    std::vector<RequestEvent> events;
    for (int i = 0; i < n; ++i) {
        RequestEvent event;
        event.service = service;
        event.identity = u"alice"_qs;
        event.app = u"bridge"_qs;
        event.method = i % 3 == 0 ? u"POST"_qs : u"GET"_qs;
        event.url =
            service == u"graph"_qs
                ? u"https://graph.microsoft.com/v1.0/me/onenote/pages/"_qs + QString::number(i)
                : u"https://api.example/items/"_qs + QString::number(i);
        if (service == u"fabric"_qs)
            event.url =
                i % 2 == 0
                    ? u"https://api.fabric.microsoft.com/v1/workspaces/w"_qs
                    : u"https://api.fabric.microsoft.com/v1/workspaces/w/items/i/jobs/instances"_qs;
        event.tsMs = kBase + i * 100;
        event.status = 200;
        event.durationMs = durationMs;
        events.push_back(event);
    }
    return events;
}

QList<PaceAdvice> adviceOf(const PolicySet &policies, const std::vector<RequestEvent> &events)
{
    ThrottleEngine engine(policies);
    engine.addBatch(std::span<const RequestEvent>(events.data(), events.size()));
    return paceAdvice(engine.scopes());
}

} // namespace

class TestPaceAdvice : public QObject
{
    Q_OBJECT

private slots:
    void eachAlgorithm_data();
    void eachAlgorithm();
    void aKeyWhoseLimitsShareItsRequests();
    void noAdviceForObservedOnly();
    void steadyAtTheAdvisedPaceIsNeverRefused_data();
    void steadyAtTheAdvisedPaceIsNeverRefused();
    void reportCarriesIt();
};

void TestPaceAdvice::eachAlgorithm_data()
{
    QTest::addColumn<QByteArray>("limits");
    QTest::addColumn<QString>("service");
    QTest::addColumn<double>("rate");
    QTest::addColumn<QString>("binding");
    QTest::addColumn<QString>("text");

    QTest::newRow("fixed window") << QByteArray(R"([{"name": "minute", "algorithm": "fixed-window",
        "capacity": 200, "windowSeconds": 60}])")
                                  << u"api"_qs << 200.0 / 60 << u"minute"_qs
                                  << u"max 200/min, minute limit binds"_qs;
    QTest::newRow("sliding window, POST costs 4 (mean 2)")
        << QByteArray(R"([{"name": "w", "algorithm": "sliding-window", "capacity": 100,
        "windowSeconds": 10, "cost": [{"match": {"method": "^POST$"}, "credits": 4}]}])")
        << u"api"_qs << 5.0 << u"w"_qs << u"max 300/min, w limit binds"_qs;
    QTest::newRow("credits") << QByteArray(R"([{"name": "c", "algorithm": "credits",
        "capacity": 1000, "windowSeconds": 1, "defaultCost": 3}])")
                             << u"api"_qs << 333.0 << u"c"_qs << u"max 333/s, c limit binds"_qs;
    QTest::newRow("token bucket") << QByteArray(R"([{"name": "t", "algorithm": "token-bucket",
        "capacity": 250, "refillPerSecond": 25}])")
                                  << u"api"_qs << 25.0 << u"t"_qs << u"max 25/s, t limit binds"_qs;
    QTest::newRow("leaky bucket, nginx 30r/m")
        << QByteArray(R"([{"name": "edge",
        "algorithm": "leaky-bucket", "rate": "30r/m", "burst": 5}])")
        << u"api"_qs << 0.5 << u"edge"_qs << u"max 30/min, edge limit binds"_qs;
    QTest::newRow("concurrency 5 at 250 ms")
        << QByteArray(R"([{"name": "inflight",
        "algorithm": "concurrency", "capacity": 5}])")
        << u"api"_qs << 20.0 << u"inflight"_qs << u"max 20/s, inflight limit binds"_qs;
    QTest::newRow("the tightest of three binds")
        << QByteArray(R"([
        {"name": "per-minute", "algorithm": "sliding-window", "capacity": 120, "windowSeconds": 60},
        {"name": "per-hour", "algorithm": "sliding-window", "capacity": 400, "windowSeconds": 3600},
        {"name": "concurrent", "algorithm": "concurrency", "capacity": 5}])")
        << u"api"_qs << 400.0 / 3600 << u"per-hour"_qs << u"max 6.6/min, per-hour limit binds"_qs;
}

void TestPaceAdvice::eachAlgorithm()
{
    QFETCH(QByteArray, limits);
    QFETCH(QString, service);
    QFETCH(double, rate);
    QFETCH(QString, binding);
    QFETCH(QString, text);
    const QList<PaceAdvice> advice = adviceOf(policyOf(limits), requests(90, 250, service));
    QCOMPARE(advice.size(), 1);
    QCOMPARE(advice.first().key, u"alice"_qs);
    QCOMPARE(advice.first().identity, u"alice"_qs);
    QVERIFY2(qFuzzyCompare(advice.first().maxRatePerSecond, rate),
             qPrintable(QString::number(advice.first().maxRatePerSecond)));
    QCOMPARE(advice.first().bindingLimit, binding);
    QCOMPARE(advice.first().limits.first().limit, binding);
    QCOMPARE(describeAdvice(advice.first()), text);
}

void TestPaceAdvice::aKeyWhoseLimitsShareItsRequests()
{
    // Fabric: half the identity's requests go to platform, half to jobScheduler, 200 a minute
    // each: the identity can send 400 a minute before either group runs out.
    const QList<PaceAdvice> advice =
        adviceOf(PolicySet::builtin(), requests(100, 50, u"fabric"_qs));
    QCOMPARE(advice.size(), 1);
    QCOMPARE(advice.first().policy, u"fabric"_qs);
    QCOMPARE(advice.first().limits.size(), 2);
    for (const LimitAllowance &limit : advice.first().limits)
        QCOMPARE(limit.share, 0.5);
    QVERIFY(qFuzzyCompare(advice.first().maxRatePerSecond, 400.0 / 60));
}

void TestPaceAdvice::noAdviceForObservedOnly()
{
    const QList<PaceAdvice> advice =
        adviceOf(policyOf(R"([{"name": "seen", "algorithm": "observed"}])"), requests(20));
    QVERIFY(advice.isEmpty());
}

void TestPaceAdvice::steadyAtTheAdvisedPaceIsNeverRefused_data()
{
    QTest::addColumn<QByteArray>("limits");
    QTest::newRow("fixed window") << QByteArray(R"([{"name": "w", "algorithm": "fixed-window",
        "capacity": 20, "windowSeconds": 10}])");
    QTest::newRow("sliding window with costs")
        << QByteArray(R"([{"name": "w", "algorithm": "sliding-window", "capacity": 30,
        "windowSeconds": 10, "cost": [{"match": {"method": "^POST$"}, "credits": 3}]}])");
    QTest::newRow("token bucket") << QByteArray(R"([{"name": "t", "algorithm": "token-bucket",
        "capacity": 5, "refillPerSecond": 2}])");
}

void TestPaceAdvice::steadyAtTheAdvisedPaceIsNeverRefused()
{
    QFETCH(QByteArray, limits);
    const PolicySet policies = policyOf(limits);
    const std::vector<RequestEvent> events = requests(150);
    const QList<PaceAdvice> advice = adviceOf(policies, events);
    QCOMPARE(advice.size(), 1);
    whatif::WorkloadBuilder builder;
    for (const RequestEvent &event : events)
        builder.add(event);
    const whatif::Workload work = builder.finish();
    whatif::Behaviour behaviour;
    behaviour.concurrency = 1;
    behaviour.pacePerSecond = advice.first().maxRatePerSecond;
    QCOMPARE(whatif::Simulation(work, policies, behaviour).run().whatif.throttles, 0);
    behaviour.pacePerSecond = advice.first().maxRatePerSecond * 1.25;
    QVERIFY(whatif::Simulation(work, policies, behaviour).run().whatif.throttles > 0);
}

void TestPaceAdvice::reportCarriesIt()
{
    Analysis analysis(policyOf(R"([{"name": "minute", "algorithm": "fixed-window",
        "capacity": 200, "windowSeconds": 60}])"),
                      Analysis::Purpose::ReportOnly);
    for (const RequestEvent &event : requests(30))
        analysis.add(event);
    const ReportData report = analysis.report();
    QCOMPARE(report.advice.size(), 1);
    const QJsonArray json =
        QJsonDocument::fromJson(reportToJson(report)).object().value(u"advice"_qs).toArray();
    QCOMPARE(json.size(), 1);
    const QJsonObject entry = json.first().toObject();
    QCOMPARE(entry.value(u"key"_qs).toString(), u"alice"_qs);
    QCOMPARE(entry.value(u"bindingLimit"_qs).toString(), u"minute"_qs);
    QCOMPARE(entry.value(u"policy"_qs).toString(), u"api"_qs);
    QVERIFY(qFuzzyCompare(entry.value(u"maxRatePerSecond"_qs).toDouble(), 200.0 / 60));
    QCOMPARE(entry.value(u"summary"_qs).toString(), u"max 200/min, minute limit binds"_qs);
    QCOMPARE(entry.value(u"limits"_qs).toArray().first().toObject().value(u"share"_qs).toDouble(),
             1.0);
    QVERIFY2(reportToText(report).contains(u"Pace advice"_qs), qPrintable(reportToText(report)));
    QVERIFY(reportToText(report).contains(u"  alice (api): max 200/min, minute limit binds\n"_qs));
}

QTEST_GUILESS_MAIN(TestPaceAdvice)
#include "tst_paceadvice.moc"
