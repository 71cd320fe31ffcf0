#include "elidedlabel.h"

#include <QPainter>
#include <QStyle>

#include <algorithm>

namespace ts::widgets {

ElidedLabel::ElidedLabel(const QString &text, QWidget *parent) : QLabel(text, parent)
{
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
}

QSize ElidedLabel::minimumSizeHint() const
{
    // As narrow as a few characters; as tall as one line.
    return {fontMetrics().horizontalAdvance(QStringLiteral("M…M")),
            QLabel::minimumSizeHint().height()};
}

void ElidedLabel::paintEvent(QPaintEvent *event)
{
    const QRect area = contentsRect();
    if (fontMetrics().horizontalAdvance(text()) <= area.width()) {
        QLabel::paintEvent(event);
        return;
    }
    QPainter painter(this);
    const QString prefix = text().left(m_keptPrefix);
    const int prefixWidth = fontMetrics().horizontalAdvance(prefix);
    const QString shown =
        prefix + fontMetrics().elidedText(text().mid(m_keptPrefix), Qt::ElideLeft,
                                          std::max(0, area.width() - prefixWidth));
    style()->drawItemText(&painter, area, int(alignment()), palette(), isEnabled(), shown,
                          foregroundRole());
}

} // namespace ts::widgets
