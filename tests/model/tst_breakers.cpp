// BreakerTracker: the reconstructed reference breaker (the failure ratio over a sampling window
// of Polly v8 / Resilience4j, routing by x-ms-throttle-scope, soft-open, the break and
// Retry-After, half-open probes) and the summary of breakers the client logged itself. Every
// log is built here, event by event, and goes through the real signal extraction.

#include "engine/breakertracker.h"
#include "signals/throttlesignals.h"

#include <QTest>

using namespace ts;

namespace {

constexpr qint64 kT0 = 1771454400000; // 2026-02-18T22:40:00Z

RequestEvent graphRequest(qint64 tMs, const QString &identity, int status)
{
    RequestEvent event;
    event.tsMs = tMs;
    event.identity = identity;
    event.app = QStringLiteral("note-bridge");
    event.service = QStringLiteral("graph");
    event.method = QStringLiteral("GET");
    event.url = QStringLiteral("https://graph.microsoft.com/v1.0/me/onenote/pages");
    event.status = status;
    return event;
}

RequestEvent throttledGraph(qint64 tMs, const QString &identity, const QString &scopeHeader,
                            const QString &retryAfter = {})
{
    RequestEvent event = graphRequest(tMs, identity, 429);
    if (!scopeHeader.isEmpty())
        event.headers.set(QStringLiteral("x-ms-throttle-scope"), scopeHeader);
    event.retryAfter = retryAfter;
    return event;
}

RequestEvent loggedBreaker(qint64 tMs, const QString &scope, const QString &state)
{
    RequestEvent event;
    event.type = EventType::Breaker;
    event.tsMs = tMs;
    event.breakerScope = scope;
    event.breakerState = state;
    return event;
}

// A breaker that opens on any failure (one 429 is enough) for breakDurationMs: the routing,
// soft-open and half-open tests are about where and when, not about how many.
BreakerTracker::Parameters eager(qint64 breakDurationMs = 30000, bool retryAfterExtends = true)
{
    BreakerTracker::Parameters parameters;
    parameters.model.failureRatio = 1e-6;
    parameters.model.minimumThroughput = 1;
    parameters.model.breakDurationMs = breakDurationMs;
    parameters.model.retryAfterExtendsBreak = retryAfterExtends;
    return parameters;
}

void feed(BreakerTracker &tracker, const QList<RequestEvent> &events)
{
    for (const RequestEvent &event : events)
        tracker.add(event, throttle::extract(event));
}

std::optional<BreakerSummary> summaryOf(const QList<BreakerSummary> &summaries,
                                        const QString &scope, const QString &source)
{
    for (const BreakerSummary &summary : summaries) {
        if (summary.scope == scope && summary.source == source)
            return summary;
    }
    return std::nullopt;
}

QStringList transitionsOf(const BreakerTracker &tracker, const QString &scope)
{
    QStringList result;
    const QList<BreakerTransition> transitions = tracker.transitions();
    for (const BreakerTransition &transition : transitions) {
        if (transition.scope == scope)
            result.append(transition.from + QStringLiteral("->") + transition.to);
    }
    return result;
}

} // namespace

class TestBreakers : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void routesByThrottleScope_data();
    void routesByThrottleScope();
    void nonGraphServicesGetOneBreakerPerCaller_data();
    void nonGraphServicesGetOneBreakerPerCaller();
    void softOpensBeforeTheFirst429_data();
    void softOpensBeforeTheFirst429();
    void softOpenFromReconstructedFill();
    void lowPercentageDoesNotCloseWhileFillIsNear();
    void breakIsMaxOfRetryAfterAndBreakDuration_data();
    void breakIsMaxOfRetryAfterAndBreakDuration();
    void halfOpenProbeDecides_data();
    void halfOpenProbeDecides();
    void openAtEndOfDataCountsUntilTheEnd();
    void quietTrafficCreatesNoBreaker();
    void batchEnvelopeTripsOnlyWhenThrottled_data();
    void batchEnvelopeTripsOnlyWhenThrottled();
    void deathSpiralCollapsesIntoOneProbePerCooldown_data();
    void deathSpiralCollapsesIntoOneProbePerCooldown();
    void failureRatioDecidesOpening_data();
    void failureRatioDecidesOpening();
    void halfOpenProbesDecide_data();
    void halfOpenProbesDecide();
    void policyNamesTheBreaker();
    void breakerModelJson_data();
    void breakerModelJson();
    void transitionListIsBounded();
    void loggedTransitionsSummarised_data();
    void loggedTransitionsSummarised();
};

void TestBreakers::routesByThrottleScope_data()
{
    QTest::addColumn<QString>("scopeHeader");
    QTest::addColumn<QString>("trippedScope");
    QTest::addColumn<bool>("bobBlocked");

    QTest::newRow("short form Application: the app stops for everyone")
        << QStringLiteral("Application") << QStringLiteral("app:note-bridge") << true;
    QTest::newRow("documented Tenant_Application form")
        << QStringLiteral("Tenant_Application/ReadWrite/note-bridge/contoso")
        << QStringLiteral("app:note-bridge") << true;
    QTest::newRow("short form User: only alice stops")
        << QStringLiteral("User") << QStringLiteral("user:alice@contoso.com") << false;
    QTest::newRow("no scope header on Graph: the caller's own breaker")
        << QString() << QStringLiteral("user:alice@contoso.com") << false;
}

