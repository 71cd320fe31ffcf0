#pragma once
// Follows log files as they grow, the way `tail -F` does, but without ever losing or repeating a
// line: files are tracked by their identity (device + inode), not by their name, so a rename
// (logrotate's default), copytruncate, deletion and re-creation, and files appearing in a watched
// directory are all handled by the same poll. QFileSystemWatcher only *wakes* the poll early;
// a timer polls anyway because watcher events are unreliable on network and overlay file systems.
//
// Content is recognised too, by the hash of a file's head (kTailHeadBytes): across a restart a
// renamed or copied file resumes from the position of its content, a file truncated and
// rewritten while nobody watched is read again from its start (fileTruncated), and a copy of a
// followed file made while running starts where that file stands instead of repeating it.
//
// A file followed by name (addFile, not a directory) is followed by identity the same way: its
// rotated siblings ("app.log.1", "app.log-20260218", not compressed ones) are where its unread
// lines go when it is rotated, so they are looked at, and read from where the file stood,
// when the tailer starts (renamed or copied-and-truncated while stopped) and when the file is
// truncated (copytruncate) while running. A sibling is never read from its start: only a
// file followed before (by identity) or a copy of its content is drained. What cannot be
// found that way is reported (linesUnrecoverable) rather than passed over in silence.
//
// POSIX only (uses open/pread/fstat), which is what the operators run it on.

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QMetaType>
#include <QMutex>
#include <QObject>
#include <QSet>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <vector>

class QFileSystemWatcher;
class QTimer;

namespace ts::live {

// Bytes from the start of a file that identify its content (TailPosition::headHash): a file
// renamed or copied keeps them, one truncated and rewritten does not.
inline constexpr qint64 kTailHeadBytes = 4096;

// Where reading a file stands. `offset` is just past the last *complete* line handed out, so a
// partial last line is read again after a restart. `device`/`inode` say which file it was
// (0 = unknown); `headLength`/`headHash` which content: the hex SHA-1 (ts::headHashOf) of the
// file's first headLength = min(offset, kTailHeadBytes) bytes. A position without a head
// (0: unknown, from an older workspace) is trusted by identity, else by path, when the file is
// at least `offset` long.
struct TailPosition
{
    TailPosition() = default;
    TailPosition(QString filePath, qint64 byteOffset, qint64 lineCount, quint64 fileDevice,
                 quint64 fileInode, qint64 contentHeadLength = 0, QByteArray contentHeadHash = {})
        : path(std::move(filePath)), offset(byteOffset), line(lineCount), device(fileDevice),
          inode(fileInode), headLength(contentHeadLength), headHash(std::move(contentHeadHash))
    {
    }

    QString path;
    qint64 offset = 0;
    qint64 line = 0; // complete lines handed out so far (the next line is line + 1)
    quint64 device = 0;
    quint64 inode = 0;
    qint64 headLength = 0;
    QByteArray headHash;
    bool operator==(const TailPosition &other) const = default;
};

struct TailLine
{
    QByteArray text;   // without the line terminator ("\n" or "\r\n")
    qint64 line = 0;   // 1-based line number within the file
    qint64 offset = 0; // byte offset of the first byte of the line
};

// Complete lines read from one file in one go. endOffset/endLine are the file's position after
// these lines: persist them once the lines are safely processed, to resume without duplicates.
struct TailBatch
{
    QString path; // the file's name when it was read (a rotated file keeps its new name)
    quint64 device = 0;
    quint64 inode = 0;
    QList<TailLine> lines;
    qint64 endOffset = 0;
    qint64 endLine = 0;
    // The content endOffset refers to (see TailPosition): persist it with the offset.
    qint64 headLength = 0;
    QByteArray headHash;
};

class FileTailer : public QObject
{
    Q_OBJECT
public:
    // Called on the tailer's thread for every batch, before linesReady is emitted. The pipeline
    // uses it to parse on the tailer's (worker) thread without another queue hop.
    using BatchCallback = std::function<void(const TailBatch &batch)>;

    explicit FileTailer(QObject *parent = nullptr);
    ~FileTailer() override;

    // Configuration: call before start() (or from the tailer's thread).
    void setPollInterval(int milliseconds);
    void setBatchCallback(BatchCallback callback);
    // Lines per emitted batch at most (a burst is split into several batches).
    void setMaxBatchLines(int lines);
    // How long a file that was renamed away or deleted is still drained (a writer may keep
    // appending through its open handle until it reopens its log).
    void setOrphanGraceMs(int milliseconds);
    // Whether QFileSystemWatcher wakes the poll early (default on). Off = pure polling, e.g. on
    // file systems where inotify sees nothing (NFS, SMB, some container overlays).
    void setFileSystemWatcherEnabled(bool enabled);
    // Follow this file by name; it need not exist yet.
    void addFile(const QString &path);
    // Follow every file in `directory` whose name matches one of the wildcard `nameFilters`
    // ("*.ndjson"); files created later are picked up from their first byte.
    void addDirectory(const QString &directory, const QStringList &nameFilters);
    // Resume points from a previous session. A file resumes from its own position (same
    // device + inode) if it still starts with that position's head and is at least as long;
    // else, being shorter or starting otherwise, it was truncated or rewritten meanwhile: it is
    // read from the beginning and fileTruncated() is emitted. A file without a position of its
    // own (renamed across devices, copied, re-created) resumes from the furthest position whose
    // head it starts with; a copy shorter than that offset is not read until it passes it.
    // Files matching nothing are read from the beginning.
    void setStartPositions(const QList<TailPosition> &positions);

