#include "replaybar.h"

#include "core/timeparse.h"
#include "models/timerange.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <QToolButton>

namespace ts::widgets {

ReplayBar::ReplayBar(models::TimeRange *timeRange, QWidget *parent)
    : QWidget(parent), m_timeRange(timeRange), m_live(new QToolButton),
      m_slider(new QSlider(Qt::Horizontal)), m_label(new QLabel)
{
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(6, 2, 6, 2);
    m_live->setText(tr("Live"));
    m_live->setCheckable(true);
    m_live->setToolTip(tr("Follow the newest data (End)"));
    m_live->setShortcut(QKeySequence(Qt::Key_End));
    layout->addWidget(m_live);
    layout->addWidget(new QLabel(tr("Replay:")));
    m_slider->setRange(0, kSteps);
    m_slider->setPageStep(kSteps / 50);
    m_slider->setSingleStep(std::max(1, kSteps / 1000));
    m_slider->setToolTip(tr("Drag to see every bucket as it was at that instant"));
    m_slider->setObjectName(QStringLiteral("replaySlider"));
    layout->addWidget(m_slider, 1);
    m_label->setMinimumWidth(m_label->fontMetrics().horizontalAdvance(
        QStringLiteral("2026-02-18T22:46:00.000Z (live)")));
    m_label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_label);

    connect(m_slider, &QSlider::valueChanged, this, [this](int position) {
        if (m_syncing || !m_timeRange->hasBounds())
            return;
        m_timeRange->setReplayInstant(instantForPosition(position));
    });
    connect(m_live, &QToolButton::toggled, this, [this](bool on) {
        if (!m_syncing)
            m_timeRange->setFollowing(on);
    });
    connect(m_timeRange, &models::TimeRange::boundsChanged, this, &ReplayBar::syncFromTimeRange);
    connect(m_timeRange, &models::TimeRange::replayInstantChanged, this,
            &ReplayBar::syncFromTimeRange);
    connect(m_timeRange, &models::TimeRange::followingChanged, this,
            &ReplayBar::syncFromTimeRange);
    syncFromTimeRange();
}

qint64 ReplayBar::instantForPosition(int position) const
{
    const qint64 span = m_timeRange->lastMs() - m_timeRange->firstMs();
    return m_timeRange->firstMs() + span * position / kSteps;
}

void ReplayBar::syncFromTimeRange()
{
    m_syncing = true;
    m_live->setChecked(m_timeRange->isFollowing());
    m_slider->setEnabled(m_timeRange->hasBounds());
    const auto instant = m_timeRange->replayInstant();
    if (!m_timeRange->hasBounds()) {
        m_label->setText(tr("no data"));
    } else if (instant) {
        const qint64 span = std::max<qint64>(1, m_timeRange->lastMs() - m_timeRange->firstMs());
        const qint64 offset = std::clamp(*instant - m_timeRange->firstMs(), qint64(0), span);
        m_slider->setValue(static_cast<int>(offset * kSteps / span));
        m_label->setText(formatIsoMs(*instant));
    } else {
        m_slider->setValue(kSteps);
        m_label->setText(formatIsoMs(m_timeRange->lastMs()) +
                         (m_timeRange->isFollowing() ? tr(" (live)") : tr(" (latest)")));
    }
    m_syncing = false;
}

} // namespace ts::widgets
