// The what-if simulation (issue 33.1): the workload rules (what is a retry, what is lost), the
// simulated client's behaviour (pace, concurrency, Retry-After, retries, backoff, jitter,
// breaker, background cap), and the promise the command makes: its sends, replayed by the
// engine as `report` replays a log, are predicted throttled exactly where whatif said 429,
// event by event, under every built-in algorithm.

#include "engine/throttleengine.h"
#include "policy/policy.h"
#include "whatif/behaviour.h"
#include "whatif/pacesweep.h"
#include "whatif/simulation.h"
#include "whatif/whatifformat.h"
#include "whatif/workload.h"

#include <QJsonObject>
#include <QTest>

#include <map>
#include <set>

Q_DECLARE_METATYPE(std::vector<ts::RequestEvent>)

using namespace ts;
using namespace ts::whatif;

namespace {

constexpr qint64 kBase = 1771454640000; // 2026-02-18T22:44:00Z

RequestEvent call(const QString &identity, qint64 ts, int status,
                  const QString &url = u"/v1/items"_qs)
{
    RequestEvent event;
    event.service = u"fabric"_qs;
    event.identity = identity;
    event.method = u"GET"_qs;
    event.url = u"https://api.fabric.microsoft.com"_qs + url;
    event.tsMs = ts;
    event.status = status;
    event.durationMs = 80;
    return event;
}

Workload workloadOf(const std::vector<RequestEvent> &events)
{
    WorkloadBuilder builder;
    for (const RequestEvent &event : events)
        builder.add(event);
    return builder.finish();
}

Policy policyFromJson(const QByteArray &json)
{
    QString error;
    auto policy = Policy::fromJsonBytes(json, u"test"_qs, &error);
    Q_ASSERT_X(policy, "policyFromJson", qPrintable(error));
    return *policy;
}

// One identity's steady work: n GETs of distinct URLs, all answered 200, gapMs apart.
std::vector<RequestEvent> steadyWork(const QString &identity, int n, qint64 gapMs,
                                     qint64 startMs = kBase)
{
    std::vector<RequestEvent> events;
    for (int i = 0; i < n; ++i)
        events.push_back(
            call(identity, startMs + i * gapMs, 200, u"/v1/items/"_qs + QString::number(i)));
    return events;
}

// A small fixed-window policy for the behaviour tests: 10 requests per 10 s per identity.
PolicySet smallWindow(bool chargeThrottled = true)
{
    PolicySet set;
    set.add(policyFromJson(QStringLiteral(R"({"name": "small", "match": {"service": "^fabric$"},
        "limits": [{"name": "ten", "key": "identity", "algorithm": "fixed-window", "capacity": 10,
                    "windowSeconds": 10, "chargeThrottled": %1}]})")
                               .arg(chargeThrottled ? u"true"_qs : u"false"_qs)
                               .toUtf8()));
    return set;
}

struct Run
{
    SimulationResult result;
    std::vector<RequestEvent> sends;
};

Run simulate(const Workload &work, const PolicySet &policies, const Behaviour &behaviour)
{
    Run run;
    Simulation simulation(work, policies, behaviour);
    simulation.setSendObserver([&run](const RequestEvent &event) { run.sends.push_back(event); });
    run.result = simulation.run();
    return run;
}

} // namespace

class TestWhatIf : public QObject
{
    Q_OBJECT

private slots:
    void workloadRules_data();
    void workloadRules();
    void replayPredictsExactlyTheWhatIfThrottles_data();
    void replayPredictsExactlyTheWhatIfThrottles();
    void paceSpacesEverySend();
    void obeyingRetryAfterSendsNothingBeforeIt();
    void retriesAndLostOperations_data();
    void retriesAndLostOperations();
    void backoffAndJitter();
    void concurrencyHoldsSlotsForTheServiceTime();
    void breakerRefusesAttemptsWhileOpen();
    void backgroundCapKeepsItsShare();
    void deterministic();
    void sweepFindsTheFastestPaceWithinTheShare();
    void parsers_data();
    void parsers();
    void outputNamesBothRuns();
};

