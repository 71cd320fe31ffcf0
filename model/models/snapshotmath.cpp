#include "snapshotmath.h"

#include "core/timeparse.h"
#include "displaynames.h"

#include <algorithm>
#include <iterator>

namespace ts::models {

namespace {

// The value of one of the series' layers at t, given `after`, the first point strictly after t:
// the point before it held as a step, or, for a line series past its first exact point, the
// line to the next point.
double valueBefore(const ScopeSeries &series, const std::vector<double> &values,
                   std::vector<qint64>::const_iterator after, qint64 tMs)
{
    const auto &times = series.usageT;
    if (after == times.begin())
        return 0;
    const size_t i = static_cast<size_t>(std::distance(times.begin(), after) - 1);
    if (heldAsStep(series, i) || i + 1 >= times.size() || times[i] == tMs)
        return values[i];
    const double span = static_cast<double>(times[i + 1] - times[i]);
    const double share = static_cast<double>(tMs - times[i]) / span;
    return values[i] + (values[i + 1] - values[i]) * share;
}

// The value of one of the series' layers at t (see ScopeSeries).
double valueAt(const ScopeSeries &series, const std::vector<double> &values, qint64 tMs)
{
    const auto &times = series.usageT;
    if (times.empty() || values.size() != times.size())
        return 0;
    // upper_bound: the first sample strictly after t; the one before it holds at t.
    return valueBefore(series, values, std::upper_bound(times.begin(), times.end(), tMs), tMs);
}

} // namespace

bool heldAsStep(const ScopeSeries &series, size_t i)
{
    return !series.linear || i < series.firstExact;
}

double usageAt(const ScopeSeries &series, qint64 tMs)
{
    return valueAt(series, series.usage, tMs);
}

double usagePeakOver(const ScopeSeries &series, qint64 fromMs, qint64 toMs)
{
    const auto &times = series.usageT;
    const auto &values = series.usage;
    if (times.empty() || values.size() != times.size())
        return 0;
    // A step or a line between points is highest at one of its ends, so the peak is at fromMs,
    // at toMs or at a point in between (points at fromMs are in the value at fromMs).
    auto it = std::upper_bound(times.begin(), times.end(), fromMs);
    double peak = valueBefore(series, values, it, fromMs);
    for (; it != times.end() && *it <= toMs; ++it)
        peak = std::max(peak, values[static_cast<size_t>(std::distance(times.begin(), it))]);
    // `it` is now the first point after toMs.
    return std::max(peak, valueBefore(series, values, it, toMs));
}

std::optional<qint64> exactSince(const ScopeSeries &series)
{
    if (series.firstExact >= series.usageT.size())
        return std::nullopt;
    return series.usageT[series.firstExact];
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

double acceptedUsageAt(const ScopeSeries &series, qint64 tMs)
{
    return valueAt(series, series.acceptedUsage, tMs);
}

std::optional<qint64> referenceInstant(const DashboardSnapshot &snapshot,
                                       std::optional<qint64> instantMs)
{
    if (instantMs)
        return instantMs;
    return snapshot.report.lastMs;
}

SafeSend scopeSafeSendAt(const DashboardSnapshot &snapshot, int scopeIndex, qint64 tMs)
{
    SafeSend safe;
    if (scopeIndex < 0 || scopeIndex >= snapshot.report.scopes.size() ||
        static_cast<size_t>(scopeIndex) >= snapshot.series.size())
        return safe;
    const ScopeSummary &scope = snapshot.report.scopes.at(scopeIndex);
    const ScopeSeries &series = snapshot.series[static_cast<size_t>(scopeIndex)];
    const auto &times = series.usageT;
    if (!times.empty() && series.blockedUntil.size() == times.size()) {
        const auto after = std::upper_bound(times.begin(), times.end(), tMs);
        if (after != times.begin()) {
            const qint64 until =
                series.blockedUntil[static_cast<size_t>(std::distance(times.begin(), after) - 1)];
            if (until > tMs) {
                safe.atMs = until;
                safe.limit = scope.limit;
                safe.scopeIndex = scopeIndex;
            }
        }
    }
    for (const auto &[start, end] : series.retryAfterIntervals) {
        if (start <= tMs && tMs < end && (!safe.atMs || end > *safe.atMs)) {
            safe.atMs = end;
            safe.limit = scope.limit;
            safe.retryAfter = true;
            safe.scopeIndex = scopeIndex;
        }
    }
    return safe;
}

SafeSend laterOf(const SafeSend &a, const SafeSend &b)
{
    if (!b.atMs)
        return a;
    if (!a.atMs || *b.atMs > *a.atMs)
        return b;
    return a;
}

SafeSend safeSend(const DashboardSnapshot &snapshot, int scopeIndex,
                  std::optional<qint64> instantMs)
{
    SafeSend safe;
    if (scopeIndex < 0 || scopeIndex >= snapshot.report.scopes.size())
        return safe;
    const ScopeSummary &scope = snapshot.report.scopes.at(scopeIndex);
    if (!instantMs) {
        if (scope.nextSafeSendMs) {
            safe.atMs = scope.nextSafeSendMs;
            safe.limit = scope.nextSafeSendLimit.isEmpty() ? scope.limit : scope.nextSafeSendLimit;
            safe.retryAfter = scope.nextSafeSendRetryAfter;
            safe.scopeIndex = scopeIndex;
        }
        return safe;
    }
    // Every limit of the same policy on the same key holds the key back at once.
    const auto &scopes = snapshot.report.scopes;
    for (int i = 0; i < scopes.size(); ++i) {
        if (scopes.at(i).key == scope.key && scopes.at(i).policy == scope.policy)
            safe = laterOf(safe, scopeSafeSendAt(snapshot, i, *instantMs));
    }
    return safe;
}

QString safeSendReason(const SafeSend &safe)
{
    if (!safe.atMs)
        return {};
    if (safe.retryAfter)
        return safe.limit.isEmpty() ? QStringLiteral("Retry-After")
                                    : QStringLiteral("Retry-After (%1)").arg(safe.limit);
    return QStringLiteral("%1 frees up").arg(safe.limit);
}

QString safeSendText(const SafeSend &safe, qint64 fromMs)
{
    if (!safe.atMs || *safe.atMs <= fromMs)
        return QStringLiteral("safe to send now");
    return QStringLiteral("safe to send in %1: %2")
        .arg(formatCountdown(*safe.atMs - fromMs), safeSendReason(safe));
}

QString formatCountdown(qint64 ms)
{
    // Rounded up: "in 0 s" while still blocked would invite a request that fails.
    const qint64 seconds = ms <= 0 ? 0 : (ms + 999) / 1000;
    if (seconds < 60)
        return QString::number(seconds) + QStringLiteral(" s");
    if (seconds < 3600)
        return QString::number(seconds / 60) + QStringLiteral(" min ") +
               QString::number(seconds % 60) + QStringLiteral(" s");
    return QString::number(seconds / 3600) + QStringLiteral(" h ") +
           QString::number((seconds % 3600) / 60) + QStringLiteral(" min");
}

QList<int> scopesOfEventKey(const DashboardSnapshot &snapshot, const RequestEvent &event)
{
    QList<int> result;
    const QString fields[] = {
        event.identity, event.app,      event.tenant, event.serviceBusNamespace,
        event.entity,   event.category, event.lane};
    const auto &scopes = snapshot.report.scopes;
    for (int i = 0; i < scopes.size(); ++i) {
        const ScopeSummary &scope = scopes.at(i);
        if (!event.service.isEmpty() && scope.service != event.service)
            continue;
        bool all = true;
        if (!scope.key.isEmpty()) {
            for (QStringView part : QStringView(scope.key).split(u'+')) {
                all = std::any_of(std::begin(fields), std::end(fields),
                                  [part](const QString &f) { return !f.isEmpty() && f == part; });
                if (!all)
                    break;
            }
        }
        if (all)
            result.append(i);
    }
    return result;
}

QString bucketsAtText(const DashboardSnapshot &snapshot, const RequestEvent &event, qint64 tMs)
{
    const QList<int> indexes = scopesOfEventKey(snapshot, event);
    if (indexes.isEmpty())
        return {};
    QString text = QStringLiteral("Buckets of this key at %1:").arg(formatIsoMs(tMs));
    for (int i : indexes) {
        const ScopeSummary &scope = snapshot.report.scopes.at(i);
        const double usage = displayedUsage(snapshot, i, tMs);
        const double accepted = static_cast<size_t>(i) < snapshot.series.size()
                                    ? acceptedUsageAt(snapshot.series[static_cast<size_t>(i)], tMs)
                                    : 0.0;
        text += QStringLiteral("\n  %1: %2 of %3")
                    .arg(scopeLabel(scope), QString::number(usage, 'g', 6),
                         QString::number(scope.capacity, 'g', 6));
        if (scope.capacity > 0)
            text += QStringLiteral(" (%1 %)").arg(
                QString::number(usage / scope.capacity * 100.0, 'f', 0));
        if (accepted != usage)
            text += QStringLiteral(", accepted %1").arg(QString::number(accepted, 'g', 6));
    }
    return text;
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

} // namespace ts::models
