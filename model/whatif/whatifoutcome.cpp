#include "whatif/whatifoutcome.h"

namespace ts::whatif {

WhatIfOutcome simulateForWindow(const Workload &work, const PolicySet &policies,
                                const Behaviour &behaviour, const std::atomic_bool *cancel)
{
    WhatIfOutcome outcome;
    SimulationOptions options;
    options.recordTimeline = true;
    options.recordPlotData = true;
    options.cancel = cancel;
    Simulation simulation(work, policies, behaviour, options);
    outcome.result = simulation.run();
    outcome.actual = work.actualTimeline;
    const QList<ScopeSummary> scopes = simulation.engine().scopes();
    outcome.advice = outcome.result.advice;
    // Per identity, the bucket of its tightest key's binding limit.
    for (const IdentityWork &identity : work.identities) {
        const PaceAdvice *tightest = tightestAdvice(outcome.advice, identity.identity);
        if (!tightest)
            continue;
        for (int i = 0; i < scopes.size(); ++i) {
            const ScopeSummary &scope = scopes.at(i);
            if (scope.policy == tightest->policy && scope.key == tightest->key &&
                scope.limit == tightest->bindingLimit) {
                outcome.bindingBuckets.push_back(
                    {identity.identity, scope, simulation.engine().series(i)});
                break;
            }
        }
    }
    return outcome;
}

} // namespace ts::whatif
