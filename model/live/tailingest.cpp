#include "tailingest.h"

#include "ingest/ndjsonreader.h"

namespace ts::live {

namespace {

bool isBlank(const QByteArray &line)
{
    for (const char c : line) {
        if (c != ' ' && c != '\t' && c != '\r')
            return false;
    }
    return true;
}

} // namespace

TailIngest::TailIngest() : m_reader(std::make_unique<NdjsonReader>()) {}
TailIngest::~TailIngest() = default;

void TailIngest::parse(const TailBatch &batch, QList<RequestEvent> *events,
                       QList<MalformedRecord> *malformed)
{
    for (const TailLine &line : batch.lines) {
        if (isBlank(line.text))
            continue;
        RequestEvent event;
        QString reason;
        if (m_reader->parseLine(line.text.constData(), line.text.size(), event, &reason)) {
            event.source = batch.path;
            event.line = line.line;
            event.offset = line.offset;
            events->append(std::move(event));
        } else {
            malformed->append(MalformedRecord{batch.path, line.line, reason});
        }
    }
}

void TailIngest::feed(const TailBatch &batch, IngestSink &sink)
{
    QList<RequestEvent> events;
    QList<MalformedRecord> malformed;
    parse(batch, &events, &malformed);
    for (RequestEvent &event : events)
        sink.onEvent(std::move(event));
    for (MalformedRecord &record : malformed)
        sink.onMalformed(std::move(record));
}

} // namespace ts::live
