#pragma once
// Overview: the headline figures, then two views of the same buckets: the identities at a
// glance (one row per identity sorted by urgency: models::IdentityUrgencyModel) and the bucket
// fill grid (identities x limits). One click on a row or a cell opens that bucket.
//
// Replay honesty: the figures describe "now" only for a live feed at its newest event; a file,
// or any replay instant, is described "as of T".

#include "dashboardpage.h"

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;
class QTabWidget;

namespace ts::models {
class BucketGridModel;
class IdentityUrgencyModel;
} // namespace ts::models

namespace ts::widgets {

class OverviewPage : public DashboardPage
{
    Q_OBJECT
public:
    explicit OverviewPage(models::TimeRange *timeRange, QWidget *parent = nullptr);

    [[nodiscard]] models::BucketGridModel *gridModel() const { return m_model; }
    [[nodiscard]] QSortFilterProxyModel *gridProxy() const { return m_proxy; }
    [[nodiscard]] QTableView *gridView() const { return m_view; }
    [[nodiscard]] models::IdentityUrgencyModel *identityModel() const { return m_identityModel; }
    [[nodiscard]] QSortFilterProxyModel *identityProxy() const { return m_identityProxy; }
    [[nodiscard]] QTableView *identityView() const { return m_identityView; }
    [[nodiscard]] QTabWidget *views() const { return m_views; }
    // Identities (0) or the bucket grid (1).
    void showGrid(bool grid);
    // Whether the data is a live feed (tail, listener, demo): only then is its newest event
    // "now"; a file read is shown "as of" its last event.
    void setLive(bool live);
    [[nodiscard]] bool isLive() const { return m_live; }
    // The caption that says which instant the figures describe ("now", "as of T").
    [[nodiscard]] QString instantCaption() const;
    [[nodiscard]] QAbstractItemModel *tableModel() const override;
    void setIdentityFilter(const QString &text);

    // Headline figures as displayed, for tests: "events", "throttles", "worst", "breakers",
    // "alerts"; their captions as "<name>Caption" ("worstCaption": "Worst bucket now").
    [[nodiscard]] QString headline(const QString &name) const;

Q_SIGNALS:
    void bucketActivated(int scopeIndex);

protected:
    void refresh() override;
    void timeChanged() override;

private:
    void updateHeadline();
    void updateIdentities();
    void resizeIdentityColumns();
    void widenIdentityColumnsToContent();

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
    QLabel *m_worstCaption = nullptr;
    models::IdentityUrgencyModel *m_identityModel;
    QSortFilterProxyModel *m_identityProxy;
    QTableView *m_identityView;
    QTabWidget *m_views;
    bool m_live = false;
    bool m_identityColumnsSized = false;
};

} // namespace ts::widgets
