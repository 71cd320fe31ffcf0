#pragma once
// Internal to model/store: connection set-up, the schema and its migrations, and the mapping
// between RequestEvent and the columns of the events table. Shared by Workspace,
// WorkspaceWriter and WorkspaceReader so that the three never disagree about a column.

#include "core/requestevent.h"

#include <QByteArray>
#include <QList>
#include <QSqlDatabase>
#include <QString>
#include <QStringConverter>
#include <QStringList>

#include <unordered_map>
#include <unordered_set>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;
class QSqlQuery;

namespace ts {
struct SourceRecord;
}

namespace ts::store {

enum class ConnectionRole {
    Control, // Workspace: creates and migrates the schema, small writes
    Writer,  // WorkspaceWriter: bulk inserts; tuned for throughput
    Reader,  // WorkspaceReader: queries (plus settings writes)
};

// A connection name no other QSqlDatabase in the process uses ("ts-workspace-writer-7").
QString uniqueConnectionName(QStringView role);

// Adds and opens a QSQLITE connection on the calling thread, applies the per-connection
// pragmas for its role and, for Control and Writer, creates or migrates the schema.
// On failure the connection is removed again and *error says why.
// A Reader of a workspace on a read-only file system (a backup mounted read-only, a share) is
// opened read-only, as the committed file it is; *readOnly then says so.
bool openConnection(QSqlDatabase &db, const QString &connectionName, const QString &path,
                    ConnectionRole role, QString *error, bool *readOnly = nullptr);
// Closes and removes a connection opened by openConnection(); db is reset.
void closeConnection(QSqlDatabase &db, const QString &connectionName);

// Runs a statement that returns nothing; false and *error on failure.
bool execSql(QSqlDatabase &db, const QString &sql, QString *error);
// Integer result of a one-value query ("PRAGMA user_version"); fallback on failure.
qint64 queryInt(QSqlDatabase &db, const QString &sql, qint64 fallback = -1);

// The query indexes (CREATE INDEX IF NOT EXISTS ...).
QStringList queryIndexStatements();

// The columns of the sources table a SourceRecord holds ("id,path,..."), and the record read
// from a query that selected them first, in that order.
QString sourceColumns();
SourceRecord sourceFromQuery(const QSqlQuery &query);

// Block summaries: how the reader finds rows by identity, status, error code, lane or source
// without a secondary index per column. Rows are grouped into blocks of consecutive row ids
// (block = (id - 1) >> kEventBlockShift); event_blocks holds, per column and block, each value
// present and how many rows carry it. An equality filter reads the summaries (a few rows per
// block) to count exactly, and scans only the blocks that contain the value to page. Logs
// repeat a small set of identities, statuses and lanes, so a block holds few distinct values;
// when one holds more than kMaxBlockValues in a column, the block is listed in
// event_block_overflow for that column instead and readers scan it.
// The writer maintains them in the transaction that inserts the rows, so they always describe
// exactly the committed rows.
enum class BlockField : int { Identity = 0, Status = 1, ErrorCode = 2, Lane = 3, Source = 4 };
inline constexpr int kEventBlockShift = 13; // 8192 rows per block
inline constexpr int kMaxBlockValues = 512;
inline qint64 eventBlockOf(qint64 rowId)
{
    return (rowId - 1) >> kEventBlockShift;
}
inline qint64 eventBlockFirstRow(qint64 block)
{
    return (block << kEventBlockShift) + 1;
}
inline qint64 eventBlockLastRow(qint64 block)
{
    return (block + 1) << kEventBlockShift;
}
// Statements that rebuild the summaries from the events table: of every row when `rowCondition`
// is empty (the migration), else of the rows matching it ("id BETWEEN 1 AND 8192"; the caller
// deleted the summaries of those blocks first).
QStringList blockSummaryRebuildStatements(const QString &rowCondition);

class Statement;

// Collects the summaries of the rows one writer transaction inserts, then adds them to the
// stored ones. Strings read from a log are interned by the readers, so rows with the same value
// usually share its storage: recent values of each column are remembered by address (a small
// direct-mapped cache) and counted without hashing the text.
class BlockSummaryBuilder
{
public:
    void add(qint64 rowId, const RequestEvent &event, qint64 sourceId);
    // upsert: INSERT INTO event_blocks(field, value, block, events) VALUES(?,?,?,?) ON
    // CONFLICT DO UPDATE SET events = events + excluded.events; overflow: INSERT OR IGNORE
    // INTO event_block_overflow(field, block) VALUES(?,?). Clears the builder.
    bool write(Statement &upsert, Statement &overflow, QString *error);
    void clear();

private:
    struct Key
    {
        qint64 block = 0;
        qint64 number = 0; // status or source id
        QString text;      // identity, error code or lane
        int field = 0;
        bool operator==(const Key &other) const
        {
            return block == other.block && field == other.field && number == other.number &&
                   text == other.text;
        }
    };
    struct KeyHash
    {
        size_t operator()(const Key &key) const
        {
            return qHashMulti(0, key.block, key.field, key.number, key.text);
        }
    };
    struct RecentValue
    {
        const QChar *data = nullptr; // address of the last text value (nullptr: none)
        qsizetype size = -1;
        qint64 number = 0;
        qint64 block = -1;
        qint64 *count = nullptr; // its counter in m_counts
    };
    void count(int field, qint64 block, QStringView text, const QString *owner, qint64 number);

