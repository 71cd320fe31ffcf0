#pragma once
// Overview: the headline figures and the bucket fill grid (identities x limits). One click on a
// cell opens that bucket.

#include "dashboardpage.h"

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace ts::models {
class BucketGridModel;
}

namespace ts::widgets {

class OverviewPage : public DashboardPage
{
    Q_OBJECT
public:
    explicit OverviewPage(models::TimeRange *timeRange, QWidget *parent = nullptr);

    [[nodiscard]] models::BucketGridModel *gridModel() const { return m_model; }
    [[nodiscard]] QSortFilterProxyModel *gridProxy() const { return m_proxy; }
    [[nodiscard]] QTableView *gridView() const { return m_view; }
    [[nodiscard]] QAbstractItemModel *tableModel() const override;
    void setIdentityFilter(const QString &text);

    // Headline figures as displayed, for tests: "events", "throttles", "worst", "breakers",
    // "alerts".
    [[nodiscard]] QString headline(const QString &name) const;

Q_SIGNALS:
    void bucketActivated(int scopeIndex);

protected:
    void refresh() override;
    void timeChanged() override;

private:
    void updateHeadline();

    models::BucketGridModel *m_model;
    QSortFilterProxyModel *m_proxy;
    QTableView *m_view;
    QLineEdit *m_filter;
    QLabel *m_emptyHint;
    QLabel *m_instantLabel;
    QLabel *m_events;
    QLabel *m_throttles;
    QLabel *m_worst;
    QLabel *m_breakers;
    QLabel *m_alerts;
};

} // namespace ts::widgets
