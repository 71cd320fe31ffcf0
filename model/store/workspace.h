#pragma once
// A workspace is one SQLite file (QtSql, QSQLITE) holding imported events with their
// provenance, malformed records, an import ledger and settings. This class is the small,
// synchronous side of it: create / migrate the schema, register sources, read and reset the
// ledger, settings. Bulk writes go through WorkspaceWriter (its own thread and connection),
// queries for views and reports through WorkspaceReader.
//
// Thread affinity: a Workspace owns one QSqlDatabase connection, usable only from the thread
// that called open() (a QtSql rule). Create one per thread that needs it.

#include "core/contenthash.h"

#include <QByteArray>
#include <QList>
#include <QSqlDatabase>
#include <QString>

#include <functional>
#include <optional>

namespace ts {

// Bumped whenever the schema changes; each step has a forward migration in storesql.cpp.
// 2: block summaries (event_blocks) replace the identity / status / error / lane indexes.
// 3: sources are recognised by content (sources.head_hash, seen_size); the ledger names the
//    import run that owns a source (import_ledger.owner).
// 4: poll_cursors: where the incremental read of each polled store stands (model/poll).
// 5: events.weight: the requests a row stands for (push-down aggregates; NULL = 1).
// 6: events.refused: 'breaker' for a request the client's own breaker refused (NULL: none).
inline constexpr int kWorkspaceSchemaVersion = 6;

// 'TSWS' in PRAGMA application_id: tells a workspace apart from any other SQLite file. SQLite
// stores it big-endian at offset 68 of the file, where the workspace MIME type's magic looks
// (resources/desktop/throttlescope-mime.xml.in).
inline constexpr qint64 kWorkspaceApplicationId = 0x54535753;
// The extension of workspace files ("migration.tsws"); any name works, the content decides.
inline constexpr char kWorkspaceSuffix[] = "tsws";

// Whether the file at `path` is a workspace, by its content: the SQLite header with the
// application id 'TSWS'. A file too short to tell, or missing (a workspace still to be
// created), counts by its name: .tsws, or the .db / .tsdb / .sqlite names used before
// workspaces had their own extension. Reads 72 bytes; opens no database.
bool looksLikeWorkspaceFile(const QString &path);

// Bytes of a file's head that identify it: an appended-to log keeps its head, a rotated or
// replaced one does not.
inline constexpr qint64 kFingerprintHeadBytes = 64 * 1024;

// What a file looks like now, computed before an import to find it in the workspace.
struct FileFingerprint
{
    QString path; // canonical absolute path
    qint64 size = 0;
    qint64 mtimeMs = 0;
    qint64 headLength = 0; // min(size, kFingerprintHeadBytes)
    QByteArray headHash;   // hex SHA-1 of the first headLength bytes
    QByteArray head;       // those bytes (to compare shorter known heads without re-reading)

    // nullopt and *error set when the file cannot be read.
    static std::optional<FileFingerprint> compute(const QString &path, QString *error = nullptr);
    // Hex SHA-1 of the first `length` bytes (nullopt when the file is shorter).
    [[nodiscard]] std::optional<QByteArray> hashOfPrefix(qint64 length) const;
};

struct SourceRecord
{
    qint64 id = 0;
    QString path;     // absolute file path, "-" for stdin, or a live source name
    QString format;   // reader format name ("ndjson", "har", ...)
    qint64 size = -1; // bytes when its import last completed, -1 unknown
    qint64 mtimeMs = -1;
    qint64 headLength = 0;  // bytes covered by headHash
    QByteArray fingerprint; // identity: head hash (file import), "stdin:UUID", "tail:DEV:INODE"...
    qint64 addedMs = 0;
    QByteArray headHash;  // content fingerprint (hex SHA-1 of the head), empty when none
    qint64 seenSize = -1; // the file's size when an import of it last started, -1 unknown

    // Imported by importFile() (a file, or standard input), as opposed to a live source
    // (tail, serve, the simulator, the dashboard's scratch sources).
    [[nodiscard]] bool isFileImport() const
    {
        return !headHash.isEmpty() && !fingerprint.startsWith("tail:");
    }
    [[nodiscard]] bool isStdinImport() const { return fingerprint.startsWith("stdin:"); }
    [[nodiscard]] bool isImport() const { return isFileImport() || isStdinImport(); }
};

// A source a poller stores (`throttlescope poll`, the dashboard's File > Add Source): its row
// in the sources table (path = the source URL, which holds no secret; fingerprint "poll:URL")
// and the cursor stored with the rows it covers.
struct PolledSourceRecord
{
    SourceRecord source;
    QByteArray cursorState; // empty: no row stored yet
    qint64 rows = 0;        // rows stored under the cursor
    qint64 updatedMs = 0;   // when a poller last stored rows and cursor (wall clock)

