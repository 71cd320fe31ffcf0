#include "pushdown.h"

#include "ingest/redaction.h"
#include "signals/throttlesignals.h"

#include <algorithm>

namespace ts::poll {

namespace {

// The order of a second's groups: successes, then failures that are not throttles, then
// throttles (see pushdown.h).
int answerOrder(const RequestEvent &event)
{
    if (throttle::isThrottle(event))
        return 2;
    return event.status == 0 || event.status >= 400 ? 1 : 0;
}

} // namespace

void chargesFromAggregates(const QList<AggregateRow> &rows, const QString &sourceName,
                           const std::function<void(std::vector<RequestEvent> &&)> &deliver,
                           qsizetype chunk)
{
    std::vector<RequestEvent> events;
    events.reserve(size_t(std::min<qsizetype>(chunk, rows.size())));
    // Where the second being filled starts in `events`: its groups are put in answer order
    // once the second is complete (the store orders by second only).
    size_t secondBegin = 0;
    auto closeSecond = [&] {
        std::stable_sort(events.begin() + qsizetype(secondBegin), events.end(),
                         [](const RequestEvent &a, const RequestEvent &b) {
                             return answerOrder(a) < answerOrder(b);
                         });
        secondBegin = events.size();
    };
    for (const AggregateRow &row : rows) {
        if (row.count <= 0)
            continue;
        if (!events.empty() && events.back().tsMs != row.secondMs) {
            closeSecond();
            if (qsizetype(events.size()) >= chunk) {
                deliver(std::move(events));
                events = {};
                events.reserve(size_t(chunk));
                secondBegin = 0;
            }
        }
        RequestEvent &event = events.emplace_back();
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
        event.weight = row.count;
        if (row.credits >= 0)
            event.credits = row.credits / double(row.count);
        event.source = sourceName;
        redact::redactEvent(event);
    }
    if (!events.empty()) {
        closeSecond();
        deliver(std::move(events));
    }
}

} // namespace ts::poll
