// What a producer that must answer its own clients needs from the workspace writer: each batch
// settled exactly once (committed or not) in commit order, a non-blocking submit that says when
// the queue is full, withdrawal of a batch not yet taken, a lock held by another connection
// waited for only until the batches' deadline, and (optionally) a writer that goes on after a
// failed transaction.

#include "store/workspace.h"
#include "store/workspacewriter.h"

#include <QFileInfo>
#include <QMutex>
#include <QMutexLocker>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

using namespace ts;

namespace {

// What onSettled reported, in order (it runs on the writer thread).
struct Settlements
{
    // Protects `entries`: appended by the writer thread, read by the test.
    QMutex mutex;
    QList<QPair<quint64, QString>> entries; // (sequence, error)

    WorkspaceWriter::SettledCallback callback()
    {
        return [this](const std::deque<WriteBatch> &batches, const QString &error) {
            QMutexLocker locker(&mutex);
            for (const WriteBatch &batch : batches)
                entries.append({batch.sequence, error});
        };
    }
    QList<QPair<quint64, QString>> snapshot()
    {
        QMutexLocker locker(&mutex);
        return entries;
    }
    qsizetype size() { return snapshot().size(); }
};

// Another connection's transaction: holds the workspace's write lock while it lives.
class WriteLock
{
public:
    explicit WriteLock(const QString &path)
        : m_name(QStringLiteral("tst-writer-lock-%1").arg(++s_serial))
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_name);
        db.setDatabaseName(path);
        m_held = db.open() && QSqlQuery(db).exec(QStringLiteral("BEGIN IMMEDIATE"));
    }
    ~WriteLock()
    {
        {
            QSqlDatabase db = QSqlDatabase::database(m_name, false);
            QSqlQuery(db).exec(QStringLiteral("ROLLBACK"));
            db.close();
        }
        QSqlDatabase::removeDatabase(m_name);
    }
    [[nodiscard]] bool held() const { return m_held; }

private:
    static inline int s_serial = 0;
    QString m_name;
    bool m_held = false;
};

qint64 eventRows(const QString &path)
{
    static int serial = 0;
    const QString name = QStringLiteral("tst-writer-count-%1").arg(++serial);
    qint64 rows = -1;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(path);
        if (db.open()) {
            QSqlQuery query(db);
            if (query.exec(QStringLiteral("SELECT count(*) FROM events")) && query.next())
                rows = query.value(0).toLongLong();
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
    return rows;
}

WriteBatch batchOf(int events, int deadlineMs = -1)
{
    WriteBatch batch;
    for (int i = 0; i < events; ++i) {
        RequestEvent event;
        event.tsMs = 1000 + i;
        event.identity = QStringLiteral("w-%1").arg(i);
        batch.events.append(event);
    }
    if (deadlineMs >= 0)
        batch.commitBy = QDeadlineTimer(deadlineMs);
    return batch;
}

} // namespace

