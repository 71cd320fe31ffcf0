#include "ingest/sourcereader.h"

#include "ingest/ndjsonreader.h"

#include <QFile>

#include <cstdio>
#include <memory>

namespace ts {

QString sourceDisplayName(const QString &path)
{
    return path == u"-" ? QStringLiteral("<stdin>") : path;
}

std::unique_ptr<LogReader> readerFor(QIODevice &device, const QString &displayName,
                                     const SourceOptions &options, QString *error)
{
    Q_UNUSED(device);
    if (options.format == u"auto" || options.format == u"ndjson")
        return std::make_unique<NdjsonReader>();
    if (error)
        *error = displayName + QStringLiteral(": unknown format \"") + options.format + u'"';
    return nullptr;
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
