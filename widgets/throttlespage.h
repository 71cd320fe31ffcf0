#pragma once
// Throttles view: 429s (and 503/430 throttles) per time bin stacked by error code (or by cause:
// the limit, a running Retry-After, concurrency, capacity, unexplained), the table
// identity x error code, and the split by scope (application vs user) and kind. A click in the
// chart asks for the events behind the nearest bar (that bin and that code), at any zoom.

#include "dashboardpage.h"

#include <QMap>

class QComboBox;
class QLabel;
class QSortFilterProxyModel;
class QTableView;
class QCPBars;

namespace ts::models {
class ThrottleTableModel;
}

namespace ts::widgets {

class ThrottlesPage : public DashboardPage
{
    Q_OBJECT
public:
    explicit ThrottlesPage(models::TimeRange *timeRange, QWidget *parent = nullptr);

    [[nodiscard]] QCustomPlot *plot() const override { return m_plot; }
    [[nodiscard]] QAbstractItemModel *tableModel() const override;
    [[nodiscard]] models::ThrottleTableModel *throttleTable() const { return m_table; }
    // The stacked bars, bottom first (codes, or causes, ordered by total, largest at the
    // bottom); barCodes() names them.
    [[nodiscard]] QList<QCPBars *> bars() const { return m_bars; }
    [[nodiscard]] QStringList barCodes() const { return m_codes; }
    [[nodiscard]] QString splitText() const;
    // What the bars are stacked by: error codes (the default) or throttle causes.
    enum class StackBy { ErrorCode, Cause };
    void setStackBy(StackBy by);
    [[nodiscard]] StackBy stackBy() const { return m_stackBy; }

    // What a click on bar dataIndex of the bars for errorCode asks for (used by the click
    // handler; public so tests can drive it without synthesising mouse hits).
    void requestEventsForBar(const QString &errorCode, int dataIndex);
    // A click at this point of the plot (widget pixels): the nearest bin with data at any zoom
    // (bins narrower than a pixel included), and in it the code whose part of the stack is at
    // that height (the top one above the stack); asks for its events. False: no bin to pick.
    bool clickAt(QPointF pixel);

Q_SIGNALS:
    // The events behind a bar: throttles with this code in [startMs, endMs).
    void eventsRequested(qint64 startMs, qint64 endMs, const QString &errorCode);

protected:
    void refresh() override;
    void timeChanged() override;

private:
    void applyTimeRange();
    // The index in the snapshot's bins of the bin with data nearest to `ms`; -1 when none.
    [[nodiscard]] int nearestBinWithData(qint64 ms) const;

    QPoint m_pressAt; // where the last press was: a release near it is a click, not a drag

    QCustomPlot *m_plot;
    QLabel *m_split;
    QComboBox *m_stackChooser;
    StackBy m_stackBy = StackBy::ErrorCode;
    QLabel *m_note;
    models::ThrottleTableModel *m_table;
    QSortFilterProxyModel *m_proxy;
    QTableView *m_view;
    QList<QCPBars *> m_bars;
    QStringList m_codes;
    qint64 m_binMs = 1000;
    bool m_applyingRange = false; // true while we set the axis from the TimeRange (no feedback)
};

} // namespace ts::widgets
