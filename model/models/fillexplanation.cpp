#include "models/fillexplanation.h"

#include <QCoreApplication>
#include <QLocale>

#include <cmath>

namespace ts::models {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("FillExplanation", text);
}

// "per hour", "per minute", "per 10 s"; empty for a limit without a window.
QString perWindow(double windowSeconds)
{
    if (windowSeconds <= 0)
        return {};
    if (windowSeconds == 1)
        return tr("per second");
    if (windowSeconds == 60)
        return tr("per minute");
    if (windowSeconds == 3600)
        return tr("per hour");
    if (windowSeconds == 86400)
        return tr("per day");
    return tr("per %1 s").arg(QLocale(QLocale::English).toString(windowSeconds, 'g', 6));
}

} // namespace

QString overCapacityExplanation(const ScopeSummary &scope, double usage, double accepted)
{
    if (scope.capacity <= 0 || usage <= scope.capacity)
        return {};
    const QLocale english(QLocale::English);
    // A fill times the capacity is a count again, up to the last bits of the double.
    const auto number = [&english](double value) {
        const double tenths = std::round(value * 10.0) / 10.0;
        return english.toString(tenths, 'f', tenths == std::floor(tenths) ? 0 : 1);
    };
    const QString per = perWindow(scope.windowSeconds);
    QString text = tr("%1 counted against %2").arg(number(usage), number(scope.capacity));
    if (!per.isEmpty())
        text += u' ' + per;
    if (usage > accepted + 0.5)
        text += tr("; refused requests count too");
    if (accepted > scope.capacity)
        text += tr("; %1 of them accepted: more than documented").arg(number(accepted));
    return text;
}

} // namespace ts::models
