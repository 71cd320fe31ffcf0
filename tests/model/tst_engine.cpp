// The reconstruction engine against the documentation's own examples (Fabric's 60 s timeline,
// OneNote's 3 x 2 limits with the maximum wait, Service Bus credits, $batch sub-responses) and
// against logs simulated from a policy by an independent reference limiter, where predicted
// and observed throttles must agree one for one and accepted usage never exceeds capacity.

#include "engine/limiterstate.h"
#include "engine/throttleengine.h"
#include "policy/policy.h"

#include <QRandomGenerator>
#include <QTest>

#include <algorithm>
#include <deque>
#include <random>

using namespace ts;

namespace {

// 2026-02-18T22:44:00Z, a minute boundary.
constexpr qint64 kBase = 1771454640000;

RequestEvent request(const QString &service, const QString &identity, const QString &url,
                     qint64 tsMs, int status = 200)
{
    RequestEvent e;
    e.service = service;
    e.identity = identity;
    e.url = url;
    e.method = QStringLiteral("GET");
    e.tsMs = tsMs;
    e.status = status;
    if (status == 429)
        e.errorCode = QStringLiteral("RequestBlocked");
    return e;
}

RequestEvent fabric(qint64 tsMs, int status = 200,
                    const QString &identity = QStringLiteral("sp-migrator"))
{
    return request(QStringLiteral("fabric"), identity,
                   QStringLiteral("https://api.fabric.microsoft.com/v1/workspaces"), tsMs, status);
}

RequestEvent onenote(qint64 tsMs, double durationMs = 50, int status = 200,
                     const QString &identity = QStringLiteral("alice@contoso.com"))
{
    RequestEvent e =
        request(QStringLiteral("graph"), identity,
                QStringLiteral("https://graph.microsoft.com/v1.0/me/onenote/pages"), tsMs, status);
    e.app = QStringLiteral("note-bridge");
    e.durationMs = durationMs;
    if (status == 429)
        e.errorCode = QStringLiteral("20166");
    return e;
}

Policy builtin(const char *name)
{
    auto policy = PolicySet::builtinPolicy(QString::fromLatin1(name));
    Q_ASSERT(policy);
    return *policy;
}

PolicySet only(const Policy &policy)
{
    PolicySet set;
    set.add(policy);
    return set;
}

const ScopeSummary *findScope(const QList<ScopeSummary> &scopes, const QString &limit,
                              const QString &key = {})
{
    for (const ScopeSummary &s : scopes) {
        if (s.limit == limit && (key.isEmpty() || s.key == key))
            return &s;
    }
    return nullptr;
}

// ---- independent reference limiters for simulated logs ----------------------------------------
// Deliberately naive (full history scans, no shared code with the engine).

struct Reference
{
    Algorithm algorithm;
    double capacity = 0;
    qint64 windowMs = 0;
    double refillPerSecond = 0;
    qint64 milliRate = 0;
    qint64 burstMilli = 0;
    bool chargeThrottled = true;

    struct Charged
    {
        qint64 t;
        qint64 end;
        double cost;
    };
    std::vector<Charged> history;
    // token bucket (micro-tokens), leaky bucket (nginx node)
    bool tokensStarted = false;
    qint64 tokens = 0;
    qint64 lastRefill = 0;
    bool node = false;
    qint64 excess = 0;
    qint64 last = 0;

    bool decide(qint64 t, double cost, qint64 durationMs)
    {
        bool room = true;
        qint64 leakyNext = 0;
        switch (algorithm) {
        case Algorithm::FixedWindow:
        case Algorithm::Credits: {
            double used = 0;
            for (const Charged &c : history) {
                if (c.t / windowMs == t / windowMs)
                    used += c.cost;
            }
            room = used + cost <= capacity;
            break;
        }
        case Algorithm::SlidingWindow: {
            double used = 0;
            for (const Charged &c : history) {
                if (c.t > t - windowMs)
                    used += c.cost;
            }
            room = used + cost <= capacity;
            break;
        }
        case Algorithm::TokenBucket: {
            const qint64 cap = qint64(capacity * 1e6);
            if (!tokensStarted)
                tokens = cap;
            else
                tokens = std::min(cap, tokens + (t - lastRefill) * qint64(refillPerSecond * 1000));
            tokensStarted = true;
            lastRefill = t;
            room = tokens >= qint64(cost * 1e6);
            break;
        }
        case Algorithm::LeakyBucket:
            leakyNext =
                node ? std::max<qint64>(0, excess - milliRate * (t - last) / 1000 + 1000) : 0;
            room = leakyNext <= burstMilli;
            break;
        case Algorithm::Concurrency: {
            qint64 inFlight = 0;
            for (const Charged &c : history) {
                if (c.end > t)
                    ++inFlight;
            }
            room = double(inFlight) + 1 <= capacity;
            break;
        }
        case Algorithm::Observed:
            break;
        }
        if (room || chargeThrottled) {
            history.push_back({t, t + durationMs, cost});
            if (algorithm == Algorithm::TokenBucket)
                tokens -= qint64(cost * 1e6);
            if (algorithm == Algorithm::LeakyBucket) {
                excess = leakyNext;
                last = t;
                node = true;
            }
        }
        return room;
    }
};

} // namespace

class TestEngine : public QObject
{
    Q_OBJECT

private slots:
    void fabricTimeline_data();
    void fabricTimeline();
    void oneNoteMaximumWait_data();
    void oneNoteMaximumWait();
    void oneNoteDelegatedVersusApp();
    void fabricApiGroupsChargeTheirOwnLimit_data();
    void fabricApiGroupsChargeTheirOwnLimit();
    void oneNoteAndOtherGraphCallsApart();
    void serviceBusCredits_data();
    void serviceBusCredits();
    void batchSubResponsesCountedOneByOne();
    void observedVersusPredicted_data();
    void observedVersusPredicted();
    void windowPhaseFromBlockedUntil();
    void windowEndLearnedOncePerWindow();
    void nextSafeSendAbsentWhenNothingExhausted();
    void nearLimitAlertsCoalesced();
    void nearLimitEpisodeSpansShortWindows();
    void throttleTaxonomy();
    void premiumReportsObservedThrottles();
    void simulatedLogReconstructedExactly_data();
    void simulatedLogReconstructedExactly();
    void rerunWithAnotherPolicySet();
    void lateEventsClamped();
    void seriesStayBounded();
    void longSlidingWindowBoundedAndNeverEarly_data();
    void longSlidingWindowBoundedAndNeverEarly();
    void slidingRoomMatchesAFullScan_data();
    void slidingRoomMatchesAFullScan();
    void snapshotParallelToScopes();
    void observedPercentageBesideReconstructed();
};

void TestEngine::fabricTimeline_data()
{
    QTest::addColumn<QString>("align");
    QTest::addColumn<bool>("chargeThrottled");
    QTest::newRow("clock, throttled requests count") << "clock" << true;
    QTest::newRow("first-request, throttled requests count") << "first-request" << true;
    QTest::newRow("first-request, throttled requests free") << "first-request" << false;
}

