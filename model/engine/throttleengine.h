#pragma once
// The reconstruction engine: replays request events against throttle policies and rebuilds, for
// every (limit, key) that sees traffic, the bucket usage over time, the requests the limiter
// would have rejected (predicted) beside the ones the service did reject (observed), the time
// spent at the limit, the next safe send instant and what the service's own answers teach
// (window phase from blocked-until instants, the usage at which 429s really began).
//
// Incremental: add() events as they come (files, tail, HTTP ingest); ask scopes(), series() or
// fillSnapshot() at any time. Events must be roughly time-ordered: an event older than the
// latest one a bucket has seen is evaluated at that bucket's latest instant (per-bucket clamping,
// counted in lateEvents()), which keeps every bucket's state monotonic and costs nothing for
// ordered input. Files are merged by time before they get here (ingest/timemerge.h); what is
// still late then is counted once for the operator by Analysis (the report's lateEvents).
//
// Re-running with another PolicySet (the policy editor) = a new engine (or reset()) fed with
// the same events.
//
// Not thread-safe: one engine belongs to one worker thread; results leave as plain values.

#include "core/requestevent.h"
#include "engine/reportdata.h"
#include "policy/policy.h"
#include "signals/throttlesignals.h"

#include <QList>
#include <QString>

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace ts {

class ThrottleEngine
{
public:
    struct Options
    {
        // Fill at or above which a near-limit alert is raised (once per key+limit episode).
        double nearLimitFill = 0.8;
        // Bins of the throttle bar chart.
        qint64 throttleBinMs = 1000;
        // Upper bound of stored points per series (usage bins, throttle instants): beyond it
        // the series is coarsened (bins merged pairwise, instants thinned), never unbounded.
        // 4000 points per series is more than a plot can show and keeps a report of hundreds
        // of scopes well under 200 MB however long the log.
        int maxSeriesPoints = 4000;
        // Points of each bucket's usage series (at most maxSeriesPoints): one per event and
        // per change between events, exact for the newest half, older ones folded into peak
        // bins (one truth per instant, ARCHITECTURE.md). 2,000 points of 40 bytes per bucket:
        // hundreds of buckets stay within a few tens of MB, and snapshots copy no more.
        int usageSeriesPoints = 2000;
        // Whether the engine keeps what only plots draw: the buckets' usage step series,
        // their throttle, Retry-After and reported-percentage marks, and the throttle bar
        // chart's bins. No summary is computed from them, so a report-only run switches this
        // off and saves the per-event bookkeeping; series(), throttleBins() and snapshots then
        // come back empty.
        bool recordPlotData = true;
        // Whether the service's answers correct state the log does not show (a 429 the replay
        // did not expect while the bucket may have been drained before the log began, or a
        // limit-percentage / remaining header far from its fill). Off: the replay assumes an
        // idle start throughout (what the engine did before corrections; kept for comparison).
        bool correctFromService = true;
    };

    explicit ThrottleEngine(PolicySet policies = PolicySet::builtin());
    ThrottleEngine(PolicySet policies, Options options);
    ~ThrottleEngine();
    ThrottleEngine(const ThrottleEngine &) = delete;
    ThrottleEngine &operator=(const ThrottleEngine &) = delete;

    // Forgets all state and starts over with these policies.
    void reset(PolicySet policies);
    [[nodiscard]] const PolicySet &policies() const;

    // What the engine made of one event.
    struct Verdict
    {
        bool request = false;            // a request event (not an envelope, breaker, note)
        bool matched = false;            // at least one limit of its policy applied
        bool predictedThrottled = false; // some applicable limit was exhausted when it was sent
        bool observedThrottled = false;  // the service answered with a throttle
        // The highest usage / capacity among the limits it charged, after the charge, and
        // whether that limit is shared by every user of an app (keyed by the app alone): what
        // softens the reconstructed breaker of the caller, or of the whole app.
        double fill = 0;
        bool fillApplicationWide = false;
        // A weighted event (RequestEvent::weight > 1): how that fill rose over its requests, so
        // that each of them reaches the breakers with the fill after it, as the single requests
        // it stands for would (issue 30.8). Runs of requests charged in one step, the usage of
        // the fullest limit after the run rising linearly from `from` (before its first
        // request) to `to` (after its last); null for a single request.
        struct FillRun
        {
            qint64 units = 0;
            double from = 0;
            double to = 0;
            double capacity = 0;
            // The fill after the k-th request of the run (1 <= k <= units).
            [[nodiscard]] double fillAfter(qint64 k) const
            {
                if (capacity <= 0 || units <= 0)
                    return 0;
                return (from + (to - from) * double(k) / double(units)) / capacity;
            }
        };
        std::shared_ptr<const std::vector<FillRun>> unitFills;
        // The category the policy's URL rules gave the event (Fabric's API group); null when
        // the event carried its own or its policy has no rules. Points at the engine's
        // compiled policy, valid until reset(): a pointer, not a copy, because a copy's
        // reference count would be bumped by the engine's thread and dropped by the
        // detectors', on one cache line shared by every event of the group.
        const QString *category = nullptr;
        // Why it was throttled: the observed throttle's cause, else the predicted one's (None:
        // neither); the limit it was pinned on (null when none: retry-after, capacity,
        // unexplained). Points at the compiled policy, as category does.
        ThrottleCause cause = ThrottleCause::None;
        const QString *causeLimit = nullptr;
    };

    Verdict add(const RequestEvent &event);
    // The same, reusing signals the caller already extracted (throttle::extract(event)), so a
    // pipeline that also feeds breakers and detectors parses each throttle answer once.
    Verdict add(const RequestEvent &event, const throttle::ThrottleSignals &extracted);
    void addBatch(std::span<const RequestEvent> events);
    void addBatch(const QList<RequestEvent> &events);

    // What the service would answer a request sent at event.tsMs, as the replay decides it:
    // refused when one of the limits that charge it has no room; then when the latest of those
    // has room again (what its Retry-After says) and which limit that is. Nothing is charged:
    // the buckets the event touches are only advanced to its instant, so add() of the same
    // event next (its status set to the answer) decides exactly the same. The what-if
    // simulation's service (whatif/simulation.h).
    struct Admission
    {
        bool matched = false; // a policy applies and at least one of its limits charges it
        bool refused = false;
        qint64 retryAtMs = 0;           // refused: when the refusing limits all have room again
        const QString *limit = nullptr; // refused: the limit that has room last (the policy's)
    };
    Admission admit(const RequestEvent &event);
    // admit() and add() in one pass: `answer` sees the admission and sets the event's answer
    // (its status, Retry-After, duration) before the engine charges it. The limits are those
    // the event selected before it had its answer: a policy that matches on the status or the
    // error code would be replayed by `report` with the answer in place.
    Verdict addAnswered(RequestEvent &event, const std::function<void(const Admission &)> &answer);

    // Request events charged or evaluated (batch envelopes, breaker and annotation events are
    // not requests).
    [[nodiscard]] qint64 requestEvents() const;
    // Events that arrived older than their bucket's latest instant (see the class comment).
    [[nodiscard]] qint64 lateEvents() const;
    // Request events whose service has no policy in the set.
    [[nodiscard]] qint64 unmatchedEvents() const;
    [[nodiscard]] std::optional<qint64> firstMs() const;
    [[nodiscard]] std::optional<qint64> lastMs() const;

    // One summary per (limit, key) that saw traffic, in order of first appearance. The current
    // state (currentUsage, nextSafeSend, timeAtLimit of a running episode) is evaluated at atMs,
    // default the latest event instant.
    [[nodiscard]] QList<ScopeSummary> scopes(std::optional<qint64> atMs = std::nullopt) const;
    [[nodiscard]] int scopeCount() const;
    // The series of scope i (same index as scopes()).
    [[nodiscard]] ScopeSeries series(int scopeIndex) const;
    // Throttle taxonomy of every observed throttle (by error code, throttle scope and kind).
    [[nodiscard]] ThrottleSummary throttleSummary() const;
    [[nodiscard]] std::vector<ThrottleBin> throttleBins() const;
    [[nodiscard]] qint64 throttleBinMs() const;
    // near-limit alerts from the reconstructed fill.
    [[nodiscard]] QList<Alert> alerts() const;

    // Fills report.scopes, report.throttles, report.firstMs/lastMs, series, throttleBins, binMs
    // and appends this engine's alerts to report.alerts. Other fields are left as they are (the
    // report aggregation, breakers and dangers fill them).
    void fillSnapshot(DashboardSnapshot *snapshot, std::optional<qint64> atMs = std::nullopt) const;

    // Convenience: run a whole event list through a fresh engine.
    static DashboardSnapshot replay(const PolicySet &policies,
                                    std::span<const RequestEvent> events);

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

} // namespace ts
