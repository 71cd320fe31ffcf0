#include "whatif/clientsettings.h"

#include "engine/paceadvice.h"

#include <cmath>

namespace ts::whatif {

namespace {

// Seconds as C# writes them: TimeSpan.FromSeconds(2) / FromMilliseconds(250).
QString timeSpan(qint64 ms)
{
    if (ms % 1000 == 0)
        return QStringLiteral("TimeSpan.FromSeconds(%1)").arg(ms / 1000);
    return QStringLiteral("TimeSpan.FromMilliseconds(%1)").arg(ms);
}

// A duration as Spring Boot reads it: "2s", "250ms".
QString springDuration(qint64 ms)
{
    return ms % 1000 == 0 ? QString::number(ms / 1000) + u"s"_qs : QString::number(ms) + u"ms"_qs;
}

struct IdentityPace
{
    QString identity;
    std::optional<double> perSecond;
    QString why; // "max 6.6/min, onenote-per-hour limit binds" or "--pace"
};

QList<IdentityPace> pacesOf(const QStringList &identities, const QList<PaceAdvice> &advice,
                            const Behaviour &behaviour)
{
    QList<IdentityPace> paces;
    for (const QString &identity : identities) {
        IdentityPace pace{identity, behaviour.paceFor(identity), {}};
        const PaceAdvice *tightest = tightestAdvice(advice, identity);
        if (tightest)
            pace.why = u"the limits allow "_qs + describeAdvice(*tightest);
        if (pace.perSecond)
            pace.why = u"the pace asked for"_qs + (tightest ? u"; "_qs + pace.why : QString());
        else if (tightest)
            pace.perSecond = tightest->maxRatePerSecond;
        paces.append(pace);
    }
    return paces;
}

QString pollyRetry(const Behaviour &behaviour)
{
    const Backoff &backoff = behaviour.backoff;
    QString text =
        QStringLiteral(
            "    // Retry outermost: a refused call waits, then tries again.\n"
            "    .AddRetry(new RetryStrategyOptions<HttpResponseMessage>\n"
            "    {\n"
            "        ShouldHandle = new PredicateBuilder<HttpResponseMessage>()\n"
            "            .Handle<HttpRequestException>()\n"
            "            .HandleResult(r => r.StatusCode == HttpStatusCode.TooManyRequests"
            " || (int)r.StatusCode >= 500),\n"
            "        MaxRetryAttempts = %1,\n"
            "        BackoffType = DelayBackoffType.%2,\n"
            "        Delay = %3,\n")
            .arg(behaviour.retries)
            .arg(backoff.kind == Backoff::Kind::Fixed ? u"Constant"_qs : u"Exponential"_qs)
            .arg(timeSpan(backoff.baseMs));
    if (backoff.kind == Backoff::Kind::Exponential && backoff.capMs > 0)
        text += u"        MaxDelay = "_qs + timeSpan(backoff.capMs) + u",\n"_qs;
    text += behaviour.jitterSeed ? u"        UseJitter = true,\n"_qs
                                 : u"        UseJitter = false,\n"_qs;
    if (behaviour.obeyRetryAfter)
        text += u"        // Retry-After first; without one, the backoff above (null).\n"
                u"        DelayGenerator = args => new ValueTask<TimeSpan?>(\n"
                u"            args.Outcome.Result?.Headers.RetryAfter?.Delta),\n"_qs;
    return text + u"    })\n"_qs;
}

QString pollyBreaker(const BreakerModel &model)
{
    QString text =
        u"    // The reference breaker of the what-if run ("_qs + model.describe() + u").\n"_qs;
    if (model.window == BreakerModel::Window::Count)
        text += u"    // (Polly measures a time window; the model counts the last calls.)\n"_qs;
    return text +
           QStringLiteral(
               "    .AddCircuitBreaker(new CircuitBreakerStrategyOptions<HttpResponseMessage>\n"
               "    {\n"
               "        FailureRatio = %1,\n"
               "        SamplingDuration = %2,\n"
               "        MinimumThroughput = %3,\n"
               "        BreakDuration = %4,\n"
               "    })\n")
               .arg(model.failureRatio)
               .arg(timeSpan(model.samplingDurationMs))
               .arg(model.minimumThroughput)
               .arg(timeSpan(model.breakDurationMs));
}

QString polly(const QList<IdentityPace> &paces, const Behaviour &behaviour)
{
    QString text =
        u"// Throttlescope: Polly v8 settings (packages Polly.Core, Polly.RateLimiting).\n"
        u"using System.Net;\n"
        u"using System.Threading.RateLimiting;\n"
        u"using Polly;\n"
        u"using Polly.CircuitBreaker;\n"
        u"using Polly.Retry;\n"_qs;
    for (const IdentityPace &pace : paces) {
        text +=
            u"\n// "_qs + pace.identity + (pace.why.isEmpty() ? QString() : u": "_qs + pace.why) +
            u"\nvar pipeline"_qs + QString::number(&pace - paces.constData() + 1) +
            u" = new ResiliencePipelineBuilder<HttpResponseMessage>()\n"_qs + pollyRetry(behaviour);
        if (behaviour.breaker)
            text += pollyBreaker(*behaviour.breaker);
        if (pace.perSecond) {
            const PermitWindow window = permitWindow(*pace.perSecond);
            text += QStringLiteral(
                        "    // The pace: at most %1 per %2 s (%3), queued rather than refused.\n"
                        "    .AddRateLimiter(new SlidingWindowRateLimiter(new "
                        "SlidingWindowRateLimiterOptions\n"
                        "    {\n"
                        "        PermitLimit = %1,\n"
                        "        Window = TimeSpan.FromSeconds(%2),\n"
                        "        SegmentsPerWindow = %4,\n"
                        "        QueueLimit = int.MaxValue,\n"
                        "        QueueProcessingOrder = QueueProcessingOrder.OldestFirst,\n"
                        "    }))\n")
                        .arg(window.permits)
                        .arg(window.windowSeconds)
                        .arg(formatPace(*pace.perSecond))
                        .arg(std::min(window.windowSeconds, 60));
        }
        text += u"    .Build();\n"_qs;
    }
    return text;
}

QString resilience4jRetry(const Behaviour &behaviour)
{
    const Backoff &backoff = behaviour.backoff;
    QString text = QStringLiteral("        maxAttempts: %1\n        waitDuration: %2\n")
                       .arg(behaviour.retries + 1) // Resilience4j counts the first call
                       .arg(springDuration(backoff.baseMs));
    const bool exponential = backoff.kind == Backoff::Kind::Exponential;
    text += u"        enableExponentialBackoff: "_qs + (exponential ? u"true\n"_qs : u"false\n"_qs);
    if (exponential) {
        text += u"        exponentialBackoffMultiplier: 2\n"_qs;
        if (backoff.capMs > 0)
            text += u"        exponentialMaxWaitDuration: "_qs + springDuration(backoff.capMs) +
                    u"\n"_qs;
    }
    if (behaviour.jitterSeed)
        text += u"        enableRandomizedWait: true\n        randomizedWaitFactor: 0.25\n"_qs;
    if (behaviour.obeyRetryAfter)
        text += u"        # Retry-After: YAML cannot read it; give the RetryConfig an\n"
                u"        # intervalBiFunction that returns the response's Retry-After.\n"_qs;
    return text;
}

QString resilience4jBreaker(const BreakerModel &model)
{
    const bool time = model.window == BreakerModel::Window::Time;
    return QStringLiteral("        slidingWindowType: %1\n"
                          "        slidingWindowSize: %2\n"
                          "        minimumNumberOfCalls: %3\n"
                          "        failureRateThreshold: %4\n"
                          "        waitDurationInOpenState: %5\n"
                          "        permittedNumberOfCallsInHalfOpenState: %6\n")
        .arg(time ? u"TIME_BASED"_qs : u"COUNT_BASED"_qs)
        .arg(time ? std::max<qint64>(1, model.samplingDurationMs / 1000)
                  : qint64(model.windowCalls))
        .arg(model.minimumThroughput)
        .arg(model.failureRatio * 100.0)
        .arg(springDuration(model.breakDurationMs))
        .arg(model.halfOpenCalls);
}

QString resilience4j(const QList<IdentityPace> &paces, const Behaviour &behaviour)
{
    QString text = u"# Throttlescope: Resilience4j settings (Spring Boot application.yml)\n"_qs;
    for (const IdentityPace &pace : paces) {
        if (!pace.why.isEmpty())
            text += u"# "_qs + pace.identity + u": "_qs + pace.why + u"\n"_qs;
    }
    const auto instance = [](const IdentityPace &pace) -> QString {
        return u"      \""_qs + pace.identity + u"\":\n"_qs;
    };
    text += u"resilience4j:\n  ratelimiter:\n    instances:\n"_qs;
    for (const IdentityPace &pace : paces) {
        if (!pace.perSecond)
            continue;
        const PermitWindow window = permitWindow(*pace.perSecond);
        text += instance(pace) +
                QStringLiteral("        limitForPeriod: %1\n        limitRefreshPeriod: %2s\n"
                               "        timeoutDuration: %2s\n")
                    .arg(window.permits)
                    .arg(window.windowSeconds);
    }
    text += u"  retry:\n    instances:\n"_qs;
    for (const IdentityPace &pace : paces)
        text += instance(pace) + resilience4jRetry(behaviour);
    if (behaviour.breaker) {
        text += u"  circuitbreaker:\n    instances:\n"_qs;
        for (const IdentityPace &pace : paces)
            text += instance(pace) + resilience4jBreaker(*behaviour.breaker);
    }
    return text;
}

QString azureSdk(const QList<IdentityPace> &paces, const Behaviour &behaviour)
{
    const Backoff &backoff = behaviour.backoff;
    QString text =
        u"// Throttlescope: Azure SDK for .NET retry options (Azure.Core ClientOptions).\n"
        u"// Azure.Core waits for Retry-After (and retry-after-ms, x-ms-retry-after-ms) on\n"
        u"// 429 and 503 by itself.\n"
        u"var options = new ServiceBusClientOptions(); // any Azure SDK client's options\n"_qs;
    text += u"options.Retry.Mode = RetryMode."_qs +
            (backoff.kind == Backoff::Kind::Fixed ? u"Fixed;\n"_qs : u"Exponential;\n"_qs);
    text += QStringLiteral("options.Retry.MaxRetries = %1;\noptions.Retry.Delay = %2;\n")
                .arg(behaviour.retries)
                .arg(timeSpan(backoff.baseMs));
    if (backoff.capMs > 0)
        text += u"options.Retry.MaxDelay = "_qs + timeSpan(backoff.capMs) + u";\n"_qs;
    text += u"// The SDK does not pace: keep each identity at or below (e.g. with a\n"
            u"// System.Threading.RateLimiting.SlidingWindowRateLimiter):\n"_qs;
    for (const IdentityPace &pace : paces) {
        if (!pace.perSecond)
            continue;
        const PermitWindow window = permitWindow(*pace.perSecond);
        text += QStringLiteral("//   %1: %2 per %3 s (%4)\n")
                    .arg(pace.identity)
                    .arg(window.permits)
                    .arg(window.windowSeconds)
                    .arg(pace.why);
    }
    return text;
}

} // namespace

std::optional<ClientKind> clientKindFromName(QStringView name)
{
    if (name == u"polly")
        return ClientKind::Polly;
    if (name == u"resilience4j")
        return ClientKind::Resilience4j;
    if (name == u"azure-sdk")
        return ClientKind::AzureSdk;
    return std::nullopt;
}

QStringList clientKindNames()
{
    return {u"polly"_qs, u"resilience4j"_qs, u"azure-sdk"_qs};
}

PermitWindow permitWindow(double perSecond)
{
    PermitWindow best{1, 3600};
    double bestRate = -1;
    for (int seconds : {1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600}) {
        const double permits = std::floor(perSecond * seconds + 1e-9);
        if (permits < 1)
            continue;
        const double rate = permits / seconds;
        if (rate > bestRate + 1e-12) {
            bestRate = rate;
            best = {int(std::min(permits, 1e9)), seconds};
        }
    }
    return best;
}

QString clientSettings(ClientKind kind, const QStringList &identities,
                       const QList<PaceAdvice> &advice, const Behaviour &behaviour)
{
    const QList<IdentityPace> paces = pacesOf(identities, advice, behaviour);
    switch (kind) {
    case ClientKind::Polly:
        return polly(paces, behaviour);
    case ClientKind::Resilience4j:
        return resilience4j(paces, behaviour);
    case ClientKind::AzureSdk:
        return azureSdk(paces, behaviour);
    }
    return {};
}

} // namespace ts::whatif
