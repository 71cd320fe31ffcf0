#pragma once
// HAR 1.2 captures (browser DevTools, Charles, Fiddler, mitmproxy, Proxyman, Insomnia), read as
// a stream: captures of hundreds of MB are never loaded whole.
//
// How: a hand-written scanner walks the top-level JSON structure to log.entries (skipping every
// other member, wherever it is: log.creator and log.pages may come before or after the entries)
// and slices out one entry object at a time with string- and escape-aware brace matching over a
// sliding buffer; each entry is then parsed with simdjson. Memory is bounded by the largest
// single entry.
//
// Validity (no partial garbage): nothing is emitted before the structure is known to be a HAR
// capture, i.e. a root object whose "log" member is an object whose "entries" member is an
// array. Each entry is parsed completely before its event is emitted, so only whole, valid
// entries ever leave the reader. A file that is not HAR (no log object, log not an object,
// entries not an array, not JSON) emits nothing and returns fatalError "FILE: reason". A capture
// that is HAR-shaped but cut off or corrupted later (a truncated download) keeps the entries
// before the damage and returns fatalError naming the byte offset where it broke. An entry that
// is valid JSON but unusable (no request, no startedDateTime) is a malformed record
// ("FILE:LINE: entry N: reason") and the read goes on.
//
// Mapping: startedDateTime -> tsMs, time -> durationMs, request method and URL, response status
// (0 or no response = failed request, with the creator's _error text in extraJson), response
// headers of interest (Retry-After also into retryAfter), the response text (base64 decoded) as
// body for failed requests, request Retry-Attempt -> attempt, request ids, identity from the
// Authorization bearer JWT (then discarded), websocket message counts in extraJson. A Graph
// "POST .../$batch" whose response is a batch is emitted as an envelope (batchEnvelope = true)
// followed by one event per sub-response (see graphbatch.h).

#include "ingest/ingest.h"

#include <memory>

namespace ts {

class HarReader final : public LogReader
{
public:
    HarReader();
    ~HarReader() override;
    [[nodiscard]] QString formatName() const override { return QStringLiteral("har"); }
    ReadResult read(QIODevice &input, const QString &sourceName, IngestSink &sink,
                    const ReadControl &control) override;

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

} // namespace ts
