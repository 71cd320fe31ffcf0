#include "whatif/workload.h"

#include "engine/alertcommon.h"
#include "signals/throttlesignals.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace ts::whatif {

namespace {

constexpr int kMaxMalformedSamples = 20;

// A throttle, a 5xx, a 408 or no answer at all: what a client retries, and what leaves the
// work undone when it is the last answer.
bool failedTransiently(const RequestEvent &event, bool throttled)
{
    return throttled || event.status == 0 || event.status == 408 || event.status >= 500;
}

qint32 clampedMs(double ms)
{
    if (!(ms > 0))
        return 0;
    return qint32(std::min(ms + 0.5, 24.0 * 3600 * 1000));
}

} // namespace

void RunTotals::merge(const RunTotals &other)
{
    const bool empty = requests == 0 && operations == 0;
    requests += other.requests;
    throttles += other.throttles;
    retries += other.retries;
    operations += other.operations;
    lostOperations += other.lostOperations;
    shortCircuited += other.shortCircuited;
    if (other.requests == 0 && other.operations == 0)
        return;
    startMs = empty ? other.startMs : std::min(startMs, other.startMs);
    finishMs = empty ? other.finishMs : std::max(finishMs, other.finishMs);
}

RunTotals Workload::actualTotals() const
{
    RunTotals totals;
    for (const IdentityWork &identity : identities)
        totals.merge(identity.actual);
    return totals;
}

qint64 Workload::operationCount() const
{
    qint64 count = 0;
    for (const IdentityWork &identity : identities)
        count += qint64(identity.operations.size());
    return count;
}

RequestEvent Workload::request(const Operation &operation, qint64 tsMs) const
{
    RequestEvent event;
    qint32 shape = -1;
    fillRequest(event, operation, tsMs, &shape);
    return event;
}

void Workload::fillRequest(RequestEvent &event, const Operation &operation, qint64 tsMs,
                           qint32 *shapeInEvent) const
{
    if (*shapeInEvent != operation.shape) {
        const RequestShape &shape = shapes[size_t(operation.shape)];
        event.identity = shape.identity;
        event.service = shape.service;
        event.app = shape.app;
        event.tenant = shape.tenant;
        event.category = shape.category;
        event.lane = shape.lane;
        event.method = shape.method;
        event.serviceBusNamespace = shape.serviceBusNamespace;
        event.entity = shape.entity;
        *shapeInEvent = operation.shape;
    }
    event.secretsMasked = true; // made of fields a reader masked already
    event.tsMs = tsMs;
    event.url = operation.url;
    event.operationId = operation.operationId;
    event.credits = operation.credits;
    event.status = 0;
    event.retryAfter.clear();
    event.durationMs = -1;
    event.attempt = -1;
}

// Per identity: what tells a retry from new work, and the requests in flight.
struct WorkloadBuilder::IdentityState
{
    // Operations whose last attempt failed, by operationId: a request with the same id is
    // their retry. (An id that succeeded is forgotten: sent again, it is new work.)
    QHash<QString, qint32> failedById;
    // Requests without an operationId whose answer was a transient failure, by a hash of
    // method and URL: the operation and when it was answered.
    absl::flat_hash_map<quint64, std::pair<qint32, qint64>> failedRequests;
    qint64 lastSweepMs = 0;
    // Answer instants of the requests in flight (a min-heap): the log's own concurrency.
    std::priority_queue<qint64, std::vector<qint64>, std::greater<>> inFlight;
};

WorkloadBuilder::WorkloadBuilder(qint64 retryMemoryMs) : m_retryMemoryMs(retryMemoryMs) {}

WorkloadBuilder::~WorkloadBuilder() = default;

void WorkloadBuilder::onEvent(RequestEvent &&event)
{
    add(event);
}

void WorkloadBuilder::onEvents(std::vector<RequestEvent> &&events)
{
    for (const RequestEvent &event : events)
        add(event);
}

