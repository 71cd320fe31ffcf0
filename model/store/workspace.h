#pragma once
// A workspace is one SQLite file (QtSql, QSQLITE) holding imported events with their
// provenance, malformed records, an import ledger and settings. This class is the small,
// synchronous side of it: create / migrate the schema, register sources, read and reset the
// ledger, settings. Bulk writes go through WorkspaceWriter (its own thread and connection),
// queries for views and reports through WorkspaceReader.
//
// Thread affinity: a Workspace owns one QSqlDatabase connection, usable only from the thread
// that called open() (a QtSql rule). Create one per thread that needs it.

#include <QByteArray>
#include <QList>
#include <QSqlDatabase>
#include <QString>

#include <optional>

namespace ts {

// Bumped whenever the schema changes; each step has a forward migration in workspace.cpp.
// 2: block summaries (event_blocks) replace the identity / status / error / lane indexes.
inline constexpr int kWorkspaceSchemaVersion = 2;

// Bytes of a file's head that identify it: an appended-to log keeps its head, a rotated or
// replaced one does not.
inline constexpr qint64 kFingerprintHeadBytes = 64 * 1024;

// What a file looks like now, computed before an import to find it in the workspace.
struct FileFingerprint
{
    QString path; // absolute
    qint64 size = 0;
    qint64 mtimeMs = 0;
    qint64 headLength = 0; // min(size, kFingerprintHeadBytes)
    QByteArray headHash;   // hex SHA-1 of the first headLength bytes

    // nullopt and *error set when the file cannot be read.
    static std::optional<FileFingerprint> compute(const QString &path, QString *error = nullptr);
    // Hex SHA-1 of the first `length` bytes of `path` (nullopt if shorter or unreadable).
    static std::optional<QByteArray> hashHead(const QString &path, qint64 length);
};

struct SourceRecord
{
    qint64 id = 0;
    QString path;     // absolute file path, "-" for stdin, or a live source name
    QString format;   // reader format name ("ndjson", "har", ...)
    qint64 size = -1; // bytes when its import last completed, -1 unknown
    qint64 mtimeMs = -1;
    qint64 headLength = 0; // bytes covered by fingerprint
    QByteArray fingerprint;
    qint64 addedMs = 0;
};

struct LedgerEntry
{
    qint64 sourceId = 0;
    qint64 committedOffset = 0; // byte offset just past the last stored record
    qint64 committedLine = 0;   // line number of that record
    qint64 events = 0;          // events stored for this source
    qint64 malformed = 0;       // malformed records stored for this source
    bool complete = false;      // the reader reached the end of the source
    qint64 updatedMs = 0;
};

class Workspace
{
public:
    Workspace();
    ~Workspace();
    Workspace(const Workspace &) = delete;
    Workspace &operator=(const Workspace &) = delete;

    // Opens (creating if needed) the workspace file and migrates its schema forward. Refuses a
    // file written by a newer Throttlescope or one that is not a workspace.
    bool open(const QString &path);
    void close();
    [[nodiscard]] bool isOpen() const;
    [[nodiscard]] QString path() const { return m_path; }
    [[nodiscard]] QString errorString() const { return m_error; }
    [[nodiscard]] int schemaVersion() const;

    // Sources. A file source matches when its path is the same and the file still starts with
    // the bytes its fingerprint covers.
    std::optional<SourceRecord> findFileSource(const FileFingerprint &fingerprint);
    std::optional<SourceRecord> findSourceByPath(const QString &path);
    // Returns the new source id, 0 on failure.
    qint64 addSource(const QString &path, const QString &format, qint64 mtimeMs, qint64 headLength,
                     const QByteArray &fingerprint);
    // Re-fingerprints a source over more of its (grown) head; called when an import continues.
    bool updateSourceFingerprint(qint64 sourceId, qint64 headLength, const QByteArray &fingerprint,
                                 qint64 mtimeMs);
    [[nodiscard]] QList<SourceRecord> sources();

    std::optional<LedgerEntry> ledger(qint64 sourceId);
    // Deletes the events, malformed records and ledger entry of a source, in one transaction:
    // used when a partial import of a format that cannot resume must start over.
    bool discardSourceData(qint64 sourceId);

    [[nodiscard]] std::optional<QString> setting(const QString &key);
    bool setSetting(const QString &key, const QString &value);
    bool removeSetting(const QString &key);

    // Makes sure the index the reader's time queries use exists (it is part of the schema since
    // version 2; the other filters use block summaries, kept by the writer).
    bool createQueryIndexes();

    [[nodiscard]] QSqlDatabase database() const { return m_db; }

private:
    bool fail(const QString &what, const QString &detail);

    QString m_path;
    QString m_connectionName;
    QSqlDatabase m_db;
    QString m_error;
};

} // namespace ts
