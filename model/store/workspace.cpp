#include "workspace.h"

#include "storesql.h"

#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

#include <sqlite3.h>

namespace ts {

using store::execSql;

bool looksLikeWorkspaceFile(const QString &path)
{
    // The database header: "SQLite format 3\0" at 0, the application id at 68 (big-endian).
    constexpr qint64 kHeaderBytes = 72;
    QFile file(path);
    if (file.open(QIODevice::ReadOnly)) {
        const QByteArray header = file.read(kHeaderBytes);
        if (header.size() == kHeaderBytes) {
            const auto byteAt = [&header](int i) { return quint32(quint8(header.at(i))); };
            const quint32 applicationId =
                byteAt(68) << 24 | byteAt(69) << 16 | byteAt(70) << 8 | byteAt(71);
            return header.startsWith(QByteArrayView("SQLite format 3\0", 16)) &&
                   applicationId == quint32(kWorkspaceApplicationId);
        }
    }
    const QString suffix = QFileInfo(path).suffix().toLower();
    return suffix == QLatin1StringView(kWorkspaceSuffix) || suffix == u"db" || suffix == u"tsdb" ||
           suffix == u"sqlite";
}

std::optional<FileFingerprint> FileFingerprint::compute(const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error)
            *error = path + u": " + file.errorString();
        return std::nullopt;
    }
    const QFileInfo info(file);
    FileFingerprint fingerprint;
    // Canonical: the same file reached through a symlink or "./" is the same source.
    fingerprint.path = info.canonicalFilePath();
    if (fingerprint.path.isEmpty())
        fingerprint.path = info.absoluteFilePath();
    fingerprint.size = file.size();
    fingerprint.mtimeMs = info.lastModified().toMSecsSinceEpoch();
    fingerprint.head = file.read(kFingerprintHeadBytes);
    fingerprint.headLength = fingerprint.head.size();
    fingerprint.headHash = headHashOf(fingerprint.head);
    return fingerprint;
}

std::optional<QByteArray> FileFingerprint::hashOfPrefix(qint64 length) const
{
    if (length > headLength)
        return std::nullopt;
    if (length == headLength)
        return headHash;
    return headHashOf(QByteArrayView(head).first(length));
}

Workspace::Workspace() = default;

Workspace::~Workspace()
{
    close();
}

bool Workspace::open(const QString &path)
{
    close();
    m_path = path;
    m_error.clear();
    m_connectionName = store::uniqueConnectionName(u"control");
    return store::openConnection(m_db, m_connectionName, path, store::ConnectionRole::Control,
                                 &m_error);
}

void Workspace::close()
{
    if (!m_connectionName.isEmpty())
        store::closeConnection(m_db, m_connectionName);
    m_connectionName.clear();
}

bool Workspace::isOpen() const
{
    return m_db.isOpen();
}

int Workspace::schemaVersion() const
{
    QSqlDatabase db = m_db;
    return int(store::queryInt(db, QStringLiteral("PRAGMA user_version"), -1));
}

bool Workspace::fail(const QString &what, const QString &detail)
{
    m_error = what + u": " + detail;
    return false;
}

bool Workspace::writeTransaction(const std::function<bool()> &work)
{
    sqlite3 *handle = store::nativeHandle(m_db);
    if (handle && sqlite3_get_autocommit(handle) == 0)
        return work(); // part of the caller's transaction
    QString error;
    if (!execSql(m_db, QStringLiteral("BEGIN IMMEDIATE"), &error))
        return fail(QStringLiteral("begin transaction"), error);
    if (!work()) {
        QString ignored;
        execSql(m_db, QStringLiteral("ROLLBACK"), &ignored);
        return false;
    }
    if (!execSql(m_db, QStringLiteral("COMMIT"), &error)) {
        QString ignored;
        execSql(m_db, QStringLiteral("ROLLBACK"), &ignored);
        return fail(QStringLiteral("commit"), error);
    }
    return true;
}

