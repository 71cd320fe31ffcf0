#include "alertdetector.h"

#include "core/timeparse.h"
#include "engine/alertcommon.h"

#include <algorithm>
#include <thread>

namespace ts {

namespace {

const QString kRetryStorm = QStringLiteral("retry-storm");
const QString kLostWork = QStringLiteral("lost-work");
const QString kPendingWork = QStringLiteral("pending-work");
const QString kRetryAfterIgnored = QStringLiteral("retry-after-ignored");
const QString kCapacity = QStringLiteral("capacity");
const QString kNearLimit = QStringLiteral("near-limit");
const QString kLaneStarvation = QStringLiteral("lane-starvation");
const QString kCritical = QStringLiteral("critical");
const QString kWarning = QStringLiteral("warning");
const QString kInfo = QStringLiteral("info");
const QString kUnknown = QStringLiteral("unknown");

// Bounds on per-episode bookkeeping, so one endless storm cannot grow without limit.
constexpr qsizetype kMaxEpisodeOperations = qsizetype(1) << 20;
constexpr size_t kMaxEarlinessSamples = 4096;
constexpr qsizetype kMaxEpisodeCallers = 50;

bool isSuccess(int status)
{
    return status >= 200 && status < 400;
}

// A failure a client retries after a wait: no answer, a timeout, a throttle, a server error.
// Other 4xx (400, 403, 404...) are the request's own fault: waiting changes nothing.
bool isRetryable(int status, const throttle::ThrottleSignals &sig)
{
    return sig.throttled || status == 0 || status == 408 || status == 429 || status >= 500;
}

const QString &orUnknown(const QString &text)
{
    return text.isEmpty() ? kUnknown : text;
}

// Who runs the retry loops and owns the lanes: the client application, else the identity.
const QString &clientOf(const RequestEvent &event)
{
    return event.app.isEmpty() ? orUnknown(event.identity) : event.app;
}

// Whose work is lost: the identity that did it, else the app.
const QString &ownerOf(const RequestEvent &event)
{
    return event.identity.isEmpty() ? orUnknown(event.app) : event.identity;
}

// The unit of work a request belongs to: its operationId, else identity + method + url.
// Different seeds keep the two kinds of key apart. The identity and the method are interned by
// the readers, so `hashes` knows them by address: only the url is hashed afresh.
quint64 operationKey(const RequestEvent &event, TextHashCache &hashes)
{
    if (!event.operationId.isEmpty())
        return fastTextHash(event.operationId, 0x6f70);
    return fastTextHash(event.url, combineHashes(hashes.hash(event.identity, 0x7369),
                                                 hashes.hash(event.method, 0x6d65)));
}

// A $batch id as kept per failed operation (0 = not batched): comparing ids is all it is for.
quint64 batchHash(const QString &batchId)
{
    return batchId.isEmpty() ? 0 : fastTextHash(batchId, 0x6261) | 1;
}

qint64 floorDiv(qint64 value, qint64 divisor)
{
    const qint64 quotient = value / divisor;
    return (value % divisor != 0 && (value < 0) != (divisor < 0)) ? quotient - 1 : quotient;
}

QString secondsText(qint64 ms)
{
    return QString::number(double(ms) / 1000.0, 'f', ms % 1000 == 0 ? 0 : 1) + QStringLiteral(" s");
}

QString percentText(double fraction)
{
    return QString::number(fraction * 100.0, 'f', 0) + QStringLiteral(" %");
}

QString countsText(const QMap<QString, qint64> &counts)
{
    QStringList parts;
    for (auto it = counts.cbegin(); it != counts.cend(); ++it)
        parts.append(QStringLiteral("%1 ×%2").arg(it.key()).arg(it.value()));
    return parts.join(QStringLiteral(", "));
}

QString namesText(const QSet<QString> &names, qsizetype total)
{
    QStringList sorted = names.values();
    sorted.sort();
    constexpr qsizetype kShown = 5;
    QString text = QStringList(sorted.mid(0, kShown)).join(QStringLiteral(", "));
    if (total > kShown)
        text += QStringLiteral(" and %1 more").arg(total - kShown);
    return text;
}

constexpr size_t kTextHashSeed = 0x7e;

quint64 textHash(const QString &text)
{
    return fastTextHash(text, kTextHashSeed);
}

void sortDistinct(std::vector<quint64> &keys)
{
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
}

} // namespace

// The hashes that key the per-scope tables, each computed at most once per event and only
// when some table needs it.
class AlertScopeKeys
{
public:
    // quotaGroup: the event's API group when the caller already knows it (the engine
    // classified the event with the same policy rules), null to classify here if needed.
    AlertScopeKeys(const RequestEvent &event, TextHashCache &hashes,
                   const CategoryClassifier &classifier, const QString *quotaGroup)
        : m_event(event), m_hashes(hashes), m_classifier(classifier), m_quotaGroupHint(quotaGroup)
    {
    }

    // The event's quota group (Fabric's API group), classified at most once.
    const QString &quotaGroup()
    {
        if (m_quotaGroupHint)
            return *m_quotaGroupHint;
        if (!m_quotaGroup)
            m_quotaGroup = m_classifier.categoryOf(m_event);
        return *m_quotaGroup;
    }

