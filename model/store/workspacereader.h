#pragma once
// Queries over a workspace for views, replay and reports. Owns its own connection, usable only
// from the thread that created the reader (a QtSql rule); create one per thread. Reads run
// concurrently with the writer (WAL): they see the last committed transaction.
//
// Filters and keyset pages never use OFFSET scans: time ranges use the ts_ms index; identity,
// status, error code, lane and source use the block summaries the writer keeps (storesql.h), so
// a filtered count reads a few summary rows per 8192 events and a page scans only blocks that
// contain the value. A virtual table view over a million rows stays responsive.

#include "core/requestevent.h"
#include "store/workspace.h"

#include <QHash>
#include <QList>
#include <QSqlDatabase>
#include <QString>

#include <functional>
#include <memory>
#include <optional>

namespace ts {

struct BlockPlan; // workspacereader.cpp
namespace store {
class Statement; // storesql.h
}

struct EventFilter
{
    QString identity;             // exact
    QString identityPart;         // a case-insensitive part of the identity (no summary, no index)
    std::optional<int> status;    // exact HTTP status (0 = no response)
    QString errorCode;            // exact
    QString lane;                 // exact
    QString text;                 // case-insensitive substring of url, errorCode or identity
    std::optional<qint64> fromMs; // ts_ms >= fromMs
    std::optional<qint64> toMs;   // ts_ms < toMs
    qint64 sourceId = 0;          // 0 = every source
    QList<qint64> sourceIds;      // any of these (with sourceId: both hold); empty = every source

    [[nodiscard]] bool isEmpty() const
    {
        return identity.isEmpty() && identityPart.isEmpty() && !status && errorCode.isEmpty() &&
               lane.isEmpty() &&
               text.isEmpty() && !fromMs && !toMs && sourceId == 0 && sourceIds.isEmpty();
    }
};

// An event as stored: its row id (the keyset for paging) and source row.
struct StoredEvent
{
    qint64 rowId = 0;
    qint64 sourceId = 0;
    RequestEvent event; // provenance filled: source (path), line, offset
};

struct StoredMalformed
{
    qint64 rowId = 0;
    qint64 sourceId = 0;
    MalformedRecord record; // record.source is the source path
};

class WorkspaceReader
{
public:
    WorkspaceReader();
    ~WorkspaceReader();
    WorkspaceReader(const WorkspaceReader &) = delete;
    WorkspaceReader &operator=(const WorkspaceReader &) = delete;

    // Opens an existing workspace (never creates one). False and errorString() when the file
    // is missing, not a workspace, or of another schema version.
    bool open(const QString &path);
    void close();
    [[nodiscard]] bool isOpen() const;
    [[nodiscard]] QString errorString() const { return m_error; }
    // Opened read-only: the workspace is on a read-only file system (nothing can be written
    // to it: settings edits fail).
    [[nodiscard]] bool isReadOnly() const { return m_readOnly; }

    // -1 on error.
    qint64 countEvents(const EventFilter &filter = {});
    // Events with rowId > afterRowId matching filter, in row order, at most limit of them.
    QList<StoredEvent> fetchPage(const EventFilter &filter, qint64 afterRowId, int limit);
    std::optional<StoredEvent> eventByRowId(qint64 rowId);
    // Every matching event ordered by (ts_ms, rowid), handed over in chunks of chunkSize; the
    // callback returns false to stop. For replay into the engine and `report --workspace`.
    // upToRowId > 0: only rows up to it (a replay that a follower continues after it).
    bool
    forEachEventInTimeOrder(int chunkSize,
                            const std::function<bool(const QList<RequestEvent> &chunk)> &callback,
                            const EventFilter &filter = {}, qint64 upToRowId = 0);
    // The same read as forEachEventInTimeOrder, pulled a chunk at a time: for merging several
    // stores by time (AnalysisSession's replay after a policy change). Lives no longer than
    // the reader that made it, and on its thread.
    class TimeOrderedCursor
    {
    public:
        ~TimeOrderedCursor();
        TimeOrderedCursor(const TimeOrderedCursor &) = delete;
        TimeOrderedCursor &operator=(const TimeOrderedCursor &) = delete;
        // Appends up to max of the next events to *chunk; false once there are none left
        // (failed() tells an error from the end).
        bool next(int max, QList<RequestEvent> *chunk);
        [[nodiscard]] bool failed() const { return !m_error.isEmpty(); }
        [[nodiscard]] QString errorString() const { return m_error; }

    private:
        friend class WorkspaceReader;
        explicit TimeOrderedCursor(WorkspaceReader &reader);
        WorkspaceReader &m_reader;
        std::unique_ptr<store::Statement> m_query;
        QString m_error;
        bool m_done = false;
    };
    // Null (and errorString()) when the query cannot be prepared.
    std::unique_ptr<TimeOrderedCursor> timeOrdered(const EventFilter &filter = {},
                                                   qint64 upToRowId = 0);
    // The newest event's row id, 0 when there is none (-1 on error).
    qint64 lastEventRowId();
    // SQLite's PRAGMA data_version on this connection: it changes when another connection
    // commits (-1 on error). One cheap statement, for polling a workspace another process
    // writes.
    qint64 dataVersion();
    // Earliest and latest ts_ms, nullopt when there are no events.
    std::optional<std::pair<qint64, qint64>> timeRange();

    QList<SourceRecord> sources();
    qint64 countMalformed(qint64 sourceId = 0);
    QList<StoredMalformed> malformed(qint64 sourceId = 0, qint64 afterRowId = 0, int limit = 1000);
    QList<LedgerEntry> ledger();

    std::optional<QString> setting(const QString &key);
    // The one write a reader does: small, remembered UI choices (CSV column mappings, tail
    // offsets). Waits for the writer's current transaction if there is one.
    bool setSetting(const QString &key, const QString &value);

private:
    // Candidate blocks of a filter's summarized terms (nullopt: it has none, or *error).
    std::optional<BlockPlan> planBlocks(const EventFilter &filter, QString *error);
    QString sourcePath(qint64 sourceId);
    bool fail(const QString &what, const QString &detail);

    QString m_path;
    QString m_connectionName;
    QSqlDatabase m_db;
    QString m_error;
    bool m_readOnly = false;
    QHash<qint64, QString> m_sourcePaths; // source id -> path, filled on demand
};

} // namespace ts
