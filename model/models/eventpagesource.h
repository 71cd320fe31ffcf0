#pragma once
// Where the events table gets its rows: pages of matching events by keyset (row id), never the
// whole set. The workspace (SQLite, store/) is the real source; MemoryEventSource serves events
// already in memory (a small import, the demo) through the same interface.

#include "core/requestevent.h"
#include "engine/reportdata.h"

#include <QList>
#include <QString>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace ts::models {

struct EventQuery
{
    QString identity;             // a part of it, case-insensitive ("bob" finds bob@contoso.com)
    std::optional<int> status;    // exact HTTP status
    QString errorCode;            // exact
    QString lane;                 // exact
    QString text;                 // case-insensitive substring of url, errorCode or identity
    std::optional<qint64> fromMs; // tsMs >= fromMs
    std::optional<qint64> toMs;   // tsMs < toMs

    bool operator==(const EventQuery &other) const = default;
    [[nodiscard]] bool matches(const RequestEvent &event) const;
};

struct EventRow
{
    qint64 rowId = 0; // increasing; the keyset for the next page
    RequestEvent event;
};

class EventPageSource
{
public:
    virtual ~EventPageSource() = default;
    // Matching events with rowId > afterRowId, in row order, at most limit of them.
    virtual QList<EventRow> fetchPage(const EventQuery &query, qint64 afterRowId, int limit) = 0;
    // Number of matching events, -1 when unknown (or too costly).
    virtual qint64 count(const EventQuery &query) = 0;
    // A callable that counts matching events on ANOTHER thread (it must not touch this
    // object: e.g. it opens its own database connection there), or an empty function when
    // count() is cheap enough to call on the GUI thread.
    [[nodiscard]] virtual std::function<qint64()> backgroundCounter(const EventQuery &query) const
    {
        Q_UNUSED(query);
        return {};
    }
    // The same for fetchPage(): a function to run on a worker thread, or an empty function when
    // fetchPage() is cheap enough for the GUI thread. Used for substring searches, which have
    // no index, and combined filters: both may scan many rows before a page of matches is found.
    [[nodiscard]] virtual std::function<QList<EventRow>()>
    backgroundPageFetcher(const EventQuery &query, qint64 afterRowId, int limit) const
    {
        Q_UNUSED(query);
        Q_UNUSED(afterRowId);
        Q_UNUSED(limit);
        return {};
    }
    // A line for the page header: "workspace /path/ws.db", "12 events in memory".
    [[nodiscard]] virtual QString description() const = 0;
    [[nodiscard]] virtual QString errorString() const { return {}; }
};

class MemoryEventSource : public EventPageSource
{
public:
    explicit MemoryEventSource(std::vector<RequestEvent> events);
    // More events after the existing ones (a live feed kept in memory).
    void append(std::vector<RequestEvent> events);
    QList<EventRow> fetchPage(const EventQuery &query, qint64 afterRowId, int limit) override;
    qint64 count(const EventQuery &query) override;
    [[nodiscard]] QString description() const override;

private:
    std::vector<RequestEvent> m_events; // row id = index + 1
};

// The Events page's Cause filter over every event, not only the rows already loaded: the
// engine's causes (DashboardSnapshot::eventCauses) name the events, and each is looked up in the
// real source by its instant, identity and log line (an indexed time range of one millisecond).
// Row ids are the causes' own keys (instant x 1024 + its place among that instant's causes), so a
// longer list of causes goes on after the last loaded row.
class CauseEventSource : public EventPageSource
{
public:
    CauseEventSource(std::shared_ptr<EventPageSource> base, QString cause);
    // All the engine's causes, in time order; only those of this source's cause are kept.
    void setCauses(const std::shared_ptr<const std::vector<EventCause>> &causes);
    QList<EventRow> fetchPage(const EventQuery &query, qint64 afterRowId, int limit) override;
    // The causes within the identity and time filters; -1 with other filters (a cause's event
    // may not match them, which only its lookup tells).
    qint64 count(const EventQuery &query) override;
    [[nodiscard]] QString description() const override;
    [[nodiscard]] QString errorString() const override;

private:
    struct Wanted
    {
        qint64 key = 0;
        qint64 tsMs = 0;
        QString identity;
        qint64 line = 0;
    };
    [[nodiscard]] static bool withinQuery(const Wanted &wanted, const EventQuery &query);

    std::shared_ptr<EventPageSource> m_base;
    QString m_cause;
    std::vector<Wanted> m_wanted; // ascending key
};

} // namespace ts::models