void TestBreakers::routesByThrottleScope()
{
    QFETCH(QString, scopeHeader);
    QFETCH(QString, trippedScope);
    QFETCH(bool, bobBlocked);

    const QString alice = QStringLiteral("alice@contoso.com");
    const QString bob = QStringLiteral("bob@contoso.com");
    BreakerTracker tracker(eager());
    feed(tracker, {graphRequest(kT0, alice, 200), graphRequest(kT0 + 100, bob, 200),
                   throttledGraph(kT0 + 1000, alice, scopeHeader, QStringLiteral("20")),
                   // Inside the 30 s cooldown: the reference breaker would hold these back.
                   graphRequest(kT0 + 5000, bob, 200), graphRequest(kT0 + 6000, alice, 200),
                   graphRequest(kT0 + 7000, bob, 200)});

    QCOMPARE(tracker.state(trippedScope), BreakerState::Open);
    const QList<BreakerSummary> summaries = tracker.summaries(kT0 + 10000);
    const auto tripped = summaryOf(summaries, trippedScope, QStringLiteral("reconstructed"));
    QVERIFY(tripped);
    QCOMPARE(tripped->trips, 1);
    QCOMPARE(tripped->finalState, QStringLiteral("open"));
    QCOMPARE(tripped->openSeconds, 9.0);

    const QList<BreakerTransition> transitions = tracker.transitions();
    QCOMPARE(transitions.size(), 1);
    QCOMPARE(transitions.first().reason.contains(QStringLiteral("every user of the app waits")),
             bobBlocked);
    QVERIFY2(transitions.first().reason.contains(QStringLiteral("break 30 s")),
             qPrintable(transitions.first().reason));
    if (bobBlocked) {
        QCOMPARE(tripped->blockedRequests, 3);
        QCOMPARE(tripped->blockedIdentities, QStringList({alice, bob}));
        QVERIFY(
            !summaryOf(summaries, QStringLiteral("user:") + bob, QStringLiteral("reconstructed")));
    } else {
        QCOMPARE(tripped->blockedRequests, 1);
        QCOMPARE(tripped->blockedIdentities, QStringList({alice}));
        QVERIFY(!summaryOf(summaries, QStringLiteral("app:note-bridge"),
                           QStringLiteral("reconstructed")));
        QCOMPARE(tracker.state(QStringLiteral("user:") + bob), BreakerState::Closed);
    }
}

void TestBreakers::nonGraphServicesGetOneBreakerPerCaller_data()
{
    QTest::addColumn<QString>("service");
    QTest::addColumn<QString>("identity");
    QTest::addColumn<QString>("serviceBusNamespace");
    QTest::addColumn<QString>("expectedScope");

    QTest::newRow("fabric quota per identity")
        << QStringLiteral("fabric") << QStringLiteral("sp-migrator") << QString()
        << QStringLiteral("fabric:sp-migrator");
    QTest::newRow("service bus per namespace")
        << QStringLiteral("servicebus") << QStringLiteral("orders-app") << QStringLiteral("sb-prod")
        << QStringLiteral("servicebus:sb-prod");
    QTest::newRow("service bus without namespace falls back to the caller")
        << QStringLiteral("servicebus") << QStringLiteral("orders-app") << QString()
        << QStringLiteral("servicebus:orders-app");
    QTest::newRow("nginx per client") << QStringLiteral("nginx") << QStringLiteral("10.0.0.7")
                                      << QString() << QStringLiteral("nginx:10.0.0.7");
    QTest::newRow("unknown caller")
        << QStringLiteral("fabric") << QString() << QString() << QStringLiteral("fabric:unknown");
}

void TestBreakers::nonGraphServicesGetOneBreakerPerCaller()
{
    QFETCH(QString, service);
    QFETCH(QString, identity);
    QFETCH(QString, serviceBusNamespace);
    QFETCH(QString, expectedScope);

    RequestEvent event;
    event.tsMs = kT0;
    event.service = service;
    event.identity = identity;
    event.serviceBusNamespace = serviceBusNamespace;
    event.status = 429;
    const auto sig = throttle::extract(event);
    QVERIFY(sig.throttled);
    QCOMPARE(BreakerTracker::tripScopeName(event, sig), expectedScope);

    BreakerTracker tracker(eager());
    tracker.add(event, sig);
    const QList<BreakerSummary> summaries = tracker.summaries(kT0 + 1000);
    QCOMPARE(summaries.size(), 1);
    QCOMPARE(summaries.first().scope, expectedScope);
    QCOMPARE(summaries.first().finalState, QStringLiteral("open"));
}