std::optional<FileSourceMatch> Workspace::matchFileSource(const FileFingerprint &fingerprint)
{
    FileSourceMatch match;
    QSqlQuery query(m_db);
    query.setForwardOnly(true);
    // Newest first: among equally good matches the latest source is the one that continues.
    if (!query.exec(u"SELECT " + store::sourceColumns() +
                    u" FROM sources WHERE head_hash IS NOT NULL ORDER BY id DESC")) {
        fail(QStringLiteral("find source"), query.lastError().text());
        return std::nullopt;
    }
    std::optional<SourceRecord> latestAtPath;
    bool latestAtPathMatches = false;
    while (query.next()) {
        const SourceRecord source = store::sourceFromQuery(query);
        if (!source.isFileImport())
            continue;
        const bool samePath = source.path == fingerprint.path;
        bool headMatches = false;
        if (source.headLength == 0) {
            // An empty head (an empty file) is a prefix of everything: only the same path
            // says it is the same file.
            headMatches = samePath;
        } else {
            // A head shorter than ours was taken when the file was smaller: the file grew if
            // it still starts with it (the head grows with the file).
            const auto hash = fingerprint.hashOfPrefix(source.headLength);
            headMatches = hash && *hash == source.headHash;
        }
        if (samePath && !latestAtPath) {
            latestAtPath = source;
            latestAtPathMatches = headMatches;
        }
        // The longest head that matches is the most specific content.
        if (headMatches && (!match.source || source.headLength > match.source->headLength))
            match.source = source;
    }
    if (match.source)
        match.ledger = ledger(match.source->id);
    if (latestAtPath && !latestAtPathMatches) {
        match.replacedAtPath = latestAtPath;
        match.replacedLedger = ledger(latestAtPath->id);
    }
    return match;
}

std::optional<SourceRecord> Workspace::findSourceByPath(const QString &path)
{
    QSqlQuery query(m_db);
    query.prepare(u"SELECT " + store::sourceColumns() +
                  u" FROM sources WHERE path = ? ORDER BY id DESC LIMIT 1");
    query.addBindValue(path);
    if (!query.exec() || !query.next())
        return std::nullopt;
    return store::sourceFromQuery(query);
}

qint64 Workspace::addSource(const QString &path, const QString &format, qint64 mtimeMs,
                            qint64 headLength, const QByteArray &fingerprint)
{
    QSqlQuery query(m_db);
    query.prepare(QStringLiteral("INSERT INTO sources(path,format,size,mtime_ms,head_length,"
                                 "fingerprint,added_ms) VALUES(?,?,-1,?,?,?,?)"));
    query.addBindValue(path);
    query.addBindValue(format);
    query.addBindValue(mtimeMs);
    query.addBindValue(headLength);
    // fingerprint is NOT NULL, and an empty QByteArray binds as NULL: a live source without an
    // identity of its own is stored with an empty one instead of not at all.
    query.addBindValue(fingerprint.isEmpty() ? QStringLiteral("")
                                             : QString::fromLatin1(fingerprint));
    query.addBindValue(store::nowMs());
    if (!query.exec()) {
        fail(QStringLiteral("add source"), query.lastError().text());
        return 0;
    }
    return query.lastInsertId().toLongLong();
}

qint64 Workspace::addFileSource(const FileFingerprint &fingerprint, const QString &format)
{
    QSqlQuery query(m_db);
    query.prepare(QStringLiteral("INSERT INTO sources(path,format,size,mtime_ms,head_length,"
                                 "fingerprint,added_ms,head_hash,seen_size)"
                                 " VALUES(?,?,-1,?,?,?,?,?,?)"));
    query.addBindValue(fingerprint.path);
    query.addBindValue(format);
    query.addBindValue(fingerprint.mtimeMs);
    query.addBindValue(fingerprint.headLength);
    query.addBindValue(QString::fromLatin1(fingerprint.headHash));
    query.addBindValue(store::nowMs());
    query.addBindValue(QString::fromLatin1(fingerprint.headHash));
    query.addBindValue(fingerprint.size);
    if (!query.exec()) {
        fail(QStringLiteral("add source"), query.lastError().text());
        return 0;
    }
    return query.lastInsertId().toLongLong();
}

bool Workspace::updateFileSource(qint64 sourceId, const FileFingerprint &fingerprint)
{
    QSqlQuery query(m_db);
    query.prepare(QStringLiteral("UPDATE sources SET path = ?, head_length = ?, fingerprint = ?,"
                                 " head_hash = ?, mtime_ms = ?, seen_size = ? WHERE id = ?"));
    query.addBindValue(fingerprint.path);
    query.addBindValue(fingerprint.headLength);
    query.addBindValue(QString::fromLatin1(fingerprint.headHash));
    query.addBindValue(QString::fromLatin1(fingerprint.headHash));
    query.addBindValue(fingerprint.mtimeMs);
    query.addBindValue(fingerprint.size);
    query.addBindValue(sourceId);
    if (!query.exec())
        return fail(QStringLiteral("update source"), query.lastError().text());
    return true;
}

