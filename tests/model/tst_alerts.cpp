// AlertDetector on synthetic logs built here: the death spiral and its cure, lost $batch work,
// Retry-After ignored, capacity throttling, near-limit, lane starvation, and the incremental /
// bounded-memory promises. Events go through the real signal extraction.

#include "engine/alertdetector.h"
#include "engine/analysis.h"
#include "signals/throttlesignals.h"

#include <QRandomGenerator>
#include <QSet>
#include <QTest>

#include <algorithm>

using namespace ts;

namespace {

constexpr qint64 kT0 = 1771454400000; // 2026-02-18T22:40:00Z

RequestEvent request(qint64 tMs, int status, const QString &operationId = {})
{
    RequestEvent event;
    event.tsMs = tMs;
    event.identity = QStringLiteral("sp-migrator");
    event.service = QStringLiteral("fabric");
    event.method = QStringLiteral("POST");
    event.url = QStringLiteral("https://api.fabric.microsoft.com/v1/workspaces/1f2e/items/%1/jobs/"
                               "instances?jobType=Pipeline")
                    .arg(operationId);
    event.operationId = operationId;
    event.status = status;
    if (status == 429) {
        event.errorCode = QStringLiteral("RequestBlocked");
        event.retryAfter = QStringLiteral("30");
    }
    return event;
}

QList<Alert> run(const QList<RequestEvent> &events, AlertParameters parameters = {})
{
    AlertDetector detector(parameters);
    for (const RequestEvent &event : events)
        detector.add(event, throttle::extract(event));
    if (!events.isEmpty())
        detector.finish(events.last().tsMs);
    return detector.alerts();
}

QList<Alert> ofKind(const QList<Alert> &alerts, const QString &kind)
{
    QList<Alert> result;
    std::copy_if(alerts.cbegin(), alerts.cend(), std::back_inserter(result),
                 [&kind](const Alert &alert) { return alert.kind == kind; });
    return result;
}

QString kindsOf(const QList<Alert> &alerts)
{
    QStringList kinds;
    for (const Alert &alert : alerts)
        kinds.append(alert.kind);
    kinds.sort();
    kinds.removeDuplicates();
    return kinds.join(QLatin1Char(','));
}

// How the 1100 queued jobs are scheduled after the first 429 wave.
enum class Workload {
    DeathSpiral,     // all wake after the same 30 s, all 429 again, several waves
    SharedBreaker,   // one shared breaker: after the block, retries trickle out and succeed
    SingleRetryWave, // one synchronised retry wave that succeeds: not a spiral
    SmallSpiral,     // 8 jobs, same pattern as the death spiral: small clients spiral too
    // The small spiral, but each wave is a small share of the client's work: 40 new operations
    // fail alongside it (not retried), so the retried ones are under stormSmallFraction.
    SmallSpiralAmongNewWork,
};

QList<RequestEvent> jobsWorkload(Workload workload, int jobs, int spiralWaves)
{
    QList<RequestEvent> events;
    const auto jobId = [](int job) { return QStringLiteral("job-%1").arg(job); };
    // t=0..2 s: every job starts; the first 200 get through, the rest are blocked.
    for (int job = 0; job < jobs; ++job) {
        const int status = job < std::min(200, jobs / 4) ? 200 : 429;
        events.append(request(kT0 + job * 2000 / jobs, status, jobId(job)));
        events.last().attempt = 0;
    }
    const int firstBlocked = std::min(200, jobs / 4);
    switch (workload) {
    case Workload::DeathSpiral:
    case Workload::SmallSpiral:
    case Workload::SmallSpiralAmongNewWork:
        for (int wave = 1; wave <= spiralWaves; ++wave) {
            for (int job = firstBlocked; job < jobs; ++job) {
                const qint64 t = kT0 + wave * 32000 + (job - firstBlocked) * 2000 / jobs;
                events.append(request(t, 429, jobId(job)));
                events.last().attempt = wave;
            }
            if (workload != Workload::SmallSpiralAmongNewWork)
                continue;
            constexpr int kNewOperations = 40;
            for (int k = 0; k < kNewOperations; ++k) {
                const qint64 t = kT0 + wave * 32000 + 100 + k * 10;
                events.append(request(t, 500, jobId(jobs + wave * kNewOperations + k)));
                events.last().attempt = 0;
            }
        }
        // Finally it drains.
        for (int job = firstBlocked; job < jobs; ++job) {
            events.append(
                request(kT0 + (spiralWaves + 1) * 32000 + 600000 + job * 50, 200, jobId(job)));
            events.last().attempt = spiralWaves + 1;
        }
        break;
    case Workload::SharedBreaker:
        // The breaker waits out the block once, then lets 3 retries a second through.
        for (int job = firstBlocked; job < jobs; ++job) {
            events.append(request(kT0 + 32000 + (job - firstBlocked) * 333, 200, jobId(job)));
            events.last().attempt = 1;
        }
        break;
    case Workload::SingleRetryWave:
        for (int job = firstBlocked; job < jobs; ++job) {
            events.append(request(kT0 + 32000 + job, 200, jobId(job)));
            events.last().attempt = 1;
        }
        break;
    }
    std::stable_sort(events.begin(), events.end(),
                     [](const RequestEvent &a, const RequestEvent &b) { return a.tsMs < b.tsMs; });
    return events;
}

RequestEvent batchSubResponse(qint64 tMs, const QString &batchId, int index, int status,
                              const QString &operationId = {})
{
    RequestEvent event;
    event.tsMs = tMs;
    event.identity = QStringLiteral("alice@contoso.com");
    event.app = QStringLiteral("note-bridge");
    event.service = QStringLiteral("graph");
    event.method = QStringLiteral("GET");
    event.url = QStringLiteral("/me/onenote/pages/page-%1/content").arg(index);
    event.batchId = batchId;
    event.batchIndex = index;
    event.operationId = operationId;
    event.status = status;
    return event;
}

RequestEvent batchEnvelope(qint64 tMs, const QString &batchId, int status)
{
    RequestEvent event;
    event.tsMs = tMs;
    event.identity = QStringLiteral("alice@contoso.com");
    event.app = QStringLiteral("note-bridge");
    event.service = QStringLiteral("graph");
    event.method = QStringLiteral("POST");
    event.url = QStringLiteral("https://graph.microsoft.com/v1.0/$batch");
    event.batchId = batchId;
    event.batchEnvelope = true;
    event.status = status;
    return event;
}

RequestEvent laneRequest(qint64 tMs, const QString &lane, int status)
{
    RequestEvent event;
    event.tsMs = tMs;
    event.identity = QStringLiteral("alice@contoso.com");
    event.app = QStringLiteral("note-bridge");
    event.service = QStringLiteral("graph");
    event.method = QStringLiteral("GET");
    event.url = QStringLiteral("/me/onenote/pages");
    event.lane = lane;
    event.status = status;
    return event;
}

} // namespace

