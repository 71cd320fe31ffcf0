#include "bucketpage.h"

#include "core/timeparse.h"
#include "models/fillexplanation.h"
#include "models/snapshotmath.h"
#include "models/timerange.h"
#include "plotstyle.h"
#include "qcp.h"
#include "theme.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <optional>

namespace ts::widgets {

namespace {
QCPGraph *makeGraph(QCustomPlot *plot, QCPAxis *x, QCPAxis *y, const QString &name, const QPen &pen)
{
    QCPGraph *graph = plot->addGraph(x, y);
    graph->setName(name);
    graph->setPen(pen);
    graph->setAdaptiveSampling(true);
    return graph;
}

// A step function's samples, extended to `untilMs` with its last value so the final step is
// drawn (a bucket that filled at 22:44 and stayed full is full until the end of the data).
QVector<QCPGraphData> pointsOf(const std::vector<qint64> &times, const std::vector<double> &values,
                               double scale, std::optional<qint64> untilMs)
{
    const size_t count = std::min(times.size(), values.size());
    QVector<QCPGraphData> points;
    points.reserve(static_cast<qsizetype>(count) + 1);
    for (size_t i = 0; i < count; ++i)
        points.append(QCPGraphData(plotKey(times[i]), values[i] * scale));
    if (count > 0 && untilMs && *untilMs > times[count - 1])
        points.append(QCPGraphData(plotKey(*untilMs), values[count - 1] * scale));
    return points;
}

// One layer of a bucket's series as the line QCustomPlot draws (lsLine): where the series holds
// a value as a step (step algorithms, and the peak bins before its first exact point) the step
// is spelled out as a second point, where it is a line (token and leaky buckets) the points are
// joined as they are. So the chart is models::usageAt at every instant, the value the report,
// the fill grid and the event detail give (issue 19.6). Extended to `untilMs` with the last value.
QVector<QCPGraphData> seriesPointsOf(const ScopeSeries &series, const std::vector<double> &values,
                                     double scale, std::optional<qint64> untilMs)
{
    const std::vector<qint64> &times = series.usageT;
    const size_t count = std::min(times.size(), values.size());
    QVector<QCPGraphData> points;
    points.reserve(static_cast<qsizetype>(count * 2) + 1);
    for (size_t i = 0; i < count; ++i) {
        points.append(QCPGraphData(plotKey(times[i]), values[i] * scale));
        if (models::heldAsStep(series, i) && i + 1 < count && times[i + 1] > times[i])
            points.append(QCPGraphData(plotKey(times[i + 1]), values[i] * scale));
    }
    if (count > 0 && untilMs && *untilMs > times[count - 1])
        points.append(QCPGraphData(plotKey(*untilMs), values[count - 1] * scale));
    return points;
}
} // namespace

BucketPage::BucketPage(models::TimeRange *timeRange, QWidget *parent)
    : DashboardPage(timeRange, parent), m_scopes(new QComboBox), m_limits(new QLabel),
      m_plot(new QCustomPlot)
{
    auto *layout = new QVBoxLayout(this);
    auto *top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Bucket:")));
    m_scopes->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_scopes->setMinimumContentsLength(40);
    m_scopes->setObjectName(QStringLiteral("bucketChooser"));
    top->addWidget(m_scopes);
    top->addStretch(1);
    layout->addLayout(top);
    m_limits->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_limits->setWordWrap(true);
    layout->addWidget(m_limits);
    m_safeSend = new QLabel;
    m_safeSend->setObjectName(QStringLiteral("bucketSafeSend"));
    m_safeSend->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QFont safeFont = m_safeSend->font();
    safeFont.setBold(true);
    m_safeSend->setFont(safeFont);
    layout->addWidget(m_safeSend);
    m_plot->setObjectName(QStringLiteral("bucketPlot"));
    m_plot->setMinimumSize(300, 200);
    layout->addWidget(m_plot, 1);

    // Top rect: usage in requests (or credits); bottom rect: limit percentage.
    QCPAxisRect *usageRect = m_plot->axisRect();
    m_pctRect = new QCPAxisRect(m_plot);
    m_plot->plotLayout()->addElement(1, 0, m_pctRect);
    m_plot->plotLayout()->setRowStretchFactor(0, 2.0);
    m_plot->plotLayout()->setRowStretchFactor(1, 1.0);
    auto *marginGroup = new QCPMarginGroup(m_plot);
    usageRect->setMarginGroup(QCP::msLeft | QCP::msRight, marginGroup);
    m_pctRect->setMarginGroup(QCP::msLeft | QCP::msRight, marginGroup);
    useUtcTimeAxis(m_plot->xAxis);
    useUtcTimeAxis(m_pctRect->axis(QCPAxis::atBottom));
    m_plot->xAxis->setTickLabels(false);
    m_plot->yAxis->setLabel(tr("usage"));
    useIntegerTicks(m_plot->yAxis); // requests counted: whole numbers
    m_pctRect->axis(QCPAxis::atLeft)->setLabel(tr("limit %"));
    m_pctRect->axis(QCPAxis::atBottom)->setLabel(tr("time (UTC)"));

    // Retry-After shading on the (hidden) right axis, 0..1, so it spans the whole height.
    QCPAxis *shadeAxis = m_plot->yAxis2;
    shadeAxis->setRange(0, 1);
    shadeAxis->setVisible(false);
    m_retryAfter = makeGraph(m_plot, m_plot->xAxis, shadeAxis, tr("Retry-After (wait)"), Qt::NoPen);
    QColor shade = breakerStateColor(QStringLiteral("half-open"));
    shade.setAlpha(50);
    m_retryAfter->setBrush(shade);
    m_retryAfter->setLineStyle(QCPGraph::lsStepLeft);
    m_retryAfter->setAdaptiveSampling(false);

    m_capacity = makeGraph(m_plot, m_plot->xAxis, m_plot->yAxis, tr("documented capacity"),
                           QPen(fillColor(1.0), 1.5, Qt::DashLine));
    m_effective = makeGraph(m_plot, m_plot->xAxis, m_plot->yAxis, tr("effective limit"),
                            QPen(fillColor(0.9), 1.5, Qt::DashDotLine));
    m_usage = makeGraph(m_plot, m_plot->xAxis, m_plot->yAxis, tr("usage (as the limiter counts)"),
                        QPen(seriesColor(0), 1.6));
    m_usage->setLineStyle(QCPGraph::lsLine); // steps spelled out by seriesPointsOf
    QColor usageFill = seriesColor(0);
    usageFill.setAlpha(40);
    m_usage->setBrush(usageFill);
    // The accepted layer: what the service served. Below the limiter's count while throttled
    // requests are charged; drawn over it, darker and thinner, so both read where they differ.
    // (Solid: a dashed pen over thousands of steps costs the raster engine a second a replot.)
    m_accepted = makeGraph(m_plot, m_plot->xAxis, m_plot->yAxis, tr("accepted"),
                           QPen(seriesColor(0).darker(170), 1.0));
    m_accepted->setLineStyle(QCPGraph::lsLine);
    m_observed429 = makeGraph(m_plot, m_plot->xAxis, m_plot->yAxis, tr("429 observed"), Qt::NoPen);
    m_observed429->setLineStyle(QCPGraph::lsNone);
    m_observed429->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssCross, QPen(fillColor(1.0), 2), Qt::NoBrush, 10));
    m_observed429->setAdaptiveSampling(false);
    m_predicted429 =
        makeGraph(m_plot, m_plot->xAxis, m_plot->yAxis, tr("429 predicted"), Qt::NoPen);
    m_predicted429->setLineStyle(QCPGraph::lsNone);
    m_predicted429->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(seriesColor(6), 2), Qt::NoBrush, 9));
    m_predicted429->setAdaptiveSampling(false);
    // Where the service's answer set the bucket (state the log does not show): a diamond at
    // the usage the service implied, so the step of the usage curve there has its reason.
    m_corrections =
        makeGraph(m_plot, m_plot->xAxis, m_plot->yAxis, tr("corrected by the service"), Qt::NoPen);
    m_corrections->setLineStyle(QCPGraph::lsNone);
    m_corrections->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssDiamond, QPen(seriesColor(3), 2), Qt::NoBrush, 11));
    m_corrections->setAdaptiveSampling(false);

    QCPAxis *pctX = m_pctRect->axis(QCPAxis::atBottom);
    QCPAxis *pctY = m_pctRect->axis(QCPAxis::atLeft);
    pctY->setRange(0, 110);
    m_reconstructedPct =
        makeGraph(m_plot, pctX, pctY, tr("this limit's fill %"), QPen(seriesColor(0), 1.4));
    m_reconstructedPct->setLineStyle(QCPGraph::lsLine);
    m_observedPct =
        makeGraph(m_plot, pctX, pctY, tr("service-reported %"), QPen(seriesColor(1), 1.4));
    m_observedPct->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));

    // The replay cursor lives on its own buffered layer: scrubbing redraws that layer only,
    // not the thousands of points under it.
    m_plot->addLayer(QStringLiteral("cursor"), m_plot->layer(QStringLiteral("main")),
                     QCustomPlot::limAbove);
    m_cursorLayer = m_plot->layer(QStringLiteral("cursor"));
    m_cursorLayer->setMode(QCPLayer::lmBuffered);
    m_belowLimitNote = new QCPItemText(m_plot);
    m_belowLimitNote->setClipToAxisRect(true);
    m_belowLimitNote->setClipAxisRect(usageRect);
    m_belowLimitNote->position->setType(QCPItemPosition::ptAxisRectRatio);
    m_belowLimitNote->position->setAxisRect(usageRect);
    m_belowLimitNote->position->setCoords(0.99, 0.02);
    m_belowLimitNote->setPositionAlignment(Qt::AlignTop | Qt::AlignRight);
    m_belowLimitNote->setTextAlignment(Qt::AlignRight);
    m_belowLimitNote->setPadding(QMargins(6, 4, 6, 4));
    m_belowLimitNote->setSelectable(false);
    m_belowLimitNote->setVisible(false);
    m_cursor = new QCPItemStraightLine(m_plot);
    m_pctCursor = new QCPItemStraightLine(m_plot);
    m_cursor->setLayer(m_cursorLayer);
    m_pctCursor->setLayer(m_cursorLayer);
    for (QCPItemStraightLine *cursor : {m_cursor, m_pctCursor}) {
        // The replay instant: the palette's text colour, dashed, so it never reads as data.
        cursor->setPen(QPen(palette().color(QPalette::Text), 1.2, Qt::DashLine));
        cursor->setVisible(false);
        cursor->setSelectable(false);
    }
    m_pctCursor->setClipAxisRect(m_pctRect);
    m_pctCursor->point1->setAxes(pctX, pctY);
    m_pctCursor->point2->setAxes(pctX, pctY);

    m_plot->legend->setVisible(true);
    m_plot->legend->setFont(font());
    // The legend sits in its own row above the charts, in columns: inside the axis rect it hid
    // the start of the data (a storm's ramp, the first windows).
    usageRect->insetLayout()->take(m_plot->legend);
    usageRect->insetLayout()->simplify();
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(0, 0, m_plot->legend);
    m_plot->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    m_plot->legend->setWrap(5);
    m_plot->legend->setMargins(QMargins(6, 2, 6, 2));
    m_plot->plotLayout()->setRowStretchFactor(0, 0.001); // as tall as its rows, no more
    m_plot->plotLayout()->setRowSpacing(2);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom | QCP::iSelectPlottables);
    for (QCPAxisRect *rect : {usageRect, m_pctRect}) {
        rect->setRangeDrag(Qt::Horizontal);
        rect->setRangeZoom(Qt::Horizontal);
    }
    m_pctRect->setRangeDragAxes(pctX, pctY);
    m_pctRect->setRangeZoomAxes(pctX, pctY);
    applyPalette(m_plot);
    tunePlotForSpeed(m_plot);

    // Shift+drag: select a time range and zoom to it (QCustomPlot reads the mode after
    // emitting mousePress, so switching here applies to this very drag).
    connect(m_plot, &QCustomPlot::mousePress, this, [this](QMouseEvent *event) {
        m_plot->setSelectionRectMode((event->modifiers() & Qt::ShiftModifier) ? QCP::srmZoom
                                                                              : QCP::srmNone);
    });
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this,
            [this](QMouseEvent *) { this->timeRange()->showAll(); });
    connect(m_plot->xAxis, qOverload<const QCPRange &>(&QCPAxis::rangeChanged), this,
            [this](const QCPRange &range) { onPlotRangeChanged(range); });
    connect(pctX, qOverload<const QCPRange &>(&QCPAxis::rangeChanged), this,
            [this](const QCPRange &range) { onPlotRangeChanged(range); });
    connect(m_scopes, &QComboBox::currentIndexChanged, this, [this](int comboIndex) {
        const int scope = m_scopes->itemData(comboIndex).toInt();
        if (comboIndex >= 0 && scope != m_scopeIndex) {
            m_scopeIndex = scope;
            rebuildGraphs();
        }
    });
}

