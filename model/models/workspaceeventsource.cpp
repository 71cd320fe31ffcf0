#include "workspaceeventsource.h"

#include "store/workspacereader.h"

#include <QFileInfo>
#include <QObject>

namespace ts::models {

namespace {
QList<EventRow> toRows(const QList<StoredEvent> &stored)
{
    QList<EventRow> rows;
    rows.reserve(stored.size());
    for (const StoredEvent &event : stored)
        rows.append({event.rowId, event.event});
    return rows;
}

EventFilter toFilter(const EventQuery &query)
{
    EventFilter filter;
    // What the operator types is a part of the name: "bob" finds bob@contoso.com.
    filter.identityPart = query.identity;
    filter.status = query.status;
    filter.errorCode = query.errorCode;
    filter.lane = query.lane;
    filter.text = query.text;
    filter.fromMs = query.fromMs;
    filter.toMs = query.toMs;
    return filter;
}
} // namespace

std::shared_ptr<WorkspaceEventSource> WorkspaceEventSource::open(const QString &path,
                                                                 QString *error)
{
    auto reader = std::make_unique<WorkspaceReader>();
    if (!reader->open(path)) {
        if (error)
            *error = reader->errorString();
        return nullptr;
    }
    return std::shared_ptr<WorkspaceEventSource>(new WorkspaceEventSource(path, std::move(reader)));
}

WorkspaceEventSource::WorkspaceEventSource(QString path, std::unique_ptr<WorkspaceReader> reader)
    : m_path(std::move(path)), m_reader(std::move(reader))
{
}

WorkspaceEventSource::~WorkspaceEventSource() = default;

QList<EventRow> WorkspaceEventSource::fetchPage(const EventQuery &query, qint64 afterRowId,
                                                int limit)
{
    return toRows(m_reader->fetchPage(toFilter(query), afterRowId, limit));
}

qint64 WorkspaceEventSource::count(const EventQuery &query)
{
    // A substring search has no index: counting it scans every row (about a second for a
    // million events), which the GUI thread must not do. The page still fills by keyset and
    // the table says "loaded" instead of a total.
    if (!query.text.isEmpty())
        return -1;
    return m_reader->countEvents(toFilter(query));
}

std::function<qint64()> WorkspaceEventSource::backgroundCounter(const EventQuery &query) const
{
    if (!query.text.isEmpty())
        return {}; // no index for substrings: not counted at all (see count())
    return [path = m_path, filter = toFilter(query)] {
        WorkspaceReader reader;
        if (!reader.open(path))
            return qint64(-1);
        return reader.countEvents(filter);
    };
}

std::function<QList<EventRow>()>
WorkspaceEventSource::backgroundPageFetcher(const EventQuery &query, qint64 afterRowId,
                                            int limit) const
{
    // One exact value is answered from its index or block summaries in milliseconds, on the GUI
    // thread. A substring has no index; and two common values whose combination is rare (a busy
    // identity's background lane) make SQLite walk many rows of one index for a page of
    // matches (~200 ms per million rows): both go to a worker.
    // (A part of an identity is answered from the block summaries too: the blocks holding an
    // identity that contains it.)
    const int exactFilters = int(!query.identity.isEmpty()) + int(query.status.has_value()) +
                             int(!query.errorCode.isEmpty()) + int(!query.lane.isEmpty());
    if (query.text.isEmpty() && exactFilters < 2)
        return {};
    return [path = m_path, filter = toFilter(query), afterRowId, limit] {
        WorkspaceReader reader;
        if (!reader.open(path))
            return QList<EventRow>();
        return toRows(reader.fetchPage(filter, afterRowId, limit));
    };
}

QString WorkspaceEventSource::description() const
{
    return QObject::tr("workspace %1").arg(QFileInfo(m_path).fileName());
}

QString WorkspaceEventSource::errorString() const
{
    return m_reader->errorString();
}

} // namespace ts::models
