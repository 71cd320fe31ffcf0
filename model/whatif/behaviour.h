#pragma once
// How the simulated client of `whatif` behaves (docs/whatif.md): its pace, concurrency, what it
// does with a 429 (Retry-After, retries, backoff, jitter), a reference circuit breaker and a cap
// on the background lane's share. Plain data with the parsers of the command line's spellings
// ("110/min", "exp:2:60"), so the CLI, the What-if page and the tests agree on them.

#include "engine/paceadvice.h" // formatPace
#include "policy/breakermodel.h"

#include <QJsonObject>
#include <QMap>
#include <QString>

#include <optional>

namespace ts::whatif {

struct Backoff
{
    enum class Kind : quint8 { Fixed, Exponential };
    Kind kind = Kind::Fixed;
    // Fixed: the delay; Exponential: the first retry's delay, doubled for each further one.
    qint64 baseMs = 2000;
    // Exponential: the longest delay (0 = none).
    qint64 capMs = 0;

    // The delay before retry number `retry` (1 = the first retry), jitter not applied.
    [[nodiscard]] qint64 delayMs(int retry) const;
    // "fixed:2" | "exp:1:60" (seconds, as --backoff takes them).
    [[nodiscard]] QString spelling() const;
    // --backoff exp:BASE[:CAP] | fixed:S (seconds, decimals allowed). nullopt and *error.
    static std::optional<Backoff> parse(const QString &text, QString *error);
    bool operator==(const Backoff &) const = default;
};

struct Behaviour
{
    // Requests per second each identity sends at most (attempts and retries alike); unset =
    // unpaced: as fast as the concurrency and the service time allow.
    std::optional<double> pacePerSecond;
    // Per-identity paces that override pacePerSecond (the pace sweep searches them).
    QMap<QString, double> paceByIdentity;
    // Operations in flight per identity; 0 = each identity's own peak in the log.
    int concurrency = 0;
    // Wait for the Retry-After of a 429 before sending anything more (the whole identity), and
    // retry the refused operation then, not after the backoff.
    bool obeyRetryAfter = false;
    // Retries of a refused operation before it is lost; Polly v8's RetryStrategyOptions
    // defaults (3 retries, a constant 2 s delay) unless said otherwise.
    int retries = 3;
    Backoff backoff;
    // Jitter on backoff delays (x0.75 to x1.25, Polly's constant-delay jitter), seeded so a run
    // repeats exactly; unset = none.
    std::optional<quint64> jitterSeed;
    // A reference circuit breaker in front of each identity's requests (policy/breakermodel.h):
    // an attempt while it is open is refused by the client itself (not sent) and counts as a
    // failed attempt, as in a Polly pipeline with retry outside the breaker.
    std::optional<BreakerModel> breaker;
    // The background lane's share of an identity's sends, in percent, while foreground work
    // waits (unset = no cap).
    std::optional<double> backgroundCapPercent;

    // The pace of one identity (paceByIdentity, else pacePerSecond).
    [[nodiscard]] std::optional<double> paceFor(const QString &identity) const;
    // "paced at 110/min obeying Retry-After, 3 retries, fixed 2 s backoff"
    [[nodiscard]] QString describe() const;
    // Every parameter, as the JSON output's "behaviour".
    [[nodiscard]] QJsonObject toJson() const;
};

// --pace R/s | R/min (also R/h, and a bare number = per second). nullopt and *error.
std::optional<double> parsePace(const QString &text, QString *error);
// --breaker polly-v8 | resilience4j | FILE (a JSON file with a `breaker` object or the
// object itself, docs/policy.md). nullopt and *error.
std::optional<BreakerModel> parseBreaker(const QString &nameOrFile, QString *error);

} // namespace ts::whatif
