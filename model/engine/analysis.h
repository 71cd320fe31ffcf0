#pragma once
// The sink every pipeline ends in: counts what the report needs (events, statuses, malformed
// records) and feeds the throttle engine (buckets, taxonomy, near-limit), the breakers and the
// alert detectors. The headless report, `report --workspace`, the dashboard's worker and the
// live commands all run events through one Analysis, so they cannot disagree.

#include "engine/reportdata.h"
#include "engine/throttleengine.h"
#include "ingest/ingest.h"
#include "policy/policy.h"

#include <array>
#include <memory>

namespace ts {

namespace throttle {
struct ThrottleSignals;
}
class BreakerTracker;
class AlertDetector;

class Analysis final : public IngestSink
{
public:
    // What the results are for. A report prints summaries only, so it keeps the per-scope plot
    // series short; the dashboard plots them and keeps the engine's full resolution.
    enum class Purpose { Dashboard, ReportOnly };

    explicit Analysis(PolicySet policies = PolicySet::builtin(),
                      Purpose purpose = Purpose::Dashboard);
    ~Analysis() override;
    Analysis(const Analysis &) = delete;
    Analysis &operator=(const Analysis &) = delete;

    void onEvent(RequestEvent &&event) override;
    // Large batches are counted here (and their throttle signals extracted), then handed to
    // worker threads: the engine's, then the breakers' and the alert detectors' side by side,
    // so a report uses both cores; every other call waits for them first, so results never
    // depend on the path taken.
    void onEvents(std::vector<RequestEvent> &&events) override;
    // The same for events another consumer reads at the same time (the dashboard's scratch
    // workspace writer stores the very vectors): nothing here changes them. They should be
    // masked already (redact::ensureMasked); a batch that is not is copied and masked.
    using SharedEvents = std::shared_ptr<const std::vector<RequestEvent>>;
    void onSharedEvents(SharedEvents events);
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
    // Sets the fields this class aggregates itself (counts, breakers, detector alerts) and
    // sorts the alerts; the engine's fields must be in `data` already.
    void fillOwnFields(ReportData &data) const;
    void count(const RequestEvent &event);
    struct Batch;
    // Counts a large batch of masked events, extracts its signals and hands it to the workers.
    void pushBatch(SharedEvents events);
    // The engine's, the breakers' and the alert detectors' share of a batch, each on its own
    // worker thread. feedEngine() runs the engine over a batch, notes the fills that soften
    // breakers and the categories that group quotas, then hands the batch to both others.
    void feedEngine(const std::shared_ptr<const Batch> &batch);
    // The engine's verdict on an event, as the breakers see it (soft-open from the fill).
    // fill: the engine's fill after the request (a weighted event's k-th one: Verdict::unitFills).
    void noteFill(const RequestEvent &event, const ThrottleEngine::Verdict &verdict, double fill);
    void feedBreakers(const Batch &batch);
    void feedAlerts(const Batch &batch);
    // quotaGroup: the engine's category for the event, null when it had none to give.
    void feedDetectors(const RequestEvent &event, const throttle::ThrottleSignals &sig,
                       const QString *quotaGroup);
    // Returns freed heap pages to the system now and then (see the definition).
    void releaseFreedMemory();
    // Blocks until the workers have processed every batch handed to them.
    void drain() const;
    class Worker;

    qint64 m_events = 0;
    qint64 m_malformed = 0;
    qint64 m_late = 0;                   // events older than the newest one analysed before them
    qint64 m_refusedByClientBreaker = 0; // requests the client's own breaker refused
    std::array<qint64, 1000> m_byStatus{};
    QList<MalformedRecord> m_malformedSamples;
    std::optional<qint64> m_firstMs;
    std::optional<qint64> m_lastMs;
    std::unique_ptr<ThrottleEngine> m_engine;
    std::unique_ptr<BreakerTracker> m_breakers;
    std::unique_ptr<AlertDetector> m_alerts;
    std::unique_ptr<Worker> m_engineWorker; // started on the first large batch
    // The breakers and the alert detectors do not read each other's state: each has a thread,
    // so the slowest stage of the pipeline is split in two (and the batches still queued when
    // the input ends drain on both cores, not one).
    std::unique_ptr<Worker> m_breakerWorker;
    std::unique_ptr<Worker> m_alertWorker;
    int m_batchesSinceTrim = 0;
};

} // namespace ts
