#pragma once
// What a what-if run hands the window (the What-if page): the comparison, both runs' timelines
// and, per identity, the limit that binds it with that limit's bucket in the simulated run, so
// the page can draw the log's fill of that bucket beside the simulated one. A plain value made
// on the analysis thread and read on the GUI thread (through a shared_ptr<const>).

#include "engine/paceadvice.h"
#include "engine/reportdata.h"
#include "whatif/simulation.h"

#include <QList>
#include <QString>

#include <vector>

namespace ts::whatif {

struct SimulatedBucket
{
    QString identity;
    ScopeSummary scope; // the bucket in the simulated run (its key and limit name it)
    ScopeSeries series;
};

struct WhatIfOutcome
{
    SimulationResult result;
    Timeline actual; // the log's own completions and throttles
    QList<PaceAdvice> advice;
    std::vector<SimulatedBucket> bindingBuckets; // one per identity with a binding limit
    QString error;   // set when the run could not be made (no events, a store unreadable)
    quint64 run = 0; // the request it answers (WhatIfPage counts them)
};

// Simulates the work under the behaviour (timelines and the simulated buckets' series kept)
// and gathers what the page shows. The workload must have been built with its timeline.
WhatIfOutcome simulateForWindow(const Workload &work, const PolicySet &policies,
                                const Behaviour &behaviour,
                                const std::atomic_bool *cancel = nullptr);

} // namespace ts::whatif
