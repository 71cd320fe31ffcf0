#pragma once
// The headless live commands. Each takes the arguments after its command name and returns the
// process exit code (0 ok, 1 failure, 2 usage). They build the same pipeline as the dashboard's
// live view (FileTailer / IngestListener / Simulation -> events) and end in a workspace
// (--workspace WS, through WorkspaceWriter) and/or a canonical NDJSON file (--out FILE).
//
//   throttlescope tail --workspace WS [--out FILE] [--glob PATTERN] FILE|DIR...
//   throttlescope serve --listen 127.0.0.1:PORT --workspace WS [--out FILE] [--token-file F]
//                       [--allow-origin O] [--allow-host H] [--max-connections N]
//                       [--idle-timeout S] [--head-timeout S] [--commit-timeout S]
//   throttlescope simulate --scenario NAME --out FILE [--seed N] [--duration S] [--speed X]
//
// tail and serve run until SIGINT or SIGTERM, then flush everything received and exit 0. With a
// workspace, --out holds what the workspace committed. serve answers a POST 200 only once its
// records are stored (committed, or written and synced to --out without a workspace), else 503.

#include <QStringList>

namespace ts::app {

int runTail(const QStringList &args);
int runServe(const QStringList &args);
int runSimulate(const QStringList &args);

} // namespace ts::app
