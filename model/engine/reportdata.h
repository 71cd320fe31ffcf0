#pragma once
// Plain value types describing what the pipeline found: produced by the engine and the report
// aggregation, consumed by the JSON/text report, the item models and the views. No behaviour.

#include "core/requestevent.h"
#include "policy/breakermodel.h"

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>
#include <vector>

namespace ts {

// Why a throttle happened (docs/report-json.md, "Throttle causes"). Observed throttles get one
// from what the service said and what the replay found; predicted ones are always Limit or
// Concurrency (the model predicts nothing else).
enum class ThrottleCause : quint8 {
    None,        // not a throttle
    Limit,       // a modelled rate limit was exhausted (the scope's own, for a scope's counts)
    RetryAfter,  // sent while an earlier Retry-After / blocked-until (a penalty) still ran
    Concurrency, // too many requests in flight
    Capacity,    // the service's capacity was overloaded (Fabric CapacityLimitExceeded)
    Unexplained, // no modelled limit was exhausted: a limit is missing, or lower than documented
};
constexpr int kThrottleCauseCount = 6;

// "limit" | "retry-after" | "concurrency" | "capacity" | "unexplained" | "none"
inline QString throttleCauseName(ThrottleCause cause)
{
    switch (cause) {
    case ThrottleCause::Limit:
        return QStringLiteral("limit");
    case ThrottleCause::RetryAfter:
        return QStringLiteral("retry-after");
    case ThrottleCause::Concurrency:
        return QStringLiteral("concurrency");
    case ThrottleCause::Capacity:
        return QStringLiteral("capacity");
    case ThrottleCause::Unexplained:
        return QStringLiteral("unexplained");
    case ThrottleCause::None:
        break;
    }
    return QStringLiteral("none");
}

// The replay set a bucket's state to what the service said (docs/report-json.md,
// "corrections"): "at T the service said full; the model had room for 7".
struct StateCorrection
{
    qint64 atMs = 0;
    double saidUsage = 0;  // the usage the service's answer implies (capacity = full)
    double modelUsage = 0; // what the replay had counted just before
    double capacity = 0;
    QString reason; // "429" | "limit-percentage" | "remaining"