void BucketPage::setScopeIndex(int scopeIndex)
{
    m_scopeIndex = scopeIndex;
    const int comboIndex = m_scopes->findData(scopeIndex);
    if (comboIndex >= 0)
        m_scopes->setCurrentIndex(comboIndex);
    markStale();
    if (isVisible())
        refreshIfStale();
}

QString BucketPage::limitsText() const
{
    return m_limits->text();
}

void BucketPage::refresh()
{
    rebuildScopeList();
    rebuildGraphs();
}

void BucketPage::rebuildScopeList()
{
    const auto &snap = snapshot();
    const int count = snap ? static_cast<int>(snap->report.scopes.size()) : 0;
    if (m_scopeIndex >= count)
        m_scopeIndex = -1;
    if (m_scopeIndex < 0 && count > 0)
        m_scopeIndex = models::worstScopeIndex(snap->report);
    bool same = m_scopes->count() == count;
    for (int i = 0; same && i < count; ++i)
        same = m_scopes->itemText(i) == models::scopeLabel(snap->report.scopes.at(i));
    if (!same) {
        const QSignalBlocker blocker(m_scopes);
        m_scopes->clear();
        for (int i = 0; i < count; ++i)
            m_scopes->addItem(models::scopeLabel(snap->report.scopes.at(i)), i);
    }
    const QSignalBlocker blocker(m_scopes);
    m_scopes->setCurrentIndex(m_scopes->findData(m_scopeIndex));
}

