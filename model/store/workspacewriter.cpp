#include "workspacewriter.h"

#include "ingest/redaction.h"
#include "storesql.h"

#include <QHash>
#include <QMutex>
#include <QMutexLocker>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QThread>
#include <QVariant>
#include <QWaitCondition>

#include <sqlite3.h>

#include <algorithm>
#include <memory>
#include <unordered_map>

namespace ts {

struct WriterStatements
{
    bool prepare(const QSqlDatabase &connection, QString *error)
    {
        db = connection;
        sqlite3 *handle = store::nativeHandle(db);
        insertEventRuns.clear();
        insertEventVariants = 0;
        return insertEvent.prepare(handle, store::eventInsertSql(), error) &&
               insertMalformed.prepare(
                   handle,
                   QStringLiteral("INSERT INTO malformed(source_id, line, reason) VALUES(?,?,?)"),
                   error) &&
               upsertLedger.prepare(
                   handle,
                   QStringLiteral(
                       "INSERT INTO import_ledger(source_id, committed_offset, committed_line,"
                       " events, malformed, complete, updated_ms) VALUES(?,?,?,?,?,?,?)"
                       " ON CONFLICT(source_id) DO UPDATE SET"
                       " committed_offset = excluded.committed_offset,"
                       " committed_line = excluded.committed_line,"
                       " events = events + excluded.events,"
                       " malformed = malformed + excluded.malformed,"
                       " complete = excluded.complete,"
                       " updated_ms = excluded.updated_ms"),
                   error) &&
               completeSource.prepare(
                   handle, QStringLiteral("UPDATE sources SET size = ? WHERE id = ?"), error) &&
               updateSourceHead.prepare(handle,
                                        QStringLiteral("UPDATE sources SET head_length = ?,"
                                                       " head_hash = ? WHERE id = ?"),
                                        error) &&
               ledgerOwner.prepare(
                   handle, QStringLiteral("SELECT owner FROM import_ledger WHERE source_id = ?"),
                   error) &&
               upsertPollCursor.prepare(
                   handle,
                   QStringLiteral("INSERT INTO poll_cursors(source_id, state, rows, updated_ms)"
                                  " VALUES(?,?,?,?) ON CONFLICT(source_id) DO UPDATE SET"
                                  " state = excluded.state, rows = rows + excluded.rows,"
                                  " updated_ms = excluded.updated_ms"),
                   error) &&
               upsertBlockSummary.prepare(
                   handle,
                   QStringLiteral("INSERT INTO event_blocks(field, value, block, events)"
                                  " VALUES(?,?,?,?) ON CONFLICT(field, value, block)"
                                  " DO UPDATE SET events = events + excluded.events"),
                   error) &&
               insertBlockOverflow.prepare(
                   handle,
                   QStringLiteral("INSERT OR IGNORE INTO event_block_overflow(field, block)"
                                  " VALUES(?,?)"),
                   error) &&
               (nativeHandle = handle) != nullptr;
    }

    // The insert of `rows` rows naming `*columns` (store::eventInsertSql()), prepared on first
    // use. Once kMaxInsertVariants column sets are in use (a log whose rows have ever new
    // combinations of empty fields), *columns becomes every column.
    store::Statement *insertRun(int rows, store::EventColumns *columns, QString *error)
    {
        if (*columns != store::kAllEventColumns && insertEventVariants >= kMaxInsertVariants)
            *columns = store::kAllEventColumns;
        // Column sets use the low kEventColumnCount bits, the row count goes above them.
        const quint64 key = *columns | (quint64(rows) << 48);
        const auto known = insertEventRuns.find(key);
        if (known != insertEventRuns.end())
            return known->second.get();
        auto statement = std::make_unique<store::Statement>();
        if (!statement->prepare(nativeHandle, store::eventInsertSql(rows, *columns), error))
            return nullptr;
        if (*columns != store::kAllEventColumns)
            ++insertEventVariants;
        return insertEventRuns.emplace(key, std::move(statement)).first->second.get();
    }

