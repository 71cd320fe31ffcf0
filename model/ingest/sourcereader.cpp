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
    std::unique_ptr<LogReader> reader;
    if (options.format == u"auto" || options.format == u"ndjson") {
        reader = std::make_unique<NdjsonReader>();
    } else {
        outcome.result.fatalError = name + QStringLiteral(": unknown format \"") + options.format + u'"';
        return outcome;
    }
    outcome.format = reader->formatName();
    outcome.result = reader->read(file, name, sink, control);
    return outcome;
}

} // namespace ts
