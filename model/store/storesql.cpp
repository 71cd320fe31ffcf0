#include "storesql.h"

#include "workspace.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlDriver>
#include <QSqlError>
#include <QSqlQuery>
#include <QThread>
#include <QUrl>
#include <QVariant>

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>

namespace ts::store {

namespace {

constexpr qint64 kApplicationId = kWorkspaceApplicationId;

// One entry per schema version: the statements that take a workspace from version N-1 to N.
// Never edit a released step; append a new one and bump kWorkspaceSchemaVersion.
QStringList migrationStatements(int toVersion)
{
    switch (toVersion) {
    case 1:
        return {
            QStringLiteral("CREATE TABLE sources ("
                           " id INTEGER PRIMARY KEY,"
                           " path TEXT NOT NULL,"
                           " format TEXT NOT NULL,"
                           " size INTEGER NOT NULL DEFAULT -1,"
                           " mtime_ms INTEGER NOT NULL DEFAULT -1,"
                           " head_length INTEGER NOT NULL DEFAULT 0,"
                           " fingerprint TEXT NOT NULL,"
                           " added_ms INTEGER NOT NULL)"),
            QStringLiteral("CREATE INDEX idx_sources_path ON sources(path)"),
            // type: 0 request, 1 breaker, 2 annotation (EventType). NULL = empty / unknown.
            QStringLiteral("CREATE TABLE events ("
                           " id INTEGER PRIMARY KEY,"
                           " type INTEGER NOT NULL,"
                           " ts_ms INTEGER NOT NULL,"
                           " identity TEXT, app TEXT, tenant TEXT, service TEXT, category TEXT,"
                           " method TEXT, url TEXT, status INTEGER, error_code TEXT,"
                           " retry_after TEXT, headers TEXT, body TEXT, duration_ms REAL,"
                           " request_id TEXT, batch_id TEXT, batch_index INTEGER,"
                           " batch_envelope INTEGER, attempt INTEGER, operation_id TEXT,"
                           " lane TEXT, credits REAL, sb_namespace TEXT, entity TEXT,"
                           " breaker_scope TEXT, breaker_state TEXT, text TEXT, extra_json TEXT,"
                           " source_id INTEGER, line INTEGER, byte_offset INTEGER)"),
            QStringLiteral("CREATE TABLE malformed ("
                           " id INTEGER PRIMARY KEY,"
                           " source_id INTEGER,"
                           " line INTEGER NOT NULL,"
                           " reason TEXT NOT NULL)"),
            QStringLiteral("CREATE TABLE import_ledger ("
                           " source_id INTEGER PRIMARY KEY,"
                           " committed_offset INTEGER NOT NULL,"
                           " committed_line INTEGER NOT NULL,"
                           " events INTEGER NOT NULL DEFAULT 0,"
                           " malformed INTEGER NOT NULL DEFAULT 0,"
                           " complete INTEGER NOT NULL DEFAULT 0,"
                           " updated_ms INTEGER NOT NULL)"),
            QStringLiteral("CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT)"),
        };
    case 2: {
        // Per-row secondary indexes on identity, status and lane cost more than the inserts
        // themselves (a b-tree descent per row and index, or a 3-4 s sort after a million-row
        // import, with sort memory growing with the file): they give way to block summaries
        // (BlockField in storesql.h). Indexes stay where they are cheap, because every row
        // appends to them or few rows enter them: time (rows arrive roughly in time order;
        // replay needs it), and the failed requests and error codes a combined filter most
        // often narrows to (partial indexes, a few percent of the rows).
        QStringList statements = {
            QStringLiteral("DROP INDEX IF EXISTS idx_events_identity"),
            QStringLiteral("DROP INDEX IF EXISTS idx_events_status"),
            QStringLiteral("DROP INDEX IF EXISTS idx_events_lane"),
            QStringLiteral("CREATE INDEX IF NOT EXISTS idx_events_ts ON events(ts_ms)"),
            QStringLiteral("CREATE INDEX IF NOT EXISTS idx_events_error ON events(error_code)"
                           " WHERE error_code IS NOT NULL"),
            QStringLiteral("CREATE INDEX IF NOT EXISTS idx_events_failed ON events(status)"
                           " WHERE status >= 400"),
            // value keeps its type (no affinity): text for identity / error code / lane,
            // integer for status and source id.
            QStringLiteral("CREATE TABLE event_blocks ("
                           " field INTEGER NOT NULL,"
                           " value NOT NULL,"
                           " block INTEGER NOT NULL,"
                           " events INTEGER NOT NULL,"
                           " PRIMARY KEY(field, value, block)) WITHOUT ROWID"),
            QStringLiteral("CREATE TABLE event_block_overflow ("
                           " field INTEGER NOT NULL,"
                           " block INTEGER NOT NULL,"
                           " PRIMARY KEY(field, block)) WITHOUT ROWID"),
        };
        // Summaries of the rows a version 1 workspace already holds.
        statements << blockSummaryRebuildStatements(QString());
        return statements;
    }
    case 3:
        return {
            // Sources are recognised by content, whatever their name: head_hash is the hex
            // SHA-1 of the first head_length bytes, for imported files and tailed files alike
            // (fingerprint stays the identity a live source is looked up by, "tail:DEV:INODE").
            // A file import's fingerprint already was that hash: it carries over.
            QStringLiteral("ALTER TABLE sources ADD COLUMN head_hash TEXT"),
            QStringLiteral("UPDATE sources SET head_hash = fingerprint WHERE length(fingerprint)"
                           " = 40 AND fingerprint NOT GLOB '*[^0-9a-f]*'"),
            // The file's size when an import of it last started (what "complete" would be).
            QStringLiteral("ALTER TABLE sources ADD COLUMN seen_size INTEGER NOT NULL DEFAULT -1"),
            // The import run that holds the source: a run writes only while it is the owner,
            // checked in the transaction that writes, so two imports of one file never both
            // store it (see WorkspaceWriter / importFile).
            QStringLiteral("ALTER TABLE import_ledger ADD COLUMN owner TEXT"),
        };
    case 4:
        return {
            // Polled stores (model/poll): where each one's incremental read stands. `state` is
            // the cursor (PollCursor::save(): the newest key read and the rows of the overlap
            // window already stored), written by the workspace writer in the same transaction
            // as the rows it covers, so a restart resumes exactly where the rows end.
            QStringLiteral("CREATE TABLE poll_cursors ("
                           " source_id INTEGER PRIMARY KEY,"
                           " state TEXT NOT NULL,"
                           " rows INTEGER NOT NULL DEFAULT 0,"
                           " updated_ms INTEGER NOT NULL)"),
        };
    case 5:
        return {
            // Push-down (model/poll/pushdown.h): one row stands for `weight` identical requests
            // (RequestEvent::weight). NULL is one, so the rows already stored keep their
            // meaning and an ordinary row costs no byte more.
            QStringLiteral("ALTER TABLE events ADD COLUMN weight INTEGER"),
        };
    default:
        return {};
    }
}

// Whether the file open on `db` is a workspace this build can open, or a new, empty file that
// may become one; reads the header and sqlite_master, changes nothing. Used before the first
// statement that would write (and again inside the migration's transaction, against a race).
bool checkWorkspaceIdentity(QSqlDatabase &db, QString *error)
{
    auto refuse = [&](const QString &message) {
        if (error)
            *error = message;
        return false;
    };
    QSqlQuery query(db);
    if (!query.exec(QStringLiteral("SELECT (SELECT user_version FROM pragma_user_version),"
                                   " (SELECT application_id FROM pragma_application_id),"
                                   " (SELECT count(*) FROM sqlite_master)")) ||
        !query.next()) {
        // Not SQLite at all ("file is not a database"), or unreadable.
        return refuse(query.lastError().text());
    }
    const qint64 version = query.value(0).toLongLong();
    const qint64 applicationId = query.value(1).toLongLong();
    const qint64 tables = query.value(2).toLongLong();
    if (version > kWorkspaceSchemaVersion && applicationId == kApplicationId) {
        return refuse(QStringLiteral("workspace schema version %1 is newer than this "
                                     "Throttlescope supports (%2)")
                          .arg(version)
                          .arg(kWorkspaceSchemaVersion));
    }
    const bool empty = version == 0 && tables == 0;
    if (!empty && applicationId != kApplicationId)
        return refuse(QStringLiteral("not a Throttlescope workspace"));
    return true;
}

bool migrate(QSqlDatabase &db, QString *error)
{
    // IMMEDIATE: two processes opening a new workspace at once must not both create tables.
    if (!execSql(db, QStringLiteral("BEGIN IMMEDIATE"), error))
        return false;
    auto rollbackWith = [&](const QString &message) {
        QString ignored;
        execSql(db, QStringLiteral("ROLLBACK"), &ignored);
        if (error && !message.isEmpty())
            *error = message;
        return false;
    };

    QString refusal;
    if (!checkWorkspaceIdentity(db, &refusal))
        return rollbackWith(refusal);
    const qint64 version = queryInt(db, QStringLiteral("PRAGMA user_version"), 0);
    if (version == kWorkspaceSchemaVersion)
        return execSql(db, QStringLiteral("COMMIT"), error) || rollbackWith({});

    for (int step = int(version) + 1; step <= kWorkspaceSchemaVersion; ++step) {
        const QStringList statements = migrationStatements(step);
        for (const QString &sql : statements) {
            QString stepError;
            if (!execSql(db, sql, &stepError))
                return rollbackWith(QStringLiteral("schema migration to version %1 failed: %2")
                                        .arg(step)
                                        .arg(stepError));
        }
    }
    if (!execSql(db, QStringLiteral("PRAGMA application_id = %1").arg(kApplicationId), error) ||
        !execSql(db, QStringLiteral("PRAGMA user_version = %1").arg(kWorkspaceSchemaVersion),
                 error) ||
        !execSql(db, QStringLiteral("COMMIT"), error)) {
        return rollbackWith({});
    }
    return true;
}

void appendJsonString(QString &out, const QString &value)
{
    out += u'"';
    // Runs of characters that need no escape are appended at once.
    const QChar *begin = value.constData();
    const QChar *end = begin + value.size();
    const QChar *run = begin;
    for (const QChar *p = begin; p != end; ++p) {
        const char16_t c = p->unicode();
        if (c >= 0x20 && c != u'"' && c != u'\\')
            continue;
        out.append(run, p - run);
        run = p + 1;
        switch (c) {
        case '"':
            out += u"\\\"";
            break;
        case '\\':
            out += u"\\\\";
            break;
        case '\n':
            out += u"\\n";
            break;
        case '\r':
            out += u"\\r";
            break;
        case '\t':
            out += u"\\t";
            break;
        default:
            out += u"\\u00";
            out += QChar(u"0123456789abcdef"[c >> 4]);
            out += QChar(u"0123456789abcdef"[c & 0xf]);
        }
    }
    out.append(run, end - run);
    out += u'"';
}

// Reads a JSON string starting at text[pos] == '"'; pos ends past the closing quote.
bool parseJsonString(QStringView text, qsizetype &pos, QString &out)
{
    if (pos >= text.size() || text[pos] != u'"')
        return false;
    ++pos;
    out.clear();
    while (pos < text.size()) {
        const QChar c = text[pos++];
        if (c == u'"')
            return true;
        if (c != u'\\') {
            out += c;
            continue;
        }
        if (pos >= text.size())
            return false;
        const QChar escaped = text[pos++];
        switch (escaped.unicode()) {
        case 'n':
            out += u'\n';
            break;
        case 'r':
            out += u'\r';
            break;
        case 't':
            out += u'\t';
            break;
        case 'b':
            out += u'\b';
            break;
        case 'f':
            out += u'\f';
            break;
        case 'u': {
            if (pos + 4 > text.size())
                return false;
            bool ok = false;
            const uint code = text.mid(pos, 4).toUInt(&ok, 16);
            if (!ok)
                return false;
            out += QChar(char16_t(code));
            pos += 4;
            break;
        }
        default: // '"', '\\', '/'
            out += escaped;
        }
    }
    return false;
}

bool parseFlatStringObject(QStringView text, QList<QPair<QString, QString>> &pairs)
{
    qsizetype pos = 0;
    if (text.isEmpty() || text[0] != u'{')
        return false;
    ++pos;
    if (pos < text.size() && text[pos] == u'}')
        return pos + 1 == text.size();
    QString name;
    QString value;
    while (pos < text.size()) {
        if (!parseJsonString(text, pos, name) || pos >= text.size() || text[pos] != u':')
            return false;
        ++pos;
        if (!parseJsonString(text, pos, value) || pos >= text.size())
            return false;
        pairs.append({name, value});
        if (text[pos] == u'}')
            return pos + 1 == text.size();
        if (text[pos] != u',')
            return false;
        ++pos;
    }
    return false;
}

} // namespace

QString uniqueConnectionName(QStringView role)
{
    static std::atomic<quint64> counter{0};
    return u"ts-workspace-" + role + u'-' + QString::number(++counter);
}

bool execSql(QSqlDatabase &db, const QString &sql, QString *error)
{
    QSqlQuery query(db);
    if (query.exec(sql))
        return true;
    if (error)
        *error = query.lastError().text() + u" [" + sql.left(80) + u']';
    return false;
}

qint64 queryInt(QSqlDatabase &db, const QString &sql, qint64 fallback)
{
    QSqlQuery query(db);
    if (!query.exec(sql) || !query.next())
        return fallback;
    return query.value(0).toLongLong();
}

namespace {

// Whether new files cannot be made beside `path` (a read-only mount, a directory the user may
// not write): SQLite cannot create the -shm file a WAL workspace is read with there.
bool cannotWriteBeside(const QString &path)
{
    const QByteArray directory = QFile::encodeName(QFileInfo(path).absolutePath());
    return ::access(directory.constData(), W_OK) != 0;
}

// Opens the workspace again read-only, as the committed file it is ("immutable": no lock, no
// -shm; nothing there can change it). A workspace on a read-only file system was closed by
// whoever wrote it, so its file holds every commit.
bool reopenReadOnly(QSqlDatabase &db, const QString &path)
{
    db.close();
    db.setDatabaseName(u"file:"_qs +
                       QString::fromLatin1(QUrl::toPercentEncoding(
                           QFileInfo(path).absoluteFilePath(), QByteArrayLiteral("/"))) +
                       u"?immutable=1"_qs);
    db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=%1;QSQLITE_OPEN_READONLY;"
                                        "QSQLITE_OPEN_URI")
                             .arg(kBusyTimeoutMs));
    return db.open();
}

