#include "dashboard.h"

#include "alertspage.h"
#include "breakerspage.h"
#include "bucketpage.h"
#include "eventspage.h"
#include "ingestpage.h"
#include "models/alertsmodel.h"
#include "models/eventsmodel.h"
#include "models/ingestmodels.h"
#include "models/snapshotmath.h"
#include "models/timerange.h"
#include "overviewpage.h"
#include "pageicons.h"
#include "replaybar.h"
#include "throttlespage.h"

#include <QDateTime>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QListWidget>
#include <QStackedWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

namespace ts::widgets {

namespace {
struct PageTitle
{
    const char *name;
    const char *title;
};
// Order = navigation order = Ctrl+1..7.
constexpr PageTitle kPages[] = {
    {"overview", QT_TRANSLATE_NOOP("Dashboard", "Overview")},
    {"bucket", QT_TRANSLATE_NOOP("Dashboard", "Bucket")},
    {"throttles", QT_TRANSLATE_NOOP("Dashboard", "Throttles")},
    {"breakers", QT_TRANSLATE_NOOP("Dashboard", "Breakers")},
    {"alerts", QT_TRANSLATE_NOOP("Dashboard", "Alerts")},
    {"events", QT_TRANSLATE_NOOP("Dashboard", "Events")},
    {"ingest", QT_TRANSLATE_NOOP("Dashboard", "Ingest")},
};
} // namespace

Dashboard::Dashboard(QWidget *parent)
    : QWidget(parent), m_timeRange(new models::TimeRange(this)),
      m_alertsModel(new models::AlertsModel(this)), m_navigation(new QListWidget),
      m_stack(new QStackedWidget), m_replay(new ReplayBar(m_timeRange)),
      m_overview(new OverviewPage(m_timeRange)), m_bucket(new BucketPage(m_timeRange)),
      m_throttles(new ThrottlesPage(m_timeRange)), m_breakers(new BreakersPage(m_timeRange)),
      m_alerts(new AlertsPage(m_alertsModel, m_timeRange)), m_events(new EventsPage(m_timeRange)),
      m_ingest(new IngestPage), m_drainTimer(new QTimer(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *body = new QHBoxLayout;
    // The sidebar: one row per page, an icon and its name, like a native tool's source list.
    m_navigation->setObjectName(QStringLiteral("pageNavigation"));
    m_navigation->setIconSize(QSize(22, 22));
    m_navigation->setSpacing(2);
    m_navigation->setFrameShape(QFrame::NoFrame);
    m_navigation->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    for (const PageTitle &page : kPages) {
        auto *item = new QListWidgetItem(tr(page.title), m_navigation);
        item->setToolTip(tr(page.title));
        item->setSizeHint(QSize(0, 34));
    }
    updateNavigationIcons();
    int widest = 0;
    for (const PageTitle &page : kPages)
        widest = std::max(widest, m_navigation->fontMetrics().horizontalAdvance(tr(page.title)));
    m_navigation->setFixedWidth(widest + m_navigation->iconSize().width() + 40);
    body->addWidget(m_navigation);
    const QList<QWidget *> pages = {m_overview, m_bucket, m_throttles, m_breakers,
                                    m_alerts,   m_events, m_ingest};
    for (QWidget *page : pages)
        m_stack->addWidget(page);
    body->addWidget(m_stack, 1);
    layout->addLayout(body, 1);
    layout->addWidget(m_replay);
    m_snapshotPages = {m_overview, m_bucket, m_throttles, m_breakers, m_alerts};

    connect(m_navigation, &QListWidget::currentRowChanged, this, [this](int row) {
        if (row < 0)
            return;
        m_stack->setCurrentIndex(row);
        Q_EMIT pageChanged(QString::fromLatin1(kPages[row].name));
    });
    m_navigation->setCurrentRow(0);

    m_drainTimer->setInterval(kDrainIntervalMs);
    m_drainTimer->setSingleShot(true);
    connect(m_drainTimer, &QTimer::timeout, this, &Dashboard::drain);

    connect(m_overview, &OverviewPage::bucketActivated, this, &Dashboard::showBucket);
    connect(m_throttles, &ThrottlesPage::eventsRequested, this, &Dashboard::showEvents);
    connect(m_alertsModel, &models::AlertsModel::alertsAdded, this, &Dashboard::onAlertsAdded);
}

Dashboard::~Dashboard() = default;

void Dashboard::updateNavigationIcons()
{
    for (int row = 0; row < m_navigation->count(); ++row)
        m_navigation->item(row)->setIcon(
            pageIcon(QString::fromLatin1(kPages[row].name), palette()));
}

void Dashboard::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        updateNavigationIcons();
}

void Dashboard::setRefreshIntervalMs(int ms)
{
    m_drainTimer->setInterval(std::clamp(ms, 20, 10'000));
}

int Dashboard::refreshIntervalMs() const
{
    return m_drainTimer->interval();
}

void Dashboard::redrawAll()
{
    // Display settings (time zone, thresholds) changed: every page draws again from the same
    // snapshot, the visible one now, the others when shown.
    for (DashboardPage *page : std::as_const(m_snapshotPages))
        page->setSnapshot(page->snapshot()); // marks it stale; redraws it if visible
    const auto views = findChildren<QAbstractItemView *>();
    for (QAbstractItemView *view : views)
        view->viewport()->update();
    const auto headers = findChildren<QHeaderView *>();
    for (QHeaderView *header : headers)
        header->viewport()->update();
}

QStringList Dashboard::pageNames()
{
    QStringList names;
    for (const PageTitle &page : kPages)
        names.append(QString::fromLatin1(page.name));
    return names;
}

bool Dashboard::showPage(const QString &name)
{
    const auto index = pageNames().indexOf(name.toLower());
    if (index < 0)
        return false;
    m_navigation->setCurrentRow(static_cast<int>(index));
    return true;
}

QString Dashboard::currentPageName() const
{
    return pageNames().value(m_stack->currentIndex());
}

QString Dashboard::currentPlotTitle() const
{
    const QString name = currentPageName();
    QString title = name.left(1).toUpper() + name.mid(1);
    const int scope = m_bucket->scopeIndex();
    if (name == u"bucket" && m_current && scope >= 0 && scope < m_current->report.scopes.size())
        title += QStringLiteral(" · ") + models::scopeLabel(m_current->report.scopes.at(scope));
    return title;
}

void Dashboard::applySnapshot(std::shared_ptr<const DashboardSnapshot> snapshot)
{
    if (!snapshot)
        return;
    // Stale snapshots (a slower worker's older generation) are dropped.
    if (m_pending && snapshot->generation < m_pending->generation)
        return;
    if (m_current && snapshot->generation < m_current->generation)
        return;
    m_pending = std::move(snapshot);
    // Draining on the timer coalesces bursts: at most one application per interval however
    // many snapshots arrive.
    if (!m_drainTimer->isActive())
        m_drainTimer->start();
}

void Dashboard::flushPendingSnapshot()
{
    m_drainTimer->stop();
    drain();
    if (auto *page = qobject_cast<DashboardPage *>(m_stack->currentWidget()))
        page->refreshIfStale();
}

void Dashboard::drain()
{
    if (!m_pending)
        return;
    m_current = std::move(m_pending);
    m_pending.reset();
    const ReportData &report = m_current->report;
    if (report.firstMs && report.lastMs)
        m_timeRange->setBounds(*report.firstMs, *report.lastMs);
    m_alertsModel->setAlerts(report.alerts);
    for (DashboardPage *page : std::as_const(m_snapshotPages))
        page->setSnapshot(m_current);
    // A snapshot means events went through the session, which also stores them in the
    // workspace the Events page reads.
    m_events->setEventCauses(m_current->eventCauses);
    m_events->setSnapshot(m_current);
    m_events->noteNewEvents();
    Q_EMIT snapshotApplied(m_current->generation);
}

void Dashboard::onAlertsAdded(const QList<Alert> &alerts)
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    QList<Alert> fresh;
    for (const Alert &alert : alerts) {
        if (alert.severity == u"critical" && alert.atMs >= now - kNotifyRecentMs)
            fresh.append(alert);
    }
    if (!fresh.isEmpty())
        Q_EMIT criticalAlertsRaised(fresh);
}

void Dashboard::setIngestStatus(const IngestStatus &status)
{
    m_ingest->setStatus(status);
    // Live while a tail, a listener or the demo is still feeding: only then is the newest
    // event "now" on the Overview.
    bool live = false;
    for (const IngestSourceStatus &source : status.sources)
        live = live || (source.live && !source.finished);
    m_overview->setLive(live);
}

void Dashboard::setWorkspacePath(const QString &path)
{
    m_events->setWorkspacePath(path);
}

void Dashboard::showBucket(int scopeIndex)
{
    m_bucket->setScopeIndex(scopeIndex);
    showPage(QStringLiteral("bucket"));
}

void Dashboard::showEvents(qint64 startMs, qint64 endMs, const QString &errorCode)
{
    models::EventQuery query;
    query.fromMs = startMs;
    query.toMs = endMs;
    query.errorCode = errorCode == u"none" ? QString() : errorCode;
    m_events->setFilter(query);
    showPage(QStringLiteral("events"));
}

QCustomPlot *Dashboard::currentPlot() const
{
    if (auto *page = qobject_cast<DashboardPage *>(m_stack->currentWidget()))
        return page->plot();
    return nullptr;
}

QAbstractItemModel *Dashboard::currentTable() const
{
    if (auto *page = qobject_cast<DashboardPage *>(m_stack->currentWidget()))
        return page->tableModel();
    if (m_stack->currentWidget() == m_events)
        return m_events->model();
    if (m_stack->currentWidget() == m_ingest)
        return m_ingest->sourcesModel();
    return nullptr;
}

} // namespace ts::widgets
