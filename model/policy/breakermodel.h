#pragma once
// The reference circuit breaker the reconstruction replays (engine/breakertracker.h), modelled on
// documented breakers people already run, so its verdict reads as "what Polly / Resilience4j
// would have done with their defaults", not as a home-grown rule:
//
//   polly-v8      Polly v8 CircuitBreakerStrategyOptions defaults (pollydocs.org/strategies/
//                 circuit-breaker, "Defaults"): FailureRatio 0.1, SamplingDuration 30 s,
//                 MinimumThroughput 100, BreakDuration 5 s; after the break one probe decides
//                 (failure: break again, success: close). Polly breaks when the ratio is at
//                 or above FailureRatio (its AdvancedCircuitBehavior tests: throughput 10,
//                 minimum 10, rate 0.1, ratio 0.1 breaks) and the throughput is at least
//                 MinimumThroughput. Its health metrics roll over 10 windows of
//                 SamplingDuration / 10, as modelled here.
//   resilience4j  Resilience4j CircuitBreakerConfig defaults: failureRateThreshold 50 %,
//                 slidingWindowType COUNT_BASED, slidingWindowSize 100 calls,
//                 minimumNumberOfCalls 100, waitDurationInOpenState 60 s,
//                 permittedNumberOfCallsInHalfOpenState 10; "if the failure rate is equal or
//                 greater than the threshold the CircuitBreaker transitions to open" (as listed
//                 by Apache Camel's Resilience4j EIP configuration page, camel.apache.org/
//                 components/eips/resilience4jConfiguration-eip.html, and the CircuitBreakerConfig
//                 JSON schema of github.com/api-evangelist/resilience4j for the wait and the
//                 minimum number of calls; resilience4j.readme.io/docs/circuitbreaker is the
//                 library's own page).
//
// One addition to both, on by default: a throttle's Retry-After longer than the break extends
// the break (what Polly v8's BreakDurationGenerator is for). Waking before the service said to
// is how the death spiral of throttle-models.md starts; a breaker that ignores Retry-After
// would show a probe per BreakDuration that the service refuses.
//
// In a policy file this is the optional `breaker` object (docs/policy.md): a preset name and/or
// parameters, the parameters overriding the preset's.

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>

namespace ts {

struct BreakerModel
{
    enum class Window : quint8 {
        Time,  // the outcomes of the last samplingDurationMs (Polly, Resilience4j TIME_BASED)
        Count, // the last windowCalls outcomes (Resilience4j COUNT_BASED)
    };

    double failureRatio = 0.1; // opens at failures / calls >= failureRatio, in (0, 1]
    Window window = Window::Time;
    qint64 samplingDurationMs = 30000; // Window::Time
    int windowCalls = 100;             // Window::Count
    int minimumThroughput = 100;       // calls in the window before the ratio counts
    qint64 breakDurationMs = 5000;     // time open before the half-open probes
    int halfOpenCalls = 1;             // probes; their failure ratio decides as above
    bool retryAfterExtendsBreak = true;

    static BreakerModel pollyV8();
    static BreakerModel resilience4j();
    static QStringList presetNames(); // polly-v8, resilience4j
    static std::optional<BreakerModel> fromPreset(QStringView name);

    // {"preset": "...", "failureRatio": ..., ...}: the preset's values (polly-v8 when none is
    // named) with the parameters given on top; toJson() writes "custom" as the preset when the
    // result is no longer the preset's (the name is derived from the values: matchingPreset()).
    // nullopt and *error ("breaker: 'failureRatio' must be ...") on bad input.
    static std::optional<BreakerModel> fromJson(const QJsonObject &object, QString *error);
    // The same from text (the Breakers page's request); *error also for text that is not a
    // JSON object.
    static std::optional<BreakerModel> fromJsonText(const QString &text, QString *error);
    // Every parameter, so the file says exactly what was replayed.
    [[nodiscard]] QJsonObject toJson() const;
    // Empty when valid, else what is wrong.
    [[nodiscard]] QString validationError() const;
    // The preset these values are, or "custom".
    [[nodiscard]] QString matchingPreset() const;
    // One line for an operator: "Polly v8 defaults: opens when >= 10 % of >= 100 requests in
    // 30 s fail; open 5 s (longer when Retry-After says so); 1 probe".
    [[nodiscard]] QString describe() const;

    bool operator==(const BreakerModel &) const = default;
};

} // namespace ts
