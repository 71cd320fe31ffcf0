#include "whatif/pacesweep.h"

#include <cmath>

namespace ts::whatif {

namespace {

// Bounds within this ratio are close enough: the answer is the lower one.
constexpr double kResolution = 1.02;

struct Search
{
    double candidate = 0;
    std::optional<double> fits;  // the fastest pace tried that stayed within the share
    std::optional<double> fails; // the slowest pace tried that did not
    bool done = false;
    bool unpaced = false;
};

SweepStep runStep(const Workload &work, const PolicySet &policies, const Behaviour &behaviour,
                  int index, const std::atomic_bool *cancel, QList<PaceAdvice> *advice,
                  bool *cancelled)
{
    SimulationOptions options;
    options.cancel = cancel;
    Simulation simulation(work, policies, behaviour, options);
    const SimulationResult result = simulation.run();
    *cancelled = result.cancelled;
    if (advice)
        *advice = result.advice;
    SweepStep step;
    step.index = index;
    for (const IdentityOutcome &outcome : result.byIdentity)
        step.byIdentity.push_back({outcome.pacePerSecond, outcome.whatif});
    return step;
}

std::optional<PaceAdvice> adviceFor(const QList<PaceAdvice> &advice, const QString &identity)
{
    const PaceAdvice *tightest = tightestAdvice(advice, identity);
    return tightest ? std::optional<PaceAdvice>(*tightest) : std::nullopt;
}

// Where an identity's search starts, from step 0: the advice's bound, else the rate the
// unpaced run sent at.
Search startSearch(const SweepPoint &unpaced, const std::optional<PaceAdvice> &advice,
                   double maxShare)
{
    Search search;
    if (unpaced.totals.requests == 0 || unpaced.refusedShare() <= maxShare) {
        search.done = true;
        search.unpaced = unpaced.totals.requests > 0;
        return search;
    }
    const double seconds = std::max(0.001, unpaced.totals.makespanSeconds());
    search.candidate = advice && std::isfinite(advice->maxRatePerSecond)
                           ? advice->maxRatePerSecond
                           : double(unpaced.totals.requests) / seconds / 2;
    return search;
}

void narrow(Search &search, const SweepPoint &point, double maxShare)
{
    if (point.refusedShare() <= maxShare)
        search.fits = search.candidate;
    else
        search.fails = search.candidate;
    if (search.fits && search.fails && *search.fails / *search.fits <= kResolution) {
        search.done = true;
        return;
    }
    if (!search.fails)
        search.candidate *= 2;
    else if (!search.fits)
        search.candidate /= 2;
    else
        search.candidate = std::sqrt(*search.fits * *search.fails);
}

} // namespace

SweepResult sweepPace(const Workload &work, const PolicySet &policies, const Behaviour &behaviour,
                      const SweepOptions &options,
                      const std::function<void(const SweepStep &)> &onStep)
{
    SweepResult result;
    result.max429Percent = options.max429Percent;
    Behaviour base = behaviour;
    base.pacePerSecond.reset();
    base.paceByIdentity.clear();
    result.behaviour = base;
    const double maxShare = options.max429Percent / 100.0;
    result.steps.push_back(
        runStep(work, policies, base, 0, options.cancel, &result.advice, &result.cancelled));
    if (onStep)
        onStep(result.steps.back());
    std::vector<Search> searches;
    std::vector<SweepPoint> best(work.identities.size());
    for (size_t i = 0; i < work.identities.size(); ++i) {
        const SweepPoint &unpaced = result.steps.front().byIdentity[i];
        searches.push_back(
            startSearch(unpaced, adviceFor(result.advice, work.identities[i].identity), maxShare));
        if (searches.back().unpaced)
            best[i] = unpaced;
    }
    for (int index = 1; index <= options.maxSteps && !result.cancelled; ++index) {
        Behaviour paced = base;
        bool searching = false;
        for (size_t i = 0; i < searches.size(); ++i) {
            const Search &search = searches[i];
            searching = searching || !search.done;
            if (!search.done || search.fits)
                paced.paceByIdentity.insert(work.identities[i].identity,
                                            search.done ? *search.fits : search.candidate);
        }
        if (!searching)
            break;
        result.steps.push_back(
            runStep(work, policies, paced, index, options.cancel, nullptr, &result.cancelled));
        const SweepStep &step = result.steps.back();
        for (size_t i = 0; i < searches.size(); ++i) {
            if (searches[i].done)
                continue;
            if (step.byIdentity[i].refusedShare() <= maxShare &&
                (!searches[i].fits || searches[i].candidate > *searches[i].fits))
                best[i] = step.byIdentity[i];
            narrow(searches[i], step.byIdentity[i], maxShare);
        }
        if (onStep)
            onStep(step);
    }
    for (size_t i = 0; i < work.identities.size(); ++i) {
        IdentitySweep sweep;
        sweep.identity = work.identities[i].identity;
        sweep.unpaced = searches[i].unpaced;
        sweep.fastestPace = searches[i].unpaced ? std::nullopt : searches[i].fits;
        sweep.atFastest = best[i];
        sweep.advice = adviceFor(result.advice, sweep.identity);
        result.byIdentity.push_back(std::move(sweep));
    }
    return result;
}

} // namespace ts::whatif
