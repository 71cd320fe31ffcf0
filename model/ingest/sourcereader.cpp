#include "ingest/sourcereader.h"

#include "ingest/formatdetect.h"

#include <QFile>

#include <cstdio>
#include <memory>

namespace ts {

namespace {
// Enough of a file's head for every detector (a HAR's "log" member, a CSV header and a row).
constexpr qint64 kDetectionBytes = 64 * 1024;

// The first `limit` bytes of an open file, as a device of that size: how a reader that cannot
// hold back an unterminated last line itself is kept from reading it (ReadControl::
// holdUnterminatedTail).
class PrefixDevice final : public QIODevice
{
public:
    PrefixDevice(QFile &file, qint64 limit) : m_file(file), m_limit(limit)
    {
        open(QIODevice::ReadOnly);
    }
    [[nodiscard]] bool isSequential() const override { return false; }
    [[nodiscard]] qint64 size() const override { return m_limit; }
    bool seek(qint64 position) override
    {
        return position <= m_limit && QIODevice::seek(position) && m_file.seek(position);
    }

protected:
    qint64 readData(char *data, qint64 maxSize) override
    {
        const qint64 left = m_limit - m_file.pos();
        if (left <= 0)
            return 0;
        return m_file.read(data, qMin(maxSize, left));
    }
    qint64 writeData(const char *, qint64) override { return -1; }

private:
    QFile &m_file;
    qint64 m_limit;
};

// Where the complete lines of a regular file end (just past its last '\n'); -1 when it ends
// with one (or is not a regular file), so that nothing needs holding back.
qint64 completeLinesEnd(QFile &file)
{
    const qint64 size = file.size();
    if (size <= 0 || file.isSequential())
        return -1;
    constexpr qint64 kStep = 64 * 1024;
    qint64 end = size;
    while (end > 0) {
        const qint64 from = qMax<qint64>(0, end - kStep);
        if (!file.seek(from))
            return -1;
        const QByteArray block = file.read(end - from);
        const qsizetype newline = block.lastIndexOf('\n');
        if (newline >= 0) {
            const qint64 after = from + newline + 1;
            file.seek(0);
            return after == size ? -1 : after;
        }
        end = from;
    }
    file.seek(0);
    return 0;
}
} // namespace

QString sourceDisplayName(const QString &path)
{
    return path == u"-" ? QStringLiteral("<stdin>") : path;
}

std::unique_ptr<LogReader> readerFor(QIODevice &device, const QString &displayName,
                                     const SourceOptions &options, QString *error)
{
    ReaderOptions readerOptions;
    readerOptions.accessLogFormat = options.accessLogFormat;
    if (!options.csvMapping.isEmpty()) {
        QString mappingError;
        const auto mapping = CsvMapping::fromString(options.csvMapping, &mappingError);
        if (!mapping) {
            if (error)
                *error = displayName + QStringLiteral(": --map: ") + mappingError;
            return nullptr;
        }
        readerOptions.csvMapping = *mapping;
    }
    QString format = options.format;
    if (format.isEmpty() || format == u"auto") {
        // Content, not the file name, decides; peeking leaves the bytes for the reader.
        format = detectFormat(device.peek(kDetectionBytes));
        if (format.isEmpty()) {
            if (error)
                *error = displayName
                         + QStringLiteral(": cannot tell the format (not canonical NDJSON, HAR, CSV, OTLP JSON, "
                                          "an access log or a resilience log); name it with --format");
            return nullptr;
        }
    }
    std::unique_ptr<LogReader> reader = createReader(format, readerOptions);
    if (!reader && error)
        *error = displayName + QStringLiteral(": unknown format \"") + format + QStringLiteral("\" (known: ")
                 + knownFormats().join(u", ") + u')';
    return reader;
}

SourceOutcome readSource(const QString &path, IngestSink &sink, const SourceOptions &options,
                         const ReadControl &control)
{
    SourceOutcome outcome;
    outcome.path = path;
    const QString name = sourceDisplayName(path);
    QFile file;
    const bool opened = path == u"-" ? file.open(stdin, QIODevice::ReadOnly)
                                      : (file.setFileName(path), file.open(QIODevice::ReadOnly));
    if (!opened) {
        outcome.result.fatalError = name + QStringLiteral(": cannot open: ") + file.errorString();
        return outcome;
    }
    std::unique_ptr<LogReader> reader = readerFor(file, name, options, &outcome.result.fatalError);
    if (!reader)
        return outcome;
    outcome.format = reader->formatName();
    // NDJSON holds an unterminated last line back itself, and only when it does not parse; the
    // other line formats are shown the file up to its last newline. Documents are read whole.
    const bool lineFormat = outcome.format == u"access" || outcome.format == u"csv"
                            || outcome.format == u"resilience";
    if (control.holdUnterminatedTail && lineFormat && path != u"-") {
        const qint64 end = completeLinesEnd(file);
        if (end >= 0) {
            PrefixDevice prefix(file, end);
            outcome.result = reader->read(prefix, name, sink, control);
            outcome.result.heldBytes = file.size() - end;
            return outcome;
        }
    }
    outcome.result = reader->read(file, name, sink, control);
    return outcome;
}

} // namespace ts