void BucketPage::rebuildGraphs()
{
    const auto &snap = snapshot();
    const bool valid = snap && m_scopeIndex >= 0 && m_scopeIndex < snap->report.scopes.size();
    for (QCPGraph *graph :
         {m_usage, m_accepted, m_capacity, m_effective, m_observed429, m_predicted429,
          m_corrections, m_retryAfter, m_reconstructedPct, m_observedPct})
        graph->data()->clear();
    m_belowLimitNote->setVisible(false);
    m_belowLimitNote->setText({});
    if (!valid) {
        m_limits->setText(snap ? tr("No bucket has seen traffic yet.") : tr("No data."));
        m_safeSend->clear();
        applyTimeRange();
        return;
    }
    const ScopeSummary &scope = snap->report.scopes.at(m_scopeIndex);
    static const ScopeSeries emptySeries;
    const ScopeSeries &series = static_cast<size_t>(m_scopeIndex) < snap->series.size()
                                    ? snap->series[static_cast<size_t>(m_scopeIndex)]
                                    : emptySeries;

    m_usage->data()->set(seriesPointsOf(series, series.usage, 1.0, snap->report.lastMs), true);
    m_usage->setName(scope.algorithm == u"credits" ? tr("credits used (as the limiter counts)")
                                                   : tr("usage (as the limiter counts)"));
    m_accepted->data()->set(seriesPointsOf(series, series.acceptedUsage, 1.0, snap->report.lastMs),
                            true);

    const qint64 first =
        snap->report.firstMs.value_or(series.usageT.empty() ? 0 : series.usageT.front());
    const qint64 last =
        snap->report.lastMs.value_or(series.usageT.empty() ? first : series.usageT.back());
    const QVector<double> ends = {plotKey(first), plotKey(std::max(last, first + 1))};
    m_capacity->setData(ends, {scope.capacity, scope.capacity}, true);
    if (scope.effectiveLimit)
        m_effective->setData(ends, {*scope.effectiveLimit, *scope.effectiveLimit}, true);
    // The legend lists what is drawn: no "effective limit" entry when none was learned.
    if (scope.effectiveLimit)
        m_effective->addToLegend();
    else
        m_effective->removeFromLegend();

    // Throttle markers sit on the usage curve at their instant, so they read as "this request
    // hit a full bucket" (observed) or "the model would have rejected this" (predicted).
    auto markers = [&series](const std::vector<qint64> &times) {
        QVector<QCPGraphData> points;
        points.reserve(static_cast<qsizetype>(times.size()));
        for (qint64 t : times)
            points.append(QCPGraphData(plotKey(t), models::usageAt(series, t)));
        return points;
    };
    m_observed429->data()->set(markers(series.observedThrottleT), true);
    m_predicted429->data()->set(markers(series.predictedThrottleT), true);
    QVector<QCPGraphData> corrected;
    corrected.reserve(static_cast<qsizetype>(series.corrections.size()));
    for (const StateCorrection &correction : series.corrections)
        corrected.append(QCPGraphData(plotKey(correction.atMs), correction.saidUsage));
    m_corrections->data()->set(corrected, true);
    // The legend lists what is drawn: no entry for a bucket the service never corrected.
    if (corrected.isEmpty())
        m_corrections->removeFromLegend();
    else
        m_corrections->addToLegend();

    showBelowLimitNote(scope, series);

    QVector<QCPGraphData> shade;
    shade.reserve(static_cast<qsizetype>(series.retryAfterIntervals.size() * 2));
    for (const auto &[start, end] : series.retryAfterIntervals) {
        shade.append(QCPGraphData(plotKey(start), 1.0));
        shade.append(QCPGraphData(plotKey(end), 0.0));
    }
    std::sort(shade.begin(), shade.end(),
              [](const QCPGraphData &a, const QCPGraphData &b) { return a.key < b.key; });
    m_retryAfter->data()->set(shade, true);

    setPercentPane(scope, series, snap->report.lastMs);
    const double top =
        std::max({scope.capacity, scope.peakUsage, scope.effectiveLimit.value_or(0.0)});
    m_plot->yAxis->setRange(0, top > 0 ? top * 1.12 : 1.0);

    m_limits->setText(describeLimits(scope, series));
    updateSafeSend();
    applyTimeRange();
}