void TestEngine::fabricTimeline()
{
    // The documentation's timeline with a 300-request bucket: second 0 the window opens, second
    // 1 300 requests exhaust it, seconds 2-59 everything gets 429, second 60 it is full again.
    QFETCH(QString, align);
    QFETCH(bool, chargeThrottled);
    Policy policy = builtin("fabric");
    policy.limits[0].capacity = 300;
    policy.limits[0].align = align == u"clock" ? WindowAlign::Clock : WindowAlign::FirstRequest;
    policy.chargeThrottled = chargeThrottled;

    ThrottleEngine engine(only(policy));
    engine.add(fabric(kBase)); // second 0: the window opens
    for (int i = 0; i < 299; ++i)
        engine.add(fabric(kBase + 1000 + i));
    for (int second = 2; second <= 59; ++second)
        engine.add(fabric(kBase + second * 1000, 429));

    auto scopes = engine.scopes();
    QCOMPARE(scopes.size(), 1);
    ScopeSummary s = scopes.first();
    QCOMPARE(s.service, QStringLiteral("fabric"));
    QCOMPARE(s.limit, QStringLiteral("platform"));
    QCOMPARE(s.key, QStringLiteral("sp-migrator"));
    QCOMPARE(s.algorithm, QStringLiteral("fixed-window"));
    QCOMPARE(s.requests, 358);
    QCOMPARE(s.predictedThrottled, 58);
    QCOMPARE(s.observedThrottled, 58);
    // Usage as the limiter counts it: the 58 throttled requests count too where the policy
    // charges them (the count that predicted them); the accepted layer stops at the capacity.
    const double counted = chargeThrottled ? 358.0 : 300.0;
    QCOMPARE(s.peakUsage, counted);
    QCOMPARE(s.peakFill, counted / 300.0);
    QCOMPARE(s.acceptedPeakUsage, 300.0);
    QCOMPARE(s.acceptedPeakFill, 1.0);
    QCOMPARE(s.currentUsage, counted);
    QCOMPARE(s.currentAcceptedUsage, 300.0);
    QCOMPARE(s.nextSafeSendLimit, QStringLiteral("platform"));
    // Exhausted from the 300th request (second 1.298) until the window ends at second 60.
    QCOMPARE(s.timeAtLimitSeconds, 60.0 - 1.298);
    QVERIFY(s.nextSafeSendMs);
    QCOMPARE(*s.nextSafeSendMs, kBase + 60000);
    QCOMPARE(s.effectiveLimit.value_or(-1), 300.0);

    // Second 60: full again, 300 more accepted without a predicted throttle.
    for (int i = 0; i < 300; ++i)
        engine.add(fabric(kBase + 60000 + i));
    s = engine.scopes().first();
    QCOMPARE(s.predictedThrottled, 58);
    QCOMPARE(s.currentUsage, 300.0);

    const ScopeSeries series = engine.series(0);
    QCOMPARE(series.predictedThrottleT.size(), size_t(58));
    QCOMPARE(series.observedThrottleT.size(), size_t(58));
    QCOMPARE(series.usageT.size(), series.usage.size());
    QCOMPARE(series.usageT.size(), series.reconstructedPct.size());
    QVERIFY(std::is_sorted(series.usageT.begin(), series.usageT.end()));
    // The bucket view shows the bucket full at second 59 and fresh at second 60.
    const auto at59 = std::find(series.usageT.begin(), series.usageT.end(), kBase + 59000);
    QVERIFY(at59 != series.usageT.end());
    // (full as the limiter counts it: with the charged 429s; the accepted layer at capacity)
    QCOMPARE(series.usage[size_t(at59 - series.usageT.begin())], counted);
    QCOMPARE(series.acceptedUsage[size_t(at59 - series.usageT.begin())], 300.0);
    // Second 59 had no room until the window ends at second 60.
    QCOMPARE(series.blockedUntil[size_t(at59 - series.usageT.begin())], kBase + 60000);
    QCOMPARE(series.usage.back(), 300.0);
    QCOMPARE(series.blockedUntil.back(), kBase + 60000 + 60000);
}

void TestEngine::oneNoteMaximumWait_data()
{
    QTest::addColumn<int>("burstPerTenMinutes"); // requests at minutes 0,10,20,30
    QTest::addColumn<int>("longRequests");       // requests held in flight for 10 minutes
    QTest::addColumn<qint64>("expectedSafeOffset");
    QTest::addColumn<QString>("binding");

    // Graph counts throttled requests too, so the final 429 itself occupies a slot: room comes
    // back when the two oldest requests have left the window.
    // Minute exhausted only: 120 requests in the first 120 ms -> room when the 2nd expires.
    QTest::newRow("minute") << 0 << 0 << qint64(60001) << "onenote-per-minute";
    // Hour exhausted: 4 x 100 spread over 30 minutes, minute far from full: the minute scope's
    // safe send is still the hour's (the maximum, never the minimum).
    QTest::newRow("hour") << 100 << 0 << qint64(3600010) << "onenote-per-hour";
    // Five requests in flight for 10 minutes: concurrency binds.
    QTest::newRow("concurrency") << 0 << 5 << qint64(600000) << "onenote-concurrent";
}

void TestEngine::oneNoteMaximumWait()
{
    QFETCH(int, burstPerTenMinutes);
    QFETCH(int, longRequests);
    QFETCH(qint64, expectedSafeOffset);
    QFETCH(QString, binding);

    ThrottleEngine engine(only(builtin("graph-onenote-delegated")));
    qint64 lastSend = kBase;
    if (burstPerTenMinutes > 0) {
        for (int block = 0; block < 4; ++block) {
            for (int i = 0; i < burstPerTenMinutes; ++i) {
                lastSend = kBase + block * 600000 + i * 10;
                engine.add(onenote(lastSend, 1));
            }
        }
    } else if (longRequests > 0) {
        for (int i = 0; i < longRequests; ++i)
            engine.add(onenote(kBase + i, 600000 - i));
        lastSend = kBase + longRequests;
    } else {
        for (int i = 0; i < 120; ++i) {
            lastSend = kBase + i;
            engine.add(onenote(lastSend, 1));
        }
    }
    // One more request while exhausted: predicted throttle on the binding limit only.
    engine.add(onenote(lastSend + 1, 1, 429));

    const QList<ScopeSummary> scopes = engine.scopes();
    QCOMPARE(scopes.size(), 3);
    const QString key = QStringLiteral("note-bridge+alice@contoso.com");
    for (const ScopeSummary &s : scopes) {
        QCOMPARE(s.key, key);
        QVERIFY2(s.nextSafeSendMs, qPrintable(s.limit));
        QCOMPARE(*s.nextSafeSendMs, kBase + expectedSafeOffset);
        const bool isBinding = s.limit == binding;
        QCOMPARE(s.predictedThrottled, isBinding ? 1 : 0);
        // The 429 (OneNote: no Retry-After) is attributed to the exhausted limit.
        QCOMPARE(s.observedThrottled, isBinding ? 1 : 0);
    }
}