    // "at 2026-…Z the service said full (429); the model had room for 7"
    [[nodiscard]] QString describe() const;
};

struct ScopeSummary
{
    QString service;
    QString limit;     // limit name in the policy ("platform", "per-minute", ...)
    QString key;       // bucket owner value ("sp-migrator", "note-bridge+alice@contoso.com")
    QString algorithm; // fixed-window | sliding-window | token-bucket | leaky-bucket | credits |
                       // concurrency
    QString policy;    // policy name
    // A key that does not hold the identity (an ARM subscription, an app): the identities that
    // sent its requests (the first kMaxCallers), so its row shows their breakers too.
    QStringList callers;
    static constexpr qsizetype kMaxCallers = 16;
    double capacity = 0;
    double windowSeconds = 0; // 0 when the algorithm has no window
    qint64 requests = 0;
    // Usage as the limiter counts it (throttled requests included where the limit charges
    // them): the count that decides predictedThrottled. peakFill = peakUsage / capacity.
    double peakUsage = 0;
    double peakFill = 0;
    // The same for accepted requests only (what the service served), docs/report-json.md.
    double acceptedPeakUsage = 0;
    double acceptedPeakFill = 0;
    double timeAtLimitSeconds = 0;
    qint64 predictedThrottled = 0;
    qint64 observedThrottled = 0;
    std::optional<qint64> nextSafeSendMs;
    // Why nextSafeSendMs is that late: the limit (of this key's co-charged limits) whose window
    // frees up last, and whether a Retry-After / blocked-until the service sent is what holds
    // the key back longest (then nextSafeSendLimit names the limit it was attributed to).
    QString nextSafeSendLimit;
    bool nextSafeSendRetryAfter = false;
    // Learned from the service: usage at which observed 429s really began (nullopt = unknown).
    std::optional<double> effectiveLimit;
    // State at the end of the data (or at the snapshot instant), as the limiter counts it, and
    // the accepted layer of it.
    double currentUsage = 0;
    double currentFill = 0;
    double currentAcceptedUsage = 0;
    // Highest x-ms-throttle-limit-percentage (or equivalent) the service reported for this key.
    std::optional<double> observedLimitPercentage;
    // Throttles of this scope by cause (throttleCauseName; only causes that occurred): observed
    // ones attributed to this scope, and predicted ones (always its own limit).
    QMap<QString, qint64> observedByCause;
    QMap<QString, qint64> predictedByCause;
    // Times the replay set this bucket to what the service said, and the first of them
    // (at most kMaxCorrectionLog).
    qint64 corrections = 0;
    QList<StateCorrection> correctionLog;
    static constexpr int kMaxCorrectionLog = 100;
    // What the pace advice is made of (engine/paceadvice.h): the requests charged under this
    // bucket's key by any limit of the policy, and how many of them the service refused; the
    // key's identity part (empty when the key has none: an app, a namespace); the mean cost of
    // this limit's requests; and the steady request rate into this bucket the limit sustains
    // at that cost (0: no limit, an observed-only one).
    qint64 keyRequests = 0;
    qint64 keyThrottled = 0;
    QString keyIdentity;
    double meanCost = 1;
    double allowedRatePerSecond = 0;
};

// Pace advice for one bucket key (engine/paceadvice.h, docs/report-json.md "advice").
struct LimitAllowance
{
    QString limit;
    QString algorithm;
    double share = 0;         // of the key's requests that this limit charges
    double meanCost = 1;      // per request it charges
    double ratePerSecond = 0; // the key's pace this limit allows
};

struct PaceAdvice
{
    QString policy;
    QString key;
    QString identity; // the key's identity part; empty when the key has none (app, namespace)
    double maxRatePerSecond = 0;
    QString bindingLimit;
    QList<LimitAllowance> limits; // every modelled limit of the key, the binding one first
};

struct BreakerSummary
{
    QString scope;  // "app", "user:alice@contoso.com", ...
    QString source; // "reconstructed" | "logged"
    int transitions = 0;
    double openSeconds = 0;
    QString finalState; // closed | soft-open | open | half-open
    // Reconstructed breakers only: how often the breaker opened, how many requests were sent
    // while it was open (the reference breaker would have held them back), and who sent them
    // (for an application-wide breaker: every user of the app it stopped; at most 1000 names).
    int trips = 0;
    qint64 blockedRequests = 0;
    QStringList blockedIdentities;
    // Reconstructed breakers only: the reference breaker replayed (policy/breakermodel.h), the
    // outcomes it counted while closed (requests with an answer; failures: throttles, 5xx,
    // 408) and the highest failure ratio its window reached with at least minimumThroughput
    // requests in it (0 when it never had that many): how close it came to opening.
    std::optional<BreakerModel> model;
    qint64 requests = 0;
    qint64 failures = 0;
    double peakFailureRatio = 0;
};

struct BreakerTransition
{
    qint64 tsMs = 0;
    QString scope;
    QString source;
    QString from;
    QString to;
    QString reason; // why, for an operator: "429 RequestBlocked, cooldown 55 s", "probe succeeded"
};

struct Alert
{
    QString kind;     // retry-storm | lost-work | retry-after-ignored | capacity | near-limit |
                      // lane-starvation
    QString severity; // critical | warning | info
    qint64 atMs = 0;
    QString key;
    QString detail;
};

struct ThrottleSummary
{
    qint64 total = 0;
    QMap<QString, qint64> byErrorCode; // "none" for a throttle without a code
    QMap<QString, qint64> byScope;     // "Application", "User", ... ("none" without a scope)
    QMap<QString, qint64> byKind;      // rate-limit | capacity | server-busy
    QMap<QString, qint64> byCause;     // throttleCauseName of each observed throttle
    qint64 notRetryable = 0;           // throttles the service says retrying soon will not help
    // Throttles per identity (the event's identity, "none" when unknown) and error code, for the
    // Throttles view's identity x errorCode table.
    QMap<QString, QMap<QString, qint64>> byIdentityAndErrorCode;
};

struct ReportData
{
    qint64 events = 0;
    qint64 malformed = 0;
    // Events that came after a later one (out of time order beyond what the reading put back in
    // order: timemerge.h); analysed at each bucket's latest instant.
    qint64 lateEvents = 0;
    // Requests the client's own breaker refused (RequestEvent::refusedByClientBreaker): counted
    // in `events`, not in byStatus (they have no answer).
    qint64 refusedByClientBreaker = 0;
    QMap<int, qint64> byStatus;
    ThrottleSummary throttles;
    QList<ScopeSummary> scopes;
    QList<BreakerSummary> breakers;
    QList<BreakerTransition> breakerTransitions;
    // The reference breaker replayed for events whose policy names none (the Breakers page
    // shows and edits it; each reconstructed breaker carries its own in BreakerSummary::model).
    // Not in the JSON report: every breaker there says which model it used.
    BreakerModel breakerModel;
    QList<Alert> alerts;
    QList<PaceAdvice> advice;                // per bucket key, engine/paceadvice.h
    QList<MalformedRecord> malformedSamples; // the first few, for display
    std::optional<qint64> firstMs;
    std::optional<qint64> lastMs;
};

// The time series behind one ScopeSummary (same index in DashboardSnapshot::report.scopes),
// for the bucket view, the fill grid, the event detail and the replay scrubber, which all read
// it through models::usageAt so they agree with the report at every instant (issue 19.6).
// From usageT[firstExact] on the series is exact: a point at every event and at every instant
// the usage changes between events (a window ends, a charge leaves a sliding window, a request
// in flight ends, a token or leaky bucket's line reaches zero). usage(t) is a step function
// (constant from usageT[i] until usageT[i+1]) or, when `linear` (token and leaky buckets), the
// line from point i to point i+1, an event's jump being two points at its instant. Before
// firstExact (a long history past the point budget) each point is the peak of a bin starting
// there, held as a step. fill = usage / capacity. usage is the limiter's count, acceptedUsage
// the accepted layer, blockedUntil the instant (ms) the limit had no room until, as projected
// at that point with no further traffic (0 = it had room), held as a step: the "safe to send
// in" of a replay instant.
struct ScopeSeries
{
    std::vector<qint64> usageT;
    std::vector<double> usage;
    std::vector<double> acceptedUsage;
    std::vector<qint64> blockedUntil;
    // Points before this index are peak bins, from it on exact (see above).
    size_t firstExact = 0;
    bool linear = false; // usage and acceptedUsage are lines between points, not steps
    // Header-observed limit percentage (fraction) at the instants the service reported it.
    std::vector<qint64> observedPctT;
    std::vector<double> observedPct;
    // Reconstructed limit percentage (fraction of the most restrictive limit) at the same
    // instants as usage, for a side-by-side plot with the observed one.
    std::vector<double> reconstructedPct;
    std::vector<qint64> observedThrottleT;  // when the service answered 429 (or equivalent)
    std::vector<qint64> predictedThrottleT; // when the model says the service would reject
    // [start, end) intervals in which a Retry-After / blocked-until told the client to wait.
    std::vector<std::pair<qint64, qint64>> retryAfterIntervals;
    // State corrections from the service's answers (ScopeSummary::correctionLog), at most
    // maxSeriesPoints: the Bucket chart's markers.
    std::vector<StateCorrection> corrections;
};

// Throttles per time bin, split by error code: the stacked bar chart of the Throttles view.
struct ThrottleBin
{
    qint64 startMs = 0;
    QMap<QString, qint64> byErrorCode;
    QMap<QString, qint64> byCause; // the same throttles by throttleCauseName
};

// What one bucket key (ScopeSummary::key) sent in one second: the Overview's "429s per second
// now" by errorCode and its lane share. Kept for the last few minutes of data only.
struct KeyActivityBin
{
    qint64 startMs = 0;
    qint32 requests = 0;
    qint32 background = 0; // requests on the background lane
    qint32 laneTagged = 0; // requests that name a lane at all (background or foreground)
    qint32 throttles = 0;
    QMap<QString, qint32> byErrorCode; // throttles by code ("none" without one); empty if none
};

struct KeyActivity
{
    QString key;
    std::vector<KeyActivityBin> bins; // ascending startMs, 1 s each, gaps = nothing sent
};

// Why one event was throttled (observed) or would have been (predicted): the Events page's
// Cause column and filter. Kept for throttled events only: the newest kMaxEventCauses (a live
// operator reads the newest rows; the oldest are dropped a quarter at a time).
struct EventCause
{
    qint64 tsMs = 0;
    QString identity;
    qint64 line = 0; // RequestEvent::line: tells apart events of one identity at one instant
    ThrottleCause cause = ThrottleCause::None;
    QString limit; // the limit it was pinned on; empty for retry-after, capacity, unexplained
    bool observed = false; // the service throttled it (else only the model predicted it)
};

// Everything the dashboard shows, as one immutable value handed from the worker to the GUI
// thread (~10 Hz while live). generation increases with every snapshot so stale ones can be
// dropped.
struct DashboardSnapshot
{
    quint64 generation = 0;
    ReportData report;
    std::vector<ScopeSeries> series; // parallel to report.scopes
    std::vector<ThrottleBin> throttleBins;
    qint64 binMs = 1000;
    // Per key, the last kActivityRetentionMs of data before report.lastMs.
    std::vector<KeyActivity> keyActivity;
    static constexpr qint64 kActivityRetentionMs = 5 * 60 * 1000;
    // In time order; shared between snapshots while no throttle is added (null: none).
    std::shared_ptr<const std::vector<EventCause>> eventCauses;
    static constexpr size_t kMaxEventCauses = 100'000;
};

} // namespace ts