    // Rows per execution of a multi-row insert: kEventsPerInsert while that many are left,
    // then kEventsPerShortInsert, then one. Each execution of an INSERT opens and closes its
    // cursors, allocates its record buffer and finds the last row id again; at one row per
    // execution that was a third of SQLite's time per row. 64 rather than 16 rows: 2% fewer
    // writer instructions (the column set of 64 rows is a little larger, the per-execution
    // work a quarter).
    static constexpr int kEventsPerInsert = 64;
    static constexpr int kEventsPerShortInsert = 16;
    static constexpr int kMaxInsertVariants = 64;

    QSqlDatabase db;
    sqlite3 *nativeHandle = nullptr;
    store::Statement insertEvent; // one row, every column
    // Multi-row inserts by (rows, columns): only the columns that have a value in some of the
    // rows (insertRun()).
    std::unordered_map<quint64, std::unique_ptr<store::Statement>> insertEventRuns;
    int insertEventVariants = 0; // column sets other than every column in insertEventRuns
    store::Statement insertMalformed;
    store::Statement upsertLedger;
    store::Statement completeSource;
    store::Statement updateSourceHead;
    store::Statement ledgerOwner;
    store::Statement upsertPollCursor;
    store::Statement upsertBlockSummary;
    store::Statement insertBlockOverflow;
    // Summaries of the rows of the transaction being written.
    store::BlockSummaryBuilder blockSummaries;
};

namespace {

// Copies committed WAL frames into the database file on its own thread and connection, so the
// writer's commits do not pay for it: SQLite's advice for write-heavy applications (turn off
// auto-checkpoint on the writer, checkpoint from another thread). On a 2-core machine the
// import's reader leaves room on the other core; the writer thread is the bottleneck.
class Checkpointer
{
public:
    explicit Checkpointer(const QString &path) : m_path(path) {}

    ~Checkpointer()
    {
        if (!m_thread)
            return;
        {
            QMutexLocker locker(&m_mutex);
            m_stop = true;
            m_wake.wakeAll();
        }
        m_thread->wait();
    }

    // Opens the connection on the new thread; false if it could not (the writer then keeps
    // checkpointing itself).
    bool start()
    {
        m_thread.reset(QThread::create([this] { run(); }));
        m_thread->setObjectName(QStringLiteral("WorkspaceCheckpointer"));
        m_thread->start();
        QMutexLocker locker(&m_mutex);
        while (!m_started)
            m_wake.wait(&m_mutex);
        return m_opened;
    }

    // A transaction was committed: checkpoint when the thread is free (requests coalesce).
    void request()
    {
        QMutexLocker locker(&m_mutex);
        m_wanted = true;
        m_wake.wakeAll();
    }

private:
    void run()
    {
        const QString connectionName = store::uniqueConnectionName(u"checkpointer");
        QSqlDatabase db;
        QString error;
        const bool opened = store::openConnection(db, connectionName, m_path,
                                                  store::ConnectionRole::Reader, &error);
        {
            QMutexLocker locker(&m_mutex);
            m_started = true;
            m_opened = opened;
            m_wake.wakeAll();
        }
        while (opened) {
            {
                QMutexLocker locker(&m_mutex);
                while (!m_wanted && !m_stop)
                    m_wake.wait(&m_mutex);
                if (m_stop)
                    break;
                m_wanted = false;
            }
            // PASSIVE never waits for the writer; whatever it could not copy now is copied
            // at the next request.
            store::execSql(db, QStringLiteral("PRAGMA wal_checkpoint(PASSIVE)"), &error);
        }
        store::closeConnection(db, connectionName);
    }

