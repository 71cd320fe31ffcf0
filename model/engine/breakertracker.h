#pragma once
// Circuit breakers, two kinds side by side:
//
// * logged: the client's own breaker, when it writes `type: breaker` events. Summarised as
//   transitions, time spent open and the state at the end of the data, per logged scope name.
//
// * reconstructed: the reference breaker every client *should* have had, replayed on the log to
//   show what it would have done. Its open/closed decision is a documented breaker's
//   (policy/breakermodel.h: Polly v8 defaults unless the policy or the operator says
//   otherwise): every answered request is an outcome in the breaker's sampling window (the
//   last SamplingDuration, or the last N calls); it opens when the window holds at least
//   MinimumThroughput outcomes and failures / outcomes >= FailureRatio; it stays open for
//   BreakDuration, or until the Retry-After of the throttle that opened it when that is later
//   (a throttle seen while open extends it the same way); then half-open: the next
//   halfOpenCalls requests are the probes and their failure ratio decides as above (Polly: one
//   probe, a failure opens again, a success closes). Closing empties the window (both Polly and
//   Resilience4j start a closed breaker with fresh metrics).
//
//   A failure is a throttle (429, or 503 / 430 with the service's throttle signals), any other
//   5xx, or 408: what Microsoft.Extensions.Http.Resilience's standard pipeline hands its Polly
//   breaker as transient failures. Other answers are successes. A request without an answer
//   (status 0: unknown in the log) is no outcome. Requests sent while the breaker is open are
//   counted as blocked (a real breaker would have refused them), not as outcomes.
//
//   soft-open is kept as an annotation of closed: the service reports >= softOpenAt of a limit
//   used (x-ms-throttle-limit-percentage, RateLimit headers) or the engine's reconstructed fill
//   is that high, so an operator sees "close to the limit" before anything fails (the
//   operators' lesson 3 of throttle-models.md). It blocks nothing and does not decide opening:
//   a soft-open breaker counts outcomes and opens exactly as a closed one does.
//
// Scope naming and routing of the reconstructed breakers:
//   app:<app>                 application-wide breaker: opened by a 429 whose
//                             x-ms-throttle-scope is Application / Tenant_Application / Tenant.
//                             While open it stops *every* user of the app.
//   user:<identity>           per-user breaker of the Graph family (graph, onenote, sharepoint):
//                             opened by a user-scope 429 or a Graph 429 without a scope header;
//                             stops only that user. (Graph's user limits are per app and user;
//                             logs come from one client app in practice, so the app is not part
//                             of the name.)
//   servicebus:<namespace>    Service Bus throttles a whole namespace (credits per namespace);
//                             falls back to the identity when the namespace is not logged.
//   <service>:<identity>      every other service (Fabric's quota is per identity, nginx per
//                             client): one breaker per caller.
// A request is subject to its caller breaker and, when it names an app, to that app's breaker.
//
// openSeconds counts time in `open` only: half-open lasts until the client sends a probe, which
// is the client's choice, not the service's penalty.
//
// Not thread-safe: one tracker belongs to one worker thread; results leave as plain values.
// Events must arrive in time order (per tsMs); they may arrive in batches (the live
// dashboard). Memory is proportional to the number of breakers (callers and apps), plus a
// bounded list of transitions.

#include "core/requestevent.h"
#include "engine/alertcommon.h"
#include "engine/reportdata.h"
#include "policy/breakermodel.h"
#include "policy/policy.h"
#include "signals/throttlesignals.h"

#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include <limits>
#include <vector>

namespace ts {

enum class BreakerState : quint8 { Closed, SoftOpen, Open, HalfOpen };
QString breakerStateName(BreakerState state); // closed | soft-open | open | half-open

// Editable: every threshold of the reference breaker.
struct BreakerParameters
{
    // The breaker replayed for events whose policy names none (and for every event when the
    // tracker is given no policies).
    BreakerModel model;
    // Soft-open when the service reports this fraction of a limit used
    // (x-ms-throttle-limit-percentage, RateLimit remaining/limit, or the engine's fill).
    double softOpenAt = 0.8;
    // A soft-open breaker closes again when no near-limit report arrived for this long
    // (one Graph minute window), or at once when the service reports a percentage below
    // softOpenAt and the engine's reconstructed fill has not been near the limit for as long.
    qint64 softOpenHoldMs = 60000;
    // Keep at most this many transitions (the oldest are dropped; counts stay exact).
    int maxStoredTransitions = 20000;
    // Names listed in BreakerSummary::blockedIdentities per breaker.
    int maxBlockedIdentities = 1000;
};

class BreakerTracker
{
public:
    using Parameters = BreakerParameters;