// A reader's workspace must have the current schema: an older one is migrated here, as
// opening it for writing would, so that the readers (Events page, `report --workspace`) keep
// opening older workspaces. Only then: the migration takes the write lock, which a writer may
// hold.
bool checkReaderSchema(QSqlDatabase &db, const QString &connectionName, const QString &path,
                       QString *error)
{
    auto failWith = [&](const QString &message) {
        if (error)
            *error = path + u": " + message;
        closeConnection(db, connectionName);
        return false;
    };
    qint64 version = queryInt(db, QStringLiteral("PRAGMA user_version"), -1);
    if (version > 0 && version < kWorkspaceSchemaVersion) {
        QSqlDatabase upgrade;
        const QString upgradeName = uniqueConnectionName(u"upgrade");
        QString upgradeError;
        const bool migrated =
            openConnection(upgrade, upgradeName, path, ConnectionRole::Control, &upgradeError);
        closeConnection(upgrade, upgradeName);
        if (!migrated) {
            if (error)
                *error = upgradeError;
            closeConnection(db, connectionName);
            return false;
        }
        version = queryInt(db, QStringLiteral("PRAGMA user_version"), -1);
    }
    if (version != kWorkspaceSchemaVersion) {
        return failWith(version == 0 ? QStringLiteral("not a Throttlescope workspace")
                                     : QStringLiteral("workspace schema version %1, expected "
                                                      "%2 (open it for writing to migrate)")
                                           .arg(version)
                                           .arg(kWorkspaceSchemaVersion));
    }
    return true;
}

} // namespace