void TestWhatIf::workloadRules_data()
{
    QTest::addColumn<std::vector<RequestEvent>>("events");
    QTest::addColumn<int>("operations");
    QTest::addColumn<int>("retries");
    QTest::addColumn<int>("lost");

    const QString a = u"alpha"_qs;
    auto withId = [](RequestEvent e, const QString &id, int attempt = -1) {
        e.operationId = id;
        e.attempt = attempt;
        return e;
    };
    QTest::newRow("a 429 then the same request: one operation, one retry")
        << std::vector<RequestEvent>{call(a, kBase, 429), call(a, kBase + 500, 200)} << 1 << 1 << 0;
    QTest::newRow("a 503 then the same request")
        << std::vector<RequestEvent>{call(a, kBase, 503), call(a, kBase + 500, 200)} << 1 << 1 << 0;
    QTest::newRow("a success then the same request: new work")
        << std::vector<RequestEvent>{call(a, kBase, 200), call(a, kBase + 500, 200)} << 2 << 0 << 0;
    QTest::newRow("the same request 11 minutes after its 429: new work")
        << std::vector<RequestEvent>{call(a, kBase, 429), call(a, kBase + 11 * 60000, 200)} << 2
        << 0 << 1;
    QTest::newRow("an operationId retried after a 429 under another URL")
        << std::vector<RequestEvent>{withId(call(a, kBase, 429), u"op1"_qs),
                                     withId(call(a, kBase + 500, 200, u"/v1/other"_qs), u"op1"_qs)}
        << 1 << 1 << 0;
    QTest::newRow("an operationId that succeeded, sent again: new work")
        << std::vector<RequestEvent>{withId(call(a, kBase, 200), u"op1"_qs),
                                     withId(call(a, kBase + 500, 200), u"op1"_qs)}
        << 2 << 0 << 0;
    QTest::newRow("attempt 1 without its first attempt in the log: a retry, still work")
        << std::vector<RequestEvent>{withId(call(a, kBase, 200), u"op9"_qs, 1)} << 1 << 1 << 0;
    QTest::newRow("refused three times: lost")
        << std::vector<RequestEvent>{call(a, kBase, 429), call(a, kBase + 100, 429),
                                     call(a, kBase + 200, 429)}
        << 1 << 2 << 1;
    QTest::newRow("other identities' requests are their own work")
        << std::vector<RequestEvent>{call(a, kBase, 429), call(u"bravo"_qs, kBase + 100, 200)} << 2
        << 0 << 1;
    QTest::newRow("a 404 is the work's answer, not a loss")
        << std::vector<RequestEvent>{call(a, kBase, 404)} << 1 << 0 << 0;
}

void TestWhatIf::workloadRules()
{
    QFETCH(std::vector<RequestEvent>, events);
    QFETCH(int, operations);
    QFETCH(int, retries);
    QFETCH(int, lost);
    const Workload work = workloadOf(events);
    const RunTotals actual = work.actualTotals();
    QCOMPARE(work.operationCount(), qint64(operations));
    QCOMPARE(actual.operations, qint64(operations));
    QCOMPARE(actual.retries, qint64(retries));
    QCOMPARE(actual.lostOperations, qint64(lost));
    QCOMPARE(actual.requests, qint64(events.size()));
    QCOMPARE(actual.startMs, events.front().tsMs);
    QCOMPARE(actual.finishMs, events.back().tsMs + 80);
}

void TestWhatIf::replayPredictsExactlyTheWhatIfThrottles_data()
{
    QTest::addColumn<QString>("policy");
    QTest::addColumn<QString>("service");
    QTest::addColumn<QString>("url");
    QTest::addColumn<double>("pace");
    QTest::addColumn<bool>("obey");
    QTest::addColumn<int>("concurrency");

    const QString fabric = u"https://api.fabric.microsoft.com/v1/workspaces/w/items"_qs;
    const QString onenote = u"https://graph.microsoft.com/v1.0/me/onenote/pages"_qs;
    QTest::newRow("fabric fixed window, overrun")
        << u"fabric"_qs << u"fabric"_qs << fabric << 8.0 << false << 6;
    QTest::newRow("fabric, obeying Retry-After")
        << u"fabric"_qs << u"fabric"_qs << fabric << 8.0 << true << 6;
    QTest::newRow("onenote sliding windows + concurrency")
        << u"graph-onenote-delegated"_qs << u"graph"_qs << onenote << 4.0 << false << 6;
    QTest::newRow("onenote, obeying")
        << u"graph-onenote-delegated"_qs << u"graph"_qs << onenote << 4.0 << true << 6;
    QTest::newRow("nginx leaky bucket")
        << u"nginx"_qs << u"nginx"_qs << u"/api/orders"_qs << 30.0 << false << 6;
    QTest::newRow("arm token bucket")
        << u"arm"_qs << u"arm"_qs
        << u"https://management.azure.com/subscriptions/s1/resourceGroups"_qs << 60.0 << false << 6;
    QTest::newRow("service bus credits")
        << u"servicebus-standard"_qs << u"servicebus"_qs
        << u"https://ns1.servicebus.windows.net/q/messages"_qs << 1500.0 << false << 400;
}

