#include "engine/forecast.h"

#include "core/timeparse.h"
#include "engine/paceadvice.h"

#include <QHash>
#include <QJsonObject>

#include <algorithm>
#include <cmath>

namespace ts {

namespace {

struct Rates
{
    double requests = 0; // per second
    double accepted = 0;
    qint64 throttles = 0;
};

// The key's traffic over the window before nowMs, from its per-second activity.
Rates ratesOf(const DashboardSnapshot &snapshot, const QString &key, qint64 nowMs, qint64 windowMs)
{
    Rates rates;
    for (const KeyActivity &activity : snapshot.keyActivity) {
        if (activity.key != key)
            continue;
        qint64 requests = 0;
        qint64 firstBin = -1;
        qint64 lastBin = -1;
        for (const KeyActivityBin &bin : activity.bins) {
            if (bin.startMs <= nowMs - windowMs || bin.startMs > nowMs)
                continue;
            requests += bin.requests;
            rates.throttles += bin.throttles;
            firstBin = firstBin < 0 ? bin.startMs : firstBin;
            lastBin = bin.startMs;
        }
        if (firstBin < 0)
            break;
        // The seconds the key has been sending within the window (a feed that started 20 s
        // ago has a rate over 20 s, not over the whole window).
        const double seconds =
            std::min(double(windowMs) / 1000.0, double(lastBin - firstBin) / 1000.0 + 1.0);
        rates.requests = double(requests) / seconds;
        rates.accepted = double(requests - rates.throttles) / seconds;
        break;
    }
    return rates;
}

// Milliseconds until this limit is full if the key's rate goes on (nullopt: it never is).
std::optional<qint64> untilFull(const ScopeSummary &scope, double keyRate)
{
    if (scope.keyRequests <= 0 || scope.allowedRatePerSecond <= 0 || keyRate <= 0)
        return std::nullopt;
    const double share = std::min(1.0, double(scope.requests) / double(scope.keyRequests));
    const double requests = keyRate * share; // into this bucket, per second
    const double charges = requests * scope.meanCost;
    const double room = std::max(0.0, scope.capacity - scope.currentUsage);
    double seconds = -1;
    if (scope.algorithm == u"fixed-window" || scope.algorithm == u"sliding-window" ||
        scope.algorithm == u"credits") {
        if (charges * scope.windowSeconds > scope.capacity)
            seconds = room / charges;
    } else if (scope.algorithm == u"token-bucket") {
        const double net = charges - scope.allowedRatePerSecond * scope.meanCost;
        if (net > 0)
            seconds = room / net;
    } else if (scope.algorithm == u"leaky-bucket") {
        const double net = requests - scope.allowedRatePerSecond;
        if (net > 0)
            seconds = room / net;
    } else if (scope.algorithm == u"concurrency") {
        if (requests > scope.allowedRatePerSecond)
            seconds = 0;
    }
    if (seconds < 0 || !std::isfinite(seconds))
        return std::nullopt;
    return qint64(std::llround(seconds * 1000.0));
}

std::optional<qint64> finishAt(qint64 nowMs, std::optional<qint64> remaining, double perSecond)
{
    if (!remaining || perSecond <= 0)
        return std::nullopt;
    return nowMs + qint64(std::llround(double(*remaining) / perSecond * 1000.0));
}

} // namespace

QList<KeyForecast> forecast(const DashboardSnapshot &snapshot, const ForecastOptions &options)
{
    QList<KeyForecast> forecasts;
    if (!snapshot.report.lastMs)
        return forecasts;
    const qint64 now = *snapshot.report.lastMs;
    QHash<QString, qsizetype> indexOf; // "policy\nkey" -> forecasts
    for (const ScopeSummary &scope : snapshot.report.scopes) {
        const QString id = scope.policy + u'\n' + scope.key;
        qsizetype index = indexOf.value(id, -1);
        if (index < 0) {
            const Rates rates = ratesOf(snapshot, scope.key, now, options.rateWindowMs);
            if (rates.requests <= 0)
                continue;
            KeyForecast entry;
            entry.policy = scope.policy;
            entry.key = scope.key;
            entry.identity = scope.keyIdentity;
            entry.completed = scope.keyRequests - scope.keyThrottled;
            entry.requestsPerSecond = rates.requests;
            entry.acceptedPerSecond = rates.accepted;
            entry.throttlesInWindow = rates.throttles;
            for (const PaceAdvice &advice : snapshot.report.advice) {
                if (advice.policy == scope.policy && advice.key == scope.key)
                    entry.advisedPerSecond = advice.maxRatePerSecond;
            }
            entry.finishAtCurrentMs = finishAt(now, options.remaining, rates.accepted);
            entry.finishAtAdvisedMs =
                finishAt(now, options.remaining, entry.advisedPerSecond.value_or(0));
            index = forecasts.size();
            indexOf.insert(id, index);
            forecasts.append(entry);
        }
        KeyForecast &entry = forecasts[index];
        const std::optional<qint64> until = untilFull(scope, entry.requestsPerSecond);
        if (until && *until <= options.horizonMs &&
            (!entry.limitAtMs || now + *until < *entry.limitAtMs)) {
            entry.limitAtMs = now + *until;
            entry.limit = scope.limit;
        }
    }
    return forecasts;
}

QString describeForecast(const KeyForecast &forecast, qint64 nowMs)
{
    const QString rate = formatPace(forecast.requestsPerSecond);
    if (!forecast.limitAtMs)
        return u"no limit ahead at "_qs + rate;
    const qint64 in = std::max<qint64>(0, *forecast.limitAtMs - nowMs);
    return forecast.limit + u" limit in ~"_qs + formatDuration(in) + u" at "_qs + rate;
}

QJsonArray forecastToJson(const QList<KeyForecast> &forecasts)
{
    const auto instant = [](const std::optional<qint64> &ms) {
        return ms ? QJsonValue(formatIsoMs(*ms)) : QJsonValue();
    };
    QJsonArray array;
    for (const KeyForecast &entry : forecasts) {
        array.append(QJsonObject{
            {u"policy"_qs, entry.policy},
            {u"key"_qs, entry.key},
            {u"identity"_qs, entry.identity},
            {u"completed"_qs, entry.completed},
            {u"requestsPerSecond"_qs, entry.requestsPerSecond},
            {u"acceptedPerSecond"_qs, entry.acceptedPerSecond},
            {u"limit"_qs, entry.limit.isEmpty() ? QJsonValue() : QJsonValue(entry.limit)},
            {u"limitAt"_qs, instant(entry.limitAtMs)},
            {u"advisedPerSecond"_qs,
             entry.advisedPerSecond ? QJsonValue(*entry.advisedPerSecond) : QJsonValue()},
            {u"finishAtCurrentRate"_qs, instant(entry.finishAtCurrentMs)},
            {u"finishAtAdvisedPace"_qs, instant(entry.finishAtAdvisedMs)},
        });
    }
    return array;
}

QString forecastText(const QList<KeyForecast> &forecasts, qint64 nowMs)
{
    QString text =
        u"Forecast (at "_qs + formatIsoMs(nowMs) + u", if the current rate goes on):\n"_qs;
    if (forecasts.isEmpty())
        return text + u"  no traffic in the last minute\n"_qs;
    for (const KeyForecast &entry : forecasts) {
        text += u"  "_qs + entry.key + u" ("_qs + entry.policy + u"): "_qs +
                QString::number(entry.completed) + u" completed, accepted at "_qs +
                formatPace(entry.acceptedPerSecond) + u"; "_qs + describeForecast(entry, nowMs);
        if (entry.finishAtCurrentMs)
            text += u"; the rest done at "_qs + formatIsoMs(*entry.finishAtCurrentMs) +
                    u" (in "_qs + formatDuration(*entry.finishAtCurrentMs - nowMs) + u")"_qs;
        if (entry.finishAtAdvisedMs && entry.advisedPerSecond)
            text += u", at "_qs + formatIsoMs(*entry.finishAtAdvisedMs) + u" (in "_qs +
                    formatDuration(*entry.finishAtAdvisedMs - nowMs) + u") paced at "_qs +
                    formatPace(*entry.advisedPerSecond);
        text += u"\n"_qs;
    }
    return text;
}

QList<Alert> ForecastAlerts::raise(const QList<KeyForecast> &forecasts, qint64 nowMs)
{
    QList<Alert> added;
    for (const KeyForecast &entry : forecasts) {
        if (!entry.limitAtMs || entry.throttlesInWindow > 0 ||
            *entry.limitAtMs - nowMs > alertWithinMs)
            continue;
        const bool known = std::any_of(raised.cbegin(), raised.cend(), [&](const Alert &alert) {
            return alert.key == entry.key && alert.detail.startsWith(entry.limit + u' ');
        });
        if (known)
            continue;
        Alert alert;
        alert.kind = u"limit-ahead"_qs;
        alert.severity = u"warning"_qs;
        alert.atMs = nowMs;
        alert.key = entry.key;
        alert.detail = describeForecast(entry, nowMs) + u", before any 429"_qs;
        if (entry.advisedPerSecond)
            alert.detail += u"; the limits allow "_qs + formatPace(*entry.advisedPerSecond);
        raised.append(alert);
        added.append(alert);
    }
    return added;
}

} // namespace ts