class TestAlerts : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void textHashCacheAgreesWithTheHash();
    void fastTextHashSeesEveryCharacter();
    void retryStorm_data();
    void retryStorm();
    void retriesRecognisedWithoutAttemptField_data();
    void retriesRecognisedWithoutAttemptField();
    void lostWork_data();
    void lostWork();
    void pendingUntilTheRetryIsDue_data();
    void pendingUntilTheRetryIsDue();
    void retryAfterIgnored_data();
    void retryAfterIgnored();
    void capacityIsNotRateLimiting_data();
    void capacityIsNotRateLimiting();
    void nearLimit_data();
    void nearLimit();
    void laneStarvation_data();
    void laneStarvation();
    void liveViewHoldsBackRecentFailures_data();
    void liveViewHoldsBackRecentFailures();
    void fillReportMergesWithEngineAlerts();
    void incrementalBatchesMatchOneShot();
    void memoryStaysBounded();
    void failedOperationsBeyondTheCapAreCounted();
    void lostWorkOfManyOwnersNamesTheEarliest_data();
    void lostWorkOfManyOwnersNamesTheEarliest();
};

void TestAlerts::retryStorm_data()
{
    QTest::addColumn<int>("workload");
    QTest::addColumn<int>("jobs");
    QTest::addColumn<int>("spiralWaves");
    QTest::addColumn<int>("expectedStorms");
    QTest::addColumn<QString>("expectedInDetail");

    QTest::newRow("death spiral: 1100 jobs, 4 synchronised 429 waves")
        << int(Workload::DeathSpiral) << 1100 << 4 << 1
        << QStringLiteral("in 4 synchronised waves");
    QTest::newRow("same workload behind one shared breaker")
        << int(Workload::SharedBreaker) << 1100 << 0 << 0 << QString();
    QTest::newRow("one synchronised wave that succeeds")
        << int(Workload::SingleRetryWave) << 1100 << 0 << 0 << QString();
    QTest::newRow("one 429 retry wave is not yet a spiral")
        << int(Workload::DeathSpiral) << 1100 << 1 << 0 << QString();
    QTest::newRow("small client: 8 jobs spiral in 3 waves")
        << int(Workload::SmallSpiral) << 8 << 3 << 1 << QStringLiteral("6 distinct operations");
    QTest::newRow("small client: the same retries among 40 new failing operations per wave")
        << int(Workload::SmallSpiralAmongNewWork) << 8 << 3 << 0 << QString();
}

void TestAlerts::retryStorm()
{
    QFETCH(int, workload);
    QFETCH(int, jobs);
    QFETCH(int, spiralWaves);
    QFETCH(int, expectedStorms);
    QFETCH(QString, expectedInDetail);

    const QList<RequestEvent> events = jobsWorkload(Workload(workload), jobs, spiralWaves);
    const QList<Alert> storms = ofKind(run(events), QStringLiteral("retry-storm"));
    QCOMPARE(storms.size(), expectedStorms);
    if (expectedStorms == 0)
        return;
    const Alert &storm = storms.first();
    QCOMPARE(storm.severity, QStringLiteral("critical"));
    QCOMPARE(storm.key, QStringLiteral("sp-migrator"));
    QCOMPARE(storm.atMs, kT0 + 32000); // the first retry wave
    QVERIFY2(storm.detail.contains(expectedInDetail), qPrintable(storm.detail));
    QVERIFY2(storm.detail.contains(QStringLiteral("100 % of the")), qPrintable(storm.detail));
}

void TestAlerts::retriesRecognisedWithoutAttemptField_data()
{
    QTest::addColumn<bool>("withOperationId");

    QTest::newRow("operationId seen failing before") << true;
    QTest::newRow("same identity + method + url after a throttle") << false;
}

void TestAlerts::retriesRecognisedWithoutAttemptField()
{
    QFETCH(bool, withOperationId);

    // The death spiral again, but the client logs no attempt numbers.
    QList<RequestEvent> events = jobsWorkload(Workload::DeathSpiral, 400, 3);
    for (RequestEvent &event : events) {
        event.attempt = -1;
        if (!withOperationId)
            event.operationId.clear(); // the url still names the job
    }
    const QList<Alert> storms = ofKind(run(events), QStringLiteral("retry-storm"));
    QCOMPARE(storms.size(), 1);
    QVERIFY2(storms.first().detail.contains(QStringLiteral("300 distinct operations")),
             qPrintable(storms.first().detail));
}

