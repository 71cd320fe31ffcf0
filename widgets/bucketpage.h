#pragma once
// Bucket view: one (limit, key) bucket over time. Top: usage against the documented capacity
// (and the effective limit learned from observed 429s), observed and predicted 429 markers,
// Retry-After intervals shaded until the next safe send. Bottom: the reconstructed limit
// percentage against the one the service reported in headers.
//
// Mouse: drag pans, wheel zooms (time axis only), Shift+drag selects a range to zoom into,
// double-click shows everything. The x range is the shared TimeRange.

#include "dashboardpage.h"

class QComboBox;
class QLabel;
class QCPAxisRect;
class QCPGraph;
class QCPItemStraightLine;
class QCPRange;

namespace ts::widgets {

class BucketPage : public DashboardPage
{
    Q_OBJECT
public:
    explicit BucketPage(models::TimeRange *timeRange, QWidget *parent = nullptr);

    void setScopeIndex(int scopeIndex);
    [[nodiscard]] int scopeIndex() const { return m_scopeIndex; }
    [[nodiscard]] QCustomPlot *plot() const override { return m_plot; }

    // The graphs, for tests and the benchmark.
    [[nodiscard]] QCPGraph *usageGraph() const { return m_usage; }
    [[nodiscard]] QCPGraph *capacityGraph() const { return m_capacity; }
    [[nodiscard]] QCPGraph *effectiveLimitGraph() const { return m_effective; }
    [[nodiscard]] QCPGraph *observedThrottleGraph() const { return m_observed429; }
    [[nodiscard]] QCPGraph *predictedThrottleGraph() const { return m_predicted429; }
    [[nodiscard]] QCPGraph *retryAfterGraph() const { return m_retryAfter; }
    [[nodiscard]] QCPGraph *reconstructedPctGraph() const { return m_reconstructedPct; }
    [[nodiscard]] QCPGraph *observedPctGraph() const { return m_observedPct; }
    [[nodiscard]] QString limitsText() const;

protected:
    void refresh() override;
    void timeChanged() override;

private:
    void rebuildScopeList();
    void rebuildGraphs();
    void applyTimeRange();
    void onPlotRangeChanged(const QCPRange &range);

    QComboBox *m_scopes;
    QLabel *m_limits;
    QCustomPlot *m_plot;
    QCPAxisRect *m_pctRect = nullptr;
    QCPGraph *m_usage = nullptr;
    QCPGraph *m_capacity = nullptr;
    QCPGraph *m_effective = nullptr;
    QCPGraph *m_observed429 = nullptr;
    QCPGraph *m_predicted429 = nullptr;
    QCPGraph *m_retryAfter = nullptr;
    QCPGraph *m_reconstructedPct = nullptr;
    QCPGraph *m_observedPct = nullptr;
    QCPItemStraightLine *m_cursor = nullptr;
    QCPItemStraightLine *m_pctCursor = nullptr;
    int m_scopeIndex = -1;
    quint64 m_drawnGeneration = 0;
    int m_drawnScope = -2;
    bool m_applyingRange = false; // true while we set the axis from the TimeRange (no feedback)
};

} // namespace ts::widgets