    // policies: a breaker replays the `breaker` of the policy that matches the event that made
    // it (the first policy whose match fits, as the engine picks), else the set's default
    // breaker (PolicySet::setBreaker), else parameters.model.
    explicit BreakerTracker(Parameters parameters = {}, const PolicySet &policies = {});

    [[nodiscard]] const Parameters &parameters() const { return m_parameters; }
    // The model of breakers whose policy names none.
    [[nodiscard]] const BreakerModel &defaultModel() const { return m_models.front(); }

    // Every event, in time order: requests drive the reconstructed breakers, `type: breaker`
    // events the logged ones; annotations and batch envelopes are ignored (each sub-response is
    // a request of its own), except a throttled envelope, which trips like a request.
    void add(const RequestEvent &event, const throttle::ThrottleSignals &sig);

    // The engine's reconstructed fill (usage / capacity) of a limit right after `event` was
    // charged, so soft-open can trigger from the model before the service says anything.
    // applicationWide: the limit's key is the app (all users share it), so the app breaker is
    // the one that softens; otherwise the caller's breaker.
    void observeFill(const RequestEvent &event, double fill, bool applicationWide = false);

    // Breaker states at endMs (timers that expire before endMs are applied): reconstructed
    // breakers first, then logged ones, each sorted by scope. A reconstructed breaker is listed
    // once it changed state or counted a failure (every caller has one; most stay quiet).
    [[nodiscard]] QList<BreakerSummary> summaries(qint64 endMs) const;
    // Transitions in the order they happened (reconstructed and logged interleaved by arrival).
    // Timer-driven transitions (open -> half-open, soft-open lapsing) appear once the next event
    // of that breaker, or summaries(), reaches them; summaries() does not record them.
    [[nodiscard]] QList<BreakerTransition> transitions() const { return m_transitions; }
    [[nodiscard]] qint64 droppedTransitions() const { return m_droppedTransitions; }
    // Sets report->breakers = summaries(endMs) and report->breakerTransitions.
    void fillReport(ReportData *report, qint64 endMs) const;

    // The name of the reconstructed breaker a throttle of this event opens.
    [[nodiscard]] static QString tripScopeName(const RequestEvent &event,
                                               const throttle::ThrottleSignals &sig);
    // When a request like `event`, about to be sent at event.tsMs, may pass the reconstructed
    // breakers that govern it (its caller's and, when it names one, its app's): event.tsMs
    // when both let it through (closed, soft-open, or a break that has ended: it is then a
    // probe), else the end of the later break. What a client that runs this reference breaker
    // checks before each send (the what-if simulation's --breaker, whatif/simulation.h).
    [[nodiscard]] qint64 passesAt(const RequestEvent &event) const;
    // Current state of a reconstructed breaker by name (Closed when unknown), as of the last
    // event it saw.
    [[nodiscard]] BreakerState state(const QString &scopeName) const;

private:
    enum class Kind : quint8 { App, User, Namespace, Caller };
    // Identifies a reconstructed breaker. The index is keyed by a 64-bit hash of (kind,
    // service, id) computed once per event from short strings; the strings are only used to
    // name a new breaker. (Two scopes would have to collide in 64 bits to be merged.) The
    // pointers refer to the event being added (or static names): a Key never outlives add().
    struct Key
    {
        Kind kind = Kind::Caller;
        const QString *service = nullptr; // Caller only
        const QString *id = nullptr;      // app, identity or namespace
        quint64 hash = 0;
    };
    // hashes: remembers the hashes of interned strings (null: hash every time).
    [[nodiscard]] static Key makeKey(Kind kind, const QString *service, const QString &id,
                                     TextHashCache *hashes);
    // The sampling window of one breaker: outcomes recorded while closed.
    struct Outcomes
    {
        // Window::Time: slices of samplingDuration / kSlices, each started by the first outcome
        // after the previous one ended, dropped once samplingDuration old (Polly v8's rolling
        // health metrics). A ring of at most kSlices; allocated with the first outcome.
        struct Slice
        {
            qint64 startMs = 0;
            qint32 calls = 0;
            qint32 failures = 0;
        };
        static constexpr int kSlices = 10;
        std::vector<Slice> slices;
        int first = 0;
        int used = 0;
        // Window::Count: the last windowCalls outcomes (1 = failure), a ring.
        std::vector<quint8> ring;
        int next = 0;
        // Totals over what the window holds.
        qint64 calls = 0;
        qint64 failures = 0;