void TestAlerts::lostWork_data()
{
    QTest::addColumn<QList<RequestEvent>>("events");
    QTest::addColumn<int>("expectedAlerts");
    QTest::addColumn<QStringList>("expectedNamed");
    QTest::addColumn<bool>("silentBatchLoss");

    const QString batch = QStringLiteral("b-1");
    QList<RequestEvent> neverRetried{
        batchEnvelope(kT0, batch, 200), batchSubResponse(kT0, batch, 0, 200),
        batchSubResponse(kT0, batch, 1, 429), batchSubResponse(kT0, batch, 2, 429),
        batchSubResponse(kT0, batch, 3, 200)};
    QTest::newRow("$batch 200 with 429 sub-responses never retried")
        << neverRetried << 1
        << QStringList{QStringLiteral("GET /me/onenote/pages/page-1/content"),
                       QStringLiteral("GET /me/onenote/pages/page-2/content")}
        << true;

    QList<RequestEvent> envelopeLast = neverRetried;
    envelopeLast.move(0, envelopeLast.size() - 1); // some logs write the envelope after
    QTest::newRow("envelope logged after its sub-responses")
        << envelopeLast << 1
        << QStringList{QStringLiteral("GET /me/onenote/pages/page-1/content"),
                       QStringLiteral("GET /me/onenote/pages/page-2/content")}
        << true;

    QList<RequestEvent> retried = neverRetried;
    retried << batchSubResponse(kT0 + 40000, QStringLiteral("b-2"), 1, 200)
            << batchSubResponse(kT0 + 40000, QStringLiteral("b-2"), 2, 200);
    QTest::newRow("sub-responses retried later with success")
        << retried << 0 << QStringList() << false;

    QList<RequestEvent> retriedAlone = neverRetried;
    RequestEvent alone = batchSubResponse(kT0 + 40000, QString(), 1, 200);
    alone.batchIndex = -1;
    retriedAlone << alone;
    QTest::newRow("one retried outside a batch, one lost")
        << retriedAlone << 1 << QStringList{QStringLiteral("GET /me/onenote/pages/page-2/content")}
        << true;

    QTest::newRow("operationIds: failed, retried, failed again")
        << QList<RequestEvent>{request(kT0, 503, QStringLiteral("section-7")),
                               request(kT0 + 5000, 429, QStringLiteral("section-7")),
                               request(kT0 + 6000, 0, QStringLiteral("section-9")),
                               request(kT0 + 7000, 500, QStringLiteral("section-8")),
                               request(kT0 + 9000, 200, QStringLiteral("section-8"))}
        << 1 << QStringList{QStringLiteral("section-7"), QStringLiteral("section-9")} << false;
    QTest::newRow("plain requests without operationId are not units of work")
        << QList<RequestEvent>{request(kT0, 500), request(kT0 + 1000, 404)} << 0 << QStringList()
        << false;
}

void TestAlerts::lostWork()
{
    QFETCH(QList<RequestEvent>, events);
    QFETCH(int, expectedAlerts);
    QFETCH(QStringList, expectedNamed);
    QFETCH(bool, silentBatchLoss);

    // The log goes on long after: what was not retried by then is lost, not pending (30.1).
    RequestEvent later = request(events.last().tsMs + 3'600'000, 200, QStringLiteral("later"));
    later.identity = QStringLiteral("someone-else");
    events << later;
    const QList<Alert> lost = ofKind(run(events), QStringLiteral("lost-work"));
    QCOMPARE(lost.size(), expectedAlerts);
    if (expectedAlerts == 0)
        return;
    const Alert &alert = lost.first();
    QCOMPARE(alert.severity, QStringLiteral("critical"));
    QVERIFY2(alert.detail.startsWith(QStringLiteral("%1 operation(s)").arg(expectedNamed.size())),
             qPrintable(alert.detail));
    for (const QString &name : expectedNamed)
        QVERIFY2(alert.detail.contains(name), qPrintable(alert.detail));
    QCOMPARE(alert.detail.contains(QStringLiteral("inside $batch envelopes that answered 2xx")),
             silentBatchLoss);
}

// Issue 30.1: an operation whose last answer a client retries after a wait is pending until
// its retry was due with the log still going; only then lost. "Goes on" is an unrelated
// request of another identity at that instant.
void TestAlerts::pendingUntilTheRetryIsDue_data()
{
    QTest::addColumn<QList<RequestEvent>>("events");
    QTest::addColumn<int>("lost");
    QTest::addColumn<int>("pending");

    const auto goesOnUntil = [](qint64 t) {
        RequestEvent other = request(t, 200, QStringLiteral("other-work"));
        other.identity = QStringLiteral("someone-else");
        return other;
    };
    // request() answers 429 with Retry-After: 30 (s).
    const RequestEvent throttled = request(kT0, 429, QStringLiteral("section-1"));
    QTest::newRow("429, Retry-After 30 s, the log ends 10 s later: pending")
        << QList<RequestEvent>{throttled, goesOnUntil(kT0 + 10000)} << 0 << 1;
    QTest::newRow("429, Retry-After 30 s, the log goes on 5 minutes: lost")
        << QList<RequestEvent>{throttled, goesOnUntil(kT0 + 300000)} << 1 << 0;
    QTest::newRow("the log ends with the 429: pending")
        << QList<RequestEvent>{goesOnUntil(kT0 - 1000), throttled} << 0 << 1;

    // The client's usual retry gap, learned from another operation: 5 s, so a failure is due
    // twice that (10 s) later.
    const QList<RequestEvent> habit{request(kT0, 503, QStringLiteral("op-a")),
                                    request(kT0 + 5000, 200, QStringLiteral("op-a")),
                                    request(kT0 + 6000, 503, QStringLiteral("op-b"))};
    QTest::newRow("503, usual gap 5 s, the log goes on 8 s: pending")
        << (habit + QList<RequestEvent>{goesOnUntil(kT0 + 14000)}) << 0 << 1;
    QTest::newRow("503, usual gap 5 s, the log goes on 15 s: lost")
        << (habit + QList<RequestEvent>{goesOnUntil(kT0 + 21000)}) << 1 << 0;
    QTest::newRow("404 is not retried after a wait: lost at once")
        << QList<RequestEvent>{request(kT0, 404, QStringLiteral("op-c")), goesOnUntil(kT0 + 1)} << 1
        << 0;
    QTest::newRow("no response, no retry seen in the log: due after twice 60 s")
        << QList<RequestEvent>{request(kT0, 0, QStringLiteral("op-d")), goesOnUntil(kT0 + 90000)}
        << 0 << 1;
}

