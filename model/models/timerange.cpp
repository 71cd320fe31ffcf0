#include "timerange.h"

namespace ts::models {

TimeRange::TimeRange(QObject *parent) : QObject(parent) {}

void TimeRange::setBounds(qint64 firstMs, qint64 lastMs)
{
    if (lastMs < firstMs)
        std::swap(firstMs, lastMs);
    const bool changed = !m_hasBounds || firstMs != m_firstMs || lastMs != m_lastMs;
    const bool firstTime = !m_hasBounds;
    m_hasBounds = true;
    m_firstMs = firstMs;
    m_lastMs = lastMs;
    if (!changed)
        return;
    Q_EMIT boundsChanged(firstMs, lastMs);
    if (m_following || firstTime || !hasRange()) {
        // Keep the width the operator chose while following; the first time, show everything.
        const qint64 width = (firstTime || !hasRange() || !m_following) ? (lastMs - firstMs)
                                                                        : (m_endMs - m_startMs);
        const qint64 end = lastMs;
        qint64 start = end - width;
        if (start < firstMs || firstTime)
            start = firstMs;
        applyRange(start, end == start ? end + 1000 : end);
    }
}

void TimeRange::setRange(qint64 startMs, qint64 endMs)
{
    if (endMs < startMs)
        std::swap(startMs, endMs);
    if (endMs == startMs)
        endMs = startMs + 1;
    if (m_following && (!m_hasBounds || endMs < m_lastMs))
        setFollowing(false);
    applyRange(startMs, endMs);
}

void TimeRange::showAll()
{
    if (m_hasBounds)
        applyRange(m_firstMs, m_lastMs > m_firstMs ? m_lastMs : m_firstMs + 1000);
}

void TimeRange::setFollowing(bool following)
{
    if (following == m_following)
        return;
    m_following = following;
    if (following) {
        setReplayInstant(std::nullopt);
        if (m_hasBounds && hasRange()) {
            const qint64 width = m_endMs - m_startMs;
            applyRange(std::max(m_firstMs, m_lastMs - width), std::max(m_lastMs, m_firstMs + 1));
        }
    }
    Q_EMIT followingChanged(following);
}

void TimeRange::setReplayInstant(std::optional<qint64> instantMs)
{
    if (instantMs == m_replayInstant)
        return;
    m_replayInstant = instantMs;
    if (instantMs && m_following) {
        m_following = false;
        Q_EMIT followingChanged(false);
    }
    Q_EMIT replayInstantChanged();
}

void TimeRange::applyRange(qint64 startMs, qint64 endMs)
{
    if (startMs == m_startMs && endMs == m_endMs)
        return;
    m_startMs = startMs;
    m_endMs = endMs;
    Q_EMIT rangeChanged(startMs, endMs);
}

} // namespace ts::models
