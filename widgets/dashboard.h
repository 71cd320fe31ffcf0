#pragma once
// The dashboard: page navigation, the pages, the replay bar and the shared TimeRange. Snapshots
// arrive at any rate; the latest is kept and a timer hands it to the pages at most ~10 times a
// second, and only the visible page redraws. MainWindow hosts one Dashboard and adds menus.

#include "engine/reportdata.h"
#include "ingest/ingeststatus.h"

#include <QWidget>

#include <memory>

class QAbstractItemModel;
class QCustomPlot;
class QListWidget;
class QStackedWidget;
class QTimer;

namespace ts::models {
class AlertsModel;
class TimeRange;
} // namespace ts::models

namespace ts::widgets {

class AlertsPage;
class BreakersPage;
class BucketPage;
class DashboardPage;
class EventsPage;
class IngestPage;
class OverviewPage;
class ReplayBar;
class ThrottlesPage;

class Dashboard : public QWidget
{
    Q_OBJECT
public:
    explicit Dashboard(QWidget *parent = nullptr);
    ~Dashboard() override;

    // overview, bucket, throttles, breakers, alerts, events, ingest
    static QStringList pageNames();
    bool showPage(const QString &name);
    [[nodiscard]] QString currentPageName() const;
    // What an exported chart of the current page is titled: the page ("Throttles"), and on the
    // Bucket page the bucket shown ("Bucket · fabric/platform · sp-migrator").
    [[nodiscard]] QString currentPlotTitle() const;

    // Keeps the newest snapshot; the drain timer applies it (at most every kDrainIntervalMs).
    void applySnapshot(std::shared_ptr<const DashboardSnapshot> snapshot);
    // Applies a pending snapshot now and brings the visible page up to date (tests,
    // screenshots, benchmarks).
    void flushPendingSnapshot();
    [[nodiscard]] const std::shared_ptr<const DashboardSnapshot> &snapshot() const
    {
        return m_current;
    }

    void setIngestStatus(const IngestStatus &status);
    void setWorkspacePath(const QString &path);
    void showBucket(int scopeIndex);
    // The events page filtered to [startMs, endMs) and this error code.
    void showEvents(qint64 startMs, qint64 endMs, const QString &errorCode);

    [[nodiscard]] QCustomPlot *currentPlot() const;
    [[nodiscard]] QAbstractItemModel *currentTable() const;

    [[nodiscard]] models::TimeRange *timeRange() const { return m_timeRange; }
    [[nodiscard]] models::AlertsModel *alertsModel() const { return m_alertsModel; }
    [[nodiscard]] OverviewPage *overviewPage() const { return m_overview; }
    [[nodiscard]] BucketPage *bucketPage() const { return m_bucket; }
    [[nodiscard]] ThrottlesPage *throttlesPage() const { return m_throttles; }
    [[nodiscard]] BreakersPage *breakersPage() const { return m_breakers; }
    [[nodiscard]] AlertsPage *alertsPage() const { return m_alerts; }
    [[nodiscard]] EventsPage *eventsPage() const { return m_events; }
    [[nodiscard]] IngestPage *ingestPage() const { return m_ingest; }
    [[nodiscard]] ReplayBar *replayBar() const { return m_replay; }
    [[nodiscard]] QListWidget *navigation() const { return m_navigation; }

    // How often a pending snapshot is applied (Preferences: refresh rate); kDrainIntervalMs
    // by default.
    void setRefreshIntervalMs(int ms);
    [[nodiscard]] int refreshIntervalMs() const;
    // Draws every page again from the current snapshot (after a display setting changed).
    void redrawAll();

    static constexpr int kDrainIntervalMs = 100;
    // New critical alerts newer than this (wall clock) are announced; older ones come from an
    // imported file and are history, not news.
    static constexpr qint64 kNotifyRecentMs = 5 * 60 * 1000;

Q_SIGNALS:
    void pageChanged(const QString &name);
    // Critical alerts that appeared in the latest snapshots and are recent (live data).
    void criticalAlertsRaised(const QList<ts::Alert> &alerts);
    void snapshotApplied(quint64 generation);

protected:
    void changeEvent(QEvent *event) override;

private:
    void updateNavigationIcons();
    void drain();
    void onAlertsAdded(const QList<ts::Alert> &alerts);

    models::TimeRange *m_timeRange;
    models::AlertsModel *m_alertsModel;
    QListWidget *m_navigation;
    QStackedWidget *m_stack;
    ReplayBar *m_replay;
    OverviewPage *m_overview;
    BucketPage *m_bucket;
    ThrottlesPage *m_throttles;
    BreakersPage *m_breakers;
    AlertsPage *m_alerts;
    EventsPage *m_events;
    IngestPage *m_ingest;
    QList<DashboardPage *> m_snapshotPages;
    QTimer *m_drainTimer;
    std::shared_ptr<const DashboardSnapshot> m_pending;
    std::shared_ptr<const DashboardSnapshot> m_current;
};

} // namespace ts::widgets
