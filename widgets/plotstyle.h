#pragma once
// Shared plot conventions: time axes in UTC seconds, colours derived from the widget palette
// (light or dark desktop, never a hard-coded white), and export to PNG, PDF and SVG.

#include <QColor>
#include <QString>

class QAbstractItemModel;
class QCPAxis;
class QCustomPlot;
class QTableView;
class QWidget;

namespace ts::widgets {

// Plot keys are seconds since the epoch (double), as QCPAxisTickerDateTime expects.
inline double plotKey(qint64 ms)
{
    return static_cast<double>(ms) / 1000.0;
}
inline qint64 plotKeyToMs(double key)
{
    return static_cast<qint64>(key * 1000.0);
}

// Applies the widget's palette to background, axes, grid and legend. Call again on
// QEvent::PaletteChange.
void applyPalette(QCustomPlot *plot);
void applyPalette(QCPAxis *axis, const QColor &text, const QColor &grid);

// Rendering settings for plots with thousands of points: fast polylines and no antialiasing of
// fills (both cost more than they show: measured 300 -> 60 ms for a 3000-point bucket plot),
// no antialiasing while dragging.
void tunePlotForSpeed(QCustomPlot *plot);

// A date-time ticker on this axis, in UTC or local time as models::displayTimeUtc() says.
void useUtcTimeAxis(QCPAxis *axis);
// After the time preference changed: every date-time axis under root, and its "time (…)" label.
void applyDisplayTime(QWidget *root);
// A count axis: integral ticks (steps 1, 2, 5, 10 ...) and labels without decimals.
void useIntegerTicks(QCPAxis *axis);
// Columns as wide as their header and contents (at most maxWidth, 0 = no limit), longer text
// elided; the stretched last section is left to stretch.
void fitColumns(QTableView *view, int maxWidth = 0);

// A qualitative colour for the n-th series (error codes, scopes): distinct on light and dark.
QColor seriesColor(int index);

// Writes the plot by file suffix: .png, .pdf or .svg (SVG through QSvgGenerator + QCPPainter).
// An exported chart stands on its own (issue 30.14): with a title, it carries a heading line
// ("Throttles · 2026-02-18 22:00:00 – 22:30:00 UTC": the title and the time range of its x axis)
// and its legend, shown for the export when the page hides it. Returns an error message, empty
// on success.
QString exportPlot(QCustomPlot *plot, const QString &path, int width = 0, int height = 0,
                   const QString &title = {});
// The heading an export carries: the title and the x axis's time range (UTC).
QString exportHeading(QCustomPlot *plot, const QString &title);

// Writes every row and column of the model's DisplayRole as CSV (RFC 4180 quoting), with the
// horizontal header as the first line. Returns an error message, empty on success.
QString exportModelCsv(const QAbstractItemModel *model, const QString &path);

// RFC 4180 quoting of one field.
QString csvField(const QString &value);

} // namespace ts::widgets
