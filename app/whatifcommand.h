#pragma once
// `throttlescope whatif`: replays a log's own work under another client behaviour and compares
// (model/whatif, docs/whatif.md).
//
//   throttlescope whatif [--policy NAME|FILE]... [--pace R/s|R/min] [--concurrency N]
//       [--obey-retry-after] [--retries N] [--backoff exp:BASE[:CAP]|fixed:S] [--jitter SEED]
//       [--breaker polly-v8|resilience4j|FILE] [--background-cap PCT] [--json] [--out FILE]
//       FILE...
//
// Exit codes: 0 done, 1 nothing could be read (or --out could not be written), 2 usage.

#include <QStringList>

namespace ts::app {

int runWhatIf(const QStringList &args);

} // namespace ts::app