void TestAlerts::pendingUntilTheRetryIsDue()
{
    QFETCH(QList<RequestEvent>, events);
    QFETCH(int, lost);
    QFETCH(int, pending);

    const QList<Alert> alerts = run(events);
    QCOMPARE(ofKind(alerts, QStringLiteral("lost-work")).size(), lost);
    const QList<Alert> pendingWork = ofKind(alerts, QStringLiteral("pending-work"));
    QCOMPARE(pendingWork.size(), pending);
    for (const Alert &alert : pendingWork) {
        QCOMPARE(alert.severity, QStringLiteral("info"));
        QVERIFY2(alert.detail.contains(QStringLiteral("pending when the log ends")),
                 qPrintable(alert.detail));
    }
}

void TestAlerts::retryAfterIgnored_data()
{
    QTest::addColumn<QList<RequestEvent>>("events");
    QTest::addColumn<int>("expectedAlerts");
    QTest::addColumn<QString>("expectedInDetail");

    const auto graph = [](qint64 t, const QString &identity, int status) {
        RequestEvent event = laneRequest(t, QString(), status);
        event.identity = identity;
        return event;
    };
    RequestEvent throttled = graph(kT0, QStringLiteral("alice"), 429);
    throttled.retryAfter = QStringLiteral("10");
    throttled.durationMs = 200;

    QTest::newRow("Retry-After 10 s, retry 3 s later")
        << QList<RequestEvent>{throttled, graph(kT0 + 3000, QStringLiteral("alice"), 200)} << 1
        << QStringLiteral("1 request(s) by alice on graph");
    QTest::newRow("Retry-After 10 s, retry 11 s later")
        << QList<RequestEvent>{throttled, graph(kT0 + 11000, QStringLiteral("alice"), 200)} << 0
        << QString();
    QTest::newRow("request in flight before the 429 arrived is no violation")
        << QList<RequestEvent>{throttled, graph(kT0 + 100, QStringLiteral("alice"), 429)} << 0
        << QString();
    QTest::newRow("a user-scope block does not bind another user")
        << QList<RequestEvent>{throttled, graph(kT0 + 3000, QStringLiteral("bob"), 200)} << 0
        << QString();

    RequestEvent appWide = throttled;
    appWide.headers.set(QStringLiteral("x-ms-throttle-scope"), QStringLiteral("Application"));
    QTest::newRow("an application-wide block binds every user of the app")
        << QList<RequestEvent>{appWide, graph(kT0 + 3000, QStringLiteral("bob"), 200)} << 1
        << QStringLiteral("app note-bridge");

    RequestEvent refusedBatch = batchEnvelope(kT0, QStringLiteral("b-7"), 429);
    refusedBatch.retryAfter = QStringLiteral("10");
    QTest::newRow("a refused $batch envelope's Retry-After binds too")
        << QList<RequestEvent>{refusedBatch,
                               graph(kT0 + 3000, QStringLiteral("alice@contoso.com"), 200)}
        << 1 << QStringLiteral("1 request(s) by alice@contoso.com on graph");

    QList<RequestEvent> hammering{throttled};
    for (int i = 1; i <= 9; ++i)
        hammering << graph(kT0 + i * 1000, QStringLiteral("alice"), 200);
    QTest::newRow("nine early requests are one episode, up to 9 s early, median 5 s")
        << hammering << 1 << QStringLiteral("9 request(s) by alice on graph");

    QList<RequestEvent> twoEpisodes{throttled, graph(kT0 + 3000, QStringLiteral("alice"), 200)};
    RequestEvent later = throttled;
    later.tsMs = kT0 + 300000;
    twoEpisodes << later << graph(kT0 + 302000, QStringLiteral("alice"), 200);
    QTest::newRow("two blocks minutes apart are two episodes") << twoEpisodes << 2 << QString();

    // Whole-second timestamps (vcrpy cassettes): "1 s early" is within their rounding.
    RequestEvent roundedThrottle = graph(kT0 / 1000 * 1000, QStringLiteral("alice"), 429);
    roundedThrottle.retryAfter = QStringLiteral("2");
    roundedThrottle.durationMs = 0;
    QTest::newRow("whole-second log, 1 s early: within rounding")
        << QList<RequestEvent>{roundedThrottle,
                               graph(kT0 / 1000 * 1000 + 1000, QStringLiteral("alice"), 200)}
        << 0 << QString();
    RequestEvent roundedLong = roundedThrottle;
    roundedLong.retryAfter = QStringLiteral("10");
    QTest::newRow("whole-second log, 8 s early: a violation")
        << QList<RequestEvent>{roundedLong,
                               graph(kT0 / 1000 * 1000 + 2000, QStringLiteral("alice"), 200)}
        << 1 << QStringLiteral("1 request(s) by alice on graph");

    // Fabric blocks one API group at a time: a jobScheduler block does not bind platform calls.
    const auto fabric = [](qint64 t, const QString &path, int status) {
        RequestEvent event;
        event.tsMs = t;
        event.service = QStringLiteral("fabric");
        event.identity = QStringLiteral("sp-deployer");
        event.method = QStringLiteral("POST");
        event.url = QStringLiteral("https://api.fabric.microsoft.com") + path;
        event.status = status;
        if (status == 429) {
            event.errorCode = QStringLiteral("RequestBlocked");
            event.retryAfter = QStringLiteral("55");
        }
        return event;
    };
    const QString jobs =
        QStringLiteral("/v1/workspaces/w1/items/i1/jobs/instances?jobType=Pipeline");
    const QString items = QStringLiteral("/v1/workspaces/w1/items");
    QTest::newRow("Fabric: a jobScheduler block does not bind platform calls")
        << QList<RequestEvent>{fabric(kT0, jobs, 429), fabric(kT0 + 5000, items, 200),
                               fabric(kT0 + 9000, items, 200)}
        << 0 << QString();
    QTest::newRow("Fabric: another jobScheduler call inside the block is a violation")
        << QList<RequestEvent>{fabric(kT0, jobs, 429), fabric(kT0 + 5000, items, 200),
                               fabric(kT0 + 9000, jobs, 200)}
        << 1 << QStringLiteral("1 request(s) by sp-deployer on fabric (jobScheduler API group)");

    // Issue 30.2: one Graph $batch of 20 sub-requests, answered at once with one 429 among its
    // sub-responses; the log writes the sub-responses a millisecond apart as it handles them.
    // The 16 after the 429 were sent with it, before any Retry-After existed.
    const auto subResponses = [](const QString &batchId, qint64 sentMs, int throttledIndex) {
        QList<RequestEvent> batch{batchEnvelope(sentMs, batchId, 200)};
        for (int i = 0; i < 20; ++i) {
            batch << batchSubResponse(sentMs + i, batchId, i, i == throttledIndex ? 429 : 200);
            if (i == throttledIndex)
                batch.last().retryAfter = QStringLiteral("10");
        }
        return batch;
    };
    QTest::newRow("$batch: sub-requests sent with the 429 ignored nothing")
        << subResponses(QStringLiteral("b-20"), kT0, 3) << 0 << QString();
    QTest::newRow("$batch: the next batch sent inside the block is 20 violations")
        << (subResponses(QStringLiteral("b-20"), kT0, 3) +
            subResponses(QStringLiteral("b-21"), kT0 + 2000, -1))
        << 1 << QStringLiteral("20 request(s) by alice@contoso.com on graph");
}

