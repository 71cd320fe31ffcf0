#pragma once
// The sidebar's page icons, drawn (no image files, no icon theme needed) in the palette's text
// colour, so they follow a light or dark theme: redraw them on QEvent::PaletteChange.

#include <QIcon>

class QPalette;

namespace ts::widgets {

// overview, bucket, throttles, breakers, alerts, events, ingest; "play" (the toolbar's Start
// Demo); a blank icon for other names.
QIcon pageIcon(const QString &page, const QPalette &palette);

} // namespace ts::widgets
