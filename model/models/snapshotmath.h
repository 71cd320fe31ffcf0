#pragma once
// Small read-only queries over a DashboardSnapshot shared by the item models and the views:
// the value of a bucket at an instant (replay), the worst bucket, a readable scope label.
// Pure functions over plain values, so they are cheap to test and safe on any thread.

#include "engine/reportdata.h"

#include <optional>

namespace ts::models {

// usage(t) of a step function given by (usageT, usage): the last sample at or before t,
// 0 before the first sample (nothing had been sent yet).
double usageAt(const ScopeSeries &series, qint64 tMs);

// fill at t = usage(t) / capacity; 0 when the capacity is unknown.
double fillAt(const ScopeSummary &scope, const ScopeSeries *series, qint64 tMs);

// The fill shown "now": at the replay instant when one is set, else the snapshot's current fill.
double displayedFill(const DashboardSnapshot &snapshot, int scopeIndex,
                     std::optional<qint64> instantMs);
double displayedUsage(const DashboardSnapshot &snapshot, int scopeIndex,
                      std::optional<qint64> instantMs);

// Index of the scope with the highest current fill, -1 when there is none.
int worstScopeIndex(const ReportData &report);

// "sp-migrator · fabric/platform", the key shortened as models/displaynames.h does
QString scopeLabel(const ScopeSummary &scope);
// "fabric/platform" (the grid's column name)
QString limitLabel(const ScopeSummary &scope);

// "1.2 s", "3 min 20 s", "2 h 5 min": durations an operator reads at a glance.
QString formatDuration(qint64 ms);

} // namespace ts::models
