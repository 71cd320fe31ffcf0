#pragma once
// The dangers an operator must hear about, found in the request log. Every alert is coalesced
// into an episode (never one per event) and carries a severity, the episode start (atMs), a
// key (who: an identity, an app, a service) and a sentence an operator understands.
//
// Definitions (every threshold is an editable AlertParameters field):
//
// Retry: a request is a retry when attempt >= 1, or its operationId failed before, or (without
//   an operationId) the same identity + method + url was throttled within retryMemoryMs.
//   (An operationId that *succeeded* before is new work, not a retry, so only failures are
//   remembered.)
//
// retry-storm (critical), the death spiral: per client (app, else identity), a retry opens a
//   window of stormWindowMs; every request of that client inside it is counted. The window is
//   a *wave* when (a) >= stormMinOperations distinct operations retried in it, or at least
//   stormMinOperationsSmall did and they were >= stormSmallFraction of the distinct operations
//   active in the window (small clients spiral too), (b) fewer than stormMaxSuccessRatio of
//   its requests succeeded, and (c) the client was throttled within stormThrottleLookbackMs
//   before the window ended. Waves no more than stormMaxWaveGapMs apart form one episode; an
//   episode with >= stormMinWaves waves is one alert (wave count, operations, throttled share,
//   duration), updated while the storm goes on.
//
// lost-work (critical): per operation (operationId; for $batch sub-responses without one,
//   identity + method + url) the last outcome. Operations whose last outcome is a failure
//   (status 0, 4xx, 5xx, throttles included) with no later success, and older than
//   lostWorkGraceMs at evaluation, are reported: one alert per identity (else app) naming up to
//   lostWorkMaxNamed operations and the total, and how many sat inside $batch envelopes that
//   themselves answered 2xx (the silent loss). Plain requests without an operationId are not
//   units of work the log can follow, so they are not reported.
//   An operation whose last answer a client retries after a wait (no answer, 408, 429 or
//   another throttle, 5xx) is *pending*, not lost, until its retry was due with the log still
//   going: due at its Retry-After / blocked-until instant, or lostWorkRetryGapFactor times the
//   client's usual retry gap after the failure, whichever is later. The usual gap is the longest
//   gap between a failure and the retry of the same operation the log showed for that client
//   (else for any client, else lostWorkDefaultRetryGapMs). Only when the log has an event after
//   that instant is it lost. Operations still pending when the log ends are one info alert per
//   owner, pending-work ("N operation(s) ... pending when the log ends"), never lost-work.

// retry-after-ignored (warning): a throttle with an advised retry instant (Retry-After,
//   blocked-until, "please wait") blocks its scope: the app for an application-wide
//   x-ms-throttle-scope, else identity + service. Any request of that scope sent after the
//   throttle's response arrived and before retryAt - retryAfterToleranceMs is a violation. A
//   $batch sub-request is sent when its batch is (the earliest instant logged for the batch,
//   envelope or sub-response): the sub-requests of the envelope that brought the throttle were
//   sent with it, before any Retry-After existed, however the log spaces their lines.
//   Violations no more than retryAfterEpisodeGapMs apart form one episode: one alert with the
//   count and how early (max and median).
//
// capacity (warning): throttles of kind capacity (CapacityLimitExceeded, HTTP 430
//   TooManyRequestsForCapacity): the capacity is overloaded, not the caller's rate. One alert
//   per service + tenant episode (gap <= capacityEpisodeGapMs) with counts by code and callers.
//
// near-limit (warning): the service reported a limit percentage >= nearLimitAt
//   (x-ms-throttle-limit-percentage, or RateLimit remaining / limit <= 1 - nearLimitAt).
//   One alert per identity episode (gap <= nearLimitEpisodeGapMs) with the peak reported.
//   (The engine separately raises near-limit from its reconstructed fill.)
//
// lane-starvation (warning): per client (app, else identity), in fixed windows of
//   laneWindowMs: at least laneMinRequests lane-tagged requests, the background lane sent more
//   than laneMaxBackgroundShare of them, and >= laneMinForegroundWaits foreground requests
//   were throttled or had to be retried. Consecutive starving windows form one alert.
//
// Not thread-safe: one detector belongs to one worker thread; alerts leave as plain values.
// Events must arrive in time order (batches are fine: add() is incremental). Memory: per client
// and scope a few counters; per operation only while it is failed (a success forgets it); the
// throttled method+url memory and batch envelope bookkeeping are pruned after retryMemoryMs;
// at most maxTrackedOperations failed operations are tracked.

