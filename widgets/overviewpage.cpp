#include "overviewpage.h"

#include "elidedlabel.h"

#include "core/timeparse.h"
#include "fillcelldelegate.h"
#include "models/breakercounts.h"
#include "models/bucketgridmodel.h"
#include "models/displaynames.h"
#include "models/identityurgencymodel.h"
#include "models/snapshotmath.h"
#include "models/timerange.h"
#include "theme.h"
#include "urgencydelegate.h"

#include <QDateTime>
#include <QFrame>
#include <QHBoxLayout>
#include <QHash>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QStyleOptionViewItem>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace ts::widgets {

namespace {
// A headline "card": a small caption over a large figure. An elided card (the worst bucket,
// whose key can be long) takes a larger share of the row and never widens the window; the
// others show their short figures whole.
QLabel *addCard(QHBoxLayout *row, const QString &caption, const QString &objectName,
                bool elided = false, QLabel **captionOut = nullptr)
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
    captionLabel->setObjectName(objectName + QStringLiteral("Caption"));
    if (captionOut)
        *captionOut = captionLabel;
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
// "22:45:07 UTC": short enough for a card's caption (the full instant is in the tooltip).
QString shortUtc(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(QStringLiteral("HH:mm:ss")) +
           QStringLiteral(" UTC");
}
} // namespace