void WorkloadBuilder::onMalformed(MalformedRecord &&record)
{
    ++m_work.malformed;
    if (m_work.malformedSamples.size() < kMaxMalformedSamples)
        m_work.malformedSamples.append(std::move(record));
}

int WorkloadBuilder::identityIndex(const QString &identity)
{
    // Logs come in runs from the same caller, and readers intern identities: the last one is
    // recognised by the address of its characters.
    const char16_t *text = QStringView(identity).utf16();
    if (m_lastIdentity >= 0 && text == m_lastIdentityText && !identity.isEmpty() &&
        m_work.identities[size_t(m_lastIdentity)].identity.size() == identity.size())
        return m_lastIdentity;
    auto it = m_identityIndex.constFind(identity);
    int index = 0;
    if (it == m_identityIndex.constEnd()) {
        index = int(m_work.identities.size());
        m_identityIndex.insert(identity, index);
        m_work.identities.emplace_back().identity = identity;
        m_states.push_back(std::make_unique<IdentityState>());
    } else {
        index = it.value();
    }
    // Only an address the identity table itself holds can be remembered safely.
    const QString &kept = m_work.identities[size_t(index)].identity;
    m_lastIdentity = index;
    m_lastIdentityText = QStringView(kept).utf16() == text ? text : nullptr;
    return index;
}

qint32 WorkloadBuilder::shapeIndex(const RequestEvent &event)
{
    const std::array<const QString *, 9> fields = {
        &event.identity, &event.service, &event.app,    &event.tenant,
        &event.category, &event.lane,    &event.method, &event.serviceBusNamespace,
        &event.entity};
    std::array<const void *, 9> addresses;
    for (size_t i = 0; i < fields.size(); ++i)
        addresses[i] = fields[i]->isEmpty() ? nullptr : fields[i]->constData();
    if (const auto it = m_shapeByAddress.find(addresses); it != m_shapeByAddress.end())
        return it->second;
    QString text;
    for (const QString *field : fields)
        text += *field + QChar(u'\x1f');
    if (const auto it = m_shapeByText.constFind(text); it != m_shapeByText.constEnd())
        return it.value();
    const auto index = qint32(m_work.shapes.size());
    m_work.shapes.push_back({event.identity, event.service, event.app, event.tenant, event.category,
                             event.lane, event.method, event.serviceBusNamespace, event.entity});
    m_shapeByText.insert(text, index);
    // The shape shares the event's strings, so these addresses stay its own while it lives.
    m_shapeByAddress.emplace(addresses, index);
    return index;
}

qint32 WorkloadBuilder::retriedOperation(IdentityState &state, const RequestEvent &event,
                                         quint64 requestKey, bool *retry) const
{
    *retry = event.attempt >= 1;
    if (!event.operationId.isEmpty()) {
        const auto it = state.failedById.constFind(event.operationId);
        if (it != state.failedById.constEnd()) {
            *retry = true;
            return it.value();
        }
        return -1;
    }
    if (requestKey != 0) {
        const auto it = state.failedRequests.find(requestKey);
        if (it != state.failedRequests.end() && event.tsMs - it->second.second <= m_retryMemoryMs) {
            *retry = true;
            return it->second.first;
        }
    }
    // A retry whose first attempt is not in the log: counted as a retry, kept as work.
    return -1;
}

void WorkloadBuilder::noteAnswer(IdentityState &state, qint32 index, const RequestEvent &event,
                                 quint64 requestKey, bool throttled)
{
    const bool failed = failedTransiently(event, throttled);
    if (!event.operationId.isEmpty()) {
        if (failed)
            state.failedById.insert(event.operationId, index);
        else
            state.failedById.remove(event.operationId);
    } else if (requestKey != 0) {
        if (failed)
            state.failedRequests.insert_or_assign(requestKey, std::make_pair(index, event.tsMs));
        else
            state.failedRequests.erase(requestKey);
    }
    if (state.failedRequests.size() > 4096 &&
        event.tsMs - state.lastSweepMs > m_retryMemoryMs / 4) {
        state.lastSweepMs = event.tsMs;
        absl::erase_if(state.failedRequests, [&](const auto &entry) {
            return event.tsMs - entry.second.second > m_retryMemoryMs;
        });
    }
}

