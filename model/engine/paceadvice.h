#pragma once
// Pace advice (issue 33.2, docs/report-json.md "advice"): for each bucket key of each policy (an
// identity, or what the policy keys by: app + identity, a namespace, a subscription), the
// fastest steady pace the limits allow for this log's mix of costs, and the limit that binds.
//
// A limit b charges a share f_b of the key's requests (b's requests / the key's requests) at a
// mean cost c_b, and sustains at most r_b requests per second:
//   fixed-window, sliding-window, credits   floor(capacity / c_b) / windowSeconds
//   token-bucket                            refillPerSecond / c_b
//   leaky-bucket                            nginx's rate (requests per second)
//   concurrency                             capacity / the mean service time (Little's law)
//   observed                                no limit
// so the key's pace is at most min over its limits of r_b / f_b, and that limit binds. Steady
// means evenly spaced: a window of W seconds sees at most ceil(pace x W) requests, hence the
// floor. A limit whose key is shared by many callers (an app-wide limit) is the key's pace, for
// all of them together.

#include "engine/reportdata.h"

#include <QList>
#include <QString>

namespace ts {

// One entry per (policy, key) that a modelled limit charged, in the order of the scopes.
QList<PaceAdvice> paceAdvice(const QList<ScopeSummary> &scopes);
// The tightest advice among the keys whose identity part is this identity (nullptr: none).
const PaceAdvice *tightestAdvice(const QList<PaceAdvice> &advice, const QString &identity);
// "max 110/min, onenote-per-hour limit binds"
QString describeAdvice(const PaceAdvice &advice);
// A rate for people: "110/min" below 10 per second ("25.5/s" above), "3.6/h" below one a
// minute; never rounded up (advice must stay within what it says).
QString formatPace(double perSecond);

} // namespace ts
