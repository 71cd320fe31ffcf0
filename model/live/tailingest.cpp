#include "tailingest.h"

#include "ingest/redaction.h"
#include "linereaders.h"

namespace ts::live {

TailIngest::TailIngest(SourceOptions options) : m_options(std::move(options)) {}
TailIngest::~TailIngest() = default;

TailIngest::FileState &TailIngest::stateFor(const TailBatch &batch)
{
    const QPair<quint64, quint64> key{batch.device, batch.inode};
    auto it = m_files.find(key);
    if (it != m_files.end())
        return **it;
    auto state = std::make_shared<FileState>();
    // The file's own head, as `report` would see it; when it is gone already (deleted while
    // being drained), the lines themselves.
    QByteArray head = readFileHead(batch.path);
    if (head.isEmpty()) {
        for (const TailLine &line : batch.lines) {
            head += line.text;
            head += '\n';
            if (head.size() >= 64 * 1024)
                break;
        }
    }
    QString format = followFormat(head, m_options);
    // Nothing recognisable: read as the canonical log, whose parser says what is wrong per line.
    if (format.isEmpty())
        format = QStringLiteral("ndjson");
    state->format = format;
    state->parser = createLineParser(format, head, m_options);
    return **m_files.insert(key, std::move(state));
}

void TailIngest::parse(const TailBatch &batch, QList<RequestEvent> *events,
                       QList<MalformedRecord> *malformed)
{
    if (batch.lines.isEmpty())
        return;
    FileState &state = stateFor(batch);
    if (state.parser) {
        state.parser->parse(batch, events, malformed);
        return;
    }
    if (!state.reported) {
        state.reported = true;
        malformed->append(redact::malformedRecord(
            batch.path, batch.lines.constFirst().line,
            QStringLiteral("%1 is a whole-document format and cannot be followed line by line; "
                           "read it with report or import")
                .arg(state.format)));
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

QString TailIngest::formatOf(quint64 device, quint64 inode) const
{
    const auto state = m_files.value({device, inode});
    return state ? state->format : QString();
}

void TailIngest::forget(quint64 device, quint64 inode)
{
    m_files.remove({device, inode});
}

} // namespace ts::live