#include "core/requestevent.h"
#include "engine/alertcommon.h"
#include "engine/reportdata.h"
#include "policy/categoryclassifier.h"
#include "policy/policy.h"
#include "signals/throttlesignals.h"

#include <absl/container/flat_hash_map.h>
#include <absl/container/node_hash_map.h>

#include <QHash>
#include <QList>
#include <QMap>
#include <QSet>
#include <QString>

#include <limits>
#include <vector>

namespace ts {

class AlertScopeKeys; // per-event scope hashes, computed lazily (alertdetector.cpp)

struct AlertParameters
{
    // Retry identification without attempt / operationId.
    qint64 retryMemoryMs = 10 * 60 * 1000;

    // retry-storm
    qint64 stormWindowMs = 5000;
    int stormMinOperations = 20;
    int stormMinOperationsSmall = 5;
    double stormSmallFraction = 0.8;
    double stormMaxSuccessRatio = 0.10;
    qint64 stormThrottleLookbackMs = 5 * 60 * 1000;
    int stormMinWaves = 2;
    qint64 stormMaxWaveGapMs = 5 * 60 * 1000;

    // lost-work
    int lostWorkMaxNamed = 10;
    qint64 lostWorkGraceMs = 0; // live dashboards: give recent failures time to be retried
    // A retryable failure is lost only once the log went on past its retry's due instant (see
    // lost-work above): this many times the client's usual retry gap (backoff doubles it), and
    // the gap assumed for a log that shows no retry at all.
    double lostWorkRetryGapFactor = 2.0;
    qint64 lostWorkDefaultRetryGapMs = 60 * 1000;
    // Each tracked failed operation costs ~150 bytes until it succeeds, and a log can leave
    // any number of them unresolved (the bench: 32k per million lines). 250k keeps the table
    // under ~40 MB; past it failures are still counted and the alert says how many were not
    // tracked. No ordinary log has this many operations failed and never retried.
    int maxTrackedOperations = 250000;

    // retry-after-ignored
    qint64 retryAfterToleranceMs = 0;
    qint64 retryAfterEpisodeGapMs = 60 * 1000;

    // capacity
    qint64 capacityEpisodeGapMs = 5 * 60 * 1000;

    // near-limit
    double nearLimitAt = 0.8;
    qint64 nearLimitEpisodeGapMs = 60 * 1000;

    // lane-starvation
    qint64 laneWindowMs = 60 * 1000;
    double laneMaxBackgroundShare = 0.5;
    int laneMinRequests = 20;
    int laneMinForegroundWaits = 3;
};

class AlertDetector
{
public:
    using Parameters = AlertParameters;

    // quotaGroups tells a Fabric API group from another: a block on one group (Retry-After,
    // "blocked until") does not bind requests to the others.
    explicit AlertDetector(
        Parameters parameters = {},
        CategoryClassifier quotaGroups = CategoryClassifier(PolicySet::builtin()));

    [[nodiscard]] const Parameters &parameters() const { return m_parameters; }

    // Every event in time order (requests, batch envelopes; other types are ignored).
    // quotaGroup: the event's API group when the caller has it already (the engine's
    // classification with the same policy rules); null to classify here when needed.
    void add(const RequestEvent &event, const throttle::ThrottleSignals &sig,
             const QString *quotaGroup = nullptr);
    // The data ends (or, live, "now") at endMs: windows still open are judged as of then.
    // Nothing is discarded, so add() may continue afterwards.
    void finish(qint64 endMs);
    // All alerts as of max(last event, finish()), sorted by atMs then kind. Open windows are
    // judged on copies, so this is const and may be called at any time.
    [[nodiscard]] QList<Alert> alerts() const;
    // The same as of a given instant (live: "now"), without calling finish().
    [[nodiscard]] QList<Alert> alertsAsOf(qint64 asOfMs) const;
    // Appends alertsAsOf(atMs) to report->alerts and keeps the list sorted by atMs (the engine
    // appends its own near-limit alerts to the same list).
    void fillReport(ReportData *report, qint64 atMs) const;