void TestEngine::oneNoteDelegatedVersusApp()
{
    // Delegated: 120/min per app+user; app-only (no user in the log): 240/min per app.
    ThrottleEngine engine;
    for (int i = 0; i < 200; ++i) {
        engine.add(onenote(kBase + i, 1));
        RequestEvent appOnly = onenote(kBase + i, 1, 200, QString());
        appOnly.url = QStringLiteral("https://graph.microsoft.com/v1.0/users/u1/onenote/pages");
        engine.add(appOnly);
    }
    const auto scopes = engine.scopes();
    const ScopeSummary *delegated = findScope(scopes, QStringLiteral("onenote-per-minute"),
                                              QStringLiteral("note-bridge+alice@contoso.com"));
    const ScopeSummary *app =
        findScope(scopes, QStringLiteral("onenote-per-minute"), QStringLiteral("note-bridge"));
    QVERIFY(delegated && app);
    QCOMPARE(delegated->policy, QStringLiteral("graph-onenote-delegated"));
    QCOMPARE(delegated->capacity, 120.0);
    QCOMPARE(delegated->predictedThrottled, 80);
    QCOMPARE(app->policy, QStringLiteral("graph-onenote-app"));
    QCOMPARE(app->capacity, 240.0);
    QCOMPARE(app->predictedThrottled, 0);
    QCOMPARE(app->peakUsage, 200.0);
}

void TestEngine::fabricApiGroupsChargeTheirOwnLimit_data()
{
    // The category comes from the URL rules (first match wins) or from the event itself; the
    // engine answers the limits' category conditions from a table built when the policy
    // compiled, so each way must land in the same limit as a plain evaluation would.
    QTest::addColumn<QString>("url");
    QTest::addColumn<QString>("category");
    QTest::addColumn<QString>("expectedLimit");

    const QString api = QStringLiteral("https://api.fabric.microsoft.com");
    QTest::newRow("job instances")
        << api + QStringLiteral("/v1/workspaces/w1/items/i1/jobs/instances?jobType=Pipeline")
        << QString() << "jobScheduler";
    QTest::newRow("operation state")
        << api + QStringLiteral("/v1/operations/op-1") << QString() << "longRunningOperations";
    QTest::newRow("items") << api + QStringLiteral("/v1/workspaces/w1/items") << QString()
                           << "platform";
    QTest::newRow("jobs not under an item")
        << api + QStringLiteral("/v1/workspaces/w1/jobs/x") << QString() << "platform";
    QTest::newRow("own category wins")
        << api + QStringLiteral("/v1/workspaces/w1/items") << "jobScheduler"
        << "jobScheduler";
    QTest::newRow("own unknown category")
        << api + QStringLiteral("/v1/operations/op-1") << "reports"
        << "";
}

void TestEngine::fabricApiGroupsChargeTheirOwnLimit()
{
    QFETCH(QString, url);
    QFETCH(QString, category);
    QFETCH(QString, expectedLimit);
    ThrottleEngine engine;
    RequestEvent e = request(QStringLiteral("fabric"), QStringLiteral("sp-ci"), url, kBase);
    e.category = category;
    for (int i = 0; i < 3; ++i) {
        e.tsMs = kBase + i;
        const ThrottleEngine::Verdict verdict = engine.add(e);
        // The detectors take the event's API group from here: the rule's name when the URL
        // rules classified it, nothing when the event carried its own category.
        QCOMPARE(verdict.category ? *verdict.category : QString(),
                 category.isEmpty() ? expectedLimit : QString());
        QCOMPARE(verdict.category == nullptr, !category.isEmpty());
    }
    QStringList charged;
    for (const ScopeSummary &scope : engine.scopes()) {
        if (scope.requests > 0)
            charged.append(scope.limit);
    }
    QCOMPARE(charged, expectedLimit.isEmpty() ? QStringList() : QStringList{expectedLimit});
}

void TestEngine::oneNoteAndOtherGraphCallsApart()
{
    // "/onenote/" and "^(?!.*/onenote/)" are answered by one search and its negation: every
    // Graph call lands in exactly one of the two families.
    ThrottleEngine engine;
    const QStringList urls{
        QStringLiteral("https://graph.microsoft.com/v1.0/me/onenote/pages"),
        QStringLiteral("https://graph.microsoft.com/v1.0/users/u1/drive/root"),
        QStringLiteral("https://graph.microsoft.com/v1.0/me/onenote/sections/1-a/pages?top=5"),
        QStringLiteral("https://graph.microsoft.com/v1.0/me/events?filter=onenote"),
    };
    for (int i = 0; i < 40; ++i) {
        RequestEvent e = onenote(kBase + i);
        e.url = urls[i % urls.size()];
        engine.add(e);
    }
    const auto scopes = engine.scopes();
    const QString key = QStringLiteral("note-bridge+alice@contoso.com");
    const ScopeSummary *onenoteMinute =
        findScope(scopes, QStringLiteral("onenote-per-minute"), key);
    const ScopeSummary *graph = findScope(scopes, QStringLiteral("graph"), key);
    QVERIFY(onenoteMinute && graph);
    QCOMPARE(onenoteMinute->requests, 20);
    QCOMPARE(graph->requests, 20);
}

void TestEngine::serviceBusCredits_data()
{
    QTest::addColumn<int>("sends");
    QTest::addColumn<int>("managementOps");
    QTest::addColumn<double>("explicitCredits"); // one extra Send with this cost, < 0 = none
    QTest::addColumn<bool>("oneMoreSend");
    QTest::addColumn<double>("expectedUsage");
    QTest::addColumn<int>("expectedPredicted");

    QTest::newRow("990 sends + 1 CreateQueue = 1000") << 990 << 1 << -1.0 << false << 1000.0 << 0;
    QTest::newRow("then one more send is refused") << 990 << 1 << -1.0 << true << 1000.0 << 1;
    QTest::newRow("management op needs 10 free credits") << 995 << 1 << -1.0 << false << 995.0 << 1;
    QTest::newRow("explicit credits win") << 900 << 0 << 100.0 << false << 1000.0 << 0;
    QTest::newRow("explicit credits over the top") << 950 << 0 << 60.0 << false << 950.0 << 1;
    QTest::newRow("two management ops") << 0 << 2 << -1.0 << false << 20.0 << 0;
}

