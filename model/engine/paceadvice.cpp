#include "engine/paceadvice.h"

#include <QHash>
#include <QLocale>

#include <algorithm>
#include <cmath>
#include <limits>

namespace ts {

namespace {

// Rounds down to `decimals` places, so an advised rate is never above the one computed.
double floorTo(double value, int decimals)
{
    const double scale = std::pow(10.0, decimals);
    return std::floor(value * scale + 1e-9) / scale;
}

} // namespace

QList<PaceAdvice> paceAdvice(const QList<ScopeSummary> &scopes)
{
    QList<PaceAdvice> advice;
    QHash<QString, qsizetype> byKey; // "policy\nkey" -> index in advice
    for (const ScopeSummary &scope : scopes) {
        if (scope.allowedRatePerSecond <= 0 || scope.requests <= 0 || scope.keyRequests <= 0)
            continue; // observed only, or a limit that charged nothing
        const QString id = scope.policy + u'\n' + scope.key;
        qsizetype index = byKey.value(id, -1);
        if (index < 0) {
            index = advice.size();
            byKey.insert(id, index);
            PaceAdvice entry;
            entry.policy = scope.policy;
            entry.key = scope.key;
            entry.identity = scope.keyIdentity;
            entry.maxRatePerSecond = std::numeric_limits<double>::infinity();
            advice.append(entry);
        }
        PaceAdvice &entry = advice[index];
        LimitAllowance limit;
        limit.limit = scope.limit;
        limit.algorithm = scope.algorithm;
        limit.share = std::min(1.0, double(scope.requests) / double(scope.keyRequests));
        limit.meanCost = scope.meanCost;
        limit.ratePerSecond = scope.allowedRatePerSecond / limit.share;
        entry.limits.append(limit);
        if (limit.ratePerSecond < entry.maxRatePerSecond) {
            entry.maxRatePerSecond = limit.ratePerSecond;
            entry.bindingLimit = limit.limit;
        }
    }
    for (PaceAdvice &entry : advice) {
        std::stable_sort(entry.limits.begin(), entry.limits.end(),
                         [](const LimitAllowance &a, const LimitAllowance &b) {
                             return a.ratePerSecond < b.ratePerSecond;
                         });
    }
    return advice;
}

const PaceAdvice *tightestAdvice(const QList<PaceAdvice> &advice, const QString &identity)
{
    const PaceAdvice *tightest = nullptr;
    for (const PaceAdvice &entry : advice) {
        if (entry.identity == identity &&
            (!tightest || entry.maxRatePerSecond < tightest->maxRatePerSecond))
            tightest = &entry;
    }
    return tightest;
}

QString describeAdvice(const PaceAdvice &advice)
{
    return u"max "_qs + formatPace(advice.maxRatePerSecond) + u", "_qs + advice.bindingLimit +
           u" limit binds"_qs;
}

QString formatPace(double perSecond)
{
    const QLocale c = QLocale::c();
    if (!std::isfinite(perSecond))
        return u"unlimited"_qs;
    if (perSecond >= 10)
        return c.toString(floorTo(perSecond, 1), 'g', 12) + u"/s"_qs;
    const double perMinute = perSecond * 60;
    if (perMinute >= 10)
        return c.toString(std::floor(perMinute + 1e-9), 'f', 0) + u"/min"_qs;
    if (perMinute >= 1)
        return c.toString(floorTo(perMinute, 1), 'g', 12) + u"/min"_qs;
    return c.toString(floorTo(perSecond * 3600, 1), 'g', 12) + u"/h"_qs;
}

} // namespace ts
