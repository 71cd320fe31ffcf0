#pragma once
// The replay scrubber under every page: a slider over [first, last] event time that sets the
// shared replay instant (every bucket as it was then), a Live button that follows the newest
// data again, and the instant in UTC.

#include <QWidget>

class QLabel;
class QSlider;
class QToolButton;

namespace ts::models {
class TimeRange;
}

namespace ts::widgets {

class ReplayBar : public QWidget
{
    Q_OBJECT
public:
    explicit ReplayBar(models::TimeRange *timeRange, QWidget *parent = nullptr);

    [[nodiscard]] QSlider *slider() const { return m_slider; }
    [[nodiscard]] QToolButton *liveButton() const { return m_live; }
    // The instant a slider position stands for.
    [[nodiscard]] qint64 instantForPosition(int position) const;

    static constexpr int kSteps = 10000;

private:
    void syncFromTimeRange();

    models::TimeRange *m_timeRange;
    QToolButton *m_live;
    QSlider *m_slider;
    QLabel *m_label;
    bool m_syncing = false; // true while we move the slider from the TimeRange (no feedback)
};

} // namespace ts::widgets
