#pragma once
// Writing RequestEvent back as a canonical NDJSON line (docs/request-log.md): what the
// simulator writes to files and what the headless tail/serve commands write with --out.
// The exact inverse of NdjsonReader for every field the canonical format defines.

#include "core/requestevent.h"

#include <QByteArray>

namespace ts::live {

// One line without the trailing '\n'.
QByteArray toNdjsonLine(const RequestEvent &event);
// Appends the line and '\n' to `out` (no temporary when writing many events into one buffer).
void appendNdjsonLine(const RequestEvent &event, QByteArray &out);

} // namespace ts::live
