#include "pushdown.h"

#include "ingest/redaction.h"

namespace ts::poll {

void chargesFromAggregates(const QList<AggregateRow> &rows, const QString &sourceName,
                           const std::function<void(std::vector<RequestEvent> &&)> &deliver,
                           qsizetype chunk)
{
    std::vector<RequestEvent> events;
    events.reserve(size_t(chunk));
    for (const AggregateRow &row : rows) {
        RequestEvent event;
        event.tsMs = row.secondMs;
        event.service = row.service;
        event.identity = row.identity;
        event.app = row.app;
        event.tenant = row.tenant;
        event.category = row.category;
        event.method = row.method;
        event.errorCode = row.errorCode;
        event.url = row.url;
        event.status = row.status;
        if (row.credits >= 0 && row.count > 0)
            event.credits = row.credits / double(row.count);
        event.source = sourceName;
        redact::redactEvent(event);
        for (qint64 i = 0; i < row.count; ++i) {
            events.push_back(event); // implicitly shared strings: a copy is cheap
            if (qsizetype(events.size()) >= chunk) {
                deliver(std::move(events));
                events = {};
                events.reserve(size_t(chunk));
            }
        }
    }
    if (!events.empty())
        deliver(std::move(events));
}

} // namespace ts::poll
