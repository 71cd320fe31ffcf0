#include "plotstyle.h"

#include "models/displaynames.h"
#include "qcp.h"
#include <QAbstractItemModel>
#include <QDateTime>
#include <QHeaderView>
#include <QTableView>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QTextStream>

namespace ts::widgets {

void applyPalette(QCPAxis *axis, const QColor &text, const QColor &grid)
{
    const QPen axisPen(text, 1);
    axis->setBasePen(axisPen);
    axis->setTickPen(axisPen);
    axis->setSubTickPen(axisPen);
    axis->setTickLabelColor(text);
    axis->setLabelColor(text);
    axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
    axis->grid()->setZeroLinePen(Qt::NoPen);
}

void applyPalette(QCustomPlot *plot)
{
    const QPalette palette = plot->palette();
    const QColor base = palette.color(QPalette::Base);
    const QColor text = palette.color(QPalette::Text);
    QColor grid = palette.color(QPalette::Mid);
    grid.setAlpha(140);
    plot->setBackground(QBrush(base));
    const auto rects = plot->axisRects();
    for (QCPAxisRect *rect : rects) {
        rect->setBackground(QBrush(base));
        const auto axes = rect->axes();
        for (QCPAxis *axis : axes)
            applyPalette(axis, text, grid);
    }
    plot->legend->setBrush(QBrush(base));
    plot->legend->setBorderPen(QPen(grid));
    plot->legend->setTextColor(text);
    plot->legend->setSelectedTextColor(palette.color(QPalette::HighlightedText));
}

void tunePlotForSpeed(QCustomPlot *plot)
{
    plot->setPlottingHint(QCP::phFastPolylines, true);
    plot->setNotAntialiasedElements(QCP::aeFills);
    plot->setNoAntialiasingOnDrag(true);
}

void useUtcTimeAxis(QCPAxis *axis)
{
    auto ticker = QSharedPointer<QCPAxisTickerDateTime>::create();
    ticker->setDateTimeSpec(models::displayTimeUtc() ? Qt::UTC : Qt::LocalTime);
    ticker->setDateTimeFormat(QStringLiteral("HH:mm:ss\nyyyy-MM-dd"));
    axis->setTicker(ticker);
}

void applyDisplayTime(QWidget *root)
{
    const Qt::TimeSpec spec = models::displayTimeUtc() ? Qt::UTC : Qt::LocalTime;
    const QString label = models::displayTimeUtc() ? QObject::tr("time (UTC)")
                                                   : QObject::tr("time (local)");
    const auto plots = root->findChildren<QCustomPlot *>();
    for (QCustomPlot *plot : plots) {
        const auto rects = plot->axisRects();
        for (QCPAxisRect *rect : rects) {
            const auto axes = rect->axes();
            for (QCPAxis *axis : axes) {
                auto ticker = axis->ticker().dynamicCast<QCPAxisTickerDateTime>();
                if (!ticker)
                    continue;
                ticker->setDateTimeSpec(spec);
                if (axis->label().startsWith(u"time ("))
                    axis->setLabel(label);
            }
        }
        plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

void useIntegerTicks(QCPAxis *axis)
{
    // Counts are whole: steps of 1, 2, 5, 10, ... never 0.5; labels without decimals.
    auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
    ticker->setTickStep(1.0);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    ticker->setTickCount(6);
    axis->setTicker(ticker);
    axis->setNumberFormat(QStringLiteral("f"));
    axis->setNumberPrecision(0);
}

void fitColumns(QTableView *view, int maxWidth)
{
    // Each column at least as wide as its header (never a truncated title) and as its
    // contents, up to maxWidth; what is longer is elided in the middle and shown in full in
    // the tooltip and exports.
    QHeaderView *header = view->horizontalHeader();
    view->setTextElideMode(Qt::ElideMiddle);
    const int columns = view->model() ? view->model()->columnCount() : 0;
    const int last = header->stretchLastSection() ? columns - 1 : columns;
    for (int column = 0; column < last; ++column) {
        if (view->isColumnHidden(column))
            continue;
        view->resizeColumnToContents(column);
        const int headerWidth = header->sectionSizeHint(column);
        int width = std::max(view->columnWidth(column), headerWidth);
        if (maxWidth > 0)
            width = std::min(width, std::max(maxWidth, headerWidth));
        view->setColumnWidth(column, width);
    }
}

QColor seriesColor(int index)
{
    // Tableau 10: readable on light and dark backgrounds, distinct for colour-blind readers
    // better than a hue wheel.
    static const QRgb colours[] = {0x4e79a7, 0xf28e2b, 0xe15759, 0x76b7b2, 0x59a14f,
                                   0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac};
    return QColor::fromRgb(colours[static_cast<size_t>(index) % std::size(colours)]);
}

namespace {

QString writePlot(QCustomPlot *plot, const QString &path, int width, int height)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    bool ok = false;
    if (suffix == u"png") {
        ok = plot->savePng(path, width, height, 1.0, -1, 96);
    } else if (suffix == u"pdf") {
        ok = plot->savePdf(path, width, height);
    } else if (suffix == u"svg") {
        const int w = width > 0 ? width : plot->width();
        const int h = height > 0 ? height : plot->height();
        QSvgGenerator generator;
        generator.setFileName(path);
        generator.setSize(QSize(w, h));
        generator.setViewBox(QRect(0, 0, w, h));
        generator.setTitle(QStringLiteral("Throttlescope plot"));
        QCPPainter painter;
        if (painter.begin(&generator)) {
            plot->toPainter(&painter, w, h);
            ok = painter.end();
        }
    } else {
        return QObject::tr("Unknown plot format '%1' (use .png, .pdf or .svg)").arg(suffix);
    }
    if (!ok || !QFileInfo(path).exists() || QFileInfo(path).size() == 0)
        return QObject::tr("Could not write %1").arg(path);
    return {};
}

} // namespace

QString exportHeading(QCustomPlot *plot, const QString &title)
{
    const QCPRange range = plot->xAxis->range();
    const auto utc = [](double key, const QString &format) {
        return QDateTime::fromMSecsSinceEpoch(plotKeyToMs(key), Qt::UTC).toString(format);
    };
    const QString from = utc(range.lower, QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    const bool sameDay = utc(range.lower, QStringLiteral("yyyy-MM-dd")) ==
                         utc(range.upper, QStringLiteral("yyyy-MM-dd"));
    const QString to = utc(range.upper, sameDay ? QStringLiteral("HH:mm:ss")
                                                : QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    return QStringLiteral("%1 · %2 – %3 UTC").arg(title, from, to);
}

QString exportPlot(QCustomPlot *plot, const QString &path, int width, int height,
                   const QString &title)
{
    if (title.isEmpty())
        return writePlot(plot, path, width, height);
    // A heading row above everything, and the legend shown, for the export only.
    QCPLayoutGrid *layout = plot->plotLayout();
    layout->insertRow(0);
    auto *heading = new QCPTextElement(plot, exportHeading(plot, title),
                                       QFont(plot->font().family(), 11, QFont::Bold));
    heading->setTextColor(plot->xAxis->labelColor());
    layout->addElement(0, 0, heading);
    const bool legendShown = plot->legend->visible();
    plot->legend->setVisible(plot->legend->itemCount() > 0);
    const QString error = writePlot(plot, path, width, height);
    plot->legend->setVisible(legendShown);
    layout->remove(heading);
    layout->simplify();
    plot->replot(QCustomPlot::rpQueuedReplot);
    return error;
}

QString csvField(const QString &value)
{
    if (!value.contains(u',') && !value.contains(u'"') && !value.contains(u'\n') &&
        !value.contains(u'\r'))
        return value;
    QString quoted = value;
    quoted.replace(QStringLiteral("\""), QStringLiteral("\"\""));
    return u'"' + quoted + u'"';
}

QString exportModelCsv(const QAbstractItemModel *model, const QString &path)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Text))
        return QObject::tr("Could not write %1: %2").arg(path, file.errorString());
    QTextStream out(&file);
    const int columns = model->columnCount();
    for (int c = 0; c < columns; ++c) {
        if (c > 0)
            out << u',';
        out << csvField(model->headerData(c, Qt::Horizontal, Qt::DisplayRole).toString());
    }
    out << u'\n';
    const int rows = model->rowCount();
    for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < columns; ++c) {
            if (c > 0)
                out << u',';
            // A shortened name is exported in full (models/displaynames.h).
            const QModelIndex index = model->index(r, c);
            const QVariant full = index.data(models::FullTextRole);
            out << csvField(full.isValid() ? full.toString() : index.data(Qt::DisplayRole).toString());
        }
        out << u'\n';
    }
    out.flush();
    if (!file.commit())
        return QObject::tr("Could not write %1: %2").arg(path, file.errorString());
    return {};
}

} // namespace ts::widgets
