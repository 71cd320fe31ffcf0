#pragma once
// Alerts, repeats grouped: last time, severity, kind, key, count, first time, detail; activating an alert jumps the shared time range
// there and replays the buckets at that instant.

#include "dashboardpage.h"

class QSortFilterProxyModel;
class QTableView;
class QLabel;
class QModelIndex;

namespace ts::models {
class AlertsModel;
}

namespace ts::widgets {

class AlertsPage : public DashboardPage
{
    Q_OBJECT
public:
    // The model is the dashboard's (it is updated with every snapshot so that notifications
    // about new critical alerts do not depend on this page being visible).
    AlertsPage(models::AlertsModel *model, models::TimeRange *timeRange, QWidget *parent = nullptr);

    [[nodiscard]] QAbstractItemModel *tableModel() const override;
    [[nodiscard]] QTableView *view() const { return m_view; }
    // Sets the time range around the alert of this (source model) row and replays at it.
    void jumpToAlert(int row);

protected:
    void refresh() override;
    void timeChanged() override {}

private:
    void showDetail(const QModelIndex &proxyIndex);
    models::AlertsModel *m_model;
    QSortFilterProxyModel *m_proxy;
    QTableView *m_view;
    QLabel *m_summary;
    QLabel *m_detail; // the selected alert in full
    QString m_selectedGroup; // across a model reset (AlertsModel::GroupKeyRole)
};

} // namespace ts::widgets
