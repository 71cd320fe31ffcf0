#include "workspacereader.h"

#include "storesql.h"

#include <QFileInfo>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

#include <map>

namespace ts {

namespace {

// WHERE clause and its positional values for a filter.
struct SqlFilter
{
    QString where; // "" or " WHERE ..."
    QVariantList values;
};

QString escapeLike(const QString &text)
{
    QString escaped = text;
    escaped.replace(u'\\', QStringLiteral("\\\\"));
    escaped.replace(u'%', QStringLiteral("\\%"));
    escaped.replace(u'_', QStringLiteral("\\_"));
    return escaped;
}

// Rows with minRowId <= id <= maxRowId (a bound of 0 is no bound) matching filter.
SqlFilter buildFilter(const EventFilter &filter, qint64 minRowId = 0, qint64 maxRowId = 0)
{
    QStringList terms;
    SqlFilter sql;
    if (!filter.identity.isEmpty()) {
        terms << QStringLiteral("identity = ?");
        sql.values << filter.identity;
    }
    if (!filter.identityPart.isEmpty()) {
        // LIKE is case-insensitive for ASCII, which is what identities are made of.
        terms << QStringLiteral("identity LIKE ? ESCAPE '\\'");
        sql.values << QString(u'%' + escapeLike(filter.identityPart) + u'%');
    }
    if (filter.status) {
        // 0 (no response) is stored as NULL.
        if (*filter.status == 0) {
            terms << QStringLiteral("status IS NULL");
        } else {
            terms << QStringLiteral("status = ?");
            sql.values << *filter.status;
            // Repeats the partial index's condition word for word: SQLite uses a partial
            // index only when the query implies its WHERE, and cannot prove that from a
            // bound value.
            if (*filter.status >= 400)
                terms << QStringLiteral("status >= 400");
        }
    }
    if (!filter.errorCode.isEmpty()) {
        terms << QStringLiteral("error_code = ?");
        sql.values << filter.errorCode;
    }
    if (!filter.lane.isEmpty()) {
        terms << QStringLiteral("lane = ?");
        sql.values << filter.lane;
    }
    if (filter.fromMs) {
        terms << QStringLiteral("ts_ms >= ?");
        sql.values << *filter.fromMs;
    }
    if (filter.toMs) {
        terms << QStringLiteral("ts_ms < ?");
        sql.values << *filter.toMs;
    }
    if (filter.sourceId > 0) {
        terms << QStringLiteral("source_id = ?");
        sql.values << filter.sourceId;
    }
    if (!filter.sourceIds.isEmpty()) {
        QStringList marks;
        for (const qint64 id : filter.sourceIds) {
            marks << QStringLiteral("?");
            sql.values << id;
        }
        terms << u"source_id IN (" + marks.join(u',') + u')';
    }
    if (!filter.text.isEmpty()) {
        // LIKE is case-insensitive for ASCII, which is what ids and URLs are made of.
        terms << QStringLiteral("(url LIKE ? ESCAPE '\\' OR error_code LIKE ? ESCAPE '\\' "
                                "OR identity LIKE ? ESCAPE '\\')");
        const QString pattern = u'%' + escapeLike(filter.text) + u'%';
        sql.values << pattern << pattern << pattern;
    }
    if (minRowId > 0) {
        terms << QStringLiteral("id >= ?");
        sql.values << minRowId;
    }
    if (maxRowId > 0) {
        terms << QStringLiteral("id <= ?");
        sql.values << maxRowId;
    }
    if (!terms.isEmpty())
        sql.where = u" WHERE " + terms.join(QStringLiteral(" AND "));
    return sql;
}

bool prepareAndBind(QSqlQuery &query, const QString &sql, const QVariantList &values)
{
    if (!query.prepare(sql))
        return false;
    for (int i = 0; i < values.size(); ++i)
        query.bindValue(i, values.at(i));
    return query.exec();
}

bool prepareNative(store::Statement &statement, QSqlDatabase &db, const QString &sql,
                   const QVariantList &values, QString *error)
{
    if (!statement.prepare(store::nativeHandle(db), sql, error))
        return false;
    for (int i = 0; i < values.size(); ++i) {
        const QVariant &value = values.at(i);
        if (value.typeId() == QMetaType::QString)
            statement.bindTransientText(i, value.toString());
        else
            statement.bindInt(i, value.toLongLong());
    }
    return true;
}

// The equality terms of a filter that block summaries describe.
struct SummarizedTerm
{
    store::BlockField field;
    QVariant value; // QString or qint64, as stored in event_blocks.value
    bool like = false; // value is a LIKE pattern (a part of an identity), not the value itself
};

QList<SummarizedTerm> summarizedTerms(const EventFilter &filter)
{
    QList<SummarizedTerm> terms;
    if (!filter.identity.isEmpty())
        terms.append({store::BlockField::Identity, filter.identity});
    if (!filter.identityPart.isEmpty()) {
        terms.append({store::BlockField::Identity,
                      QString(u'%' + escapeLike(filter.identityPart) + u'%'), true});
    }
    if (filter.status)
        terms.append({store::BlockField::Status, qint64(*filter.status)});
    if (!filter.errorCode.isEmpty())
        terms.append({store::BlockField::ErrorCode, filter.errorCode});
    if (!filter.lane.isEmpty())
        terms.append({store::BlockField::Lane, filter.lane});
    if (filter.sourceId > 0)
        terms.append({store::BlockField::Source, filter.sourceId});
    return terms;
}

// One read transaction around a query made of several statements, so that they all see the
// same committed state while the writer keeps appending (summaries and rows commit together).
class ReadTransaction
{
public:
    explicit ReadTransaction(QSqlDatabase &db) : m_db(db)
    {
        QString ignored;
        // Fails when the connection is already in a transaction; that one then gives the
        // snapshot.
        m_began = store::execSql(m_db, QStringLiteral("BEGIN"), &ignored);
    }
    ~ReadTransaction()
    {
        QString ignored;
        if (m_began)
            store::execSql(m_db, QStringLiteral("COMMIT"), &ignored);
    }
    ReadTransaction(const ReadTransaction &) = delete;
    ReadTransaction &operator=(const ReadTransaction &) = delete;

private:
    QSqlDatabase &m_db;
    bool m_began = false;
};

} // namespace

// Blocks that can hold rows matching a filter, from the summaries. Only for filters with at
// least one summarized term.
struct BlockPlan
{
    struct Block
    {
        qint64 block = 0;
        // Rows carrying the value of the filter's only summarized term; -1 when the block is
        // not summarized for it (overflow) or the filter has several terms.
        qint64 events = -1;
    };
    QList<Block> blocks; // in block order
    // Count = the sum of the known block counts plus a scan of the others.
    bool countFromSummaries = false;
};

// Merges consecutive blocks into row ranges [first, last].
static QList<std::pair<qint64, qint64>> rowRanges(const QList<BlockPlan::Block> &blocks)
{
    QList<std::pair<qint64, qint64>> ranges;
    for (const BlockPlan::Block &entry : blocks) {
        const qint64 first = store::eventBlockFirstRow(entry.block);
        const qint64 last = store::eventBlockLastRow(entry.block);
        if (!ranges.isEmpty() && ranges.last().second + 1 == first)
            ranges.last().second = last;
        else
            ranges.append({first, last});
    }
    return ranges;
}

WorkspaceReader::WorkspaceReader() = default;

WorkspaceReader::~WorkspaceReader()
{
    close();
}

bool WorkspaceReader::open(const QString &path)
{
    close();
    m_path = path;
    m_error.clear();
    // QSQLITE would create an empty file; a reader must never do that.
    if (!QFileInfo(path).isFile())
        return fail(path, QStringLiteral("no such workspace"));
    m_connectionName = store::uniqueConnectionName(u"reader");
    m_readOnly = false;
    return store::openConnection(m_db, m_connectionName, path, store::ConnectionRole::Reader,
                                 &m_error, &m_readOnly);
}

void WorkspaceReader::close()
{
    if (!m_connectionName.isEmpty())
        store::closeConnection(m_db, m_connectionName);
    m_connectionName.clear();
    m_sourcePaths.clear();
}

bool WorkspaceReader::isOpen() const
{
    return m_db.isOpen();
}

bool WorkspaceReader::fail(const QString &what, const QString &detail)
{
    m_error = what + u": " + detail;
    return false;
}

QString WorkspaceReader::sourcePath(qint64 sourceId)
{
    if (sourceId <= 0)
        return {};
    auto it = m_sourcePaths.constFind(sourceId);
    if (it != m_sourcePaths.constEnd())
        return *it;
    QSqlQuery query(m_db);
    query.prepare(QStringLiteral("SELECT path FROM sources WHERE id = ?"));
    query.addBindValue(sourceId);
    QString path;
    if (query.exec() && query.next())
        path = query.value(0).toString();
    m_sourcePaths.insert(sourceId, path);
    return path;
}

std::optional<BlockPlan> WorkspaceReader::planBlocks(const EventFilter &filter, QString *error)
{
    const QList<SummarizedTerm> terms = summarizedTerms(filter);
    if (terms.isEmpty())
        return std::nullopt;
    // block -> rows with the value (-1: overflow block, not summarized for the column).
    std::map<qint64, qint64> candidates;
    for (qsizetype i = 0; i < terms.size(); ++i) {
        const SummarizedTerm &term = terms.at(i);
        std::map<qint64, qint64> blocks;
        store::Statement query;
        // A part of an identity: every identity of the block that contains it, their rows added.
        if (!prepareNative(query, m_db,
                           term.like ? QStringLiteral("SELECT block, events FROM event_blocks"
                                                      " WHERE field = ? AND value LIKE ? ESCAPE '\\'")
                                     : QStringLiteral("SELECT block, events FROM event_blocks"
                                                      " WHERE field = ? AND value = ?"),
                           {int(term.field), term.value}, error)) {
            return std::nullopt;
        }
        while (query.next(error))
            blocks[query.intAt(0)] += query.intAt(1);
        if (!error->isEmpty() ||
            !prepareNative(query, m_db,
                           QStringLiteral("SELECT block FROM event_block_overflow WHERE field = ?"),
                           {int(term.field)}, error)) {
            return std::nullopt;
        }
        while (query.next(error))
            blocks[query.intAt(0)] = -1;
        if (!error->isEmpty())
            return std::nullopt;
        if (i == 0) {
            candidates = std::move(blocks);
            continue;
        }
        for (auto it = candidates.begin(); it != candidates.end();) {
            if (blocks.count(it->first)) {
                it->second = -1; // several terms: only a scan can count the rows
                ++it;
            } else {
                it = candidates.erase(it);
            }
        }
    }
    BlockPlan plan;
    plan.countFromSummaries =
        terms.size() == 1 && filter.text.isEmpty() && !filter.fromMs && !filter.toMs;
    plan.blocks.reserve(qsizetype(candidates.size()));
    for (const auto &[block, events] : candidates)
        plan.blocks.append({block, plan.countFromSummaries ? events : -1});
    return plan;
}

qint64 WorkspaceReader::countEvents(const EventFilter &filter)
{
    ReadTransaction transaction(m_db);
    QString error;
    const std::optional<BlockPlan> plan = planBlocks(filter, &error);
    if (!error.isEmpty()) {
        fail(QStringLiteral("count events"), error);
        return -1;
    }
    if (!plan) {
        const SqlFilter sql = buildFilter(filter);
        QSqlQuery query(m_db);
        if (!prepareAndBind(query, u"SELECT count(*) FROM events" + sql.where, sql.values) ||
            !query.next()) {
            fail(QStringLiteral("count events"), query.lastError().text());
            return -1;
        }
        return query.value(0).toLongLong();
    }
    qint64 total = 0;
    QList<BlockPlan::Block> toScan;
    for (const BlockPlan::Block &entry : plan->blocks) {
        if (entry.events >= 0)
            total += entry.events;
        else
            toScan.append(entry);
    }
    for (const auto &[first, last] : rowRanges(toScan)) {
        const SqlFilter sql = buildFilter(filter, first, last);
        store::Statement query;
        if (!prepareNative(query, m_db, u"SELECT count(*) FROM events" + sql.where, sql.values,
                           &error) ||
            !query.next(&error)) {
            fail(QStringLiteral("count events"), error);
            return -1;
        }
        total += query.intAt(0);
    }
    return total;
}

QList<StoredEvent> WorkspaceReader::fetchPage(const EventFilter &filter, qint64 afterRowId,
                                              int limit)
{
    QList<StoredEvent> page;
    if (limit <= 0)
        return page;
    ReadTransaction transaction(m_db);
    QString error;
    const std::optional<BlockPlan> plan = planBlocks(filter, &error);
    if (!error.isEmpty()) {
        fail(QStringLiteral("fetch events"), error);
        return page;
    }
    // Without summarized terms: one query over every row after the page start. With them: the
    // candidate blocks in order, until the page is full.
    QList<std::pair<qint64, qint64>> ranges = {{afterRowId + 1, 0}};
    if (plan)
        ranges = rowRanges(plan->blocks);
    page.reserve(limit);
    for (const auto &[first, last] : std::as_const(ranges)) {
        if (last > 0 && last <= afterRowId)
            continue;
        SqlFilter sql = buildFilter(filter, qMax(first, afterRowId + 1), last);
        sql.values << limit - int(page.size());
        store::Statement query;
        if (!prepareNative(query, m_db,
                           u"SELECT id," + store::eventColumnList() + u" FROM events" + sql.where +
                               u" ORDER BY id LIMIT ?",
                           sql.values, &error)) {
            fail(QStringLiteral("fetch events"), error);
            return page;
        }
        while (query.next(&error)) {
            StoredEvent stored;
            stored.rowId = query.intAt(0);
            stored.sourceId = store::readEvent(query, 1, stored.event);
            stored.event.source = sourcePath(stored.sourceId);
            page.append(std::move(stored));
        }
        if (!error.isEmpty()) {
            fail(QStringLiteral("fetch events"), error);
            return page;
        }
        if (page.size() >= limit)
            break;
    }
    return page;
}

std::optional<StoredEvent> WorkspaceReader::eventByRowId(qint64 rowId)
{
    store::Statement query;
    QString error;
    if (!prepareNative(query, m_db,
                       u"SELECT id," + store::eventColumnList() + u" FROM events WHERE id = ?",
                       {rowId}, &error) ||
        !query.next(&error)) {
        return std::nullopt;
    }
    StoredEvent stored;
    stored.rowId = rowId;
    stored.sourceId = store::readEvent(query, 1, stored.event);
    stored.event.source = sourcePath(stored.sourceId);
    return stored;
}

WorkspaceReader::TimeOrderedCursor::TimeOrderedCursor(WorkspaceReader &reader)
    : m_reader(reader), m_query(std::make_unique<store::Statement>())
{
}

WorkspaceReader::TimeOrderedCursor::~TimeOrderedCursor() = default;

bool WorkspaceReader::TimeOrderedCursor::next(int max, QList<RequestEvent> *chunk)
{
    if (m_done)
        return false;
    const qsizetype before = chunk->size();
    QString error;
    while (chunk->size() - before < max) {
        if (!m_query->next(&error)) {
            m_done = true;
            if (!error.isEmpty())
                m_error = QStringLiteral("read events: ") + error;
            break;
        }
        RequestEvent event;
        const qint64 sourceId = store::readEvent(*m_query, 0, event);
        event.source = m_reader.sourcePath(sourceId);
        chunk->append(std::move(event));
    }
    return chunk->size() > before;
}

std::unique_ptr<WorkspaceReader::TimeOrderedCursor>
WorkspaceReader::timeOrdered(const EventFilter &filter, qint64 upToRowId)
{
    const SqlFilter sql = buildFilter(filter, 0, upToRowId);
    // One forward-only statement: SQLite streams rows off the ts_ms index without
    // materialising the result, and the read transaction gives a consistent snapshot even
    // while the writer keeps appending.
    std::unique_ptr<TimeOrderedCursor> cursor(new TimeOrderedCursor(*this));
    QString error;
    if (!prepareNative(*cursor->m_query, m_db,
                       u"SELECT " + store::eventColumnList() + u" FROM events" + sql.where +
                           u" ORDER BY ts_ms, id",
                       sql.values, &error)) {
        fail(QStringLiteral("read events"), error);
        return nullptr;
    }
    return cursor;
}

bool WorkspaceReader::forEachEventInTimeOrder(
    int chunkSize, const std::function<bool(const QList<RequestEvent> &chunk)> &callback,
    const EventFilter &filter, qint64 upToRowId)
{
    chunkSize = qMax(1, chunkSize);
    const std::unique_ptr<TimeOrderedCursor> cursor = timeOrdered(filter, upToRowId);
    if (!cursor)
        return false;
    QList<RequestEvent> chunk;
    chunk.reserve(chunkSize);
    while (cursor->next(chunkSize, &chunk)) {
        if (!callback(chunk))
            return true;
        chunk.clear();
    }
    if (cursor->failed()) {
        m_error = cursor->errorString();
        return false;
    }
    return true;
}

qint64 WorkspaceReader::lastEventRowId()
{
    QSqlQuery query(m_db);
    if (!query.exec(QStringLiteral("SELECT coalesce(max(id), 0) FROM events")) || !query.next()) {
        fail(QStringLiteral("read the last event"), query.lastError().text());
        return -1;
    }
    return query.value(0).toLongLong();
}

qint64 WorkspaceReader::dataVersion()
{
    QSqlQuery query(m_db);
    if (!query.exec(QStringLiteral("PRAGMA data_version")) || !query.next()) {
        fail(QStringLiteral("read the data version"), query.lastError().text());
        return -1;
    }
    return query.value(0).toLongLong();
}

std::optional<std::pair<qint64, qint64>> WorkspaceReader::timeRange()
{
    QSqlQuery query(m_db);
    if (!query.exec(QStringLiteral("SELECT min(ts_ms), max(ts_ms) FROM events")) || !query.next() ||
        query.value(0).isNull()) {
        return std::nullopt;
    }
    return std::make_pair(query.value(0).toLongLong(), query.value(1).toLongLong());
}

QList<SourceRecord> WorkspaceReader::sources()
{
    QList<SourceRecord> result;
    QSqlQuery query(m_db);
    if (!query.exec(u"SELECT " + store::sourceColumns() + u" FROM sources ORDER BY id")) {
        fail(QStringLiteral("list sources"), query.lastError().text());
        return result;
    }
    while (query.next()) {
        const SourceRecord source = store::sourceFromQuery(query);
        m_sourcePaths.insert(source.id, source.path);
        result.append(source);
    }
    return result;
}

qint64 WorkspaceReader::countMalformed(qint64 sourceId)
{
    QSqlQuery query(m_db);
    const bool ok =
        sourceId > 0
            ? prepareAndBind(query,
                             QStringLiteral("SELECT count(*) FROM malformed WHERE source_id = ?"),
                             {sourceId})
            : query.exec(QStringLiteral("SELECT count(*) FROM malformed"));
    if (!ok || !query.next()) {
        fail(QStringLiteral("count malformed records"), query.lastError().text());
        return -1;
    }
    return query.value(0).toLongLong();
}

QList<StoredMalformed> WorkspaceReader::malformed(qint64 sourceId, qint64 afterRowId, int limit)
{
    QList<StoredMalformed> result;
    QSqlQuery query(m_db);
    query.setForwardOnly(true);
    const QString sql = sourceId > 0 ? QStringLiteral("SELECT id, source_id, line, reason FROM "
                                                      "malformed WHERE source_id = ? AND id > ? "
                                                      "ORDER BY id LIMIT ?")
                                     : QStringLiteral("SELECT id, source_id, line, reason FROM "
                                                      "malformed WHERE id > ? ORDER BY id LIMIT ?");
    const QVariantList values =
        sourceId > 0 ? QVariantList{sourceId, afterRowId, limit} : QVariantList{afterRowId, limit};
    if (!prepareAndBind(query, sql, values)) {
        fail(QStringLiteral("list malformed records"), query.lastError().text());
        return result;
    }
    while (query.next()) {
        StoredMalformed stored;
        stored.rowId = query.value(0).toLongLong();
        stored.sourceId = query.value(1).toLongLong();
        stored.record.source = sourcePath(stored.sourceId);
        stored.record.line = query.value(2).toLongLong();
        stored.record.reason = query.value(3).toString();
        result.append(std::move(stored));
    }
    return result;
}

QList<LedgerEntry> WorkspaceReader::ledger()
{
    QList<LedgerEntry> result;
    QSqlQuery query(m_db);
    if (!query.exec(QStringLiteral("SELECT source_id, committed_offset, committed_line, events, "
                                   "malformed, complete, updated_ms FROM import_ledger "
                                   "ORDER BY source_id"))) {
        fail(QStringLiteral("read import ledger"), query.lastError().text());
        return result;
    }
    while (query.next()) {
        LedgerEntry entry;
        entry.sourceId = query.value(0).toLongLong();
        entry.committedOffset = query.value(1).toLongLong();
        entry.committedLine = query.value(2).toLongLong();
        entry.events = query.value(3).toLongLong();
        entry.malformed = query.value(4).toLongLong();
        entry.complete = query.value(5).toLongLong() != 0;
        entry.updatedMs = query.value(6).toLongLong();
        result.append(entry);
    }
    return result;
}

std::optional<QString> WorkspaceReader::setting(const QString &key)
{
    QSqlQuery query(m_db);
    if (!prepareAndBind(query, QStringLiteral("SELECT value FROM settings WHERE key = ?"), {key}) ||
        !query.next()) {
        return std::nullopt;
    }
    return query.value(0).toString();
}

bool WorkspaceReader::setSetting(const QString &key, const QString &value)
{
    QSqlQuery query(m_db);
    if (!prepareAndBind(query,
                        QStringLiteral("INSERT INTO settings(key, value) VALUES(?, ?) "
                                       "ON CONFLICT(key) DO UPDATE SET value = excluded.value"),
                        {key, value})) {
        return fail(QStringLiteral("set setting"), query.lastError().text());
    }
    return true;
}

} // namespace ts
