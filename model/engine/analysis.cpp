#include "engine/analysis.h"

#include "signals/throttlesignals.h"

namespace ts {

Analysis::Analysis() = default;
Analysis::~Analysis() = default;

void Analysis::onEvent(RequestEvent &&event)
{
    add(event);
}

void Analysis::add(const RequestEvent &event)
{
    if (!m_firstMs || event.tsMs < *m_firstMs)
        m_firstMs = event.tsMs;
    if (!m_lastMs || event.tsMs > *m_lastMs)
        m_lastMs = event.tsMs;
    // A $batch envelope is not a request of its own: its sub-responses are (report-json.md).
    if (!event.isRequest())
        return;
    ++m_events;
    if (event.status >= 0 && event.status < int(m_byStatus.size()))
        ++m_byStatus[size_t(event.status)];
    if (event.status < 400 || !throttle::isThrottle(event))
        return;
    const throttle::ThrottleSignals signal = throttle::extract(event);
    ++m_throttles;
    ++m_throttlesByCode[signal.errorCode.isEmpty() ? QStringLiteral("none") : signal.errorCode];
    ++m_throttlesByScope[signal.scope ? signal.scope->scope : QStringLiteral("none")];
    ++m_throttlesByKind[throttle::throttleKindName(signal.kind)];
}

void Analysis::onMalformed(MalformedRecord &&record)
{
    ++m_malformed;
    if (m_malformedSamples.size() < kMalformedSamples)
        m_malformedSamples.append(std::move(record));
}

ReportData Analysis::report() const
{
    ReportData data;
    data.events = m_events;
    data.malformed = m_malformed;
    for (size_t status = 0; status < m_byStatus.size(); ++status) {
        if (m_byStatus[status])
            data.byStatus.insert(int(status), m_byStatus[status]);
    }
    data.throttles.total = m_throttles;
    for (auto it = m_throttlesByCode.cbegin(); it != m_throttlesByCode.cend(); ++it)
        data.throttles.byErrorCode.insert(it.key(), it.value());
    for (auto it = m_throttlesByScope.cbegin(); it != m_throttlesByScope.cend(); ++it)
        data.throttles.byScope.insert(it.key(), it.value());
    for (auto it = m_throttlesByKind.cbegin(); it != m_throttlesByKind.cend(); ++it)
        data.throttles.byKind.insert(it.key(), it.value());
    data.malformedSamples = m_malformedSamples;
    data.firstMs = m_firstMs;
    data.lastMs = m_lastMs;
    return data;
}

DashboardSnapshot Analysis::snapshot() const
{
    DashboardSnapshot snapshot;
    snapshot.report = report();
    return snapshot;
}

} // namespace ts
