#include "importjob.h"

#include "workspace.h"
#include "workspacewriter.h"

#include <QFile>
#include <QUuid>

#include <cstdio>
#include <memory>

namespace ts {

namespace {

// Collects the reader's output into batches for the writer. A batch is handed over only at a
// record boundary reported by the reader's checkpoint, together with that checkpoint, so the
// ledger never points past or before the rows it describes.
class BatchingSink final : public IngestSink
{
public:
    BatchingSink(WorkspaceWriter &writer, qint64 sourceId, qsizetype batchRecords, bool resumable,
                 std::shared_ptr<ImportClaim> claim)
        : m_writer(writer), m_sourceId(sourceId), m_batchRecords(qMax<qsizetype>(1, batchRecords)),
          m_resumable(resumable), m_claim(std::move(claim))
    {
        startBatch();
    }

    void onEvent(RequestEvent &&event) override
    {
        m_batch.events.append(std::move(event));
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
    [[nodiscard]] qint64 lastOffset() const { return m_lastOffset; }
    [[nodiscard]] qint64 lastLine() const { return m_lastLine; }

private:
    void startBatch()
    {
        m_batch = WriteBatch();
        m_batch.sourceId = m_sourceId;
        m_batch.claim = m_claim;
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
    const std::shared_ptr<ImportClaim> m_claim;
    WriteBatch m_batch;
    qsizetype m_largestRun = 0; // most events handed over by one onEvents() so far
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
    case ImportResult::Status::Superseded:
        return QStringLiteral("continued by another import");
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
    // This run's name in the ledger while it owns the source.
    const QByteArray owner = QUuid::createUuid().toByteArray(QUuid::WithoutBraces);

    QFile input;
    qint64 startOffset = 0;
    qint64 startLine = 0;
    if (fromStdin) {
        if (!input.open(stdin, QIODevice::ReadOnly))
            return failed(result, u"-: " + input.errorString());
        // Every read of stdin is new data: its own source, never matched or resumed.
        const bool claimed = workspace.writeTransaction([&] {
            result.sourceId = workspace.addSource(QStringLiteral("-"), reader.formatName(), -1, 0,
                                                  "stdin:" + owner);
            return result.sourceId != 0 && workspace.claimLedger(result.sourceId, owner);
        });
        if (!claimed)
            return failed(result, workspace.errorString());
    } else {
        QString error;
        const auto fingerprint = FileFingerprint::compute(path, &error);
        if (!fingerprint)
            return failed(result, error);
        result.totalBytes = fingerprint->size;

        // Which content this is and what of it is stored are read, and the source claimed for
        // this run, in one write transaction: another import deciding the same at the same
        // time sees this one's claim, or this one sees its.
        bool nothingToDo = false;
        const bool claimed = workspace.writeTransaction([&] {
            const std::optional<FileSourceMatch> match = workspace.matchFileSource(*fingerprint);
            if (!match)
                return false;
            std::optional<SourceRecord> source = match->source;
            std::optional<LedgerEntry> ledger = match->ledger;
            const qint64 committed = ledger ? ledger->committedOffset : 0;
            if (source && committed > fingerprint->size) {
                if (source->path != fingerprint->path) {
                    // Another name, the same head, less than was read of it: an earlier copy
                    // of content imported further.
                    result.sourceId = source->id;
                    result.status = ImportResult::Status::AlreadyImported;
                    result.earlierCopy = true;
                    result.continuesPath = source->path;
                    result.endOffset = committed;
                    result.endLine = ledger->committedLine;
                    nothingToDo = true;
                    return true;
                }
                // Cut below what was read of it (copytruncate) and written again: new content.
                result.replacedCommittedBytes = committed;
                source.reset();
            } else if (!source && match->replacedAtPath) {
                result.replacedCommittedBytes =
                    match->replacedLedger ? match->replacedLedger->committedOffset : 0;
            }
            if (source) {
                result.sourceId = source->id;
                if (source->path != fingerprint->path)
                    result.continuesPath = source->path;
                if (ledger && ledger->complete && committed == fingerprint->size) {
                    result.status = ImportResult::Status::AlreadyImported;
                    result.endOffset = committed;
                    result.endLine = ledger->committedLine;
                    nothingToDo = true;
                    return true;
                }
                if (resumable) {
                    startOffset = committed;
                    startLine = ledger ? ledger->committedLine : 0;
                    result.resumed = true;
                    result.resumedFromOffset = startOffset;
                    result.resumedFromLine = startLine;
                } else {
                    // Partly stored, or grown, but the reader can only start over: drop what
                    // is there (batches of a cancelled run included) so nothing is stored
                    // twice.
                    if (!workspace.discardSourceData(source->id))
                        return false;
                    result.restarted = true;
                }
                // Its name now, and its head over more bytes if it grew.
                if (!workspace.updateFileSource(source->id, *fingerprint))
                    return false;
            } else {
                result.sourceId = workspace.addFileSource(*fingerprint, reader.formatName());
                if (result.sourceId == 0)
                    return false;
            }
            return workspace.claimLedger(result.sourceId, owner);
        });
        if (!claimed)
            return failed(result, workspace.errorString());
        if (nothingToDo)
            return result;
        input.setFileName(path);
        if (!input.open(QIODevice::ReadOnly))
            return failed(result, path + u": " + input.errorString());
    }

    const auto claim = std::make_shared<ImportClaim>(owner);
    BatchingSink sink(writer, result.sourceId, options.batchRecords, resumable, claim);
    sink.setResumePoint(startOffset, startLine);

    // The reader polls one flag; it stops for the caller's cancel, a failed writer, or a claim
    // another import took over.
    std::atomic<bool> stop{false};
    auto checkStop = [&] {
        if ((options.cancel && options.cancel->load(std::memory_order_relaxed)) ||
            sink.writerFailed() || claim->lost.load(std::memory_order_relaxed)) {
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
    if (!sink.writerFailed() && !claim->lost.load())
        sink.submit(last);
    const bool flushed = writer.flush();

    // What the writer committed for this run: less than was read when the run lost its claim.
    result.eventsAdded = claim->eventsStored.load();
    result.malformedAdded = claim->malformedStored.load();
    result.endOffset = endOffset;
    result.endLine = endLine;
    result.heldBytes = read.heldBytes;
    if (!flushed || sink.writerFailed())
        return failed(result, writer.errorString());
    if (claim->lost.load()) {
        result.status = ImportResult::Status::Superseded;
        return result;
    }
    if (!read.fatalError.isEmpty())
        return failed(result, read.fatalError);
    result.status = cancelled ? ImportResult::Status::Cancelled : ImportResult::Status::Imported;
    return result;
}

} // namespace ts
