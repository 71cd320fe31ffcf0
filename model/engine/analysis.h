#pragma once
// The sink every pipeline ends in: counts what the report needs (events, statuses, throttles by
// code/scope/kind) and feeds the throttle engine, the breakers and the alert detectors. The
// headless report, `report --workspace`, the dashboard's worker and the live commands all
// run events through one Analysis, so they cannot disagree.

#include "engine/reportdata.h"
#include "ingest/ingest.h"

#include <QHash>

#include <array>
#include <memory>

namespace ts {

class Analysis final : public IngestSink
{
public:
    Analysis();
    ~Analysis() override;
    Analysis(const Analysis &) = delete;
    Analysis &operator=(const Analysis &) = delete;

    void onEvent(RequestEvent &&event) override;
    void onMalformed(MalformedRecord &&record) override;
    void add(const RequestEvent &event);

    // How many malformed records are kept verbatim (all are counted).
    static constexpr int kMalformedSamples = 20;

    [[nodiscard]] ReportData report() const;
    // Everything the dashboard shows: the report plus per-scope series and throttle bins.
    [[nodiscard]] DashboardSnapshot snapshot() const;

private:
    qint64 m_events = 0;
    qint64 m_malformed = 0;
    std::array<qint64, 1000> m_byStatus{};
    qint64 m_throttles = 0;
    QHash<QString, qint64> m_throttlesByCode;
    QHash<QString, qint64> m_throttlesByScope;
    QHash<QString, qint64> m_throttlesByKind;
    QList<MalformedRecord> m_malformedSamples;
    std::optional<qint64> m_firstMs;
    std::optional<qint64> m_lastMs;
};

} // namespace ts