// A bucket that throttles is never drawn below its limit without a word: observed 429s at
// instants where this limit had room (by the limiter's own count) were caused by something this
// chart does not model. Say how many, and what it can be.
void BucketPage::showBelowLimitNote(const ScopeSummary &scope, const ScopeSeries &series)
{
    if (scope.capacity > 0 && !series.observedThrottleT.empty()) {
        qsizetype below = 0;
        qsizetype belowUnderRetryAfter = 0;
        for (qint64 t : series.observedThrottleT) {
            if (models::usageAt(series, t) + 1 > scope.capacity)
                continue;
            ++below;
            for (const auto &[start, end] : series.retryAfterIntervals) {
                if (start <= t && t < end) {
                    ++belowUnderRetryAfter;
                    break;
                }
            }
        }
        if (below > 0) {
            QStringList causes;
            if (belowUnderRetryAfter > 0)
                causes
                    << tr("%1 while a Retry-After was running (shaded)").arg(belowUnderRetryAfter);
            if (scope.effectiveLimit && *scope.effectiveLimit < scope.capacity)
                causes << tr("the service's real limit looks lower: 429s began at %1")
                              .arg(*scope.effectiveLimit);
            causes << tr("or another limit on this key, or traffic not in this log");
            m_belowLimitNote->setText(
                tr("%1 of %2 observed 429s came while this limit had room:\n%3")
                    .arg(below)
                    .arg(series.observedThrottleT.size())
                    .arg(causes.join(u'\n')));
            m_belowLimitNote->setColor(palette().color(QPalette::Text));
            QColor box = palette().color(QPalette::Base);
            box.setAlpha(220);
            m_belowLimitNote->setBrush(box);
            m_belowLimitNote->setPen(QPen(fillColor(1.0), 1));
            m_belowLimitNote->setVisible(true);
        }
    }

}

