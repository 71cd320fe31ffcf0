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

BreakerTracker::BreakerTracker(Parameters parameters, const PolicySet &policies)
    : m_parameters(std::move(parameters))
{
    m_models.push_back(policies.defaultBreaker().value_or(m_parameters.model));
    // Policies are consulted only when one names a breaker other than the default (not when
    // the Breakers page gave every policy the same one).
    const bool differs = std::any_of(
        policies.policies().cbegin(), policies.policies().cend(), [this](const Policy &policy) {
            return policy.breaker && !(*policy.breaker == m_models.front());
        });
    if (differs)
        m_policies = policies;
}

int BreakerTracker::modelFor(const RequestEvent &event)
{
    // Once per new breaker, not per event: policyFor() matches every policy's conditions.
    if (m_policies.isEmpty())
        return 0;
    const Policy *policy = m_policies.policyFor(event);
    if (!policy || !policy->breaker)
        return 0;
    const auto it = std::find(m_models.cbegin(), m_models.cend(), *policy->breaker);
    if (it != m_models.cend())
        return int(it - m_models.cbegin());
    m_models.push_back(*policy->breaker);
    return int(m_models.size()) - 1;
}

void BreakerTracker::Outcomes::record(const BreakerModel &model, qint64 atMs, bool failure)
{
    if (model.window == BreakerModel::Window::Count) {
        const int size = std::max(1, model.windowCalls);
        if (int(ring.size()) < size) {
            ring.push_back(quint8(failure));
        } else {
            const quint8 oldest = ring[size_t(next)];
            --calls;
            failures -= oldest;
            ring[size_t(next)] = quint8(failure);
            next = (next + 1) % size;
        }
        ++calls;
        failures += int(failure);
        return;
    }
    if (slices.empty())
        slices.resize(kSlices);
    auto dropFirst = [this] {
        calls -= slices[size_t(first)].calls;
        failures -= slices[size_t(first)].failures;
        first = (first + 1) % kSlices;
        --used;
    };
    while (used > 0 && atMs - slices[size_t(first)].startMs >= model.samplingDurationMs)
        dropFirst();
    const qint64 sliceMs = std::max<qint64>(1, model.samplingDurationMs / kSlices);
    Slice *current = used > 0 ? &slices[size_t((first + used - 1) % kSlices)] : nullptr;
    if (!current || atMs - current->startMs >= sliceMs) {
        if (used == kSlices) // (cannot happen with time-ordered outcomes; kept as a guard)
            dropFirst();
        current = &slices[size_t((first + used) % kSlices)];
        *current = Slice{atMs, 0, 0};
        ++used;
    }
    ++current->calls;
    current->failures += qint32(failure);
    ++calls;
    failures += int(failure);
}

void BreakerTracker::Outcomes::clear()
{
    first = 0;
    used = 0;
    ring.clear();
    next = 0;
    calls = 0;
    failures = 0;
}

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

int BreakerTracker::findOrCreate(const Key &key, const RequestEvent &event)
{
    const auto it = m_index.find(key.hash);
    if (it != m_index.end())
        return it->second;
    Reconstructed breaker;
    breaker.name = nameOf(key);
    breaker.applicationWide = key.kind == Kind::App;
    breaker.model = modelFor(event);
    m_breakers.push_back(std::move(breaker));
    const int index = int(m_breakers.size()) - 1;
    m_index.emplace(key.hash, index);
    return index;
}