bool openConnection(QSqlDatabase &db, const QString &connectionName, const QString &path,
                    ConnectionRole role, QString *error, bool *readOnly)
{
    db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connectionName);
    db.setDatabaseName(path);
    // Waiting on a lock held by the writer's current transaction is normal (it is short);
    // failing with SQLITE_BUSY would not be.
    db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=%1").arg(kBusyTimeoutMs));
    auto failWith = [&](const QString &message) {
        if (error)
            *error = path + u": " + message;
        closeConnection(db, connectionName);
        return false;
    };
    if (!db.open())
        return failWith(db.lastError().text());

    QString pragmaError;
    // Nothing below may change a file that is not ours: journal_mode=WAL rewrites the header of
    // the file and leaves -wal / -shm files beside it. So the file is identified first, by
    // reading its header only.
    {
        QString refusal;
        if (!checkWorkspaceIdentity(db, &refusal)) {
            // Unreadable as it was opened: on a read-only file system a reader opens it
            // read-only instead (and says so through *readOnly).
            if (role != ConnectionRole::Reader || !cannotWriteBeside(path) ||
                !reopenReadOnly(db, path) || !checkWorkspaceIdentity(db, &refusal))
                return failWith(refusal);
            if (readOnly)
                *readOnly = true;
        }
    }
    // WAL is a property of the file: readers never block the writer and a killed writer
    // leaves the last committed transaction intact. synchronous=NORMAL is durable against a
    // crash of the process (what the import ledger needs); only an OS crash can lose the last
    // transactions, and the ledger then rolls back with them, so resume stays exact.
    QStringList pragmas = {QStringLiteral("PRAGMA synchronous=NORMAL"),
                           QStringLiteral("PRAGMA temp_store=MEMORY")};
    if (role != ConnectionRole::Reader) {
        // page_size first: it only takes effect while the file is still empty (a new
        // workspace; for an existing one it changes nothing, WAL or not), and switching to WAL
        // writes the first page. 16 KiB rather than SQLite's 4 KiB: an event row is ~250
        // bytes, and the writer appends them, so the same rows cost a quarter of the page
        // splits, WAL frames (two writes each) and checkpoint copies: 5% less writer CPU
        // and a quarter less system time on an import of 1M canonical lines.
        pragmas.prepend(QStringLiteral("PRAGMA journal_mode=WAL"));
        pragmas.prepend(QStringLiteral("PRAGMA page_size=%1").arg(kNewWorkspacePageSize));
    }
    if (role == ConnectionRole::Writer) {
        // 32 MiB page cache and fewer, larger checkpoints: bulk inserts touch many pages.
        // threads=2: large sorts (a migration rebuilding block summaries) use a helper thread.
        pragmas << QStringLiteral("PRAGMA cache_size=-32768")
                << QStringLiteral("PRAGMA wal_autocheckpoint=4096")
                << QStringLiteral("PRAGMA threads=2");
    }
    for (const QString &pragma : std::as_const(pragmas)) {
        // Two processes opening a new workspace at once: the one switching it to WAL while the
        // other holds a lock gets SQLITE_BUSY at once, without the busy handler (SQLite's
        // deadlock avoidance), so the switch is retried here for as long as a lock is waited
        // for elsewhere.
        QElapsedTimer waited;
        waited.start();
        while (!execSql(db, pragma, &pragmaError)) {
            if (!pragmaError.contains(QLatin1StringView("locked")) || waited.elapsed() > kBusyTimeoutMs)
                return failWith(pragmaError);
            QThread::msleep(5);
        }
    }

    if (role == ConnectionRole::Reader)
        return checkReaderSchema(db, connectionName, path, error);
    QString migrateError;
    if (!migrate(db, &migrateError))
        return failWith(migrateError);
    return true;
}

