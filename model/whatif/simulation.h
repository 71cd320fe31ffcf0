#pragma once
// The what-if simulation (docs/whatif.md): the log's own work (whatif/workload.h) sent again by
// a simulated client per identity under another behaviour (whatif/behaviour.h), answered by a
// service that is the engine itself. Each send is decided by ThrottleEngine::admit() at its
// instant, under the policy, and then added to the same engine with the answer as its status
// (429 and the Retry-After of the limit that refused, or the work's own answer): the engine
// charges it exactly as `report` charges that line of a log. So the sends, written as a log
// (--out), replay under `report` with the same policy to exactly the predicted throttles.
//
// The client of each identity: `concurrency` slots, each working through the identity's
// operations in order (the background lane may be held back by a cap while foreground work
// waits); an attempt waits for the pace (sends, retries included, at most pace per second), for
// a Retry-After still running when the client obeys them, and for its slot. A refused attempt
// is retried after the backoff (or exactly at the Retry-After when obeyed) while retries last,
// else the operation is lost. An accepted attempt holds its slot for the operation's service
// time. With a breaker, an attempt while it is open is not sent: it fails at once, as in a
// Polly pipeline that retries outside its circuit breaker.
//
// Deterministic: clients take turns in time order (ties by identity order), jitter is seeded
// per identity, operation and attempt. Not thread-safe; run() once per object.

#include "engine/paceadvice.h"
#include "engine/throttleengine.h"
#include "policy/policy.h"
#include "whatif/behaviour.h"
#include "whatif/workload.h"

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

namespace ts::whatif {

struct IdentityOutcome
{
    QString identity;
    RunTotals actual;
    RunTotals whatif;
    std::optional<double> pacePerSecond; // the pace this identity was simulated at
    int concurrency = 1;
};

struct SimulationResult
{
    Behaviour behaviour;
    QStringList policies; // the names of the policies replayed
    RunTotals actual;
    RunTotals whatif;
    std::vector<IdentityOutcome> byIdentity; // in the workload's order
    qint64 operations = 0;
    bool cancelled = false;
    // Filled when SimulationOptions::recordTimeline.
    Timeline simulatedTimeline;
    // The pace advice of the simulated buckets (the log's mix of costs under the policy).
    QList<PaceAdvice> advice;
};

struct SimulationOptions
{
    bool recordTimeline = false;
    // The simulated engine keeps plot data (series of its buckets: the page's fill chart).
    bool recordPlotData = false;
    // Checked between sends; run() stops early (result.cancelled) once it is set.
    const std::atomic_bool *cancel = nullptr;
};

class Simulation
{
public:
    // Called with every send, in time order, its status the predicted answer: the --out log.
    using SendObserver = std::function<void(const RequestEvent &)>;

    Simulation(const Workload &work, const PolicySet &policies, Behaviour behaviour,
               SimulationOptions options = {});
    ~Simulation();
    Simulation(const Simulation &) = delete;
    Simulation &operator=(const Simulation &) = delete;

    void setSendObserver(SendObserver observer);
    SimulationResult run();
    // The simulated service after run(): its buckets are what the sends did to the limits.
    [[nodiscard]] const ThrottleEngine &engine() const;

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

} // namespace ts::whatif
