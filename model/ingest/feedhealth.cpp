#include "feedhealth.h"

#include <algorithm>

namespace ts {

namespace {
constexpr qint64 kSlotMs = 1000;
} // namespace

std::optional<qint64> feedSilenceMs(const IngestSourceStatus &source, qint64 nowMs)
{
    if (!source.live || source.finished)
        return std::nullopt;
    const std::optional<qint64> since =
        source.lastEventReceivedMs ? source.lastEventReceivedMs : source.liveSinceMs;
    if (!since)
        return std::nullopt;
    return std::max<qint64>(0, nowMs - *since);
}

bool isFeedStale(const IngestSourceStatus &source, qint64 nowMs, qint64 staleAfterMs)
{
    if (staleAfterMs <= 0)
        return false;
    const std::optional<qint64> silence = feedSilenceMs(source, nowMs);
    return silence && *silence > staleAfterMs;
}

double feedRateNow(const IngestSourceStatus &source, qint64 nowMs)
{
    if (source.live && !source.finished && source.lastEventReceivedMs &&
        nowMs - *source.lastEventReceivedMs > RateMeter::kWindowMs)
        return 0.0;
    return source.eventsPerSecond;
}

void RateMeter::add(qint64 nowMs, qint64 count)
{
    if (count <= 0)
        return;
    if (!m_firstMs)
        m_firstMs = nowMs;
    const qint64 slot = nowMs - nowMs % kSlotMs;
    if (!m_slots.empty() && m_slots.back().first == slot)
        m_slots.back().second += count;
    else
        m_slots.emplace_back(slot, count);
    trim(nowMs);
}

double RateMeter::perSecond(qint64 nowMs) const
{
    trim(nowMs);
    if (m_slots.empty() || !m_firstMs)
        return 0.0;
    qint64 events = 0;
    for (const auto &slot : m_slots)
        events += slot.second;
    const qint64 span = std::clamp<qint64>(nowMs - *m_firstMs, kSlotMs, kWindowMs);
    return double(events) * 1000.0 / double(span);
}

void RateMeter::trim(qint64 nowMs) const
{
    while (!m_slots.empty() && m_slots.front().first + kSlotMs <= nowMs - kWindowMs)
        m_slots.pop_front();
}

} // namespace ts