void TestEngine::serviceBusCredits()
{
    QFETCH(int, sends);
    QFETCH(int, managementOps);
    QFETCH(double, explicitCredits);
    QFETCH(bool, oneMoreSend);
    QFETCH(double, expectedUsage);
    QFETCH(int, expectedPredicted);

    PolicySet set = only(builtin("servicebus-standard"));
    set.policies()[0].chargeThrottled = false; // refused requests leave the credits alone
    ThrottleEngine engine(set);
    auto sb = [](qint64 t, const QString &method) {
        RequestEvent e;
        e.service = QStringLiteral("servicebus");
        e.serviceBusNamespace = QStringLiteral("sb-prod");
        e.entity = QStringLiteral("orders");
        e.method = method;
        e.identity = QStringLiteral("orders-app");
        e.tsMs = t;
        e.status = 0; // an AMQP client log without outcomes: the model decides
        return e;
    };
    const qint64 second = kBase + 5000;
    int n = 0;
    for (int i = 0; i < sends; ++i)
        engine.add(sb(second + (n++ % 900), QStringLiteral("Send")));
    for (int i = 0; i < managementOps; ++i)
        engine.add(sb(second + 900 + i, QStringLiteral("CreateQueue")));
    if (explicitCredits >= 0) {
        RequestEvent e = sb(second + 950, QStringLiteral("Send"));
        e.credits = explicitCredits;
        engine.add(e);
    }
    if (oneMoreSend)
        engine.add(sb(second + 999, QStringLiteral("Send")));

    const auto scopes = engine.scopes(second + 999);
    const ScopeSummary *s = findScope(scopes, QStringLiteral("namespace-credits"));
    QVERIFY(s);
    QCOMPARE(s->key, QStringLiteral("sb-prod"));
    QCOMPARE(s->algorithm, QStringLiteral("credits"));
    QCOMPARE(s->windowSeconds, 1.0);
    QCOMPARE(s->currentUsage, expectedUsage);
    QCOMPARE(s->predictedThrottled, qint64(expectedPredicted));

    // HTTP management (PUT on the entity) costs 10, an HTTP send 1; the namespace comes from the
    // host when the log does not name it.
    ThrottleEngine http(set);
    RequestEvent put;
    put.url = QStringLiteral("https://sb-prod.servicebus.windows.net/orders");
    put.method = QStringLiteral("PUT");
    put.tsMs = kBase;
    put.status = 201;
    http.add(put);
    RequestEvent post = put;
    post.url = QStringLiteral("https://sb-prod.servicebus.windows.net/orders/messages");
    post.method = QStringLiteral("POST");
    http.add(post);
    const auto httpScopes = http.scopes();
    QCOMPARE(httpScopes.size(), 1);
    QCOMPARE(httpScopes.first().key, QStringLiteral("sb-prod"));
    QCOMPARE(httpScopes.first().service, QStringLiteral("servicebus"));
    QCOMPARE(httpScopes.first().currentUsage, 11.0);
}

void TestEngine::batchSubResponsesCountedOneByOne()
{
    ThrottleEngine engine(only(builtin("graph-onenote-delegated")));
    RequestEvent envelope = onenote(kBase);
    envelope.url = QStringLiteral("https://graph.microsoft.com/v1.0/$batch");
    envelope.batchEnvelope = true;
    engine.add(envelope);
    for (int i = 0; i < 20; ++i) {
        RequestEvent sub = onenote(kBase, 100, i >= 17 ? 429 : 200);
        sub.url =
            QStringLiteral("https://graph.microsoft.com/v1.0/me/onenote/pages/%1/content").arg(i);
        sub.batchId = QStringLiteral("b1");
        sub.batchIndex = i;
        engine.add(sub);
    }
    QCOMPARE(engine.requestEvents(), 20);
    const auto scopes = engine.scopes();
    const ScopeSummary *minute = findScope(scopes, QStringLiteral("onenote-per-minute"));
    QVERIFY(minute);
    QCOMPARE(minute->requests, 20);
    // 20 sent at once with 5 allowed in flight: 15 predicted, 3 observed (the service was kinder).
    const ScopeSummary *concurrent = findScope(scopes, QStringLiteral("onenote-concurrent"));
    QVERIFY(concurrent);
    QCOMPARE(concurrent->predictedThrottled, 15);
    QCOMPARE(concurrent->observedThrottled, 3);
    QCOMPARE(minute->predictedThrottled, 0);
    QCOMPARE(minute->observedThrottled, 0); // attributed to the exhausted limit only
    QCOMPARE(engine.throttleSummary().total, 3);
    QCOMPARE(engine.throttleSummary().byErrorCode.value(QStringLiteral("20166")), 3);
}

void TestEngine::observedVersusPredicted_data()
{
    QTest::addColumn<int>("realLimit"); // the service throttles from this usage on
    QTest::addColumn<int>("sent");
    QTest::addColumn<qint64>("expectedPredicted");
    QTest::addColumn<qint64>("expectedObserved");
    QTest::addColumn<double>("expectedEffective");
    QTest::addColumn<double>("expectedPeakUsage"); // accepted

    // Documented 200 per minute. The limiter counts all 250 (Fabric's 429s are charged).
    QTest::newRow("as documented") << 200 << 250 << qint64(50) << qint64(50) << 200.0 << 200.0;
    QTest::newRow("stricter than documented")
        << 150 << 250 << qint64(50) << qint64(100) << 150.0 << 150.0;
    QTest::newRow("more generous than documented")
        << 240 << 250 << qint64(50) << qint64(10) << 240.0 << 240.0;
}

void TestEngine::observedVersusPredicted()
{
    QFETCH(int, realLimit);
    QFETCH(int, sent);
    QFETCH(qint64, expectedPredicted);
    QFETCH(qint64, expectedObserved);
    QFETCH(double, expectedEffective);
    QFETCH(double, expectedPeakUsage);

    ThrottleEngine engine(only(builtin("fabric")));
    for (int i = 0; i < sent; ++i)
        engine.add(fabric(kBase + i * 100, i < realLimit ? 200 : 429));
    const ScopeSummary s = engine.scopes().first();
    QCOMPARE(s.predictedThrottled, expectedPredicted);
    QCOMPARE(s.observedThrottled, expectedObserved);
    QVERIFY(s.effectiveLimit);
    QCOMPARE(*s.effectiveLimit, expectedEffective);
    // The accepted layer shows what the service accepted (fill above 1 when it is more
    // generous); the usage is the limiter's count, every charged request.
    QCOMPARE(s.acceptedPeakUsage, expectedPeakUsage);
    QCOMPARE(s.acceptedPeakFill, expectedPeakUsage / 200.0);
    QCOMPARE(s.peakUsage, double(sent));
    QCOMPARE(s.peakFill, double(sent) / 200.0);
    // A bucket that throttled is never shown below its limit.
    QVERIFY(s.peakFill >= 1.0);
}

