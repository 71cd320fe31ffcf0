#include "ingest/sourcereader.h"

#include "ingest/formatdetect.h"

#include <QFile>

#include <cstdio>
#include <memory>

namespace ts {

namespace {
// Enough of a file's head for every detector (a HAR's "log" member, a CSV header and a row).
constexpr qint64 kDetectionBytes = 64 * 1024;
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
    outcome.result = reader->read(file, name, sink, control);
    return outcome;
}

} // namespace ts
