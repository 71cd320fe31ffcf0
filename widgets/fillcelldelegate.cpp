#include "fillcelldelegate.h"

#include "models/bucketgridmodel.h"
#include "theme.h"

#include <QApplication>
#include <QPainter>

namespace ts::widgets {

void FillCellDelegate::paint(QPainter *painter, const QStyleOptionViewItem &option,
                             const QModelIndex &index) const
{
    const QVariant fillValue = index.data(models::BucketGridModel::FillRole);
    if (!fillValue.isValid()) {
        QStyledItemDelegate::paint(painter, option, index);
        return;
    }
    const double fill = fillValue.toDouble();
    painter->save();
    // Selection and hover backgrounds from the style, then the bar on top.
    QStyleOptionViewItem background = option;
    initStyleOption(&background, index);
    background.text.clear();
    const QWidget *widget = option.widget;
    QStyle *style = widget ? widget->style() : QApplication::style();
    style->drawControl(QStyle::CE_ItemViewItem, &background, painter, widget);

    const QRect cell = option.rect.adjusted(2, 2, -2, -2);
    QColor colour = fillColor(fill);
    QColor track = option.palette.color(QPalette::Mid);
    track.setAlpha(60);
    painter->setPen(Qt::NoPen);
    painter->setBrush(track);
    painter->drawRect(cell);
    const int barWidth = static_cast<int>(cell.width() * std::clamp(fill, 0.0, 1.0));
    painter->setBrush(colour);
    painter->drawRect(QRect(cell.left(), cell.top(), barWidth, cell.height()));

    // Text readable on the bar and on the track: the palette text unless the bar covers the
    // middle, then black or white by the bar's lightness.
    const bool overBar = barWidth > cell.width() / 2;
    QColor textColour = option.palette.color(QPalette::Text);
    if (overBar)
        textColour = colour.lightness() > 140 ? QColor(Qt::black) : QColor(Qt::white);
    painter->setPen(textColour);
    QFont font = option.font;
    if (fill >= 1.0)
        font.setBold(true);
    painter->setFont(font);
    painter->drawText(cell, Qt::AlignCenter, index.data(Qt::DisplayRole).toString());
    painter->restore();
}

QSize FillCellDelegate::sizeHint(const QStyleOptionViewItem &option,
                                 const QModelIndex &index) const
{
    QSize size = QStyledItemDelegate::sizeHint(option, index);
    size.setWidth(std::max(size.width(), option.fontMetrics.horizontalAdvance(QStringLiteral("100 %")) + 40));
    return size;
}

} // namespace ts::widgets
