#pragma once
// What the services say about throttling, parsed from one event: pure functions, no state.
// Every dialect listed in docs/throttle-models.md is understood here and nowhere else.

#include "core/requestevent.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <QStringView>

#include <optional>

// The namespace cannot be called `signals`: Qt defines `signals` as a macro (`public`) in every
// translation unit that includes a Qt header, so `ts::signals::extract` would not compile.
namespace ts::throttle {

// ---- Retry advice -------------------------------------------------------------------------

// A Retry-After value: delta-seconds, decimal seconds ("2.128", Graph), or an HTTP-date
// (IMF-fixdate, RFC 850, asctime). Returns the delay in ms relative to responseMs (an HTTP-date
// is turned into a delay against responseMs; a date in the past gives 0). Fractions round up
// (advice is a lower bound); signs, exponents, units and delays beyond 366 days are rejected.
std::optional<qint64> parseRetryAfterDelayMs(QStringView value, qint64 responseMs);
// retry-after-ms / x-ms-retry-after-ms: milliseconds (may be decimal, rounded up).
std::optional<qint64> parseRetryAfterMsHeader(QStringView value);
// Fabric: "Request is blocked by the upstream service until: 9/2/2025 5:21:55 PM (UTC)".
// Returns the instant (ms since epoch, UTC).
std::optional<qint64> parseBlockedUntilMs(QStringView text);
// Service Bus: "... Please wait 2 seconds and try again." Returns the delay in ms.
std::optional<qint64> parsePleaseWaitDelayMs(QStringView text);

// ---- Error codes -------------------------------------------------------------------------

// `primary` is the code an operator groups 429s by: Fabric's top-level errorCode; for Graph /
// OData bodies the outermost code that is not generic (generic = a restated status such as
// TooManyRequests or "429"), so TooManyRequests/20166 groups as 20166 and activityLimitReached/
// throttledRequest as activityLimitReached; else a code named in the text (Service Bus
// "Error code: 50009" before "ServerBusy"); else the outermost code. The full rule is at
// errorCodesFromBody in throttlesignals.cpp. `inner`: every code below the outermost one.
struct ErrorCodes
{
    QString primary;    // the code an operator groups by (see above)
    QStringList inner;  // nested codes, outermost first (Graph innerError, OneNote 20166, ...)
    std::optional<bool> isRetriable; // Fabric ErrorResponse.isRetriable, when the body has it
};
// From the body text alone: Fabric {"errorCode":…}, Graph {"error":{"code":…,"innerError":{"code":…}}},
// SharePoint activityLimitReached / throttledRequest, Service Bus "Error code: 50009".
ErrorCodes errorCodesFromBody(QStringView body);
// The event's code: the errorCode field, else header x-ms-public-api-error-code, else the body.
// A generic field/header value (TooManyRequests) yields to a specific code found in the body.
QString errorCodeOf(const RequestEvent &event);

// ---- Graph throttle headers ----------------------------------------------------------------

struct ThrottleScope
{
    QString scope;  // Tenant_Application | Tenant | Application | User | (other text as given)
    QString limit;  // Read | Write | ReadWrite | empty
    QString appId;
    QString id;     // tenant / user / resource id
    // Application-wide scopes (Application, Tenant_Application, Tenant) stop every user of the
    // app; User stops only that user.
    [[nodiscard]] bool isApplicationWide() const;
};
// "<Scope>/<Limit>/<AppId>/<Id>" or the short forms "User" / "Application".
std::optional<ThrottleScope> parseThrottleScope(QStringView value);
// x-ms-throttle-limit-percentage as a fraction (0.8 means 80 %); values given as percents
// ("85" or "85%") are normalised to fractions.
std::optional<double> parseLimitPercentage(QStringView value);

// ---- Generic rate-limit headers ------------------------------------------------------------

struct RateLimitInfo
{
    std::optional<double> limit;
    std::optional<double> remaining;
    std::optional<qint64> resetAtMs;
    std::optional<double> windowSeconds;
    QString policyName;
    [[nodiscard]] bool isEmpty() const { return !limit && !remaining && !resetAtMs && !windowSeconds; }
};
// IETF structured fields RateLimit ("default";r=50;t=30) and RateLimit-Policy ("default";q=100;w=60),
// older RateLimit-Limit / -Remaining / -Reset, legacy X-RateLimit-* (Reset as epoch seconds or
// delta seconds). responseMs turns relative resets into instants.
RateLimitInfo parseRateLimit(const HttpHeaders &headers, qint64 responseMs);

struct ArmRemaining
{
    QString name; // "subscription-reads", or the name of a "Name;count" list entry
    qint64 remaining = 0;
};
// x-ms-ratelimit-remaining-* incl. the "Name;count,Name;count" list form.
QList<ArmRemaining> parseArmRemaining(const HttpHeaders &headers);

// ---- Everything about one event ------------------------------------------------------------

enum class ThrottleKind : quint8 { None, RateLimit, Capacity, ServerBusy };
QString throttleKindName(ThrottleKind kind); // "rate-limit" | "capacity" | "server-busy" | "none"

struct ThrottleSignals
{
    // Laid out by use: the engine and both detectors read the fields up to rateLimit for every
    // event that carries signals, on three threads other than the one that extracted them, so
    // they share the first two cache lines; the rest is read on throttles only.
    bool throttled = false;
    ThrottleKind kind = ThrottleKind::None;
    // false: retrying on the advised schedule is not expected to help (capacity throttling, or
    // the service said isRetriable=false); back off exponentially and shed load instead.
    bool retryable = true;
    // Earliest instant at which sending again honours *all* advice present: the latest of
    // Retry-After (relative to responseTimeMs), retry-after-ms / x-ms-retry-after-ms, Fabric's
    // "blocked until", Service Bus "please wait N seconds", and, on a throttled answer whose
    // generic rate limit says remaining <= 0, that limit's reset. Never before responseTimeMs.
    std::optional<qint64> retryAtMs;
    std::optional<double> limitPercentage;
    RateLimitInfo rateLimit;
    QString errorCode; // errorCodeOf(event)
    std::optional<ThrottleScope> scope;
    QString throttleInformation;         // x-ms-throttle-information
    std::optional<double> resourceUnits; // x-ms-resource-unit
    QList<ArmRemaining> armRemaining;
};

// Ask the cache for the fields every consumer reads of extracted signals (see the layout above),
// a few events before they are needed.
inline void prefetchSignals(const void *entry)
{
    const char *base = static_cast<const char *>(entry);
    // Three lines: the hot fields span two, and the entry holding them need not be aligned.
    for (size_t line = 0; line < 3 * 64; line += 64)
        __builtin_prefetch(base + line);
}

// The instant the response arrived: ts + durationMs when known, else ts.
qint64 responseTimeMs(const RequestEvent &event);
// Whether a response signals throttling: 429; 430 (Fabric Spark capacity); 503 when the service
// says it is throttling (ServerBusy, 50009, Retry-After present, SharePoint). Cheap for 2xx.
bool isThrottle(const RequestEvent &event);
// Whether extract() has anything to read: a throttle status (429, 430, 503), headers, a body or
// a Retry-After. When not, extract() returns ThrottleSignals{} with only errorCode set.
bool hasSignalsToRead(const RequestEvent &event);
// Full extraction. Cheap when the event carries no headers/body (the common 2xx case).
ThrottleSignals extract(const RequestEvent &event);

} // namespace ts::throttle