// This bucket's own fill, not the key's fullest limit (ScopeSeries::reconstructedPct): every
// pane of the page follows the bucket chosen (issue 30.5).
void BucketPage::setPercentPane(const ScopeSummary &scope, const ScopeSeries &series,
                                std::optional<qint64> lastMs)
{
    const double fillScale = scope.capacity > 0 ? 100.0 / scope.capacity : 0.0;
    m_reconstructedPct->data()->set(
        seriesPointsOf(series, series.usage, fillScale, lastMs), true);
    m_observedPct->data()->set(
        pointsOf(series.observedPctT, series.observedPct, 100.0, std::nullopt), true);
    m_pctRect->setVisible(true);
    double pctTop = 110;
    for (double v : series.observedPct)
        pctTop = std::max(pctTop, v * 100.0 + 5);
    for (double v : series.usage)
        pctTop = std::max(pctTop, v * fillScale + 5);
    m_pctRect->axis(QCPAxis::atLeft)->setRange(0, pctTop);
}

// The header line: documented and effective limits, peak (and what a peak over 100 % counts),
// 429s by cause, corrections, from when the chart is exact.
QString BucketPage::describeLimits(const ScopeSummary &scope, const ScopeSeries &series) const
{
    QString limits;
    if (scope.windowSeconds > 0)
        limits = tr("Documented: %1 per %2 s (%3)")
                     .arg(scope.capacity)
                     .arg(scope.windowSeconds)
                     .arg(scope.algorithm);
    else
        limits = tr("Documented: %1 (%2)").arg(scope.capacity).arg(scope.algorithm);
    if (scope.effectiveLimit)
        limits += tr(" · effective (where observed 429s began): %1 (%2 % of documented)")
                      .arg(*scope.effectiveLimit)
                      .arg(QString::number(
                          scope.capacity > 0 ? *scope.effectiveLimit / scope.capacity * 100.0 : 0.0,
                          'f', 0));
    else
        limits += scope.observedThrottled > 0
                      ? tr(" · effective: unknown (no 429 whose cause is this limit)")
                      : tr(" · effective: unknown (no observed 429 yet)");
    limits += tr(" · peak %1 % as the limiter counts (%2 % accepted)")
                  .arg(QString::number(scope.peakFill * 100.0, 'f', 0),
                       QString::number(scope.acceptedPeakFill * 100.0, 'f', 0));
    // A peak over 100 % says what it counts (issue 30.7).
    if (const QString over = models::overCapacityExplanation(scope, scope.peakUsage,
                                                             scope.acceptedPeakUsage);
        !over.isEmpty())
        limits += QStringLiteral(" (") + over + u')';
    limits += tr(" · 429s %1 observed / %2 predicted")
                  .arg(scope.observedThrottled)
                  .arg(scope.predictedThrottled);
    if (!scope.observedByCause.isEmpty()) {
        QStringList causes;
        for (auto it = scope.observedByCause.cbegin(); it != scope.observedByCause.cend(); ++it)
            causes << QStringLiteral("%1 %2").arg(it.key()).arg(it.value());
        limits += tr(" (by cause: %1)").arg(causes.join(QStringLiteral(", ")));
    }
    if (scope.corrections > 0)
        // Spelled out: no translation is loaded, so tr()'s %n plural would show "time(s)".
        limits +=
            (scope.corrections == 1
                 ? tr(" · corrected once by the service: %1")
                 : tr(" · corrected %1 times by the service, first %2").arg(scope.corrections))
                .arg(scope.correctionLog.value(0).describe());
    // The series is exact from its first exact point; a long history before it is peak bins.
    if (series.firstExact > 0)
        if (const std::optional<qint64> exact = models::exactSince(series))
            limits += tr(" · chart exact from %1 (peaks before)").arg(formatIsoMs(*exact));
    return limits;
}

