#include "breakertracker.h"

#include "engine/alertcommon.h"

#include <QStringView>

#include <algorithm>
#include <cmath>

namespace ts {

namespace {

const QString kReconstructed = QStringLiteral("reconstructed");
const QString kLogged = QStringLiteral("logged");

bool equalsIgnoringCase(const QString &text, QLatin1StringView word)
{
    return text.compare(word, Qt::CaseInsensitive) == 0;
}

// Services that answer with x-ms-throttle-scope and have app and user limits.
bool isGraphFamily(const QString &service)
{
    // Length first: most events are not of this family and the compares are not free.
    const qsizetype size = service.size();
    if (size != 5 && size != 7 && size != 10)
        return false;
    if (service == u"graph" || service == u"onenote" || service == u"sharepoint")
        return true;
    return equalsIgnoringCase(service, QLatin1StringView("graph")) ||
           equalsIgnoringCase(service, QLatin1StringView("onenote")) ||
           equalsIgnoringCase(service, QLatin1StringView("sharepoint"));
}

bool isServiceBus(const QString &service)
{
    // Length first, then the usual spelling, then any other case.
    return service.size() == 10 && (service == u"servicebus" ||
                                    equalsIgnoringCase(service, QLatin1StringView("servicebus")));
}

// The app an event belongs to: its own field, else the app id inside x-ms-throttle-scope.
const QString &appOf(const RequestEvent &event, const throttle::ThrottleSignals &sig)
{
    if (!event.app.isEmpty() || !sig.scope)
        return event.app;
    return sig.scope->appId;
}

const QString kUnknown = QStringLiteral("unknown");

const QString &orUnknown(const QString &text)
{
    return text.isEmpty() ? kUnknown : text;
}

QString seconds(qint64 ms)
{
    return QString::number(double(ms) / 1000.0, 'g', 4) + QStringLiteral(" s");
}

} // namespace

QString breakerStateName(BreakerState state)
{
    switch (state) {
    case BreakerState::Closed:
        return QStringLiteral("closed");
    case BreakerState::SoftOpen:
        return QStringLiteral("soft-open");
    case BreakerState::Open:
        return QStringLiteral("open");
    case BreakerState::HalfOpen:
        return QStringLiteral("half-open");
    }
    return QStringLiteral("closed");
}

BreakerTracker::BreakerTracker(Parameters parameters) : m_parameters(parameters) {}

BreakerTracker::Key BreakerTracker::makeKey(Kind kind, const QString *service, const QString &id,
                                            TextHashCache *hashes)
{
    auto hashOf = [hashes](const QString &text, size_t seed) {
        return hashes ? hashes->hash(text, seed) : fastTextHash(text, seed);
    };
    quint64 hash = hashOf(id, quint64(kind) + 1);
    if (service)
        hash = combineHashes(hash, hashOf(*service, 0x5e));
    return Key{kind, service, &id, hash};
}

BreakerTracker::Key BreakerTracker::callerKey(const RequestEvent &event,
                                              const throttle::ThrottleSignals &sig,
                                              TextHashCache *hashes)
{
    // (The service first: it is in the event's hot lines, the scope further into the signals.)
    if (isGraphFamily(event.service) || sig.scope)
        return makeKey(Kind::User, nullptr, orUnknown(event.identity), hashes);
    if (isServiceBus(event.service) && !event.serviceBusNamespace.isEmpty())
        return makeKey(Kind::Namespace, nullptr, event.serviceBusNamespace, hashes);
    return makeKey(Kind::Caller, &orUnknown(event.service), orUnknown(event.identity), hashes);
}

BreakerTracker::Key BreakerTracker::tripKey(const RequestEvent &event,
                                            const throttle::ThrottleSignals &sig,
                                            TextHashCache *hashes)
{
    if (sig.scope && sig.scope->isApplicationWide()) {
        const QString &app = appOf(event, sig);
        if (!app.isEmpty())
            return makeKey(Kind::App, nullptr, app, hashes);
    }
    return callerKey(event, sig, hashes);
}

QString BreakerTracker::nameOf(const Key &key)
{
    switch (key.kind) {
    case Kind::App:
        return QStringLiteral("app:") + *key.id;
    case Kind::User:
        return QStringLiteral("user:") + *key.id;
    case Kind::Namespace:
        return QStringLiteral("servicebus:") + *key.id;
    case Kind::Caller:
        break;
    }
    return (key.service ? *key.service : kUnknown) + QLatin1Char(':') + *key.id;
}

QString BreakerTracker::tripScopeName(const RequestEvent &event,
                                      const throttle::ThrottleSignals &sig)
{
    return nameOf(tripKey(event, sig, nullptr));
}

int BreakerTracker::findOrCreate(const Key &key)
{
    const auto it = m_index.find(key.hash);
    if (it != m_index.end())
        return it->second;
    Reconstructed breaker;
    breaker.name = nameOf(key);
    breaker.applicationWide = key.kind == Kind::App;
    m_breakers.push_back(std::move(breaker));
    const int index = int(m_breakers.size()) - 1;
    m_index.emplace(key.hash, index);
    return index;
}

BreakerState BreakerTracker::state(const QString &scopeName) const
{
    for (const auto &breaker : m_breakers) {
        if (breaker.name == scopeName)
            return breaker.state;
    }
    return BreakerState::Closed;
}

void BreakerTracker::moveTo(Reconstructed &breaker, BreakerState to, qint64 atMs,
                            const QString &reason, QList<BreakerTransition> *log)
{
    if (breaker.state == to)
        return;
    if (breaker.state == BreakerState::Open)
        breaker.openMs += std::max<qint64>(0, atMs - breaker.sinceMs);
    if (log) {
        log->append({atMs, breaker.name, kReconstructed, breakerStateName(breaker.state),
                     breakerStateName(to), reason});
    }
    breaker.state = to;
    breaker.sinceMs = atMs;
    ++breaker.transitions;
    if (to == BreakerState::Open)
        ++breaker.trips;
}

void BreakerTracker::advance(Reconstructed &breaker, qint64 nowMs,
                             QList<BreakerTransition> *log) const
{
    if (breaker.state == BreakerState::Open && nowMs >= breaker.openUntilMs) {
        moveTo(breaker, BreakerState::HalfOpen, breaker.openUntilMs,
               QStringLiteral("cooldown elapsed; the next request is the probe"), log);
    } else if (breaker.state == BreakerState::SoftOpen &&
               nowMs - breaker.lastNearLimitMs >= m_parameters.softOpenHoldMs) {
        moveTo(breaker, BreakerState::Closed, breaker.lastNearLimitMs + m_parameters.softOpenHoldMs,
               QStringLiteral("no near-limit report for ") + seconds(m_parameters.softOpenHoldMs),
               log);
    }
}

void BreakerTracker::trimTransitions()
{
    const int cap = std::max(1, m_parameters.maxStoredTransitions);
    if (m_transitions.size() <= cap)
        return;
    // Drop in chunks so trimming stays amortised O(1) per transition.
    const qsizetype drop = m_transitions.size() - cap + cap / 4;
    const qsizetype dropped = std::min(drop, m_transitions.size());
    m_transitions.remove(0, dropped);
    m_droppedTransitions += dropped;
}

void BreakerTracker::change(int index, BreakerState to, qint64 atMs, const QString &reason)
{
    Reconstructed &breaker = m_breakers[size_t(index)];
    const bool wasClosed = breaker.state == BreakerState::Closed;
    moveTo(breaker, to, atMs, reason, &m_transitions);
    const bool isClosed = breaker.state == BreakerState::Closed;
    m_notClosed += int(wasClosed) - int(isClosed);
    trimTransitions();
}

void BreakerTracker::advanceLive(int index, qint64 nowMs)
{
    Reconstructed &breaker = m_breakers[size_t(index)];
    const bool wasClosed = breaker.state == BreakerState::Closed;
    advance(breaker, nowMs, &m_transitions);
    m_notClosed += int(wasClosed) - int(breaker.state == BreakerState::Closed);
    trimTransitions();
}

void BreakerTracker::passRequest(int index, const RequestEvent &event, bool throttledHere)
{
    Reconstructed &breaker = m_breakers[size_t(index)];
    switch (breaker.state) {
    case BreakerState::Open:
        // Sent while the reference breaker was open: it would have held this request back.
        // Requests sent before the throttle's response arrived could not have known.
        if (event.tsMs >= breaker.sinceMs) {
            ++breaker.blockedRequests;
            const QString &identity = orUnknown(event.identity);
            const quint64 hash = m_hashes.hash(identity, 0x1d); // (interned: known by address)
            if (breaker.blockedIdentityHashes.insert(hash).second) {
                if (breaker.blockedIdentities.size() < m_parameters.maxBlockedIdentities)
                    breaker.blockedIdentities.append(identity);
            }
        }
        break;
    case BreakerState::HalfOpen:
        // This request is the probe. A throttle routed here re-opens the breaker (trip());
        // any other answer closes it; no answer at all (status 0) proves nothing.
        if (!throttledHere && event.status != 0) {
            change(index, BreakerState::Closed, event.tsMs,
                   QStringLiteral("probe succeeded (HTTP %1)").arg(event.status));
        }
        break;
    case BreakerState::Closed:
    case BreakerState::SoftOpen:
        break;
    }
}

void BreakerTracker::trip(int index, const RequestEvent &event,
                          const throttle::ThrottleSignals &sig)
{
    const qint64 responseMs = responseArrivalMs(event);
    qint64 cooldownMs = m_parameters.baseCooldownMs;
    if (sig.retryAtMs)
        cooldownMs = std::max(cooldownMs, *sig.retryAtMs - responseMs);

    Reconstructed &breaker = m_breakers[size_t(index)];
    if (breaker.state == BreakerState::Open) {
        // A throttle while already open (in flight, or a client ignoring the breaker) extends
        // the cooldown; it is not a new transition.
        breaker.openUntilMs = std::max(breaker.openUntilMs, responseMs + cooldownMs);
        return;
    }
    const qint64 openedAtMs = std::max(responseMs, breaker.sinceMs);
    QString reason =
        breaker.state == BreakerState::HalfOpen ? QStringLiteral("probe throttled: ") : QString();
    reason += QStringLiteral("HTTP %1").arg(event.status);
    if (!sig.errorCode.isEmpty())
        reason += QLatin1Char(' ') + sig.errorCode;
    if (sig.scope && !sig.scope->scope.isEmpty())
        reason += QStringLiteral(" (%1 scope)").arg(sig.scope->scope);
    reason += QStringLiteral(", cooldown ") + seconds(cooldownMs);
    if (breaker.applicationWide)
        reason += QStringLiteral("; every user of the app waits");
    change(index, BreakerState::Open, openedAtMs, reason);
    m_breakers[size_t(index)].openUntilMs = openedAtMs + cooldownMs;
}

bool BreakerTracker::noteNearLimit(int index, qint64 atMs)
{
    Reconstructed &breaker = m_breakers[size_t(index)];
    if (breaker.state == BreakerState::Closed || breaker.state == BreakerState::SoftOpen)
        breaker.lastNearLimitMs = std::max(breaker.lastNearLimitMs, atMs);
    return breaker.state == BreakerState::Closed;
}

void BreakerTracker::add(const RequestEvent &event, const throttle::ThrottleSignals &sig)
{
    if (event.type == EventType::Breaker) {
        addLogged(event);
        return;
    }
    // A $batch envelope is not a request of its own (its sub-responses are), unless the whole
    // batch was throttled: then the envelope is the only throttle the client saw.
    if (event.type != EventType::Request || (event.batchEnvelope && !sig.throttled))
        return;

    const double fraction = reportedLimitFraction(sig);
    const bool reported = !std::isnan(fraction);
    const bool nearLimit = fraction >= m_parameters.softOpenAt; // (false for NaN)
    // Fast path: nothing is open or soft-open, and this response neither trips nor softens a
    // breaker. This is most traffic of a healthy log.
    if (m_notClosed == 0 && !sig.throttled && !nearLimit)
        return;

    const Key caller = callerKey(event, sig, &m_hashes);
    const QString &app = appOf(event, sig);
    const Key appKey = app.isEmpty() ? Key{} : makeKey(Kind::App, nullptr, app, &m_hashes);
    int callerIndex = find(caller);
    int appIndex = app.isEmpty() ? -1 : find(appKey);
    int targetIndex = -1;
    if (sig.throttled || nearLimit) {
        // Same routing as tripKey(), reusing the keys computed above.
        if (sig.scope && sig.scope->isApplicationWide() && !app.isEmpty())
            targetIndex = appIndex = findOrCreate(appKey);
        else
            targetIndex = callerIndex = findOrCreate(caller);
    } else if (reported) {
        targetIndex = callerIndex; // a low percentage can only close an existing soft-open
    }

    if (appIndex >= 0)
        advanceLive(appIndex, event.tsMs);
    if (callerIndex >= 0 && callerIndex != appIndex)
        advanceLive(callerIndex, event.tsMs);
    if (appIndex >= 0)
        passRequest(appIndex, event, sig.throttled && appIndex == targetIndex);
    if (callerIndex >= 0 && callerIndex != appIndex)
        passRequest(callerIndex, event, sig.throttled && callerIndex == targetIndex);

    if (targetIndex < 0)
        return;
    if (sig.throttled) {
        trip(targetIndex, event, sig);
    } else if (nearLimit) {
        const bool fromHeader =
            sig.limitPercentage && *sig.limitPercentage >= m_parameters.softOpenAt;
        if (noteNearLimit(targetIndex, event.tsMs)) {
            change(targetIndex, BreakerState::SoftOpen, event.tsMs,
                   QStringLiteral("%1 %2 >= %3")
                       .arg(fromHeader ? QStringLiteral("x-ms-throttle-limit-percentage")
                                       : QStringLiteral("RateLimit used fraction"))
                       .arg(fraction, 0, 'g', 3)
                       .arg(m_parameters.softOpenAt, 0, 'g', 3));
        }
    } else if (const Reconstructed &target = m_breakers[size_t(targetIndex)];
               target.state == BreakerState::SoftOpen &&
               event.tsMs - target.lastFillNearLimitMs >= m_parameters.softOpenHoldMs) {
        // The service says usage fell below the threshold again, and the reconstruction has
        // not said otherwise for a hold period.
        change(targetIndex, BreakerState::Closed, event.tsMs,
               QStringLiteral("service reports %1 of the limit used").arg(fraction, 0, 'g', 3));
    }
}

void BreakerTracker::observeFill(const RequestEvent &event, double fill, bool applicationWide)
{
    if (fill < m_parameters.softOpenAt || !event.isRequest())
        return;
    static const throttle::ThrottleSignals none; // (a ~300-byte value: not built per event)
    Key key = applicationWide && !event.app.isEmpty()
                  ? makeKey(Kind::App, nullptr, event.app, &m_hashes)
                  : callerKey(event, none, &m_hashes);
    const int index = findOrCreate(key);
    advanceLive(index, event.tsMs);
    Reconstructed &breaker = m_breakers[size_t(index)];
    breaker.lastFillNearLimitMs = std::max(breaker.lastFillNearLimitMs, event.tsMs);
    if (noteNearLimit(index, event.tsMs)) {
        change(index, BreakerState::SoftOpen, event.tsMs,
               QStringLiteral("reconstructed fill %1 >= %2")
                   .arg(fill, 0, 'g', 3)
                   .arg(m_parameters.softOpenAt, 0, 'g', 3));
    }
}

void BreakerTracker::addLogged(const RequestEvent &event)
{
    const QString scope =
        event.breakerScope.isEmpty() ? QStringLiteral("client") : event.breakerScope;
    const QString state = event.breakerState.trimmed().toLower();
    if (state.isEmpty())
        return;
    auto it = m_logged.find(scope);
    if (it == m_logged.end()) {
        it = m_logged.insert(scope, Logged{});
        it->sinceMs = event.tsMs;
    }
    Logged &logged = it.value();
    if (logged.state == state)
        return;
    if (logged.state == QLatin1StringView("open"))
        logged.openMs += std::max<qint64>(0, event.tsMs - logged.sinceMs);
    m_transitions.append({event.tsMs, scope, kLogged, logged.state, state, QString()});
    trimTransitions();
    logged.state = state;
    logged.sinceMs = event.tsMs;
    ++logged.transitions;
    if (state == QLatin1StringView("open"))
        ++logged.trips;
}

void BreakerTracker::fillReport(ReportData *report, qint64 endMs) const
{
    report->breakers = summaries(endMs);
    report->breakerTransitions = m_transitions;
}

QList<BreakerSummary> BreakerTracker::summaries(qint64 endMs) const
{
    QList<BreakerSummary> reconstructed;
    reconstructed.reserve(qsizetype(m_breakers.size()));
    for (const Reconstructed &original : m_breakers) {
        Reconstructed breaker = original; // timers are applied to a copy: summaries() is const
        advance(breaker, endMs, nullptr); // one timer at most: half-open and closed have none
        qint64 openMs = breaker.openMs;
        if (breaker.state == BreakerState::Open)
            openMs += std::max<qint64>(0, endMs - breaker.sinceMs);
        BreakerSummary summary;
        summary.scope = breaker.name;
        summary.source = kReconstructed;
        summary.transitions = breaker.transitions;
        summary.openSeconds = double(openMs) / 1000.0;
        summary.finalState = breakerStateName(breaker.state);
        summary.trips = breaker.trips;
        summary.blockedRequests = breaker.blockedRequests;
        summary.blockedIdentities = breaker.blockedIdentities;
        summary.blockedIdentities.sort();
        reconstructed.append(summary);
    }
    const auto byScope = [](const BreakerSummary &a, const BreakerSummary &b) {
        return a.scope < b.scope;
    };
    std::sort(reconstructed.begin(), reconstructed.end(), byScope);

    QList<BreakerSummary> logged;
    for (auto it = m_logged.cbegin(); it != m_logged.cend(); ++it) {
        const Logged &state = it.value();
        qint64 openMs = state.openMs;
        if (state.state == QLatin1StringView("open"))
            openMs += std::max<qint64>(0, endMs - state.sinceMs);
        BreakerSummary summary;
        summary.scope = it.key();
        summary.source = kLogged;
        summary.transitions = state.transitions;
        summary.openSeconds = double(openMs) / 1000.0;
        summary.finalState = state.state;
        summary.trips = state.trips;
        logged.append(summary);
    }
    std::sort(logged.begin(), logged.end(), byScope);
    return reconstructed + logged;
}

} // namespace ts