void TestAlerts::retryAfterIgnored()
{
    QFETCH(QList<RequestEvent>, events);
    QFETCH(int, expectedAlerts);
    QFETCH(QString, expectedInDetail);

    const QList<Alert> ignored = ofKind(run(events), QStringLiteral("retry-after-ignored"));
    QCOMPARE(ignored.size(), expectedAlerts);
    // The same through the whole analysis, where the detector takes each event's API group
    // from the engine's classification instead of classifying it again.
    {
        Analysis analysis;
        for (const RequestEvent &event : events)
            analysis.add(event);
        const QList<Alert> viaEngine =
            ofKind(analysis.report().alerts, QStringLiteral("retry-after-ignored"));
        QCOMPARE(viaEngine.size(), expectedAlerts);
        for (qsizetype i = 0; i < viaEngine.size(); ++i)
            QCOMPARE(viaEngine[i].detail, ignored[i].detail);
    }
    for (const Alert &alert : ignored) {
        QCOMPARE(alert.severity, QStringLiteral("warning"));
        QVERIFY2(alert.detail.contains(expectedInDetail), qPrintable(alert.detail));
    }
    if (QByteArray(QTest::currentDataTag()).startsWith("nine")) {
        QVERIFY2(
            ignored.first().detail.contains(QStringLiteral("up to 9.2 s early (median 5.2 s)")),
            qPrintable(ignored.first().detail));
    }
}

void TestAlerts::fastTextHashSeesEveryCharacter()
{
    // Every character of every length counts (short text one unit at a time, the tail, the
    // 8-byte steps and the two 16-byte lanes of long text): changing any one character, or
    // the length, or the seed, gives another hash. ~12,000 texts, no collision expected.
    QSet<size_t> hashes;
    int texts = 0;
    for (int length = 0; length <= 120; ++length) {
        QString base;
        for (int i = 0; i < length; ++i)
            base.append(QChar(u'a' + char16_t(i * 7 % 26)));
        const auto add = [&](const QString &text, size_t seed) {
            hashes.insert(fastTextHash(text, seed));
            ++texts;
        };
        add(base, 1);
        add(base, 2);
        for (int position = 0; position < length; ++position) {
            QString changed = base;
            changed[position] = QChar(u'A' + char16_t(position % 26));
            add(changed, 1);
        }
    }
    QCOMPARE(hashes.size(), qsizetype(texts));
}

