#include "alertspage.h"

#include "core/timeparse.h"
#include "models/alertsmodel.h"
#include "models/displaynames.h"
#include "models/timerange.h"
#include "theme.h"

#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

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
      m_view(new QTableView), m_summary(new QLabel), m_detail(new QLabel)
{
    auto *layout = new QVBoxLayout(this);
    // Wrapped: a long summary must not set the window's minimum width.
    m_summary->setWordWrap(true);
    m_summary->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
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
    m_view->setWordWrap(false); // one line per alert; the selected one in full below
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->setObjectName(QStringLiteral("alertsTable"));
    layout->addWidget(m_view, 1);
    // The detail of the selected alert in full: the sentence that tells the operator what to do
    // is the longest column, and a table cell can only show its beginning.
    m_detail->setObjectName(QStringLiteral("alertDetail"));
    m_detail->setWordWrap(true);
    m_detail->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_detail->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_detail->setFrameShape(QFrame::StyledPanel);
    m_detail->setMargin(6);
    m_detail->setText(tr("Select an alert to read it in full."));
    layout->addWidget(m_detail);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) { showDetail(current); });
    connect(m_view, &QTableView::clicked, this, [this](const QModelIndex &proxyIndex) {
        jumpToAlert(m_proxy->mapToSource(proxyIndex).row());
    });
    connect(m_view, &QTableView::activated, this, [this](const QModelIndex &proxyIndex) {
        jumpToAlert(m_proxy->mapToSource(proxyIndex).row());
    });
    connect(m_model, &QAbstractItemModel::rowsInserted, this, [this] {
        markStale();
        refreshIfStale();
    });
    // Rows are inserted or changed in place while live, so the selection follows its group by
    // itself; only a reset (another policy) loses it, and then the same group is selected again.
    connect(m_model, &QAbstractItemModel::modelAboutToBeReset, this, [this] {
        m_selectedGroup = m_view->currentIndex().data(models::AlertsModel::GroupKeyRole).toString();
    });
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
        const int row = m_model->rowOfGroup(m_selectedGroup);
        if (row >= 0)
            m_view->selectionModel()->setCurrentIndex(
                m_proxy->mapFromSource(m_model->index(row, 0)),
                QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        markStale();
        refreshIfStale();
    });
    connect(m_model, &QAbstractItemModel::dataChanged, this, [this] {
        markStale();
        refreshIfStale();
    });
}

QAbstractItemModel *AlertsPage::tableModel() const
{
    return m_proxy;
}

void AlertsPage::jumpToAlert(int row)
{
    if (row < 0 || row >= m_model->rowCount())
        return;
    // A group spans its first to its last alert; the replay shows its latest.
    const models::AlertGroup &group = m_model->groupAt(row);
    timeRange()->setRange(group.firstMs - kJumpMarginMs, group.lastMs + kJumpMarginMs);
    timeRange()->setReplayInstant(group.lastMs);
}

void AlertsPage::refresh()
{
    int counts[3] = {0, 0, 0};
    for (const Alert &alert : m_model->alerts())
        ++counts[models::AlertsModel::severityRank(alert.severity)];
    m_summary->setText(m_model->rowCount() == 0
                           ? tr("No alerts.")
                           : tr("%1 critical, %2 warnings, %3 info, in %4 rows: repeats of the "
                                "same kind and key are one row. Click an alert to see that "
                                "moment on every page.")
                                 .arg(counts[2])
                                 .arg(counts[1])
                                 .arg(counts[0])
                                 .arg(m_model->rowCount()));
    // Time, severity and kind fit their contents; the key at most a quarter of the table, so the
    // detail column (stretched, elided; in full below) always starts on screen.
    for (int column : {models::AlertsModel::TimeColumn, models::AlertsModel::SeverityColumn,
                       models::AlertsModel::KindColumn, models::AlertsModel::KeyColumn,
                       models::AlertsModel::CountColumn, models::AlertsModel::FirstColumn})
        m_view->resizeColumnToContents(column);
    const int keyLimit = std::max(160, m_view->viewport()->width() / 4);
    if (m_view->columnWidth(models::AlertsModel::KeyColumn) > keyLimit)
        m_view->setColumnWidth(models::AlertsModel::KeyColumn, keyLimit);
    showDetail(m_view->currentIndex());
}

void AlertsPage::showDetail(const QModelIndex &proxyIndex)
{
    if (!proxyIndex.isValid()) {
        m_detail->setText(tr("Select an alert to read it in full."));
        return;
    }
    const int row = m_proxy->mapToSource(proxyIndex).row();
    if (row < 0 || row >= m_model->rowCount())
        return;
    const models::AlertGroup &group = m_model->groupAt(row);
    const QString when =
        group.count == 1
            ? models::formatDisplayTime(group.lastMs)
            : tr("%1 times, %2 … %3")
                  .arg(group.count)
                  .arg(models::formatDisplayTime(group.firstMs), models::formatDisplayTime(group.lastMs));
    m_detail->setText(QStringLiteral("<b>%1 %2</b> · %3 · %4<br>%5")
                          .arg(group.severity.toHtmlEscaped(), group.kind.toHtmlEscaped(),
                               group.key.toHtmlEscaped(), when.toHtmlEscaped(),
                               group.detail.toHtmlEscaped()));
}

} // namespace ts::widgets