    // Thread-safe: where every known file stands (after the last delivered batch).
    [[nodiscard]] QList<TailPosition> positions() const;
    // Thread-safe: totals since start.
    [[nodiscard]] qint64 linesDelivered() const;

public slots:
    void start();
    void stop();
    // Reads everything that is available now (also what the timer and watcher call).
    void pollNow();

signals:
    void linesReady(const ts::live::TailBatch &batch);
    void fileOpened(const QString &path, qint64 fromOffset);
    void fileRotated(const QString &oldPath, const QString &path); // renamed away, drained
    // Cut below what was read of it (copytruncate), or rewritten with other content (also
    // while the tailer was not running): read again from its start.
    void fileTruncated(const QString &path);
    void fileRemoved(const QString &path);
    void errorOccurred(const QString &path, const QString &message);
    // Lines of a file followed by name could not be found after a rotation (no rotated sibling
    // holds them): `afterLine` lines of it were read; `detail` says what is missing.
    void linesUnrecoverable(const QString &path, qint64 afterLine, const QString &detail);

private:
    struct Tracked;
    struct Watch
    {
        QString path; // a file, or a directory when nameFilters is non-empty
        QStringList nameFilters;
    };

    void schedulePoll();
    void scanCandidates(QStringList &candidates);
    void readAvailable(Tracked &file);
    void emitLines(Tracked &file, QList<TailLine> &lines, qint64 endOffset);
    void publishPosition(const Tracked &file);
    void forgetPosition(const Tracked &file);
    void closeOrphan(Tracked &file);
    void refreshWatcher(const QStringList &candidates);
    Tracked *findByIdentity(quint64 device, quint64 inode);
    struct StartDecision
    {
        TailPosition position;
        bool truncated = false;    // its own position is not its content any more
        bool catchingUp = false;   // a copy shorter than the offset of its content
        bool defer = false;        // so far a prefix of a followed file's head: decide later
        bool matched = false;      // a stored position (its own, or its content's) applies
        qsizetype startIndex = -1; // which of m_startPositions, when one applies
    };
    StartDecision decideStart(const QString &path, int fd, quint64 device, quint64 inode,
                              qint64 size);
    void refreshHead(Tracked &file, qint64 upTo);
    void forgetIdentity(const QString &path, quint64 device, quint64 inode);
    // Starts following `path` (a candidate of a watch) unless it is followed already; a
    // rotated sibling (`recoveryOnly`) only when a stored position applies to it.
    Tracked *openCandidate(const QString &path, bool recoveryOnly, QSet<const Tracked *> &seen);
    [[nodiscard]] bool isWatchedFile(const QString &path) const;
    [[nodiscard]] QStringList rotatedSiblings(const QString &path) const;
    // At the first poll: the rotated siblings of files followed by name that hold lines of a
    // stored position (renamed or copied while stopped), drained before anything newer; then
    // the stored positions of those files that nothing holds any more are reported.
    void recoverRotatedAtStart(QSet<const Tracked *> &seen);
    // `file` (followed by name) was truncated while running: its copy (copytruncate), read from
    // where the file stood, before the file's new content. False when there is none.
    bool drainCopyOf(const Tracked &file);

    QList<Watch> m_watches;
    std::vector<std::unique_ptr<Tracked>> m_tracked;
    QList<TailPosition> m_startPositions;
    QList<bool> m_startPositionUsed; // per m_startPositions: some file resumed from it
    bool m_startRecovered = false;   // recoverRotatedAtStart() ran
    // Siblings adopted while the tracked list is walked (drainCopyOf): joined after the walk.
    std::vector<std::unique_ptr<Tracked>> m_adopted;
    BatchCallback m_callback;
    QTimer *m_pollTimer = nullptr;
    QTimer *m_wakeTimer = nullptr;
    QFileSystemWatcher *m_watcher = nullptr;
    int m_pollIntervalMs = 100;
    int m_maxBatchLines = 4096;
    int m_orphanGraceMs = 2000;
    bool m_running = false;
    bool m_polling = false;
    bool m_useWatcher = true;

    // Protects m_positions and m_linesDelivered: written on the tailer's thread after each
    // batch, read from any thread by positions()/linesDelivered(). Keyed by (device, inode).
    mutable QMutex m_positionsMutex;
    QHash<QPair<quint64, quint64>, TailPosition> m_positions;
    qint64 m_linesDelivered = 0;
};

} // namespace ts::live

Q_DECLARE_METATYPE(ts::live::TailBatch)
Q_DECLARE_METATYPE(ts::live::TailPosition)