void closeConnection(QSqlDatabase &db, const QString &connectionName)
{
    if (db.isOpen())
        db.close();
    db = QSqlDatabase(); // the last handle must be gone before removeDatabase()
    if (QSqlDatabase::contains(connectionName))
        QSqlDatabase::removeDatabase(connectionName);
}

QString sourceColumns()
{
    return QStringLiteral(
        "id,path,format,size,mtime_ms,head_length,fingerprint,added_ms,head_hash,seen_size");
}

SourceRecord sourceFromQuery(const QSqlQuery &query)
{
    SourceRecord source;
    source.id = query.value(0).toLongLong();
    source.path = query.value(1).toString();
    source.format = query.value(2).toString();
    source.size = query.value(3).toLongLong();
    source.mtimeMs = query.value(4).toLongLong();
    source.headLength = query.value(5).toLongLong();
    source.fingerprint = query.value(6).toString().toLatin1();
    source.addedMs = query.value(7).toLongLong();
    source.headHash = query.value(8).toString().toLatin1();
    source.seenSize = query.value(9).toLongLong();
    return source;
}

QStringList queryIndexStatements()
{
    // Since schema version 2 these are part of the schema and maintained per row (see the
    // migration to version 2 for why these three); the other filters use the block summaries.
    // Kept for workspaces whose indexes were dropped by hand.
    return {
        QStringLiteral("CREATE INDEX IF NOT EXISTS idx_events_ts ON events(ts_ms)"),
        // "error_code = ?" implies the NOT NULL condition, so the planner uses it.
        QStringLiteral("CREATE INDEX IF NOT EXISTS idx_events_error ON events(error_code) "
                       "WHERE error_code IS NOT NULL"),
        // The reader adds "status >= 400" to a filter on such a status (buildFilter), which
        // lets the planner use it.
        QStringLiteral("CREATE INDEX IF NOT EXISTS idx_events_failed ON events(status) "
                       "WHERE status >= 400"),
    };
}

QStringList blockSummaryRebuildStatements(const QString &rowCondition)
{
    const QString block = QStringLiteral("(id - 1) >> %1").arg(kEventBlockShift);
    const QString extra = rowCondition.isEmpty() ? QString() : u" AND " + rowCondition;
    auto summarize = [&](BlockField field, const QString &value, const QString &presence) {
        return QStringLiteral("INSERT INTO event_blocks(field, value, block, events)"
                              " SELECT %1, %2, %3, count(*) FROM events WHERE %4%5"
                              " GROUP BY 2, 3")
            .arg(int(field))
            .arg(value, block, presence, extra);
    };
    return {
        summarize(BlockField::Identity, QStringLiteral("identity"),
                  QStringLiteral("identity IS NOT NULL")),
        // No response (status 0) is stored as NULL and summarized as 0, the filter's value.
        summarize(BlockField::Status, QStringLiteral("coalesce(status, 0)"), QStringLiteral("1")),
        summarize(BlockField::ErrorCode, QStringLiteral("error_code"),
                  QStringLiteral("error_code IS NOT NULL")),
        summarize(BlockField::Lane, QStringLiteral("lane"), QStringLiteral("lane IS NOT NULL")),
        summarize(BlockField::Source, QStringLiteral("source_id"),
                  QStringLiteral("source_id IS NOT NULL")),
    };
}

void BlockSummaryBuilder::count(int field, qint64 block, QStringView text, const QString *owner,
                                qint64 number)
{
    const bool isText = owner != nullptr;
    const quintptr slotKey = isText ? quintptr(text.data()) >> 4 : quintptr(number);
    RecentValue &recent = m_recent[size_t(field * kRecentSlots) + (slotKey % kRecentSlots)];
    if (recent.count && recent.block == block &&
        (isText ? (recent.data == text.data() && recent.size == text.size())
                : recent.number == number)) {
        ++*recent.count;
        return;
    }
    const qint64 slot = (block << 3) | field;
    if (m_overflowed.count(slot)) {
        recent = {};
        return;
    }
    Key key;
    key.block = block;
    key.field = field;
    key.number = number;
    if (isText)
        key.text = *owner; // shares the event's string data, no copy
    auto [it, inserted] = m_counts.try_emplace(std::move(key), 0);
    if (inserted && ++m_distinct[slot] > kMaxBlockValues) {
        // Too many distinct values to be worth summarizing: readers scan this block.
        m_overflowed.insert(slot);
        recent = {};
        return;
    }
    ++it->second;
    recent.data = isText ? text.data() : nullptr;
    recent.size = isText ? text.size() : -1;
    recent.number = number;
    recent.block = block;
    recent.count = &it->second;
}