void TestWhatIf::replayPredictsExactlyTheWhatIfThrottles()
{
    QFETCH(QString, policy);
    QFETCH(QString, service);
    QFETCH(QString, url);
    QFETCH(double, pace);
    QFETCH(bool, obey);
    QFETCH(int, concurrency);
    std::vector<RequestEvent> events;
    for (const QString &identity : {u"alice@contoso.com"_qs, u"bob@contoso.com"_qs}) {
        for (int i = 0; i < 900; ++i) {
            RequestEvent event =
                call(identity, kBase + i * 50 + (identity.startsWith(u'b') ? 7 : 0), 200);
            event.service = service;
            event.app = u"note-bridge"_qs;
            event.url = url + u"/"_qs + QString::number(i);
            event.method = i % 5 == 0 ? u"POST"_qs : u"GET"_qs;
            event.durationMs = 30 + (i * 17) % 400;
            events.push_back(event);
        }
    }
    std::stable_sort(events.begin(), events.end(),
                     [](const RequestEvent &a, const RequestEvent &b) { return a.tsMs < b.tsMs; });
    PolicySet set;
    QString error;
    QVERIFY2(set.load(policy, &error), qPrintable(error));
    Behaviour behaviour;
    behaviour.pacePerSecond = pace;
    behaviour.obeyRetryAfter = obey;
    behaviour.concurrency = concurrency;
    const Run run = simulate(workloadOf(events), set, behaviour);
    QVERIFY(run.result.whatif.throttles > 0);

    // The report's replay of the sends: every send is predicted throttled exactly when whatif
    // answered it 429, and no throttle is left unexplained.
    ThrottleEngine::Options options;
    options.recordPlotData = false;
    ThrottleEngine replay(set, options);
    qint64 previous = 0;
    for (const RequestEvent &send : run.sends) {
        QVERIFY(send.tsMs >= previous); // a log in time order
        previous = send.tsMs;
        const ThrottleEngine::Verdict verdict = replay.add(send);
        QVERIFY(verdict.matched);
        if (verdict.predictedThrottled != (send.status == 429))
            QFAIL(qPrintable(QStringLiteral("%1 at %2: status %3, replay predicted %4")
                                 .arg(send.identity)
                                 .arg(send.tsMs)
                                 .arg(send.status)
                                 .arg(verdict.predictedThrottled)));
    }
    QCOMPARE(replay.throttleSummary().total, run.result.whatif.throttles);
    QCOMPARE(replay.throttleSummary().byCause.value(u"limit"_qs) +
                 replay.throttleSummary().byCause.value(u"concurrency"_qs),
             run.result.whatif.throttles);
}

void TestWhatIf::paceSpacesEverySend()
{
    const Workload work = workloadOf(steadyWork(u"alpha"_qs, 50, 10));
    Behaviour behaviour;
    behaviour.pacePerSecond = 3; // 333.3 ms apart
    behaviour.concurrency = 4;
    const Run run = simulate(work, smallWindow(), behaviour);
    QCOMPARE(run.result.whatif.requests, qint64(run.sends.size()));
    for (size_t i = 1; i < run.sends.size(); ++i)
        QVERIFY(run.sends[i].tsMs - run.sends[i - 1].tsMs >= 333);
    // 3 a second against 10 per 10 s: the limit is overrun and some are refused.
    QVERIFY(run.result.whatif.throttles > 0);
    // At 1 a second, never (ten sends per window at most).
    behaviour.pacePerSecond = 1;
    QCOMPARE(simulate(work, smallWindow(), behaviour).result.whatif.throttles, 0);
}

