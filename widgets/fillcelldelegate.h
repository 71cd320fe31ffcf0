#pragma once
// Paints a bucket grid cell as a fill bar: green below 80 %, yellow from 80 %, red at 100 %,
// with the percentage on top. Colours come from theme.h so every page agrees.

#include <QStyledItemDelegate>

namespace ts::widgets {

class FillCellDelegate : public QStyledItemDelegate
{
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    void paint(QPainter *painter, const QStyleOptionViewItem &option,
               const QModelIndex &index) const override;
    [[nodiscard]] QSize sizeHint(const QStyleOptionViewItem &option,
                                 const QModelIndex &index) const override;
};

} // namespace ts::widgets
