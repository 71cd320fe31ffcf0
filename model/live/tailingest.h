#pragma once
// Turns tailed lines into events: each file's format is told by its content once, the first
// time a batch of it arrives (ingest/formatdetect.h, as `report` does), and its lines are
// parsed by that format's line parser (linereaders.h): canonical NDJSON, access logs, CSV,
// resilience/SDK logs, Azure records one per line. Bad lines become MalformedRecords with their
// file and line; a file in a whole-document format (HAR, OTLP JSON, vcr) gets one malformed
// record saying it cannot be followed line by line. Shared by `tail` and the dashboard.

#include "filetailer.h"
#include "ingest/ingest.h"
#include "ingest/sourcereader.h"

#include <QHash>
#include <QPair>

#include <memory>

namespace ts::live {

class LineParser;

class TailIngest
{
public:
    explicit TailIngest(SourceOptions options = {});
    ~TailIngest();
    TailIngest(const TailIngest &) = delete;
    TailIngest &operator=(const TailIngest &) = delete;

    // Not thread-safe: one TailIngest per thread (its parsers keep per-file state).
    void parse(const TailBatch &batch, QList<RequestEvent> *events,
               QList<MalformedRecord> *malformed);
    void feed(const TailBatch &batch, IngestSink &sink);
    // The format a file (by identity) is read as; empty before its first batch.
    [[nodiscard]] QString formatOf(quint64 device, quint64 inode) const;
    // Forgets a file's parser (it was truncated or rewritten: its format is told again).
    void forget(quint64 device, quint64 inode);

private:
    struct FileState
    {
        std::unique_ptr<LineParser> parser; // null: not line by line (see `format`)
        QString format;
        bool reported = false; // the "cannot follow" record was given
    };
    FileState &stateFor(const TailBatch &batch);

    SourceOptions m_options;
    QHash<QPair<quint64, quint64>, std::shared_ptr<FileState>> m_files; // by (device, inode)
};

} // namespace ts::live
