#pragma once
// Reading a followed file as it grows, whatever its format: the per-format line parsers that
// `tail` and the dashboard's followed files share. The format is decided once per file by its
// content (ingest/formatdetect.h), exactly as `report` decides it, and the same readers parse
// the lines, so a followed file yields the events `report` gives for it, masked the same way.
//
// Line formats (canonical NDJSON, access logs, CSV, resilience/SDK logs, Azure records written
// one record per line) are parsed batch by batch from the complete lines FileTailer hands out.
// Whole-document formats (HAR, OTLP JSON, vcr cassettes, an Azure {"records": [...]} export
// spread over lines) cannot be parsed a line at a time: followers re-read them when they change.

#include "filetailer.h"
#include "ingest/ingest.h"
#include "ingest/sourcereader.h"

#include <QByteArray>
#include <QList>
#include <QString>

#include <memory>

namespace ts {
class LogReader;
class NdjsonReader;
} // namespace ts

namespace ts::live {

enum class FollowMode {
    Lines,    // parse each complete line as it arrives
    Document, // re-read the whole file when it changes
};

// The first bytes of a file (64 KiB: enough for every detector), empty when it cannot be read.
QByteArray readFileHead(const QString &path);
// The format of a file from its head (the forced one when options name one); empty when
// nothing fits.
QString followFormat(const QByteArray &head, const SourceOptions &options);
// How a file of this format and head is followed. Azure records are lines when the first line
// is a JSON value of its own (one record or one {"records":[...]} per line, as Event Hubs
// capture writes them), a document otherwise.
FollowMode followModeFor(const QString &format, const QByteArray &head);

// Parses the complete lines of ONE file, in order, batch after batch. Not thread-safe: one
// parser per file and thread (it owns reader state such as a CSV header).
class LineParser
{
public:
    virtual ~LineParser() = default;
    [[nodiscard]] virtual QString format() const = 0;
    // Events carry batch.path as their source and the file's own line numbers and offsets.
    virtual void parse(const TailBatch &batch, QList<RequestEvent> *events,
                       QList<MalformedRecord> *malformed) = 0;
};

// The parser for a line format (FollowMode::Lines); null for a document format or an unknown
// name. `head` is the file's head: a CSV's header row is its first line, which later batches do
// not carry.
std::unique_ptr<LineParser> createLineParser(const QString &format, const QByteArray &head,
                                             const SourceOptions &options = {});

} // namespace ts::live
