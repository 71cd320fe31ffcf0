#pragma once
// The one writer of a workspace: a thread with its own SQLite connection that drains a bounded
// queue of batches and stores everything it drained in ONE transaction, ledger checkpoint
// included. Because rows and ledger commit together, a process killed at any instant leaves a
// ledger offset that matches exactly the rows present: resume adds no duplicate and loses
// nothing.
//
// Producers (an import, the live listener) call submit() from any thread; it blocks while the
// queue is full, so a 2 GB import runs in flat memory at the speed of the disk.

#include "core/requestevent.h"

#include <QList>
#include <QMutex>
#include <QObject>
#include <QString>
#include <QWaitCondition>

#include <atomic>
#include <deque>
#include <memory>
#include <optional>

class QThread;

namespace ts {

struct WriterStatements; // prepared statements of the writer thread (workspacewriter.cpp)

// Where a source's import stands once the batch carrying it is committed.
struct LedgerCheckpoint
{
    LedgerCheckpoint() = default;
    LedgerCheckpoint(qint64 offset, qint64 line, bool reachedEnd, qint64 contentHeadLength = -1,
                     QByteArray contentHeadHash = {})
        : offsetAfter(offset), lineAfter(line), complete(reachedEnd), headLength(contentHeadLength),
          headHash(std::move(contentHeadHash))
    {
    }

    qint64 offsetAfter = 0; // byte offset just past the last record of this batch
    qint64 lineAfter = 0;   // line number of that record
    bool complete = false;  // the reader reached the end of the source
    // The content the offset refers to, when the source's file can change under the same
    // identity (a tailed file truncated and rewritten): stored as the source's head_length /
    // head_hash in the same transaction as the offset, so the two never disagree. -1: unchanged.
    qint64 headLength = -1;
    QByteArray headHash;
};

// One import run's hold on its source (Workspace::claimLedger). The writer stores a batch that
// carries a claim only while the source's ledger still names `owner`, checked inside the
// transaction that would store it: when another import took the source over meanwhile, this
// run's batches are dropped whole, `lost` tells the run to stop, and the count stays exact.
struct ImportClaim
{
    explicit ImportClaim(QByteArray ownerToken) : owner(std::move(ownerToken)) {}
    const QByteArray owner;
    // Written by the writer thread, read by the import's thread.
    std::atomic<bool> lost{false};
    std::atomic<qint64> eventsStored{0};    // committed for this run
    std::atomic<qint64> malformedStored{0}; // committed for this run
};

struct WriteBatch
{
    qint64 sourceId = 0; // a row of the sources table (Workspace::addSource)
    QList<RequestEvent> events;
    QList<MalformedRecord> malformed;
    // Set on batches that end at a record boundary of a resumable source.
    std::optional<LedgerCheckpoint> checkpoint;
    // Set by importFile(): the batch is stored only while its run owns the source.
    std::shared_ptr<ImportClaim> claim;

    [[nodiscard]] qsizetype recordCount() const { return events.size() + malformed.size(); }
};

class WorkspaceWriter : public QObject
{
    Q_OBJECT

public:
    struct Options
    {
        // Records (events + malformed) allowed to wait in the queue before submit() blocks.
        // Also bounds a transaction: the writer drains at most what is queued.
        qsizetype maxQueuedRecords = 32768;
        // finish() makes sure the reader's time index exists (part of the schema since version
        // 2, so normally there is nothing to do).
        bool createIndexesOnFinish = true;
    };

    explicit WorkspaceWriter(QObject *parent = nullptr);
    ~WorkspaceWriter() override; // finish()es if still running

    // Starts the thread and opens (creating or migrating) the workspace on it. Blocks until the
    // connection is open; false and errorString() when it could not be.
    bool start(const QString &workspacePath);
    bool start(const QString &workspacePath, const Options &options);
    [[nodiscard]] bool isRunning() const;

    // Thread-safe. Queues a batch; blocks while the queue is full. Every event passes through
    // ts::redact::redactEvent() first (malformed reasons through redactText()), on the calling
    // thread, before it is queued. Returns
    // false (and drops the batch) after a write error or once finish() began.
    bool submit(WriteBatch &&batch);
    // Thread-safe. Waits until everything submitted before the call is committed. False if a
    // write failed.
    bool flush();
    // Flushes, checks the query index (Options), stops the thread, closes the connection.
    // False if anything failed. Call from the thread that called start().
    bool finish();

    [[nodiscard]] QString errorString() const;
    [[nodiscard]] qint64 eventsWritten() const;
    [[nodiscard]] qint64 malformedWritten() const;

Q_SIGNALS:
    // Emitted from the writer thread after each committed transaction (queued to receivers in
    // other threads).
    void progress(qint64 eventsWritten, qint64 malformedWritten);
    void failed(const QString &errorString);

private:
    struct Counters
    {
        qint64 events = 0;
        qint64 malformed = 0;
    };

    void run();
    bool writeBatches(WriterStatements &statements, std::deque<WriteBatch> &batches);
    void setError(const QString &error);

    QString m_path;
    Options m_options;
    QThread *m_thread = nullptr;

    // m_mutex protects everything below it: the queue and its record count, the submitted and
    // committed sequence numbers, the started / stopping flags, the first error and the
    // written counters. The three conditions are waited on with it.
    mutable QMutex m_mutex;
    QWaitCondition m_queueNotEmpty; // writer waits: batches to write, or stop requested
    QWaitCondition m_queueNotFull;  // producers wait in submit()
    QWaitCondition m_committed;     // flush() and start() wait: progress of the writer
    std::deque<WriteBatch> m_queue;
    // Batches already committed, handed back so that the next submit() frees them on the
    // producer's thread: the events were allocated there, and freeing them on the writer
    // thread cost it ~10% (cross-arena frees) on the import's critical path.
    std::deque<WriteBatch> m_spent;
    qsizetype m_queuedRecords = 0;
    quint64 m_submittedBatches = 0;
    quint64 m_committedBatches = 0;
    bool m_started = false; // the thread finished opening (successfully or not)
    bool m_stopping = false;
    bool m_failed = false;
    QString m_error;
    Counters m_written;
};

} // namespace ts
