#pragma once
// The canonical request log (docs/request-log.md): one JSON object per line. The hot
// path of every report, so it parses with simdjson's on-demand API over large buffered reads
// and allocates only the QStrings an event keeps.

#include "ingest/ingest.h"

#include <QByteArray>

#include <memory>

namespace ts {

class NdjsonReader final : public LogReader
{
public:
    NdjsonReader();
    ~NdjsonReader() override;
    [[nodiscard]] QString formatName() const override { return QStringLiteral("ndjson"); }
    [[nodiscard]] bool supportsResume() const override { return true; }
    ReadResult read(QIODevice &input, const QString &sourceName, IngestSink &sink,
                    const ReadControl &control) override;

    // Parse one line (no line terminator). Returns false and sets *reason when the line is not
    // a canonical record. Exposed for the live listener (POST /ingest) and tests.
    bool parseLine(const char *data, qsizetype size, RequestEvent &event, QString *reason);

    // Parser state (simdjson parser, string interners); one per parsing thread. Declared here
    // only so the implementation's helpers can name it.
    struct Impl;

private:
    std::unique_ptr<Impl> d;
};

} // namespace ts
