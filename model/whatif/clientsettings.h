#pragma once
// Client settings to copy (issue 33.5, docs/whatif.md "Client settings"): from the reconstructed
// limits (the pace advice of each identity) and the chosen behaviour, the configuration of the
// clients operators run:
//   polly         Polly v8 in C#: a rate limiter at the pace, a retry that honours Retry-After
//                 (else the backoff), and the circuit breaker (when the behaviour has one)
//   resilience4j  Resilience4j as Spring Boot YAML: ratelimiter, retry, circuitbreaker
//                 instances per identity
//   azure-sdk     the Azure SDK for .NET's ClientOptions.Retry (it honours Retry-After itself),
//                 and the pace to keep, which the SDK does not
// The pace per identity is the behaviour's (--pace) when given, else the fastest the limits
// allow (the tightest advice of its keys).

#include "engine/reportdata.h"
#include "whatif/behaviour.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace ts::whatif {

enum class ClientKind : quint8 { Polly, Resilience4j, AzureSdk };
// polly | resilience4j | azure-sdk
std::optional<ClientKind> clientKindFromName(QStringView name);
QStringList clientKindNames();

// A steady pace as a rate limiter's permits per window: whole permits, a window of whole
// seconds, never above the pace (permits / window <= perSecond); of the windows that come
// closest to it, the shortest (the least bursty): 110/min is 55 per 30 s.
struct PermitWindow
{
    int permits = 1;
    int windowSeconds = 1;
};
PermitWindow permitWindow(double perSecond);

// The settings text for these identities (every identity with advice, or a pace).
QString clientSettings(ClientKind kind, const QStringList &identities,
                       const QList<PaceAdvice> &advice, const Behaviour &behaviour);

} // namespace ts::whatif
