#pragma once
// The sink every pipeline ends in: counts what the report needs (events, statuses, malformed
// records) and feeds the throttle engine (buckets, taxonomy, near-limit), the breakers and the
// alert detectors. The headless report, `report --workspace`, the dashboard's worker and the
// live commands all run events through one Analysis, so they cannot disagree.

#include "engine/reportdata.h"
#include "ingest/ingest.h"
#include "policy/policy.h"

#include <array>
#include <memory>

namespace ts {

class ThrottleEngine;
class BreakerTracker;
class AlertDetector;

class Analysis final : public IngestSink
{
public:
    explicit Analysis(PolicySet policies = PolicySet::builtin());
    ~Analysis() override;
    Analysis(const Analysis &) = delete;
    Analysis &operator=(const Analysis &) = delete;

    void onEvent(RequestEvent &&event) override;
    void onMalformed(MalformedRecord &&record) override;
    void add(const RequestEvent &event);
    // Malformed records counted elsewhere (a workspace stores them; the report shows samples).
    void countMalformed(qint64 count) { m_malformed += count; }

    // How many malformed records are kept verbatim (all are counted).
    static constexpr int kMalformedSamples = 20;

    [[nodiscard]] const PolicySet &policies() const;
    [[nodiscard]] ReportData report() const;
    // Everything the dashboard shows: the report plus per-scope series and throttle bins.
    [[nodiscard]] DashboardSnapshot snapshot() const;

private:
    void fill(DashboardSnapshot &snapshot) const;

    qint64 m_events = 0;
    qint64 m_malformed = 0;
    std::array<qint64, 1000> m_byStatus{};
    QList<MalformedRecord> m_malformedSamples;
    std::optional<qint64> m_firstMs;
    std::optional<qint64> m_lastMs;
    std::unique_ptr<ThrottleEngine> m_engine;
    std::unique_ptr<BreakerTracker> m_breakers;
    std::unique_ptr<AlertDetector> m_alerts;
};

} // namespace ts