void BlockSummaryBuilder::add(qint64 rowId, const RequestEvent &event, qint64 sourceId)
{
    const qint64 block = eventBlockOf(rowId);
    // Empty strings are stored as NULL (bindEvent) and never match an equality filter.
    if (!event.identity.isEmpty())
        count(int(BlockField::Identity), block, event.identity, &event.identity, 0);
    count(int(BlockField::Status), block, {}, nullptr, event.status);
    if (!event.errorCode.isEmpty())
        count(int(BlockField::ErrorCode), block, event.errorCode, &event.errorCode, 0);
    if (!event.lane.isEmpty())
        count(int(BlockField::Lane), block, event.lane, &event.lane, 0);
    if (sourceId > 0)
        count(int(BlockField::Source), block, {}, nullptr, sourceId);
}

bool BlockSummaryBuilder::write(Statement &upsert, Statement &overflow, QString *error)
{
    bool ok = true;
    for (const auto &[key, events] : m_counts) {
        if (!ok)
            break;
        if (m_overflowed.count((key.block << 3) | key.field))
            continue;
        upsert.bindInt(0, key.field);
        if (key.field == int(BlockField::Status) || key.field == int(BlockField::Source))
            upsert.bindInt(1, key.number);
        else
            upsert.bindText(1, key.text);
        upsert.bindInt(2, key.block);
        upsert.bindInt(3, events);
        ok = upsert.exec(error);
    }
    for (const qint64 slot : m_overflowed) {
        if (!ok)
            break;
        overflow.bindInt(0, slot & 7);
        overflow.bindInt(1, slot >> 3);
        ok = overflow.exec(error);
    }
    clear();
    return ok;
}

void BlockSummaryBuilder::clear()
{
    m_counts.clear();
    m_distinct.clear();
    m_overflowed.clear();
    for (RecentValue &recent : m_recent)
        recent = {};
}

QString eventColumnList()
{
    return QStringLiteral(
        "type,ts_ms,identity,app,tenant,service,category,method,url,status,error_code,"
        "retry_after,headers,body,duration_ms,request_id,batch_id,batch_index,batch_envelope,"
        "attempt,operation_id,lane,credits,sb_namespace,entity,breaker_scope,breaker_state,text,"
        "extra_json,source_id,line,byte_offset,weight");
}

EventColumns eventValueColumns(const RequestEvent &event, qint64 sourceId)
{
    // The negations of bindEvent()'s NULL conditions, column by column.
    EventColumns columns = 0b11; // type, ts_ms: NOT NULL
    auto set = [&columns](int column, bool hasValue) {
        columns |= EventColumns(hasValue ? 1 : 0) << column;
    };
    set(2, !event.identity.isEmpty());
    set(3, !event.app.isEmpty());
    set(4, !event.tenant.isEmpty());
    set(5, !event.service.isEmpty());
    set(6, !event.category.isEmpty());
    set(7, !event.method.isEmpty());
    set(8, !event.url.isEmpty());
    set(9, event.status != 0);
    set(10, !event.errorCode.isEmpty());
    set(11, !event.retryAfter.isEmpty());
    set(12, !event.headers.isEmpty()); // appendHeadersJson() writes nothing for no headers
    set(13, !event.body.isEmpty());
    set(14, !(event.durationMs < 0));
    set(15, !event.requestId.isEmpty());
    set(16, !event.batchId.isEmpty());
    set(17, !(event.batchIndex < 0));
    set(18, event.batchEnvelope);
    set(19, !(event.attempt < 0));
    set(20, !event.operationId.isEmpty());
    set(21, !event.lane.isEmpty());
    set(22, !(event.credits < 0));
    set(23, !event.serviceBusNamespace.isEmpty());
    set(24, !event.entity.isEmpty());
    set(25, !event.breakerScope.isEmpty());
    set(26, !event.breakerState.isEmpty());
    set(27, !event.text.isEmpty());
    set(28, !event.extraJson.isEmpty());
    set(29, sourceId > 0);
    set(30, event.line > 0);
    set(31, !(event.offset < 0));
    set(32, event.weight > 1);
    static_assert(kEventColumnCount == 33);
    return columns;
}

QString eventInsertSql(int rows, EventColumns columns)
{
    columns &= kAllEventColumns;
    const QStringList allNames = eventColumnList().split(u',');
    QStringList names;
    for (int i = 0; i < kEventColumnCount; ++i) {
        if (columns & (EventColumns(1) << i))
            names.append(allNames.at(i));
    }
    QString row = QStringLiteral("(");
    for (qsizetype i = 0; i < names.size(); ++i)
        row += i == 0 ? u"?" : u",?";
    row += u')';
    // OR FAIL rather than the default ABORT: a multi-row INSERT that may abort runs inside a
    // statement savepoint, copying every page it touches to a statement journal first. The
    // writer rolls the whole transaction back on any error, so stopping at the failing row
    // loses nothing.
    QString sql = u"INSERT OR FAIL INTO events(" + names.join(u',') + u") VALUES";
    for (int i = 0; i < rows; ++i) {
        if (i > 0)
            sql += u',';
        sql += row;
    }
    return sql;
}

sqlite3 *nativeHandle(const QSqlDatabase &db)
{
    const QVariant handle = db.driver() ? db.driver()->handle() : QVariant();
    if (!handle.isValid() || qstrcmp(handle.typeName(), "sqlite3*") != 0)
        return nullptr;
    return *static_cast<sqlite3 *const *>(handle.constData());
}

Statement::~Statement()
{
    finalize();
}

bool Statement::prepare(sqlite3 *db, const QString &sql, QString *error)
{
    finalize();
    m_db = db;
    if (!db) {
        if (error)
            *error = QStringLiteral("no SQLite handle");
        return false;
    }
    const int rc = sqlite3_prepare16_v3(db, sql.utf16(), int(sql.size() * sizeof(QChar)),
                                        SQLITE_PREPARE_PERSISTENT, &m_stmt, nullptr);
    if (rc != SQLITE_OK) {
        if (error)
            *error = QString::fromUtf8(sqlite3_errmsg(db)) + u" [" + sql.left(80) + u']';
        finalize();
        return false;
    }
    // A fresh statement's parameters are all NULL.
    m_bound.assign(size_t(sqlite3_bind_parameter_count(m_stmt)), BoundParameter{});
    return true;
}

