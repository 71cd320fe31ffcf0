#pragma once
// The events table: a virtual model over an EventPageSource. It holds only the pages the view
// has scrolled to (fetchMore, keyset by row id) and stops at kMaxLoadedRows, so a million-event
// workspace never lands in memory; narrowing the filter is the way further in.

#include "eventpagesource.h"

#include "engine/reportdata.h"

#include <QAbstractTableModel>

#include <memory>

namespace ts::models {

class EventsModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column {
        TimeColumn,
        IdentityColumn,
        MethodColumn,
        UrlColumn,
        StatusColumn,
        ErrorCodeColumn,
        CauseColumn, // why it was throttled (from the latest snapshot; empty when it was not)
        RetryAfterColumn,
        LaneColumn,
        AttemptColumn,
        DurationColumn,
        ServiceColumn,
        SourceColumn,
        ColumnCount
    };
    enum Role {
        RowIdRole = Qt::UserRole + 1,
        TimeMsRole,
        CauseRole, // throttleCauseName of the event's cause ("none" when not throttled)
    };

    static constexpr int kPageSize = 256;
    static constexpr int kMaxLoadedRows = 100'000;

    explicit EventsModel(QObject *parent = nullptr);

    void setSource(std::shared_ptr<EventPageSource> source);
    [[nodiscard]] const std::shared_ptr<EventPageSource> &source() const { return m_source; }
    void setQuery(const EventQuery &query);
    [[nodiscard]] const EventQuery &query() const { return m_query; }
    // The source has grown (a live feed, an import in progress): rows after the last loaded one
    // are appended if the whole result was loaded, and the matching count is refreshed. Rows
    // already shown stay where they are. Asked while a page or the count is on its way (it may
    // have been read before the new rows were committed), the refresh runs once it arrives.
    void refreshTail();
    // Matching events in the source (-1 unknown or still counting), counted when the query
    // changes; matchingCountChanged() tells when a background count arrives.
    [[nodiscard]] qint64 matchingCount() const { return m_matching; }
    [[nodiscard]] bool isCounting() const { return m_counting; }
    // A page is being fetched on a worker thread (substring searches); rows arrive with
    // rowsInserted and fetchingChanged(false).
    [[nodiscard]] bool isFetching() const { return m_fetchInFlight; }
    [[nodiscard]] bool reachedLoadLimit() const;
    [[nodiscard]] const RequestEvent &eventAt(int row) const { return m_rows.at(row).event; }
    // The causes the engine found (DashboardSnapshot::eventCauses): the Cause column.
    void setEventCauses(std::shared_ptr<const std::vector<EventCause>> causes);
    // The cause of an event (None when the engine saw no throttle at its instant and identity).
    [[nodiscard]] const EventCause *causeOf(const RequestEvent &event) const;

    [[nodiscard]] int rowCount(const QModelIndex &parent = {}) const override;
    [[nodiscard]] int columnCount(const QModelIndex &parent = {}) const override;
    [[nodiscard]] QVariant data(const QModelIndex &index, int role) const override;
    [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                      int role) const override;
    [[nodiscard]] bool canFetchMore(const QModelIndex &parent) const override;
    void fetchMore(const QModelIndex &parent) override;

Q_SIGNALS:
    void matchingCountChanged(qint64 count);
    void fetchingChanged(bool fetching);

private:
    void reload();
    void startCount(bool keepShownCount = false);
    // Starts a background page fetch when the source offers one; false when it does not.
    bool startBackgroundFetch();
    void appendPage(QList<EventRow> page);
    // refreshTail's half for the rows: the tail after the last loaded row, once none is on its way.
    void refreshRows();

    std::shared_ptr<EventPageSource> m_source;
    std::shared_ptr<const std::vector<EventCause>> m_causes;
    EventQuery m_query;
    QList<EventRow> m_rows;
    bool m_exhausted = true;
    bool m_inChange = false; // inside a reset or an insertion: no nested fetchMore
    qint64 m_matching = 0;
    bool m_counting = false;
    bool m_fetchInFlight = false;  // a background page fetch for m_pageGeneration is running
    quint64 m_pageGeneration = 0;  // a page fetched for an older query or source is dropped
    quint64 m_queryGeneration = 0; // a background count for an older query is dropped
    // refreshTail() came while a background page (rows) or count was on its way: it runs again
    // when that arrives, else rows committed after the worker read would never show.
    bool m_rowsRefreshPending = false;
    bool m_recountPending = false;
};

// The text of the detail pane: request line, status, headers (secrets masked) and body.
QString eventDetailText(const RequestEvent &event);
// True for header names whose values are credentials and must never be shown.
bool isSecretHeader(QStringView lowerName);

} // namespace ts::models