    std::unordered_map<Key, qint64, KeyHash> m_counts; // node-based: counters keep addresses
    std::unordered_map<qint64, int> m_distinct;        // (block << 3 | field) -> values seen
    std::unordered_set<qint64> m_overflowed;           // (block << 3 | field)
    static constexpr int kRecentSlots = 256;
    // Per field, indexed by text address or number; valid until clear() (the events the
    // addresses belong to live until the transaction's summaries are written).
    std::vector<RecentValue> m_recent = std::vector<RecentValue>(5 * kRecentSlots);
};

// events columns, in binding order (without the rowid "id").
inline constexpr int kEventColumnCount = 33;
QString eventColumnList(); // "type,ts_ms,identity,..."
// A set of events columns: bit i = column i of eventColumnList().
using EventColumns = quint64;
inline constexpr EventColumns kAllEventColumns = (EventColumns(1) << kEventColumnCount) - 1;
// The columns `event` stores a value in (not NULL, see bindEvent()); type and ts_ms always.
EventColumns eventValueColumns(const RequestEvent &event, qint64 sourceId);
// "INSERT INTO events(...) VALUES(?,?,...)", with `rows` rows of values for `columns` only; the
// others are left to their default, NULL. Many columns are NULL in every row of a log (a
// Graph log has no Service Bus entity, a Fabric one no lane): naming only those with a value
// saves SQLite copying and checking a NULL per column and row, about a third of the opcodes
// of an insert.
QString eventInsertSql(int rows = 1, EventColumns columns = kAllEventColumns);

// Page size of a workspace created by openConnection() (existing ones keep theirs).
inline constexpr int kNewWorkspacePageSize = 16384;

// How long a connection waits for another connection's lock before SQLITE_BUSY. Waiting on a
// lock held by the writer's current transaction is normal (it is short).
inline constexpr int kBusyTimeoutMs = 30000;

// The SQLite handle under a QSQLITE connection. The event insert and the event reads use it
// directly: QSqlResult::bindValue() formats a placeholder name (QString::arg) and hashes it for
// every value, and every value travels in a QVariant, which made a 32-column insert cost ~30 us
// (15x SQLite's own work). Debian's QSQLITE plugin links the system libsqlite3, the same library
// this code links, so the handle is usable here. Only on the connection's own thread.
sqlite3 *nativeHandle(const QSqlDatabase &db);

// A prepared statement on the native handle. Text is bound as UTF-16 straight from QString.
class Statement
{
public:
    Statement() = default;
    ~Statement();
    Statement(const Statement &) = delete;
    Statement &operator=(const Statement &) = delete;

    bool prepare(sqlite3 *db, const QString &sql, QString *error);
    void finalize();
    [[nodiscard]] bool isPrepared() const { return m_stmt != nullptr; }

    // Indexes are 0-based. bindText keeps a pointer to value's characters until the next
    // reset (the caller keeps value alive); bindTransientText copies.
    void bindNull(int index);
    void bindInt(int index, qint64 value);
    void bindDouble(int index, double value);
    void bindText(int index, const QString &value);
    void bindTransientText(int index, const QString &value);
    void bindTextOrNull(int index, const QString &value);
    // UTF-8 binding for the hot insert: text is encoded into scratch blocks owned by the
    // statement (SIMD encoder, no allocation once the blocks exist) instead of letting SQLite
    // translate UTF-16 with a malloc per value. The bytes stay valid until the next
    // beginRows(), which the caller calls before binding the rows of one execution.
    void beginRows();
    void bindUtf8OrNull(int index, QStringView value);
    void bindUtf8(int index, const QByteArray &utf8); // utf8 must outlive the step
    // For the low-cardinality text columns (identity, service, method, lane, ...): readers
    // intern these, so rows repeat a few strings that share their characters. Their UTF-8 is
    // kept in a small cache keyed by the characters' address (encoded once per value, not once
    // per row), and a parameter already bound to the same cached value is not bound again (the
    // binding survives sqlite3_reset()). Same stored bytes as bindUtf8OrNull(). Only between
    // beginRows() calls, like bindUtf8OrNull().
    void bindSharedUtf8OrNull(int index, const QString &value);
    void bindIntOrNull(int index, qint64 value, bool isNull);
    void bindDoubleOrNull(int index, double value, bool isNull);

    // Runs a statement that returns no rows, then resets it for the next bindings.
    bool exec(QString *error);
    // Row by row: true while a row is available; *error set on failure (false then too).
    bool next(QString *error);
    void reset();

