#include "theme.h"

#include <QApplication>
#include <QHash>
#include <QString>
#include <QStyle>

#include <optional>

namespace ts::widgets {

namespace {
// Display settings of the GUI thread (Preferences); read while painting on the same thread.
double g_warning = 0.8;
double g_limit = 1.0;
ThemeMode g_mode = ThemeMode::System;
// The desktop's palette as the application found it, before a theme replaced it.
std::optional<QPalette> g_systemPalette;

quint32 fnv1a(const QString &text)
{
    quint32 hash = 2166136261u;
    for (const QChar c : text) {
        const char16_t unit = c.unicode();
        hash = (hash ^ (unit & 0xffu)) * 16777619u;
        hash = (hash ^ (unit >> 8)) * 16777619u;
    }
    return hash;
}
} // namespace

QColor fillColor(double fill)
{
    if (fill >= g_limit)
        return QColor(0xd6, 0x3a, 0x3a);
    if (fill >= g_warning)
        return QColor(0xe8, 0xb3, 0x1c);
    return QColor(0x3f, 0xa3, 0x5b);
}

void setFillThresholds(double warning, double limit)
{
    g_limit = limit > 0 ? limit : 1.0;
    g_warning = warning > 0 && warning < g_limit ? warning : std::min(0.8, g_limit);
}

double fillWarningThreshold()
{
    return g_warning;
}

double fillLimitThreshold()
{
    return g_limit;
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

QColor throttleCauseColor(const QString &cause)
{
    // Tableau-10 like the codes; the two that mean "your rate" in warm colours, the ones that
    // mean something else in cool or grey ones.
    static const QHash<QString, QRgb> known = {
        {QStringLiteral("limit"), 0xe15759},       {QStringLiteral("concurrency"), 0xf28e2b},
        {QStringLiteral("retry-after"), 0x4e79a7}, {QStringLiteral("capacity"), 0x76b7b2},
        {QStringLiteral("unexplained"), 0xbab0ac},
    };
    return QColor::fromRgb(known.value(cause, 0x9c755f));
}

QColor errorCodeColor(const QString &code)
{
    // The codes docs/throttle-models.md names, each its own Tableau-10 colour (readable on light
    // and dark backgrounds); related codes of one service share a family.
    static const QHash<QString, QRgb> known = {
        {QStringLiteral("TooManyRequests"), 0xe15759},      // Graph, ARM
        {QStringLiteral("activityLimitReached"), 0xf28e2b}, // OneNote
        {QStringLiteral("20166"), 0xedc948},                // OneNote's numeric code
        {QStringLiteral("throttledRequest"), 0xff9da7},
        {QStringLiteral("RequestBlocked"), 0x4e79a7}, // Fabric
        {QStringLiteral("CapacityLimitExceeded"), 0x76b7b2},
        {QStringLiteral("TooManyRequestsForCapacity"), 0x59a14f},
        {QStringLiteral("50009"), 0xb07aa1}, // Service Bus
        {QStringLiteral("ServerBusy"), 0x9c755f},
        {QStringLiteral("TooManyRequestsException"), 0xd37295},
        {QStringLiteral("ServiceUnavailable"), 0x86bcb6},
        {QStringLiteral("none"), 0xbab0ac},
    };
    if (const auto it = known.constFind(code); it != known.cend())
        return QColor::fromRgb(it.value());
    if (code.isEmpty())
        return QColor::fromRgb(0xbab0ac);
    // Anything else: a hue from the hash, in the saturation and value of the table.
    const quint32 hash = fnv1a(code);
    return QColor::fromHsv(static_cast<int>(hash % 360u), 150 + static_cast<int>((hash >> 9) % 60u),
                           200 + static_cast<int>((hash >> 17) % 40u));
}

QString themeModeName(ThemeMode mode)
{
    switch (mode) {
    case ThemeMode::Light:
        return QStringLiteral("light");
    case ThemeMode::Dark:
        return QStringLiteral("dark");
    case ThemeMode::System:
        break;
    }
    return QStringLiteral("system");
}

ThemeMode themeModeFromName(const QString &name)
{
    if (name == u"light")
        return ThemeMode::Light;
    if (name == u"dark")
        return ThemeMode::Dark;
    return ThemeMode::System;
}

bool isDark(const QPalette &palette)
{
    return palette.color(QPalette::Window).lightness() < 128;
}

QPalette darkPalette()
{
    QPalette p;
    const QColor window(0x2b, 0x2d, 0x30);
    const QColor base(0x1e, 0x1f, 0x22);
    const QColor text(0xe6, 0xe6, 0xe6);
    const QColor disabled(0x80, 0x80, 0x80);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, QColor(0x26, 0x28, 0x2b));
    p.setColor(QPalette::ToolTipBase, QColor(0x3c, 0x3f, 0x41));
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::PlaceholderText, disabled);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, QColor(0x36, 0x38, 0x3b));
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, QColor(0xff, 0x6b, 0x6b));
    p.setColor(QPalette::Light, QColor(0x4a, 0x4d, 0x50));
    p.setColor(QPalette::Midlight, QColor(0x40, 0x42, 0x45));
    p.setColor(QPalette::Mid, QColor(0x5a, 0x5d, 0x60));
    p.setColor(QPalette::Dark, QColor(0x18, 0x19, 0x1b));
    p.setColor(QPalette::Shadow, QColor(0x0a, 0x0a, 0x0a));
    p.setColor(QPalette::Highlight, QColor(0x3d, 0x7a, 0xd6));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(0x6c, 0xa8, 0xf0));
    p.setColor(QPalette::LinkVisited, QColor(0xb0, 0x8c, 0xe8));
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, disabled);
    return p;
}

QPalette lightPalette()
{
    // The style's own light palette: what a light desktop looks like in this style.
    return QApplication::style()->standardPalette();
}

void applyTheme(ThemeMode mode)
{
    if (!g_systemPalette)
        g_systemPalette = QApplication::palette();
    g_mode = mode;
    switch (mode) {
    case ThemeMode::Dark:
        QApplication::setPalette(darkPalette());
        break;
    case ThemeMode::Light:
        QApplication::setPalette(lightPalette());
        break;
    case ThemeMode::System:
        QApplication::setPalette(*g_systemPalette);
        break;
    }
}

ThemeMode currentThemeMode()
{
    return g_mode;
}

} // namespace ts::widgets
