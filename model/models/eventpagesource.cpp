#include "eventpagesource.h"

#include <QObject>

namespace ts::models {

bool EventQuery::matches(const RequestEvent &event) const
{
    if (!identity.isEmpty() && event.identity != identity)
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

} // namespace ts::models
