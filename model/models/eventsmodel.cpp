#include "eventsmodel.h"

#include "displaynames.h"

#include "core/timeparse.h"

#include <QCoreApplication>
#include <QPointer>
#include <QScopedValueRollback>
#include <QThreadPool>

#include <utility>

namespace ts::models {

namespace {
// Runs work on the global thread pool and hands its result to deliver on the model's (GUI)
// thread, unless the model is gone by then.
template <typename Result, typename Deliver>
void runOnWorker(std::function<Result()> work, Deliver deliver, QObject *model)
{
    const QPointer<QObject> guard(model);
    QThreadPool::globalInstance()->start(
        [work = std::move(work), deliver = std::move(deliver), guard]() mutable {
            Result result = work();
            QMetaObject::invokeMethod(
                QCoreApplication::instance(),
                [deliver = std::move(deliver), guard, result = std::move(result)]() mutable {
                    if (guard) // read on the GUI thread only
                        deliver(std::move(result));
                },
                Qt::QueuedConnection);
        });
}
} // namespace

EventsModel::EventsModel(QObject *parent) : QAbstractTableModel(parent) {}

void EventsModel::setSource(std::shared_ptr<EventPageSource> source)
{
    m_source = std::move(source);
    reload();
}

void EventsModel::setQuery(const EventQuery &query)
{
    if (query == m_query && !m_rows.isEmpty())
        return;
    m_query = query;
    reload();
}

void EventsModel::reload()
{
    {
        const QScopedValueRollback guard(m_inChange, true);
        beginResetModel();
        m_rows.clear();
        m_exhausted = !m_source;
        endResetModel();
    }
    // A page still being fetched for the previous query is dropped when it arrives; the new
    // query's first page and count see everything committed so far.
    ++m_pageGeneration;
    m_rowsRefreshPending = false;
    m_recountPending = false;
    if (m_fetchInFlight) {
        m_fetchInFlight = false;
        Q_EMIT fetchingChanged(false);
    }
    startCount();
    // The first page right away, so the view is not empty for an event-loop turn.
    if (canFetchMore({}))
        fetchMore({});
}

void EventsModel::startCount(bool keepShownCount)
{
    ++m_queryGeneration;
    std::function<qint64()> counter = m_source ? m_source->backgroundCounter(m_query) : nullptr;
    if (counter) {
        // A recount of the same query keeps showing the last figure until the new one arrives.
        if (!keepShownCount)
            m_matching = -1;
        m_counting = true;
        const quint64 generation = m_queryGeneration;
        runOnWorker(
            std::move(counter),
            [this, generation](qint64 count) {
                if (m_queryGeneration != generation)
                    return; // a count for an older query
                m_matching = count;
                m_counting = false;
                Q_EMIT matchingCountChanged(count);
                if (std::exchange(m_recountPending, false))
                    startCount(/*keepShownCount=*/true); // the source grew while it counted
            },
            this);
    } else {
        m_counting = false;
        m_matching = m_source ? m_source->count(m_query) : 0;
    }
    if (!counter || !keepShownCount)
        Q_EMIT matchingCountChanged(m_matching);
}

void EventsModel::refreshTail()
{
    if (!m_source || m_inChange)
        return;
    refreshRows();
    // One count at a time: a live feed asks every second, a count of a large workspace may
    // take longer than that. The one running may have counted before the new rows: one more
    // follows it.
    if (m_counting)
        m_recountPending = true;
    else
        startCount(/*keepShownCount=*/true);
}

void EventsModel::refreshRows()
{
    if (m_fetchInFlight) {
        // Its page may have been read before the new rows were committed, and it marks the
        // result exhausted when it comes back short: look again once it is here.
        m_rowsRefreshPending = true;
        return;
    }
    if (m_exhausted && m_rows.size() < kMaxLoadedRows) {
        m_exhausted = false;
        fetchMore({});
    }
}

bool EventsModel::reachedLoadLimit() const
{
    return !m_exhausted && m_rows.size() >= kMaxLoadedRows;
}

bool EventsModel::canFetchMore(const QModelIndex &parent) const
{
    return !parent.isValid() && !m_exhausted && !m_inChange && !m_fetchInFlight &&
           m_rows.size() < kMaxLoadedRows;
}

void EventsModel::fetchMore(const QModelIndex &parent)
{
    // Views (and QAbstractItemModelTester) may ask for more from inside a rowsInserted or
    // modelReset handler; nesting an insertion inside another is not allowed, so those calls
    // wait for the next one.
    if (!canFetchMore(parent))
        return;
    if (startBackgroundFetch())
        return;
    const qint64 after = m_rows.isEmpty() ? 0 : m_rows.constLast().rowId;
    appendPage(m_source->fetchPage(m_query, after, kPageSize));
}

void EventsModel::appendPage(QList<EventRow> page)
{
    const QScopedValueRollback guard(m_inChange, true);
    if (page.size() < kPageSize)
        m_exhausted = true;
    if (page.isEmpty())
        return;
    beginInsertRows({}, static_cast<int>(m_rows.size()),
                    static_cast<int>(m_rows.size() + page.size() - 1));
    m_rows.append(std::move(page));
    endInsertRows();
}

bool EventsModel::startBackgroundFetch()
{
    const qint64 after = m_rows.isEmpty() ? 0 : m_rows.constLast().rowId;
    std::function<QList<EventRow>()> fetcher =
        m_source->backgroundPageFetcher(m_query, after, kPageSize);
    if (!fetcher)
        return false;
    m_fetchInFlight = true;
    Q_EMIT fetchingChanged(true);
    const quint64 generation = m_pageGeneration;
    runOnWorker(
        std::move(fetcher),
        [this, generation](QList<EventRow> page) {
            if (m_pageGeneration != generation)
                return; // a page for an older query or source
            m_fetchInFlight = false;
            appendPage(std::move(page));
            Q_EMIT fetchingChanged(false);
            if (std::exchange(m_rowsRefreshPending, false))
                refreshRows();
        },
        this);
    return true;
}

void EventsModel::setEventCauses(std::shared_ptr<const std::vector<EventCause>> causes)
{
    if (causes == m_causes)
        return;
    m_causes = std::move(causes);
    if (!m_rows.isEmpty())
        Q_EMIT dataChanged(index(0, CauseColumn), index(rowCount() - 1, CauseColumn));
}

const EventCause *EventsModel::causeOf(const RequestEvent &event) const
{
    if (!m_causes)
        return nullptr;
    const auto [first, last] = std::equal_range(
        m_causes->begin(), m_causes->end(), event.tsMs, [](const auto &a, const auto &b) {
            if constexpr (std::is_same_v<std::decay_t<decltype(a)>, qint64>)
                return a < b.tsMs;
            else
                return a.tsMs < b;
        });
    // Several events of one identity can share a millisecond: the log line tells them apart
    // where the source has lines; otherwise the first of that identity is the best guess.
    const EventCause *sameIdentity = nullptr;
    for (auto it = first; it != last; ++it) {
        if (it->identity != event.identity)
            continue;
        if (event.line > 0 && it->line > 0) {
            if (it->line == event.line)
                return &*it;
            continue; // another line's cause, not this event's
        }
        if (!sameIdentity)
            sameIdentity = &*it;
    }
    return sameIdentity;
}

int EventsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int EventsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant EventsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const EventRow &row = m_rows.at(index.row());
    const RequestEvent &event = row.event;
    if (role == RowIdRole)
        return row.rowId;
    if (role == TimeMsRole)
        return event.tsMs;
    if (role == CauseRole) {
        const EventCause *cause = causeOf(event);
        return cause ? throttleCauseName(cause->cause) : QStringLiteral("none");
    }
    if (role == Qt::TextAlignmentRole) {
        switch (index.column()) {
        case StatusColumn:
        case AttemptColumn:
        case DurationColumn:
            return int(Qt::AlignRight | Qt::AlignVCenter);
        default:
            return {};
        }
    }
    if (role == FullTextRole && index.column() == IdentityColumn)
        return event.identity;
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    switch (index.column()) {
    case TimeColumn:
        return formatDisplayTime(event.tsMs);
    case IdentityColumn:
        // A note or a breaker transition usually names no identity: a blank cell, not the
        // "unknown" of a request whose identity the log did not give.
        if (event.type != EventType::Request && event.identity.isEmpty())
            return QString();
        return role == Qt::ToolTipRole ? nameTooltip(event.identity) : shortName(event.identity);
    case MethodColumn:
        // Log rows that are not requests say what they are where the method would be.
        switch (event.type) {
        case EventType::Annotation:
            return tr("note");
        case EventType::Breaker:
            return tr("breaker");
        case EventType::Request:
            break;
        }
        return event.method;
    case UrlColumn:
        if (event.type == EventType::Annotation)
            return event.text;
        if (event.type == EventType::Breaker)
            return tr("%1 \u2192 %2").arg(event.breakerScope, event.breakerState);
        return event.url;
    case StatusColumn:
        return event.status == 0 ? QString() : QString::number(event.status);
    case ErrorCodeColumn:
        return event.errorCode;
    case RetryAfterColumn:
        return event.retryAfter;
    case LaneColumn:
        return event.lane;
    case AttemptColumn:
        return event.attempt < 0 ? QString() : QString::number(event.attempt);
    case DurationColumn:
        return event.durationMs < 0 ? QString() : QString::number(event.durationMs, 'f', 0);
    case ServiceColumn:
        return event.service;
    case SourceColumn:
        if (event.source.isEmpty())
            return QString();
        return event.line > 0 ? QString(event.source + u':' + QString::number(event.line))
                              : event.source;
    case CauseColumn: {
        const EventCause *cause = causeOf(event);
        if (!cause)
            return QString();
        QString text = throttleCauseName(cause->cause);
        if (!cause->limit.isEmpty())
            text += QStringLiteral(" (%1)").arg(cause->limit);
        if (!cause->observed)
            text = tr("predicted: %1").arg(text);
        return text;
    }
    default:
        return {};
    }
}