OverviewPage::OverviewPage(models::TimeRange *timeRange, QWidget *parent)
    : DashboardPage(timeRange, parent), m_model(new models::BucketGridModel(this)),
      m_proxy(new QSortFilterProxyModel(this)), m_view(new QTableView), m_filter(new QLineEdit),
      m_emptyHint(new QLabel), m_instantLabel(new QLabel),
      m_identityModel(new models::IdentityUrgencyModel(this)),
      m_identityProxy(new QSortFilterProxyModel(this)), m_identityView(new QTableView),
      m_views(new QTabWidget)
{
    auto *layout = new QVBoxLayout(this);
    auto *cards = new QHBoxLayout;
    m_events = addCard(cards, tr("Events"), QStringLiteral("events"));
    m_throttles = addCard(cards, tr("Throttles"), QStringLiteral("throttles"));
    m_worst = addCard(cards, tr("Worst bucket now"), QStringLiteral("worst"), /*elided=*/true,
                      &m_worstCaption);
    m_breakers = addCard(cards, tr("Breakers"), QStringLiteral("breakers"));
    m_alerts = addCard(cards, tr("Alerts"), QStringLiteral("alerts"));
    layout->addLayout(cards);

    auto *filterRow = new QHBoxLayout;
    m_filter->setPlaceholderText(tr("Filter identities (Ctrl+F)"));
    m_filter->setClearButtonEnabled(true);
    filterRow->addWidget(m_filter, 1);
    m_instantLabel->setObjectName(QStringLiteral("instantCaption"));
    filterRow->addWidget(m_instantLabel);
    layout->addLayout(filterRow);

    // The identities at a glance: the model keeps them in urgency order; the proxy filters only.
    m_identityProxy->setSourceModel(m_identityModel);
    m_identityProxy->setFilterKeyColumn(models::IdentityUrgencyModel::IdentityColumn);
    m_identityProxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_identityView->setModel(m_identityProxy);
    m_identityView->setItemDelegate(new UrgencyDelegate(m_identityView));
    m_identityView->setSelectionMode(QAbstractItemView::SingleSelection);
    m_identityView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_identityView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_identityView->setSortingEnabled(false);
    m_identityView->setWordWrap(false);
    // Keys are long (an app id and a user): keep both ends visible, the full key is on hover.
    m_identityView->setTextElideMode(Qt::ElideMiddle);
    m_identityView->verticalHeader()->hide();
    m_identityView->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_identityView->verticalHeader()->setDefaultSectionSize(m_identityView->fontMetrics().height() +
                                                            14);
    m_identityView->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_identityView->horizontalHeader()->setStretchLastSection(true);
    m_identityView->setObjectName(QStringLiteral("identityTable"));
    m_views->setObjectName(QStringLiteral("overviewViews"));
    m_views->addTab(m_identityView, tr("Identities"));

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
    m_views->addTab(m_view, tr("Bucket grid"));
    layout->addWidget(m_views, 1);

    m_emptyHint->setText(tr("No data yet. Open a log (Ctrl+O), drop files on this window, or "
                            "start the demo (Ctrl+D)."));
    m_emptyHint->setAlignment(Qt::AlignCenter);
    m_emptyHint->setWordWrap(true);
    layout->addWidget(m_emptyHint);

    connect(m_filter, &QLineEdit::textChanged, this, [this](const QString &text) {
        m_proxy->setFilterFixedString(text);
        m_identityProxy->setFilterFixedString(text);
    });
    const auto openIdentity = [this](const QModelIndex &proxyIndex) {
        const int scope = proxyIndex.data(models::IdentityUrgencyModel::ScopeIndexRole).toInt();
        if (scope >= 0)
            Q_EMIT bucketActivated(scope);
    };
    connect(m_identityView, &QTableView::doubleClicked, this, openIdentity);
    connect(m_identityView, &QTableView::activated, this, openIdentity);
    connect(m_identityModel, &QAbstractItemModel::modelReset, this,
            [this] { m_identityColumnsSized = false; });
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

void OverviewPage::showGrid(bool grid)
{
    m_views->setCurrentIndex(grid ? 1 : 0);
}

void OverviewPage::setLive(bool live)
{
    if (live == m_live)
        return;
    m_live = live;
    updateHeadline();
}

QString OverviewPage::instantCaption() const
{
    return m_instantLabel->text();
}

void OverviewPage::refresh()
{
    m_model->setSnapshot(snapshot());
    m_model->setInstant(timeRange()->replayInstant());
    m_identityModel->setInstant(timeRange()->replayInstant());
    m_identityModel->setSnapshot(snapshot());
    m_emptyHint->setVisible(m_model->rowCount() == 0);
    updateIdentities();
    updateHeadline();
}

void OverviewPage::timeChanged()
{
    m_model->setInstant(timeRange()->replayInstant());
    m_identityModel->setInstant(timeRange()->replayInstant());
    updateIdentities();
    updateHeadline();
}

void OverviewPage::updateIdentities()
{
    if (!m_identityColumnsSized && m_identityModel->rowCount() > 0)
        resizeIdentityColumns();
    else if (m_identityModel->rowCount() > 0)
        widenIdentityColumnsToContent();
}

// Each column from the status to "Safe to send" as wide as its widest value shown (issue
// 30.14: at 1280x800 "Safe to send" was cut off). Only ever wider, so columns do not jump as
// values change; the pace (last) takes what is left and elides, its full text in the tooltip.
void OverviewPage::widenIdentityColumnsToContent()
{
    using Model = models::IdentityUrgencyModel;
    constexpr int kRowsMeasured = 64;
    // A reason longer than a third of the table elides (the tooltip has it whole).
    const int widest = std::max(210, m_identityView->viewport()->width() / 3);
    QStyleOptionViewItem option;
    option.initFrom(m_identityView);
    // Urgent rows are drawn bold: measured so.
    option.font = m_identityView->font();
    option.font.setBold(true);
    option.fontMetrics = QFontMetrics(option.font);
    QAbstractItemDelegate *delegate = m_identityView->itemDelegate();
    for (int column = Model::StatusColumn; column < Model::PaceColumn; ++column) {
        int content = 0;
        // The rows on screen (urgency order): the most urgent, with the longest countdowns.
        for (int row = 0; row < std::min(m_identityProxy->rowCount(), kRowsMeasured); ++row)
            content = std::max(
                content, delegate->sizeHint(option, m_identityProxy->index(row, column)).width());
        const int wanted = std::min(widest, content);
        if (wanted > m_identityView->columnWidth(column))
            m_identityView->setColumnWidth(column, wanted);
    }
}

void OverviewPage::resizeIdentityColumns()
{
    m_identityColumnsSized = true;
    using Model = models::IdentityUrgencyModel;
    QHeaderView *header = m_identityView->horizontalHeader();
    const QFontMetrics metrics = header->fontMetrics();
    // Wide enough for the header and a typical value; the identity column for its longest key
    // up to a sixth of the view (longer ones elide; the full key is in the tooltip).
    int identity = metrics.horizontalAdvance(tr("Identity")) + 24;
    for (int row = 0; row < m_identityModel->rowCount(); ++row)
        identity = std::max(
            identity,
            m_identityView->fontMetrics().horizontalAdvance(m_identityModel->rowAt(row).key) + 16);
    m_identityView->setColumnWidth(Model::IdentityColumn,
                                   std::min(identity, std::max(180, m_identityView->width() / 6)));
    // The columns up to "Safe to send" (which gets room for its reason); the pace stretches.
    // (widenIdentityColumnsToContent() then makes room for the values: the bold countdowns
    // and reasons of "Safe to send" are wider than any fixed width.)
    const int widths[] = {0, 100, 90, 130, 70, 80, 90, 150};
    for (int column = Model::StatusColumn; column < Model::PaceColumn; ++column) {
        const QString label =
            m_identityModel->headerData(column, Qt::Horizontal, Qt::DisplayRole).toString();
        m_identityView->setColumnWidth(
            column, std::max(widths[column], metrics.horizontalAdvance(label) + 24));
    }
    widenIdentityColumnsToContent();
}

void OverviewPage::updateHeadline()
{
    const auto &snap = snapshot();
    const auto instant = timeRange()->replayInstant();
    // "Now" only for a live feed at its newest event; a file or a replay instant is a moment
    // of the past, and the tiles say which.
    bool hasAsOf = instant.has_value();
    qint64 asOfMs = instant.value_or(0);
    if (!instant && !m_live && snap && snap->report.lastMs) {
        hasAsOf = true;
        asOfMs = *snap->report.lastMs;
    }
    if (instant)
        m_instantLabel->setText(tr("As of %1 (replay)").arg(formatIsoMs(asOfMs)));
    else if (hasAsOf)
        m_instantLabel->setText(tr("As of %1, the end of the data").arg(formatIsoMs(asOfMs)));
    else
        m_instantLabel->setText(tr("Now"));
    m_worstCaption->setText(hasAsOf ? tr("Worst bucket as of %1").arg(shortUtc(asOfMs))
                                    : tr("Worst bucket now"));
    m_worstCaption->setToolTip(hasAsOf ? formatIsoMs(asOfMs) : QString());
    if (!snap) {
        for (QLabel *label : {m_events, m_throttles, m_worst, m_breakers, m_alerts})
            label->setText(QStringLiteral("–"));
        return;
    }
    const ReportData &report = snap->report;
    m_events->setText(QLocale().toString(report.events));
    // The event count is of the whole log (the snapshot has no count per instant): in replay
    // the caption says so; the other tiles are evaluated at the instant.
    if (auto *caption = findChild<QLabel *>(QStringLiteral("eventsCaption")))
        caption->setText(instant ? tr("Events (whole log)") : tr("Events"));
    m_events->setToolTip(tr("%1 malformed records").arg(report.malformed));
    qint64 throttles = report.throttles.total;
    if (instant) {
        throttles = 0;
        for (const ThrottleBin &bin : snap->throttleBins) {
            if (bin.startMs > *instant)
                break;
            for (auto it = bin.byErrorCode.cbegin(); it != bin.byErrorCode.cend(); ++it)
                throttles += it.value();
        }
    }
    m_throttles->setText(QLocale().toString(throttles));
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
        m_worst->setText(percent + models::shortName(report.scopes.at(worst).key));
        // Too long for the card: keep the figure and the end of the key (the user, after the
        // app id), eliding in between.
        static_cast<ElidedLabel *>(m_worst)->setKeptPrefix(int(percent.size()));
        QString tip = models::scopeLabel(report.scopes.at(worst));
        if (const auto from = models::referenceInstant(*snap, instant))
            tip += u'\n' + models::safeSendText(models::safeSend(*snap, worst, instant), *from);
        m_worst->setToolTip(tip);
        m_worst->setStyleSheet(QStringLiteral("color: %1")
                                   .arg(worstFill >= 0.8 ? fillColor(worstFill).name()
                                                         : palette().color(QPalette::Text).name()));
    }

    // Soft-open (slowing down near a limit) is not open: counted apart (issue 30.6).
    const models::BreakerCounts breakers = models::countBreakers(report, instant);
    m_breakers->setText(models::breakerCountsText(breakers));
    m_breakers->setToolTip(breakers.notClosed.join(u'\n'));
    const QString worstState = breakers.open > 0       ? QStringLiteral("open")
                               : breakers.halfOpen > 0 ? QStringLiteral("half-open")
                                                       : QStringLiteral("soft-open");
    m_breakers->setStyleSheet(
        breakers.notClosed.isEmpty()
            ? QString()
            : QStringLiteral("color: %1").arg(breakerStateColor(worstState).name()));

    int critical = 0;
    qsizetype alerts = 0;
    for (const Alert &alert : report.alerts) {
        if (instant && alert.atMs > *instant)
            continue; // raised after the replay instant
        ++alerts;
        critical += alert.severity == u"critical" ? 1 : 0;
    }
    m_alerts->setText(critical > 0 ? tr("%1 (%2 critical)").arg(alerts).arg(critical)
                                   : QString::number(alerts));
}

} // namespace ts::widgets
