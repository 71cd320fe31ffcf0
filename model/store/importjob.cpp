#include "importjob.h"

#include "workspace.h"
#include "workspacewriter.h"

#include <QFile>
#include <QUuid>

#include <cstdio>

namespace ts {

namespace {

// Collects the reader's output into batches for the writer. A batch is handed over only at a
// record boundary reported by the reader's checkpoint, together with that checkpoint, so the
// ledger never points past or before the rows it describes.
class BatchingSink final : public IngestSink
{
public:
    BatchingSink(WorkspaceWriter &writer, qint64 sourceId, qsizetype batchRecords, bool resumable)
        : m_writer(writer), m_sourceId(sourceId), m_batchRecords(qMax<qsizetype>(1, batchRecords)),
          m_resumable(resumable)
    {
        startBatch();
    }

    void onEvent(RequestEvent &&event) override
    {
        m_batch.events.append(std::move(event));
        ++m_events;
        submitIfFullWithoutCheckpoint();
    }

    // A chunking reader hands over a run of events at a time; a batch is submitted only at
    // the checkpoint after a run, so it ends up to one run past m_batchRecords. Reserving for
    // that (startBatch) keeps the batch from reallocating, which moved every event once more.
    void onEvents(std::vector<RequestEvent> &&events) override
    {
        m_largestRun = qMax(m_largestRun, qsizetype(events.size()));
        const qsizetype needed = m_batch.events.size() + qsizetype(events.size());
        if (needed > m_batch.events.capacity())
            m_batch.events.reserve(qMax(needed, m_batchRecords + m_largestRun));
        for (RequestEvent &event : events)
            onEvent(std::move(event));
    }

    void onMalformed(MalformedRecord &&record) override
    {
        m_batch.malformed.append(std::move(record));
        ++m_malformed;
        submitIfFullWithoutCheckpoint();
    }

    void onCheckpoint(qint64 offsetAfter, qint64 line)
    {
        m_lastOffset = offsetAfter;
        m_lastLine = line;
        if (m_batch.recordCount() >= m_batchRecords)
            submit(LedgerCheckpoint{offsetAfter, line, false});
    }

    bool submit(std::optional<LedgerCheckpoint> checkpoint)
    {
        m_batch.checkpoint = checkpoint;
        if (!m_writer.submit(std::move(m_batch)))
            m_writerFailed = true;
        startBatch();
        return !m_writerFailed;
    }

    void setResumePoint(qint64 offset, qint64 line)
    {
        m_lastOffset = offset;
        m_lastLine = line;
    }

    [[nodiscard]] bool writerFailed() const { return m_writerFailed; }
    [[nodiscard]] qint64 events() const { return m_events; }
    [[nodiscard]] qint64 malformed() const { return m_malformed; }
    [[nodiscard]] qint64 lastOffset() const { return m_lastOffset; }
    [[nodiscard]] qint64 lastLine() const { return m_lastLine; }

private:
    void startBatch()
    {
        m_batch = WriteBatch();
        m_batch.sourceId = m_sourceId;
        m_batch.events.reserve(m_batchRecords + m_largestRun);
    }

    // A reader that cannot resume restarts from zero anyway, so its batches need no checkpoint
    // and can go as soon as they are full (bounded memory even without checkpoints).
    void submitIfFullWithoutCheckpoint()
    {
        if (!m_resumable && m_batch.recordCount() >= m_batchRecords)
            submit(std::nullopt);
    }