void Statement::finalize()
{
    if (m_stmt)
        sqlite3_finalize(m_stmt);
    m_stmt = nullptr;
    m_bound.clear();
}

void Statement::bindNull(int index)
{
    if (size_t(index) < m_bound.size()) {
        BoundParameter &bound = m_bound[size_t(index)];
        if (bound.kind == BoundKind::Null)
            return; // still NULL from the previous execution
        bound.kind = BoundKind::Null;
    }
    sqlite3_bind_null(m_stmt, index + 1);
}

void Statement::bindInt(int index, qint64 value)
{
    if (size_t(index) < m_bound.size()) {
        BoundParameter &bound = m_bound[size_t(index)];
        if (bound.kind == BoundKind::Int && bound.value == value)
            return; // still bound to it
        bound = {BoundKind::Int, value};
    }
    sqlite3_bind_int64(m_stmt, index + 1, value);
}

void Statement::bindDouble(int index, double value)
{
    if (size_t(index) < m_bound.size()) {
        // By bits: 0.0 and -0.0 are different values to store.
        const auto bits = std::bit_cast<qint64>(value);
        BoundParameter &bound = m_bound[size_t(index)];
        if (bound.kind == BoundKind::Double && bound.value == bits)
            return;
        bound = {BoundKind::Double, bits};
    }
    sqlite3_bind_double(m_stmt, index + 1, value);
}

void Statement::bindText(int index, const QString &value)
{
    markBound(index);
    sqlite3_bind_text16(m_stmt, index + 1, value.utf16(), int(value.size() * sizeof(QChar)),
                        SQLITE_STATIC);
}

void Statement::bindTransientText(int index, const QString &value)
{
    markBound(index);
    sqlite3_bind_text16(m_stmt, index + 1, value.utf16(), int(value.size() * sizeof(QChar)),
                        SQLITE_TRANSIENT);
}

void Statement::bindTextOrNull(int index, const QString &value)
{
    if (value.isEmpty())
        bindNull(index);
    else
        bindText(index, value);
}

void Statement::bindIntOrNull(int index, qint64 value, bool isNullValue)
{
    if (isNullValue)
        bindNull(index);
    else
        bindInt(index, value);
}

void Statement::bindDoubleOrNull(int index, double value, bool isNullValue)
{
    if (isNullValue)
        bindNull(index);
    else
        bindDouble(index, value);
}

void Statement::beginRows()
{
    m_utf8Block = 0;
    m_utf8Used = 0;
    m_retiredUtf8.clear();
}

void Statement::bindSharedUtf8OrNull(int index, const QString &value)
{
    if (value.isEmpty() || size_t(index) >= m_bound.size()) {
        bindUtf8OrNull(index, value);
        return;
    }
    if (m_sharedText.empty())
        m_sharedText.resize(size_t(1) << kSharedTextSlotBits);
    // Fibonacci hashing of the address: interned strings lie side by side in a few blocks.
    const quint64 address = quintptr(value.constData());
    SharedText &slot =
        m_sharedText[size_t((address * 0x9E3779B97F4A7C15ull) >> (64 - kSharedTextSlotBits))];
    if (slot.text.constData() != value.constData() || slot.text.size() != value.size()) {
        if (!slot.utf8.isEmpty())
            m_retiredUtf8.push_back(std::move(slot.utf8));
        slot.text = value; // shares the characters: the address stays theirs
        // The encoder, not toUtf8(): the same bytes as bindUtf8OrNull() (U+FFFD, not '?',
        // for a lone surrogate).
        slot.utf8.resize(value.size() * 3);
        slot.utf8.truncate(m_encoder.appendToBuffer(slot.utf8.data(), value) - slot.utf8.data());
        slot.id = ++m_lastSharedId;
    }
    BoundParameter &bound = m_bound[size_t(index)];
    if (bound.kind == BoundKind::Shared && bound.value == slot.id)
        return; // still bound to these bytes, which have not moved
    bound = {BoundKind::Shared, slot.id};
    sqlite3_bind_text(m_stmt, index + 1, slot.utf8.constData(), int(slot.utf8.size()),
                      SQLITE_STATIC);
}

char *Statement::reserveUtf8(qsizetype needed)
{
    constexpr qsizetype kBlockBytes = 64 * 1024;
    if (m_utf8Block < m_utf8Blocks.size() &&
        m_utf8Used + needed > m_utf8Blocks[m_utf8Block].size()) {
        ++m_utf8Block; // the bytes in the full block stay where they are
        m_utf8Used = 0;
    }
    if (m_utf8Block == m_utf8Blocks.size())
        m_utf8Blocks.emplace_back(qMax(kBlockBytes, needed), Qt::Uninitialized);
    else if (m_utf8Blocks[m_utf8Block].size() < needed)
        m_utf8Blocks[m_utf8Block].resize(needed); // empty: nothing bound points into it
    return m_utf8Blocks[m_utf8Block].data() + m_utf8Used;
}

void Statement::bindReservedUtf8(int index, const char *start, const char *end)
{
    const QByteArray &block = m_utf8Blocks[m_utf8Block];
    m_utf8Used = end - block.constData();
    Q_ASSERT(m_utf8Used <= block.size());
    markBound(index);
    sqlite3_bind_text(m_stmt, index + 1, start, int(end - start), SQLITE_STATIC);
}

void Statement::bindUtf8OrNull(int index, QStringView value)
{
    if (value.isEmpty()) {
        bindNull(index);
        return;
    }
    // UTF-8 needs at most 3 bytes per UTF-16 unit.
    char *start = reserveUtf8(value.size() * 3);
    bindReservedUtf8(index, start, m_encoder.appendToBuffer(start, value));
}