void TestWhatIf::obeyingRetryAfterSendsNothingBeforeIt()
{
    const Workload work = workloadOf(steadyWork(u"alpha"_qs, 60, 10));
    Behaviour behaviour;
    behaviour.pacePerSecond = 20;
    behaviour.obeyRetryAfter = true;
    behaviour.retries = 10;
    const Run run = simulate(work, smallWindow(), behaviour);
    qint64 holdUntil = 0;
    int refused = 0;
    for (const RequestEvent &send : run.sends) {
        QVERIFY2(send.tsMs >= holdUntil, qPrintable(QString::number(send.tsMs - holdUntil)));
        if (send.status == 429) {
            ++refused;
            holdUntil = send.tsMs + qint64(std::llround(send.retryAfter.toDouble() * 1000));
        }
    }
    // One refusal per window at most: the client waits for the window to end each time.
    QVERIFY(refused > 0);
    QVERIFY(refused <= 6);
    QCOMPARE(run.result.whatif.lostOperations, 0);
    // Not obeying, the same pace retries into the closed window and loses work.
    behaviour.obeyRetryAfter = false;
    behaviour.retries = 3;
    const Run blind = simulate(work, smallWindow(), behaviour);
    QVERIFY(blind.result.whatif.throttles > refused);
}

void TestWhatIf::retriesAndLostOperations_data()
{
    QTest::addColumn<int>("retries");
    QTest::newRow("no retries") << 0;
    QTest::newRow("two retries") << 2;
    QTest::newRow("five retries") << 5;
}

void TestWhatIf::retriesAndLostOperations()
{
    QFETCH(int, retries);
    const Workload work = workloadOf(steadyWork(u"alpha"_qs, 30, 10));
    Behaviour behaviour;
    behaviour.pacePerSecond = 50;
    behaviour.concurrency = 1;
    behaviour.retries = retries;
    behaviour.backoff.baseMs = 100;
    const Run run = simulate(work, smallWindow(), behaviour);
    std::map<QString, int> attempts;
    std::map<QString, bool> lastRefused;
    for (const RequestEvent &send : run.sends) {
        QCOMPARE(send.attempt, attempts[send.url]);
        ++attempts[send.url];
        lastRefused[send.url] = send.status == 429;
    }
    qint64 lost = 0;
    for (const auto &[url, count] : attempts) {
        QVERIFY(count <= retries + 1);
        lost += lastRefused[url] && count == retries + 1 ? 1 : 0;
    }
    QCOMPARE(run.result.whatif.lostOperations, lost);
    QVERIFY(lost > 0);
    QCOMPARE(qint64(attempts.size()), 30);
    QCOMPARE(run.result.whatif.retries, run.result.whatif.requests - 30);
}

void TestWhatIf::backoffAndJitter()
{
    Backoff exp;
    exp.kind = Backoff::Kind::Exponential;
    exp.baseMs = 1000;
    exp.capMs = 5000;
    QCOMPARE(exp.delayMs(1), 1000);
    QCOMPARE(exp.delayMs(2), 2000);
    QCOMPARE(exp.delayMs(3), 4000);
    QCOMPARE(exp.delayMs(4), 5000);
    QCOMPARE(exp.delayMs(60), 5000);

    const Workload work = workloadOf(steadyWork(u"alpha"_qs, 30, 10));
    Behaviour behaviour;
    behaviour.pacePerSecond = 50;
    behaviour.concurrency = 1;
    behaviour.retries = 1;
    behaviour.backoff.baseMs = 1000;
    // Without jitter a retry follows its refusal after exactly the backoff.
    const Run plain = simulate(work, smallWindow(), behaviour);
    std::map<QString, qint64> refusedAt;
    int retriesSeen = 0;
    for (const RequestEvent &send : plain.sends) {
        if (send.attempt == 1) {
            QCOMPARE(send.tsMs - refusedAt[send.url], 1000);
            ++retriesSeen;
        } else if (send.status == 429) {
            refusedAt[send.url] = send.tsMs;
        }
    }
    QVERIFY(retriesSeen > 0);
    // With jitter the delays spread over [750, 1250] ms, and the same seed repeats them.
    behaviour.jitterSeed = 42;
    const Run jittered = simulate(work, smallWindow(), behaviour);
    std::set<qint64> delays;
    for (const RequestEvent &send : jittered.sends) {
        if (send.attempt == 0 && send.status == 429)
            refusedAt[send.url] = send.tsMs;
        if (send.attempt == 1) {
            const qint64 delay = send.tsMs - refusedAt[send.url];
            QVERIFY2(delay >= 750 && delay <= 1250 + 20, qPrintable(QString::number(delay)));
            delays.insert(delay);
        }
    }
    QVERIFY(delays.size() > 2);
    const Run again = simulate(work, smallWindow(), behaviour);
    QCOMPARE(again.sends.size(), jittered.sends.size());
    for (size_t i = 0; i < again.sends.size(); ++i)
        QCOMPARE(again.sends[i].tsMs, jittered.sends[i].tsMs);
}

