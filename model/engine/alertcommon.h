#pragma once
// Small helpers shared by the breaker tracker and the alert detector.

#include "signals/throttlesignals.h"

#include <algorithm>
#include <optional>

namespace ts {

// The highest fraction of a limit the service said was used on this response:
// x-ms-throttle-limit-percentage, or 1 - remaining / limit of the RateLimit header family.
// nullopt when the response said nothing about it.
inline std::optional<double> reportedLimitFraction(const throttle::ThrottleSignals &sig)
{
    std::optional<double> fraction = sig.limitPercentage;
    const auto &rateLimit = sig.rateLimit;
    if (rateLimit.limit && rateLimit.remaining && *rateLimit.limit > 0) {
        const double used = 1.0 - *rateLimit.remaining / *rateLimit.limit;
        fraction = fraction ? std::max(*fraction, used) : used;
    }
    return fraction;
}

// When the client learned the answer: sent time plus duration when known.
inline qint64 responseArrivalMs(const RequestEvent &event)
{
    return event.tsMs + (event.durationMs > 0 ? qint64(event.durationMs) : qint64(0));
}

} // namespace ts
