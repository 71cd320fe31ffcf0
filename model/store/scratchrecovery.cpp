#include "store/scratchrecovery.h"

#include "engine/scratchworkspace.h"

#include <QFile>
#include <QLocale>

#include <sqlite3.h>

#include <memory>
#include <optional>

namespace ts {

namespace {

struct CloseDatabase
{
    void operator()(sqlite3 *db) const { sqlite3_close(db); }
};
using Database = std::unique_ptr<sqlite3, CloseDatabase>;

// Read-write, as SQLite needs to replay a WAL a dead process left (its -shm is rebuilt).
Database openOrphan(const QString &path, QString *error)
{
    sqlite3 *raw = nullptr;
    const int rc =
        sqlite3_open_v2(QFile::encodeName(path).constData(), &raw, SQLITE_OPEN_READWRITE, nullptr);
    Database db(raw);
    if (rc != SQLITE_OK) {
        *error = QString::fromUtf8(raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc));
        return {};
    }
    sqlite3_busy_timeout(raw, 2000);
    return db;
}

// What an orphan holds: nullopt when it cannot be told now (kept, not offered); {0, 0} when it
// is not a workspace (nothing to recover).
std::optional<std::pair<qint64, qint64>> countContents(const QString &path)
{
    QString error;
    const Database db = openOrphan(path, &error);
    if (!db)
        return std::nullopt;
    sqlite3_stmt *raw = nullptr;
    const int rc = sqlite3_prepare_v2(
        db.get(), "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM sources)", -1, &raw,
        nullptr);
    const std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> statement(raw,
                                                                               &sqlite3_finalize);
    if (rc == SQLITE_NOTADB || (rc == SQLITE_ERROR && !raw))
        return std::pair<qint64, qint64>{0, 0}; // not a workspace, or an empty file
    if (rc != SQLITE_OK || sqlite3_step(raw) != SQLITE_ROW)
        return std::nullopt;
    return std::pair<qint64, qint64>{sqlite3_column_int64(raw, 0), sqlite3_column_int64(raw, 1)};
}

} // namespace

QList<OrphanedScratch> findOrphanedScratchWorkspaces(const QString &directory)
{
    QList<OrphanedScratch> found;
    const QStringList orphans =
        orphanedScratchWorkspaces(directory.isEmpty() ? scratchWorkspaceDirectory() : directory);
    for (const QString &path : orphans) {
        const auto contents = countContents(path);
        if (!contents)
            continue; // unreadable now: neither offered nor removed
        if (contents->first == 0) {
            removeScratchWorkspace(path); // no event: nothing anyone acknowledged
            continue;
        }
        found.append(OrphanedScratch{path, contents->first, contents->second});
    }
    return found;
}

bool recoverScratchWorkspace(const QString &orphan, const QString &destination, QString *error)
{
    QString problem;
    if (QFile::exists(destination)) {
        problem = QStringLiteral("%1 exists already").arg(destination);
    } else if (createPrivateFile(destination, &problem)) {
        // VACUUM INTO writes what is committed (the orphan's WAL replayed) as one new file,
        // private like the scratch file (created empty above, which VACUUM INTO accepts).
        const Database db = openOrphan(orphan, &problem);
        sqlite3_stmt *raw = nullptr;
        if (db && sqlite3_prepare_v2(db.get(), "VACUUM INTO ?", -1, &raw, nullptr) == SQLITE_OK) {
            const QByteArray target = QFile::encodeName(destination);
            sqlite3_bind_text(raw, 1, target.constData(), int(target.size()), SQLITE_TRANSIENT);
            if (sqlite3_step(raw) == SQLITE_DONE) {
                sqlite3_finalize(raw);
                removeScratchWorkspace(orphan);
                return true;
            }
        }
        if (db)
            problem = QString::fromUtf8(sqlite3_errmsg(db.get()));
        sqlite3_finalize(raw);
        QFile::remove(destination);
    }
    if (error)
        *error = QStringLiteral("could not recover %1: %2").arg(orphan, problem);
    return false;
}

QString recoveryQuestion(const OrphanedScratch &orphan)
{
    const QLocale english(QLocale::English, QLocale::UnitedStates);
    return QStringLiteral("Recover %1 events received before the crash?")
        .arg(english.toString(orphan.events));
}

} // namespace ts
