#pragma once
// Push-down (docs/throttlescope.1, POLLED SOURCES): for a range too large to pull row by row,
// the store counts requests per second and per (service, identity, app, tenant, category,
// method, status, errorCode) and the engine is fed those counts as weighted charges.
//
// A count of n in second s becomes n charges at the start of s, each with the group's fields
// (and credits / n when the store sums a credits column). What the engine then computes is:
//   - exact, for fixed windows aligned to whole seconds and for credit windows (every charge
//     stays in its window; the sum of credits is the store's), and for every count of the
//     report (requests, statuses, throttles by error code and identity);
//   - within one second elsewhere: a sliding window or token bucket sees each charge up to
//     999 ms early, so the usage at any instant t is bounded by the row-by-row usage over
//     [t, t + 1 s) and at least the row-by-row usage at t - 1 s; predicted-throttle counts can
//     differ by the charges of the seconds where the limit was crossed.
// The group carries one of its URLs (ClickHouse's any()), which the policies' URL rules
// classify the whole group by: exact when the requests of one (second, identity, app,
// category, method, status, errorCode) share their API group, as a client's usually do; a
// category column makes it exact always. Fields the group does not keep (headers, body,
// retryAfter, durationMs, operation ids) are absent: concurrency limits, Retry-After advice
// and lost-work grouping need the rows.

#include "poll/poller.h"

#include "core/requestevent.h"

#include <functional>
#include <vector>

namespace ts::poll {

// The charges of `rows`, in the rows' order, marked masked (the grouping fields come from the
// store's columns and are masked here like any reader's), handed on `chunk` at a time so an
// hour of a busy fleet (millions of charges) never sits in memory at once.
void chargesFromAggregates(const QList<AggregateRow> &rows, const QString &sourceName,
                           const std::function<void(std::vector<RequestEvent> &&)> &deliver,
                           qsizetype chunk = 65536);

} // namespace ts::poll
