#pragma once
// Colours shared by every view, so a fill or a breaker state looks the same on every page.

#include <QColor>

namespace ts::widgets {

QColor fillColor(double fill);          // green < 0.8 <= yellow < 1.0 <= red
QColor breakerStateColor(const QString &state);

} // namespace ts::widgets