void TestBreakers::softOpensBeforeTheFirst429_data()
{
    QTest::addColumn<QString>("headerName");
    QTest::addColumn<QString>("headerValue");
    QTest::addColumn<bool>("softOpens");

    QTest::newRow("limit percentage 0.85")
        << QStringLiteral("x-ms-throttle-limit-percentage") << QStringLiteral("0.85") << true;
    QTest::newRow("limit percentage 0.5 stays closed")
        << QStringLiteral("x-ms-throttle-limit-percentage") << QStringLiteral("0.5") << false;
    QTest::newRow("RateLimit-Remaining 10 of 100")
        << QStringLiteral("RateLimit-Remaining") << QStringLiteral("10") << true;
    QTest::newRow("RateLimit-Remaining 60 of 100")
        << QStringLiteral("RateLimit-Remaining") << QStringLiteral("60") << false;
}

void TestBreakers::softOpensBeforeTheFirst429()
{
    QFETCH(QString, headerName);
    QFETCH(QString, headerValue);
    QFETCH(bool, softOpens);

    const QString alice = QStringLiteral("alice@contoso.com");
    RequestEvent nearLimit = graphRequest(kT0 + 1000, alice, 200);
    nearLimit.headers.set(headerName, headerValue);
    if (headerName.startsWith(QLatin1StringView("RateLimit")))
        nearLimit.headers.set(QStringLiteral("RateLimit-Limit"), QStringLiteral("100"));

    BreakerTracker tracker(eager());
    feed(tracker, {graphRequest(kT0, alice, 200), nearLimit});
    const QString scope = QStringLiteral("user:") + alice;
    QCOMPARE(tracker.state(scope), softOpens ? BreakerState::SoftOpen : BreakerState::Closed);

    feed(tracker, {throttledGraph(kT0 + 5000, alice, QStringLiteral("User"))});
    QCOMPARE(tracker.state(scope), BreakerState::Open);
    const QStringList expected = softOpens ? QStringList{QStringLiteral("closed->soft-open"),
                                                         QStringLiteral("soft-open->open")}
                                           : QStringList{QStringLiteral("closed->open")};
    QCOMPARE(transitionsOf(tracker, scope), expected);
    if (softOpens)
        QCOMPARE(tracker.transitions().first().tsMs, kT0 + 1000); // before the first 429
}

void TestBreakers::softOpenFromReconstructedFill()
{
    BreakerTracker::Parameters parameters;
    parameters.softOpenHoldMs = 10000;
    BreakerTracker tracker(parameters);
    const RequestEvent event = graphRequest(kT0, QStringLiteral("alice@contoso.com"), 200);
    tracker.observeFill(event, 0.5);
    QVERIFY(tracker.summaries(kT0).isEmpty());
    tracker.observeFill(event, 0.9, /*applicationWide=*/true);
    QCOMPARE(tracker.state(QStringLiteral("app:note-bridge")), BreakerState::SoftOpen);
    // No further near-limit report: the soft-open lapses after the hold time.
    const QList<BreakerSummary> later = tracker.summaries(kT0 + 11000);
    QCOMPARE(later.size(), 1);
    QCOMPARE(later.first().finalState, QStringLiteral("closed"));
    QCOMPARE(later.first().transitions, 2);
}

void TestBreakers::lowPercentageDoesNotCloseWhileFillIsNear()
{
    // The service reports 70 % of one limit while the engine reconstructs 90 % of another for
    // the same caller: the breaker soft-opens once and stays so, instead of toggling on every
    // request (which it did, tens of thousands of transitions on a bench log).
    BreakerTracker::Parameters parameters;
    parameters.softOpenHoldMs = 10000;
    BreakerTracker tracker(parameters);
    const QString alice = QStringLiteral("alice@contoso.com");
    for (int i = 0; i < 100; ++i) {
        RequestEvent event = graphRequest(kT0 + i * 100, alice, 200);
        event.headers.set(QStringLiteral("x-ms-throttle-limit-percentage"), QStringLiteral("0.70"));
        tracker.add(event, throttle::extract(event));
        tracker.observeFill(event, 0.9);
    }
    const QString scope = QStringLiteral("user:") + alice;
    QCOMPARE(tracker.state(scope), BreakerState::SoftOpen);
    const auto summary =
        summaryOf(tracker.summaries(kT0 + 10000), scope, QStringLiteral("reconstructed"));
    QVERIFY(summary);
    QCOMPARE(summary->transitions, 1);

    // Once the reconstruction has been below the threshold for a hold period, a low
    // percentage closes it at once again.
    RequestEvent later = graphRequest(kT0 + 9900 + 10000, alice, 200);
    later.headers.set(QStringLiteral("x-ms-throttle-limit-percentage"), QStringLiteral("0.70"));
    tracker.add(later, throttle::extract(later));
    QCOMPARE(tracker.state(scope), BreakerState::Closed);
}

