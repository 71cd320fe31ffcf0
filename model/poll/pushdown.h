#pragma once
// Push-down (docs/throttlescope.1, POLLED SOURCES): for a range too large to pull row by row,
// the store counts requests per second and per (service, identity, app, tenant, category,
// method, status, errorCode) and the engine is fed those counts as weighted charges.
//
// A count of n in second s becomes one event of weight n (RequestEvent::weight) at the start
// of s, with the group's fields (and credits / n, the cost of each request, when the store sums
// a credits column); within one second, successes come first, then failures, then throttles
// (a client's 429s follow the requests that filled the bucket). The engine charges such an
// event in one step where that is exact and request by request where order matters
// (throttleengine.cpp). What it then computes is:
//   - exact, for every count of the report (requests, statuses, throttles by error code and
//     identity, requests per scope) and for fixed windows aligned to whole seconds and credit
//     windows: every charge stays in its window, the sum of credits is the store's, and a
//     window's usage is the same at every instant the row-by-row replay looks at it after the
//     second; which requests of a window that overflows within one second are predicted
//     throttled depends on the order inside that second, which the counts do not keep;
//   - within one second elsewhere: a sliding window or token bucket sees each charge up to
//     999 ms early, so the usage at any instant t is bounded by the row-by-row usage over
//     [t, t + 1 s) and at least the row-by-row usage at t - 1 s; predicted-throttle counts can
//     differ by the charges of the seconds where the limit was crossed.
// The breakers get n samples of the event, each with the engine's fill after its own request
// (ThrottleEngine::Verdict::unitFills), so every transition, its reason, every breaker's state
// after each instant, its request and failure counts, trips and open time are those of the
// requests one by one (tst_breakersweighted; with several limits, the fill of the one fullest
// after each step of the charge rises linearly over that step). The danger
// detectors see n requests.
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

// One weighted event per row of `rows` (rows of a second together, in answer order within it,
// seconds in the rows' order), marked masked (the grouping fields come from the store's columns
// and are masked here like any reader's), handed on about `chunk` at a time (whole seconds):
// a few thousand events (~600 bytes each) keep the analysis' queued batches small, where the
// 65,536 of the replay of single charges held ~40 MB per batch.
void chargesFromAggregates(const QList<AggregateRow> &rows, const QString &sourceName,
                           const std::function<void(std::vector<RequestEvent> &&)> &deliver,
                           qsizetype chunk = 4096);

} // namespace ts::poll