void TestEngine::windowPhaseFromBlockedUntil()
{
    // The model opens the window with the first request it sees (t=10 s), but the service's
    // window really ends at t=40 s: its blocked-until instant says so. After that the model
    // must expect room at 40 s, not at 70 s.
    ThrottleEngine engine(only(builtin("fabric")));
    const qint64 start = kBase + 10000;
    for (int i = 0; i < 200; ++i)
        engine.add(fabric(start + i));
    RequestEvent blocked = fabric(start + 1000, 429);
    // 2026-02-18T22:44:40Z = kBase + 40 s
    blocked.body = QStringLiteral(
        "{\"errorCode\":\"RequestBlocked\",\"message\":\"Request is blocked by the upstream "
        "service until: 2/18/2026 10:44:40 PM (UTC)\"}");
    blocked.retryAfter = QStringLiteral("29");
    engine.add(blocked);
    ScopeSummary s = engine.scopes().first();
    QVERIFY(s.nextSafeSendMs);
    QCOMPARE(*s.nextSafeSendMs, kBase + 40000);

    for (int i = 0; i < 50; ++i)
        engine.add(fabric(kBase + 40500 + i));
    s = engine.scopes().first();
    QCOMPARE(s.predictedThrottled, 1); // only the blocked one; the 50 at 40.5 s fit the new window
    QCOMPARE(s.currentUsage, 50.0);
    const ScopeSeries series = engine.series(0);
    QCOMPARE(series.retryAfterIntervals.size(), size_t(1));
    QCOMPARE(series.retryAfterIntervals[0].second, kBase + 40000);
}

void TestEngine::windowEndLearnedOncePerWindow()
{
    // 429s that each say "55 s from now", scattered through traffic the service accepts
    // (the benchmark's log): the first one may teach the window's end, the others of the same
    // window must not move it on. Moved by each, the window never ended, its count was never
    // reset, and every accepted request was a correction (1,283 per bucket on the benchmark).
    ThrottleEngine engine(only(builtin("fabric")));
    const qint64 start = kBase + 10000;
    const int requests = 20 * 90; // 20 minutes at 1.5 requests a second
    for (int i = 0; i < requests; ++i) {
        const qint64 t = start + qint64(i) * 2000 / 3;
        if (i % 12 == 5) {
            RequestEvent blocked = fabric(t, 429);
            blocked.retryAfter = QStringLiteral("55");
            engine.add(blocked);
        } else {
            engine.add(fabric(t));
        }
    }
    const ScopeSummary s = engine.scopes().first();
    // The bucket has room all along (90 a minute, 200 allowed): corrections, if any, are the
    // first window's (the log may not show what was sent before it).
    QVERIFY2(s.corrections < 90, qPrintable(QString::number(s.corrections)));
    for (const StateCorrection &correction : s.correctionLog)
        QVERIFY(correction.atMs < start + 60000);
    QVERIFY(s.currentUsage < 200);
}

void TestEngine::nextSafeSendAbsentWhenNothingExhausted()
{
    ThrottleEngine engine;
    for (int i = 0; i < 100; ++i)
        engine.add(fabric(kBase + i * 10));
    const auto scopes = engine.scopes();
    QCOMPARE(scopes.size(), 1);
    QVERIFY(!scopes.first().nextSafeSendMs);
    QCOMPARE(scopes.first().timeAtLimitSeconds, 0.0);
    QVERIFY(engine.alerts().isEmpty());
}

void TestEngine::nearLimitAlertsCoalesced()
{
    ThrottleEngine engine(only(builtin("fabric")));
    // Five consecutive windows at 90 %: one episode, one alert.
    for (int window = 0; window < 5; ++window) {
        for (int i = 0; i < 180; ++i)
            engine.add(fabric(kBase + window * 60000 + i * 100));
    }
    QCOMPARE(engine.alerts().size(), 1);
    const Alert first = engine.alerts().first();
    QCOMPARE(first.kind, QStringLiteral("near-limit"));
    QCOMPARE(first.key, QStringLiteral("sp-migrator"));
    QCOMPARE(first.severity, QStringLiteral("warning"));
    QCOMPARE(first.atMs, kBase + 159 * 100); // the 160th request reaches 0.8
    QVERIFY(first.detail.contains(QStringLiteral("platform")));
    // An hour later, again: a new episode. Another identity: its own alert.
    for (int i = 0; i < 200; ++i)
        engine.add(fabric(kBase + 3600000 + i * 10));
    for (int i = 0; i < 170; ++i)
        engine.add(fabric(kBase + 3700000 + i * 10, 200, QStringLiteral("other")));
    const QList<Alert> alerts = engine.alerts();
    QCOMPARE(alerts.size(), 3);
    QCOMPARE(alerts[1].atMs, kBase + 3600000 + 159 * 10);
    QCOMPARE(alerts[2].key, QStringLiteral("other"));
}

void TestEngine::nearLimitEpisodeSpansShortWindows()
{
    // Service Bus at 85-90 % of its 1000 credits in most seconds for two minutes, with a few
    // quiet seconds: one episode, not one alert per busy second. When a second finally
    // exhausts the namespace, the episode's alert turns critical instead of adding another.
    ThrottleEngine engine(only(builtin("servicebus-standard")));
    auto send = [&](qint64 tsMs, int credits) {
        RequestEvent e =
            request(QStringLiteral("servicebus"), QStringLiteral("orders-app"), QString(), tsMs);
        e.serviceBusNamespace = QStringLiteral("sb-prod");
        e.entity = QStringLiteral("orders");
        e.method = QStringLiteral("Send");
        e.credits = credits;
        engine.add(e);
    };
    for (int second = 0; second < 120; ++second) {
        if (second % 7 == 3)
            continue; // a quiet second
        for (int i = 0; i < 10; ++i)
            send(kBase + second * 1000 + i * 50, 85 + second % 6);
    }
    QCOMPARE(engine.alerts().size(), 1);
    QCOMPARE(engine.alerts().first().severity, QStringLiteral("warning"));
    for (int i = 0; i < 10; ++i)
        send(kBase + 120000 + i * 50, 100); // 1000 of 1000 credits
    QCOMPARE(engine.alerts().size(), 1);
    QCOMPARE(engine.alerts().first().severity, QStringLiteral("critical"));
    QVERIFY(engine.alerts().first().detail.contains(QStringLiteral("reached at")));
    // Two minutes later, busy again: a new episode.
    for (int i = 0; i < 10; ++i)
        send(kBase + 300000 + i * 50, 90);
    QCOMPARE(engine.alerts().size(), 2);
}