void TestWhatIf::concurrencyHoldsSlotsForTheServiceTime()
{
    // 40 operations of 1 s each, unpaced: with 4 slots they go in waves of 4 a second.
    std::vector<RequestEvent> events = steadyWork(u"alpha"_qs, 40, 10);
    for (RequestEvent &event : events)
        event.durationMs = 1000;
    const Workload work = workloadOf(events);
    QCOMPARE(work.identities.front().peakConcurrency, 40); // all in flight at once in the log
    Behaviour behaviour;
    behaviour.concurrency = 4;
    PolicySet none;
    const Run run = simulate(work, none, behaviour);
    std::map<qint64, int> perInstant;
    for (const RequestEvent &send : run.sends)
        ++perInstant[send.tsMs - kBase];
    QCOMPARE(perInstant.size(), size_t(10));
    for (const auto &[offset, sends] : perInstant) {
        QCOMPARE(offset % 1000, 0);
        QCOMPARE(sends, 4);
    }
    QCOMPARE(run.result.whatif.finishMs - run.result.whatif.startMs, 10000);
}

void TestWhatIf::breakerRefusesAttemptsWhileOpen()
{
    const Workload work = workloadOf(steadyWork(u"alpha"_qs, 200, 10));
    Behaviour behaviour;
    behaviour.pacePerSecond = 40;
    behaviour.retries = 2;
    auto breaker = BreakerModel::pollyV8();
    breaker.minimumThroughput = 5; // open soon enough for a small log
    breaker.breakDurationMs = 2000;
    breaker.retryAfterExtendsBreak = false;
    behaviour.breaker = breaker;
    const Run run = simulate(work, smallWindow(), behaviour);
    QVERIFY(run.result.whatif.shortCircuited > 0);
    // Attempts the breaker refused were not sent: fewer sends than without it.
    behaviour.breaker.reset();
    const Run without = simulate(work, smallWindow(), behaviour);
    QCOMPARE(without.result.whatif.shortCircuited, 0);
    QVERIFY(run.result.whatif.requests < without.result.whatif.requests);
}

void TestWhatIf::backgroundCapKeepsItsShare()
{
    // Background work logged first, foreground after it: uncapped, the background goes first.
    std::vector<RequestEvent> events;
    for (int i = 0; i < 200; ++i) {
        RequestEvent event = call(u"alpha"_qs, kBase + i, 200, u"/v1/x/"_qs + QString::number(i));
        event.lane = i < 100 ? u"background"_qs : u"foreground"_qs;
        events.push_back(event);
    }
    const Workload work = workloadOf(events);
    Behaviour behaviour;
    behaviour.pacePerSecond = 1;
    behaviour.concurrency = 1;
    PolicySet none;
    const auto foregroundInFirstMinute = [&](const Run &run) {
        int count = 0;
        for (const RequestEvent &send : run.sends)
            count += send.tsMs < kBase + 60000 && send.lane == u"foreground" ? 1 : 0;
        return count;
    };
    QCOMPARE(foregroundInFirstMinute(simulate(work, none, behaviour)), 0);
    behaviour.backgroundCapPercent = 25;
    const Run capped = simulate(work, none, behaviour);
    // One a second for a minute, the background held to a quarter while foreground work waits.
    const int foreground = foregroundInFirstMinute(capped);
    QVERIFY2(foreground >= 44 && foreground <= 46, qPrintable(QString::number(foreground)));
    QCOMPARE(capped.result.whatif.requests, 200);
}