        void record(const BreakerModel &model, qint64 atMs, bool failure);
        void clear();
    };
    struct Reconstructed
    {
        QString name;
        bool applicationWide = false; // app:<app>: stops every user of the app
        int model = 0;                // m_models index
        BreakerState state = BreakerState::Closed;
        qint64 sinceMs = 0;     // when the current state began
        qint64 openUntilMs = 0; // Open: when the break ends
        qint64 lastNearLimitMs = 0;
        // The last near-limit fill the engine reconstructed for this breaker's traffic. A low
        // percentage in one response does not close a soft-open the model still sees near
        // its limit: the two would otherwise toggle the breaker on every other request.
        qint64 lastFillNearLimitMs = std::numeric_limits<qint64>::min() / 2;
        Outcomes window;
        int probeCalls = 0; // HalfOpen: probes answered so far
        int probeFailures = 0;
        int transitions = 0;
        int trips = 0;
        qint64 openMs = 0; // finished open intervals
        qint64 blockedRequests = 0;
        qint64 requests = 0; // outcomes recorded while closed or soft-open
        qint64 failures = 0;
        double peakFailureRatio = 0;
        absl::flat_hash_set<quint64> blockedIdentityHashes; // distinct blocked identities
        QStringList blockedIdentities; // their names, at most maxBlockedIdentities
    };
    struct Logged
    {
        QString state = QStringLiteral("closed");
        qint64 sinceMs = 0;
        int transitions = 0;
        int trips = 0;
        qint64 openMs = 0;
    };

    void addLogged(const RequestEvent &event);
    [[nodiscard]] static Key callerKey(const RequestEvent &event,
                                       const throttle::ThrottleSignals &sig, TextHashCache *hashes);
    [[nodiscard]] static Key tripKey(const RequestEvent &event,
                                     const throttle::ThrottleSignals &sig, TextHashCache *hashes);
    [[nodiscard]] static QString nameOf(const Key &key);
    [[nodiscard]] int find(const Key &key) const
    {
        const auto it = m_index.find(key.hash);
        return it == m_index.end() ? -1 : it->second;
    }
    // The event names the policy, hence the model, of a breaker it creates.
    int findOrCreate(const Key &key, const RequestEvent &event);
    [[nodiscard]] int modelFor(const RequestEvent &event);

    // Pure state machine steps, shared by the live path and the read-only summaries (which
    // replay timers on a copy and pass log = nullptr).
    void advance(Reconstructed &breaker, qint64 nowMs, QList<BreakerTransition> *log) const;
    static void moveTo(Reconstructed &breaker, BreakerState to, qint64 atMs, const QString &reason,
                       QList<BreakerTransition> *log);
    // Live versions: keep m_notClosed and the transition cap right.
    void advanceLive(int index, qint64 nowMs);
    void change(int index, BreakerState to, qint64 atMs, const QString &reason);
    void trimTransitions();

    enum class Outcome : quint8 { None, Success, Failure };
    [[nodiscard]] static Outcome outcomeOf(const RequestEvent &event,
                                           const throttle::ThrottleSignals &sig);
    // One request as this breaker sees it: blocked while open, a probe while half-open, an
    // outcome in the window while closed (which may open it). throttledHere: the request's
    // throttle is routed to this breaker (its Retry-After applies here).
    void passRequest(int index, const RequestEvent &event, const throttle::ThrottleSignals &sig,
                     Outcome outcome, bool throttledHere);
    void open(int index, const RequestEvent &event, const throttle::ThrottleSignals &sig,
              const QString &why);
    // Notes a near-limit report; true when the breaker is closed and must now soft-open (the
    // caller formats the reason only then: near-limit reports repeat on every response).
    bool noteNearLimit(int index, qint64 atMs);

    Parameters m_parameters;
    // The policies consulted for a new breaker's model; empty when none names a breaker.
    PolicySet m_policies;
    // The models in use: [0] the default, then those of policies, each once.
    std::vector<BreakerModel> m_models;
    std::vector<Reconstructed> m_breakers;
    // A Swiss table: looked up twice per event (caller and app) once any breaker is not closed,
    // mostly for keys seen before; QHash's span probes showed in perf.
    absl::flat_hash_map<quint64, int> m_index; // Key::hash -> m_breakers index
    TextHashCache m_hashes;          // identities, apps, services of the events, by address
    QHash<QString, Logged> m_logged; // logged scope name -> its state
    int m_notClosed = 0; // reconstructed breakers not Closed: lets quiet traffic skip all work
    QList<BreakerTransition> m_transitions;
    qint64 m_droppedTransitions = 0;
};

} // namespace ts