void BucketPage::updateSafeSend()
{
    const auto &snap = snapshot();
    if (!snap || m_scopeIndex < 0 || m_scopeIndex >= snap->report.scopes.size()) {
        m_safeSend->clear();
        return;
    }
    const auto instant = timeRange()->replayInstant();
    const auto from = models::referenceInstant(*snap, instant);
    if (!from) {
        m_safeSend->clear();
        return;
    }
    const models::SafeSend safe = models::safeSend(*snap, m_scopeIndex, instant);
    QString text = models::safeSendText(safe, *from);
    if (safe.atMs && *safe.atMs > *from)
        text += tr(" (at %1)").arg(formatIsoMs(*safe.atMs));
    text += instant ? tr(" · as of %1 (replay)").arg(formatIsoMs(*from))
                    : tr(" · as of %1, the newest event").arg(formatIsoMs(*from));
    m_safeSend->setText(text);
    m_safeSend->setStyleSheet(safe.atMs && *safe.atMs > *from
                                  ? QStringLiteral("color: %1").arg(fillColor(1.0).name())
                                  : QString());
}

QString BucketPage::belowLimitNote() const
{
    return m_belowLimitNote->visible() ? m_belowLimitNote->text() : QString();
}

QString BucketPage::safeSendText() const
{
    return m_safeSend->text();
}