void TestAlerts::textHashCacheAgreesWithTheHash()
{
    // Strings come and go (the allocator reuses their addresses once a slot lets go of one);
    // the remembered hash must always be the hash of the text at hand.
    TextHashCache cache;
    QRandomGenerator rng(11);
    std::vector<QString> alive;
    for (int round = 0; round < 20000; ++round) {
        QString text;
        const int size = int(rng.bounded(12u));
        for (int i = 0; i < size; ++i)
            text.append(QChar(u'a' + char16_t(rng.bounded(4u))));
        const size_t seed = rng.bounded(3u);
        QCOMPARE(cache.hash(text, seed), fastTextHash(text, seed));
        QCOMPARE(cache.hash(text, seed), fastTextHash(text, seed)); // the remembered one
        if (rng.bounded(8u) == 0)
            alive.push_back(text);
        if (!alive.empty() && rng.bounded(4u) == 0) {
            const QString &old = alive[rng.bounded(quint32(alive.size()))];
            QCOMPARE(cache.hash(old, seed), fastTextHash(old, seed));
        }
    }
}

void TestAlerts::capacityIsNotRateLimiting_data()
{
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("errorCode");
    QTest::addColumn<int>("expectedCapacityAlerts");

    QTest::newRow("Fabric 429 CapacityLimitExceeded")
        << 429 << QStringLiteral("CapacityLimitExceeded") << 1;
    QTest::newRow("Spark 430 TooManyRequestsForCapacity")
        << 430 << QStringLiteral("TooManyRequestsForCapacity") << 1;
    QTest::newRow("429 RequestBlocked is rate limiting")
        << 429 << QStringLiteral("RequestBlocked") << 0;
}

void TestAlerts::capacityIsNotRateLimiting()
{
    QFETCH(int, status);
    QFETCH(QString, errorCode);
    QFETCH(int, expectedCapacityAlerts);

    QList<RequestEvent> events;
    for (int i = 0; i < 12; ++i) {
        RequestEvent event = request(kT0 + i * 20000, status, QStringLiteral("job-%1").arg(i));
        event.errorCode = errorCode;
        event.retryAfter.clear();
        event.tenant = QStringLiteral("contoso");
        events << event << request(kT0 + i * 20000 + 5000, 200, QStringLiteral("job-%1").arg(i));
    }
    const QList<Alert> alerts = run(events);
    const QList<Alert> capacity = ofKind(alerts, QStringLiteral("capacity"));
    QCOMPARE(capacity.size(), expectedCapacityAlerts);
    if (expectedCapacityAlerts == 0) {
        QVERIFY2(alerts.isEmpty(), qPrintable(kindsOf(alerts)));
        return;
    }
    // One episode for all twelve throttles, and nothing else raised.
    QCOMPARE(kindsOf(alerts), QStringLiteral("capacity"));
    QCOMPARE(capacity.first().key, QStringLiteral("fabric/contoso"));
    QVERIFY2(capacity.first().detail.startsWith(QStringLiteral("12 capacity throttle(s)")),
             qPrintable(capacity.first().detail));
    QVERIFY2(capacity.first().detail.contains(errorCode + QStringLiteral(" ×12")),
             qPrintable(capacity.first().detail));
}

void TestAlerts::nearLimit_data()
{
    QTest::addColumn<QString>("headerName");
    QTest::addColumn<QString>("headerValue");
    QTest::addColumn<int>("expectedAlerts");

    QTest::newRow("x-ms-throttle-limit-percentage 0.85")
        << QStringLiteral("x-ms-throttle-limit-percentage") << QStringLiteral("0.85") << 1;
    QTest::newRow("x-ms-throttle-limit-percentage 0.5")
        << QStringLiteral("x-ms-throttle-limit-percentage") << QStringLiteral("0.5") << 0;
    QTest::newRow("RateLimit-Remaining 10 of 100")
        << QStringLiteral("RateLimit-Remaining") << QStringLiteral("10") << 1;
    QTest::newRow("RateLimit-Remaining 50 of 100")
        << QStringLiteral("RateLimit-Remaining") << QStringLiteral("50") << 0;
}

void TestAlerts::nearLimit()
{
    QFETCH(QString, headerName);
    QFETCH(QString, headerValue);
    QFETCH(int, expectedAlerts);

    QList<RequestEvent> events;
    for (int i = 0; i < 30; ++i) { // 30 reports in 30 s: one episode
        RequestEvent event = laneRequest(kT0 + i * 1000, QString(), 200);
        event.headers.set(headerName, headerValue);
        event.headers.set(QStringLiteral("RateLimit-Limit"), QStringLiteral("100"));
        events << event;
    }
    const QList<Alert> alerts = run(events);
    const QList<Alert> near = ofKind(alerts, QStringLiteral("near-limit"));
    QCOMPARE(near.size(), expectedAlerts);
    QCOMPARE(alerts.size(), expectedAlerts);
    if (expectedAlerts > 0) {
        QCOMPARE(near.first().key, QStringLiteral("alice@contoso.com"));
        QCOMPARE(near.first().atMs, kT0);
        QVERIFY2(near.first().detail.contains(QStringLiteral("30 time(s)")),
                 qPrintable(near.first().detail));
    }
}

void TestAlerts::laneStarvation_data()
{
    QTest::addColumn<int>("backgroundPerWindow");
    QTest::addColumn<int>("foregroundPerWindow");
    QTest::addColumn<int>("foregroundThrottledPerWindow");
    QTest::addColumn<int>("expectedAlerts");

    QTest::newRow("background 80 %, foreground throttled: starving") << 80 << 20 << 10 << 1;
    QTest::newRow("background 40 %: within its share") << 40 << 60 << 10 << 0;
    QTest::newRow("background 80 % but foreground never waits") << 80 << 20 << 0 << 0;
}

