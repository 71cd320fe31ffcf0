#pragma once
// Breakers view: a timeline of state bands per scope (closed, soft-open, open, half-open), the
// logged and the reconstructed breaker of the same scope on adjacent rows, and the transitions
// listed below.

#include "dashboardpage.h"

#include <QStringList>

class QLabel;
class QSortFilterProxyModel;
class QTableView;
class QCPItemStraightLine;

namespace ts::models {
class BreakerTransitionsModel;
}

namespace ts::widgets {

struct BreakerBand
{
    int row = 0;
    qint64 startMs = 0;
    qint64 endMs = 0;
    QString state;
};

// Turns transitions into state bands per (scope, source) row over [firstMs, lastMs]. Before a
// row's first transition the breaker is in that transition's "from" state. Rows are ordered by
// scope, then logged before reconstructed; rowLabels receives "scope (source)".
std::vector<BreakerBand> breakerBands(const ReportData &report, QStringList *rowLabels);

class BreakersPage : public DashboardPage
{
    Q_OBJECT
public:
    explicit BreakersPage(models::TimeRange *timeRange, QWidget *parent = nullptr);

    [[nodiscard]] QCustomPlot *plot() const override { return m_plot; }
    [[nodiscard]] QAbstractItemModel *tableModel() const override;
    [[nodiscard]] const std::vector<BreakerBand> &bands() const { return m_bands; }
    [[nodiscard]] const QStringList &rowLabels() const { return m_rowLabels; }

protected:
    void refresh() override;
    void timeChanged() override;

private:
    void applyTimeRange();

    QCustomPlot *m_plot;
    QLabel *m_summary;
    models::BreakerTransitionsModel *m_model;
    QSortFilterProxyModel *m_proxy;
    QTableView *m_view;
    std::vector<BreakerBand> m_bands;
    QStringList m_rowLabels;
    QCPItemStraightLine *m_cursor = nullptr;
    bool m_applyingRange = false; // true while we set the axis from the TimeRange (no feedback)
};

} // namespace ts::widgets
