#pragma once
// Which reader fits a file, decided by its content (never its name), and the factory that builds
// that reader. The CLI's --format and the import dialog override detection by naming a format.

#include "ingest/csvreader.h"
#include "ingest/ingest.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <memory>

namespace ts {

// Everything a reader may need that the file itself does not say.
struct ReaderOptions
{
    CsvMapping csvMapping;   // empty: recognise the columns by name
    QString accessLogFormat; // nginx log_format; empty: Combined, falling back to Common
};

// Format names, in the order detection tries them.
QStringList knownFormats(); // ndjson, har, otlp, azure-records, csv, access, resilience, vcr, http

// Looks at the first bytes of a file (about 64 KiB is plenty) and returns one of
// knownFormats(), or an empty string when nothing fits.
//  - JSON documents by their first member: "log" -> har, "resourceSpans" -> otlp, "records" ->
//    azure-records; a one-line object with "ts" -> ndjson; an object with a resource id and a
//    category (a bare Azure record) -> azure-records.
//  - Text: a Common/Combined access-log line -> access; Polly / Resilience4j / Service Bus
//    SDK lines -> resilience; a header row whose delimiter count matches the next row -> csv;
//    "interactions:" (a vcrpy cassette) -> vcr; a status line ("HTTP/1.1 429 ...") or a request
//    line ("GET https://... HTTP/1.1") first, after "#" / "//" comments -> http.
QString detectFormat(const QByteArray &head);

// A reader for a format name (knownFormats()); null for an unknown name.
std::unique_ptr<LogReader> createReader(const QString &format, const ReaderOptions &options = {});

// Reads the head of a file and detects its format. On failure returns an empty string and sets
// *error to "FILE: ..." (unreadable, or "cannot tell the format ...; use --format").
QString detectFileFormat(const QString &path, QString *error);

} // namespace ts
