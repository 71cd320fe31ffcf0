#include "pageicons.h"

#include "theme.h"

#include <QPainter>
#include <QPainterPath>
#include <QPalette>
#include <QPixmap>

namespace ts::widgets {

namespace {
constexpr int kSize = 64; // drawn once at this size; QIcon scales down smoothly

void draw(QPainter &p, const QString &page, const QColor &ink)
{
    QPen pen(ink, 5, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin);
    p.setPen(pen);
    p.setBrush(Qt::NoBrush);
    if (page == u"overview") {
        // A 2 x 2 grid of tiles, one of them full: the fill grid.
        p.drawRoundedRect(QRectF(8, 8, 20, 20), 4, 4);
        p.drawRoundedRect(QRectF(36, 8, 20, 20), 4, 4);
        p.drawRoundedRect(QRectF(8, 36, 20, 20), 4, 4);
        p.setBrush(fillColor(1.0));
        p.drawRoundedRect(QRectF(36, 36, 20, 20), 4, 4);
    } else if (page == u"bucket") {
        // A bucket, filled to its limit line.
        QPainterPath bucket;
        bucket.moveTo(10, 12);
        bucket.lineTo(16, 56);
        bucket.lineTo(48, 56);
        bucket.lineTo(54, 12);
        p.setBrush(Qt::NoBrush);
        QPainterPath water;
        water.moveTo(13.5, 30);
        water.lineTo(16, 56);
        water.lineTo(48, 56);
        water.lineTo(50.5, 30);
        water.closeSubpath();
        QColor fill = fillColor(0.9);
        p.fillPath(water, fill);
        p.drawPath(bucket);
        p.setPen(QPen(fillColor(1.0), 4, Qt::DashLine, Qt::RoundCap));
        p.drawLine(QPointF(6, 22), QPointF(58, 22));
    } else if (page == u"throttles") {
        // Stacked bars.
        p.setPen(Qt::NoPen);
        const QColor a = errorCodeColor(QStringLiteral("TooManyRequests"));
        const QColor b = errorCodeColor(QStringLiteral("RequestBlocked"));
        const int heights[] = {18, 38, 26, 48};
        for (int i = 0; i < 4; ++i) {
            const double x = 8 + i * 13;
            const int h = heights[i];
            p.fillRect(QRectF(x, 58 - h, 10, h * 0.55), b);
            p.fillRect(QRectF(x, 58 - h * 0.45, 10, h * 0.45), a);
        }
        p.setPen(pen);
        p.drawLine(QPointF(4, 58), QPointF(60, 58));
    } else if (page == u"breakers") {
        // An open switch between two contacts.
        p.drawLine(QPointF(4, 40), QPointF(18, 40));
        p.drawLine(QPointF(46, 40), QPointF(60, 40));
        p.setBrush(ink);
        p.drawEllipse(QPointF(20, 40), 4, 4);
        p.drawEllipse(QPointF(44, 40), 4, 4);
        p.setPen(QPen(breakerStateColor(QStringLiteral("open")), 5, Qt::SolidLine, Qt::RoundCap));
        p.drawLine(QPointF(21, 38), QPointF(42, 16));
    } else if (page == u"alerts") {
        // A warning triangle.
        QPainterPath triangle;
        triangle.moveTo(32, 6);
        triangle.lineTo(60, 56);
        triangle.lineTo(4, 56);
        triangle.closeSubpath();
        p.drawPath(triangle);
        p.drawLine(QPointF(32, 24), QPointF(32, 40));
        p.setBrush(ink);
        p.drawEllipse(QPointF(32, 48), 2.5, 2.5);
    } else if (page == u"events") {
        // Lines of a log.
        for (int i = 0; i < 4; ++i) {
            const double y = 12 + i * 13;
            p.drawLine(QPointF(8, y), QPointF(14, y));
            p.drawLine(QPointF(22, y), QPointF(i % 2 ? 46 : 56, y));
        }
    } else if (page == u"ingest") {
        // An arrow into a tray.
        p.drawLine(QPointF(32, 6), QPointF(32, 38));
        p.drawLine(QPointF(20, 26), QPointF(32, 38));
        p.drawLine(QPointF(44, 26), QPointF(32, 38));
        QPainterPath tray;
        tray.moveTo(6, 38);
        tray.lineTo(6, 56);
        tray.lineTo(58, 56);
        tray.lineTo(58, 38);
        p.drawPath(tray);
    } else if (page == u"play") {
        // The demo's Start: a triangle in the text colour (the style's own is dark grey, nearly
        // invisible on a dark toolbar).
        QPainterPath triangle;
        triangle.moveTo(16, 10);
        triangle.lineTo(54, 32);
        triangle.lineTo(16, 54);
        triangle.closeSubpath();
        p.setBrush(ink);
        p.drawPath(triangle);
    }
}
} // namespace

QIcon pageIcon(const QString &page, const QPalette &palette)
{
    QIcon icon;
    for (QIcon::Mode mode : {QIcon::Normal, QIcon::Selected}) {
        QPixmap pixmap(kSize, kSize);
        pixmap.fill(Qt::transparent);
        QPainter painter(&pixmap);
        painter.setRenderHint(QPainter::Antialiasing);
        draw(painter, page,
             palette.color(mode == QIcon::Selected ? QPalette::HighlightedText
                                                   : QPalette::WindowText));
        painter.end();
        icon.addPixmap(pixmap, mode);
    }
    return icon;
}

} // namespace ts::widgets
