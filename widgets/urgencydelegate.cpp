#include "urgencydelegate.h"

#include "models/identityurgencymodel.h"
#include "plotstyle.h"
#include "theme.h"

#include <QApplication>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>

namespace ts::widgets {

using Model = models::IdentityUrgencyModel;

// errorCodeColor() is the one palette of theme.h: a code has the same colour on every page.

QColor urgencyColor(int urgency)
{
    switch (Model::Urgency(urgency)) {
    case Model::Urgency::Blocked:
        return fillColor(1.0);
    case Model::Urgency::AtLimit:
        return QColor(0xe0, 0x6c, 0x1c);
    case Model::Urgency::Rising:
        return fillColor(0.8);
    case Model::Urgency::Calm:
        break;
    }
    return fillColor(0.0);
}

namespace {
QColor textOn(const QColor &background)
{
    return background.lightness() > 140 ? QColor(Qt::black) : QColor(Qt::white);
}
} // namespace

void UrgencyDelegate::paint(QPainter *painter, const QStyleOptionViewItem &option,
                            const QModelIndex &index) const
{
    const int column = index.column();
    if (column == Model::IdentityColumn) {
        QStyledItemDelegate::paint(painter, option, index);
        return;
    }
    painter->save();
    QStyleOptionViewItem background = option;
    initStyleOption(&background, index);
    background.text.clear();
    const QWidget *widget = option.widget;
    QStyle *style = widget ? widget->style() : QApplication::style();
    style->drawControl(QStyle::CE_ItemViewItem, &background, painter, widget);
    const QRect cell = option.rect.adjusted(3, 3, -3, -3);
    const QString text = index.data(Qt::DisplayRole).toString();
    QColor track = option.palette.color(QPalette::Mid);
    track.setAlpha(60);

    switch (column) {
    case Model::StatusColumn: {
        const QColor colour = urgencyColor(index.data(Model::UrgencyRole).toInt());
        painter->setRenderHint(QPainter::Antialiasing);
        painter->setPen(Qt::NoPen);
        painter->setBrush(colour);
        painter->drawRoundedRect(cell, cell.height() / 2.0, cell.height() / 2.0);
        painter->setPen(textOn(colour));
        QFont font = option.font;
        font.setBold(true);
        painter->setFont(font);
        painter->drawText(cell, Qt::AlignCenter, text);
        break;
    }
    case Model::FillColumn: {
        const double fill = index.data(Model::FillRole).toDouble();
        const QColor colour = fillColor(fill);
        painter->setPen(Qt::NoPen);
        painter->setBrush(track);
        painter->drawRect(cell);
        // The bar's full width is 100 %; over the limit it is full and the figure says by how
        // much (a death spiral's 250 % must not look like a calm 100 %).
        const int width = int(cell.width() * std::clamp(fill, 0.0, 1.0));
        painter->setBrush(colour);
        painter->drawRect(QRect(cell.left(), cell.top(), width, cell.height()));
        painter->setPen(width > cell.width() / 2 ? textOn(colour)
                                                 : option.palette.color(QPalette::Text));
        QFont font = option.font;
        font.setBold(fill >= 1.0);
        painter->setFont(font);
        painter->drawText(cell, Qt::AlignCenter, text);
        break;
    }
    case Model::SparklineColumn: {
        const QVariantList values = index.data(Model::SparklineRole).toList();
        if (values.size() < 2)
            break;
        double top = 1.0;
        for (const QVariant &v : values)
            top = std::max(top, v.toDouble());
        const auto y = [&](double v) { return cell.bottom() - v / top * cell.height(); };
        // The limit (100 %), dashed, so "over" reads without a scale.
        QPen limitPen(fillColor(1.0), 1, Qt::DashLine);
        painter->setPen(limitPen);
        painter->drawLine(QPointF(cell.left(), y(1.0)), QPointF(cell.right(), y(1.0)));
        QPainterPath path;
        for (qsizetype i = 0; i < values.size(); ++i) {
            const QPointF p(cell.left() + double(i) * cell.width() / double(values.size() - 1),
                            y(values.at(i).toDouble()));
            if (i == 0)
                path.moveTo(p);
            else
                path.lineTo(p);
        }
        painter->setRenderHint(QPainter::Antialiasing);
        painter->setPen(QPen(fillColor(values.last().toDouble()), 1.5));
        painter->setBrush(Qt::NoBrush);
        painter->drawPath(path);
        break;
    }
    case Model::ThrottleRateColumn: {
        const double rate = index.data(Model::ThrottleRateRole).toDouble();
        const QVariantMap byCode = index.data(Model::ThrottleRatesRole).toMap();
        if (rate > 0) {
            // Segments by errorCode, scaled so 100/s fills the cell (more: full width).
            const double scale = cell.width() / std::max(100.0, rate);
            double x = cell.left();
            painter->setPen(Qt::NoPen);
            for (auto it = byCode.cbegin(); it != byCode.cend(); ++it) {
                const double w = std::max(2.0, it.value().toDouble() * scale);
                painter->setBrush(errorCodeColor(it.key()));
                painter->drawRect(QRectF(x, cell.top(), w, cell.height()));
                x += w;
            }
        }
        painter->setPen(option.palette.color(QPalette::Text));
        QFont font = option.font;
        font.setBold(rate > 0);
        painter->setFont(font);
        painter->drawText(cell.adjusted(0, 0, -2, 0), Qt::AlignRight | Qt::AlignVCenter, text);
        break;
    }
    case Model::BreakerColumn: {
        const QString state = index.data(Model::BreakerStateRole).toString();
        painter->setPen(state == u"closed" ? option.palette.color(QPalette::Text)
                                           : breakerStateColor(state));
        QFont font = option.font;
        font.setBold(state != u"closed");
        painter->setFont(font);
        painter->drawText(cell, Qt::AlignCenter, text);
        break;
    }
    case Model::PaceColumn:
        painter->setPen(option.palette.color(QPalette::Text));
        painter->drawText(cell, Qt::AlignLeft | Qt::AlignVCenter,
                          option.fontMetrics.elidedText(text, Qt::ElideRight, cell.width()));
        break;
    case Model::SafeSendColumn: {
        const bool waiting = index.data(Model::SafeInMsRole).toLongLong() > 0;
        painter->setPen(waiting ? fillColor(1.0) : option.palette.color(QPalette::Text));
        QFont font = option.font;
        font.setBold(waiting);
        painter->setFont(font);
        painter->drawText(cell, Qt::AlignLeft | Qt::AlignVCenter,
                          option.fontMetrics.elidedText(text, Qt::ElideRight, cell.width()));
        break;
    }
    default:
        painter->setPen(option.palette.color(QPalette::Text));
        painter->drawText(cell, Qt::AlignCenter, text);
        break;
    }
    painter->restore();
}

QSize UrgencyDelegate::sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const
{
    QSize size = QStyledItemDelegate::sizeHint(option, index);
    const QFontMetrics &metrics = option.fontMetrics;
    int width = size.width();
    switch (index.column()) {
    case Model::StatusColumn:
        width = metrics.horizontalAdvance(QStringLiteral("blocked now")) + 24;
        break;
    case Model::FillColumn:
        width = metrics.horizontalAdvance(QStringLiteral("1000 %")) + 40;
        break;
    case Model::SparklineColumn:
        width = 140;
        break;
    case Model::ThrottleRateColumn:
        width = metrics.horizontalAdvance(QStringLiteral("1000/s")) + 60;
        break;
    default:
        width += 12;
        break;
    }
    size.setWidth(width);
    size.setHeight(std::max(size.height(), metrics.height() + 10));
    return size;
}

} // namespace ts::widgets