void TestBreakers::breakIsMaxOfRetryAfterAndBreakDuration_data()
{
    QTest::addColumn<qint64>("breakDurationMs");
    QTest::addColumn<bool>("retryAfterExtends");
    QTest::addColumn<QString>("retryAfter");
    QTest::addColumn<qint64>("expectedBreakMs");

    QTest::newRow("Retry-After 55 s beats a 30 s break")
        << qint64(30000) << true << QStringLiteral("55") << qint64(55000);
    QTest::newRow("Retry-After 5 s: the break wins")
        << qint64(30000) << true << QStringLiteral("5") << qint64(30000);
    QTest::newRow("no Retry-After (OneNote): the break")
        << qint64(30000) << true << QString() << qint64(30000);
    QTest::newRow("decimal Retry-After with a short break")
        << qint64(1000) << true << QStringLiteral("2.5") << qint64(2500);
    QTest::newRow("Polly's 5 s break held to Retry-After 20 s")
        << qint64(5000) << true << QStringLiteral("20") << qint64(20000);
    QTest::newRow("Retry-After ignored when the model says so: Polly's plain 5 s")
        << qint64(5000) << false << QStringLiteral("20") << qint64(5000);
}

void TestBreakers::breakIsMaxOfRetryAfterAndBreakDuration()
{
    QFETCH(qint64, breakDurationMs);
    QFETCH(bool, retryAfterExtends);
    QFETCH(QString, retryAfter);
    QFETCH(qint64, expectedBreakMs);

    BreakerTracker tracker(eager(breakDurationMs, retryAfterExtends));
    const QString alice = QStringLiteral("alice@contoso.com");
    const qint64 probeAt = kT0 + 120000;
    feed(tracker, {throttledGraph(kT0, alice, QStringLiteral("User"), retryAfter),
                   graphRequest(probeAt, alice, 200)});

    const QList<BreakerTransition> transitions = tracker.transitions();
    QCOMPARE(transitions.size(), 3);
    QCOMPARE(transitions[0].to, QStringLiteral("open"));
    QCOMPARE(transitions[0].tsMs, kT0);
    QCOMPARE(transitions[0].reason.contains(QStringLiteral("for its Retry-After")),
             expectedBreakMs > breakDurationMs);
    QCOMPARE(transitions[1].to, QStringLiteral("half-open"));
    QCOMPARE(transitions[1].tsMs, kT0 + expectedBreakMs);
    QCOMPARE(transitions[2].to, QStringLiteral("closed"));
    QCOMPARE(transitions[2].tsMs, probeAt);
    const QList<BreakerSummary> summaries = tracker.summaries(probeAt);
    QCOMPARE(summaries.size(), 1);
    QCOMPARE(summaries.first().openSeconds, double(expectedBreakMs) / 1000.0);
    QCOMPARE(summaries.first().finalState, QStringLiteral("closed"));
}

void TestBreakers::halfOpenProbeDecides_data()
{
    QTest::addColumn<int>("probeStatus");
    QTest::addColumn<QString>("finalState");
    QTest::addColumn<int>("trips");
    QTest::addColumn<double>("openSeconds");

    // Break 30 s from t=0, probe at t=40 s, end of data at t=100 s.
    QTest::newRow("probe succeeds: closed") << 200 << QStringLiteral("closed") << 1 << 30.0;
    QTest::newRow("probe 404 is still an answer: closed")
        << 404 << QStringLiteral("closed") << 1 << 30.0;
    QTest::newRow("probe throttled: open again for a new break, half-open at 70 s")
        << 429 << QStringLiteral("half-open") << 2 << 60.0;
    QTest::newRow("no response proves nothing: stays half-open")
        << 0 << QStringLiteral("half-open") << 1 << 30.0;
}

void TestBreakers::halfOpenProbeDecides()
{
    QFETCH(int, probeStatus);
    QFETCH(QString, finalState);
    QFETCH(int, trips);
    QFETCH(double, openSeconds);

    const QString alice = QStringLiteral("alice@contoso.com");
    RequestEvent probe = graphRequest(kT0 + 40000, alice, probeStatus);
    if (probeStatus == 429)
        probe.headers.set(QStringLiteral("x-ms-throttle-scope"), QStringLiteral("User"));
    BreakerTracker tracker(eager());
    feed(tracker, {throttledGraph(kT0, alice, QStringLiteral("User")), probe});
    const QList<BreakerSummary> summaries = tracker.summaries(kT0 + 100000);
    QCOMPARE(summaries.size(), 1);
    QCOMPARE(summaries.first().finalState, finalState);
    QCOMPARE(summaries.first().trips, trips);
    QCOMPARE(summaries.first().openSeconds, openSeconds);
}

void TestBreakers::openAtEndOfDataCountsUntilTheEnd()
{
    BreakerTracker tracker(eager());
    feed(tracker, {throttledGraph(kT0, QStringLiteral("alice"), QStringLiteral("User"),
                                  QStringLiteral("55"))});
    const QList<BreakerSummary> summaries = tracker.summaries(kT0 + 20000);
    QCOMPARE(summaries.size(), 1);
    QCOMPARE(summaries.first().finalState, QStringLiteral("open"));
    QCOMPARE(summaries.first().openSeconds, 20.0);
    QCOMPARE(summaries.first().transitions, 1);
    // summaries() is a read-only view: the tracker itself has not moved.
    QCOMPARE(tracker.transitions().size(), 1);

    ReportData report;
    tracker.fillReport(&report, kT0 + 20000);
    QCOMPARE(report.breakers.size(), 1);
    QCOMPARE(report.breakers.first().openSeconds, 20.0);
    QCOMPARE(report.breakerTransitions.size(), 1);
    QCOMPARE(report.breakerTransitions.first().to, QStringLiteral("open"));
}

