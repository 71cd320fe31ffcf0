#include "workspace.h"

#include "storesql.h"

#include <QCryptographicHash>
#include <QFile>
#include <QFileInfo>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

namespace ts {

using store::execSql;

std::optional<QByteArray> FileFingerprint::hashHead(const QString &path, qint64 length)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return std::nullopt;
    const QByteArray head = file.read(length);
    if (head.size() != length)
        return std::nullopt;
    return QCryptographicHash::hash(head, QCryptographicHash::Sha1).toHex();
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
    const QByteArray head = file.read(kFingerprintHeadBytes);
    fingerprint.headLength = head.size();
    fingerprint.headHash = QCryptographicHash::hash(head, QCryptographicHash::Sha1).toHex();
    return fingerprint;
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

namespace {

SourceRecord sourceFromQuery(const QSqlQuery &query)
{
    // Column order of kSourceColumns.
    SourceRecord source;
    source.id = query.value(0).toLongLong();
    source.path = query.value(1).toString();
    source.format = query.value(2).toString();
    source.size = query.value(3).toLongLong();
    source.mtimeMs = query.value(4).toLongLong();
    source.headLength = query.value(5).toLongLong();
    source.fingerprint = query.value(6).toString().toLatin1();
    source.addedMs = query.value(7).toLongLong();
    return source;
}

const QString kSourceColumns =
    QStringLiteral("id,path,format,size,mtime_ms,head_length,fingerprint,added_ms");

} // namespace

std::optional<SourceRecord> Workspace::findFileSource(const FileFingerprint &fingerprint)
{
    QSqlQuery query(m_db);
    query.prepare(u"SELECT " + kSourceColumns + u" FROM sources WHERE path = ? ORDER BY id DESC");
    query.addBindValue(fingerprint.path);
    if (!query.exec()) {
        fail(QStringLiteral("find source"), query.lastError().text());
        return std::nullopt;
    }
    // Newest first: after a file was replaced, the latest source at that path is the candidate.
    while (query.next()) {
        const SourceRecord source = sourceFromQuery(query);
        if (source.headLength > fingerprint.size)
            continue; // shorter than what we saw: truncated or replaced
        if (source.headLength == fingerprint.headLength) {
            if (source.fingerprint == fingerprint.headHash)
                return source;
            continue;
        }
        // The file grew since: compare the head we know.
        const auto hash = FileFingerprint::hashHead(fingerprint.path, source.headLength);
        if (hash && *hash == source.fingerprint)
            return source;
    }
    return std::nullopt;
}

std::optional<SourceRecord> Workspace::findSourceByPath(const QString &path)
{
    QSqlQuery query(m_db);
    query.prepare(u"SELECT " + kSourceColumns +
                  u" FROM sources WHERE path = ? ORDER BY id DESC "
                  u"LIMIT 1");
    query.addBindValue(path);
    if (!query.exec() || !query.next())
        return std::nullopt;
    return sourceFromQuery(query);
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
    query.addBindValue(QString::fromLatin1(fingerprint));
    query.addBindValue(store::nowMs());
    if (!query.exec()) {
        fail(QStringLiteral("add source"), query.lastError().text());
        return 0;
    }
    return query.lastInsertId().toLongLong();
}

bool Workspace::updateSourceFingerprint(qint64 sourceId, qint64 headLength,
                                        const QByteArray &fingerprint, qint64 mtimeMs)
{
    QSqlQuery query(m_db);
    query.prepare(QStringLiteral(
        "UPDATE sources SET head_length = ?, fingerprint = ?, mtime_ms = ? WHERE id = ?"));
    query.addBindValue(headLength);
    query.addBindValue(QString::fromLatin1(fingerprint));
    query.addBindValue(mtimeMs);
    query.addBindValue(sourceId);
    if (!query.exec())
        return fail(QStringLiteral("update source"), query.lastError().text());
    return true;
}

QList<SourceRecord> Workspace::sources()
{
    QList<SourceRecord> result;
    QSqlQuery query(m_db);
    if (!query.exec(u"SELECT " + kSourceColumns + u" FROM sources ORDER BY id"))
        return result;
    while (query.next())
        result.append(sourceFromQuery(query));
    return result;
}

std::optional<LedgerEntry> Workspace::ledger(qint64 sourceId)
{
    QSqlQuery query(m_db);
    query.prepare(QStringLiteral("SELECT committed_offset, committed_line, events, malformed, "
                                 "complete, updated_ms FROM import_ledger WHERE source_id = ?"));
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
    return entry;
}

bool Workspace::discardSourceData(qint64 sourceId)
{
    QString error;
    if (!execSql(m_db, QStringLiteral("BEGIN IMMEDIATE"), &error))
        return fail(QStringLiteral("discard source data"), error);
    // The blocks holding rows of this source are summarized again from what remains.
    qint64 firstBlock = -1;
    qint64 lastBlock = -1;
    {
        QSqlQuery query(m_db);
        query.prepare(QStringLiteral("SELECT min(block), max(block) FROM event_blocks"
                                     " WHERE field = ? AND value = ?"));
        query.addBindValue(int(store::BlockField::Source));
        query.addBindValue(sourceId);
        if (!query.exec()) {
            const QString detail = query.lastError().text();
            execSql(m_db, QStringLiteral("ROLLBACK"), &error);
            return fail(QStringLiteral("discard source data"), detail);
        }
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
        if (!query.exec()) {
            const QString detail = query.lastError().text();
            execSql(m_db, QStringLiteral("ROLLBACK"), &error);
            return fail(QStringLiteral("discard source data"), detail);
        }
    }
    for (const QString &sql : std::as_const(summaryStatements)) {
        QString detail;
        if (!execSql(m_db, sql, &detail)) {
            execSql(m_db, QStringLiteral("ROLLBACK"), &error);
            return fail(QStringLiteral("discard source data"), detail);
        }
    }
    if (!execSql(m_db, QStringLiteral("COMMIT"), &error))
        return fail(QStringLiteral("discard source data"), error);
    return true;
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