    quint64 app()
    {
        if (!m_app)
            m_app = m_hashes.hash(m_event.app, kTextHashSeed);
        return *m_app;
    }
    quint64 identity()
    {
        if (!m_identity)
            m_identity = m_hashes.hash(orUnknown(m_event.identity), kTextHashSeed);
        return *m_identity;
    }
    // identity + service: the scope of a throttle that is not application-wide
    quint64 caller()
    {
        if (!m_caller)
            m_caller = combineHashes(m_hashes.hash(m_event.service, kTextHashSeed), identity());
        return *m_caller;
    }
    // clientOf(): the app, else the identity
    quint64 client() { return m_event.app.isEmpty() ? identity() : app(); }
    // ownerOf(): the identity, else the app
    quint64 owner()
    {
        return (m_event.identity.isEmpty() && !m_event.app.isEmpty()) ? app() : identity();
    }

private:
    const RequestEvent &m_event;
    TextHashCache &m_hashes;
    const CategoryClassifier &m_classifier;
    const QString *m_quotaGroupHint;
    std::optional<QString> m_quotaGroup;
    std::optional<quint64> m_app;
    std::optional<quint64> m_identity;
    std::optional<quint64> m_caller;
};

AlertDetector::AlertDetector(Parameters parameters, CategoryClassifier quotaGroups)
    : m_parameters(parameters), m_quotaGroups(std::move(quotaGroups))
{
}

void AlertDetector::add(const RequestEvent &event, const throttle::ThrottleSignals &sig,
                        const QString *quotaGroup)
{
    if (event.type != EventType::Request)
        return;
    if (event.batchEnvelope) {
        (void)sentAtMs(event);
        recordEnvelope(event);
        // A throttled envelope (the whole batch refused) still tells the client when to retry.
        if (sig.throttled && sig.retryAtMs) {
            AlertScopeKeys keys(event, m_hashes, m_quotaGroups, quotaGroup);
            recordAdvice(event, sig, keys);
        }
        return;
    }
    const qint64 now = event.tsMs;
    m_lastEventMs = std::max(m_lastEventMs, now);
    if (now - m_lastSweepMs >= std::max<qint64>(1000, m_parameters.retryMemoryMs / 4))
        sweep(now);

    const bool success = isSuccess(event.status);
    // Hashing the url costs more than everything else on a healthy request: only do it when
    // some table can use the key.
    const bool needKey = !success || event.attempt >= 1 || m_openStormWindows > 0 ||
                         !m_failedOperations.empty() || !m_throttledRequests.empty();
    const quint64 key = needKey ? operationKey(event, m_hashes) : 0;

    bool retry = event.attempt >= 1;
    if (needKey) {
        const auto failed = m_failedOperations.find(key);
        if (failed != m_failedOperations.end()) {
            retry = true;
            learnRetryGap(failed->second, now);
        }
        if (!retry && event.operationId.isEmpty()) {
            const auto it = m_throttledRequests.find(key);
            retry =
                it != m_throttledRequests.end() && now - it->second <= m_parameters.retryMemoryMs;
        }
    }

    AlertScopeKeys keys(event, m_hashes, m_quotaGroups, quotaGroup);
    const qint64 sentMs = event.batchId.isEmpty() ? now : sentAtMs(event);
    if (sentMs < m_latestRetryAtMs)
        checkRetryAfter(event, sentMs, keys);

    // Storm and lane bookkeeping, per client: only for clients that retry, get throttled,
    // tag lanes, or while some storm window is open.
    if (retry || sig.throttled || !event.lane.isEmpty() || m_openStormWindows > 0)
        recordClientActivity(event, sig, keys, key, retry);

    if (needKey)
        recordOutcome(event, sig, keys, key);

    if (sig.throttled) {
        if (sig.retryAtMs)
            recordAdvice(event, sig, keys);
        if (sig.kind == throttle::ThrottleKind::Capacity)
            recordCapacity(event, sig);
    }
    if (const double fraction = reportedLimitFraction(sig);
        fraction >= m_parameters.nearLimitAt) { // (false for NaN: nothing reported)
        recordNearLimit(event, fraction,
                        sig.limitPercentage && *sig.limitPercentage >= m_parameters.nearLimitAt,
                        keys);
    }
}

void AlertDetector::recordClientActivity(const RequestEvent &event,
                                         const throttle::ThrottleSignals &sig, AlertScopeKeys &keys,
                                         quint64 key, bool retry)
{
    const qint64 now = event.tsMs;
    const bool lanes = !event.lane.isEmpty();
    const QString &client = clientOf(event);
    const quint64 clientKey = keys.client();
    auto it = m_clients.find(clientKey);
    if (it == m_clients.end() && (retry || sig.throttled || lanes))
        it = m_clients.emplace(clientKey, ClientState{client, {}, {}}).first;
    if (it == m_clients.end())
        return;
    StormState &storm = it->second.storm;
    if (storm.windowStartMs != kNever && now >= storm.windowStartMs + m_parameters.stormWindowMs) {
        closeStormWindow(client, storm, m_alerts);
        --m_openStormWindows;
    }
    if (storm.windowStartMs == kNever && retry) {
        storm.windowStartMs = now;
        ++m_openStormWindows;
    }
    if (storm.windowStartMs != kNever) {
        ++storm.windowRequests;
        storm.windowSuccesses += isSuccess(event.status) ? 1 : 0;
        storm.windowThrottled += sig.throttled ? 1 : 0;
        storm.windowOperations.push_back(key);
        if (retry) {
            ++storm.windowRetries;
            storm.windowRetriedOperations.push_back(key);
        }
        storm.windowLastMs = now;
    }
    if (sig.throttled)
        storm.lastThrottleMs = now;
    if (lanes)
        recordLane(client, it->second.lane, event, sig.throttled, retry);
}

void AlertDetector::recordOutcome(const RequestEvent &event, const throttle::ThrottleSignals &sig,
                                  AlertScopeKeys &keys, quint64 key)
{
    const bool hasOperationId = !event.operationId.isEmpty();
    if (isSuccess(event.status)) {
        m_failedOperations.erase(key);
        if (!hasOperationId)
            m_throttledRequests.erase(key);
        return;
    }
    if (sig.throttled && !hasOperationId)
        m_throttledRequests.insert_or_assign(key, event.tsMs);
    if (!hasOperationId && event.batchId.isEmpty())
        return; // a plain request is no unit of work the log can follow
    auto it = m_failedOperations.find(key);
    if (it == m_failedOperations.end()) {
        if (m_failedOperations.size() >= size_t(m_parameters.maxTrackedOperations)) {
            ++m_untrackedFailures;
            return;
        }
        FailedOperation failed;
        // A copy made here, not a share of the event's string: the event was allocated by a
        // parser thread, and a long-lived share would pin that thread's freed memory around it
        // (see Analysis::releaseFreedMemory()).
        failed.name = hasOperationId
                          ? QString(event.operationId.constData(), event.operationId.size())
                          : event.method + QLatin1Char(' ') + event.url;
        failed.owner = ownerOf(event);
        failed.clientKey = keys.client();
        failed.firstFailureMs = event.tsMs;
        it = m_failedOperations.emplace(key, std::move(failed)).first;
    }
    FailedOperation &failed = it->second;
    failed.lastFailureMs = event.tsMs;
    failed.lastStatus = event.status;
    failed.retryable = isRetryable(event.status, sig);
    failed.retryAtMs = (sig.throttled && sig.retryAtMs) ? *sig.retryAtMs : 0;
    const quint64 batch = batchHash(event.batchId);
    if (failed.batchHash == batch)
        return;
    // A retry outside (or in another) batch: the old envelope no longer matters.
    failed.batchHash = batch;
    failed.envelopeStatus = -1;
    if (event.batchId.isEmpty())
        return;
    const auto envelope = m_envelopes.constFind(event.batchId);
    if (envelope != m_envelopes.constEnd()) {
        failed.envelopeStatus = envelope.value().first;
    } else {
        auto &awaiting = m_awaitingEnvelope[event.batchId];
        awaiting.first = event.tsMs;
        awaiting.second.append(key);
    }
}

void AlertDetector::learnRetryGap(const FailedOperation &failed, qint64 retryMs)
{
    const qint64 gap = retryMs - failed.lastFailureMs;
    if (gap < 0 || gap > m_parameters.retryMemoryMs)
        return; // not a client's retry loop: a rerun, an hour later
    qint64 &clientGap = m_retryGapMs[failed.clientKey];
    clientGap = std::max(clientGap, gap);
    m_longestRetryGapMs = std::max(m_longestRetryGapMs, gap);
}

void AlertDetector::finish(qint64 endMs)
{
    m_endMs = std::max(m_endMs, endMs);
}

// ---- $batch envelopes ----------------------------------------------------------------------

void AlertDetector::recordEnvelope(const RequestEvent &event)
{
    if (event.batchId.isEmpty())
        return;
    m_envelopes.insert(event.batchId, {event.status, event.tsMs});
    const auto awaiting = m_awaitingEnvelope.constFind(event.batchId);
    if (awaiting == m_awaitingEnvelope.constEnd())
        return;
    const quint64 batch = batchHash(event.batchId);
    for (const quint64 key : awaiting.value().second) {
        const auto it = m_failedOperations.find(key);
        if (it != m_failedOperations.end() && it->second.batchHash == batch)
            it->second.envelopeStatus = event.status;
    }
    m_awaitingEnvelope.erase(awaiting);
}

void AlertDetector::sweep(qint64 nowMs)
{
    m_lastSweepMs = nowMs;
    const qint64 horizon = nowMs - m_parameters.retryMemoryMs;
    absl::erase_if(m_throttledRequests,
                   [horizon](const auto &entry) { return entry.second < horizon; });
    m_envelopes.removeIf([horizon](const auto &it) { return it.value().second < horizon; });
    m_awaitingEnvelope.removeIf([horizon](const auto &it) { return it.value().first < horizon; });
    absl::erase_if(m_batchSentMs, [horizon](const auto &entry) { return entry.second < horizon; });
}

qint64 AlertDetector::sentAtMs(const RequestEvent &event)
{
    if (event.batchId.isEmpty())
        return event.tsMs;
    const auto [it, inserted] = m_batchSentMs.try_emplace(batchHash(event.batchId), event.tsMs);
    if (!inserted)
        it->second = std::min(it->second, event.tsMs);
    return it->second;
}

// ---- retry-after-ignored -------------------------------------------------------------------

namespace {

QString adviceDetail(qint64 violations, const QString &label, qint64 firstMs, qint64 lastMs,
                     qint64 maxEarlyMs, std::vector<qint64> samples)
{
    qint64 median = 0;
    if (!samples.empty()) {
        const auto middle = samples.begin() + qsizetype(samples.size() / 2);
        std::nth_element(samples.begin(), middle, samples.end());
        median = *middle;
    }
    return QStringLiteral("%1 request(s) by %2 were sent before the advised retry time "
                          "(Retry-After / blocked-until) between %3 and %4, up to %5 early "
                          "(median %6). Every early request meets the same block and can "
                          "prolong it: wait until the advised time.")
        .arg(violations)
        .arg(label, formatIsoMs(firstMs), formatIsoMs(lastMs), secondsText(maxEarlyMs),
             secondsText(median));
}

} // namespace

void AlertDetector::checkRetryAfter(const RequestEvent &event, qint64 sent, AlertScopeKeys &keys)
{
    // A log with whole-second timestamps (vcrpy cassettes, many access logs) cannot show a
    // request less than a second early: both instants may have been rounded down. A $batch
    // sub-request was sent with its batch: one sent with the throttle's own envelope, before
    // the answer existed, ignored nothing.
    auto early = [this, sent](const Advice &advice) {
        qint64 tolerance = m_parameters.retryAfterToleranceMs;
        if (sent % 1000 == 0 && advice.knownAtMs % 1000 == 0)
            tolerance = std::max<qint64>(tolerance, 1000);
        return sent > advice.knownAtMs && sent < advice.retryAtMs - tolerance;
    };
    // One violation per request, even when both its app and its own scope are blocked.
    if (!event.app.isEmpty()) {
        const auto it = m_appAdvice.find(keys.app());
        if (it != m_appAdvice.end() && early(it->second)) {
            checkAdvice(it->second, event);
            return;
        }
    }
    const auto until = m_callerAdviceUntil.find(keys.caller());
    if (until == m_callerAdviceUntil.end() || event.tsMs >= until->second)
        return;
    const quint64 groupKey = combineHashes(keys.caller(), textHash(keys.quotaGroup()));
    const auto it = m_callerAdvice.find(groupKey);
    if (it != m_callerAdvice.end() && early(it->second))
        checkAdvice(it->second, event);
}

void AlertDetector::checkAdvice(Advice &advice, const RequestEvent &event)
{
    const qint64 now = event.tsMs;
    if (advice.alertIndex < 0 ||
        now - advice.lastViolationMs > m_parameters.retryAfterEpisodeGapMs) {
        if (advice.alertIndex >= 0) { // the previous episode is over: freeze its sentence
            m_alerts[advice.alertIndex].detail =
                adviceDetail(advice.violations, advice.label, advice.episodeStartMs,
                             advice.lastViolationMs, advice.maxEarlyMs, advice.earlyMs);
        }
        advice.episodeStartMs = now;
        advice.violations = 0;
        advice.maxEarlyMs = 0;
        advice.earlyMs.clear();
        advice.alertIndex = int(m_alerts.size());
        m_alerts.append(Alert{kRetryAfterIgnored, kWarning, now, advice.key, QString()});
    }
    const qint64 earlyMs = advice.retryAtMs - now;
    ++advice.violations;
    advice.maxEarlyMs = std::max(advice.maxEarlyMs, earlyMs);
    if (advice.earlyMs.size() < kMaxEarlinessSamples)
        advice.earlyMs.push_back(earlyMs);
    advice.lastViolationMs = now;
}

void AlertDetector::recordAdvice(const RequestEvent &event, const throttle::ThrottleSignals &sig,
                                 AlertScopeKeys &keys)
{
    const qint64 knownAtMs = responseArrivalMs(event);
    const qint64 retryAtMs = *sig.retryAtMs;
    if (retryAtMs <= knownAtMs)
        return;
    const QString &app = (event.app.isEmpty() && sig.scope) ? sig.scope->appId : event.app;
    Advice *advice = nullptr;
    const bool perCaller = !(sig.scope && sig.scope->isApplicationWide() && !app.isEmpty());
    if (!perCaller) {
        advice = &m_appAdvice[app == event.app ? keys.app() : textHash(app)];
        if (advice->label.isEmpty()) {
            advice->label = QStringLiteral("app %1 (application-wide throttle)").arg(app);
            advice->key = app;
        }
    } else {
        const QString group = keys.quotaGroup();
        const quint64 groupKey = combineHashes(keys.caller(), textHash(group));
        advice = &m_callerAdvice[groupKey];
        if (advice->label.isEmpty()) {
            advice->label = QStringLiteral("%1 on %2")
                                .arg(orUnknown(event.identity), orUnknown(serviceOf(event)));
            if (!group.isEmpty())
                advice->label += QStringLiteral(" (%1 API group)").arg(group);
            advice->key = orUnknown(event.identity);
        }
    }
    if (advice->retryAtMs <= knownAtMs) // a fresh block; otherwise the old one is extended
        advice->knownAtMs = knownAtMs;
    advice->retryAtMs = std::max(advice->retryAtMs, retryAtMs);
    m_latestRetryAtMs = std::max(m_latestRetryAtMs, advice->retryAtMs);
    if (perCaller) {
        qint64 &until = m_callerAdviceUntil[keys.caller()];
        until = std::max(until, advice->retryAtMs);
    }
}

// ---- capacity and near-limit episodes ------------------------------------------------------

namespace {

QString capacityDetail(const QString &key, qint64 count, const QMap<QString, qint64> &byCode,
                       const QSet<QString> &callers, qint64 firstMs, qint64 lastMs)
{
    return QStringLiteral("%1 capacity throttle(s) on %2 between %3 and %4 (%5), seen by %6. "
                          "The capacity (compute) is overloaded, not the callers' rate: retrying "
                          "soon rarely helps; back off exponentially, spread the load or scale "
                          "the capacity.")
        .arg(count)
        .arg(key, formatIsoMs(firstMs), formatIsoMs(lastMs), countsText(byCode),
             namesText(callers, callers.size()));
}

QString nearLimitDetail(const QString &key, qint64 count, double peak,
                        const QMap<QString, qint64> &bySource, qint64 firstMs, qint64 lastMs)
{
    return QStringLiteral("The service reported %1 near its limit %2 time(s) between %3 and %4, "
                          "peak %5 of the limit used (%6): throttling is imminent, slow down "
                          "(soft-open the breaker).")
        .arg(key)
        .arg(count)
        .arg(formatIsoMs(firstMs), formatIsoMs(lastMs), percentText(peak), countsText(bySource));
}

} // namespace

void AlertDetector::recordCapacity(const RequestEvent &event, const throttle::ThrottleSignals &sig)
{
    const QString service = orUnknown(event.service);
    const QString key =
        event.tenant.isEmpty() ? service : service + QLatin1Char('/') + event.tenant;
    Episode &episode = m_capacity[key];
    if (episode.alertIndex < 0 || event.tsMs - episode.lastMs > m_parameters.capacityEpisodeGapMs) {
        if (episode.alertIndex >= 0) {
            m_alerts[episode.alertIndex].detail =
                capacityDetail(key, episode.count, episode.byCode, episode.callers, episode.firstMs,
                               episode.lastMs);
        }
        episode = Episode{};
        episode.firstMs = event.tsMs;
        episode.alertIndex = int(m_alerts.size());
        m_alerts.append(Alert{kCapacity, kWarning, event.tsMs, key, QString()});
    }
    ++episode.count;
    episode.lastMs = event.tsMs;
    const QString code =
        sig.errorCode.isEmpty() ? QStringLiteral("HTTP %1").arg(event.status) : sig.errorCode;
    ++episode.byCode[code];
    if (episode.callers.size() < kMaxEpisodeCallers)
        episode.callers.insert(ownerOf(event));
}

void AlertDetector::recordNearLimit(const RequestEvent &event, double fraction,
                                    bool fromPercentageHeader, AlertScopeKeys &keys)
{
    const QString &key = ownerOf(event);
    Episode &episode = m_nearLimit[keys.owner()];
    if (episode.alertIndex < 0 ||
        event.tsMs - episode.lastMs > m_parameters.nearLimitEpisodeGapMs) {
        if (episode.alertIndex >= 0) {
            m_alerts[episode.alertIndex].detail = nearLimitDetail(
                key, episode.count, episode.peak, episode.byCode, episode.firstMs, episode.lastMs);
        }
        episode = Episode{};
        episode.key = key;
        episode.firstMs = event.tsMs;
        episode.alertIndex = int(m_alerts.size());
        m_alerts.append(Alert{kNearLimit, kWarning, event.tsMs, key, QString()});
    }
    ++episode.count;
    episode.lastMs = event.tsMs;
    episode.peak = std::max(episode.peak, fraction);
    static const QString percentageHeader = QStringLiteral("x-ms-throttle-limit-percentage");
    static const QString rateLimitHeader = QStringLiteral("RateLimit remaining");
    ++episode.byCode[fromPercentageHeader ? percentageHeader : rateLimitHeader];
}

// ---- lanes ---------------------------------------------------------------------------------

void AlertDetector::recordLane(const QString &client, LaneState &lane, const RequestEvent &event,
                               bool throttled, bool retry)
{
    // Exact spelling first: the case-insensitive compare is the slow path.
    const bool background =
        event.lane == u"background" || event.lane.compare(u"background", Qt::CaseInsensitive) == 0;
    const bool foreground =
        !background && (event.lane == u"foreground" ||
                        event.lane.compare(u"foreground", Qt::CaseInsensitive) == 0);
    if (!background && !foreground)
        return;
    const qint64 window = floorDiv(event.tsMs, std::max<qint64>(1, m_parameters.laneWindowMs));
    // A slightly late event (merged files) counts in the current window rather than
    // reopening a closed one.
    if (window > lane.windowIndex) {
        if (lane.windowIndex != kNever)
            closeLaneWindow(client, lane, m_alerts);
        lane.windowIndex = window;
    }
    if (background) {
        ++lane.background;
    } else {
        ++lane.foreground;
        if (throttled || retry)
            ++lane.foregroundWaits;
    }
}

void AlertDetector::closeLaneWindow(const QString &client, LaneState &lane, QList<Alert> &out) const
{
    const qint64 total = lane.foreground + lane.background;
    const bool starving =
        total >= m_parameters.laneMinRequests &&
        double(lane.background) > m_parameters.laneMaxBackgroundShare * double(total) &&
        lane.foregroundWaits >= m_parameters.laneMinForegroundWaits;
    if (starving) {
        if (lane.alertIndex < 0 || lane.lastStarvingWindow != lane.windowIndex - 1) {
            lane.episodeFirstWindow = lane.windowIndex;
            lane.episodeForeground = 0;
            lane.episodeBackground = 0;
            lane.episodeForegroundWaits = 0;
            lane.alertIndex = int(out.size());
            out.append(Alert{kLaneStarvation, kWarning,
                             lane.windowIndex * m_parameters.laneWindowMs, client, QString()});
        }
        lane.episodeForeground += lane.foreground;
        lane.episodeBackground += lane.background;
        lane.episodeForegroundWaits += lane.foregroundWaits;
        lane.lastStarvingWindow = lane.windowIndex;
        const qint64 windows = lane.windowIndex - lane.episodeFirstWindow + 1;
        const qint64 episodeTotal = lane.episodeForeground + lane.episodeBackground;
        out[lane.alertIndex].detail =
            QStringLiteral("The background lane of %1 sent %2 of %3 lane-tagged requests "
                           "over %4 (%5 window(s) of %6) while %7 foreground request(s) were "
                           "throttled or had to be retried: background work is starving "
                           "interactive work. Cap the background lane at %8 of the budget.")
                .arg(client, percentText(double(lane.episodeBackground) / double(episodeTotal)))
                .arg(episodeTotal)
                .arg(secondsText(windows * m_parameters.laneWindowMs))
                .arg(windows)
                .arg(secondsText(m_parameters.laneWindowMs))
                .arg(lane.episodeForegroundWaits)
                .arg(percentText(m_parameters.laneMaxBackgroundShare));
    }
    lane.foreground = 0;
    lane.background = 0;
    lane.foregroundWaits = 0;
}

// ---- retry storms --------------------------------------------------------------------------

void AlertDetector::closeStormWindow(const QString &client, StormState &storm,
                                     QList<Alert> &out) const
{
    const bool failing = double(storm.windowSuccesses) <
                         m_parameters.stormMaxSuccessRatio * double(storm.windowRequests);
    const bool afterThrottle =
        storm.lastThrottleMs != kNever &&
        storm.lastThrottleMs >= storm.windowStartMs - m_parameters.stormThrottleLookbackMs;
    // Distinct operations are counted (a sort of every key of the window) only for a window
    // that could be a wave: most windows of a busy log are neither failing nor after a throttle,
    // and sorting their keys was ~1 % of a report.
    bool enoughOperations = false;
    if (failing && afterThrottle) {
        sortDistinct(storm.windowRetriedOperations);
        const auto retried = double(storm.windowRetriedOperations.size());
        enoughOperations = retried >= m_parameters.stormMinOperations;
        if (!enoughOperations && retried >= m_parameters.stormMinOperationsSmall) {
            sortDistinct(storm.windowOperations);
            const auto active = double(storm.windowOperations.size());
            enoughOperations = retried >= m_parameters.stormSmallFraction * active;
        }
    }

    if (enoughOperations) {
        if (storm.waves == 0 ||
            storm.windowStartMs - storm.lastWaveEndMs > m_parameters.stormMaxWaveGapMs) {
            storm.waves = 0;
            storm.episodeStartMs = storm.windowStartMs;
            storm.episodeRequests = 0;
            storm.episodeThrottled = 0;
            storm.episodeRetries = 0;
            storm.episodeOperations.clear();
            storm.alertIndex = -1;
        }
        ++storm.waves;
        storm.episodeRequests += storm.windowRequests;
        storm.episodeThrottled += storm.windowThrottled;
        storm.episodeRetries += storm.windowRetries;
        if (qsizetype(storm.episodeOperations.size()) < kMaxEpisodeOperations) {
            storm.episodeOperations.insert(storm.episodeOperations.end(),
                                           storm.windowRetriedOperations.begin(),
                                           storm.windowRetriedOperations.end());
            sortDistinct(storm.episodeOperations);
        }
        storm.lastWaveEndMs = storm.windowLastMs;
        if (storm.waves >= m_parameters.stormMinWaves) {
            if (storm.alertIndex < 0) {
                storm.alertIndex = int(out.size());
                out.append(Alert{kRetryStorm, kCritical, storm.episodeStartMs, client, QString()});
            }
            const double requests = double(std::max<qint64>(1, storm.episodeRequests));
            out[storm.alertIndex].detail =
                QStringLiteral("Retry storm: %1 distinct operations of %2 retried in %3 "
                               "synchronised waves (each within %4) after throttling; %5 "
                               "of the %6 requests in the waves were throttled; it lasted "
                               "%7 (%8 to %9). Every wave renews the throttling: one shared "
                               "circuit breaker (all retry loops wait once) and jittered "
                               "backoff break the spiral.")
                    .arg(qsizetype(storm.episodeOperations.size()))
                    .arg(client)
                    .arg(storm.waves)
                    .arg(secondsText(m_parameters.stormWindowMs),
                         percentText(double(storm.episodeThrottled) / requests))
                    .arg(storm.episodeRequests)
                    .arg(secondsText(storm.lastWaveEndMs - storm.episodeStartMs),
                         formatIsoMs(storm.episodeStartMs), formatIsoMs(storm.lastWaveEndMs));
        }
    }
    storm.windowStartMs = kNever;
    storm.windowLastMs = kNever;
    storm.windowRequests = 0;
    storm.windowSuccesses = 0;
    storm.windowThrottled = 0;
    storm.windowRetries = 0;
    storm.windowOperations.clear();
    storm.windowRetriedOperations.clear();
}

// ---- lost work -----------------------------------------------------------------------------

qint64 AlertDetector::retryDueMs(const FailedOperation &failed) const
{
    // A client that retried at once still needs a moment: a gap under a second is a second.
    constexpr qint64 kShortestGapMs = 1000;
    qint64 gap = m_parameters.lostWorkDefaultRetryGapMs;
    if (const auto it = m_retryGapMs.find(failed.clientKey); it != m_retryGapMs.end())
        gap = it->second;
    else if (m_longestRetryGapMs >= 0)
        gap = m_longestRetryGapMs;
    const double wait = double(std::max(gap, kShortestGapMs)) * m_parameters.lostWorkRetryGapFactor;
    return std::max(failed.lastFailureMs + qint64(wait), failed.retryAtMs);
}

void AlertDetector::appendLostWork(qint64 asOfMs, QList<Alert> &out) const
{
    // Runs once per report over every pending failure (tens of thousands on a long throttled
    // log), after all the parallel work: owners are grouped through fastTextHash rather than
    // Qt's QString hash, statuses counted as numbers and spelled once per owner, and only the
    // operations that are named get sorted.
    struct Groups
    {
        QHash<FastHashString, size_t> ownerIndex;
        std::vector<std::vector<const FailedOperation *>> byOwner;
        void add(const FailedOperation &failed)
        {
            const FastHashString owner{failed.owner};
            auto it = ownerIndex.find(owner);
            if (it == ownerIndex.end()) {
                it = ownerIndex.insert(owner, byOwner.size());
                byOwner.emplace_back();
            }
            byOwner[it.value()].push_back(&failed);
        }
    };
    Groups lost;
    Groups pending;
    for (const auto &[key, failed] : m_failedOperations) {
        if (failed.lastFailureMs > asOfMs - m_parameters.lostWorkGraceMs)
            continue;
        // Lost only when the log went on past the instant its retry was due.
        if (failed.retryable && retryDueMs(failed) >= m_lastEventMs)
            pending.add(failed);
        else
            lost.add(failed);
    }
    appendUnresolved(lost.byOwner, false, out);
    appendUnresolved(pending.byOwner, true, out);
}

void AlertDetector::appendUnresolved(std::vector<std::vector<const FailedOperation *>> &byOwner,
                                     bool pending, QList<Alert> &out) const
{
    // The earliest failures first; equal times by name, so the text does not depend on the
    // order of the hash table.
    const auto earlier = [](const FailedOperation *a, const FailedOperation *b) {
        if (a->firstFailureMs != b->firstFailureMs)
            return a->firstFailureMs < b->firstFailureMs;
        return a->name < b->name;
    };
    for (std::vector<const FailedOperation *> &operations : byOwner) {
        const QString &owner = operations.front()->owner;
        const auto named = std::min<qsizetype>(qsizetype(operations.size()),
                                               std::max(0, m_parameters.lostWorkMaxNamed));
        std::partial_sort(operations.begin(), operations.begin() + std::max<qsizetype>(named, 1),
                          operations.end(), earlier);
        std::vector<std::pair<int, qint64>> statusCounts; // (last status, operations): a few
        qint64 silent = 0;
        for (const FailedOperation *failed : operations) {
            auto count =
                std::find_if(statusCounts.begin(), statusCounts.end(),
                             [failed](const auto &c) { return c.first == failed->lastStatus; });
            if (count == statusCounts.end())
                statusCounts.emplace_back(failed->lastStatus, 1);
            else
                ++count->second;
            if (isSuccess(failed->envelopeStatus))
                ++silent;
        }
        QMap<QString, qint64> byStatus;
        for (const auto &[status, count] : statusCounts)
            byStatus[status == 0 ? QStringLiteral("no response") : QString::number(status)] +=
                count;
        QStringList names;
        names.reserve(named);
        for (qsizetype i = 0; i < named; ++i)
            names.append(operations[size_t(i)]->name);
        const QString sentence =
            pending ? QStringLiteral("%1 operation(s) of %2 pending when the log ends (last "
                                     "answers: %3): %4")
                    : QStringLiteral("%1 operation(s) of %2 failed and never succeeded later "
                                     "(last answers: %3): %4");
        QString detail = sentence.arg(operations.size())
                             .arg(owner, countsText(byStatus), names.join(QStringLiteral(", ")));
        if (qsizetype(operations.size()) > named)
            detail += QStringLiteral(" and %1 more").arg(qsizetype(operations.size()) - named);
        detail += QLatin1Char('.');
        if (pending) {
            detail += QStringLiteral(" Their retries were still due (Retry-After, or the "
                                     "client's usual retry gap) when the log ends: not lost "
                                     "yet, a longer log tells.");
        }
        if (silent > 0) {
            detail += QStringLiteral(" %1 of them failed inside $batch envelopes that answered "
                                     "2xx, so nothing looked wrong: retry each failed "
                                     "sub-response, not the envelope.")
                          .arg(silent);
        }
        if (m_untrackedFailures > 0 && !pending) {
            detail += QStringLiteral(" (%1 further failed operations were not tracked: more "
                                     "than %2 were pending.)")
                          .arg(m_untrackedFailures)
                          .arg(m_parameters.maxTrackedOperations);
        }
        out.append(Alert{pending ? kPendingWork : kLostWork, pending ? kInfo : kCritical,
                         operations.front()->firstFailureMs, owner, detail});
    }
}

// ---- all together --------------------------------------------------------------------------

QList<Alert> AlertDetector::alerts() const
{
    return alertsAsOf(std::max(m_lastEventMs, m_endMs));
}

void AlertDetector::fillReport(ReportData *report, qint64 atMs) const
{
    report->alerts.append(alertsAsOf(std::max(atMs, m_lastEventMs)));
    std::stable_sort(report->alerts.begin(), report->alerts.end(),
                     [](const Alert &a, const Alert &b) { return a.atMs < b.atMs; });
}

QList<Alert> AlertDetector::alertsAsOf(qint64 asOfMs) const
{
    // Lost work goes over every pending failure (32k on the benchmark's million lines, ~2 ms):
    // when there are many, on another core while this one writes the other sentences (both
    // only read this detector's state).
    constexpr size_t kFailuresWorthAThread = 4096;
    QList<Alert> lostWork;
    std::jthread lostWorkThread; // (joins on every way out)
    if (m_failedOperations.size() >= kFailuresWorthAThread)
        lostWorkThread =
            std::jthread([this, asOfMs, &lostWork] { appendLostWork(asOfMs, lostWork); });

    QList<Alert> out = m_alerts;

    // Judge the windows still open on copies.
    for (const auto &[clientKey, client] : m_clients) {
        if (client.storm.windowStartMs != kNever) {
            StormState copy = client.storm;
            closeStormWindow(client.name, copy, out);
        }
        if (client.lane.windowIndex != kNever) {
            LaneState copy = client.lane;
            closeLaneWindow(client.name, copy, out);
        }
    }
    // Episodes still going on: their sentences are written now, not per event.
    const auto describeAdvice = [&out](const Advice &advice) {
        if (advice.alertIndex >= 0) {
            out[advice.alertIndex].detail =
                adviceDetail(advice.violations, advice.label, advice.episodeStartMs,
                             advice.lastViolationMs, advice.maxEarlyMs, advice.earlyMs);
        }
    };
    for (const auto &[appKey, advice] : m_appAdvice)
        describeAdvice(advice);
    for (const auto &[callerKey, advice] : m_callerAdvice)
        describeAdvice(advice);
    for (auto it = m_capacity.cbegin(); it != m_capacity.cend(); ++it) {
        const Episode &episode = it.value();
        if (episode.alertIndex >= 0) {
            out[episode.alertIndex].detail =
                capacityDetail(it.key(), episode.count, episode.byCode, episode.callers,
                               episode.firstMs, episode.lastMs);
        }
    }
    for (const auto &[ownerKey, episode] : m_nearLimit) {
        if (episode.alertIndex >= 0) {
            out[episode.alertIndex].detail =
                nearLimitDetail(episode.key, episode.count, episode.peak, episode.byCode,
                                episode.firstMs, episode.lastMs);
        }
    }
    if (lostWorkThread.joinable()) {
        lostWorkThread.join();
        out.append(std::move(lostWork));
    } else {
        appendLostWork(asOfMs, out);
    }

    std::stable_sort(out.begin(), out.end(), [](const Alert &a, const Alert &b) {
        if (a.atMs != b.atMs)
            return a.atMs < b.atMs;
        if (a.kind != b.kind)
            return a.kind < b.kind;
        return a.key < b.key;
    });
    return out;
}

} // namespace ts
