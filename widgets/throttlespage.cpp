#include "throttlespage.h"

#include "models/displaynames.h"
#include "models/throttletablemodel.h"
#include "models/timerange.h"
#include "plotstyle.h"
#include "qcp.h"
#include "theme.h"

#include <QApplication>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <limits>

namespace ts::widgets {

ThrottlesPage::ThrottlesPage(models::TimeRange *timeRange, QWidget *parent)
    : DashboardPage(timeRange, parent), m_plot(new QCustomPlot), m_split(new QLabel),
      m_stackChooser(new QComboBox), m_note(new QLabel),
      m_table(new models::ThrottleTableModel(this)), m_proxy(new QSortFilterProxyModel(this)),
      m_view(new QTableView)
{
    auto *layout = new QVBoxLayout(this);
    m_split->setWordWrap(true);
    m_split->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *top = new QHBoxLayout;
    top->addWidget(m_split, 1);
    top->addWidget(new QLabel(tr("Stack by:")));
    m_stackChooser->setObjectName(QStringLiteral("throttlesStackBy"));
    m_stackChooser->addItem(tr("error code"), int(StackBy::ErrorCode));
    m_stackChooser->addItem(tr("cause"), int(StackBy::Cause));
    m_stackChooser->setToolTip(
        tr("Cause: the limit that was exhausted, a Retry-After still running, concurrency, the "
           "service's capacity, or unexplained (no modelled limit was exhausted)"));
    top->addWidget(m_stackChooser);
    layout->addLayout(top);
    connect(m_stackChooser, &QComboBox::currentIndexChanged, this,
            [this](int index) { setStackBy(StackBy(m_stackChooser->itemData(index).toInt())); });
    auto *splitter = new QSplitter(Qt::Vertical);
    splitter->setObjectName(QStringLiteral("throttlesSplitter"));
    m_plot->setObjectName(QStringLiteral("throttlesPlot"));
    m_plot->setMinimumHeight(160);
    splitter->addWidget(m_plot);
    auto *tableBox = new QWidget;
    auto *tableLayout = new QVBoxLayout(tableBox);
    tableLayout->setContentsMargins(0, 0, 0, 0);
    tableLayout->addWidget(m_note);
    m_note->setWordWrap(true);
    m_note->setVisible(false);
    m_proxy->setSourceModel(m_table);
    m_proxy->setSortRole(models::ThrottleTableModel::SortRole);
    m_view->setModel(m_proxy);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(0, Qt::AscendingOrder);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->verticalHeader()->hide();
    m_view->setWordWrap(false);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_view->setObjectName(QStringLiteral("throttleTable"));
    tableLayout->addWidget(m_view);
    splitter->addWidget(tableBox);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    // Initial proportions (the table's size hint would otherwise squeeze the plot).
    splitter->setSizes({600, 400});
    layout->addWidget(splitter, 1);

    useUtcTimeAxis(m_plot->xAxis);
    m_plot->xAxis->setLabel(tr("time (UTC)"));
    m_plot->yAxis->setLabel(tr("throttles per bin"));
    useIntegerTicks(m_plot->yAxis);
    m_plot->legend->setVisible(true);
    m_plot->legend->setFont(font());
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom | QCP::iSelectPlottables);
    m_plot->axisRect()->setRangeDrag(Qt::Horizontal);
    m_plot->axisRect()->setRangeZoom(Qt::Horizontal);
    applyPalette(m_plot);
    tunePlotForSpeed(m_plot);

    connect(m_plot, &QCustomPlot::mousePress, this, [this](QMouseEvent *event) {
        m_plot->setSelectionRectMode((event->modifiers() & Qt::ShiftModifier) ? QCP::srmZoom
                                                                              : QCP::srmNone);
        m_pressAt = event->pos();
    });
    // A click (not a drag) anywhere in the chart picks the nearest bin with data: a bar a pixel
    // wide, or narrower, cannot be hit exactly (issue 30.9).
    connect(m_plot, &QCustomPlot::mouseRelease, this, [this](QMouseEvent *event) {
        if (event->button() == Qt::LeftButton && !(event->modifiers() & Qt::ShiftModifier) &&
            (event->pos() - m_pressAt).manhattanLength() <= QApplication::startDragDistance())
            clickAt(event->position());
    });
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this,
            [this](QMouseEvent *) { this->timeRange()->showAll(); });
    connect(m_plot->xAxis, qOverload<const QCPRange &>(&QCPAxis::rangeChanged), this,
            [this](const QCPRange &range) {
                if (!m_applyingRange)
                    this->timeRange()->setRange(plotKeyToMs(range.lower), plotKeyToMs(range.upper));
            });
}