    // Introspection for tests and the status bar.
    [[nodiscard]] qsizetype trackedFailedOperations() const
    {
        return qsizetype(m_failedOperations.size());
    }
    [[nodiscard]] qsizetype rememberedThrottledRequests() const
    {
        return qsizetype(m_throttledRequests.size());
    }

private:
    static constexpr qint64 kNever = std::numeric_limits<qint64>::min() / 4;

    // One failed unit of work, kept until it succeeds (or, for plain throttled requests,
    // until retryMemoryMs has passed). Their number grows with a log's unresolved failures, so
    // each keeps only what the lost-work alert prints: no url when an operationId names it,
    // and the batch as a hash.
    struct FailedOperation
    {
        QString name;          // the operationId, else "METHOD url"
        QString owner;         // alert key: identity, else app
        quint64 batchHash = 0; // batchHash() of the $batch it last failed in, 0 = none
        quint64 clientKey = 0; // whose retry habits say when it is due (AlertScopeKeys::client)
        qint64 firstFailureMs = 0;
        qint64 lastFailureMs = 0;
        qint64 retryAtMs = 0; // the last failure's advised retry instant, 0 = none advised
        int lastStatus = 0;
        int envelopeStatus = -1; // status of the $batch envelope, -1 unknown / not batched
        bool retryable = false;  // the last failure is one clients retry after a wait
    };

    struct StormState
    {
        qint64 lastThrottleMs = kNever;
        // The open window (windowStartMs == kNever: none).
        qint64 windowStartMs = kNever;
        qint64 windowLastMs = kNever;
        qint64 windowRequests = 0;
        qint64 windowSuccesses = 0;
        qint64 windowThrottled = 0;
        qint64 windowRetries = 0;
        // Operation keys seen in the window, deduplicated when the window closes (appending is
        // far cheaper per event than a set insert).
        std::vector<quint64> windowOperations;
        std::vector<quint64> windowRetriedOperations;
        // The current episode of waves.
        int waves = 0;
        qint64 episodeStartMs = 0;
        qint64 lastWaveEndMs = kNever;
        qint64 episodeRequests = 0;
        qint64 episodeThrottled = 0;
        qint64 episodeRetries = 0;
        std::vector<quint64> episodeOperations; // sorted, distinct
        int alertIndex = -1;
    };

    // Advice of the last throttle for one scope, and the episode of violations against it.
    struct Advice
    {
        QString label; // for the detail: "app note-bridge", "alice@contoso.com on graph"
        QString key;
        qint64 knownAtMs = 0;
        qint64 retryAtMs = kNever;
        qint64 lastViolationMs = kNever;
        qint64 episodeStartMs = 0;
        qint64 violations = 0;
        qint64 maxEarlyMs = 0;
        std::vector<qint64> earlyMs; // bounded sample for the median
        int alertIndex = -1;
    };
    struct Episode
    {
        QString key;
        qint64 firstMs = 0;
        qint64 lastMs = kNever;
        qint64 count = 0;
        double peak = 0;
        QMap<QString, qint64> byCode;
        QSet<QString> callers;
        int alertIndex = -1;
    };

    struct LaneState
    {
        qint64 windowIndex = kNever;
        qint64 foreground = 0;
        qint64 background = 0;
        qint64 foregroundWaits = 0;
        // The current episode of starving windows.
        qint64 lastStarvingWindow = kNever;
        qint64 episodeFirstWindow = 0;
        qint64 episodeForeground = 0;
        qint64 episodeBackground = 0;
        qint64 episodeForegroundWaits = 0;
        int alertIndex = -1;
    };

    // Everything kept per client (app, else identity): one lookup serves both detectors.
    struct ClientState
    {
        QString name;
        StormState storm;
        LaneState lane;
    };

    void sweep(qint64 nowMs);
    void recordClientActivity(const RequestEvent &event, const throttle::ThrottleSignals &sig,
                              AlertScopeKeys &keys, quint64 key, bool retry);
    void recordOutcome(const RequestEvent &event, const throttle::ThrottleSignals &sig,
                       AlertScopeKeys &keys, quint64 key);
    void learnRetryGap(const FailedOperation &failed, qint64 retryMs);
    // When the failed operation's retry is due (see lost-work above).
    [[nodiscard]] qint64 retryDueMs(const FailedOperation &failed) const;
    void checkRetryAfter(const RequestEvent &event, qint64 sentMs, AlertScopeKeys &keys);
    // When the request was sent: a $batch sub-request with its batch (see retry-after-ignored).
    qint64 sentAtMs(const RequestEvent &event);
    void checkAdvice(Advice &advice, const RequestEvent &event);
    void recordAdvice(const RequestEvent &event, const throttle::ThrottleSignals &sig,
                      AlertScopeKeys &keys);
    void recordEnvelope(const RequestEvent &event);
    void recordCapacity(const RequestEvent &event, const throttle::ThrottleSignals &sig);
    void recordNearLimit(const RequestEvent &event, double fraction, bool fromPercentageHeader,
                         AlertScopeKeys &keys);
    void recordLane(const QString &client, LaneState &lane, const RequestEvent &event,
                    bool throttled, bool retry);

