#pragma once
// Hand-built DashboardSnapshots with known contents, for the widget tests and the dashboard
// benchmark: the GUI is tested against values it must show, independent of the engine.

#include "core/timeparse.h"
#include "engine/reportdata.h"
#include "ingest/redaction.h"

#include <memory>

namespace ts::fixture {

// 2026-02-18T22:40:00.000Z
inline qint64 t0()
{
    return *parseRfc3339Ms(std::string_view("2026-02-18T22:40:00.000Z"));
}
inline qint64 at(qint64 seconds)
{
    return t0() + seconds * 1000;
}

inline BreakerTransition transition(qint64 tsMs, const QString &scope, const QString &source,
                                    const QString &from, const QString &to,
                                    const QString &reason = {})
{
    BreakerTransition t;
    t.tsMs = tsMs;
    t.scope = scope;
    t.source = source;
    t.from = from;
    t.to = to;
    t.reason = reason;
    return t;
}

inline BreakerSummary breaker(const QString &scope, const QString &source, int transitions,
                              double openSeconds, const QString &finalState)
{
    BreakerSummary b;
    b.scope = scope;
    b.source = source;
    b.transitions = transitions;
    b.openSeconds = openSeconds;
    b.finalState = finalState;
    return b;
}

inline ScopeSummary scope(const QString &key, const QString &service, const QString &limit,
                          double capacity, double windowSeconds)
{
    ScopeSummary s;
    s.key = key;
    s.service = service;
    s.limit = limit;
    s.capacity = capacity;
    s.windowSeconds = windowSeconds;
    s.algorithm = QStringLiteral("fixed-window");
    s.policy = service;
    return s;
}

// Three identities x two limits, one cell empty (bob has no fabric/platform bucket):
//   0 sp-migrator · fabric/platform   cap 200/60 s: usage 0@0s 100@60s 200@120s 150@180s
//                                      170@240s (now 85 %), two observed + one predicted 429,
//                                      Retry-After [120 s, 150 s)
//   1 sp-migrator · graph/per-app     cap 1000: usage 10@0s 500@200s (now 50 %)
//   2 alice · fabric/platform         cap 200: usage 20@30s (now 10 %)
//   3 alice · graph/per-app           cap 1000: usage 950@100s 999@300s (now 99.9 %)
//   4 bob · graph/per-app             cap 1000: usage 1000@250s (now 100 %)
// Time [0 s, 600 s]; throttle bins of 60 s; two breakers with transitions; two alerts.
inline std::shared_ptr<DashboardSnapshot> smallSnapshot()
{
    auto snap = std::make_shared<DashboardSnapshot>();
    snap->generation = 1;
    ReportData &r = snap->report;
    r.events = 1234;
    r.malformed = 2;
    r.byStatus = {{200, 1100}, {429, 9}};
    r.firstMs = at(0);
    r.lastMs = at(600);

    const QString migrator = QStringLiteral("sp-migrator");
    const QString alice = QStringLiteral("note-bridge+alice@contoso.com");
    const QString bob = QStringLiteral("note-bridge+bob@contoso.com");
    const QString fabric = QStringLiteral("fabric");
    const QString graph = QStringLiteral("graph");
    const QString platform = QStringLiteral("platform");
    const QString perApp = QStringLiteral("per-app");

    r.scopes = {scope(migrator, fabric, platform, 200, 60),
                scope(migrator, graph, perApp, 1000, 600), scope(alice, fabric, platform, 200, 60),
                scope(alice, graph, perApp, 1000, 600), scope(bob, graph, perApp, 1000, 600)};
    snap->series.resize(5);

    ScopeSeries &s0 = snap->series[0];
    s0.usageT = {at(0), at(60), at(120), at(180), at(240)};
    s0.usage = {0, 100, 200, 150, 170};
    s0.reconstructedPct = {0, 0.5, 1.0, 0.75, 0.85};
    s0.observedPctT = {at(100), at(130)};
    s0.observedPct = {0.9, 1.0};
    s0.observedThrottleT = {at(125), at(130)};
    s0.predictedThrottleT = {at(121)};
    s0.retryAfterIntervals = {{at(120), at(150)}};
    r.scopes[0].requests = 700;
    r.scopes[0].peakUsage = 200;
    r.scopes[0].peakFill = 1.0;
    r.scopes[0].currentUsage = 170;
    r.scopes[0].currentFill = 0.85;
    r.scopes[0].observedThrottled = 2;
    r.scopes[0].predictedThrottled = 1;
    r.scopes[0].effectiveLimit = 180;
    r.scopes[0].nextSafeSendMs = at(660);

    ScopeSeries &s1 = snap->series[1];
    s1.usageT = {at(0), at(200)};
    s1.usage = {10, 500};
    s1.reconstructedPct = {0.01, 0.5};
    r.scopes[1].currentUsage = 500;
    r.scopes[1].currentFill = 0.5;
    r.scopes[1].peakUsage = 500;
    r.scopes[1].peakFill = 0.5;

    ScopeSeries &s2 = snap->series[2];
    s2.usageT = {at(30)};
    s2.usage = {20};
    s2.reconstructedPct = {0.1};
    r.scopes[2].currentUsage = 20;
    r.scopes[2].currentFill = 0.1;

    ScopeSeries &s3 = snap->series[3];
    s3.usageT = {at(100), at(300)};
    s3.usage = {950, 999};
    s3.reconstructedPct = {0.95, 0.999};
    r.scopes[3].currentUsage = 999;
    r.scopes[3].currentFill = 0.999;

    ScopeSeries &s4 = snap->series[4];
    s4.usageT = {at(250)};
    s4.usage = {1000};
    s4.reconstructedPct = {1.0};
    r.scopes[4].currentUsage = 1000;
    r.scopes[4].currentFill = 1.0;
    r.scopes[4].peakFill = 1.0;

    r.throttles.total = 9;
    r.throttles.byErrorCode = {{QStringLiteral("RequestBlocked"), 8},
                               {QStringLiteral("CapacityLimitExceeded"), 1}};
    r.throttles.byScope = {{QStringLiteral("Application"), 6}, {QStringLiteral("User"), 3}};
    r.throttles.byKind = {{QStringLiteral("rate-limit"), 8}, {QStringLiteral("capacity"), 1}};
    r.throttles.byIdentityAndErrorCode = {
        {migrator,
         {{QStringLiteral("RequestBlocked"), 6}, {QStringLiteral("CapacityLimitExceeded"), 1}}},
        {alice, {{QStringLiteral("RequestBlocked"), 2}}}};
    snap->binMs = 60'000;
    ThrottleBin first;
    first.startMs = at(120);
    first.byErrorCode = {{QStringLiteral("RequestBlocked"), 5},
                         {QStringLiteral("CapacityLimitExceeded"), 1}};
    ThrottleBin second;
    second.startMs = at(180);
    second.byErrorCode = {{QStringLiteral("RequestBlocked"), 3}};
    snap->throttleBins = {first, second};

    const QString app = QStringLiteral("app");
    const QString logged = QStringLiteral("logged");
    const QString reconstructed = QStringLiteral("reconstructed");
    const QString closed = QStringLiteral("closed");
    const QString open = QStringLiteral("open");
    const QString halfOpen = QStringLiteral("half-open");
    r.breakerTransitions = {transition(at(121), app, reconstructed, closed, open,
                                       QStringLiteral("429 RequestBlocked, cooldown 55 s")),
                            transition(at(125), app, logged, closed, open),
                            transition(at(185), app, logged, open, halfOpen),
                            transition(at(190), app, reconstructed, open, closed),
                            transition(at(200), app, logged, halfOpen, closed)};
    r.breakers = {breaker(app, logged, 3, 60, closed), breaker(app, reconstructed, 2, 69, closed)};

    r.alerts = {{QStringLiteral("near-limit"), QStringLiteral("warning"), at(115), migrator,
                 QStringLiteral("fabric/platform at 90 %")},
                {QStringLiteral("retry-storm"), QStringLiteral("critical"), at(130), alice,
                 QStringLiteral("12 retries within 1 s after a 429")}};
    r.malformedSamples = {
        redact::malformedRecord(QStringLiteral("requests.ndjson"), 17, QStringLiteral("not JSON"))};
    return snap;
}

// identities x limits scopes with `points` usage samples each over one hour, throttle bins of
// 10 s, a few breakers and alerts: the benchmark's "100 identities x 3 limits" dashboard.
inline std::shared_ptr<DashboardSnapshot> largeSnapshot(int identities, int limits, int points)
{
    auto snap = std::make_shared<DashboardSnapshot>();
    snap->generation = 1;
    ReportData &r = snap->report;
    const qint64 span = 3600'000;
    r.firstMs = t0();
    r.lastMs = t0() + span;
    r.events = 1'000'000;
    snap->series.reserve(static_cast<size_t>(identities * limits));
    quint32 seed = 12345;
    auto nextRandom = [&seed] {
        seed = seed * 1664525u + 1013904223u;
        return (seed >> 8) % 1000;
    };
    for (int i = 0; i < identities; ++i) {
        for (int l = 0; l < limits; ++l) {
            ScopeSummary s = scope(QStringLiteral("identity-%1").arg(i, 3, 10, QLatin1Char('0')),
                                   QStringLiteral("svc"), QStringLiteral("limit-%1").arg(l),
                                   100.0 * (l + 1), 60);
            ScopeSeries series;
            series.usageT.reserve(static_cast<size_t>(points));
            series.usage.reserve(static_cast<size_t>(points));
            series.reconstructedPct.reserve(static_cast<size_t>(points));
            series.acceptedUsage.reserve(static_cast<size_t>(points));
            series.blockedUntil.reserve(static_cast<size_t>(points));
            double usage = 0;
            for (int p = 0; p < points; ++p) {
                usage = std::clamp(usage + (static_cast<double>(nextRandom()) - 480.0) / 50.0, 0.0,
                                   s.capacity);
                series.usageT.push_back(t0() + span * p / points);
                series.usage.push_back(usage);
                series.reconstructedPct.push_back(usage / s.capacity);
                series.acceptedUsage.push_back(usage * 0.9);
                series.blockedUntil.push_back(usage >= s.capacity ? series.usageT.back() + 30'000
                                                                  : 0);
                if (usage >= s.capacity && p % 7 == 0)
                    series.observedThrottleT.push_back(series.usageT.back());
            }
            s.currentUsage = usage;
            s.currentAcceptedUsage = usage * 0.9;
            s.currentFill = usage / s.capacity;
            if (usage >= s.capacity)
                s.nextSafeSendMs = *r.lastMs + 30'000;
            s.peakUsage = s.capacity;
            s.peakFill = 1.0;
            r.scopes.append(s);
            snap->series.push_back(std::move(series));
        }
    }
    // The last five minutes of every identity's traffic, per second, some of it throttled.
    for (int i = 0; i < identities; ++i) {
        KeyActivity activity;
        activity.key = QStringLiteral("identity-%1").arg(i, 3, 10, QLatin1Char('0'));
        for (qint64 t = *r.lastMs - DashboardSnapshot::kActivityRetentionMs + 1000; t <= *r.lastMs;
             t += 1000) {
            KeyActivityBin bin;
            bin.startMs = t;
            bin.requests = 10;
            bin.laneTagged = 10;
            bin.background = static_cast<qint32>(nextRandom() % 10);
            bin.throttles = static_cast<qint32>(nextRandom() % 3);
            if (bin.throttles > 0)
                bin.byErrorCode.insert(QStringLiteral("RequestBlocked"), bin.throttles);
            activity.bins.push_back(bin);
        }
        snap->keyActivity.push_back(std::move(activity));
        r.breakers.append(breaker(QStringLiteral("user:identity-%1").arg(i, 3, 10, QLatin1Char('0')),
                                  QStringLiteral("reconstructed"), 2, 10,
                                  i % 5 == 0 ? QStringLiteral("open") : QStringLiteral("closed")));
    }
    snap->binMs = 10'000;
    for (qint64 t = t0(); t < t0() + span; t += snap->binMs) {
        ThrottleBin bin;
        bin.startMs = t;
        bin.byErrorCode.insert(QStringLiteral("RequestBlocked"), nextRandom() % 20);
        bin.byErrorCode.insert(QStringLiteral("TooManyRequests"), nextRandom() % 5);
        snap->throttleBins.push_back(bin);
        r.throttles.total += bin.byErrorCode.value(QStringLiteral("RequestBlocked")) +
                             bin.byErrorCode.value(QStringLiteral("TooManyRequests"));
    }
    for (int b = 0; b < 200; ++b) {
        const QString to = b % 2 == 0 ? QStringLiteral("open") : QStringLiteral("closed");
        const QString from = b % 2 == 0 ? QStringLiteral("closed") : QStringLiteral("open");
        r.breakerTransitions.append(transition(t0() + span * b / 200, QStringLiteral("app"),
                                               QStringLiteral("reconstructed"), from, to));
    }
    for (int a = 0; a < 500; ++a)
        r.alerts.append({QStringLiteral("near-limit"), QStringLiteral("warning"),
                         t0() + span * a / 500, QStringLiteral("identity-%1").arg(a % identities),
                         QStringLiteral("fill at 0.9")});
    return snap;
}

} // namespace ts::fixture
