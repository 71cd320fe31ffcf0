#pragma once
// Small read-only queries over a DashboardSnapshot shared by the item models and the views:
// the value of a bucket at an instant (replay), the worst bucket, a readable scope label.
// Pure functions over plain values, so they are cheap to test and safe on any thread.

#include "core/requestevent.h"
#include "core/timeparse.h"
#include "engine/reportdata.h"

#include <QString>

#include <optional>

namespace ts::models {

// The usage at t, as the series says it (ScopeSeries: a step, or a line for token and leaky
// buckets; exact from its first exact point on, the report's value at t); 0 before the first
// sample (nothing had been sent yet). The one lookup the Bucket chart's markers, the fill grid,
// the event detail and the replay use, so they cannot disagree.
double usageAt(const ScopeSeries &series, qint64 tMs);

// Whether the series holds point i as a step until the next point (step algorithms, and the
// peak bins before its first exact point) rather than joining it to the next one by a line
// (token and leaky buckets): how usageAt reads it and the Bucket chart draws it.
bool heldAsStep(const ScopeSeries &series, size_t i);

// The highest usage over [fromMs, toMs] as usageAt reads the series: its value at fromMs, every
// point inside and its value at toMs (on a line, the ends are on the line, not the point before
// held as a step). The peak of a time slice: the Overview's sparkline.
double usagePeakOver(const ScopeSeries &series, qint64 fromMs, qint64 toMs);

// The instant from which the series is exact (before it: peak bins); nullopt without points.
std::optional<qint64> exactSince(const ScopeSeries &series);

// fill at t = usage(t) / capacity; 0 when the capacity is unknown.
double fillAt(const ScopeSummary &scope, const ScopeSeries *series, qint64 tMs);

// The fill shown "now": at the replay instant when one is set, else the snapshot's current fill.
double displayedFill(const DashboardSnapshot &snapshot, int scopeIndex,
                     std::optional<qint64> instantMs);
double displayedUsage(const DashboardSnapshot &snapshot, int scopeIndex,
                      std::optional<qint64> instantMs);

// The accepted layer (accepted charges only) at t; 0 before the first sample.
double acceptedUsageAt(const ScopeSeries &series, qint64 tMs);

// The instant "now" stands for: the replay instant when one is set, else the end of the data
// (for a live feed, the newest event). nullopt without data.
std::optional<qint64> referenceInstant(const DashboardSnapshot &snapshot,
                                       std::optional<qint64> instantMs);

// When it is safe to send again, and why: the limit whose window frees up last, or the
// service's Retry-After. atMs is nullopt when nothing holds the caller back.
struct SafeSend
{
    std::optional<qint64> atMs;
    QString limit;           // the limit that decides (the one a Retry-After came with)
    bool retryAfter = false; // the service's Retry-After / blocked-until decides
    int scopeIndex = -1;     // the scope that decides
};

// One scope alone at instant t (from its series: the limiter's projected "no room until" in
// the bin holding t, and the Retry-After intervals running at t).
SafeSend scopeSafeSendAt(const DashboardSnapshot &snapshot, int scopeIndex, qint64 tMs);
// A scope's key, every limit of its policy on that key (the maximum over them, never the
// minimum): at the end of the data from the engine's summary, at a replay instant from the
// series.
SafeSend safeSend(const DashboardSnapshot &snapshot, int scopeIndex,
                  std::optional<qint64> instantMs);
// The later of two (the maximum over layers).
SafeSend laterOf(const SafeSend &a, const SafeSend &b);
// "Retry-After (onenote-per-minute)", "onenote-per-hour frees up"; empty when not held back.
QString safeSendReason(const SafeSend &safe);
// "safe to send in 42 s: onenote-per-hour frees up" / "safe to send now", relative to `from`.
QString safeSendText(const SafeSend &safe, qint64 fromMs);
// A countdown in whole seconds an operator reads at a glance: "42 s", "3 min 20 s", "2 h 5 min".
QString formatCountdown(qint64 ms);

// The scopes whose bucket key is this event's: same service (when the event names one), every
// part of the key one of the event's fields (identity, app, tenant, namespace, entity,
// category, lane). The buckets of the key, whether or not each limit charged this event.
QList<int> scopesOfEventKey(const DashboardSnapshot &snapshot, const RequestEvent &event);
// "Buckets of this key at T:" and a line per bucket with its usage at T (usageAt, the value
// the report, the Bucket chart and the fill grid give at T); empty when no bucket matches.
QString bucketsAtText(const DashboardSnapshot &snapshot, const RequestEvent &event, qint64 tMs);

// Index of the scope with the highest current fill, -1 when there is none.
int worstScopeIndex(const ReportData &report);

// "sp-migrator · fabric/platform", the key shortened as models/displaynames.h does
QString scopeLabel(const ScopeSummary &scope);
// "fabric/platform" (the grid's column name)
QString limitLabel(const ScopeSummary &scope);

// "1.2 s", "3 min 20 s", "2 h 5 min": durations an operator reads at a glance (core/timeparse.h).
using ts::formatDuration;

} // namespace ts::models
