#pragma once
// The one writer of a workspace: a thread with its own SQLite connection that drains a bounded
// queue of batches and stores everything it drained in ONE transaction, ledger checkpoint
// included. Because rows and ledger commit together, a process killed at any instant leaves a
// ledger offset that matches exactly the rows present: resume adds no duplicate and loses
// nothing.
//
// Producers (an import, the live listener) call submit() from any thread; it blocks while the
// queue is full, so a 2 GB import runs in flat memory at the speed of the disk. A producer that
// must not block (the HTTP listener answering its clients) calls trySubmit() and learns from
// Options::onSettled when its batch is committed, or that it never will be.

#include "core/requestevent.h"

#include <QDeadlineTimer>
#include <QList>
#include <QMutex>
#include <QObject>
#include <QString>
#include <QWaitCondition>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

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
    // Events another consumer reads at the same time (the dashboard's Analysis reads the very
    // vectors a file read hands it), shared instead of copied. Masked by their producer already
    // (redact::ensureMasked): nobody may change them any more.
    using SharedEvents = std::shared_ptr<const std::vector<RequestEvent>>;

    qint64 sourceId = 0; // a row of the sources table (Workspace::addSource)
    QList<RequestEvent> events;
    // Written after `events`, in this order. A producer fills one or the other per batch so
    // that rows keep the order it read them in.
    std::vector<SharedEvents> sharedEvents;
    QList<MalformedRecord> malformed;
    // Set on batches that end at a record boundary of a resumable source.
    std::optional<LedgerCheckpoint> checkpoint;
    // Set by submit() / trySubmit(): the batch's place in submission (= commit) order, from 1.
    quint64 sequence = 0;
    // When the producer stops waiting for this batch (a listener answers its client by then).
    // The writer waits for another connection's write lock only until the earliest deadline of
    // the batches it is about to write; past it the transaction fails instead of committing
    // later, so a producer told "not written" is never wrong. Forever: SQLite's busy timeout.
    QDeadlineTimer commitBy{QDeadlineTimer::Forever};
    // Set by importFile(): the batch is stored only while its run owns the source.
    std::shared_ptr<ImportClaim> claim;
    // Set by a poller (model/poll): the cursor of the polled store once this batch's rows are
    // stored, written to poll_cursors in the same transaction, so rows and cursor never
    // disagree after a crash (Workspace::pollCursor reads it back).
    std::optional<QByteArray> pollCursor;

    [[nodiscard]] qsizetype eventCount() const
    {
        qsizetype count = events.size();
        for (const SharedEvents &shared : sharedEvents)
            count += qsizetype(shared->size());
        return count;
    }
    [[nodiscard]] qsizetype recordCount() const { return eventCount() + malformed.size(); }
};

class WorkspaceWriter : public QObject
{
    Q_OBJECT

public:
    // Called on the writer thread once per transaction, in commit order, with its batches:
    // `error` empty = committed; otherwise none of them is stored and never will be (the
    // transaction failed, or the writer stopped before writing them). Cancelled batches are not
    // reported. The batches are only borrowed for the call.
    using SettledCallback =
        std::function<void(const std::deque<WriteBatch> &batches, const QString &error)>;

    struct Options
    {
        // Records (events + malformed) allowed to wait in the queue before submit() blocks.
        // Also bounds a transaction: the writer drains at most what is queued.
        qsizetype maxQueuedRecords = 32768;
        // finish() makes sure the reader's time index exists (part of the schema since version
        // 2, so normally there is nothing to do).
        bool createIndexesOnFinish = true;
        // What a failed transaction (another connection's lock held past the batches'
        // deadlines, a full disk, an I/O error) does. false: the writer stops, submit() fails
        // from then on (an import resumes later from the ledger). true: the transaction is
        // rolled back, its batches are reported failed to onSettled, and the writer goes on
        // with the next ones (the listener answered 503 for them; clients retry).
        bool continueAfterFailedTransaction = false;
        // The writer connection's page cache in KiB; 0: the writer's default (32 MiB, for bulk
        // imports into large workspaces). A session's scratch workspace only appends, and
        // its process holds the analysis and the views too: a smaller cache keeps it lean.
        int cacheKiB = 0;
        // A workspace nobody keeps (the dashboard's scratch file, removed when its session
        // ends, or at the next start after a crash): nothing is made durable. No fsync
        // (synchronous=OFF) and no checkpointer thread: the WAL is copied into the database
        // only every kThrowawayCheckpointPages pages instead of after every transaction (each
        // page written twice, with fsyncs, while the dashboard reads its files). Readers read
        // the WAL as well, so they see every commit just the same.
        bool throwaway = false;
        static constexpr int kThrowawayCheckpointPages = 131072;
        SettledCallback onSettled;
    };

    enum class SubmitStatus {
        Queued,
        QueueFull, // the queue holds maxQueuedRecords already: try again later
        Stopped,   // failed or finishing: nothing more is written
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
    // Thread-safe. Like submit() but never blocks: a full queue is QueueFull (the batch is
    // dropped). On Queued, *sequence is the batch's sequence number (WriteBatch::sequence).
    SubmitStatus trySubmit(WriteBatch &&batch, quint64 *sequence);
    // Thread-safe. Withdraws a queued batch the writer has not taken yet: true = it will never
    // be written (and is not reported to onSettled); false = it is being written or settled.
    bool cancel(quint64 sequence);
    // Thread-safe. Waits until everything submitted before the call is committed. False if a
    // write failed.
    bool flush();
    // Flushes, checks the query index (Options), stops the thread, closes the connection.
    // False if anything failed. Call from the thread that called start().
    bool finish();

    // The error that stopped the writer; with continueAfterFailedTransaction, the last failed
    // transaction's.
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
    bool writeBatches(WriterStatements &statements, std::deque<WriteBatch> &batches,
                      QString *error);
    // Redacts and numbers a batch; call with m_mutex held once it is sure to be queued.
    void enqueueLocked(WriteBatch &&batch, qsizetype records);
    // Stops the writer for good; the batches still queued are reported failed.
    void setError(const QString &error);
    void settle(const std::deque<WriteBatch> &batches, const QString &error);

    QString m_path;
    Options m_options;
    QThread *m_thread = nullptr;

    // m_mutex protects everything below it: the queue and its record count, the submitted and
    // settled batch counts, the started / stopping flags, the first error and the written
    // counters. The three conditions are waited on with it.
    mutable QMutex m_mutex;
    QWaitCondition m_queueNotEmpty; // writer waits: batches to write, or stop requested
    QWaitCondition m_queueNotFull;  // producers wait in submit()
    QWaitCondition m_committed;     // flush() and start() wait: batches settled, or started
    std::deque<WriteBatch> m_queue;
    // Batches already committed, handed back so that the next submit() frees them on the
    // producer's thread: the events were allocated there, and freeing them on the writer
    // thread cost it ~10% (cross-arena frees) on the import's critical path.
    std::deque<WriteBatch> m_spent;
    qsizetype m_queuedRecords = 0;
    quint64 m_submittedBatches = 0; // also the last sequence number handed out
    // Batches committed, failed or cancelled: flush() waits for it to reach m_submittedBatches.
    quint64 m_settledBatches = 0;
    bool m_started = false; // the thread finished opening (successfully or not)
    bool m_stopping = false;
    bool m_failed = false;
    QString m_error;
    Counters m_written;
};

} // namespace ts
