#pragma once
// Plain value types describing what the pipeline found: produced by the engine and the report
// aggregation, consumed by the JSON/text report, the item models and the views. No behaviour.

#include "core/requestevent.h"

#include <QList>
#include <QMap>
#include <QString>

#include <optional>
#include <vector>

namespace ts {

struct ScopeSummary
{
    QString service;
    QString limit;     // limit name in the policy ("platform", "per-minute", ...)
    QString key;       // bucket owner value ("sp-migrator", "note-bridge+alice@contoso.com")
    QString algorithm; // fixed-window | sliding-window | token-bucket | leaky-bucket | credits | concurrency
    QString policy;    // policy name
    double capacity = 0;
    double windowSeconds = 0; // 0 when the algorithm has no window
    qint64 requests = 0;
    double peakUsage = 0;
    double peakFill = 0;
    double timeAtLimitSeconds = 0;
    qint64 predictedThrottled = 0;
    qint64 observedThrottled = 0;
    std::optional<qint64> nextSafeSendMs;
    // Learned from the service: usage at which observed 429s really began (nullopt = unknown).
    std::optional<double> effectiveLimit;
    // State at the end of the data (or at the snapshot instant).
    double currentUsage = 0;
    double currentFill = 0;
    // Highest x-ms-throttle-limit-percentage (or equivalent) the service reported for this key.
    std::optional<double> observedLimitPercentage;
};

struct BreakerSummary
{
    QString scope;  // "app", "user:alice@contoso.com", ...
    QString source; // "reconstructed" | "logged"
    int transitions = 0;
    double openSeconds = 0;
    QString finalState; // closed | soft-open | open | half-open
};

struct BreakerTransition
{
    qint64 tsMs = 0;
    QString scope;
    QString source;
    QString from;
    QString to;
};

struct Alert
{
    QString kind;     // retry-storm | lost-work | retry-after-ignored | capacity | near-limit | lane-starvation
    QString severity; // critical | warning | info
    qint64 atMs = 0;
    QString key;
    QString detail;
};

struct ThrottleSummary
{
    qint64 total = 0;
    QMap<QString, qint64> byErrorCode; // "none" for a throttle without a code
    QMap<QString, qint64> byScope;     // "Application", "User", ... ("none" without a scope)
    QMap<QString, qint64> byKind;      // rate-limit | capacity | server-busy
};

struct ReportData
{
    qint64 events = 0;
    qint64 malformed = 0;
    QMap<int, qint64> byStatus;
    ThrottleSummary throttles;
    QList<ScopeSummary> scopes;
    QList<BreakerSummary> breakers;
    QList<BreakerTransition> breakerTransitions;
    QList<Alert> alerts;
    QList<MalformedRecord> malformedSamples; // the first few, for display
    std::optional<qint64> firstMs;
    std::optional<qint64> lastMs;
};

} // namespace ts
