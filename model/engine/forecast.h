#pragma once
// The forecast of a live feed (issue 33.3, docs/whatif.md "Forecast"): per bucket key, the work
// completed so far, the rate the service accepts it at now, when a limit will be reached if
// that rate goes on ("onenote-per-hour limit in ~7 min"), raised as an alert before the first
// 429, and, given the work that remains, when it finishes at the current rate and at the pace
// the limits allow (engine/paceadvice.h).
//
// "Now" is the end of the data (the newest event of a live feed). The current rate is the
// key's requests over the last rateWindowMs (DashboardSnapshot::keyActivity, kept with plot
// data). A limit b charges the key's rate times its share of the key's requests, at its mean
// cost; from its usage now it is full after
//   fixed-window, sliding-window, credits   (capacity - usage) / charge rate, when the rate
//                                           fills a window (charges per window > capacity);
//                                           never otherwise (the window ends first)
//   token-bucket                            tokens left / (charge rate - refill)
//   leaky-bucket                            (burst - excess) / (rate - nginx's rate)
//   concurrency                             now, when the rate exceeds capacity / time in flight
// The earliest of the key's limits is its forecast.

#include "engine/reportdata.h"

#include <QJsonArray>
#include <QList>
#include <QString>

#include <optional>

namespace ts {

struct KeyForecast
{
    QString policy;
    QString key;
    QString identity;             // the key's identity part (empty: an app, a namespace)
    qint64 completed = 0;         // requests the service accepted under the key so far
    double requestsPerSecond = 0; // over the rate window
    double acceptedPerSecond = 0; // of them, accepted
    qint64 throttlesInWindow = 0;
    // The earliest limit full at the current rate (unset: none within the horizon).
    QString limit;
    std::optional<qint64> limitAtMs;
    std::optional<double> advisedPerSecond; // the pace advice's bound
    // With remaining work: when it is done at the current accepted rate, and at the advised
    // pace (unset: that rate is 0).
    std::optional<qint64> finishAtCurrentMs;
    std::optional<qint64> finishAtAdvisedMs;
};

struct ForecastOptions
{
    qint64 rateWindowMs = 60'000;
    qint64 horizonMs = 24 * 3600'000; // limits further out are not forecast
    std::optional<qint64> remaining;  // operations still to do
};

// One entry per (policy, key) with traffic in the rate window, in the order of the advice.
QList<KeyForecast> forecast(const DashboardSnapshot &snapshot, const ForecastOptions &options);
// "onenote-per-hour limit in ~7 min at 2.3/s"
QString describeForecast(const KeyForecast &forecast, qint64 nowMs);
// report --remaining N: the "forecast" array (docs/report-json.md) and the text section.
QJsonArray forecastToJson(const QList<KeyForecast> &forecasts);
QString forecastText(const QList<KeyForecast> &forecasts, qint64 nowMs);

// Alerts before the first 429: a key with no throttle in its rate window whose forecast reaches
// a limit within alertWithinMs. Kept by the caller once raised (one per key and limit).
struct ForecastAlerts
{
    qint64 alertWithinMs = 30 * 60'000;
    // Adds an alert for each forecast that warrants one and was not raised yet; returns them.
    QList<Alert> raise(const QList<KeyForecast> &forecasts, qint64 nowMs);
    QList<Alert> raised;
};

} // namespace ts
