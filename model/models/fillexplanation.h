#pragma once
// What a fill over 100 % counts (issue 30.7). A bucket the limiter counts at 6,066 % is not a
// drawing error: a limit that charges refused requests (Graph's OneNote limits, Fabric) keeps
// counting every 429 a retry storm sends. Wherever such a fill is shown (the Overview's cells,
// the Bucket page's header) the same sentence says so.

#include "engine/reportdata.h"

#include <QString>

namespace ts::models {

// "24,264 counted against 400 per hour; refused requests count too" when `usage` (as the
// limiter counts it) is over the scope's capacity, with `accepted` the accepted layer of it;
// empty otherwise.
QString overCapacityExplanation(const ScopeSummary &scope, double usage, double accepted);

} // namespace ts::models