void TestBreakers::quietTrafficCreatesNoBreaker()
{
    BreakerTracker tracker;
    for (int i = 0; i < 1000; ++i)
        feed(tracker, {graphRequest(kT0 + i * 10, QStringLiteral("user%1").arg(i % 7), 200)});
    QVERIFY(tracker.summaries(kT0 + 10000).isEmpty());
    QVERIFY(tracker.transitions().isEmpty());
}

void TestBreakers::deathSpiralCollapsesIntoOneProbePerCooldown_data()
{
    QTest::addColumn<int>("waves");

    QTest::newRow("one retry wave") << 1;
    QTest::newRow("four retry waves") << 4;
}

void TestBreakers::deathSpiralCollapsesIntoOneProbePerCooldown()
{
    QFETCH(int, waves);

    // 1100 Fabric jobs; 200 get through, 900 are blocked (RequestBlocked, Retry-After 30) and
    // all retry together every 32 s, blocked again each time; finally the queue drains.
    constexpr int jobs = 1100;
    constexpr int blocked = 900;
    const auto job = [](qint64 t, int status) {
        RequestEvent event;
        event.tsMs = t;
        event.identity = QStringLiteral("sp-migrator");
        event.service = QStringLiteral("fabric");
        event.method = QStringLiteral("POST");
        event.status = status;
        if (status == 429) {
            event.errorCode = QStringLiteral("RequestBlocked");
            event.retryAfter = QStringLiteral("30");
        }
        return event;
    };
    QList<RequestEvent> events;
    for (int i = 0; i < jobs; ++i)
        events << job(kT0 + i * 2000 / jobs, i < jobs - blocked ? 200 : 429);
    for (int wave = 1; wave <= waves; ++wave) {
        for (int i = 0; i < blocked; ++i)
            events << job(kT0 + wave * 32000 + i * 2000 / jobs, 429);
    }
    const qint64 drainAt = kT0 + (waves + 1) * 32000 + 600000;
    events << job(drainAt, 200);

    BreakerTracker tracker; // Polly v8's defaults
    feed(tracker, events);
    const QList<BreakerSummary> summaries = tracker.summaries(drainAt);
    QCOMPARE(summaries.size(), 1);
    const BreakerSummary &breaker = summaries.first();
    QCOMPARE(breaker.scope, QStringLiteral("fabric:sp-migrator"));
    // The reference breaker opens once 10 % of the window failed: after the 200 successes, at
    // the 23rd 429 (23 / 223 >= 0.1; 22 / 222 is not). Its 5 s break is held to the Retry-After
    // of the 429s that keep coming, so each wave finds it open: one probe per wave (failing),
    // everything else held back.
    int firstTrip = 1;
    while (double(firstTrip) / double(jobs - blocked + firstTrip) < 0.1)
        ++firstTrip;
    QCOMPARE(firstTrip, 23);
    QCOMPARE(breaker.trips, 1 + waves);
    QCOMPARE(breaker.blockedRequests, qint64(blocked - firstTrip + waves * (blocked - 1)));
    QCOMPARE(breaker.finalState, QStringLiteral("closed"));
    QCOMPARE(breaker.blockedIdentities, QStringList{QStringLiteral("sp-migrator")});
}

namespace {

// "90s 10f +31000 5s": 90 successes then 10 failures, 100 ms apart, then 31 s later 5 successes.
// Failures are Service Bus 429s (50009) without Retry-After; successes 200s.
QList<RequestEvent> pattern(const QString &text, qint64 *endMs)
{
    QList<RequestEvent> events;
    qint64 t = kT0;
    for (const QString &token : text.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        if (token.startsWith(QLatin1Char('+'))) {
            t += token.mid(1).toLongLong();
            continue;
        }
        const int count = token.chopped(1).toInt();
        const bool failure = token.endsWith(QLatin1Char('f'));
        const bool serverError = token.endsWith(QLatin1Char('e'));
        for (int i = 0; i < count; ++i) {
            RequestEvent event;
            event.tsMs = t;
            event.service = QStringLiteral("servicebus");
            event.serviceBusNamespace = QStringLiteral("sb-orders-prod");
            event.identity = QStringLiteral("orders-api");
            event.status = failure ? 429 : serverError ? 500 : 200;
            if (failure)
                event.errorCode = QStringLiteral("50009");
            events.append(event);
            t += 100;
        }
    }
    *endMs = t;
    return events;
}

BreakerTracker::Parameters withModel(const QString &preset)
{
    BreakerTracker::Parameters parameters;
    parameters.model = *BreakerModel::fromPreset(preset);
    return parameters;
}

} // namespace

