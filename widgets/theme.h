#pragma once
// Colours and the light/dark theme shared by every view, so a fill, a breaker state or an
// errorCode looks the same on every page, and the same from one session to the next.

#include <QColor>
#include <QPalette>
#include <QString>

namespace ts::widgets {

// Fill colours: green below the warning threshold, amber from it, red from the limit
// threshold (defaults 0.8 and 1.0; Preferences change them).
QColor fillColor(double fill);
void setFillThresholds(double warning, double limit);
double fillWarningThreshold();
double fillLimitThreshold();

QColor breakerStateColor(const QString &state);

// One colour per errorCode, never changing between sessions or with the order codes appear
// in: a fixed table for the codes the services document, then a stable hash of the code
// (FNV-1a, not qHash, which is seeded per process) onto a hue. "none" (a 429 without a code)
// is grey.
QColor errorCodeColor(const QString &code);
// The colour of a throttle cause (throttleCauseName): the same on every page.
QColor throttleCauseColor(const QString &cause);

// The theme: System follows the desktop's palette (as the application found it at start-up,
// and as the platform updates it); Light and Dark force one.
enum class ThemeMode { System, Light, Dark };
QString themeModeName(ThemeMode mode); // "system", "light", "dark"
ThemeMode themeModeFromName(const QString &name);
void applyTheme(ThemeMode mode);
[[nodiscard]] ThemeMode currentThemeMode();
bool isDark(const QPalette &palette);
QPalette darkPalette();
QPalette lightPalette();

} // namespace ts::widgets
