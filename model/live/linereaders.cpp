#include "linereaders.h"

#include "ingest/formatdetect.h"
#include "ingest/ndjsonreader.h"
#include "ingest/redaction.h"

#include <QBuffer>
#include <QFile>
#include <QJsonDocument>

#include <algorithm>
#include <vector>

namespace ts::live {

namespace {

constexpr qint64 kHeadBytes = 64 * 1024;

bool isBlank(const QByteArray &line)
{
    for (const char c : line) {
        if (c != ' ' && c != '\t' && c != '\r')
            return false;
    }
    return true;
}

QByteArray firstLine(const QByteArray &head)
{
    const qsizetype newline = head.indexOf('\n');
    QByteArray line = newline < 0 ? head : head.first(newline);
    if (line.endsWith('\r'))
        line.chop(1);
    return line;
}

// Canonical NDJSON: one record per line, parsed in place (the hot path of `tail`).
class NdjsonLineParser final : public LineParser
{
public:
    [[nodiscard]] QString format() const override { return QStringLiteral("ndjson"); }
    void parse(const TailBatch &batch, QList<RequestEvent> *events,
               QList<MalformedRecord> *malformed) override
    {
        for (const TailLine &line : batch.lines) {
            if (isBlank(line.text))
                continue;
            RequestEvent event;
            QString reason;
            if (m_reader.parseLine(line.text.constData(), line.text.size(), event, &reason)) {
                event.source = batch.path;
                event.line = line.line;
                event.offset = line.offset;
                events->append(std::move(event));
            } else {
                malformed->append(redact::malformedRecord(batch.path, line.line, reason));
            }
        }
    }

private:
    NdjsonReader m_reader;
};

// Any other line format: the batch's lines are handed to the format's own reader as one small
// document (a CSV's header row first), and what it reads is put back at the file's own lines
// and offsets. The reader is the one `report` uses, so nothing is parsed twice ways.
class ReaderLineParser final : public LineParser
{
public:
    ReaderLineParser(std::unique_ptr<LogReader> reader, QString format, QByteArray header)
        : m_reader(std::move(reader)), m_format(std::move(format)), m_header(std::move(header))
    {
    }
    [[nodiscard]] QString format() const override { return m_format; }

    void parse(const TailBatch &batch, QList<RequestEvent> *events,
               QList<MalformedRecord> *malformed) override
    {
        if (batch.lines.isEmpty())
            return;
        // Buffer line k (1-based) is file line lines[k - 1]; starts[k - 1] its buffer offset.
        // A file read again from its start (truncated, rewritten) brings its header row along.
        if (!m_header.isEmpty() && batch.lines.constFirst().line == 1)
            m_header = batch.lines.constFirst().text;
        QList<TailLine> lines;
        const bool withHeader = !m_header.isEmpty() && batch.lines.constFirst().line > 1;
        if (withHeader)
            lines.append(TailLine{m_header, 1, 0});
        lines.append(batch.lines);
        QByteArray text;
        std::vector<qint64> starts;
        starts.reserve(size_t(lines.size()));
        for (const TailLine &line : std::as_const(lines)) {
            starts.push_back(text.size());
            text += line.text;
            text += '\n';
        }

        class MappingSink final : public IngestSink
        {
        public:
            MappingSink(const QList<TailLine> &lines, const std::vector<qint64> &starts,
                        const QString &path, QList<RequestEvent> *events,
                        QList<MalformedRecord> *malformed)
                : m_lines(lines), m_starts(starts), m_path(path), m_events(events),
                  m_malformed(malformed)
            {
            }
            void onEvent(RequestEvent &&event) override
            {
                // By offset: every line reader sets it, and a record's first line is its place.
                const auto it = std::upper_bound(m_starts.begin(), m_starts.end(), event.offset);
                const qsizetype index = qMax<qsizetype>(0, (it - m_starts.begin()) - 1);
                const TailLine &line = m_lines.at(index);
                event.source = m_path;
                event.line = line.line;
                event.offset = line.offset + (event.offset - m_starts[size_t(index)]);
                m_events->append(std::move(event));
            }
            void onMalformed(MalformedRecord &&record) override
            {
                record.source = m_path;
                if (record.line >= 1 && record.line <= m_lines.size())
                    record.line = m_lines.at(record.line - 1).line;
                m_malformed->append(std::move(record));
            }

        private:
            const QList<TailLine> &m_lines;
            const std::vector<qint64> &m_starts;
            const QString &m_path;
            QList<RequestEvent> *m_events;
            QList<MalformedRecord> *m_malformed;
        };

        QBuffer buffer(&text);
        buffer.open(QIODevice::ReadOnly);
        MappingSink sink(lines, starts, batch.path, events, malformed);
        m_reader->read(buffer, batch.path, sink, ReadControl{});
    }

private:
    std::unique_ptr<LogReader> m_reader;
    QString m_format;
    QByteArray m_header;
};

} // namespace

QByteArray readFileHead(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return file.read(kHeadBytes);
}

QString followFormat(const QByteArray &head, const SourceOptions &options)
{
    if (!options.format.isEmpty() && options.format != u"auto")
        return options.format;
    return detectFormat(head);
}

FollowMode followModeFor(const QString &format, const QByteArray &head)
{
    if (format == u"har" || format == u"otlp" || format == u"vcr")
        return FollowMode::Document;
    if (format == u"azure-records") {
        // Complete lines only: the head may end inside its first line.
        const qsizetype newline = head.indexOf('\n');
        if (newline < 0)
            return FollowMode::Document;
        QJsonParseError error;
        QJsonDocument::fromJson(head.first(newline), &error);
        return error.error == QJsonParseError::NoError ? FollowMode::Lines : FollowMode::Document;
    }
    return FollowMode::Lines;
}

std::unique_ptr<LineParser> createLineParser(const QString &format, const QByteArray &head,
                                             const SourceOptions &options)
{
    if (format == u"ndjson")
        return std::make_unique<NdjsonLineParser>();
    if (followModeFor(format, head) != FollowMode::Lines)
        return nullptr;
    ReaderOptions readerOptions;
    readerOptions.accessLogFormat = options.accessLogFormat;
    if (!options.csvMapping.isEmpty()) {
        if (const auto mapping = CsvMapping::fromString(options.csvMapping))
            readerOptions.csvMapping = *mapping;
    }
    std::unique_ptr<LogReader> reader = createReader(format, readerOptions);
    if (!reader)
        return nullptr;
    QByteArray header;
    if (format == u"csv")
        header = firstLine(head);
    return std::make_unique<ReaderLineParser>(std::move(reader), format, std::move(header));
}

} // namespace ts::live