QAbstractItemModel *ThrottlesPage::tableModel() const
{
    return m_proxy;
}

QString ThrottlesPage::splitText() const
{
    return m_split->text();
}

void ThrottlesPage::setStackBy(StackBy by)
{
    if (by == m_stackBy)
        return;
    m_stackBy = by;
    {
        const QSignalBlocker blocker(m_stackChooser);
        m_stackChooser->setCurrentIndex(m_stackChooser->findData(int(by)));
    }
    m_plot->clearPlottables(); // the bars are rebuilt for the other breakdown
    m_bars.clear();
    m_codes.clear();
    refresh();
}

void ThrottlesPage::requestEventsForBar(const QString &errorCode, int dataIndex)
{
    const auto index = m_codes.indexOf(errorCode);
    if (index < 0)
        return;
    QCPBars *bars = m_bars.at(index);
    if (dataIndex < 0 || dataIndex >= bars->data()->size())
        return;
    const double key = (bars->data()->constBegin() + dataIndex)->key;
    // Bars are centred on their bin.
    const qint64 start = plotKeyToMs(key) - m_binMs / 2;
    // Stacked by cause, a bar asks for every throttle of its bin (the Events page filters by
    // cause on its own).
    Q_EMIT eventsRequested(start, start + m_binMs,
                           m_stackBy == StackBy::ErrorCode ? errorCode : QString());
}

int ThrottlesPage::nearestBinWithData(qint64 ms) const
{
    const auto &snap = snapshot();
    if (!snap)
        return -1;
    const bool byCause = m_stackBy == StackBy::Cause;
    int nearest = -1;
    qint64 distance = std::numeric_limits<qint64>::max();
    for (int i = 0; i < int(snap->throttleBins.size()); ++i) {
        const ThrottleBin &bin = snap->throttleBins[size_t(i)];
        if ((byCause ? bin.byCause : bin.byErrorCode).isEmpty())
            continue;
        const qint64 centre = bin.startMs + m_binMs / 2;
        const qint64 d = centre > ms ? centre - ms : ms - centre;
        if (d < distance) {
            distance = d;
            nearest = i;
        }
    }
    return nearest;
}

bool ThrottlesPage::clickAt(QPointF pixel)
{
    const auto &snap = snapshot();
    if (!snap || !m_plot->axisRect()->rect().contains(pixel.toPoint()))
        return false;
    const int index = nearestBinWithData(plotKeyToMs(m_plot->xAxis->pixelToCoord(pixel.x())));
    if (index < 0)
        return false;
    const ThrottleBin &bin = snap->throttleBins[size_t(index)];
    const QMap<QString, qint64> &counts =
        m_stackBy == StackBy::Cause ? bin.byCause : bin.byErrorCode;
    // The stack, bottom first in the bars' order: the code whose part holds the click's height.
    const double height = m_plot->yAxis->pixelToCoord(pixel.y());
    double top = 0;
    QString picked;
    for (const QString &code : std::as_const(m_codes)) {
        const qint64 count = counts.value(code);
        if (count == 0)
            continue;
        picked = code; // above the stack: the top part
        top += double(count);
        if (height <= top)
            break;
    }
    // Stacked by cause, a bar asks for every throttle of its bin (the Events page filters by
    // cause on its own).
    Q_EMIT eventsRequested(bin.startMs, bin.startMs + m_binMs,
                           m_stackBy == StackBy::ErrorCode ? picked : QString());
    return true;
}