    [[nodiscard]] bool isNull(int column) const;
    [[nodiscard]] qint64 intAt(int column) const;
    [[nodiscard]] double doubleAt(int column) const;
    [[nodiscard]] QString textAt(int column) const;
    // For low-cardinality columns (identity, service, method, lane, ...): equal values come
    // back as one shared QString from a small per-column cache, so reading a million events
    // does not allocate a million copies of "GET".
    [[nodiscard]] QString internedTextAt(int column);
    [[nodiscard]] QByteArray utf8At(int column) const;

    // `headers` as the JSON object appendHeadersJson() writes (the same bytes), encoded
    // straight into the scratch blocks without a UTF-16 JSON text in between; NULL for no
    // headers. Valid until the next beginRows(), like bindUtf8OrNull().
    void bindHeadersJsonOrNull(int index, const HttpHeaders &headers);

private:
    sqlite3_stmt *m_stmt = nullptr;
    sqlite3 *m_db = nullptr;
    void markBound(int index)
    {
        if (size_t(index) < m_bound.size())
            m_bound[size_t(index)].kind = BoundKind::Other;
    }
    // What each parameter (0-based) is bound to now. Bindings survive sqlite3_reset(), and an
    // event column is often NULL, or the same number or shared string, row after row: such a
    // parameter is not bound again (a bind call takes the connection's mutex, releases the old
    // value and sets the new one: 100-180 instructions). Other: text bound from a buffer that
    // is reused, always re-bound.
    enum class BoundKind : quint8 { Null, Int, Double, Shared, Other };
    struct BoundParameter
    {
        BoundKind kind = BoundKind::Null;
        qint64 value = 0; // Int: the value; Double: its bits; Shared: the cache entry's id
    };
    std::vector<BoundParameter> m_bound;
    // bindSharedUtf8OrNull(): direct-mapped by the address of the characters. A slot holds
    // (shares) its string, so its characters stay alive and unchanged while the slot exists
    // and no other text can be found at that address (the readers' interned strings are
    // refcounted or never freed, see core/immortaltext.h). id: unique per slot filling, so a
    // parameter bound to an evicted value never matches a new one.
    struct SharedText
    {
        QString text;
        QByteArray utf8;
        qint64 id = 0;
    };
    static constexpr int kSharedTextSlotBits = 10;
    std::vector<SharedText> m_sharedText;
    qint64 m_lastSharedId = 0;
    // UTF-8 of evicted slots: a parameter of the execution being bound may still point into
    // it (SQLITE_STATIC), so it is freed at the next beginRows() only.
    std::vector<QByteArray> m_retiredUtf8;
    // `needed` bytes in the scratch blocks; bindReservedUtf8() binds the part used.
    char *reserveUtf8(qsizetype needed);
    void bindReservedUtf8(int index, const char *start, const char *end);
    char *appendJsonUtf8(char *out, QStringView value);
    // bindUtf8OrNull(): blocks of encoded text; a block is never resized while its bytes are
    // bound, a value that does not fit goes to the next block.
    std::vector<QByteArray> m_utf8Blocks;
    size_t m_utf8Block = 0;   // block being filled
    qsizetype m_utf8Used = 0; // bytes used in it
    // internedTextAt(): per column, a direct-mapped cache of (UTF-8 bytes, string).
    struct InternSlot
    {
        QByteArray bytes;
        QString text;
    };
    static constexpr int kInternSlots = 64;
    QList<QList<InternSlot>> m_interned; // indexed by column
    QStringEncoder m_encoder{QStringEncoder::Utf8, QStringConverter::Flag::Stateless};
};

// Binds the `columns` of `event` positionally (firstParameter.. firstParameter +
// popcount(columns) - 1, in column order) on a prepared eventInsertSql(rows, columns); columns
// must include eventValueColumns(event, sourceId). Empty strings and "unknown" numbers
// (-1) are stored as NULL: smaller file, same meaning. `event` must stay alive until the
// statement has run; call statement.beginRows() before the first row of an execution. False if
// `event` has a value in a column that `columns` leaves out (nothing bound for it).
[[nodiscard]] bool bindEvent(Statement &statement, const RequestEvent &event, qint64 sourceId,
                             int firstParameter = 0, EventColumns columns = kAllEventColumns);
// Reads the columns of eventColumnList() starting at `firstColumn` into `event` (without the
// source path, which the caller maps from source_id). Returns source_id.
qint64 readEvent(Statement &statement, int firstColumn, RequestEvent &event);

// Headers as a JSON object text ({"retry-after":"5"}); empty headers -> empty string.
QString headersToJson(const HttpHeaders &headers);
// The same, appended to `out` (nothing for empty headers).
void appendHeadersJson(QString &out, const HttpHeaders &headers);
HttpHeaders headersFromJson(const QString &json);

qint64 nowMs();

} // namespace ts::store