char *Statement::appendJsonUtf8(char *out, QStringView value)
{
    // appendJsonString()'s escapes (all ASCII, so the runs between them encode to the same
    // bytes as the whole escaped text would).
    *out++ = '"';
    const char16_t *run = value.utf16();
    const char16_t *end = run + value.size();
    for (const char16_t *p = run; p != end; ++p) {
        const char16_t c = *p;
        if (c >= 0x20 && c != u'"' && c != u'\\')
            continue;
        out = m_encoder.appendToBuffer(out, QStringView(run, p - run));
        run = p + 1;
        *out++ = '\\';
        switch (c) {
        case u'"':
            *out++ = '"';
            break;
        case u'\\':
            *out++ = '\\';
            break;
        case u'\n':
            *out++ = 'n';
            break;
        case u'\r':
            *out++ = 'r';
            break;
        case u'\t':
            *out++ = 't';
            break;
        default:
            *out++ = 'u';
            *out++ = '0';
            *out++ = '0';
            *out++ = "0123456789abcdef"[c >> 4];
            *out++ = "0123456789abcdef"[c & 0xf];
        }
    }
    out = m_encoder.appendToBuffer(out, QStringView(run, end - run));
    *out++ = '"';
    return out;
}

void Statement::bindHeadersJsonOrNull(int index, const HttpHeaders &headers)
{
    if (headers.isEmpty()) {
        bindNull(index);
        return;
    }
    // Per UTF-16 unit at most 6 bytes ("\u001f"), per pair 2 x 2 quotes, ':' and ','.
    qsizetype needed = 2;
    for (const auto &[name, value] : headers.items())
        needed += 6 * (name.size() + value.size()) + 6;
    char *start = reserveUtf8(needed);
    char *out = start;
    *out++ = '{';
    bool first = true;
    for (const auto &[name, value] : headers.items()) {
        if (!first)
            *out++ = ',';
        first = false;
        out = appendJsonUtf8(out, name);
        *out++ = ':';
        out = appendJsonUtf8(out, value);
    }
    *out++ = '}';
    bindReservedUtf8(index, start, out);
}

void Statement::bindUtf8(int index, const QByteArray &utf8)
{
    markBound(index);
    sqlite3_bind_text(m_stmt, index + 1, utf8.constData(), int(utf8.size()), SQLITE_STATIC);
}

bool Statement::exec(QString *error)
{
    const int rc = sqlite3_step(m_stmt);
    sqlite3_reset(m_stmt);
    if (rc == SQLITE_DONE || rc == SQLITE_ROW)
        return true;
    if (error)
        *error = QString::fromUtf8(sqlite3_errmsg(m_db));
    return false;
}

bool Statement::next(QString *error)
{
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW)
        return true;
    if (rc != SQLITE_DONE && error)
        *error = QString::fromUtf8(sqlite3_errmsg(m_db));
    return false;
}

void Statement::reset()
{
    sqlite3_reset(m_stmt);
    sqlite3_clear_bindings(m_stmt);
    m_bound.assign(m_bound.size(), BoundParameter{});
}

bool Statement::isNull(int column) const
{
    return sqlite3_column_type(m_stmt, column) == SQLITE_NULL;
}

qint64 Statement::intAt(int column) const
{
    return sqlite3_column_int64(m_stmt, column);
}

double Statement::doubleAt(int column) const
{
    return sqlite3_column_double(m_stmt, column);
}

QString Statement::textAt(int column) const
{
    // The file is UTF-8; QString::fromUtf8 is faster than letting SQLite convert to UTF-16.
    const auto *text = reinterpret_cast<const char *>(sqlite3_column_text(m_stmt, column));
    if (!text)
        return {};
    return QString::fromUtf8(text, sqlite3_column_bytes(m_stmt, column));
}

QString Statement::internedTextAt(int column)
{
    const auto *text = reinterpret_cast<const char *>(sqlite3_column_text(m_stmt, column));
    if (!text)
        return {};
    const QByteArrayView bytes(text, sqlite3_column_bytes(m_stmt, column));
    if (column >= m_interned.size())
        m_interned.resize(column + 1);
    QList<InternSlot> &cache = m_interned[column];
    if (cache.isEmpty())
        cache.resize(kInternSlots);
    InternSlot &slot = cache[qHash(bytes) % kInternSlots];
    if (slot.bytes != bytes) {
        slot.bytes = bytes.toByteArray();
        slot.text = QString::fromUtf8(bytes);
    }
    return slot.text;
}

QByteArray Statement::utf8At(int column) const
{
    const auto *text = reinterpret_cast<const char *>(sqlite3_column_text(m_stmt, column));
    if (!text)
        return {};
    return QByteArray(text, sqlite3_column_bytes(m_stmt, column));
}