void TestWhatIf::deterministic()
{
    std::vector<RequestEvent> events = steadyWork(u"alpha"_qs, 300, 5);
    const std::vector<RequestEvent> more = steadyWork(u"bravo"_qs, 300, 5, kBase + 3);
    events.insert(events.end(), more.begin(), more.end());
    std::stable_sort(events.begin(), events.end(),
                     [](const RequestEvent &a, const RequestEvent &b) { return a.tsMs < b.tsMs; });
    const Workload work = workloadOf(events);
    Behaviour behaviour;
    behaviour.pacePerSecond = 7;
    behaviour.jitterSeed = 3;
    const Run first = simulate(work, smallWindow(), behaviour);
    const Run second = simulate(work, smallWindow(), behaviour);
    QCOMPARE(first.sends.size(), second.sends.size());
    for (size_t i = 0; i < first.sends.size(); ++i) {
        QCOMPARE(first.sends[i].identity, second.sends[i].identity);
        QCOMPARE(first.sends[i].tsMs, second.sends[i].tsMs);
        QCOMPARE(first.sends[i].status, second.sends[i].status);
    }
    QCOMPARE(resultToJson(first.result), resultToJson(second.result));
}

void TestWhatIf::sweepFindsTheFastestPaceWithinTheShare()
{
    // alpha has 200 operations against 10 per 10 s; bravo 5, which never meet the limit.
    std::vector<RequestEvent> events = steadyWork(u"alpha"_qs, 200, 10);
    const std::vector<RequestEvent> few = steadyWork(u"bravo"_qs, 5, 10, kBase + 1);
    events.insert(events.end(), few.begin(), few.end());
    std::stable_sort(events.begin(), events.end(),
                     [](const RequestEvent &a, const RequestEvent &b) { return a.tsMs < b.tsMs; });
    const Workload work = workloadOf(events);
    Behaviour behaviour;
    behaviour.concurrency = 1;
    behaviour.retries = 0;
    SweepOptions options;
    std::vector<int> announced;
    const SweepResult sweep =
        sweepPace(work, smallWindow(), behaviour, options,
                  [&](const SweepStep &step) { announced.push_back(step.index); });
    QCOMPARE(announced.size(), sweep.steps.size());
    QVERIFY(sweep.steps.size() >= 3);
    QVERIFY(!sweep.steps.front().byIdentity.front().pacePerSecond); // step 0: unpaced
    QVERIFY(sweep.steps.front().byIdentity.front().totals.throttles > 0);
    const IdentitySweep &alpha = sweep.byIdentity.at(0);
    const IdentitySweep &bravo = sweep.byIdentity.at(1);
    QVERIFY(bravo.unpaced);
    QVERIFY(!bravo.fastestPace);
    QVERIFY(alpha.fastestPace);
    QVERIFY(alpha.advice);
    QCOMPARE(alpha.advice->maxRatePerSecond, 1.0); // 10 per 10 s
    // The pace found keeps every request within the limit, 5 % faster does not, and it is
    // the limits' own bound to within the search's 2 %.
    QVERIFY2(*alpha.fastestPace >= 0.98 && *alpha.fastestPace <= 1.05,
             qPrintable(QString::number(*alpha.fastestPace)));
    QCOMPARE(alpha.atFastest.totals.throttles, 0);
    behaviour.pacePerSecond = *alpha.fastestPace;
    QCOMPARE(simulate(work, smallWindow(), behaviour).result.byIdentity.at(0).whatif.throttles, 0);
    behaviour.pacePerSecond = *alpha.fastestPace * 1.05;
    QVERIFY(simulate(work, smallWindow(), behaviour).result.byIdentity.at(0).whatif.throttles > 0);

    // Allowed 10 % of 429s, a faster pace qualifies.
    options.max429Percent = 10;
    behaviour.pacePerSecond.reset();
    const SweepResult lenient = sweepPace(work, smallWindow(), behaviour, options);
    QVERIFY(lenient.byIdentity.at(0).fastestPace);
    QVERIFY(*lenient.byIdentity.at(0).fastestPace > *alpha.fastestPace * 1.05);
    QVERIFY(lenient.byIdentity.at(0).atFastest.refusedShare() <= 0.10);
    QVERIFY(sweepToText(lenient).contains(u"alpha: at most "_qs));
    QVERIFY(sweepStepToText(lenient.steps.front(), work).startsWith(u"step 0: alpha unpaced: "_qs));
}