void TestBreakers::failureRatioDecidesOpening_data()
{
    QTest::addColumn<QString>("preset");
    QTest::addColumn<QString>("requests");
    QTest::addColumn<QString>("finalState");
    QTest::addColumn<int>("trips");

    QTest::newRow("Polly: below MinimumThroughput never opens, even all failing")
        << QStringLiteral("polly-v8") << QStringLiteral("99f") << QStringLiteral("closed") << 0;
    QTest::newRow("Polly: ratio exactly at FailureRatio opens (10 of 100)")
        << QStringLiteral("polly-v8") << QStringLiteral("90s 10f") << QStringLiteral("open") << 1;
    QTest::newRow("Polly: just under FailureRatio stays closed (9 of 100)")
        << QStringLiteral("polly-v8") << QStringLiteral("91s 9f") << QStringLiteral("closed") << 0;
    QTest::newRow("Polly: 5xx count as failures")
        << QStringLiteral("polly-v8") << QStringLiteral("90s 10e") << QStringLiteral("open") << 1;
    QTest::newRow("Polly: 0.3 % throttled (the Service Bus producers demo) stays closed")
        << QStringLiteral("polly-v8") << QStringLiteral("330s 1f 330s 1f 330s 1f")
        << QStringLiteral("closed") << 0;
    QTest::newRow("Polly: failures older than SamplingDuration are forgotten")
        << QStringLiteral("polly-v8") << QStringLiteral("15f +31000 100s 1f")
        << QStringLiteral("closed") << 0;
    QTest::newRow("Polly: the same failures inside SamplingDuration open it")
        << QStringLiteral("polly-v8") << QStringLiteral("15f +10000 100s 1f")
        << QStringLiteral("open") << 1;
    QTest::newRow("Resilience4j: 49 % of the last 100 calls stays closed")
        << QStringLiteral("resilience4j") << QStringLiteral("51s 49f") << QStringLiteral("closed")
        << 0;
    QTest::newRow("Resilience4j: 50 % opens, even when the 100th call succeeds")
        << QStringLiteral("resilience4j") << QStringLiteral("50f 50s") << QStringLiteral("open")
        << 1;
    QTest::newRow("Resilience4j: the count window slides (old failures leave it)")
        << QStringLiteral("resilience4j") << QStringLiteral("40f 100s 40f")
        << QStringLiteral("closed") << 0;
}

void TestBreakers::failureRatioDecidesOpening()
{
    QFETCH(QString, preset);
    QFETCH(QString, requests);
    QFETCH(QString, finalState);
    QFETCH(int, trips);

    BreakerTracker tracker(withModel(preset));
    qint64 endMs = 0;
    feed(tracker, pattern(requests, &endMs));
    const QString scope = QStringLiteral("servicebus:sb-orders-prod");
    QCOMPARE(breakerStateName(tracker.state(scope)), finalState);
    const auto summary =
        summaryOf(tracker.summaries(endMs), scope, QStringLiteral("reconstructed"));
    QVERIFY(summary); // every row has a failure: the breaker is listed
    QCOMPARE(summary->trips, trips);
    QCOMPARE(summary->model, BreakerModel::fromPreset(preset));
    if (trips > 0) {
        const QString reason = tracker.transitions().last().reason;
        QVERIFY2(reason.contains(QStringLiteral("requests failed")), qPrintable(reason));
    }
}

void TestBreakers::halfOpenProbesDecide_data()
{
    QTest::addColumn<QString>("preset");
    QTest::addColumn<QString>("probes"); // after the break
    QTest::addColumn<QString>("finalState");
    QTest::addColumn<int>("trips");

    QTest::newRow("Polly: one probe succeeds: closed")
        << QStringLiteral("polly-v8") << QStringLiteral("1s") << QStringLiteral("closed") << 1;
    QTest::newRow("Polly: one probe fails: open again")
        << QStringLiteral("polly-v8") << QStringLiteral("1f") << QStringLiteral("open") << 2;
    QTest::newRow("Polly: once closed, the window starts empty")
        << QStringLiteral("polly-v8") << QStringLiteral("1s 50f") << QStringLiteral("closed") << 1;
    QTest::newRow("Resilience4j: 4 of 10 probes fail: closed")
        << QStringLiteral("resilience4j") << QStringLiteral("4f 6s") << QStringLiteral("closed")
        << 1;
    QTest::newRow("Resilience4j: 5 of 10 probes fail: open again")
        << QStringLiteral("resilience4j") << QStringLiteral("5f 5s") << QStringLiteral("open") << 2;
    QTest::newRow("Resilience4j: 9 probes are not enough to decide")
        << QStringLiteral("resilience4j") << QStringLiteral("9s") << QStringLiteral("half-open")
        << 1;
}

void TestBreakers::halfOpenProbesDecide()
{
    QFETCH(QString, preset);
    QFETCH(QString, probes);
    QFETCH(QString, finalState);
    QFETCH(int, trips);

    const BreakerTracker::Parameters parameters = withModel(preset);
    BreakerTracker tracker(parameters);
    qint64 openedAt = 0;
    feed(tracker, pattern(QStringLiteral("100f"), &openedAt));
    const QString scope = QStringLiteral("servicebus:sb-orders-prod");
    QCOMPARE(tracker.state(scope), BreakerState::Open);
    // The probes come after the break (no Retry-After: the model's break alone).
    qint64 endMs = 0;
    QList<RequestEvent> after = pattern(probes, &endMs);
    for (RequestEvent &event : after)
        event.tsMs += openedAt - kT0 + parameters.model.breakDurationMs;
    feed(tracker, after);
    QCOMPARE(breakerStateName(tracker.state(scope)), finalState);
    const auto summary =
        summaryOf(tracker.summaries(after.last().tsMs), scope, QStringLiteral("reconstructed"));
    QVERIFY(summary);
    QCOMPARE(summary->trips, trips);
}