class TestWorkspaceWriter : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    int m_serial = 0;

    QString freshPath() { return m_dir.filePath(QStringLiteral("w%1.tsws").arg(++m_serial)); }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void settlesEveryBatchInOrder()
    {
        const QString path = freshPath();
        Settlements settled;
        WorkspaceWriter writer;
        WorkspaceWriter::Options options;
        options.onSettled = settled.callback();
        QVERIFY(writer.start(path, options));
        QList<quint64> sequences;
        for (int b = 0; b < 20; ++b) {
            quint64 sequence = 0;
            QCOMPARE(writer.trySubmit(batchOf(10), &sequence),
                     WorkspaceWriter::SubmitStatus::Queued);
            sequences.append(sequence);
        }
        QVERIFY(writer.submit(batchOf(5))); // the blocking submit numbers batches too
        QVERIFY(writer.flush());
        // Reported before flush() returns.
        const auto entries = settled.snapshot();
        QCOMPARE(entries.size(), 21);
        for (qsizetype i = 0; i < entries.size(); ++i) {
            QCOMPARE(entries.at(i).first, quint64(i + 1));
            QVERIFY(entries.at(i).second.isEmpty());
        }
        QCOMPARE(sequences.constFirst(), quint64(1));
        QVERIFY(writer.finish());
        QCOMPARE(eventRows(path), 205);
        quint64 ignored = 0;
        QCOMPARE(writer.trySubmit(batchOf(1), &ignored), WorkspaceWriter::SubmitStatus::Stopped);
    }

    // Another connection holds the write lock: the batch fails at its deadline (instead of
    // waiting 30 s and then failing the whole writer), a batch queued behind it can be
    // withdrawn, and once the lock is free the writer goes on.
    void heldLockFailsAtTheDeadlineAndWriterGoesOn()
    {
        const QString path = freshPath();
        Settlements settled;
        WorkspaceWriter writer;
        WorkspaceWriter::Options options;
        options.continueAfterFailedTransaction = true;
        options.maxQueuedRecords = 20;
        options.onSettled = settled.callback();
        QVERIFY(writer.start(path, options));
        {
            WriteLock lock(path);
            QVERIFY(lock.held());
            quint64 blocked = 0;
            quint64 queued = 0;
            quint64 ignored = 0;
            QCOMPARE(writer.trySubmit(batchOf(10, 1500), &blocked),
                     WorkspaceWriter::SubmitStatus::Queued);
            // A batch as large as the whole queue fits only once the writer has taken the
            // first one (and waits for the lock with it).
            QVERIFY(QTest::qWaitFor(
                [&] {
                    return writer.trySubmit(batchOf(20, 1500), &queued) ==
                           WorkspaceWriter::SubmitStatus::Queued;
                },
                5000));
            QCOMPARE(writer.trySubmit(batchOf(1, 1500), &ignored),
                     WorkspaceWriter::SubmitStatus::QueueFull);
            QVERIFY(writer.cancel(queued));
            QVERIFY(!writer.cancel(queued));
            QTRY_COMPARE_WITH_TIMEOUT(settled.size(), 1, 5000);
            const auto entries = settled.snapshot();
            QCOMPARE(entries.at(0).first, blocked);
            QVERIFY2(entries.at(0).second.contains(u"locked"), qPrintable(entries.at(0).second));
            QVERIFY(!writer.cancel(blocked)); // settled already
            QVERIFY(writer.isRunning());
        }
        quint64 after = 0;
        QCOMPARE(writer.trySubmit(batchOf(7, 5000), &after), WorkspaceWriter::SubmitStatus::Queued);
        QVERIFY(writer.flush());
        const auto entries = settled.snapshot();
        QCOMPARE(entries.size(), 2); // the withdrawn batch is never reported
        QCOMPARE(entries.at(1).first, after);
        QVERIFY(entries.at(1).second.isEmpty());
        QVERIFY(writer.finish());
        QCOMPARE(eventRows(path), 7); // neither the failed nor the withdrawn batch
    }

    // Without continueAfterFailedTransaction a failure stops the writer (an import resumes
    // from its ledger), and every batch it will not write is reported.
    void failureStopsTheWriterByDefault()
    {
        const QString path = freshPath();
        Settlements settled;
        WorkspaceWriter writer;
        WorkspaceWriter::Options options;
        options.onSettled = settled.callback();
        QVERIFY(writer.start(path, options));
        WriteLock lock(path);
        QVERIFY(lock.held());
        quint64 first = 0;
        quint64 second = 0;
        QCOMPARE(writer.trySubmit(batchOf(3, 200), &first), WorkspaceWriter::SubmitStatus::Queued);
        QTest::qWait(50);
        QCOMPARE(writer.trySubmit(batchOf(3), &second), WorkspaceWriter::SubmitStatus::Queued);
        QTRY_COMPARE_WITH_TIMEOUT(settled.size(), 2, 5000);
        for (const auto &entry : settled.snapshot())
            QVERIFY(!entry.second.isEmpty());
        QVERIFY(!writer.flush());
        quint64 ignored = 0;
        QCOMPARE(writer.trySubmit(batchOf(1), &ignored), WorkspaceWriter::SubmitStatus::Stopped);
        QVERIFY(!writer.finish());
    }

    // A throwaway workspace (the dashboard's scratch file) is not checkpointed after each
    // transaction: its commits stay in the WAL, where readers see them all the same, and the
    // database file does not grow while the writer runs. Shared event vectors are written
    // after the batch's own events.
    void throwawayKeepsCommitsInTheWal()
    {
        const QString path = freshPath();
        WorkspaceWriter writer;
        WorkspaceWriter::Options options;
        options.throwaway = true;
        QVERIFY(writer.start(path, options));
        const qint64 sizeAtStart = QFileInfo(path).size();
        for (int b = 0; b < 20; ++b) {
            WriteBatch batch = batchOf(100);
            std::vector<RequestEvent> shared(batch.events.cbegin(), batch.events.cend());
            for (RequestEvent &event : shared)
                event.secretsMasked = true;
            batch.sharedEvents.push_back(
                std::make_shared<const std::vector<RequestEvent>>(std::move(shared)));
            QVERIFY(writer.submit(std::move(batch)));
            QVERIFY(writer.flush());
        }
        QCOMPARE(eventRows(path), 4000);
        QCOMPARE(writer.eventsWritten(), 4000);
        QTest::qWait(100); // a checkpointer, were there one, would have run by now
        QCOMPARE(QFileInfo(path).size(), sizeAtStart);
        QVERIFY(QFileInfo(path + QStringLiteral("-wal")).size() > 0);
        QVERIFY(writer.finish());
        QCOMPARE(eventRows(path), 4000);
    }
};

QTEST_GUILESS_MAIN(TestWorkspaceWriter)
#include "tst_workspacewriter.moc"
