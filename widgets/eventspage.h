#pragma once
// Events: a virtual table over the workspace (pages fetched as the view scrolls), a filter bar
// (identity, status, error code, lane, text, visible time range), a column chooser and a detail
// pane with the (redacted) headers and body of the selected event.

#include "engine/reportdata.h"
#include "models/eventpagesource.h"

#include <QElapsedTimer>
#include <QWidget>

#include <memory>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QTableView;
class QTimer;
class QToolButton;

namespace ts::models {
class EventsModel;
class TimeRange;
} // namespace ts::models

namespace ts::widgets {

class EventsPage : public QWidget
{
    Q_OBJECT
public:
    explicit EventsPage(models::TimeRange *timeRange, QWidget *parent = nullptr);

    void setEventSource(std::shared_ptr<models::EventPageSource> source);
    // Opens a read-only reader on the workspace file; false (and the reason in the page) when
    // it cannot be opened.
    bool setWorkspacePath(const QString &path);
    // Sets the filter bar to these values and applies them.
    void setFilter(const models::EventQuery &query);
    [[nodiscard]] models::EventQuery currentQuery() const;
    void setColumnVisible(int column, bool visible);
    // The engine's causes of throttled events (DashboardSnapshot::eventCauses), for the Cause
    // column and filter.
    void setEventCauses(std::shared_ptr<const std::vector<EventCause>> causes);
    // The snapshot the detail pane reads the buckets of the selected event's key from, at its
    // instant (models::bucketsAtText: the value the report, the Bucket chart and the fill grid
    // give then).
    void setSnapshot(std::shared_ptr<const DashboardSnapshot> snapshot);
    // Shows only events of this cause (throttleCauseName; empty = any), across every event:
    // the rows come from the engine's list of causes, each looked up in the events' source
    // (models::CauseEventSource), since the cause is the engine's, not a column of the workspace.
    void setCauseFilter(const QString &cause);
    [[nodiscard]] QString causeFilter() const;
    // Rows shown, of those loaded.
    [[nodiscard]] int shownRowCount() const;

    [[nodiscard]] models::EventsModel *model() const { return m_model; }
    [[nodiscard]] QTableView *view() const { return m_view; }
    [[nodiscard]] QString detailText() const;
    [[nodiscard]] QString statusText() const;

    // New events may have reached the source (a snapshot arrived): shown at most once a second
    // while the page is visible, and when it is shown next otherwise.
    void noteNewEvents();

    // Saved with the window layout.
    [[nodiscard]] QByteArray saveHeaderState() const;
    void restoreHeaderState(const QByteArray &state);

protected:
    void showEvent(QShowEvent *event) override;

private:
    void applyFilter();
    void showDetail();
    void updateStatus();
    // The model's source: the events' own, or the cause filter's view of it.
    void applyCauseSource();
    void showColumnMenu(const QPoint &globalPos);

    models::TimeRange *m_timeRange;
    models::EventsModel *m_model;
    QLineEdit *m_identity;
    QLineEdit *m_status;
    QLineEdit *m_errorCode;
    QComboBox *m_lane;
    QComboBox *m_cause; // cause filter: the model reads m_causeSource while one is chosen
    std::shared_ptr<models::EventPageSource> m_baseSource; // the events' source (workspace)
    std::shared_ptr<models::CauseEventSource> m_causeSource; // null: no cause chosen
    std::shared_ptr<const std::vector<EventCause>> m_causes;
    QLineEdit *m_text;
    QCheckBox *m_visibleRangeOnly;
    QToolButton *m_columns;
    QTableView *m_view;
    QPlainTextEdit *m_detail;
    QLabel *m_statusLabel;
    QTimer *m_debounce;
    std::optional<qint64> m_fromMs; // an explicit interval (a click on a throttle bar)
    std::optional<qint64> m_toMs;
    bool m_tailStale = false; // new events arrived since the last refreshTail()
    QElapsedTimer m_sinceTailRefresh;
    QTimer *m_tailTimer; // the deferred refresh of a throttled noteNewEvents()
    std::shared_ptr<const DashboardSnapshot> m_snapshot;
};

} // namespace ts::widgets
