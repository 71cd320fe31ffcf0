#include "overviewpage.h"

#include "elidedlabel.h"

#include "core/timeparse.h"
#include "fillcelldelegate.h"
#include "models/bucketgridmodel.h"
#include "models/snapshotmath.h"
#include "models/timerange.h"
#include "theme.h"

#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace ts::widgets {

namespace {
// A headline "card": a small caption over a large figure. An elided card (the worst bucket,
// whose key can be long) takes a larger share of the row and never widens the window; the
// others show their short figures whole.
QLabel *addCard(QHBoxLayout *row, const QString &caption, const QString &objectName,
                bool elided = false)
{
    auto *frame = new QFrame;
    frame->setFrameShape(QFrame::StyledPanel);
    auto *layout = new QVBoxLayout(frame);
    layout->setContentsMargins(10, 6, 10, 6);
    auto *captionLabel = new QLabel(caption);
    QFont captionFont = captionLabel->font();
    captionFont.setPointSizeF(captionFont.pointSizeF() * 0.9);
    captionLabel->setFont(captionFont);
    captionLabel->setForegroundRole(QPalette::PlaceholderText);
    QLabel *value = elided ? new ElidedLabel(QStringLiteral("–")) : new QLabel(QStringLiteral("–"));
    value->setObjectName(objectName);
    QFont valueFont = value->font();
    valueFont.setPointSizeF(valueFont.pointSizeF() * 1.6);
    valueFont.setBold(true);
    value->setFont(valueFont);
    value->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(captionLabel);
    layout->addWidget(value);
    row->addWidget(frame, elided ? 3 : 1);
    return value;
}
} // namespace

OverviewPage::OverviewPage(models::TimeRange *timeRange, QWidget *parent)
    : DashboardPage(timeRange, parent), m_model(new models::BucketGridModel(this)),
      m_proxy(new QSortFilterProxyModel(this)), m_view(new QTableView), m_filter(new QLineEdit),
      m_emptyHint(new QLabel), m_instantLabel(new QLabel)
{
    auto *layout = new QVBoxLayout(this);
    auto *cards = new QHBoxLayout;
    m_events = addCard(cards, tr("Events"), QStringLiteral("events"));
    m_throttles = addCard(cards, tr("Throttles"), QStringLiteral("throttles"));
    m_worst = addCard(cards, tr("Worst bucket now"), QStringLiteral("worst"), /*elided=*/true);
    m_breakers = addCard(cards, tr("Breakers open"), QStringLiteral("breakers"));
    m_alerts = addCard(cards, tr("Alerts"), QStringLiteral("alerts"));
    layout->addLayout(cards);

    auto *filterRow = new QHBoxLayout;
    m_filter->setPlaceholderText(tr("Filter identities (Ctrl+F)"));
    m_filter->setClearButtonEnabled(true);
    filterRow->addWidget(m_filter, 1);
    filterRow->addWidget(m_instantLabel);
    layout->addLayout(filterRow);

    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(models::BucketGridModel::SortRole);
    m_proxy->setFilterKeyColumn(0);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    // Values change ~10 times a second; re-sorting on each change would make rows jump under
    // the operator's cursor, so the order changes only when a header is clicked.
    m_proxy->setDynamicSortFilter(false);
    m_view->setModel(m_proxy);
    m_view->setItemDelegate(new FillCellDelegate(m_view));
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(0, Qt::AscendingOrder);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setSelectionBehavior(QAbstractItemView::SelectItems);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_view->horizontalHeader()->setStretchLastSection(false);
    m_view->horizontalHeader()->setDefaultSectionSize(140);
    m_view->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 10);
    m_view->verticalHeader()->hide();
    m_view->setWordWrap(false);
    m_view->setObjectName(QStringLiteral("bucketGrid"));
    layout->addWidget(m_view, 1);

    m_emptyHint->setText(tr("No data yet. Open a log (Ctrl+O), drop files on this window, or "
                            "start the demo (Ctrl+D)."));
    m_emptyHint->setAlignment(Qt::AlignCenter);
    m_emptyHint->setWordWrap(true);
    layout->addWidget(m_emptyHint);

    connect(m_filter, &QLineEdit::textChanged, this,
            [this](const QString &text) { m_proxy->setFilterFixedString(text); });
    connect(m_view, &QTableView::clicked, this, [this](const QModelIndex &proxyIndex) {
        const int scope = proxyIndex.data(models::BucketGridModel::ScopeIndexRole).toInt();
        if (scope >= 0)
            Q_EMIT bucketActivated(scope);
    });
    connect(m_view, &QTableView::activated, this, [this](const QModelIndex &proxyIndex) {
        const int scope = proxyIndex.data(models::BucketGridModel::ScopeIndexRole).toInt();
        if (scope >= 0)
            Q_EMIT bucketActivated(scope);
    });
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] {
        m_view->resizeColumnToContents(0);
        // Limit columns as wide as their label ("graph/onenote-per-minute"), never narrower
        // than the default: a clipped label hides which limit the column is.
        const QFontMetrics metrics = m_view->horizontalHeader()->fontMetrics();
        const int defaultWidth = m_view->horizontalHeader()->defaultSectionSize();
        for (int column = 1; column < m_model->columnCount(); ++column) {
            const QString label =
                m_model->headerData(column, Qt::Horizontal, Qt::DisplayRole).toString();
            m_view->setColumnWidth(column,
                                   std::max(defaultWidth, metrics.horizontalAdvance(label) + 24));
        }
    });
}

