#include "ingest/livereorder.h"

#include <algorithm>

namespace ts {

void LiveReorderBuffer::setFixedWindow(std::optional<qint64> windowMs)
{
    m_fixed = windowMs ? std::optional<qint64>(std::max<qint64>(0, *windowMs)) : std::nullopt;
}

qint64 LiveReorderBuffer::windowMs() const
{
    return m_fixed ? *m_fixed : std::min(m_largestLatenessMs, kMaxAutoReorderWindowMs);
}

void LiveReorderBuffer::add(std::vector<RequestEvent> &&events, qint64 nowMs,
                            std::vector<RequestEvent> &ready)
{
    for (RequestEvent &event : events) {
        if (event.type != EventType::Request) {
            // An annotation charges nothing: its place in time changes no figure, and its time
            // (a note's, often rounded) is no measure of the feed's lateness.
            ready.push_back(std::move(event));
            continue;
        }
        const qint64 ts = event.tsMs;
        if (m_newestMs != std::numeric_limits<qint64>::min() && ts < m_newestMs)
            m_largestLatenessMs = std::max(m_largestLatenessMs, m_newestMs - ts);
        m_newestMs = std::max(m_newestMs, ts);
        if (ts < m_lastReleasedMs) {
            // A later event was handed on already: its place in time is gone.
            m_late += event.countedRequests();
            m_lateBySource[event.source] += event.countedRequests();
            ready.push_back(std::move(event));
            continue;
        }
        // After the held events of the same instant: they came first.
        const auto at =
            std::upper_bound(m_held.begin(), m_held.end(), ts, [](qint64 value, const Held &held) {
                return value < held.event.tsMs;
            });
        m_held.insert(at, Held{std::move(event), nowMs});
    }
    releaseBefore(m_newestMs - windowMs(), nowMs, ready);
}

void LiveReorderBuffer::release(qint64 nowMs, std::vector<RequestEvent> &ready)
{
    releaseBefore(m_newestMs - windowMs(), nowMs, ready);
}

void LiveReorderBuffer::releaseBefore(qint64 cutMs, qint64 nowMs, std::vector<RequestEvent> &ready)
{
    // An event older than the cut cannot be overtaken any more; one that has waited the window
    // is handed on too, and with it everything held before it (time order is kept).
    const qint64 window = windowMs();
    size_t count = 0;
    for (size_t i = 0; i < m_held.size(); ++i) {
        const Held &held = m_held[i];
        if (held.event.tsMs <= cutMs || nowMs - held.arrivedMs >= window)
            count = i + 1; // (a later-stamped event may have arrived earlier and waited longer)
    }
    for (size_t i = 0; i < count; ++i) {
        m_lastReleasedMs = std::max(m_lastReleasedMs, m_held[i].event.tsMs);
        ready.push_back(std::move(m_held[i].event));
    }
    m_held.erase(m_held.begin(), m_held.begin() + qsizetype(count));
}

void LiveReorderBuffer::flush(std::vector<RequestEvent> &ready)
{
    for (Held &held : m_held) {
        m_lastReleasedMs = std::max(m_lastReleasedMs, held.event.tsMs);
        ready.push_back(std::move(held.event));
    }
    m_held.clear();
}

void LiveReorderBuffer::clear()
{
    m_held.clear();
    m_newestMs = std::numeric_limits<qint64>::min();
    m_lastReleasedMs = std::numeric_limits<qint64>::min();
    m_largestLatenessMs = 0;
    m_late = 0;
    m_lateBySource.clear();
}

} // namespace ts