    WorkspaceWriter &m_writer;
    const qint64 m_sourceId;
    const qsizetype m_batchRecords;
    const bool m_resumable;
    WriteBatch m_batch;
    qsizetype m_largestRun = 0; // most events handed over by one onEvents() so far
    qint64 m_events = 0;
    qint64 m_malformed = 0;
    qint64 m_lastOffset = 0;
    qint64 m_lastLine = 0;
    bool m_writerFailed = false;
};

ImportResult failed(ImportResult result, const QString &error)
{
    result.status = ImportResult::Status::Failed;
    result.error = error;
    return result;
}

} // namespace

QString importStatusName(ImportResult::Status status)
{
    switch (status) {
    case ImportResult::Status::Imported:
        return QStringLiteral("imported");
    case ImportResult::Status::AlreadyImported:
        return QStringLiteral("already imported");
    case ImportResult::Status::Cancelled:
        return QStringLiteral("cancelled");
    case ImportResult::Status::Failed:
        return QStringLiteral("failed");
    }
    return QStringLiteral("failed");
}

ImportResult importFile(Workspace &workspace, WorkspaceWriter &writer, const QString &path,
                        LogReader &reader, const ImportOptions &options)
{
    ImportResult result;
    result.path = path;
    if (!workspace.isOpen())
        return failed(result, QStringLiteral("workspace is not open"));
    const bool fromStdin = path == u"-";
    const bool resumable = reader.supportsResume() && !fromStdin;

    QFile input;
    qint64 startOffset = 0;
    qint64 startLine = 0;
    if (fromStdin) {
        if (!input.open(stdin, QIODevice::ReadOnly))
            return failed(result, u"-: " + input.errorString());
        // Every read of stdin is new data: its own source, never matched or resumed.
        result.sourceId =
            workspace.addSource(QStringLiteral("-"), reader.formatName(), -1, 0,
                                "stdin:" + QUuid::createUuid().toByteArray(QUuid::WithoutBraces));
        if (result.sourceId == 0)
            return failed(result, workspace.errorString());
    } else {
        QString error;
        const auto fingerprint = FileFingerprint::compute(path, &error);
        if (!fingerprint)
            return failed(result, error);
        result.totalBytes = fingerprint->size;

        std::optional<SourceRecord> source = workspace.findFileSource(*fingerprint);
        std::optional<LedgerEntry> ledger;
        if (source) {
            ledger = workspace.ledger(source->id);
            // Same head but shorter than what was committed: rewritten, not appended to.
            if (ledger && ledger->committedOffset > fingerprint->size)
                source.reset();
        }
        if (source) {
            result.sourceId = source->id;
            if (ledger && ledger->complete && ledger->committedOffset == fingerprint->size) {
                result.status = ImportResult::Status::AlreadyImported;
                result.endOffset = ledger->committedOffset;
                result.endLine = ledger->committedLine;
                return result;
            }
            if (ledger && resumable) {
                startOffset = ledger->committedOffset;
                startLine = ledger->committedLine;
                result.resumed = true;
                result.resumedFromOffset = startOffset;
                result.resumedFromLine = startLine;
            } else if (!resumable) {
                // Partly stored, or grown, but the reader can only start over: drop what is
                // there (batches of a cancelled run included) so nothing is stored twice.
                if (!workspace.discardSourceData(source->id))
                    return failed(result, workspace.errorString());
                result.restarted = true;
            }
            // The file may have grown past the head we fingerprinted: remember more of it.
            if (fingerprint->headLength != source->headLength &&
                !workspace.updateSourceFingerprint(source->id, fingerprint->headLength,
                                                   fingerprint->headHash, fingerprint->mtimeMs)) {
                return failed(result, workspace.errorString());
            }
        } else {
            result.sourceId =
                workspace.addSource(fingerprint->path, reader.formatName(), fingerprint->mtimeMs,
                                    fingerprint->headLength, fingerprint->headHash);
            if (result.sourceId == 0)
                return failed(result, workspace.errorString());
        }
        input.setFileName(path);
        if (!input.open(QIODevice::ReadOnly))
            return failed(result, path + u": " + input.errorString());
    }

    BatchingSink sink(writer, result.sourceId, options.batchRecords, resumable);
    sink.setResumePoint(startOffset, startLine);

    // The reader polls one flag; it stops for the caller's cancel or for a failed writer.
    std::atomic<bool> stop{false};
    auto checkStop = [&] {
        if ((options.cancel && options.cancel->load(std::memory_order_relaxed)) ||
            sink.writerFailed()) {
            stop.store(true, std::memory_order_relaxed);
        }
    };
    ReadControl control;
    control.cancel = &stop;
    control.startOffset = startOffset;
    control.startLine = startLine;
    // A file may be imported while its writer is still appending: a cut last line waits for
    // the next import instead of becoming a malformed record (and the rest of it another one).
    control.holdUnterminatedTail = resumable;
    control.progress = [&](qint64 done, qint64 total) {
        checkStop();
        if (options.progress)
            options.progress(done, total);
    };
    control.checkpoint = [&](qint64 offsetAfter, qint64 line) {
        sink.onCheckpoint(offsetAfter, line);
        checkStop();
    };

    const ReadResult read = reader.read(input, path, sink, control);
    const bool cancelled = read.cancelled || stop.load();
    // A reader that reached the end reports it in ReadResult; one that read nothing new (a
    // resume at the end) may report less than where we started.
    const qint64 endOffset = resumable ? qMax(sink.lastOffset(), read.endOffset) : read.endOffset;
    const qint64 endLine = resumable ? qMax(sink.lastLine(), read.endLine) : read.endLine;
    const bool complete =
        !cancelled && read.fatalError.isEmpty() && !sink.writerFailed() && read.heldBytes == 0;
    // The last batch: for a resumable source it always ends at a record boundary; for the
    // others only a complete read is worth a ledger entry (a partial one is restarted).
    std::optional<LedgerCheckpoint> last;
    if (resumable || complete)
        last = LedgerCheckpoint{endOffset, endLine, complete};
    if (!sink.writerFailed())
        sink.submit(last);
    const bool flushed = writer.flush();

    result.eventsAdded = sink.events();
    result.malformedAdded = sink.malformed();
    result.endOffset = endOffset;
    result.endLine = endLine;
    result.heldBytes = read.heldBytes;
    if (!flushed || sink.writerFailed())
        return failed(result, writer.errorString());
    if (!read.fatalError.isEmpty())
        return failed(result, read.fatalError);
    result.status = cancelled ? ImportResult::Status::Cancelled : ImportResult::Status::Imported;
    return result;
}

} // namespace ts
