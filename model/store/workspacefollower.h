#pragma once
// Following a workspace that another process writes (`tail`, `serve`, `import`): replay what is
// committed now, then take only the rows committed after it, as they come. SQLite's WAL lets a
// reader see each commit of another connection; PRAGMA data_version tells cheaply whether
// there was one since the last look, so a poll every few hundred milliseconds costs one
// statement while nothing happens (no busy loop, no file watching of -wal files).
//
// Exactly once: the replay is bounded by the newest row id read before it, and following reads
// the rows after that id in row order; the data version is read before the bound, so a commit
// racing with the replay is seen by the next poll.
//
// One thread: the reader's connection belongs to the thread that opened it (a QtSql rule).

#include "core/requestevent.h"
#include "store/workspacereader.h"

#include <QList>
#include <QSet>
#include <QString>

#include <atomic>
#include <functional>

namespace ts {

class WorkspaceFollower
{
public:
    bool open(const QString &path);
    [[nodiscard]] QString errorString() const { return m_reader.errorString(); }
    // Opened read-only (a read-only file system: WorkspaceReader::isReadOnly).
    [[nodiscard]] bool isReadOnly() const { return m_reader.isReadOnly(); }
    [[nodiscard]] QString path() const { return m_path; }

    // Replays every event committed now, in time order, in chunks; the callback returns false
    // to stop (what was not replayed is not followed either). Sets replayedEvents and
    // replayedMalformed.
    bool replay(int chunkSize,
                const std::function<bool(const QList<RequestEvent> &chunk)> &callback);

    struct News
    {
        QList<RequestEvent> events; // in commit (row) order
        qint64 malformed = 0;       // malformed records committed since the last look
        bool failed = false;
    };
    // What other connections committed since the replay or the last poll: at most maxEvents
    // events at a time (the rest comes with the next poll, which then reads on without waiting
    // for another commit).
    News poll(int maxEvents = 50000);

    // The newest row handed over (by the replay or a poll): a later replay of this workspace
    // reads up to it and leaves the rest to the next poll.
    [[nodiscard]] qint64 lastRowId() const { return m_lastRowId; }
    // Rows of this source are not handed over: the session writes them itself and has analysed
    // them already (a dashboard that goes on writing into the workspace it follows).
    void skipSource(qint64 sourceId) { m_skipped.insert(sourceId); }

    qint64 replayedEvents = 0;
    qint64 replayedMalformed = 0;

private:
    WorkspaceReader m_reader;
    QString m_path;
    qint64 m_lastRowId = 0;
    qint64 m_dataVersion = -1;
    qint64 m_malformed = 0;
    bool m_more = false; // the last poll stopped at maxEvents
    QSet<qint64> m_skipped;
};

} // namespace ts