    const QString m_path;
    std::unique_ptr<QThread> m_thread;
    // m_mutex protects the four flags below; m_wake signals changes of any of them.
    QMutex m_mutex;
    QWaitCondition m_wake;
    bool m_started = false;
    bool m_opened = false;
    bool m_wanted = false;
    bool m_stop = false;
};

} // namespace

WorkspaceWriter::WorkspaceWriter(QObject *parent) : QObject(parent) {}

WorkspaceWriter::~WorkspaceWriter()
{
    finish();
}

bool WorkspaceWriter::start(const QString &workspacePath)
{
    return start(workspacePath, Options());
}

bool WorkspaceWriter::start(const QString &workspacePath, const Options &options)
{
    if (m_thread)
        return false;
    m_path = workspacePath;
    m_options = options;
    m_options.maxQueuedRecords = qMax<qsizetype>(1, m_options.maxQueuedRecords);
    {
        QMutexLocker locker(&m_mutex);
        m_queue.clear();
        m_queuedRecords = 0;
        m_submittedBatches = m_settledBatches = 0;
        m_started = m_stopping = m_failed = false;
        m_error.clear();
        m_written = {};
    }
    m_thread = QThread::create([this] { run(); });
    m_thread->setObjectName(QStringLiteral("WorkspaceWriter"));
    m_thread->start();

    QMutexLocker locker(&m_mutex);
    while (!m_started)
        m_committed.wait(&m_mutex);
    if (m_failed) {
        locker.unlock();
        m_thread->wait();
        delete m_thread;
        m_thread = nullptr;
        return false;
    }
    return true;
}

bool WorkspaceWriter::isRunning() const
{
    QMutexLocker locker(&m_mutex);
    return m_thread && m_started && !m_stopping && !m_failed;
}

namespace {

// Redacted on the producer's thread: secrets never enter the queue, and the work is spread over
// two cores (the writer thread is the bottleneck of an import).
void redactBatch(WriteBatch &batch)
{
    for (RequestEvent &event : batch.events)
        redact::ensureMasked(event);
    // Shared events must come masked; should one not, the batch gets a masked copy of them
    // (appended after its own events: a producer fills one kind per batch, so order holds).
    const bool sharedMasked =
        std::all_of(batch.sharedEvents.cbegin(), batch.sharedEvents.cend(), [](const auto &shared) {
            return std::all_of(shared->cbegin(), shared->cend(),
                               [](const RequestEvent &event) { return event.secretsMasked; });
        });
    if (!sharedMasked) {
        for (const WriteBatch::SharedEvents &shared : batch.sharedEvents) {
            for (RequestEvent event : *shared) {
                redact::ensureMasked(event);
                batch.events.append(std::move(event));
            }
        }
        batch.sharedEvents.clear();
    }
    // A reason may quote the record it rejects.
    for (MalformedRecord &record : batch.malformed)
        record.reason = redact::redactText(record.reason);
}

} // namespace

void WorkspaceWriter::enqueueLocked(WriteBatch &&batch, qsizetype records)
{
    batch.sequence = ++m_submittedBatches;
    m_queue.push_back(std::move(batch));
    m_queuedRecords += records;
    m_queueNotEmpty.wakeOne();
}

bool WorkspaceWriter::submit(WriteBatch &&batch)
{
    redactBatch(batch);
    const qsizetype records = batch.recordCount();
    std::deque<WriteBatch> spent; // destroyed after the lock is released
    QMutexLocker locker(&m_mutex);
    spent.swap(m_spent);
    // A batch larger than the whole bound still goes in alone, or it could never be written.
    while (!m_failed && !m_stopping && m_queuedRecords > 0 &&
           m_queuedRecords + records > m_options.maxQueuedRecords) {
        m_queueNotFull.wait(&m_mutex);
    }
    if (m_failed || m_stopping || !m_started)
        return false;
    enqueueLocked(std::move(batch), records);
    return true;
}

WorkspaceWriter::SubmitStatus WorkspaceWriter::trySubmit(WriteBatch &&batch, quint64 *sequence)
{
    const qsizetype records = batch.recordCount();
    std::deque<WriteBatch> spent; // destroyed after the lock is released
    {
        QMutexLocker locker(&m_mutex);
        spent.swap(m_spent);
        if (m_failed || m_stopping || !m_started)
            return SubmitStatus::Stopped;
        if (m_queuedRecords > 0 && m_queuedRecords + records > m_options.maxQueuedRecords)
            return SubmitStatus::QueueFull;
    }
    // Outside the lock (the writer keeps draining meanwhile); the queue may have filled up
    // again in between, which only matters for the bound, not for correctness: checked again.
    redactBatch(batch);
    QMutexLocker locker(&m_mutex);
    if (m_failed || m_stopping)
        return SubmitStatus::Stopped;
    if (m_queuedRecords > 0 && m_queuedRecords + records > m_options.maxQueuedRecords)
        return SubmitStatus::QueueFull;
    enqueueLocked(std::move(batch), records);
    *sequence = m_submittedBatches;
    return SubmitStatus::Queued;
}

bool WorkspaceWriter::cancel(quint64 sequence)
{
    std::optional<WriteBatch> withdrawn; // freed after the lock is released
    QMutexLocker locker(&m_mutex);
    for (auto it = m_queue.begin(); it != m_queue.end(); ++it) {
        if (it->sequence != sequence)
            continue;
        m_queuedRecords -= it->recordCount();
        withdrawn.emplace(std::move(*it));
        m_queue.erase(it);
        ++m_settledBatches;
        m_queueNotFull.wakeAll();
        m_committed.wakeAll();
        return true;
    }
    return false;
}

bool WorkspaceWriter::flush()
{
    // Freed after the lock is released, on this (the producer's) thread.
    std::deque<WriteBatch> spent;
    QMutexLocker locker(&m_mutex);
    const quint64 target = m_submittedBatches;
    while (!m_failed && m_settledBatches < target)
        m_committed.wait(&m_mutex);
    // Everything is committed: the batches handed back go now, not at the next submit(), which
    // may be long in coming (the end of a file's read: up to a queue's worth of events).
    spent.swap(m_spent);
    return !m_failed;
}

bool WorkspaceWriter::finish()
{
    if (!m_thread)
        return !m_failed;
    {
        QMutexLocker locker(&m_mutex);
        m_stopping = true;
        m_queueNotEmpty.wakeAll();
        m_queueNotFull.wakeAll();
    }
    m_thread->wait();
    delete m_thread;
    m_thread = nullptr;
    QMutexLocker locker(&m_mutex);
    return !m_failed;
}

QString WorkspaceWriter::errorString() const
{
    QMutexLocker locker(&m_mutex);
    return m_error;
}

qint64 WorkspaceWriter::eventsWritten() const
{
    QMutexLocker locker(&m_mutex);
    return m_written.events;
}

qint64 WorkspaceWriter::malformedWritten() const
{
    QMutexLocker locker(&m_mutex);
    return m_written.malformed;
}

void WorkspaceWriter::setError(const QString &error)
{
    std::deque<WriteBatch> dropped;
    {
        QMutexLocker locker(&m_mutex);
        if (!m_failed) {
            m_failed = true;
            m_error = error;
        }
        dropped.swap(m_queue);
        m_queuedRecords = 0;
        m_settledBatches += dropped.size();
        m_queueNotFull.wakeAll();
        m_committed.wakeAll();
    }
    settle(dropped, error);
    Q_EMIT failed(error);
}

void WorkspaceWriter::settle(const std::deque<WriteBatch> &batches, const QString &error)
{
    if (m_options.onSettled && !batches.empty())
        m_options.onSettled(batches, error);
}

void WorkspaceWriter::run()
{
    const QString connectionName = store::uniqueConnectionName(u"writer");
    QSqlDatabase db;
    QString error;
    bool opened =
        store::openConnection(db, connectionName, m_path, store::ConnectionRole::Writer, &error);
    std::optional<WriterStatements> statements;
    if (opened && m_options.cacheKiB > 0) {
        opened = store::execSql(db, QStringLiteral("PRAGMA cache_size=-%1").arg(m_options.cacheKiB),
                                &error);
    }
    if (opened && m_options.throwaway) {
        opened = store::execSql(db, QStringLiteral("PRAGMA synchronous=OFF"), &error) &&
                 store::execSql(db,
                                QStringLiteral("PRAGMA wal_autocheckpoint=%1")
                                    .arg(Options::kThrowawayCheckpointPages),
                                &error);
    }
    if (opened) {
        statements.emplace();
        if (!statements->prepare(db, &error)) {
            error = m_path + u": " + error;
            opened = false;
        }
    }
    {
        QMutexLocker locker(&m_mutex);
        m_started = true;
        if (!opened) {
            m_failed = true;
            m_error = error;
        }
        m_committed.wakeAll();
    }
    if (!opened) {
        statements.reset();
        store::closeConnection(db, connectionName);
        return;
    }

    std::optional<Checkpointer> checkpointer;
    if (!m_options.throwaway) {
        checkpointer.emplace(m_path);
        if (!checkpointer->start() ||
            !store::execSql(db, QStringLiteral("PRAGMA wal_autocheckpoint=0"), &error)) {
            checkpointer.reset();
        }
    }

    std::deque<WriteBatch> drained;
    for (;;) {
        {
            QMutexLocker locker(&m_mutex);
            while (m_queue.empty() && !m_stopping && !m_failed)
                m_queueNotEmpty.wait(&m_mutex);
            if (m_failed || (m_queue.empty() && m_stopping))
                break;
            drained.swap(m_queue);
            m_queuedRecords = 0;
            // The queue is empty again: producers fill it while this transaction runs.
            m_queueNotFull.wakeAll();
        }
        const quint64 batchCount = drained.size();
        if (!writeBatches(*statements, drained, &error)) {
            error = m_path + u": " + error;
            if (!m_options.continueAfterFailedTransaction) {
                {
                    QMutexLocker locker(&m_mutex);
                    m_settledBatches += batchCount;
                }
                settle(drained, error);
                setError(error);
                break;
            }
            // Rolled back: the producers learn that these were not written and the writer
            // tries the next batches (the lock may be free again, or the disk have room).
            settle(drained, error);
            {
                QMutexLocker locker(&m_mutex);
                m_error = error;
                m_settledBatches += batchCount;
                m_committed.wakeAll();
            }
            drained.clear();
            continue;
        }
        // Reported before flush() returns for these batches: a producer that flushes and then
        // reads what onSettled produced (the live commands' --out) finds it complete.
        settle(drained, QString());
        Counters written;
        {
            QMutexLocker locker(&m_mutex);
            // Only one set waits for the producer; if it has not taken the previous one (no
            // submit since), that one is freed here so memory stays bounded.
            m_spent.swap(drained);
            m_settledBatches += batchCount;
            written = m_written;
            m_committed.wakeAll();
        }
        if (checkpointer)
            checkpointer->request();
        drained.clear();
        Q_EMIT progress(written.events, written.malformed);
    }

    bool failedBefore = false;
    {
        QMutexLocker locker(&m_mutex);
        failedBefore = m_failed;
    }
    {
        QMutexLocker locker(&m_mutex);
        drained.swap(m_spent);
    }
    drained.clear();
    if (checkpointer) {
        // Index builds below, and the final checkpoint when this last connection closes,
        // are the writer's own again.
        checkpointer.reset();
        store::execSql(db, QStringLiteral("PRAGMA wal_autocheckpoint=4096"), &error);
    }
    if (!failedBefore && m_options.createIndexesOnFinish) {
        const QStringList indexStatements = store::queryIndexStatements();
        for (const QString &sql : indexStatements) {
            if (!store::execSql(db, sql, &error)) {
                setError(m_path + u": " + error);
                break;
            }
        }
    }
    statements.reset();
    store::closeConnection(db, connectionName);
}

bool WorkspaceWriter::writeBatches(WriterStatements &statements, std::deque<WriteBatch> &batches,
                                   QString *errorOut)
{
    QString &error = *errorOut;
    auto failWith = [&](const QString &what) {
        error = what + u": " + error;
        return false;
    };

    // Events and malformed records written for a source since its last checkpoint in this
    // transaction: the ledger counts them when the checkpoint is stored.
    struct Pending
    {
        qint64 events = 0;
        qint64 malformed = 0;
    };
    QHash<qint64, Pending> pending;
    Counters added;
    // Claims checked in this transaction: whether each still owns its source, and what it
    // stored (added to the claim once committed). No other writer can change an owner while
    // this transaction holds the write lock, so one check per claim and transaction suffices.
    struct ClaimState
    {
        bool owns = false;
        Pending stored;
    };
    std::unordered_map<ImportClaim *, ClaimState> claims;
    auto ownsSource = [&](const WriteBatch &batch, bool *owns) -> bool {
        ImportClaim *claim = batch.claim.get();
        const auto known = claims.find(claim);
        if (known != claims.end()) {
            *owns = known->second.owns;
            return true;
        }
        if (claim->lost.load()) { // in an earlier transaction: no need to ask again
            *owns = false;
            claims[claim].owns = false;
            return true;
        }
        store::Statement &owner = statements.ledgerOwner;
        owner.bindInt(0, batch.sourceId);
        QString stepError;
        const bool found = owner.next(&stepError);
        const QByteArray current = found ? owner.utf8At(0) : QByteArray();
        owner.reset();
        if (!stepError.isEmpty()) {
            error = stepError;
            return false;
        }
        *owns = current == claim->owner;
        claims[claim].owns = *owns;
        if (!*owns)
            claim->lost.store(true);
        return true;
    };

    auto writeAll = [&]() -> bool {
        for (WriteBatch &batch : batches) {
            if (batch.claim) {
                bool owns = false;
                if (!ownsSource(batch, &owns))
                    return failWith(QStringLiteral("check import claim"));
                if (!owns)
                    continue; // another import took the source over: nothing of this run
                claims[batch.claim.get()].stored.events += batch.eventCount();
                claims[batch.claim.get()].stored.malformed += batch.malformed.size();
            }
            Pending &sourcePending = pending[batch.sourceId];
            auto insertEvents = [&](const RequestEvent *events, qsizetype eventCount) {
                for (qsizetype first = 0; first < eventCount;) {
                    const qsizetype left = eventCount - first;
                    const int rows = left >= WriterStatements::kEventsPerInsert
                                         ? WriterStatements::kEventsPerInsert
                                     : left >= WriterStatements::kEventsPerShortInsert
                                         ? WriterStatements::kEventsPerShortInsert
                                         : 1;
                    store::EventColumns columns = store::kAllEventColumns;
                    store::Statement *insert = &statements.insertEvent;
                    if (rows > 1) {
                        columns = 0;
                        for (int row = 0; row < rows; ++row)
                            columns |=
                                store::eventValueColumns(events[first + row], batch.sourceId);
                        insert = statements.insertRun(rows, &columns, &error);
                        if (!insert)
                            return failWith(QStringLiteral("prepare event insert"));
                    }
                    int columnCount = 0;
                    for (int column = 0; column < store::kEventColumnCount; ++column)
                        columnCount += int((columns >> column) & 1);
                    insert->beginRows();
                    for (int row = 0; row < rows; ++row) {
                        if (!store::bindEvent(*insert, events[first + row], batch.sourceId,
                                              row * columnCount, columns)) {
                            error = QStringLiteral("a value for a column the insert leaves out");
                            return failWith(QStringLiteral("insert event"));
                        }
                    }
                    if (!insert->exec(&error))
                        return failWith(QStringLiteral("insert event"));
                    // The single writer appends: the rows of one INSERT get consecutive ids.
                    const qint64 lastRowId = sqlite3_last_insert_rowid(statements.nativeHandle);
                    for (int row = 0; row < rows; ++row) {
                        statements.blockSummaries.add(lastRowId - rows + 1 + row,
                                                      events[first + row], batch.sourceId);
                    }
                    first += rows;
                }
                return true;
            };
            if (!insertEvents(batch.events.constData(), batch.events.size()))
                return false;
            for (const WriteBatch::SharedEvents &shared : batch.sharedEvents) {
                if (!insertEvents(shared->data(), qsizetype(shared->size())))
                    return false;
            }
            for (const MalformedRecord &record : std::as_const(batch.malformed)) {
                store::Statement &insert = statements.insertMalformed;
                insert.bindIntOrNull(0, batch.sourceId, batch.sourceId <= 0);
                insert.bindInt(1, record.line);
                insert.bindText(2, record.reason);
                if (!insert.exec(&error))
                    return failWith(QStringLiteral("insert malformed record"));
            }
            sourcePending.events += batch.eventCount();
            sourcePending.malformed += batch.malformed.size();
            added.events += batch.eventCount();
            added.malformed += batch.malformed.size();
            if (batch.pollCursor) {
                store::Statement &cursor = statements.upsertPollCursor;
                cursor.bindInt(0, batch.sourceId);
                cursor.bindUtf8(1, *batch.pollCursor);
                cursor.bindInt(2, batch.recordCount());
                cursor.bindInt(3, store::nowMs());
                if (!cursor.exec(&error))
                    return failWith(QStringLiteral("update poll cursor"));
            }
            if (!batch.checkpoint)
                continue;
            const LedgerCheckpoint &checkpoint = *batch.checkpoint;
            store::Statement &ledger = statements.upsertLedger;
            ledger.bindInt(0, batch.sourceId);
            ledger.bindInt(1, checkpoint.offsetAfter);
            ledger.bindInt(2, checkpoint.lineAfter);
            ledger.bindInt(3, sourcePending.events);
            ledger.bindInt(4, sourcePending.malformed);
            ledger.bindInt(5, checkpoint.complete ? 1 : 0);
            ledger.bindInt(6, store::nowMs());
            if (!ledger.exec(&error))
                return failWith(QStringLiteral("update import ledger"));
            sourcePending = {};
            if (checkpoint.headLength >= 0) {
                store::Statement &head = statements.updateSourceHead;
                head.bindInt(0, checkpoint.headLength);
                head.bindUtf8(1, checkpoint.headHash);
                head.bindInt(2, batch.sourceId);
                if (!head.exec(&error))
                    return failWith(QStringLiteral("update source head"));
            }
            if (checkpoint.complete) {
                store::Statement &source = statements.completeSource;
                source.bindInt(0, checkpoint.offsetAfter);
                source.bindInt(1, batch.sourceId);
                if (!source.exec(&error))
                    return failWith(QStringLiteral("update source"));
            }
        }
        if (!statements.blockSummaries.write(statements.upsertBlockSummary,
                                             statements.insertBlockOverflow, &error)) {
            return failWith(QStringLiteral("update block summaries"));
        }
        return true;
    };

    // Another connection holding the write lock (a second writer, a `sqlite3` shell in a
    // transaction) is waited for only as long as the producers of these batches wait.
    QDeadlineTimer lockDeadline(QDeadlineTimer::Forever);
    for (const WriteBatch &batch : batches)
        lockDeadline = qMin(lockDeadline, batch.commitBy);
    if (!lockDeadline.isForever()) {
        sqlite3_busy_timeout(
            statements.nativeHandle,
            int(qBound(qint64(0), lockDeadline.remainingTime(), qint64(store::kBusyTimeoutMs))));
    }
    // IMMEDIATE takes the write lock up front, so the transaction cannot fail half-way on a
    // lock upgrade; readers keep reading the last committed state meanwhile (WAL).
    const bool began = store::execSql(statements.db, QStringLiteral("BEGIN IMMEDIATE"), &error);
    if (!lockDeadline.isForever())
        sqlite3_busy_timeout(statements.nativeHandle, store::kBusyTimeoutMs);
    if (!began)
        return false;
    if (!writeAll()) {
        statements.blockSummaries.clear();
        QString ignored;
        store::execSql(statements.db, QStringLiteral("ROLLBACK"), &ignored);
        return false;
    }
    if (!store::execSql(statements.db, QStringLiteral("COMMIT"), &error)) {
        QString ignored;
        store::execSql(statements.db, QStringLiteral("ROLLBACK"), &ignored);
        return false;
    }
    for (const auto &[claim, state] : claims) {
        claim->eventsStored += state.stored.events;
        claim->malformedStored += state.stored.malformed;
    }
    QMutexLocker locker(&m_mutex);
    m_written.events += added.events;
    m_written.malformed += added.malformed;
    return true;
}

} // namespace ts
