#pragma once
// Application logs of resilience libraries and SDKs, turned into breaker and request events.
// Lines that match none of the patterns below are ordinary log noise and skipped (not errors).
//
//  - Polly v8 telemetry:
//      "Resilience event occurred. EventName: 'OnCircuitOpened', Source: 'P/(null)/CircuitBreaker',
//       Operation Key: 'k', Result: '429'"
//    OnCircuitOpened / OnCircuitClosed / OnCircuitHalfOpened -> breaker event (state open /
//    closed / half-open), breakerScope = Source without "(null)" parts ("P/CircuitBreaker").
//    Other resilience events (OnRetry, OnTimeout, OnRateLimiterRejected, OnHedging,
//    OnFallback) -> annotation events: the attempts themselves come from the
//      "Execution attempt. Source: '...', Operation Key: 'k', Result: '429', Handled: 'True',
//       Attempt: '1', Execution Time: 12.3ms"
//    lines, each a request event (status from Result: a number or an HttpStatusCode name;
//    an exception leaves status 0 with the exception type as errorCode; attempt, durationMs,
//    operationId = Operation Key). So a retry is counted once, by its attempt line. Polly's
//    BrokenCircuitException / IsolatedCircuitException is a call its breaker refused: the
//    request is refused by the client's breaker (RequestEvent::refusedByClientBreaker).
//  - Resilience4j: "CircuitBreaker 'backendA' changed state from CLOSED to OPEN" -> breaker
//    event (HALF_OPEN -> half-open, FORCED_OPEN -> open, DISABLED / METRICS_ONLY -> closed).
//  - Azure Service Bus SDK exceptions: lines with "50009" or "throttled" -> request event 429
//    errorCode "50009"; "ServerBusy" / "server-busy" otherwise -> 503 errorCode "ServerBusy";
//    namespace and entity from "SystemTracker:<ns>:<Kind>:<entity>" or the host name; the
//    message is kept as body (for "Please wait N seconds").
//  - Microsoft Graph SDK request logs with a "Retry-Attempt: n" header -> request event with
//    attempt n, method and URL when the line has them, status after "Status"/"StatusCode".
//
// Timestamps: every event needs one. A line's timestamp is read at its start (optionally inside
// [brackets]): ISO 8601 / RFC 3339 with 'T' or a space, '.' or ',' before the fraction, 'Z', an
// offset, or " +hh:mm" after a space (Serilog); no offset = UTC. A matching line without its own
// timestamp takes the one of the nearest preceding line that had one (the .NET console logger
// prints the timestamp on a header line and the message on the next); when there is none yet,
// the line is a malformed record (FILE:LINE).

#include "ingest/ingest.h"

namespace ts {

class ResilienceReader final : public LogReader
{
public:
    [[nodiscard]] QString formatName() const override { return QStringLiteral("resilience"); }
    [[nodiscard]] bool supportsResume() const override { return true; }
    ReadResult read(QIODevice &input, const QString &sourceName, IngestSink &sink,
                    const ReadControl &control) override;

    // The timestamp at the start of a log line (see above); *length gets the bytes it used.
    static std::optional<qint64> leadingTimestampMs(std::string_view line,
                                                    size_t *length = nullptr);
    // Whether a line matches one of the patterns (format detection).
    static bool looksLikeResilienceLine(std::string_view line);
};

} // namespace ts
