#pragma once
// A small line-oriented LogReader for the workspace tests and their child process, so they do
// not depend on the NDJSON reader. One record per '\n'-terminated line:
//     tsMs <TAB> identity <TAB> status <TAB> url [<TAB> errorCode]
// Anything else is a malformed record ("expected 4 or 5 tab-separated fields"). An
// unterminated last line is left for a later read (like a log still being written).

#include "ingest/ingest.h"
#include "ingest/redaction.h"

#include <QIODevice>
#include <QThread>

namespace ts::test {

class TestLineReader final : public LogReader
{
public:
    // Slows the read down (per record) so a test can kill or cancel it mid-way.
    int delayMicrosecondsPerRecord = 0;
    bool resumable = true;

    [[nodiscard]] QString formatName() const override { return QStringLiteral("testlines"); }
    [[nodiscard]] bool supportsResume() const override { return resumable; }

    ReadResult read(QIODevice &input, const QString &sourceName, IngestSink &sink,
                    const ReadControl &control) override
    {
        ReadResult result;
        qint64 offset = 0;
        qint64 line = 0;
        if (resumable && control.startOffset > 0) {
            if (!input.seek(control.startOffset)) {
                result.fatalError =
                    sourceName + u": cannot seek to " + QString::number(control.startOffset);
                return result;
            }
            offset = control.startOffset;
            line = control.startLine;
        }
        const qint64 total = input.isSequential() ? -1 : input.size();
        result.endOffset = offset;
        result.endLine = line;
        while (true) {
            if (control.cancel && control.cancel->load()) {
                result.cancelled = true;
                break;
            }
            const QByteArray bytes = input.readLine();
            if (bytes.isEmpty())
                break;
            if (!bytes.endsWith('\n'))
                break; // incomplete: the writer of the log has not finished this line
            offset += bytes.size();
            ++line;
            result.bytesRead += bytes.size();
            const QList<QByteArray> fields = bytes.chopped(1).split('\t');
            bool tsOk = false;
            bool statusOk = false;
            const qint64 tsMs = fields.value(0).toLongLong(&tsOk);
            const int status = fields.value(2).toInt(&statusOk);
            if ((fields.size() == 4 || fields.size() == 5) && tsOk && statusOk) {
                RequestEvent event;
                event.tsMs = tsMs;
                event.identity = QString::fromUtf8(fields.at(1));
                event.status = status;
                event.url = QString::fromUtf8(fields.at(3));
                if (fields.size() == 5)
                    event.errorCode = QString::fromUtf8(fields.at(4));
                event.source = sourceName;
                event.line = line;
                event.offset = offset - bytes.size();
                sink.onEvent(std::move(event));
                ++result.events;
            } else {
                sink.onMalformed(redact::malformedRecord(
                    sourceName, line, QStringLiteral("expected 4 or 5 tab-separated fields")));
                ++result.malformed;
            }
            result.endOffset = offset;
            result.endLine = line;
            if (control.checkpoint)
                control.checkpoint(offset, line);
            if (control.progress && line % 1024 == 0)
                control.progress(offset, total);
            if (delayMicrosecondsPerRecord > 0)
                QThread::usleep(ulong(delayMicrosecondsPerRecord));
        }
        if (control.progress)
            control.progress(offset, total);
        return result;
    }
};

// The line a generator writes for record `index` (1-based line number = index + 1).
inline QByteArray testLine(qint64 index)
{
    static const char *const identities[] = {"sp-migrator", "alice@contoso.com", "orders-app"};
    const int status = index % 10 == 0 ? 429 : 200;
    QByteArray line = QByteArray::number(1771454650000 + index * 10) + '\t' +
                      identities[index % 3] + '\t' + QByteArray::number(status) +
                      "\thttps://api.fabric.microsoft.com/v1/workspaces/1f2e/items/" +
                      QByteArray::number(index);
    if (status == 429)
        line += "\tRequestBlocked";
    return line + '\n';
}

} // namespace ts::test