void ThrottlesPage::refresh()
{
    const auto &snap = snapshot();
    if (!snap) {
        m_plot->clearPlottables();
        m_bars.clear();
        m_codes.clear();
        m_table->setThrottles({});
        m_split->setText(tr("No data."));
        applyTimeRange();
        return;
    }
    const ThrottleSummary &throttles = snap->report.throttles;
    m_table->setThrottles(throttles);
    m_binMs = std::max<qint64>(1, snap->binMs);

    // Codes (or causes) ordered by their total (largest at the bottom of the stack, first in
    // the legend).
    const bool byCause = m_stackBy == StackBy::Cause;
    auto countsOf = [byCause](const ThrottleBin &bin) -> const QMap<QString, qint64> & {
        return byCause ? bin.byCause : bin.byErrorCode;
    };
    QMap<QString, qint64> totals;
    for (const ThrottleBin &bin : snap->throttleBins) {
        const QMap<QString, qint64> &counts = countsOf(bin);
        for (auto it = counts.cbegin(); it != counts.cend(); ++it)
            totals[it.key()] += it.value();
    }
    QStringList codes = totals.keys();
    std::stable_sort(codes.begin(), codes.end(), [&totals](const QString &a, const QString &b) {
        return totals.value(a) > totals.value(b);
    });
    if (codes != m_codes) {
        m_plot->clearPlottables();
        m_bars.clear();
        QCPBars *below = nullptr;
        for (int i = 0; i < codes.size(); ++i) {
            auto *bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
            // The code's own colour: the same on every page and in every session.
            const QColor colour =
                byCause ? throttleCauseColor(codes.at(i)) : errorCodeColor(codes.at(i));
            bars->setPen(QPen(colour.darker(130)));
            bars->setBrush(colour);
            bars->setSelectable(QCP::stSingleData);
            if (below)
                bars->moveAbove(below);
            below = bars;
            m_bars.append(bars);
        }
        m_codes = codes;
    }
    const double width = static_cast<double>(m_binMs) / 1000.0 * 0.9;
    double top = 0;
    std::vector<double> stackHeight(snap->throttleBins.size(), 0.0);
    for (int i = 0; i < m_codes.size(); ++i) {
        QCPBars *bars = m_bars.at(i);
        bars->setWidth(width);
        bars->setName(QStringLiteral("%1 (%2)")
                          .arg(models::orUnknown(m_codes.at(i)))
                          .arg(totals.value(m_codes.at(i))));
        QVector<QCPBarsData> points;
        points.reserve(static_cast<qsizetype>(snap->throttleBins.size()));
        for (size_t b = 0; b < snap->throttleBins.size(); ++b) {
            const ThrottleBin &bin = snap->throttleBins[b];
            const qint64 count = countsOf(bin).value(m_codes.at(i));
            if (count == 0)
                continue;
            points.append(
                QCPBarsData(plotKey(bin.startMs + m_binMs / 2), static_cast<double>(count)));
            stackHeight[b] += static_cast<double>(count);
            top = std::max(top, stackHeight[b]);
        }
        bars->data()->set(points, true);
    }
    m_plot->yAxis->setRange(0, top > 0 ? top * 1.15 : 1.0);

    QStringList parts;
    parts.append(tr("<b>%1</b> throttles").arg(throttles.total));
    QStringList scopes;
    for (auto it = throttles.byScope.cbegin(); it != throttles.byScope.cend(); ++it)
        scopes.append(QStringLiteral("%1 %2")
                          .arg(models::orUnknown(it.key()).toHtmlEscaped())
                          .arg(it.value()));
    if (!scopes.isEmpty())
        parts.append(tr("by scope: %1").arg(scopes.join(QStringLiteral(", "))));
    QStringList kinds;
    for (auto it = throttles.byKind.cbegin(); it != throttles.byKind.cend(); ++it)
        kinds.append(QStringLiteral("%1 %2").arg(it.key().toHtmlEscaped()).arg(it.value()));
    if (!kinds.isEmpty())
        parts.append(tr("by kind: %1").arg(kinds.join(QStringLiteral(", "))));
    QStringList causes;
    for (auto it = throttles.byCause.cbegin(); it != throttles.byCause.cend(); ++it)
        causes.append(QStringLiteral("%1 %2").arg(it.key().toHtmlEscaped()).arg(it.value()));
    if (!causes.isEmpty())
        parts.append(tr("by cause: %1").arg(causes.join(QStringLiteral(", "))));
    parts.append(
        tr("bins of %1 s; click a bar for its events").arg(static_cast<double>(m_binMs) / 1000.0));
    m_split->setText(parts.join(QStringLiteral(" · ")));
    const bool noBreakdown = throttles.total > 0 && throttles.byIdentityAndErrorCode.isEmpty();
    m_note->setVisible(noBreakdown);
    m_note->setText(tr("The pipeline did not provide throttles per identity for this data."));
    applyTimeRange();
}

void ThrottlesPage::timeChanged()
{
    applyTimeRange();
}

void ThrottlesPage::applyTimeRange()
{
    m_applyingRange = true;
    if (timeRange()->hasRange())
        m_plot->xAxis->setRange(plotKey(timeRange()->startMs()), plotKey(timeRange()->endMs()));
    else
        m_plot->xAxis->rescale();
    m_applyingRange = false;
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace ts::widgets