void TestAlerts::laneStarvation()
{
    QFETCH(int, backgroundPerWindow);
    QFETCH(int, foregroundPerWindow);
    QFETCH(int, foregroundThrottledPerWindow);
    QFETCH(int, expectedAlerts);

    QList<RequestEvent> events;
    for (int window = 0; window < 3; ++window) { // three consecutive 60 s windows
        const qint64 start = kT0 + window * 60000;
        for (int i = 0; i < backgroundPerWindow; ++i)
            events << laneRequest(start + i * 500, QStringLiteral("background"), 200);
        for (int i = 0; i < foregroundPerWindow; ++i) {
            events << laneRequest(start + i * 500 + 250, QStringLiteral("foreground"),
                                  i < foregroundThrottledPerWindow ? 429 : 200);
        }
    }
    std::stable_sort(events.begin(), events.end(),
                     [](const RequestEvent &a, const RequestEvent &b) { return a.tsMs < b.tsMs; });
    const QList<Alert> starving = ofKind(run(events), QStringLiteral("lane-starvation"));
    QCOMPARE(starving.size(), expectedAlerts);
    if (expectedAlerts > 0) {
        QCOMPARE(starving.first().key, QStringLiteral("note-bridge"));
        QCOMPARE(starving.first().atMs, kT0);
        QVERIFY2(starving.first().detail.contains(QStringLiteral("3 window(s)")),
                 qPrintable(starving.first().detail));
    }
}

void TestAlerts::liveViewHoldsBackRecentFailures_data()
{
    QTest::addColumn<qint64>("asOfAfterFailureMs");
    QTest::addColumn<int>("expectedLostWork");

    QTest::newRow("30 s after the failure: may still be retried") << qint64(30000) << 0;
    QTest::newRow("exactly the grace period") << qint64(60000) << 1;
    QTest::newRow("well after the grace period") << qint64(600000) << 1;
}

void TestAlerts::liveViewHoldsBackRecentFailures()
{
    QFETCH(qint64, asOfAfterFailureMs);
    QFETCH(int, expectedLostWork);

    AlertDetector::Parameters parameters;
    parameters.lostWorkGraceMs = 60000;
    AlertDetector detector(parameters);
    const RequestEvent failed = request(kT0, 503, QStringLiteral("section-1"));
    detector.add(failed, throttle::extract(failed));
    // The log goes on (another caller), so the failure is due for a retry: lost, not pending.
    RequestEvent later = request(kT0 + 3'600'000, 200, QStringLiteral("later"));
    later.identity = QStringLiteral("someone-else");
    detector.add(later, throttle::extract(later));
    QCOMPARE(
        ofKind(detector.alertsAsOf(kT0 + asOfAfterFailureMs), QStringLiteral("lost-work")).size(),
        expectedLostWork);
}