    static QByteArray fingerprintFor(const QString &url) { return "poll:" + url.toUtf8(); }
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
    QByteArray owner; // the import run that holds the source (ImportClaim::owner)
};

// An import that did not reach the end of its source: killed, cancelled, failed, or still
// running in another process. `report --workspace` lists them.
struct IncompleteImport
{
    SourceRecord source;
    qint64 committedBytes = 0; // what the ledger holds (0: no checkpoint yet)
    qint64 sizeBytes = -1;     // the source's size when the import started, -1 unknown
};
// The imports among `sources` whose ledger (from `ledger`) is missing or incomplete.
QList<IncompleteImport> incompleteImports(const QList<SourceRecord> &sources,
                                          const QList<LedgerEntry> &ledger);

// The known content a file continues, found by its head (Workspace::matchFileSource).
struct FileSourceMatch
{
    // The source whose head this file starts with (the longest such head wins): the same file,
    // appended to or not, or a renamed, rotated or copied one. nullopt: new content.
    std::optional<SourceRecord> source;
    std::optional<LedgerEntry> ledger; // of `source`
    // The latest source imported from this same path whose head the file no longer has: the
    // file was truncated and rewritten, or replaced (rotation), since.
    std::optional<SourceRecord> replacedAtPath;
    std::optional<LedgerEntry> replacedLedger;
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

    // Runs `work` in one write transaction (BEGIN IMMEDIATE: it waits for, and then excludes,
    // every other writer of the file, in this process or another), committed when `work`
    // returns true and rolled back otherwise. Inside a transaction already, `work` just runs
    // as part of it.
    bool writeTransaction(const std::function<bool()> &work);

    // Sources. A file source is recognised by content, whatever its path: the file starts with
    // the bytes a source's head hash covers (see FileSourceMatch). An empty head matches only
    // at the same path.
    // nullopt (errorString()) when the workspace could not be queried.
    std::optional<FileSourceMatch> matchFileSource(const FileFingerprint &fingerprint);
    std::optional<SourceRecord> findSourceByPath(const QString &path);
    // Returns the new source id, 0 on failure. For live sources (`fingerprint` is their identity).
    qint64 addSource(const QString &path, const QString &format, qint64 mtimeMs, qint64 headLength,
                     const QByteArray &fingerprint);
    // A file source for an import; 0 on failure.
    qint64 addFileSource(const FileFingerprint &fingerprint, const QString &format);
    // The file a source's content is read from now: its (possibly new) name, its head hashed
    // over more bytes once it grew, its size when this import starts.
    bool updateFileSource(qint64 sourceId, const FileFingerprint &fingerprint);
    [[nodiscard]] QList<SourceRecord> sources();

    std::optional<LedgerEntry> ledger(qint64 sourceId);
    // Makes `owner` the import run that holds the source and marks its ledger incomplete until
    // that run finishes (creating the entry at offset 0 if there is none). The writer stores a
    // batch of a claimed import only while the ledger still names its owner.
    bool claimLedger(qint64 sourceId, const QByteArray &owner);
    // Deletes the events, malformed records and ledger entry of a source, in one transaction:
    // used when a partial import of a format that cannot resume must start over.
    bool discardSourceData(qint64 sourceId);

    // The cursor of a polled source (poll_cursors.state, written by WorkspaceWriter with the
    // rows it covers); nullopt when none is stored yet or on error (errorString() non-empty).
    std::optional<QByteArray> pollCursor(qint64 sourceId);
    // The polled sources and their cursors, in the order they were added; nullopt on error.
    std::optional<QList<PolledSourceRecord>> polledSources();
    // The source row of a polled URL, added when missing (kind: poll::sourceKindName); 0 and
    // errorString() on failure.
    qint64 ensurePolledSource(const QString &url, const QString &kind);

    // The setting holding the policy the dashboard replays the workspace with (its Policy
    // menu and editor save it here): what `report --workspace` replays with too
    // (PolicySet::fromSetting reads its value).
    static constexpr const char *kPolicySetting = "policy";
    [[nodiscard]] std::optional<QString> setting(const QString &key);
    bool setSetting(const QString &key, const QString &value);
    bool removeSetting(const QString &key);

    // Makes sure the index the reader's time queries use exists (it is part of the schema since
    // version 2; the other filters use block summaries, kept by the writer).
    bool createQueryIndexes();

    [[nodiscard]] QSqlDatabase database() const { return m_db; }

private:
    bool fail(const QString &what, const QString &detail);
    bool discardSourceRows(qint64 sourceId); // inside a transaction

    QString m_path;
    QString m_connectionName;
    QSqlDatabase m_db;
    QString m_error;
};

} // namespace ts
