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
// Two more presets replay the breakers of Node clients by their libraries' own rules and option
// names (Rules::Cockatiel, Rules::Opossum; the rules are in docs/throttle-models.md, checked
// transition for transition against the libraries by tests/model/tst_breakers_groundtruth.cpp):
//
//   cockatiel     cockatiel 4.0.0 circuitBreaker(policy, {halfOpenAfter, breaker}) with a
//                 ConsecutiveBreaker, CountBreaker or SamplingBreaker and the default
//                 halfOpenSampling (one probe).
//   opossum       opossum 10.0.0 new CircuitBreaker(action, {errorThresholdPercentage,
//                 resetTimeout, rollingCountTimeout, rollingCountBuckets, volumeThreshold}).
//
// Neither extends its break for a Retry-After: the presets are what those clients did.
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
    // Whose rules decide: the reference breaker's (Polly v8 / Resilience4j, the parameters
    // below) or a Node library's (its options in `cockatiel` / `opossum`).
    enum class Rules : quint8 { Reference, Cockatiel, Opossum };
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

    // cockatiel's options, in its units (ms). The library has no defaults for the breaker, its
    // threshold, duration, size or halfOpenAfter; the preset's are its README's examples
    // (ConsecutiveBreaker(5), halfOpenAfter 10 s; threshold 0.2 and duration 30 s or size 100
    // for the other two).
    struct Cockatiel
    {
        enum class Breaker : quint8 { Consecutive, Count, Sampling };
        Breaker breaker = Breaker::Consecutive;
        // Consecutive: failures in a row that open (>=); Count / Sampling: the failure ratio,
        // in (0, 1), that the ratio must exceed (>).
        double threshold = 5;
        qint64 durationMs = 30000; // Sampling: the time sampled
        // Sampling: calls per second the window must average; absent: 5 failures a second at
        // the threshold (the library's 5 / threshold).
        std::optional<double> minimumRps;
        int size = 100;                 // Count: the calls in the window
        int minimumNumberOfCalls = 100; // Count: calls before the ratio counts (default: size)
        qint64 halfOpenAfterMs = 10000; // open this long, then the next call is the probe
        bool operator==(const Cockatiel &) const = default;
    };
    // opossum's options, in its units (ms), with its defaults.
    struct Opossum
    {
        double errorThresholdPercentage = 50; // opens when failures / calls * 100 exceeds it
        qint64 resetTimeoutMs = 30000;        // open this long, then half-open (a timer)
        qint64 rollingCountTimeoutMs = 10000; // the statistical window
        int rollingCountBuckets = 10;         // its buckets, rotated on a timer
        int volumeThreshold = 0;              // calls in the window before it may open
        bool operator==(const Opossum &) const = default;
    };
    Rules rules = Rules::Reference;
    Cockatiel cockatiel; // Rules::Cockatiel
    Opossum opossum;     // Rules::Opossum

    static BreakerModel pollyV8();
    static BreakerModel resilience4j();
    static BreakerModel cockatielDefaults();
    static BreakerModel opossumDefaults();
    static QStringList presetNames(); // polly-v8, resilience4j, cockatiel, opossum
    static std::optional<BreakerModel> fromPreset(QStringView name);

    // {"preset": "...", "failureRatio": ..., ...}: the preset's values (polly-v8 when none is
    // named) with the parameters given on top; toJson() writes "custom" as the preset when the
    // result is no longer the preset's (the name is derived from the values: matchingPreset()).
    // nullopt and *error ("breaker: 'failureRatio' must be ...") on bad input.
    static std::optional<BreakerModel> fromJson(const QJsonObject &object, QString *error);
    // The same from text (the Breakers page's request); *error also for text that is not a
    // JSON object.
    static std::optional<BreakerModel> fromJsonText(const QString &text, QString *error);
    // Every parameter, so the file says exactly what was replayed (a library preset's options
    // by the library's names: those of its breaker kind, minimumRps only when given).
    [[nodiscard]] QJsonObject toJson() const;
    // A library preset's options alone (toJson() without "preset"): what the library is given.
    [[nodiscard]] QJsonObject libraryOptions() const;
    // How long the breaker stays open before half-open, whatever the rules call it.
    [[nodiscard]] qint64 breakMs() const;
    // Whether a throttle's Retry-After holds the breaker open longer (reference rules only).
    [[nodiscard]] bool honoursRetryAfter() const
    {
        return rules == Rules::Reference && retryAfterExtendsBreak;
    }
    // Empty when valid, else what is wrong.
    [[nodiscard]] QString validationError() const;
    // The preset these values are, or "custom" (a library preset is its library's name,
    // whatever its options).
    [[nodiscard]] QString matchingPreset() const;
    // One line for an operator: "Polly v8 defaults: opens when >= 10 % of >= 100 requests in
    // 30 s fail; open 5 s (longer when Retry-After says so); 1 probe".
    [[nodiscard]] QString describe() const;

    bool operator==(const BreakerModel &) const = default;
};

} // namespace ts