QVariant EventsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case TimeColumn:
        return timeHeader(tr("Time"));
    case IdentityColumn:
        return tr("Identity");
    case MethodColumn:
        return tr("Method");
    case UrlColumn:
        return tr("URL");
    case StatusColumn:
        return tr("Status");
    case ErrorCodeColumn:
        return tr("Error code");
    case RetryAfterColumn:
        return tr("Retry-After");
    case LaneColumn:
        return tr("Lane");
    case AttemptColumn:
        return tr("Attempt");
    case DurationColumn:
        return tr("ms");
    case ServiceColumn:
        return tr("Service");
    case SourceColumn:
        return tr("Source");
    case CauseColumn:
        return tr("Cause");
    default:
        return {};
    }
}

bool isSecretHeader(QStringView lowerName)
{
    return lowerName == u"authorization" || lowerName == u"proxy-authorization" ||
           lowerName == u"cookie" || lowerName == u"set-cookie" || lowerName == u"x-api-key" ||
           lowerName == u"api-key" || lowerName == u"ocp-apim-subscription-key" ||
           lowerName.contains(u"token") || lowerName.contains(u"secret");
}

QString eventDetailText(const RequestEvent &event)
{
    // Bodies can be megabytes; the pane shows the head, which is where error JSON lives.
    constexpr qsizetype kMaxBodyChars = 64 * 1024;
    QString text;
    text += formatIsoMs(event.tsMs) + u' ' + event.method + u' ' + event.url + u'\n';
    text += QObject::tr("status %1").arg(event.status);
    if (!event.errorCode.isEmpty())
        text += QObject::tr(", error code %1").arg(event.errorCode);
    if (!event.retryAfter.isEmpty())
        text += QObject::tr(", Retry-After %1").arg(event.retryAfter);
    text += u'\n';
    if (!event.identity.isEmpty())
        text += QObject::tr("identity %1").arg(event.identity) + u'\n';
    if (!event.operationId.isEmpty() || !event.batchId.isEmpty())
        text += QObject::tr("operation %1, batch %2 #%3\n")
                    .arg(event.operationId, event.batchId)
                    .arg(event.batchIndex);
    if (!event.source.isEmpty())
        text += QObject::tr("from %1:%2").arg(event.source).arg(event.line) + u'\n';
    text += u'\n';
    for (const auto &[name, value] : event.headers.items())
        text += name + QStringLiteral(": ") +
                (isSecretHeader(name) ? QStringLiteral("[redacted]") : value) + u'\n';
    if (!event.body.isEmpty()) {
        text += u'\n';
        if (event.body.size() > kMaxBodyChars)
            text += event.body.left(kMaxBodyChars) +
                    QObject::tr("\n… (%1 more characters)").arg(event.body.size() - kMaxBodyChars);
        else
            text += event.body;
    }
    return text;
}

} // namespace ts::models
