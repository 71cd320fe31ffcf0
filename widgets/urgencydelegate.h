#pragma once

#include "theme.h" // errorCodeColor()
// Paints the Overview's identity rows (models::IdentityUrgencyModel): the status as a coloured
// badge, the worst fill as a bar (red at or over the limit), the sparkline of the last minutes
// with the limit drawn, 429s per second as a bar split by errorCode, the breaker state in its
// colour, and the "safe to send" countdown in red while it runs.

#include <QStyledItemDelegate>

namespace ts::widgets {

// One colour per errorCode that stays the same between sessions and snapshots (a hash of the
// code's text picks from the qualitative palette; the common codes have fixed slots).

// Badge colour of an urgency class (models::IdentityUrgencyModel::Urgency as int).
QColor urgencyColor(int urgency);

class UrgencyDelegate : public QStyledItemDelegate
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
