#include "theme.h"

#include <QString>

namespace ts::widgets {

QColor fillColor(double fill)
{
    if (fill >= 1.0)
        return QColor(0xd6, 0x3a, 0x3a);
    if (fill >= 0.8)
        return QColor(0xe8, 0xb3, 0x1c);
    return QColor(0x3f, 0xa3, 0x5b);
}

QColor breakerStateColor(const QString &state)
{
    if (state == u"open")
        return QColor(0xd6, 0x3a, 0x3a);
    if (state == u"half-open")
        return QColor(0x4a, 0x7f, 0xd6);
    if (state == u"soft-open")
        return QColor(0xe8, 0xb3, 0x1c);
    return QColor(0x3f, 0xa3, 0x5b);
}

} // namespace ts::widgets
