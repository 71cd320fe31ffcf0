#pragma once
// Bucket view: one (limit, key) bucket over time. Top: usage as the limiter counts it (throttled
// requests included where the limit charges them) with the accepted usage as a second layer,
// against the documented capacity (and the effective limit learned from observed 429s),
// observed and predicted 429 markers, Retry-After intervals shaded until the next safe send;
// 429s that came while the limit had room get a note on the chart saying so. Bottom: this
// bucket's fill (its usage / its capacity, not the key's fullest limit) against the percentage
// the service reported in headers for this key. The header
// line counts down to the next safe send from now (the replay instant or the end of the data).
//
// Mouse: drag pans, wheel zooms (time axis only), Shift+drag selects a range to zoom into,
// double-click shows everything. The x range is the shared TimeRange.

#include "dashboardpage.h"

class QComboBox;
class QLabel;
class QCPAxisRect;
class QCPGraph;
class QCPItemStraightLine;
class QCPItemText;
class QCPLayer;
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
    [[nodiscard]] QCPGraph *acceptedGraph() const { return m_accepted; }
    // The note on the chart about observed 429s below the limit (empty when there is none).
    [[nodiscard]] QString belowLimitNote() const;
    // The next safe send as the header shows it ("safe to send in 42 s: ...").
    [[nodiscard]] QString safeSendText() const;
    [[nodiscard]] QCPGraph *capacityGraph() const { return m_capacity; }
    [[nodiscard]] QCPGraph *effectiveLimitGraph() const { return m_effective; }
    [[nodiscard]] QCPGraph *observedThrottleGraph() const { return m_observed429; }
    [[nodiscard]] QCPGraph *predictedThrottleGraph() const { return m_predicted429; }
    [[nodiscard]] QCPGraph *retryAfterGraph() const { return m_retryAfter; }
    // Markers where the service's answers corrected the bucket (ScopeSeries::corrections).
    [[nodiscard]] QCPGraph *correctionGraph() const { return m_corrections; }
    [[nodiscard]] QCPGraph *reconstructedPctGraph() const { return m_reconstructedPct; }
    [[nodiscard]] QCPGraph *observedPctGraph() const { return m_observedPct; }
    [[nodiscard]] QString limitsText() const;

protected:
    void refresh() override;
    void timeChanged() override;

private:
    void rebuildScopeList();
    void rebuildGraphs();
    void showBelowLimitNote(const ScopeSummary &scope, const ScopeSeries &series);
    void setPercentPane(const ScopeSummary &scope, const ScopeSeries &series,
                        std::optional<qint64> lastMs);
    [[nodiscard]] QString describeLimits(const ScopeSummary &scope,
                                         const ScopeSeries &series) const;
    void applyTimeRange();
    void onPlotRangeChanged(const QCPRange &range);
    void placeCursor();
    void updateSafeSend();

    QComboBox *m_scopes;
    QLabel *m_limits;
    QCustomPlot *m_plot;
    QCPAxisRect *m_pctRect = nullptr;
    QCPGraph *m_usage = nullptr;
    QCPGraph *m_accepted = nullptr;
    QCPItemText *m_belowLimitNote = nullptr;
    QLabel *m_safeSend = nullptr;
    QCPGraph *m_capacity = nullptr;
    QCPGraph *m_effective = nullptr;
    QCPGraph *m_observed429 = nullptr;
    QCPGraph *m_predicted429 = nullptr;
    QCPGraph *m_corrections = nullptr;
    QCPGraph *m_retryAfter = nullptr;
    QCPGraph *m_reconstructedPct = nullptr;
    QCPGraph *m_observedPct = nullptr;
    QCPItemStraightLine *m_cursor = nullptr;
    QCPItemStraightLine *m_pctCursor = nullptr;
    QCPLayer *m_cursorLayer = nullptr;
    qint64 m_appliedStartMs = 0; // the range the axes show, to tell a scrub from a zoom
    qint64 m_appliedEndMs = 0;
    int m_scopeIndex = -1;
    quint64 m_drawnGeneration = 0;
    int m_drawnScope = -2;
    bool m_applyingRange = false; // true while we set the axis from the TimeRange (no feedback)
};

} // namespace ts::widgets
