#pragma once
// What `whatif` prints (docs/whatif.md): the JSON document
//   {"actual": SIDE, "whatif": SIDE, "behaviour": {...}, "policies": [...]}
// plus "advice" (the pace advice of the simulated buckets, as report prints it), where SIDE is
// {requests, throttles, retries, operations, lostOperations, start, finish, makespanSeconds,
// byIdentity: {ID: {the same without byIdentity}}} (the what-if side adds shortCircuited), and the
// text: two lines per identity, the log's run and the simulated one.

#include "whatif/pacesweep.h"
#include "whatif/simulation.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>

namespace ts::whatif {

// One side's totals as JSON (finish and start in RFC 3339).
QJsonObject totalsToJson(const RunTotals &totals, bool simulated);
QJsonObject resultToJsonObject(const SimulationResult &result);
QByteArray resultToJson(const SimulationResult &result);
// "3 h 10 min, 57,011 429s, 1,204 retries, 0 lost"
QString describeRun(const RunTotals &totals);
QString resultToText(const SimulationResult &result);

// whatif --sweep pace: {"sweep": {"max429Percent", "steps": [{"step", "byIdentity": {ID:
// {pacePerSecond, requests, throttles, refusedPercent, makespanSeconds, finish}}}], "byIdentity":
// {ID: {pacePerSecond, unpaced, requests, throttles, refusedPercent, makespanSeconds, finish}}},
// "advice": [...], "behaviour": {...}}
QByteArray sweepToJson(const SweepResult &sweep, const Workload &work);
// One line per step as it is simulated, then the answer per identity.
QString sweepStepToText(const SweepStep &step, const Workload &work);
QString sweepToText(const SweepResult &sweep);

} // namespace ts::whatif