void TestBreakers::policyNamesTheBreaker()
{
    // The Service Bus policy replays Resilience4j, every other event Polly's defaults.
    PolicySet policies = PolicySet::builtin();
    const int index = policies.indexOf(QStringLiteral("servicebus-standard"));
    QVERIFY(index >= 0);
    policies.policies()[index].breaker = BreakerModel::resilience4j();
    BreakerTracker tracker({}, policies);
    qint64 endMs = 0;
    QList<RequestEvent> events = pattern(QStringLiteral("50f 50s"), &endMs);
    RequestEvent fabric;
    fabric.tsMs = endMs;
    fabric.service = QStringLiteral("fabric");
    fabric.identity = QStringLiteral("sp-migrator");
    fabric.status = 429;
    events.append(fabric);
    feed(tracker, events);
    const QList<BreakerSummary> summaries = tracker.summaries(endMs + 1000);
    const auto serviceBus = summaryOf(summaries, QStringLiteral("servicebus:sb-orders-prod"),
                                      QStringLiteral("reconstructed"));
    QVERIFY(serviceBus);
    QCOMPARE(serviceBus->model, BreakerModel::resilience4j());
    QCOMPARE(serviceBus->trips, 1);
    const auto other =
        summaryOf(summaries, QStringLiteral("fabric:sp-migrator"), QStringLiteral("reconstructed"));
    QVERIFY(other);
    QCOMPARE(other->model, BreakerModel::pollyV8());
    QCOMPARE(other->trips, 0); // one request is below Polly's minimum throughput

    // PolicySet::setBreaker gives every policy, and what no policy matches, the same breaker.
    policies.setBreaker(BreakerModel::resilience4j());
    BreakerTracker everywhere({}, policies);
    QCOMPARE(everywhere.defaultModel(), BreakerModel::resilience4j());
}

void TestBreakers::breakerModelJson_data()
{
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("preset"); // matchingPreset(), or "" when it must be refused
    QTest::addColumn<QString>("error");

    QTest::newRow("empty object: Polly v8")
        << QStringLiteral("{}") << QStringLiteral("polly-v8") << QString();
    QTest::newRow("preset resilience4j") << QStringLiteral(R"({"preset":"resilience4j"})")
                                         << QStringLiteral("resilience4j") << QString();
    QTest::newRow("a preset with one change is custom")
        << QStringLiteral(R"({"preset":"polly-v8","breakDurationSeconds":30})")
        << QStringLiteral("custom") << QString();
    QTest::newRow("Resilience4j's values spelled out are Resilience4j")
        << QStringLiteral(R"({"failureRatio":0.5,"window":"count","windowCalls":100,)"
                          R"("breakDurationSeconds":60,"halfOpenCalls":10})")
        << QStringLiteral("resilience4j") << QString();
    QTest::newRow("ratio above 1")
        << QStringLiteral(R"({"failureRatio":1.5})") << QString() << QStringLiteral("failureRatio");
    QTest::newRow("ratio 0") << QStringLiteral(R"({"failureRatio":0})") << QString()
                             << QStringLiteral("failureRatio");
    QTest::newRow("unknown preset")
        << QStringLiteral(R"({"preset":"hystrix"})") << QString() << QStringLiteral("preset");
    QTest::newRow("fractional throughput") << QStringLiteral(R"({"minimumThroughput":2.5})")
                                           << QString() << QStringLiteral("minimumThroughput");
    QTest::newRow("unknown key") << QStringLiteral(R"({"failureRate":0.5})") << QString()
                                 << QStringLiteral("failureRate");
    QTest::newRow("bad window") << QStringLiteral(R"({"window":"sliding"})") << QString()
                                << QStringLiteral("window");
    QTest::newRow("not an object")
        << QStringLiteral("[1]") << QString() << QStringLiteral("object");
}

void TestBreakers::breakerModelJson()
{
    QFETCH(QString, json);
    QFETCH(QString, preset);
    QFETCH(QString, error);

    QString message;
    const auto model = BreakerModel::fromJsonText(json, &message);
    if (preset.isEmpty()) {
        QVERIFY(!model);
        QVERIFY2(message.startsWith(QStringLiteral("breaker: ")), qPrintable(message));
        QVERIFY2(message.contains(error), qPrintable(message));
        return;
    }
    QVERIFY2(model, qPrintable(message));
    QCOMPARE(model->matchingPreset(), preset);
    // The round trip gives the same model, and the policy file keeps it.
    QCOMPARE(BreakerModel::fromJson(model->toJson(), &message), model);
    Policy policy = *PolicySet::builtinPolicy(QStringLiteral("nginx"));
    policy.breaker = model;
    const auto reread = Policy::fromJson(policy.toJson(), &message);
    QVERIFY2(reread, qPrintable(message));
    QVERIFY(*reread == policy);
    QVERIFY(!model->describe().isEmpty());
}

