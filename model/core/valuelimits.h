#pragma once
// The ranges every accepted value of a RequestEvent lies in. A reader rejects a record whose
// value falls outside (a malformed record, with the reason) instead of converting it: a double
// outside int's range converted to int is undefined behaviour, and a timestamp of 1e300 or a
// duration of 1e308 that got through would overflow the engine's, detectors' and report's
// qint64 arithmetic. Inside these ranges that arithmetic cannot overflow (the largest sums are a
// timestamp plus a duration or a window of a year, far below 2^63 ms, and credits summed in
// millionths over billions of events).

#include "core/requestevent.h"

#include <QString>
#include <QStringView>

#include <optional>

namespace ts::limits {

inline constexpr qint64 kMinTsMs = 0;                          // 1970-01-01T00:00:00.000Z
inline constexpr qint64 kMaxTsMs = Q_INT64_C(253402300799999); // 9999-12-31T23:59:59.999Z
inline constexpr int kMaxStatus = 999;
inline constexpr int kMaxAttempt = 1000000;
inline constexpr int kMaxBatchIndex = 1000000;
// A single request that took longer than 30 days is a mangled number, not a duration.
inline constexpr double kMaxDurationMs = 30.0 * 86400000.0;
// Explicit cost of one request (Service Bus: messages in one batch send, a few thousand).
inline constexpr double kMaxCredits = 1e6;
// Requests one event stands for (RequestEvent::weight): a store's count of one second and one
// group. A billion a second is no fleet's traffic; the bound keeps weight x credits and the
// report's sums far from overflow.
inline constexpr qint64 kMaxWeight = 1'000'000'000;

// The int a number names, truncated toward zero, when it lies in [lo, hi]; nullopt for NaN,
// infinities and anything outside, so no out-of-range double->int conversion ever happens.
std::optional<int> toBoundedInt(double value, int lo, int hi);

// Whether a double is finite and within [lo, hi].
bool inRange(double value, double lo, double hi);

// The reason text for a value outside its range: "attempt 1e+12 is out of range (0 to 1000000)".
QString outOfRangeReason(QStringView field, double value, double lo, double hi);

// Why an event's values cannot be accepted (a timestamp, status, attempt, batch index, duration
// credits or weight outside the ranges above, or not a finite number), empty when they can. Every
// reader's output passes through this check (ingest::CountingSink, the NDJSON reader), so a
// reader that forgets a range check still cannot hand the engine an extreme value.
QString eventValueProblem(const RequestEvent &event);

} // namespace ts::limits
