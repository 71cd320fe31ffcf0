#include "snapshotmath.h"

#include "displaynames.h"

#include <algorithm>

namespace ts::models {

double usageAt(const ScopeSeries &series, qint64 tMs)
{
    const auto &times = series.usageT;
    if (times.empty() || series.usage.size() != times.size())
        return 0;
    // upper_bound: the first sample strictly after t; the one before it holds at t.
    const auto after = std::upper_bound(times.begin(), times.end(), tMs);
    if (after == times.begin())
        return 0;
    return series.usage[static_cast<size_t>(std::distance(times.begin(), after) - 1)];
}

double fillAt(const ScopeSummary &scope, const ScopeSeries *series, qint64 tMs)
{
    if (scope.capacity <= 0 || !series)
        return 0;
    return usageAt(*series, tMs) / scope.capacity;
}

double displayedFill(const DashboardSnapshot &snapshot, int scopeIndex,
                     std::optional<qint64> instantMs)
{
    if (scopeIndex < 0 || scopeIndex >= snapshot.report.scopes.size())
        return 0;
    const ScopeSummary &scope = snapshot.report.scopes.at(scopeIndex);
    if (!instantMs)
        return scope.currentFill;
    const ScopeSeries *series = static_cast<size_t>(scopeIndex) < snapshot.series.size()
                                    ? &snapshot.series[static_cast<size_t>(scopeIndex)]
                                    : nullptr;
    return fillAt(scope, series, *instantMs);
}

double displayedUsage(const DashboardSnapshot &snapshot, int scopeIndex,
                      std::optional<qint64> instantMs)
{
    if (scopeIndex < 0 || scopeIndex >= snapshot.report.scopes.size())
        return 0;
    if (!instantMs)
        return snapshot.report.scopes.at(scopeIndex).currentUsage;
    if (static_cast<size_t>(scopeIndex) >= snapshot.series.size())
        return 0;
    return usageAt(snapshot.series[static_cast<size_t>(scopeIndex)], *instantMs);
}

int worstScopeIndex(const ReportData &report)
{
    int worst = -1;
    for (int i = 0; i < report.scopes.size(); ++i) {
        if (worst < 0 || report.scopes.at(i).currentFill > report.scopes.at(worst).currentFill)
            worst = i;
    }
    return worst;
}

QString limitLabel(const ScopeSummary &scope)
{
    if (scope.service.isEmpty())
        return scope.limit;
    return scope.service + u'/' + scope.limit;
}

QString scopeLabel(const ScopeSummary &scope)
{
    return shortName(scope.key) + QStringLiteral(" · ") + limitLabel(scope);
}

QString formatDuration(qint64 ms)
{
    if (ms < 0)
        ms = 0;
    if (ms < 10'000)
        return QString::number(static_cast<double>(ms) / 1000.0, 'f', 1) + QStringLiteral(" s");
    const qint64 seconds = ms / 1000;
    if (seconds < 3600) {
        const qint64 minutes = seconds / 60;
        if (minutes == 0)
            return QString::number(seconds) + QStringLiteral(" s");
        return QString::number(minutes) + QStringLiteral(" min ") + QString::number(seconds % 60) +
               QStringLiteral(" s");
    }
    const qint64 hours = seconds / 3600;
    if (hours < 48)
        return QString::number(hours) + QStringLiteral(" h ") +
               QString::number((seconds % 3600) / 60) + QStringLiteral(" min");
    return QString::number(hours / 24) + QStringLiteral(" d ") + QString::number(hours % 24) +
           QStringLiteral(" h");
}

} // namespace ts::models