void TestEngine::throttleTaxonomy()
{
    ThrottleEngine engine;
    RequestEvent blocked = fabric(kBase, 429);
    blocked.retryAfter = QStringLiteral("55");
    engine.add(blocked);
    RequestEvent capacity = fabric(kBase + 1, 429);
    capacity.errorCode = QStringLiteral("CapacityLimitExceeded");
    engine.add(capacity);
    RequestEvent busy;
    busy.service = QStringLiteral("servicebus");
    busy.serviceBusNamespace = QStringLiteral("sb");
    busy.method = QStringLiteral("Send");
    busy.tsMs = kBase + 2500;
    busy.status = 503;
    busy.body = QStringLiteral("The request was terminated because the entity is being throttled. "
                               "Error code: 50009. Please wait 2 seconds and try again.");
    engine.add(busy);
    RequestEvent graph = onenote(kBase + 3000, 10, 429);
    graph.errorCode.clear();
    graph.headers.set(QStringLiteral("x-ms-throttle-scope"), QStringLiteral("Application"));
    engine.add(graph);
    engine.add(fabric(kBase + 4000, 200));

    const ThrottleSummary t = engine.throttleSummary();
    QCOMPARE(t.total, 4);
    QCOMPARE(t.byErrorCode.value(QStringLiteral("RequestBlocked")), 1);
    QCOMPARE(t.byErrorCode.value(QStringLiteral("CapacityLimitExceeded")), 1);
    QCOMPARE(t.byErrorCode.value(QStringLiteral("50009")), 1);
    QCOMPARE(t.byErrorCode.value(QStringLiteral("none")), 1);
    QCOMPARE(t.byScope.value(QStringLiteral("Application")), 1);
    QCOMPARE(t.byKind.value(QStringLiteral("capacity")), 1);
    QCOMPARE(t.byKind.value(QStringLiteral("server-busy")), 1);
    QCOMPARE(t.byKind.value(QStringLiteral("rate-limit")), 2);
    // Capacity throttling is the one where retrying soon does not help.
    QCOMPARE(t.notRetryable, 1);
    QCOMPARE(t.byIdentityAndErrorCode.value(QStringLiteral("sp-migrator"))
                 .value(QStringLiteral("CapacityLimitExceeded")),
             1);
    QCOMPARE(t.byIdentityAndErrorCode.value(QStringLiteral("none")).value(QStringLiteral("50009")),
             1);
    // Fed with signals extracted by the caller, the engine counts the same.
    ThrottleEngine reusing;
    for (const RequestEvent &e : {blocked, capacity, busy, graph, fabric(kBase + 4000, 200)})
        reusing.add(e, throttle::extract(e));
    QCOMPARE(reusing.throttleSummary().total, 4);
    QCOMPARE(reusing.throttleSummary().byErrorCode, t.byErrorCode);
    QCOMPARE(reusing.throttleSummary().byKind, t.byKind);
    QCOMPARE(reusing.scopes().first().observedThrottled, engine.scopes().first().observedThrottled);

    const auto bins = engine.throttleBins();
    QCOMPARE(bins.size(), size_t(3)); // seconds 0, 2 and 3
    QCOMPARE(bins[0].startMs, kBase);
    QCOMPARE(bins[0].byErrorCode.value(QStringLiteral("RequestBlocked")), 1);
}

void TestEngine::premiumReportsObservedThrottles()
{
    ThrottleEngine engine(only(builtin("servicebus-premium")));
    for (int i = 0; i < 10; ++i) {
        RequestEvent e;
        e.url = QStringLiteral("https://sb-premium.servicebus.windows.net/orders/messages");
        e.method = QStringLiteral("POST");
        e.tsMs = kBase + i;
        e.status = i % 3 == 0 ? 503 : 201;
        if (e.status == 503)
            e.errorCode = QStringLiteral("ServerBusy");
        engine.add(e);
    }
    const auto scopes = engine.scopes();
    QCOMPARE(scopes.size(), 1);
    QCOMPARE(scopes.first().algorithm, QStringLiteral("observed"));
    QCOMPARE(scopes.first().key, QStringLiteral("sb-premium"));
    QCOMPARE(scopes.first().requests, 10);
    QCOMPARE(scopes.first().observedThrottled, 4);
    QCOMPARE(scopes.first().predictedThrottled, 0);
}

void TestEngine::simulatedLogReconstructedExactly_data()
{
    QTest::addColumn<QByteArray>("limitJson");
    QTest::addColumn<int>("meanGapMs");
    QTest::addColumn<quint32>("seed");

    const QList<std::pair<const char *, QByteArray>> limits{
        {"fixed-window clock",
         R"({"name":"l","algorithm":"fixed-window","capacity":8,"windowSeconds":2})"},
        {"sliding-window",
         R"({"name":"l","algorithm":"sliding-window","capacity":15,"windowSeconds":3})"},
        {"sliding-window free 429",
         R"({"name":"l","algorithm":"sliding-window","capacity":15,"windowSeconds":3,"chargeThrottled":false})"},
        {"token-bucket",
         R"({"name":"l","algorithm":"token-bucket","capacity":10,"refillPerSecond":4.5})"},
        {"token-bucket charged 429",
         R"({"name":"l","algorithm":"token-bucket","capacity":10,"refillPerSecond":4,"chargeThrottled":true})"},
        {"leaky-bucket", R"({"name":"l","algorithm":"leaky-bucket","rate":"7r/s","burst":3})"},
        {"leaky-bucket r/m",
         R"({"name":"l","algorithm":"leaky-bucket","rate":"200r/m","burst":2})"},
        {"credits",
         R"({"name":"l","algorithm":"credits","capacity":30,"windowSeconds":1,"cost":[{"match":{"method":"^Create"},"credits":10}],"defaultCost":1})"},
        {"concurrency", R"({"name":"l","algorithm":"concurrency","capacity":4})"},
    };
    for (const auto &[name, json] : limits) {
        for (quint32 seed : {1u, 2u, 3u}) {
            for (int gap : {20, 120}) {
                QTest::addRow("%s seed %u gap %d", name, seed, gap) << json << gap << seed;
            }
        }
    }
}