QList<SourceRecord> Workspace::sources()
{
    QList<SourceRecord> result;
    QSqlQuery query(m_db);
    if (!query.exec(u"SELECT " + store::sourceColumns() + u" FROM sources ORDER BY id"))
        return result;
    while (query.next())
        result.append(store::sourceFromQuery(query));
    return result;
}

std::optional<LedgerEntry> Workspace::ledger(qint64 sourceId)
{
    QSqlQuery query(m_db);
    query.prepare(
        QStringLiteral("SELECT committed_offset, committed_line, events, malformed, "
                       "complete, updated_ms, owner FROM import_ledger WHERE source_id = ?"));
    query.addBindValue(sourceId);
    if (!query.exec() || !query.next())
        return std::nullopt;
    LedgerEntry entry;
    entry.sourceId = sourceId;
    entry.committedOffset = query.value(0).toLongLong();
    entry.committedLine = query.value(1).toLongLong();
    entry.events = query.value(2).toLongLong();
    entry.malformed = query.value(3).toLongLong();
    entry.complete = query.value(4).toLongLong() != 0;
    entry.updatedMs = query.value(5).toLongLong();
    entry.owner = query.value(6).toString().toLatin1();
    return entry;
}

bool Workspace::claimLedger(qint64 sourceId, const QByteArray &owner)
{
    QSqlQuery query(m_db);
    query.prepare(QStringLiteral(
        "INSERT INTO import_ledger(source_id, committed_offset, committed_line, complete,"
        " updated_ms, owner) VALUES(?, 0, 0, 0, ?, ?) ON CONFLICT(source_id) DO UPDATE SET"
        " owner = excluded.owner, complete = 0, updated_ms = excluded.updated_ms"));
    query.addBindValue(sourceId);
    query.addBindValue(store::nowMs());
    query.addBindValue(QString::fromLatin1(owner));
    if (!query.exec())
        return fail(QStringLiteral("claim source"), query.lastError().text());
    return true;
}

bool Workspace::discardSourceData(qint64 sourceId)
{
    return writeTransaction([&] { return discardSourceRows(sourceId); });
}

bool Workspace::discardSourceRows(qint64 sourceId)
{
    // The blocks holding rows of this source are summarized again from what remains.
    qint64 firstBlock = -1;
    qint64 lastBlock = -1;
    {
        QSqlQuery query(m_db);
        query.prepare(QStringLiteral("SELECT min(block), max(block) FROM event_blocks"
                                     " WHERE field = ? AND value = ?"));
        query.addBindValue(int(store::BlockField::Source));
        query.addBindValue(sourceId);
        if (!query.exec())
            return fail(QStringLiteral("discard source data"), query.lastError().text());
        if (query.next() && !query.value(0).isNull()) {
            firstBlock = query.value(0).toLongLong();
            lastBlock = query.value(1).toLongLong();
        }
    }
    QStringList summaryStatements;
    if (firstBlock >= 0) {
        const QString blocks =
            QStringLiteral("block BETWEEN %1 AND %2").arg(firstBlock).arg(lastBlock);
        summaryStatements << u"DELETE FROM event_blocks WHERE " + blocks
                          << u"DELETE FROM event_block_overflow WHERE " + blocks
                          << store::blockSummaryRebuildStatements(
                                 QStringLiteral("id BETWEEN %1 AND %2")
                                     .arg(store::eventBlockFirstRow(firstBlock))
                                     .arg(store::eventBlockLastRow(lastBlock)));
    }
    const QStringList statements = {
        QStringLiteral("DELETE FROM events WHERE source_id = ?"),
        QStringLiteral("DELETE FROM malformed WHERE source_id = ?"),
        QStringLiteral("DELETE FROM import_ledger WHERE source_id = ?"),
        QStringLiteral("UPDATE sources SET size = -1 WHERE id = ?"),
    };
    for (const QString &sql : statements) {
        QSqlQuery query(m_db);
        query.prepare(sql);
        query.addBindValue(sourceId);
        if (!query.exec())
            return fail(QStringLiteral("discard source data"), query.lastError().text());
    }
    for (const QString &sql : std::as_const(summaryStatements)) {
        QString detail;
        if (!execSql(m_db, sql, &detail))
            return fail(QStringLiteral("discard source data"), detail);
    }
    return true;
}