QAbstractItemModel *OverviewPage::tableModel() const
{
    return m_proxy;
}

void OverviewPage::setIdentityFilter(const QString &text)
{
    m_filter->setText(text);
}

QString OverviewPage::headline(const QString &name) const
{
    const auto *label = findChild<QLabel *>(name);
    return label ? label->text() : QString();
}

void OverviewPage::refresh()
{
    m_model->setSnapshot(snapshot());
    m_model->setInstant(timeRange()->replayInstant());
    m_emptyHint->setVisible(m_model->rowCount() == 0);
    updateHeadline();
}

void OverviewPage::timeChanged()
{
    m_model->setInstant(timeRange()->replayInstant());
    updateHeadline();
}

void OverviewPage::updateHeadline()
{
    const auto &snap = snapshot();
    const auto instant = timeRange()->replayInstant();
    m_instantLabel->setText(instant ? tr("Buckets as of %1 (replay)").arg(formatIsoMs(*instant))
                                    : tr("Buckets now"));
    if (!snap) {
        for (QLabel *label : {m_events, m_throttles, m_worst, m_breakers, m_alerts})
            label->setText(QStringLiteral("–"));
        return;
    }
    const ReportData &report = snap->report;
    m_events->setText(QLocale().toString(report.events));
    m_events->setToolTip(tr("%1 malformed records").arg(report.malformed));
    m_throttles->setText(QLocale().toString(report.throttles.total));
    QString byCode;
    for (auto it = report.throttles.byErrorCode.cbegin(); it != report.throttles.byErrorCode.cend();
         ++it)
        byCode += it.key() + QStringLiteral(": ") + QString::number(it.value()) + u'\n';
    m_throttles->setToolTip(byCode.trimmed());

    int worst = -1;
    double worstFill = -1;
    for (int i = 0; i < report.scopes.size(); ++i) {
        const double fill = models::displayedFill(*snap, i, instant);
        if (fill > worstFill) {
            worstFill = fill;
            worst = i;
        }
    }
    if (worst < 0) {
        m_worst->setText(tr("none"));
        m_worst->setToolTip({});
        m_worst->setStyleSheet({});
    } else {
        const QString percent = QString::number(worstFill * 100.0, 'f', 0) + QStringLiteral(" % ");
        m_worst->setText(percent + report.scopes.at(worst).key);
        // Too long for the card: keep the figure and the end of the key (the user, after the
        // app id), eliding in between.
        static_cast<ElidedLabel *>(m_worst)->setKeptPrefix(int(percent.size()));
        m_worst->setToolTip(models::scopeLabel(report.scopes.at(worst)));
        m_worst->setStyleSheet(QStringLiteral("color: %1")
                                   .arg(worstFill >= 0.8 ? fillColor(worstFill).name()
                                                         : palette().color(QPalette::Text).name()));
    }

    int open = 0;
    QStringList openScopes;
    for (const BreakerSummary &breaker : report.breakers) {
        if (breaker.finalState != u"closed" && !breaker.finalState.isEmpty()) {
            ++open;
            openScopes.append(breaker.scope + QStringLiteral(" (") + breaker.source +
                              QStringLiteral("): ") + breaker.finalState);
        }
    }
    m_breakers->setText(QString::number(open));
    m_breakers->setToolTip(openScopes.join(u'\n'));
    m_breakers->setStyleSheet(
        open > 0 ? QStringLiteral("color: %1").arg(breakerStateColor(QStringLiteral("open")).name())
                 : QString());

    int critical = 0;
    for (const Alert &alert : report.alerts)
        critical += alert.severity == u"critical" ? 1 : 0;
    m_alerts->setText(critical > 0 ? tr("%1 (%2 critical)").arg(report.alerts.size()).arg(critical)
                                   : QString::number(report.alerts.size()));
}

} // namespace ts::widgets