bool bindEvent(Statement &statement, const RequestEvent &event, qint64 sourceId, int firstParameter,
               EventColumns columns)
{
    // Column `column` of this row: the next parameter if the statement names the column
    // (columns are bound in order), else skipped; a value for a column the statement does not
    // name is a caller's mistake, reported rather than lost silently.
    struct RowBinder
    {
        Statement &s;
        EventColumns columns;
        int next; // parameter of the next named column
        int last = -1;
        bool missed = false;
        // The parameter of `column`, -1 if the statement does not name it.
        int parameter(int column)
        {
            Q_ASSERT(column > last);
            last = column;
            return (columns >> column) & 1 ? next++ : -1;
        }
        void bindInt(int column, qint64 value)
        {
            if (const int p = parameter(column); p >= 0)
                s.bindInt(p, value);
            else
                missed = true;
        }
        void bindNull(int column)
        {
            if (const int p = parameter(column); p >= 0)
                s.bindNull(p);
        }
        void bindUtf8OrNull(int column, QStringView value)
        {
            if (const int p = parameter(column); p >= 0)
                s.bindUtf8OrNull(p, value);
            else
                missed = missed || !value.isEmpty();
        }
        void bindSharedUtf8OrNull(int column, const QString &value)
        {
            if (const int p = parameter(column); p >= 0)
                s.bindSharedUtf8OrNull(p, value);
            else
                missed = missed || !value.isEmpty();
        }
        void bindHeadersJsonOrNull(int column, const HttpHeaders &headers)
        {
            if (const int p = parameter(column); p >= 0)
                s.bindHeadersJsonOrNull(p, headers);
            else
                missed = missed || !headers.isEmpty();
        }
        void bindUtf8(int column, const QByteArray &utf8)
        {
            if (const int p = parameter(column); p >= 0)
                s.bindUtf8(p, utf8);
            else
                missed = true;
        }
        void bindIntOrNull(int column, qint64 value, bool isNull)
        {
            if (const int p = parameter(column); p >= 0)
                s.bindIntOrNull(p, value, isNull);
            else
                missed = missed || !isNull;
        }
        void bindDoubleOrNull(int column, double value, bool isNull)
        {
            if (const int p = parameter(column); p >= 0)
                s.bindDoubleOrNull(p, value, isNull);
            else
                missed = missed || !isNull;
        }
    } row{statement, columns & kAllEventColumns, firstParameter};
    RowBinder &s = row;

    s.bindInt(0, int(event.type));
    s.bindInt(1, event.tsMs);
    s.bindSharedUtf8OrNull(2, event.identity);
    s.bindSharedUtf8OrNull(3, event.app);
    s.bindSharedUtf8OrNull(4, event.tenant);
    s.bindSharedUtf8OrNull(5, event.service);
    s.bindSharedUtf8OrNull(6, event.category);
    s.bindSharedUtf8OrNull(7, event.method);
    s.bindUtf8OrNull(8, event.url);
    s.bindIntOrNull(9, event.status, event.status == 0);
    s.bindSharedUtf8OrNull(10, event.errorCode);
    s.bindSharedUtf8OrNull(11, event.retryAfter);
    s.bindHeadersJsonOrNull(12, event.headers);
    s.bindUtf8OrNull(13, event.body);
    s.bindDoubleOrNull(14, event.durationMs, event.durationMs < 0);
    s.bindUtf8OrNull(15, event.requestId);
    s.bindUtf8OrNull(16, event.batchId);
    s.bindIntOrNull(17, event.batchIndex, event.batchIndex < 0);
    s.bindIntOrNull(18, 1, !event.batchEnvelope);
    s.bindIntOrNull(19, event.attempt, event.attempt < 0);
    s.bindUtf8OrNull(20, event.operationId);
    s.bindSharedUtf8OrNull(21, event.lane);
    s.bindDoubleOrNull(22, event.credits, event.credits < 0);
    s.bindSharedUtf8OrNull(23, event.serviceBusNamespace);
    s.bindSharedUtf8OrNull(24, event.entity);
    s.bindSharedUtf8OrNull(25, event.breakerScope);
    s.bindSharedUtf8OrNull(26, event.breakerState);
    s.bindUtf8OrNull(27, event.text);
    if (event.extraJson.isEmpty())
        s.bindNull(28);
    else
        s.bindUtf8(28, event.extraJson);
    s.bindIntOrNull(29, sourceId, sourceId <= 0);
    s.bindIntOrNull(30, event.line, event.line <= 0);
    s.bindIntOrNull(31, event.offset, event.offset < 0);
    s.bindIntOrNull(32, event.weight, event.weight <= 1);
    static_assert(kEventColumnCount == 33);
    return !row.missed;
}

qint64 readEvent(Statement &statement, int firstColumn, RequestEvent &event)
{
    Statement &s = statement;
    const int c = firstColumn;
    auto intOr = [&](int column, qint64 nullValue) {
        return s.isNull(c + column) ? nullValue : s.intAt(c + column);
    };
    auto doubleOr = [&](int column, double nullValue) {
        return s.isNull(c + column) ? nullValue : s.doubleAt(c + column);
    };
    auto text = [&](int column) { return s.textAt(c + column); };
    auto shared = [&](int column) { return s.internedTextAt(c + column); };
    // The workspace writer masks every event before storing it (WorkspaceWriter::submit).
    event.secretsMasked = true;
    event.type = EventType(intOr(0, 0));
    event.tsMs = intOr(1, 0);
    event.identity = shared(2);
    event.app = shared(3);
    event.tenant = shared(4);
    event.service = shared(5);
    event.category = shared(6);
    event.method = shared(7);
    event.url = text(8);
    event.status = int(intOr(9, 0));
    event.errorCode = shared(10);
    event.retryAfter = shared(11);
    event.headers = headersFromJson(text(12));
    event.body = text(13);
    event.durationMs = doubleOr(14, -1);
    event.requestId = text(15);
    event.batchId = text(16);
    event.batchIndex = int(intOr(17, -1));
    event.batchEnvelope = intOr(18, 0) != 0;
    event.attempt = int(intOr(19, -1));
    event.operationId = text(20);
    event.lane = shared(21);
    event.credits = doubleOr(22, -1);
    event.serviceBusNamespace = shared(23);
    event.entity = shared(24);
    event.breakerScope = shared(25);
    event.breakerState = shared(26);
    event.text = text(27);
    event.extraJson = s.utf8At(c + 28); // stored UTF-8: no round trip through QString
    const qint64 sourceId = intOr(29, 0);
    event.line = intOr(30, 0);
    event.offset = intOr(31, -1);
    event.weight = std::max<qint64>(1, intOr(32, 1));
    return sourceId;
}

QString headersToJson(const HttpHeaders &headers)
{
    QString out;
    appendHeadersJson(out, headers);
    return out;
}

void appendHeadersJson(QString &out, const HttpHeaders &headers)
{
    if (headers.isEmpty())
        return;
    out += u'{';
    bool first = true;
    for (const auto &[name, value] : headers.items()) {
        if (!first)
            out += u',';
        first = false;
        appendJsonString(out, name);
        out += u':';
        appendJsonString(out, value);
    }
    out += u'}';
}

HttpHeaders headersFromJson(const QString &json)
{
    HttpHeaders headers;
    if (json.isEmpty())
        return headers;
    // headersToJson() writes a flat object of strings; read it back in order (QJsonObject
    // sorts its keys, and header order is part of the event).
    QList<QPair<QString, QString>> pairs;
    if (parseFlatStringObject(json, pairs)) {
        for (const auto &[name, value] : std::as_const(pairs))
            headers.set(name, value);
        return headers;
    }
    // Written by something else (a hand-edited file, a later version): accept any object.
    const QJsonObject object = QJsonDocument::fromJson(json.toUtf8()).object();
    for (auto it = object.constBegin(); it != object.constEnd(); ++it)
        headers.set(it.key(), it.value().toString());
    return headers;
}

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

} // namespace ts::store