void TestEngine::simulatedLogReconstructedExactly()
{
    // A log produced by a reference limiter (accept when the bucket has room, 429 otherwise) is
    // reconstructed exactly: predicted == observed per key, and what was accepted never exceeds
    // the capacity.
    QFETCH(QByteArray, limitJson);
    QFETCH(int, meanGapMs);
    QFETCH(quint32, seed);

    const QByteArray policyJson =
        R"({"name":"sim","match":{"service":"^sim$"},"limits":[)" + limitJson + "]}";
    QString error;
    const auto policy = Policy::fromJsonBytes(policyJson, QStringLiteral("sim"), &error);
    QVERIFY2(policy, qPrintable(error));
    const PolicyLimit &limit = policy->limits.first();

    const QStringList keys{QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c")};
    std::vector<Reference> refs;
    for (int k = 0; k < keys.size(); ++k) {
        Reference ref;
        ref.algorithm = limit.algorithm;
        ref.capacity = limit.capacity;
        ref.windowMs = qint64(limit.windowSeconds * 1000);
        ref.refillPerSecond = limit.refillPerSecond;
        ref.milliRate = limit.nginxMilliRate();
        ref.burstMilli = qint64(limit.burst * 1000);
        ref.chargeThrottled = policy->chargesThrottled(limit);
        refs.push_back(ref);
    }

    QRandomGenerator rng(seed);
    ThrottleEngine engine(only(*policy));
    std::vector<qint64> expectedThrottles(size_t(keys.size()), 0);
    qint64 t = kBase;
    for (int i = 0; i < 3000; ++i) {
        // Bursty traffic: mostly tight gaps, sometimes long pauses.
        const quint32 roll = rng.bounded(100u);
        t += roll < 70 ? qint64(rng.bounded(meanGapMs / 4 + 1))
                       : qint64(rng.bounded(meanGapMs * 6 + 1));
        const int k = int(rng.bounded(quint32(keys.size())));
        RequestEvent e;
        e.service = QStringLiteral("sim");
        e.identity = keys[k];
        e.tsMs = t;
        e.method = rng.bounded(10u) == 0 ? QStringLiteral("CreateQueue") : QStringLiteral("Send");
        e.durationMs = double(rng.bounded(400u));
        const double cost =
            limit.algorithm == Algorithm::Credits && e.method.startsWith(u"Create") ? 10 : 1;
        const bool accepted = refs[size_t(k)].decide(t, cost, qint64(e.durationMs));
        e.status = accepted ? 200 : 429;
        if (!accepted)
            ++expectedThrottles[size_t(k)];
        engine.add(e);
    }

    const auto scopes = engine.scopes();
    QCOMPARE(scopes.size(), keys.size());
    qint64 totalThrottles = 0;
    for (const ScopeSummary &s : scopes) {
        const qsizetype k = keys.indexOf(s.key);
        QVERIFY(k >= 0);
        QCOMPARE(s.observedThrottled, expectedThrottles[size_t(k)]);
        QCOMPARE(s.predictedThrottled, s.observedThrottled);
        QVERIFY2(s.acceptedPeakUsage <= s.capacity + 1e-9,
                 qPrintable(QStringLiteral("accepted peak %1 > capacity %2")
                                .arg(s.acceptedPeakUsage)
                                .arg(s.capacity)));
        QVERIFY(s.peakUsage >= s.acceptedPeakUsage);
        QCOMPARE(s.effectiveLimit.has_value(), s.observedThrottled > 0);
        const ScopeSeries series = engine.series(int(&s - scopes.data()));
        for (double usage : series.acceptedUsage)
            QVERIFY(usage <= s.capacity + 1e-9);
        QCOMPARE(series.acceptedUsage.size(), series.usage.size());
        for (size_t i = 0; i < series.usage.size(); ++i)
            QVERIFY(series.usage[i] >= series.acceptedUsage[i] - 1e-9);
        totalThrottles += s.observedThrottled;
    }
    // The traffic must actually exercise the limit, or the test proves nothing.
    QVERIFY2(totalThrottles > 0, "simulated traffic never hit the limit");
    QVERIFY(totalThrottles < 3000);
}

void TestEngine::rerunWithAnotherPolicySet()
{
    std::vector<RequestEvent> events;
    for (int i = 0; i < 300; ++i)
        events.push_back(fabric(kBase + i * 10));
    const DashboardSnapshot documented = ThrottleEngine::replay(only(builtin("fabric")), events);
    QCOMPARE(documented.report.scopes.first().predictedThrottled, 100);

    Policy edited = builtin("fabric");
    edited.limits[0].capacity = 250;
    ThrottleEngine engine(only(builtin("fabric")));
    engine.addBatch(events);
    engine.reset(only(edited));
    engine.addBatch(events);
    QCOMPARE(engine.requestEvents(), 300);
    QCOMPARE(engine.scopes().first().predictedThrottled, 50);
    QCOMPARE(engine.policies().policies().first().limits[0].capacity, 250.0);
}

void TestEngine::lateEventsClamped()
{
    ThrottleEngine engine(only(builtin("fabric")));
    engine.add(fabric(kBase + 5000));
    engine.add(fabric(kBase + 4000)); // a second late: evaluated at 5000
    engine.add(fabric(kBase + 6000));
    QCOMPARE(engine.lateEvents(), 1);
    const ScopeSummary s = engine.scopes().first();
    QCOMPARE(s.requests, 3);
    QCOMPARE(s.currentUsage, 3.0);
    QCOMPARE(*engine.firstMs(), kBase + 4000);
}

void TestEngine::seriesStayBounded()
{
    ThrottleEngine::Options options;
    options.maxSeriesPoints = 1000;
    ThrottleEngine engine(only(builtin("nginx")), options);
    // A day of traffic at 20 requests per second from one client: 1.7 M events.
    RequestEvent e =
        request(QStringLiteral("nginx"), QStringLiteral("10.0.0.1"), QStringLiteral("/api"), kBase);
    // Every 10th answer carries the service's own percentage: 0.5, once 0.97 late in the day.
    const QString usual = QStringLiteral("0.5");
    const QString peak = QStringLiteral("0.97");
    const qint64 peakAt = 80000000;
    for (qint64 t = 0; t < 86400000; t += 50) {
        e.tsMs = kBase + t;
        e.status = (t / 50) % 97 == 0 ? 429 : 200;
        e.headers = {};
        if ((t / 50) % 10 == 0) {
            e.headers.set(QStringLiteral("x-ms-throttle-limit-percentage"),
                          t == peakAt ? peak : usual);
        }
        engine.add(e);
    }
    const ScopeSeries series = engine.series(0);
    QVERIFY(series.usageT.size() <= 1000);
    QVERIFY(series.usageT.size() >= 250);
    QVERIFY(series.observedThrottleT.size() <= 1000);
    QVERIFY(series.observedPctT.size() <= 1001);
    QCOMPARE(series.observedPctT.size(), series.observedPct.size());
    // The whole day, not its first samples, and the one peak survives the thinning.
    QVERIFY(series.observedPctT.back() > kBase + 23 * 3600 * 1000);
    QCOMPARE(*std::max_element(series.observedPct.begin(), series.observedPct.end()), 0.97);
    QVERIFY(std::count(series.observedPctT.begin(), series.observedPctT.end(), kBase + peakAt) ==
            1);
    QCOMPARE(engine.scopes().first().requests, 86400000 / 50);
}

void TestEngine::longSlidingWindowBoundedAndNeverEarly_data()
{
    QTest::addColumn<int>("gapMs");
    QTest::addColumn<bool>("accepted");
    QTest::newRow("storm every 7 ms") << 7 << true;
    QTest::newRow("counted 429s every 3 ms") << 3 << false;
    QTest::newRow("sparse, one per 1.3 s") << 1300 << true;
}

void TestEngine::longSlidingWindowBoundedAndNeverEarly()
{
    // OneNote's hour window: the state holds at most 3,600 exact entries plus one per second of
    // the window however many requests came; a charge leaves the window no earlier than t + W
    // and at most one slot (1 s) later, and exactly at t + W while the window holds few charges.
    QFETCH(int, gapMs);
    QFETCH(bool, accepted);
    PolicyLimit spec;
    spec.name = QStringLiteral("per-hour");
    spec.algorithm = Algorithm::SlidingWindow;
    spec.capacity = 10000;
    spec.windowSeconds = 3600;
    const limiter::Params params = limiter::Params::fromLimit(spec);
    QCOMPARE(params.slotMs, 1000);

    limiter::State state;
    std::deque<qint64> reference; // instants of charges still inside (t - W, t]
    const qint64 windowMs = 3600 * 1000;
    const qint64 end = kBase + 2 * windowMs;
    for (qint64 t = kBase + 123; t < end; t += gapMs) {
        state.advance(params, t);
        while (!reference.empty() && reference.front() <= t - windowMs)
            reference.pop_front();
        // Never early: everything the reference still counts, the state counts too. At most one
        // slot late: beyond the reference, only the charges of one second are still counted.
        const double counted = accepted ? state.usageAt(params, t) : state.slidingSum;
        QVERIFY(counted >= double(reference.size()));
        QVERIFY(counted <= double(reference.size()) + std::ceil(1000.0 / gapMs) + 1);
        if (windowMs / gapMs < qint64(limiter::kExactCharges)) // few charges: exact to the ms
            QCOMPARE(counted, double(reference.size()));
        state.charge(params, t, 1, accepted, t);
        reference.push_back(t);
        QVERIFY(state.charges.size() <= limiter::kExactCharges + 3601);
    }
}

void TestEngine::slidingRoomMatchesAFullScan_data()
{
    QTest::addColumn<double>("windowSeconds");
    QTest::addColumn<double>("capacity");
    QTest::addColumn<int>("maxGapMs");
    QTest::newRow("1 min, 100, bursts") << 60.0 << 100.0 << 900;
    QTest::newRow("1 min, 5, sparse") << 60.0 << 5.0 << 30000;
    QTest::newRow("1 h slotted, 2000, storm") << 3600.0 << 2000.0 << 40;
}

void TestEngine::slidingRoomMatchesAFullScan()
{
    // trackRoomAt() searches from its previous answer; every answer must still be the one a scan of
    // the whole window gives (the first charge whose cumulative cost reaches what must leave),
    // for traffic that fills, overruns and drains the window, with costs of 0 to 3 units and
    // queries at times other than the last charge.
    QFETCH(double, windowSeconds);
    QFETCH(double, capacity);
    QFETCH(int, maxGapMs);
    PolicyLimit spec;
    spec.name = QStringLiteral("window");
    spec.algorithm = Algorithm::SlidingWindow;
    spec.capacity = capacity;
    spec.windowSeconds = windowSeconds;
    const limiter::Params params = limiter::Params::fromLimit(spec);
    limiter::State state;
    std::mt19937 random(7);
    qint64 t = kBase;
    int atLimit = 0;
    for (int i = 0; i < 40000; ++i) {
        // Phases of heavy and light traffic, so the window fills up and drains again.
        const bool heavy = (i / 3000) % 2 == 0;
        t += qint64(random() % quint32(heavy ? std::max(1, maxGapMs / 20) : maxGapMs));
        state.advance(params, t);
        state.charge(params, t, double(random() % 4), random() % 5 != 0, t);
        for (const qint64 at : {t, t + qint64(random() % 5000)}) { // (a query moves nothing)
            // The engine's call (which moves the hint) and a read-only one agree.
            const qint64 readOnly = state.roomAt(params, at);
            const qint64 room = state.trackRoomAt(params, at);
            QCOMPARE(readOnly, room);
            qint64 expected = at;
            if (!state.charges.empty() && state.slidingSum + 1 > params.capacity) {
                const double need = state.slidingSum + 1 - params.capacity;
                const double base = state.charges.front().cumulative - state.charges.front().cost;
                size_t first = state.charges.size() - 1;
                for (size_t k = 0; k < state.charges.size(); ++k) {
                    if (state.charges.at(k).cumulative - base >= need) {
                        first = k;
                        break;
                    }
                }
                expected = std::max(at, state.charges.at(first).t + params.windowMs);
                ++atLimit;
            }
            QCOMPARE(room, expected);
        }
    }
    QVERIFY2(atLimit > 1000, QByteArray::number(atLimit).constData()); // the search ran
}

void TestEngine::snapshotParallelToScopes()
{
    ThrottleEngine engine;
    for (int i = 0; i < 50; ++i) {
        engine.add(fabric(kBase + i));
        engine.add(onenote(kBase + i, 10));
        RequestEvent arm = request(QString(), QStringLiteral("sp"),
                                   QStringLiteral("https://management.azure.com/subscriptions/s1/"
                                                  "resourceGroups?api-version=2021-04-01"),
                                   kBase + i);
        engine.add(arm);
    }
    DashboardSnapshot snapshot;
    snapshot.report.alerts.append(Alert{QStringLiteral("retry-storm"), QStringLiteral("critical"),
                                        kBase, QStringLiteral("x"), QString()});
    engine.fillSnapshot(&snapshot);
    QCOMPARE(snapshot.series.size(), size_t(snapshot.report.scopes.size()));
    QCOMPARE(snapshot.report.scopes.size(), 5); // platform, 3 x onenote, arm reads
    QCOMPARE(snapshot.report.alerts.first().kind, QStringLiteral("retry-storm")); // kept
    QCOMPARE(*snapshot.report.firstMs, kBase);
    const ScopeSummary *arm =
        findScope(snapshot.report.scopes, QStringLiteral("subscription-reads"));
    QVERIFY(arm);
    QCOMPARE(arm->key, QStringLiteral("s1"));
    QCOMPARE(arm->service, QStringLiteral("arm"));
    QCOMPARE(arm->algorithm, QStringLiteral("token-bucket"));
    QVERIFY(arm->currentUsage > 0);
}

void TestEngine::observedPercentageBesideReconstructed()
{
    // Graph reports x-ms-throttle-limit-percentage on successes; the series carries it beside
    // the reconstructed fill of the most restrictive limit at the same instants.
    ThrottleEngine engine(only(builtin("graph-onenote-delegated")));
    for (int i = 0; i < 100; ++i) {
        RequestEvent e = onenote(kBase + i * 100, 1);
        if (i == 99)
            e.headers.set(QStringLiteral("x-ms-throttle-limit-percentage"), QStringLiteral("0.85"));
        engine.add(e);
    }
    const auto scopes = engine.scopes();
    const ScopeSummary *minute = findScope(scopes, QStringLiteral("onenote-per-minute"));
    QVERIFY(minute);
    QCOMPARE(minute->observedLimitPercentage.value_or(-1), 0.85);
    QCOMPARE(minute->peakFill, 100.0 / 120.0);
    const ScopeSeries series = engine.series(int(minute - scopes.data()));
    QCOMPARE(series.observedPctT, std::vector<qint64>{kBase + 9900});
    QCOMPARE(series.observedPct, std::vector<double>{0.85});
    // Reconstructed: the most restrictive of minute (100/120), hour (100/400), concurrency.
    QCOMPARE(series.reconstructedPct.back(), 100.0 / 120.0);
    // 0.8 of 120 is the 96th request: one near-limit alert for the minute limit.
    QCOMPARE(engine.alerts().size(), 1);
    QCOMPARE(engine.alerts().first().atMs, kBase + 95 * 100);
}

QTEST_GUILESS_MAIN(TestEngine)
#include "tst_engine.moc"
