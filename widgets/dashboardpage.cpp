#include "dashboardpage.h"

#include "models/timerange.h"
#include "plotstyle.h"

#include "qcp.h"
#include <QEvent>

namespace ts::widgets {

DashboardPage::DashboardPage(models::TimeRange *timeRange, QWidget *parent)
    : QWidget(parent), m_timeRange(timeRange)
{
    const auto onTimeChanged = [this] {
        if (isVisible()) {
            if (m_snapshotStale)
                refreshIfStale();
            else
                timeChanged();
        } else {
            m_timeStale = true;
        }
    };
    connect(timeRange, &models::TimeRange::rangeChanged, this, onTimeChanged);
    connect(timeRange, &models::TimeRange::replayInstantChanged, this, onTimeChanged);
}

void DashboardPage::setSnapshot(std::shared_ptr<const DashboardSnapshot> snapshot)
{
    m_snapshot = std::move(snapshot);
    m_snapshotStale = true;
    if (isVisible())
        refreshIfStale();
}

void DashboardPage::refreshIfStale()
{
    if (m_snapshotStale) {
        m_snapshotStale = false;
        m_timeStale = false;
        refresh();
    } else if (m_timeStale) {
        m_timeStale = false;
        timeChanged();
    }
}

void DashboardPage::markStale()
{
    m_snapshotStale = true;
}

void DashboardPage::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    refreshIfStale();
}

void DashboardPage::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        // Queued: a palette reaches this page before its children (the plot still has the old
        // one while this event is delivered).
        QMetaObject::invokeMethod(
            this,
            [this] {
                if (QCustomPlot *p = plot()) {
                    applyPalette(p);
                    p->replot(QCustomPlot::rpQueuedReplot);
                }
            },
            Qt::QueuedConnection);
    }
}

} // namespace ts::widgets