void TestBreakers::batchEnvelopeTripsOnlyWhenThrottled_data()
{
    QTest::addColumn<int>("envelopeStatus");
    QTest::addColumn<int>("expectedBreakers");

    QTest::newRow("envelope 200: its sub-responses speak for it") << 200 << 0;
    QTest::newRow("envelope 429: the whole batch was refused") << 429 << 1;
}

void TestBreakers::batchEnvelopeTripsOnlyWhenThrottled()
{
    QFETCH(int, envelopeStatus);
    QFETCH(int, expectedBreakers);

    RequestEvent envelope = graphRequest(kT0, QStringLiteral("alice@contoso.com"), envelopeStatus);
    envelope.method = QStringLiteral("POST");
    envelope.url = QStringLiteral("https://graph.microsoft.com/v1.0/$batch");
    envelope.batchEnvelope = true;
    envelope.batchId = QStringLiteral("b-1");
    BreakerTracker tracker(eager());
    feed(tracker, {envelope});
    const QList<BreakerSummary> summaries = tracker.summaries(kT0 + 1000);
    QCOMPARE(summaries.size(), expectedBreakers);
    if (expectedBreakers > 0)
        QCOMPARE(summaries.first().scope, QStringLiteral("user:alice@contoso.com"));
}

void TestBreakers::transitionListIsBounded()
{
    BreakerTracker::Parameters parameters = eager();
    parameters.maxStoredTransitions = 8;
    BreakerTracker tracker(parameters);
    const QString alice = QStringLiteral("alice@contoso.com");
    // 20 cycles closed -> open -> half-open -> closed: 60 transitions.
    for (int cycle = 0; cycle < 20; ++cycle) {
        const qint64 start = kT0 + cycle * 100000;
        feed(tracker, {throttledGraph(start, alice, QStringLiteral("User")),
                       graphRequest(start + 40000, alice, 200)});
    }
    const QList<BreakerTransition> kept = tracker.transitions();
    QVERIFY(kept.size() <= 8);
    QCOMPARE(kept.size() + tracker.droppedTransitions(), 60);
    QCOMPARE(kept.last().to, QStringLiteral("closed")); // the newest are kept
    QCOMPARE(kept.last().tsMs, kT0 + 19 * 100000 + 40000);
    // The summary still counts every transition.
    QCOMPARE(tracker.summaries(kT0 + 2000000).first().transitions, 60);
    QCOMPARE(tracker.summaries(kT0 + 2000000).first().trips, 20);
}

void TestBreakers::loggedTransitionsSummarised_data()
{
    QTest::addColumn<QString>("log"); // "seconds:scope:state" separated by spaces
    QTest::addColumn<QString>("scope");
    QTest::addColumn<int>("transitions");
    QTest::addColumn<double>("openSeconds");
    QTest::addColumn<QString>("finalState");

    const QString cycle =
        QStringLiteral("0:app:open 30:app:half-open 31:app:closed 60:app:open 70:user:bob:open");
    QTest::newRow("app: two trips, open at the end (t=100)")
        << cycle << QStringLiteral("app") << 4 << 70.0 << QStringLiteral("open");
    QTest::newRow("user scope logged separately")
        << cycle << QStringLiteral("user:bob") << 1 << 30.0 << QStringLiteral("open");
    QTest::newRow("repeated state is not a transition")
        << QStringLiteral("0:app:closed 5:app:closed 10:app:soft-open 12:app:soft-open "
                          "20:app:closed")
        << QStringLiteral("app") << 2 << 0.0 << QStringLiteral("closed");
    QTest::newRow("state names are case-insensitive")
        << QStringLiteral("0:app:OPEN 40:app:Half-Open") << QStringLiteral("app") << 2 << 40.0
        << QStringLiteral("half-open");
}

void TestBreakers::loggedTransitionsSummarised()
{
    QFETCH(QString, log);
    QFETCH(QString, scope);
    QFETCH(int, transitions);
    QFETCH(double, openSeconds);
    QFETCH(QString, finalState);

    BreakerTracker tracker;
    const QStringList entries = log.split(QLatin1Char(' '));
    for (const QString &entry : entries) {
        const qsizetype first = entry.indexOf(QLatin1Char(':'));
        const qsizetype last = entry.lastIndexOf(QLatin1Char(':'));
        const qint64 seconds = entry.left(first).toLongLong();
        feed(tracker, {loggedBreaker(kT0 + seconds * 1000, entry.mid(first + 1, last - first - 1),
                                     entry.mid(last + 1))});
    }
    const QList<BreakerSummary> summaries = tracker.summaries(kT0 + 100000);
    const auto summary = summaryOf(summaries, scope, QStringLiteral("logged"));
    QVERIFY(summary);
    QCOMPARE(summary->transitions, transitions);
    QCOMPARE(summary->openSeconds, openSeconds);
    QCOMPARE(summary->finalState, finalState);
    // Logged breakers never create reconstructed ones.
    for (const BreakerSummary &each : summaries)
        QCOMPARE(each.source, QStringLiteral("logged"));
}

QTEST_GUILESS_MAIN(TestBreakers)
#include "tst_breakers.moc"