QList<IncompleteImport> incompleteImports(const QList<SourceRecord> &sources,
                                          const QList<LedgerEntry> &ledger)
{
    QHash<qint64, const LedgerEntry *> entries;
    for (const LedgerEntry &entry : ledger)
        entries.insert(entry.sourceId, &entry);
    QList<IncompleteImport> result;
    for (const SourceRecord &source : sources) {
        if (!source.isImport())
            continue;
        const LedgerEntry *entry = entries.value(source.id);
        if (entry && entry->complete)
            continue;
        result.append({source, entry ? entry->committedOffset : 0, source.seenSize});
    }
    return result;
}

std::optional<QByteArray> Workspace::pollCursor(qint64 sourceId)
{
    m_error.clear();
    QSqlQuery query(m_db);
    query.prepare(QStringLiteral("SELECT state FROM poll_cursors WHERE source_id = ?"));
    query.addBindValue(sourceId);
    if (!query.exec()) {
        fail(QStringLiteral("read poll cursor"), query.lastError().text());
        return std::nullopt;
    }
    if (!query.next())
        return std::nullopt;
    return query.value(0).toString().toUtf8();
}

std::optional<QList<PolledSourceRecord>> Workspace::polledSources()
{
    m_error.clear();
    QList<PolledSourceRecord> result;
    const std::optional<QList<SourceRecord>> all = [this]() -> std::optional<QList<SourceRecord>> {
        QSqlQuery query(m_db);
        if (!query.exec(u"SELECT " + store::sourceColumns() + u" FROM sources ORDER BY id")) {
            fail(QStringLiteral("list sources"), query.lastError().text());
            return std::nullopt;
        }
        QList<SourceRecord> sources;
        while (query.next())
            sources.append(store::sourceFromQuery(query));
        return sources;
    }();
    if (!all)
        return std::nullopt;
    QSqlQuery cursor(m_db);
    cursor.prepare(
        QStringLiteral("SELECT state, rows, updated_ms FROM poll_cursors WHERE source_id = ?"));
    for (const SourceRecord &source : *all) {
        if (!source.fingerprint.startsWith("poll:"))
            continue;
        PolledSourceRecord record;
        record.source = source;
        cursor.addBindValue(source.id);
        if (!cursor.exec()) {
            fail(QStringLiteral("read poll cursor"), cursor.lastError().text());
            return std::nullopt;
        }
        if (cursor.next()) {
            record.cursorState = cursor.value(0).toString().toUtf8();
            record.rows = cursor.value(1).toLongLong();
            record.updatedMs = cursor.value(2).toLongLong();
        }
        cursor.finish();
        result.append(record);
    }
    return result;
}

qint64 Workspace::ensurePolledSource(const QString &url, const QString &kind)
{
    m_error.clear();
    const QByteArray identity = PolledSourceRecord::fingerprintFor(url);
    QSqlQuery query(m_db);
    query.prepare(QStringLiteral("SELECT id FROM sources WHERE fingerprint = ? ORDER BY id LIMIT 1"));
    query.addBindValue(QString::fromLatin1(identity)); // as addSource stores it
    if (!query.exec()) {
        fail(QStringLiteral("find polled source"), query.lastError().text());
        return 0;
    }
    if (query.next())
        return query.value(0).toLongLong();
    return addSource(url, kind, store::nowMs(), 0, identity);
}

std::optional<QString> Workspace::setting(const QString &key)
{
    QSqlQuery query(m_db);
    query.prepare(QStringLiteral("SELECT value FROM settings WHERE key = ?"));
    query.addBindValue(key);
    if (!query.exec() || !query.next())
        return std::nullopt;
    return query.value(0).toString();
}

bool Workspace::setSetting(const QString &key, const QString &value)
{
    QSqlQuery query(m_db);
    query.prepare(QStringLiteral("INSERT INTO settings(key, value) VALUES(?, ?) "
                                 "ON CONFLICT(key) DO UPDATE SET value = excluded.value"));
    query.addBindValue(key);
    query.addBindValue(value);
    if (!query.exec())
        return fail(QStringLiteral("set setting"), query.lastError().text());
    return true;
}

bool Workspace::removeSetting(const QString &key)
{
    QSqlQuery query(m_db);
    query.prepare(QStringLiteral("DELETE FROM settings WHERE key = ?"));
    query.addBindValue(key);
    if (!query.exec())
        return fail(QStringLiteral("remove setting"), query.lastError().text());
    return true;
}

bool Workspace::createQueryIndexes()
{
    const QStringList statements = store::queryIndexStatements();
    for (const QString &sql : statements) {
        QString error;
        if (!execSql(m_db, sql, &error))
            return fail(QStringLiteral("create indexes"), error);
    }
    return true;
}

} // namespace ts