qint64 BreakerTracker::passesAt(const RequestEvent &event) const
{
    const throttle::ThrottleSignals unanswered;
    qint64 at = event.tsMs;
    const auto holdBy = [&](const Key &key) {
        const int index = find(key);
        if (index < 0)
            return;
        const Reconstructed &breaker = m_breakers[size_t(index)];
        if (breaker.state == BreakerState::Open && event.tsMs < breaker.openUntilMs)
            at = std::max(at, breaker.openUntilMs);
    };
    holdBy(callerKey(event, unanswered, nullptr));
    const QString &app = appOf(event, unanswered);
    if (!app.isEmpty())
        holdBy(makeKey(Kind::App, nullptr, app, nullptr));
    return at;
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
        const int probes = m_models[size_t(breaker.model)].halfOpenCalls;
        moveTo(
            breaker, BreakerState::HalfOpen, breaker.openUntilMs,
            probes == 1
                ? QStringLiteral("break elapsed; the next request is the probe")
                : QStringLiteral("break elapsed; the next %1 requests are the probes").arg(probes),
            log);
        breaker.probeCalls = 0;
        breaker.probeFailures = 0;
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

BreakerTracker::Outcome BreakerTracker::outcomeOf(const RequestEvent &event,
                                                  const throttle::ThrottleSignals &sig)
{
    if (sig.throttled)
        return Outcome::Failure;
    if (event.status == 0) // no answer logged: nothing to learn from it
        return Outcome::None;
    // The transient failures of Microsoft.Extensions.Http.Resilience (5xx, 408, 429).
    if (event.status >= 500 || event.status == 408 || event.status == 429)
        return Outcome::Failure;
    return Outcome::Success;
}

namespace {

// "HTTP 429 50009 (Application scope)": the answer that decided, for a transition's reason.
QString answerText(const RequestEvent &event, const throttle::ThrottleSignals &sig)
{
    QString text = QStringLiteral("HTTP %1").arg(event.status);
    if (!sig.errorCode.isEmpty())
        text += QLatin1Char(' ') + sig.errorCode;
    if (sig.scope && !sig.scope->scope.isEmpty())
        text += QStringLiteral(" (%1 scope)").arg(sig.scope->scope);
    return text;
}

QString ratioText(qint64 failures, qint64 calls)
{
    return QString::number(calls > 0 ? double(failures) / double(calls) : 0.0, 'g', 3);
}

} // namespace

void BreakerTracker::open(int index, const RequestEvent &event,
                          const throttle::ThrottleSignals &sig, const QString &why)
{
    const Reconstructed &breaker = m_breakers[size_t(index)];
    const BreakerModel &model = m_models[size_t(breaker.model)];
    // Opened when the deciding answer arrived (never before the current state began).
    const qint64 openedAtMs = std::max(responseArrivalMs(event), breaker.sinceMs);
    qint64 openUntilMs = openedAtMs + model.breakDurationMs;
    QString reason = why + QStringLiteral("; last answer ") + answerText(event, sig) +
                     QStringLiteral(", break ") + seconds(model.breakDurationMs);
    if (model.retryAfterExtendsBreak && sig.retryAtMs && *sig.retryAtMs > openUntilMs) {
        openUntilMs = *sig.retryAtMs;
        reason +=
            QStringLiteral(", held %1 for its Retry-After").arg(seconds(openUntilMs - openedAtMs));
    }
    if (breaker.applicationWide)
        reason += QStringLiteral("; every user of the app waits");
    change(index, BreakerState::Open, openedAtMs, reason);
    Reconstructed &opened = m_breakers[size_t(index)];
    opened.openUntilMs = openUntilMs;
    opened.probeCalls = 0;
    opened.probeFailures = 0;
}

void BreakerTracker::passRequest(int index, const RequestEvent &event,
                                 const throttle::ThrottleSignals &sig, Outcome outcome,
                                 bool throttledHere)
{
    Reconstructed &breaker = m_breakers[size_t(index)];
    const BreakerModel &model = m_models[size_t(breaker.model)];
    const bool failure = outcome == Outcome::Failure;
    switch (breaker.state) {
    case BreakerState::Open:
        // Sent while the reference breaker was open: it would have held this request back.
        // Requests sent before the decisive response arrived could not have known.
        if (event.tsMs >= breaker.sinceMs) {
            ++breaker.blockedRequests;
            const QString &identity = orUnknown(event.identity);
            const quint64 hash = m_hashes.hash(identity, 0x1d); // (interned: known by address)
            if (breaker.blockedIdentityHashes.insert(hash).second) {
                if (breaker.blockedIdentities.size() < m_parameters.maxBlockedIdentities)
                    breaker.blockedIdentities.append(identity);
            }
        }
        // The service's Retry-After is an instruction: a breaker that honours it stays open
        // until then, whoever sent the request it answered.
        if (throttledHere && model.retryAfterExtendsBreak && sig.retryAtMs)
            breaker.openUntilMs = std::max(breaker.openUntilMs, *sig.retryAtMs);
        return;
    case BreakerState::HalfOpen: {
        // This request is a probe; no answer at all (status 0) proves nothing.
        if (outcome == Outcome::None)
            return;
        ++breaker.probeCalls;
        breaker.probeFailures += int(failure);
        if (breaker.probeCalls < model.halfOpenCalls)
            return;
        const qint64 calls = breaker.probeCalls;
        const qint64 failures = breaker.probeFailures;
        if (double(failures) / double(calls) >= model.failureRatio) {
            open(index, event, sig,
                 model.halfOpenCalls == 1 ? QStringLiteral("probe failed")
                                          : QStringLiteral("%1 of %2 probes failed (%3 >= %4)")
                                                .arg(failures)
                                                .arg(calls)
                                                .arg(ratioText(failures, calls))
                                                .arg(model.failureRatio, 0, 'g', 3));
            return;
        }
        change(index, BreakerState::Closed, event.tsMs,
               model.halfOpenCalls == 1
                   ? QStringLiteral("probe succeeded (HTTP %1)").arg(event.status)
                   : QStringLiteral("%1 of %2 probes failed (%3 < %4)")
                         .arg(failures)
                         .arg(calls)
                         .arg(ratioText(failures, calls))
                         .arg(model.failureRatio, 0, 'g', 3));
        Reconstructed &closed = m_breakers[size_t(index)];
        closed.window.clear(); // a closed breaker starts with fresh metrics
        closed.probeCalls = 0;
        closed.probeFailures = 0;
        return;
    }
    case BreakerState::Closed:
    case BreakerState::SoftOpen: {
        if (outcome == Outcome::None)
            return;
        Outcomes &window = breaker.window;
        window.record(model, event.tsMs, failure);
        ++breaker.requests;
        breaker.failures += int(failure);
        if (window.calls < model.minimumThroughput)
            return;
        const double ratio = double(window.failures) / double(window.calls);
        breaker.peakFailureRatio = std::max(breaker.peakFailureRatio, ratio);
        // Polly weighs the window on a failure; Resilience4j after every call (its count window
        // can reach the minimum number of calls with a success).
        if (ratio < model.failureRatio ||
            !(failure || model.window == BreakerModel::Window::Count)) {
            return;
        }
        const QString over =
            model.window == BreakerModel::Window::Time
                ? QStringLiteral("in the last ") + seconds(model.samplingDurationMs)
                : QStringLiteral("of the last %1 calls").arg(model.windowCalls);
        open(index, event, sig,
             QStringLiteral("%1 of %2 requests failed %3 (%4 >= %5)")
                 .arg(window.failures)
                 .arg(window.calls)
                 .arg(over, ratioText(window.failures, window.calls))
                 .arg(model.failureRatio, 0, 'g', 3));
        return;
    }
    }
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
    const Outcome outcome = outcomeOf(event, sig);
    // Fast path: a request without an answer changes nothing while every breaker is closed.
    if (outcome == Outcome::None && m_notClosed == 0 && !nearLimit && !reported)
        return;

    const Key caller = callerKey(event, sig, &m_hashes);
    const QString &app = appOf(event, sig);
    const Key appKey = app.isEmpty() ? Key{} : makeKey(Kind::App, nullptr, app, &m_hashes);
    // Every answer is an outcome for the caller's breaker and, when the request names its app,
    // for the app's: both need a window from the first request on.
    const bool create = outcome != Outcome::None || nearLimit;
    int callerIndex = create ? findOrCreate(caller, event) : find(caller);
    int appIndex = app.isEmpty() ? -1 : create ? findOrCreate(appKey, event) : find(appKey);
    // Where a throttle or a near-limit report belongs: the app's breaker for an app-wide scope
    // (it stops every user), else the caller's.
    int targetIndex = callerIndex;
    if ((sig.throttled || nearLimit) && sig.scope && sig.scope->isApplicationWide() &&
        appIndex >= 0)
        targetIndex = appIndex;

    if (appIndex >= 0)
        advanceLive(appIndex, event.tsMs);
    if (callerIndex >= 0 && callerIndex != appIndex)
        advanceLive(callerIndex, event.tsMs);
    // A throttle is a failure of the breaker it is routed to only: an app-scope 429 says nothing
    // about this user's own limit, a user-scope 429 nothing about the app's. Any other answer
    // (a success, a 5xx) counts for both.
    auto outcomeAt = [&](int index) {
        return sig.throttled && index != targetIndex ? Outcome::None : outcome;
    };
    if (appIndex >= 0)
        passRequest(appIndex, event, sig, outcomeAt(appIndex),
                    sig.throttled && appIndex == targetIndex);
    if (callerIndex >= 0 && callerIndex != appIndex) {
        passRequest(callerIndex, event, sig, outcomeAt(callerIndex),
                    sig.throttled && callerIndex == targetIndex);
    }

    if (targetIndex < 0)
        return;
    if (nearLimit) {
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
               reported && !sig.throttled && target.state == BreakerState::SoftOpen &&
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
    const int index = findOrCreate(key, event);
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
        // Every caller has a breaker; those that never failed nor moved say nothing.
        if (original.transitions == 0 && original.failures == 0)
            continue;
        // Timers are applied to a copy (summaries() is const); the window is not needed for
        // them and is left out of the copy.
        Reconstructed breaker;
        breaker.name = original.name;
        breaker.model = original.model;
        breaker.state = original.state;
        breaker.sinceMs = original.sinceMs;
        breaker.openUntilMs = original.openUntilMs;
        breaker.lastNearLimitMs = original.lastNearLimitMs;
        breaker.transitions = original.transitions;
        breaker.trips = original.trips;
        breaker.openMs = original.openMs;
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
        summary.blockedRequests = original.blockedRequests;
        summary.blockedIdentities = original.blockedIdentities;
        summary.blockedIdentities.sort();
        summary.model = m_models[size_t(original.model)];
        summary.requests = original.requests;
        summary.failures = original.failures;
        summary.peakFailureRatio = original.peakFailureRatio;
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
