#include "alertspage.h"

#include "models/alertsmodel.h"
#include "models/timerange.h"
#include "theme.h"

#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QVBoxLayout>

namespace ts::widgets {

namespace {
// Colours the severity column: red critical, amber warning.
class SeverityDelegate : public QStyledItemDelegate
{
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem *option, const QModelIndex &index) const override
    {
        QStyledItemDelegate::initStyleOption(option, index);
        const int rank = index.data(models::AlertsModel::SeverityRankRole).toInt();
        if (rank == 2) {
            option->palette.setColor(QPalette::Text, fillColor(1.0));
            option->font.setBold(true);
        } else if (rank == 1) {
            option->palette.setColor(QPalette::Text, fillColor(0.9).darker(115));
        }
    }
};

constexpr qint64 kJumpMarginMs = 5 * 60 * 1000;
} // namespace

AlertsPage::AlertsPage(models::AlertsModel *model, models::TimeRange *timeRange, QWidget *parent)
    : DashboardPage(timeRange, parent), m_model(model), m_proxy(new QSortFilterProxyModel(this)),
      m_view(new QTableView), m_summary(new QLabel)
{
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(models::AlertsModel::SortRole);
    m_view->setModel(m_proxy);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(models::AlertsModel::TimeColumn, Qt::DescendingOrder);
    m_view->setItemDelegateForColumn(models::AlertsModel::SeverityColumn,
                                     new SeverityDelegate(m_view));
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->verticalHeader()->hide();
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->setObjectName(QStringLiteral("alertsTable"));
    layout->addWidget(m_view, 1);
    connect(m_view, &QTableView::clicked, this, [this](const QModelIndex &proxyIndex) {
        jumpToAlert(m_proxy->mapToSource(proxyIndex).row());
    });
    connect(m_view, &QTableView::activated, this, [this](const QModelIndex &proxyIndex) {
        jumpToAlert(m_proxy->mapToSource(proxyIndex).row());
    });
    connect(m_model, &QAbstractItemModel::rowsInserted, this, [this] { markStale(); refreshIfStale(); });
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] { markStale(); refreshIfStale(); });
}

QAbstractItemModel *AlertsPage::tableModel() const
{
    return m_proxy;
}

void AlertsPage::jumpToAlert(int row)
{
    if (row < 0 || row >= m_model->rowCount())
        return;
    const qint64 at = m_model->alertAt(row).atMs;
    timeRange()->setRange(at - kJumpMarginMs, at + kJumpMarginMs);
    timeRange()->setReplayInstant(at);
}

void AlertsPage::refresh()
{
    int counts[3] = {0, 0, 0};
    for (const Alert &alert : m_model->alerts())
        ++counts[models::AlertsModel::severityRank(alert.severity)];
    m_summary->setText(m_model->rowCount() == 0
                           ? tr("No alerts.")
                           : tr("%1 critical, %2 warnings, %3 info. Click an alert to see that "
                                "moment on every page.")
                                 .arg(counts[2])
                                 .arg(counts[1])
                                 .arg(counts[0]));
    m_view->resizeColumnsToContents();
}

} // namespace ts::widgets