    // Const helpers that write into an alert list, so alerts() can judge open windows on
    // copies while add() judges them for real.
    void closeStormWindow(const QString &client, StormState &state, QList<Alert> &out) const;
    void closeLaneWindow(const QString &client, LaneState &state, QList<Alert> &out) const;
    void appendLostWork(qint64 asOfMs, QList<Alert> &out) const;
    // One alert per owner of these operations (lost-work, or pending-work when `pending`).
    void appendUnresolved(std::vector<std::vector<const FailedOperation *>> &byOwner, bool pending,
                          QList<Alert> &out) const;

    Parameters m_parameters;
    QList<Alert> m_alerts; // episodes judged so far, updated in place while they go on
    qint64 m_lastEventMs = kNever;
    qint64 m_endMs = kNever;
    qint64 m_lastSweepMs = kNever;

    // Looked up for almost every event, and almost always missing: Abseil's tables find a
    // missing key in their one-byte tags (a few KB for 10k keys), where a QHash compares keys
    // in its entries (a cache miss per probe once the table outgrows the cache). Node-based
    // for failed operations: a few hundred thousand of them stay put, not moved on growth.
    absl::node_hash_map<quint64, FailedOperation> m_failedOperations; // lost-work candidates
    absl::flat_hash_map<quint64, qint64>
        m_throttledRequests;        // identity+method+url -> last throttle
    qint64 m_untrackedFailures = 0; // failures not tracked because of maxTrackedOperations
    // The longest gap between a failure and the retry of the same operation, per client (hash
    // of the client) and over all: how long a failed operation may wait before it is lost.
    absl::flat_hash_map<quint64, qint64> m_retryGapMs;
    qint64 m_longestRetryGapMs = -1;
    // $batch bookkeeping: envelope statuses, and failed sub-responses whose envelope has not
    // been seen yet (logs write the envelope before or after its sub-responses).
    QHash<QString, QPair<int, qint64>> m_envelopes;                   // batchId -> (status, ts)
    QHash<QString, QPair<qint64, QList<quint64>>> m_awaitingEnvelope; // batchId -> (ts, keys)
    // batchHash() -> the earliest instant logged for the batch: when its sub-requests were sent.
    absl::flat_hash_map<quint64, qint64> m_batchSentMs;

    // Per-scope tables are keyed by 64-bit hashes of the scope's strings (fastTextHash):
    // hashing a short identity once is the main cost per event; the names live in the values.
    absl::node_hash_map<quint64, ClientState> m_clients; // hash of the client name
    int m_openStormWindows = 0; // lets quiet traffic skip the storm bookkeeping

    // Swiss tables too: the app's advice and the caller's latest retryAt are looked up for every
    // request while some advice is pending, and QHash's probes were ~15 % of checkRetryAfter().
    absl::node_hash_map<quint64, Advice> m_appAdvice;    // hash of the app
    absl::node_hash_map<quint64, Advice> m_callerAdvice; // hash of service + identity + group
    // Callers with advice in some quota group: only their requests are classified into groups
    // (the classification reads the URL path; most requests have no advice to check).
    // hash of service + identity -> the latest retryAt over its API groups: a request after it
    // cannot be early for any group, and needs no classification into one.
    absl::flat_hash_map<quint64, qint64> m_callerAdviceUntil;
    TextHashCache m_hashes; // identities, apps and services of the events, by address
    CategoryClassifier m_quotaGroups;
    qint64 m_latestRetryAtMs = kNever; // no advice can be violated at or after this instant

    QHash<QString, Episode> m_capacity; // service/tenant -> episode (rare: plain keys)
    absl::node_hash_map<quint64, Episode> m_nearLimit; // hash of the identity -> episode
};

} // namespace ts
