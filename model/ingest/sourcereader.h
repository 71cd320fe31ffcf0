#pragma once
// Open one source (a file path, or "-" for standard input), pick its reader (auto-detected by
// content unless a format is forced) and stream it into a sink. The one entry point that the
// report, import, the dashboard and the tests use to read a file.

#include "ingest/ingest.h"

#include <QString>

#include <memory>

class QIODevice;

namespace ts {

struct SourceOptions
{
    QString format = QStringLiteral("auto"); // auto | ndjson | har | csv | otlp | access | ...
    QString csvMapping;                      // "ts=TimeGenerated,status=ResultCode,..."
    QString accessLogFormat;                 // nginx-style log_format string
};

struct SourceOutcome
{
    QString path;
    QString format; // the format actually used
    ReadResult result;
    [[nodiscard]] bool readable() const { return result.fatalError.isEmpty(); }
};

// The reader for a source: the forced format, or the one its first bytes show. Null with
// *error set ("FILE: reason") when nothing fits. `device` must be open; detection peeks only.
std::unique_ptr<LogReader> readerFor(QIODevice &device, const QString &displayName,
                                     const SourceOptions &options, QString *error);

SourceOutcome readSource(const QString &path, IngestSink &sink, const SourceOptions &options = {},
                         const ReadControl &control = {});

// The display name of a source: "-" reads as "<stdin>".
QString sourceDisplayName(const QString &path);

} // namespace ts
