#pragma once
// Base of every dashboard page: it holds the latest snapshot and refreshes its widgets only
// while visible (a hidden page marks itself stale and catches up when shown), so a snapshot
// costs only the page the operator is looking at.

#include "engine/reportdata.h"

#include <QWidget>

#include <memory>

class QAbstractItemModel;
class QCustomPlot;

namespace ts::models {
class TimeRange;
}

namespace ts::widgets {

class DashboardPage : public QWidget
{
    Q_OBJECT
public:
    DashboardPage(models::TimeRange *timeRange, QWidget *parent = nullptr);

    void setSnapshot(std::shared_ptr<const DashboardSnapshot> snapshot);
    [[nodiscard]] const std::shared_ptr<const DashboardSnapshot> &snapshot() const
    {
        return m_snapshot;
    }
    // Brings a stale page up to date now (tests, screenshots, page switch).
    void refreshIfStale();

    // What File > Export acts on: the page's main plot and table (either may be null).
    [[nodiscard]] virtual QCustomPlot *plot() const { return nullptr; }
    [[nodiscard]] virtual QAbstractItemModel *tableModel() const { return nullptr; }

protected:
    // Draw the current snapshot. Called only while visible.
    virtual void refresh() = 0;
    // The time range or the replay instant changed. Called only while visible; by default a
    // full refresh.
    virtual void timeChanged() { refresh(); }
    void markStale();

    void showEvent(QShowEvent *event) override;
    void changeEvent(QEvent *event) override;

    models::TimeRange *timeRange() const { return m_timeRange; }

private:
    std::shared_ptr<const DashboardSnapshot> m_snapshot;
    models::TimeRange *m_timeRange;
    bool m_snapshotStale = true;
    bool m_timeStale = true;
};

} // namespace ts::widgets
