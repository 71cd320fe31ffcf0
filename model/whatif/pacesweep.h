#pragma once
// `whatif --sweep pace [--max-429 PCT]` (issue 33.2, docs/whatif.md "Pace sweep"): per identity,
// the fastest pace whose simulated run gets at most PCT % of its requests refused, found by
// simulating the log's work again and again. Step 0 is unpaced (the behaviour as given without
// a pace): an identity within the share there needs no pace. The others start at the pace
// advice's bound (engine/paceadvice.h, from step 0's simulated buckets) and are searched all at
// once, each its own bisection (doubling up until a pace fails, halving down until one fits,
// then the geometric middle), until the bounds are within 2 % or the steps run out. Every step
// is one simulation of every identity; identities that share a bucket (an app-wide limit) are
// searched together, each at its own candidate pace.

#include "engine/paceadvice.h"
#include "whatif/simulation.h"

#include <atomic>
#include <functional>
#include <optional>
#include <vector>

namespace ts::whatif {

struct SweepOptions
{
    double max429Percent = 0;
    int maxSteps = 12;
    const std::atomic_bool *cancel = nullptr;
};

// One identity in one step.
struct SweepPoint
{
    std::optional<double> pacePerSecond; // unset: unpaced
    RunTotals totals;
    [[nodiscard]] double refusedShare() const
    {
        return totals.requests > 0 ? double(totals.throttles) / double(totals.requests) : 0;
    }
};

struct SweepStep
{
    int index = 0;
    std::vector<SweepPoint> byIdentity; // parallel to the workload's identities
};

struct IdentitySweep
{
    QString identity;
    // The fastest pace found within the share (unset with `unpaced`: no pace needed; unset
    // without it: even the slowest pace tried was refused too often).
    std::optional<double> fastestPace;
    bool unpaced = false;
    SweepPoint atFastest;
    std::optional<PaceAdvice> advice; // the limits' bound for the identity's tightest key
};

struct SweepResult
{
    double max429Percent = 0;
    Behaviour behaviour; // the behaviour every step ran, paces aside
    std::vector<SweepStep> steps;
    std::vector<IdentitySweep> byIdentity;
    QList<PaceAdvice> advice; // every key's, from step 0
    bool cancelled = false;
};

// onStep (may be empty) sees each step as soon as it is simulated.
SweepResult sweepPace(const Workload &work, const PolicySet &policies, const Behaviour &behaviour,
                      const SweepOptions &options,
                      const std::function<void(const SweepStep &)> &onStep = {});

} // namespace ts::whatif
