#include "store/workspacefollower.h"

namespace ts {

bool WorkspaceFollower::open(const QString &path)
{
    m_path = path;
    return m_reader.open(path);
}

bool WorkspaceFollower::replay(int chunkSize,
                               const std::function<bool(const QList<RequestEvent> &chunk)> &callback)
{
    // The version first: a commit after it, even one racing with the bound below, makes the
    // next poll look.
    m_dataVersion = m_reader.dataVersion();
    const qint64 last = m_reader.lastEventRowId();
    const qint64 malformed = m_reader.countMalformed();
    if (m_dataVersion < 0 || last < 0 || malformed < 0)
        return false;
    m_malformed = malformed;
    replayedMalformed = malformed;
    m_lastRowId = last;
    replayedEvents = 0;
    if (last == 0)
        return true; // nothing yet (a bound of 0 would mean "no bound")
    return m_reader.forEachEventInTimeOrder(
        chunkSize,
        [&](const QList<RequestEvent> &chunk) {
            replayedEvents += chunk.size();
            return callback(chunk);
        },
        {}, last);
}

WorkspaceFollower::News WorkspaceFollower::poll(int maxEvents)
{
    News news;
    const qint64 version = m_reader.dataVersion();
    if (version < 0) {
        news.failed = true;
        return news;
    }
    if (version == m_dataVersion && !m_more)
        return news;
    m_dataVersion = version;
    const QList<StoredEvent> page = m_reader.fetchPage({}, m_lastRowId, maxEvents);
    news.events.reserve(page.size());
    for (const StoredEvent &stored : page) {
        m_lastRowId = qMax(m_lastRowId, stored.rowId);
        if (!m_skipped.contains(stored.sourceId))
            news.events.append(stored.event);
    }
    m_more = page.size() >= maxEvents;
    const qint64 malformed = m_reader.countMalformed();
    if (malformed > m_malformed) {
        news.malformed = malformed - m_malformed;
        m_malformed = malformed;
    }
    return news;
}

} // namespace ts
