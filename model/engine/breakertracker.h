#pragma once
// Circuit breakers, two kinds side by side:
//
// * logged: the client's own breaker, when it writes `type: breaker` events. Summarised as
//   transitions, time spent open and the state at the end of the data, per logged scope name.
//
// * reconstructed: the reference breaker every client *should* have had (throttle-models.md,
//   "what operators learned the hard way"), replayed on the log to show what it would have
//   done: closed -> soft-open when the service reports >= softOpenAt of a limit used -> open on
//   a throttle, for cooldown = max(Retry-After, baseCooldown) -> half-open -> the next request
//   is the probe: a non-throttled answer closes it, a throttle opens it again with a new
//   cooldown.
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
    // Soft-open when the service reports this fraction of a limit used
    // (x-ms-throttle-limit-percentage, RateLimit remaining/limit, or the engine's fill).
    double softOpenAt = 0.8;
    // A soft-open breaker closes again when no near-limit report arrived for this long
    // (one Graph minute window), or at once when the service reports a percentage below
    // softOpenAt and the engine's reconstructed fill has not been near the limit for as long.
    qint64 softOpenHoldMs = 60000;
    // Cooldown of an open breaker: max(Retry-After, baseCooldownMs).
    qint64 baseCooldownMs = 30000;
    // Keep at most this many transitions (the oldest are dropped; counts stay exact).
    int maxStoredTransitions = 20000;
    // Names listed in BreakerSummary::blockedIdentities per breaker.
    int maxBlockedIdentities = 1000;
};

class BreakerTracker
{
public:
    using Parameters = BreakerParameters;

    explicit BreakerTracker(Parameters parameters = {});

    [[nodiscard]] const Parameters &parameters() const { return m_parameters; }

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
    // breakers first, then logged ones, each sorted by scope.
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
    struct Reconstructed
    {
        QString name;
        bool applicationWide = false; // app:<app>: stops every user of the app
        BreakerState state = BreakerState::Closed;
        qint64 sinceMs = 0;     // when the current state began
        qint64 openUntilMs = 0; // Open: when the cooldown ends
        qint64 lastNearLimitMs = 0;
        // The last near-limit fill the engine reconstructed for this breaker's traffic. A low
        // percentage in one response does not close a soft-open the model still sees near
        // its limit: the two would otherwise toggle the breaker on every other request.
        qint64 lastFillNearLimitMs = std::numeric_limits<qint64>::min() / 2;
        int transitions = 0;
        int trips = 0;
        qint64 openMs = 0; // finished open intervals
        qint64 blockedRequests = 0;
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
    int findOrCreate(const Key &key);

    // Pure state machine steps, shared by the live path and the read-only summaries (which
    // replay timers on a copy and pass log = nullptr).
    void advance(Reconstructed &breaker, qint64 nowMs, QList<BreakerTransition> *log) const;
    static void moveTo(Reconstructed &breaker, BreakerState to, qint64 atMs, const QString &reason,
                       QList<BreakerTransition> *log);
    // Live versions: keep m_notClosed and the transition cap right.
    void advanceLive(int index, qint64 nowMs);
    void change(int index, BreakerState to, qint64 atMs, const QString &reason);
    void trimTransitions();

    void passRequest(int index, const RequestEvent &event, bool throttledHere);
    void trip(int index, const RequestEvent &event, const throttle::ThrottleSignals &sig);
    // Notes a near-limit report; true when the breaker is closed and must now soft-open (the
    // caller formats the reason only then: near-limit reports repeat on every response).
    bool noteNearLimit(int index, qint64 atMs);

    Parameters m_parameters;
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
