#include "valuelimits.h"

#include <cmath>

namespace ts::limits {

std::optional<int> toBoundedInt(double value, int lo, int hi)
{
    // Compared as doubles (every int is exact in a double); NaN fails both comparisons.
    const double whole = std::trunc(value);
    if (!(whole >= double(lo) && whole <= double(hi)))
        return std::nullopt;
    return static_cast<int>(whole);
}

bool inRange(double value, double lo, double hi)
{
    return value >= lo && value <= hi; // false for NaN
}

QString outOfRangeReason(QStringView field, double value, double lo, double hi)
{
    const auto number = [](double v) { return QString::number(v, 'g', 15); };
    return field + u' ' + number(value) + u" is out of range (" + number(lo) + u" to " +
           number(hi) + u')';
}

QString eventValueProblem(const RequestEvent &event)
{
    if (event.tsMs < kMinTsMs || event.tsMs > kMaxTsMs)
        return outOfRangeReason(u"ts (ms since the epoch)", double(event.tsMs), double(kMinTsMs),
                                double(kMaxTsMs));
    if (event.status < 0 || event.status > kMaxStatus)
        return outOfRangeReason(u"status", event.status, 0, kMaxStatus);
    if (event.attempt < -1 || event.attempt > kMaxAttempt)
        return outOfRangeReason(u"attempt", event.attempt, 0, kMaxAttempt);
    if (event.batchIndex < -1 || event.batchIndex > kMaxBatchIndex)
        return outOfRangeReason(u"batchIndex", event.batchIndex, 0, kMaxBatchIndex);
    // Negative durations and credits mean "unknown" / "none"; only finite ones are accepted.
    if (!std::isfinite(event.durationMs) || event.durationMs > kMaxDurationMs)
        return outOfRangeReason(u"durationMs", event.durationMs, 0, kMaxDurationMs);
    if (!std::isfinite(event.credits) || event.credits > kMaxCredits)
        return outOfRangeReason(u"credits", event.credits, 0, kMaxCredits);
    if (event.weight < 1 || event.weight > kMaxWeight)
        return outOfRangeReason(u"weight", double(event.weight), 1, double(kMaxWeight));
    return {};
}

} // namespace ts::limits
