#include "engine/analysis.h"

#include "engine/alertdetector.h"
#include "engine/breakertracker.h"
#include "engine/throttleengine.h"
#include "signals/throttlesignals.h"

#include <algorithm>

namespace ts {

Analysis::Analysis(PolicySet policies)
    : m_engine(std::make_unique<ThrottleEngine>(std::move(policies))),
      m_breakers(std::make_unique<BreakerTracker>()), m_alerts(std::make_unique<AlertDetector>())
{}

Analysis::~Analysis() = default;

const PolicySet &Analysis::policies() const
{
    return m_engine->policies();
}

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
    m_engine->add(event);
    // Breakers and detectors see every event (logged breaker transitions, $batch envelopes);
    // only request events carry throttle signals. extract() is cheap for a plain 2xx.
    const throttle::ThrottleSignals signal =
        event.type == EventType::Request ? throttle::extract(event) : throttle::ThrottleSignals{};
    m_breakers->add(event, signal);
    m_alerts->add(event, signal);
    // A $batch envelope is not a request of its own: its sub-responses are (report-json.md).
    if (!event.isRequest())
        return;
    ++m_events;
    if (event.status >= 0 && event.status < int(m_byStatus.size()))
        ++m_byStatus[size_t(event.status)];
}

void Analysis::onMalformed(MalformedRecord &&record)
{
    ++m_malformed;
    if (m_malformedSamples.size() < kMalformedSamples)
        m_malformedSamples.append(std::move(record));
}

void Analysis::fill(DashboardSnapshot &snapshot) const
{
    ReportData &data = snapshot.report;
    data.events = m_events;
    data.malformed = m_malformed;
    for (size_t status = 0; status < m_byStatus.size(); ++status) {
        if (m_byStatus[status])
            data.byStatus.insert(int(status), m_byStatus[status]);
    }
    data.malformedSamples = m_malformedSamples;
    // Scopes, series, the throttle taxonomy and near-limit alerts come from the engine.
    m_engine->fillSnapshot(&snapshot);
    data.firstMs = m_firstMs;
    data.lastMs = m_lastMs;
    const qint64 endMs = m_lastMs.value_or(0);
    data.breakers = m_breakers->summaries(endMs);
    data.breakerTransitions = m_breakers->transitions();
    data.alerts += m_alerts->alerts();
    std::stable_sort(data.alerts.begin(), data.alerts.end(),
                     [](const Alert &a, const Alert &b) { return a.atMs < b.atMs; });
}

ReportData Analysis::report() const
{
    DashboardSnapshot snapshot;
    fill(snapshot);
    return std::move(snapshot.report);
}

DashboardSnapshot Analysis::snapshot() const
{
    DashboardSnapshot snapshot;
    fill(snapshot);
    return snapshot;
}

} // namespace ts
