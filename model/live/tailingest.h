#pragma once
// Turns tailed lines into events: each complete line of a TailBatch is parsed as a canonical
// NDJSON record (blank lines are skipped, bad lines become MalformedRecords with their file and
// line). Shared by the dashboard's live view and the headless `tail` command.

#include "filetailer.h"
#include "ingest/ingest.h"

#include <memory>

namespace ts {
class NdjsonReader;
}

namespace ts::live {

class TailIngest
{
public:
    TailIngest();
    ~TailIngest();
    TailIngest(const TailIngest &) = delete;
    TailIngest &operator=(const TailIngest &) = delete;

    // Not thread-safe: one TailIngest per thread (it owns a parser with scratch buffers).
    void parse(const TailBatch &batch, QList<RequestEvent> *events,
               QList<MalformedRecord> *malformed);
    void feed(const TailBatch &batch, IngestSink &sink);

private:
    std::unique_ptr<NdjsonReader> m_reader;
};

} // namespace ts::live