void TestAlerts::fillReportMergesWithEngineAlerts()
{
    AlertDetector detector;
    QList<RequestEvent> events{request(kT0, 503, QStringLiteral("section-1")),
                               request(kT0 + 5000, 500, QStringLiteral("section-2"))};
    // The log goes on well past their retries (another caller): lost, not pending.
    events << request(kT0 + 600'000, 200, QStringLiteral("later"));
    events.last().identity = QStringLiteral("someone-else");
    for (const RequestEvent &event : events)
        detector.add(event, throttle::extract(event));
    ReportData report;
    report.alerts.append(Alert{QStringLiteral("near-limit"), QStringLiteral("warning"), kT0 + 1000,
                               QStringLiteral("sp-migrator"), QStringLiteral("fill")});
    detector.fillReport(&report, kT0 + 10000);
    QCOMPARE(report.alerts.size(), 2);
    QCOMPARE(report.alerts[0].kind, QStringLiteral("lost-work")); // atMs kT0: the first failure
    QCOMPARE(report.alerts[0].atMs, kT0);
    QCOMPARE(report.alerts[1].kind, QStringLiteral("near-limit"));
}

void TestAlerts::incrementalBatchesMatchOneShot()
{
    QList<RequestEvent> events = jobsWorkload(Workload::DeathSpiral, 300, 3);
    events << batchEnvelope(kT0 + 400000, QStringLiteral("b-9"), 200)
           << batchSubResponse(kT0 + 400000, QStringLiteral("b-9"), 4, 503);
    const QList<Alert> oneShot = run(events);
    QVERIFY2(kindsOf(oneShot).contains(QStringLiteral("retry-storm")),
             qPrintable(kindsOf(oneShot)));

    AlertDetector live;
    for (qsizetype i = 0; i < events.size(); ++i) {
        live.add(events[i], throttle::extract(events[i]));
        if (i % 97 == 0)
            (void)live.alerts(); // the dashboard looks in between; that must change nothing
    }
    live.finish(events.last().tsMs);
    const QList<Alert> incremental = live.alerts();
    QCOMPARE(incremental.size(), oneShot.size());
    for (qsizetype i = 0; i < oneShot.size(); ++i) {
        QCOMPARE(incremental[i].kind, oneShot[i].kind);
        QCOMPARE(incremental[i].atMs, oneShot[i].atMs);
        QCOMPARE(incremental[i].key, oneShot[i].key);
        QCOMPARE(incremental[i].detail, oneShot[i].detail);
    }
}

void TestAlerts::memoryStaysBounded()
{
    AlertDetector::Parameters parameters;
    parameters.retryMemoryMs = 60000;
    AlertDetector detector(parameters);
    // An hour of traffic: every operation succeeds after one throttle, plain requests are
    // throttled and never repeated.
    for (int i = 0; i < 36000; ++i) {
        const qint64 t = kT0 + qint64(i) * 100;
        const QString op = QStringLiteral("op-%1").arg(i);
        RequestEvent first = request(t, 429, op);
        RequestEvent retry = request(t + 50, 200, op);
        RequestEvent plain = request(t + 60, 429);
        plain.url = QStringLiteral("/unique/%1").arg(i);
        for (const RequestEvent *event : {&first, &retry, &plain})
            detector.add(*event, throttle::extract(*event));
    }
    QCOMPARE(detector.trackedFailedOperations(), 0);
    // Only the last minute of plain throttled requests is remembered (600 + one sweep period).
    QVERIFY2(detector.rememberedThrottledRequests() <= 600 + 150,
             qPrintable(QString::number(detector.rememberedThrottledRequests())));
    QCOMPARE(ofKind(detector.alerts(), QStringLiteral("lost-work")).size(), 0);
}

void TestAlerts::failedOperationsBeyondTheCapAreCounted()
{
    AlertDetector::Parameters parameters;
    parameters.maxTrackedOperations = 3;
    AlertDetector detector(parameters);
    // Five operations fail and are never retried; one of the tracked three then succeeds, which
    // frees its slot for the last failure.
    QList<RequestEvent> events;
    for (int i = 0; i < 5; ++i)
        events.append(request(kT0 + i * 1000, 429, QStringLiteral("op-%1").arg(i)));
    events.append(request(kT0 + 6000, 200, QStringLiteral("op-1")));
    events.append(request(kT0 + 7000, 500, QStringLiteral("op-7")));
    // The log goes on past their retries: lost, not pending (issue 30.1).
    events.append(request(kT0 + 3'600'000, 200, QStringLiteral("later")));
    events.last().identity = QStringLiteral("someone-else");
    for (const RequestEvent &event : events)
        detector.add(event, throttle::extract(event));
    QCOMPARE(detector.trackedFailedOperations(), 3);
    const QList<Alert> lost = ofKind(detector.alerts(), QStringLiteral("lost-work"));
    QCOMPARE(lost.size(), 1);
    const QString &detail = lost.first().detail;
    QVERIFY2(detail.startsWith(QStringLiteral("3 operation(s)")), qPrintable(detail));
    for (const char *name : {"op-0", "op-2", "op-7"})
        QVERIFY2(detail.contains(QLatin1StringView(name)), qPrintable(detail));
    QVERIFY2(!detail.contains(QStringLiteral("op-1")), qPrintable(detail));
    QVERIFY2(detail.contains(QStringLiteral("2 further failed operations were not tracked")),
             qPrintable(detail));
}

QTEST_GUILESS_MAIN(TestAlerts)
#include "tst_alerts.moc"

void TestAlerts::lostWorkOfManyOwnersNamesTheEarliest_data()
{
    // Below and above the number of pending failures from which lost work is put together on
    // a second thread: the text must not depend on it.
    QTest::addColumn<int>("operations");
    QTest::newRow("a few") << 30;
    QTest::newRow("many (built on a second thread)") << 6000;
}

// One alert per owner, each naming its earliest failures (equal failure times in name order,
// whatever the order the failures were tracked in), the rest counted, statuses tallied.
void TestAlerts::lostWorkOfManyOwnersNamesTheEarliest()
{
    QFETCH(int, operations);
    const QStringList owners{QStringLiteral("alice"), QStringLiteral("bob"),
                             QStringLiteral("carol")};
    QList<RequestEvent> events;
    for (int i = operations - 1; i >= 0; --i) { // latest first: tracking order is not time order
        RequestEvent event = request(kT0 + (i / 6) * 1000, i % 2 ? 429 : 503,
                                     QStringLiteral("op-%1").arg(i, 5, 10, QLatin1Char('0')));
        event.identity = owners[i % 3];
        events.append(event);
    }
    // The log goes on past their retries: lost, not pending (issue 30.1).
    events.append(request(kT0 + 3'600'000, 200, QStringLiteral("later")));
    events.last().identity = QStringLiteral("someone-else");
    AlertParameters parameters;
    parameters.lostWorkMaxNamed = 3;
    const QList<Alert> lost = ofKind(run(events, parameters), QStringLiteral("lost-work"));
    QCOMPARE(lost.size(), 3);
    for (const Alert &alert : lost) {
        const int owner = int(owners.indexOf(alert.key));
        QVERIFY2(owner >= 0, qPrintable(alert.key));
        // The owner's operations are i = owner, owner + 3, ...: the first six share a second,
        // so the earliest three are the three lowest-numbered in that second.
        QStringList earliest;
        for (int i = owner; earliest.size() < 3; i += 3)
            earliest << QStringLiteral("op-%1").arg(i, 5, 10, QLatin1Char('0'));
        const int count = operations / 3;
        // i % 2 alternates with i, stepping by 3: the owner's statuses alternate too.
        const int odd = owner % 2 ? (count + 1) / 2 : count / 2;
        const QString expected = QStringLiteral("%1 operation(s) of %2 failed and never succeeded "
                                                "later (last answers: 429 ×%3, 503 ×%4): %5 and "
                                                "%6 more.")
                                     .arg(count)
                                     .arg(alert.key)
                                     .arg(odd)
                                     .arg(count - odd)
                                     .arg(earliest.join(QStringLiteral(", ")))
                                     .arg(count - 3);
        QCOMPARE(alert.detail, expected);
        QCOMPARE(alert.atMs, kT0);
    }
}
