#include "eventpagesource.h"

#include <QObject>

#include <algorithm>

namespace ts::models {

bool EventQuery::matches(const RequestEvent &event) const
{
    if (!identity.isEmpty() && !event.identity.contains(identity, Qt::CaseInsensitive))
        return false;
    if (status && event.status != *status)
        return false;
    if (!errorCode.isEmpty() && event.errorCode != errorCode)
        return false;
    if (!lane.isEmpty() && event.lane != lane)
        return false;
    if (fromMs && event.tsMs < *fromMs)
        return false;
    if (toMs && event.tsMs >= *toMs)
        return false;
    if (!text.isEmpty() && !event.url.contains(text, Qt::CaseInsensitive) &&
        !event.errorCode.contains(text, Qt::CaseInsensitive) &&
        !event.identity.contains(text, Qt::CaseInsensitive))
        return false;
    return true;
}

MemoryEventSource::MemoryEventSource(std::vector<RequestEvent> events) : m_events(std::move(events))
{
}

void MemoryEventSource::append(std::vector<RequestEvent> events)
{
    m_events.insert(m_events.end(), std::make_move_iterator(events.begin()),
                    std::make_move_iterator(events.end()));
}

QList<EventRow> MemoryEventSource::fetchPage(const EventQuery &query, qint64 afterRowId, int limit)
{
    QList<EventRow> rows;
    for (size_t i = static_cast<size_t>(std::max<qint64>(0, afterRowId));
         i < m_events.size() && rows.size() < limit; ++i) {
        if (query.matches(m_events[i]))
            rows.append({static_cast<qint64>(i) + 1, m_events[i]});
    }
    return rows;
}

qint64 MemoryEventSource::count(const EventQuery &query)
{
    qint64 matching = 0;
    for (const RequestEvent &event : m_events)
        matching += query.matches(event) ? 1 : 0;
    return matching;
}

QString MemoryEventSource::description() const
{
    return QObject::tr("%1 events in memory").arg(m_events.size());
}

CauseEventSource::CauseEventSource(std::shared_ptr<EventPageSource> base, QString cause)
    : m_base(std::move(base)), m_cause(std::move(cause))
{
}

void CauseEventSource::setCauses(const std::shared_ptr<const std::vector<EventCause>> &causes)
{
    m_wanted.clear();
    if (!causes)
        return;
    constexpr qint64 kPerInstant = 1024;
    qint64 lastTs = 0;
    qint64 sameInstant = 0;
    for (const EventCause &cause : *causes) {
        if (throttleCauseName(cause.cause) != m_cause || cause.tsMs < 0)
            continue;
        sameInstant = (!m_wanted.empty() && cause.tsMs == lastTs) ? sameInstant + 1 : 0;
        lastTs = cause.tsMs;
        if (sameInstant >= kPerInstant)
            continue; // more than 1,024 in one millisecond: the rest share no key of their own
        m_wanted.push_back(
            {cause.tsMs * kPerInstant + sameInstant + 1, cause.tsMs, cause.identity, cause.line});
    }
}

bool CauseEventSource::withinQuery(const Wanted &wanted, const EventQuery &query)
{
    if (!query.identity.isEmpty() && !wanted.identity.contains(query.identity, Qt::CaseInsensitive))
        return false;
    if (query.fromMs && wanted.tsMs < *query.fromMs)
        return false;
    return !query.toMs || wanted.tsMs < *query.toMs;
}

QList<EventRow> CauseEventSource::fetchPage(const EventQuery &query, qint64 afterRowId, int limit)
{
    QList<EventRow> rows;
    if (!m_base)
        return rows;
    auto it = std::upper_bound(m_wanted.begin(), m_wanted.end(), afterRowId,
                               [](qint64 key, const Wanted &w) { return key < w.key; });
    for (; it != m_wanted.end() && rows.size() < limit; ++it) {
        if (!withinQuery(*it, query))
            continue;
        EventQuery one = query;
        one.identity = it->identity;
        one.fromMs = it->tsMs;
        one.toMs = it->tsMs + 1;
        const QList<EventRow> candidates = m_base->fetchPage(one, 0, 64);
        const EventRow *found = nullptr;
        for (const EventRow &candidate : candidates) {
            if (it->line <= 0 || candidate.event.line <= 0 || candidate.event.line == it->line) {
                found = &candidate;
                break;
            }
        }
        if (found)
            rows.append({it->key, found->event});
    }
    return rows;
}

qint64 CauseEventSource::count(const EventQuery &query)
{
    if (query.status || !query.errorCode.isEmpty() || !query.lane.isEmpty() ||
        !query.text.isEmpty())
        return -1;
    return std::count_if(m_wanted.begin(), m_wanted.end(),
                         [&query](const Wanted &w) { return withinQuery(w, query); });
}

QString CauseEventSource::description() const
{
    return m_base ? m_base->description() : QString();
}

QString CauseEventSource::errorString() const
{
    return m_base ? m_base->errorString() : QString();
}

} // namespace ts::models