void TestWhatIf::parsers_data()
{
    QTest::addColumn<QString>("pace");
    QTest::addColumn<double>("perSecond");
    QTest::newRow("per minute") << u"110/min"_qs << 110.0 / 60;
    QTest::newRow("per second") << u"2.5/s"_qs << 2.5;
    QTest::newRow("per hour") << u"3600/h"_qs << 1.0;
    QTest::newRow("bare number") << u"4"_qs << 4.0;
    QTest::newRow("zero") << u"0/s"_qs << -1.0;
    QTest::newRow("unit unknown") << u"3/week"_qs << -1.0;
    QTest::newRow("not a number") << u"fast"_qs << -1.0;
}

void TestWhatIf::parsers()
{
    QFETCH(QString, pace);
    QFETCH(double, perSecond);
    QString error;
    const auto parsed = parsePace(pace, &error);
    if (perSecond < 0) {
        QVERIFY(!parsed);
        QVERIFY(error.contains(u"--pace"));
        return;
    }
    QVERIFY2(parsed, qPrintable(error));
    QCOMPARE(*parsed, perSecond);

    QCOMPARE(formatPace(110.0 / 60), u"110/min"_qs);
    QCOMPARE(formatPace(109.99 / 60), u"109/min"_qs); // never rounded up
    QCOMPARE(formatPace(25.55), u"25.5/s"_qs);
    QCOMPARE(formatPace(1.0 / 60), u"1/min"_qs);
    QCOMPARE(formatPace(1.0 / 3600), u"1/h"_qs);
    QVERIFY(Backoff::parse(u"exp:1:60"_qs, &error));
    QVERIFY(Backoff::parse(u"fixed:0.5"_qs, &error));
    QVERIFY(!Backoff::parse(u"exp:0"_qs, &error));
    QVERIFY(!Backoff::parse(u"exp:5:1"_qs, &error));
    QVERIFY(!Backoff::parse(u"linear:1"_qs, &error));
    QVERIFY(parseBreaker(u"polly-v8"_qs, &error));
    QVERIFY(!parseBreaker(u"/no/such/file.json"_qs, &error));
}

void TestWhatIf::outputNamesBothRuns()
{
    std::vector<RequestEvent> events;
    for (int i = 0; i < 30; ++i)
        events.push_back(
            call(u"alpha"_qs, kBase + i * 100, i % 3 == 0 ? 429 : 200,
                 u"/v1/items/"_qs + QString::number(i / 3 * 3 + (i % 3 == 0 ? 0 : i))));
    const Workload work = workloadOf(events);
    Behaviour behaviour;
    behaviour.pacePerSecond = 110.0 / 60;
    behaviour.obeyRetryAfter = true;
    const Run run = simulate(work, smallWindow(), behaviour);
    const QJsonObject json = resultToJsonObject(run.result);
    for (const QString &side : {u"actual"_qs, u"whatif"_qs}) {
        const QJsonObject object = json.value(side).toObject();
        for (const QString &key : {u"requests"_qs, u"throttles"_qs, u"retries"_qs,
                                   u"lostOperations"_qs, u"finish"_qs, u"makespanSeconds"_qs}) {
            QVERIFY2(object.contains(key), qPrintable(side + u'.' + key));
            QVERIFY2(object.value(u"byIdentity"_qs)
                         .toObject()
                         .value(u"alpha"_qs)
                         .toObject()
                         .contains(key),
                     qPrintable(side + u".byIdentity.alpha."_qs + key));
        }
    }
    QCOMPARE(json.value(u"actual"_qs).toObject().value(u"throttles"_qs).toInteger(), 10);
    QCOMPARE(json.value(u"behaviour"_qs).toObject().value(u"obeyRetryAfter"_qs).toBool(), true);
    const QString text = resultToText(run.result);
    QVERIFY2(text.contains(u"  actual: 3.0 s, 10 429s"_qs), qPrintable(text));
    QVERIFY2(text.contains(u"  paced at 110/min obeying Retry-After: "_qs), qPrintable(text));
}

QTEST_GUILESS_MAIN(TestWhatIf)
#include "tst_whatif.moc"