void BucketPage::timeChanged()
{
    updateSafeSend();
    // Only the replay instant moved (scrubbing): move the cursor and redraw its layer.
    if (timeRange()->hasRange() && timeRange()->startMs() == m_appliedStartMs &&
        timeRange()->endMs() == m_appliedEndMs) {
        placeCursor();
        m_cursorLayer->replot();
        return;
    }
    applyTimeRange();
}

void BucketPage::placeCursor()
{
    const auto instant = timeRange()->replayInstant();
    m_cursor->setVisible(instant.has_value());
    m_pctCursor->setVisible(instant.has_value());
    if (instant) {
        const double key = plotKey(*instant);
        m_cursor->point1->setCoords(key, 0);
        m_cursor->point2->setCoords(key, 1);
        m_pctCursor->point1->setCoords(key, 0);
        m_pctCursor->point2->setCoords(key, 1);
    }
}

void BucketPage::applyTimeRange()
{
    m_applyingRange = true;
    if (timeRange()->hasRange()) {
        const QCPRange range(plotKey(timeRange()->startMs()), plotKey(timeRange()->endMs()));
        m_plot->xAxis->setRange(range);
        m_pctRect->axis(QCPAxis::atBottom)->setRange(range);
    } else {
        m_plot->xAxis->rescale();
        m_pctRect->axis(QCPAxis::atBottom)->setRange(m_plot->xAxis->range());
    }
    m_applyingRange = false;
    m_appliedStartMs = timeRange()->startMs();
    m_appliedEndMs = timeRange()->endMs();
    placeCursor();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void BucketPage::onPlotRangeChanged(const QCPRange &range)
{
    if (m_applyingRange)
        return;
    // The operator zoomed or panned: that is the new shared range (which re-applies it to both
    // axis rects through timeChanged()).
    timeRange()->setRange(plotKeyToMs(range.lower), plotKeyToMs(range.upper));
}

} // namespace ts::widgets