void WorkloadBuilder::add(const RequestEvent &event)
{
    if (!event.isRequest())
        return;
    ++m_work.events;
    const int identity = identityIndex(event.identity);
    IdentityWork &work = m_work.identities[size_t(identity)];
    IdentityState &state = *m_states[size_t(identity)];
    const bool throttled = throttle::isThrottle(event);
    const bool failed = failedTransiently(event, throttled);
    // The method and URL are hashed only when a table can use them.
    const bool keyed = event.operationId.isEmpty() && (failed || !state.failedRequests.empty());
    const quint64 requestKey =
        keyed ? quint64(fastTextHash(event.url, fastTextHash(event.method, 0x3a))) | 1 : 0;
    bool retry = false;
    qint32 index = retriedOperation(state, event, requestKey, &retry);
    const qint64 weight = event.countedRequests();
    const bool fresh = index < 0;
    if (fresh) {
        index = qint32(work.operations.size());
        Operation &operation = work.operations.emplace_back();
        operation.url = event.url;
        operation.operationId = event.operationId;
        operation.credits = event.credits;
        operation.shape = shapeIndex(event);
        operation.background = event.lane.compare(u"background", Qt::CaseInsensitive) == 0;
    }
    Operation &operation = work.operations[size_t(index)];
    operation.attempts += qint32(std::min<qint64>(weight, 1 << 20));
    if (!failed) {
        // The work's own answer: what the service said when it did not refuse it.
        operation.outcomeStatus = event.status;
        operation.serviceMs = clampedMs(event.durationMs);
    } else if (fresh) {
        // Refused or failed so far: a throttle's or an error's answer is not the work's
        // (transient server errors are not replayed), its service time an estimate at best.
        operation.outcomeStatus = 200;
        operation.serviceMs = throttled ? 0 : clampedMs(event.durationMs);
    }
    work.actual.lostOperations += int(failed) - int(operation.lost);
    operation.lost = failed;
    noteAnswer(state, index, event, requestKey, throttled);
    // A new weighted record (a count per second) stands for that many operations.
    const qint64 copies = fresh && !retry ? weight : 1;
    for (qint64 more = 1; more < copies; ++more)
        work.operations.push_back(work.operations[size_t(index)]);
    work.actual.operations += fresh ? copies : 0;
    work.actual.lostOperations += failed ? copies - 1 : 0;

    if (work.actual.requests == 0)
        work.actual.startMs = event.tsMs;
    work.actual.requests += weight;
    work.actual.throttles += throttled ? weight : 0;
    work.actual.retries += retry ? weight : 0;
    work.actual.startMs = std::min(work.actual.startMs, event.tsMs);
    const qint64 answered = throttle::responseTimeMs(event);
    work.actual.finishMs = std::max(work.actual.finishMs, answered);
    while (!state.inFlight.empty() && state.inFlight.top() <= event.tsMs)
        state.inFlight.pop();
    if (answered > event.tsMs)
        state.inFlight.push(answered);
    work.peakConcurrency = std::max(work.peakConcurrency, int(state.inFlight.size()));
    if (m_recordTimeline) {
        if (throttled)
            m_work.actualTimeline.throttles.push_back(event.tsMs);
        else if (!failed)
            m_work.actualTimeline.completions.push_back(answered);
    }
}

Workload WorkloadBuilder::finish()
{
    m_states.clear();
    // Answers arrive out of send order: completions are sorted once here.
    std::sort(m_work.actualTimeline.completions.begin(), m_work.actualTimeline.completions.end());
    m_shapeByAddress.clear();
    m_shapeByText.clear();
    m_identityIndex.clear();
    return std::move(m_work);
}

} // namespace ts::whatif
