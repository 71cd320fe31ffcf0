#include "resiliencereader.h"

#include "core/timeparse.h"
#include "ingest/readerutil.h"
#include "ingest/redaction.h"

#include <QIODevice>

#include <string>

namespace ts {

namespace {

using ingest::toQString;

bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}

// The text between "<label>'" and the next "'", e.g. quoted("EventName: '") -> OnRetry.
std::optional<std::string_view> quotedAfter(std::string_view line, std::string_view label)
{
    const size_t at = line.find(label);
    if (at == std::string_view::npos)
        return std::nullopt;
    const size_t begin = at + label.size();
    const size_t end = line.find('\'', begin);
    if (end == std::string_view::npos)
        return std::nullopt;
    return line.substr(begin, end - begin);
}

int statusFromResult(std::string_view result)
{
    if (auto n = ingest::parseNumber(result); n && *n >= 100 && *n < 1000)
        return static_cast<int>(*n); // in range: checked just above
    static constexpr std::pair<std::string_view, int> kNames[] = {
        {"OK", 200},
        {"Created", 201},
        {"Accepted", 202},
        {"NoContent", 204},
        {"BadRequest", 400},
        {"Unauthorized", 401},
        {"Forbidden", 403},
        {"NotFound", 404},
        {"RequestTimeout", 408},
        {"Conflict", 409},
        {"TooManyRequests", 429},
        {"InternalServerError", 500},
        {"BadGateway", 502},
        {"ServiceUnavailable", 503},
        {"GatewayTimeout", 504},
    };
    for (const auto &[name, status] : kNames) {
        if (result == name)
            return status;
    }
    return 0;
}

QString scopeFromSource(std::string_view source)
{
    QString scope = toQString(source);
    scope.remove(QStringLiteral("/(null)"));
    scope.remove(QStringLiteral("(null)/"));
    return scope;
}

std::optional<QString> resilience4jState(std::string_view state)
{
    if (state == "OPEN" || state == "FORCED_OPEN")
        return QStringLiteral("open");
    if (state == "HALF_OPEN")
        return QStringLiteral("half-open");
    if (state == "CLOSED" || state == "DISABLED" || state == "METRICS_ONLY")
        return QStringLiteral("closed");
    return std::nullopt;
}

// The integer after a label and any of ":= '\"" characters.
std::optional<int> numberAfter(std::string_view line, std::string_view label)
{
    size_t at = line.find(label);
    if (at == std::string_view::npos)
        return std::nullopt;
    at += label.size();
    while (at < line.size() && (line[at] == ':' || line[at] == '=' || line[at] == ' ' ||
                                line[at] == '\'' || line[at] == '"'))
        ++at;
    int value = 0;
    const size_t begin = at;
    while (at < line.size() && isDigit(line[at]) && at - begin < 9)
        value = value * 10 + (line[at++] - '0');
    if (at == begin)
        return std::nullopt;
    return value;
}

void serviceBusPlace(std::string_view line, RequestEvent &event)
{
    // "SystemTracker:mynamespace:Queue:orders" / "...:Topic:t|sub"
    const size_t tracker = line.find("SystemTracker:");
    if (tracker != std::string_view::npos) {
        std::string_view rest = line.substr(tracker + 14);
        const size_t end = rest.find_first_of(", ");
        rest = rest.substr(0, end);
        const QStringList parts = toQString(rest).split(u':');
        if (!parts.isEmpty() && !parts.at(0).isEmpty())
            event.serviceBusNamespace = parts.at(0).section(u'.', 0, 0);
        if (parts.size() >= 3)
            event.entity = parts.at(2);
        return;
    }
    const size_t host = line.find(".servicebus.windows.net");
    if (host != std::string_view::npos) {
        size_t begin = host;
        while (begin > 0 && (std::isalnum(static_cast<unsigned char>(line[begin - 1])) ||
                             line[begin - 1] == '-'))
            --begin;
        event.serviceBusNamespace = toQString(line.substr(begin, host - begin));
    }
}

// Where a line's leading "[YYYY-MM-DD?hh:mm:ss" starts (after an optional '['), or npos when the
// line does not begin with something shaped like a timestamp.
size_t timestampShapeStart(std::string_view line)
{
    const size_t start = !line.empty() && line.front() == '[' ? 1 : 0;
    if (line.size() < start + 19)
        return std::string_view::npos;
    const std::string_view head = line.substr(start, 19);
    for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18}) {
        if (!isDigit(head[i]))
            return std::string_view::npos;
    }
    if (head[4] != '-' || head[7] != '-' || (head[10] != 'T' && head[10] != ' ') ||
        head[13] != ':' || head[16] != ':')
        return std::string_view::npos;
    return start;
}

} // namespace

std::optional<qint64> ResilienceReader::leadingTimestampMs(std::string_view line, size_t *length)
{
    const size_t start = timestampShapeStart(line);
    if (start == std::string_view::npos)
        return std::nullopt;
    size_t pos = start + 19;
    if (pos < line.size() && (line[pos] == '.' || line[pos] == ',')) {
        ++pos;
        while (pos < line.size() && isDigit(line[pos]))
            ++pos;
    }
    std::string token(line.substr(start, pos - start));
    const auto offsetAt = [&](size_t at) {
        // [+-]hh:mm or [+-]hhmm
        if (at >= line.size() || (line[at] != '+' && line[at] != '-'))
            return size_t(0);
        if (at + 6 <= line.size() && isDigit(line[at + 1]) && isDigit(line[at + 2]) &&
            line[at + 3] == ':' && isDigit(line[at + 4]) && isDigit(line[at + 5]))
            return size_t(6);
        if (at + 5 <= line.size() && isDigit(line[at + 1]) && isDigit(line[at + 2]) &&
            isDigit(line[at + 3]) && isDigit(line[at + 4]))
            return size_t(5);
        return size_t(0);
    };
    if (pos < line.size() && (line[pos] == 'Z' || line[pos] == 'z')) {
        token.push_back('Z');
        ++pos;
    } else if (const size_t n = offsetAt(pos)) {
        token.append(line.substr(pos, n));
        pos += n;
    } else if (pos < line.size() && line[pos] == ' ') {
        if (const size_t m = offsetAt(pos + 1)) { // Serilog: "2024-05-01 12:00:00.123 +02:00"
            token.append(line.substr(pos + 1, m));
            pos += 1 + m;
        }
    }
    if (start > 0 && pos < line.size() && line[pos] == ']')
        ++pos;
    const auto ms = parseRfc3339Ms(std::string_view(token));
    if (ms && length)
        *length = pos;
    return ms;
}

bool ResilienceReader::looksLikeResilienceLine(std::string_view line)
{
    return line.find("Resilience event occurred.") != std::string_view::npos ||
           line.find("Execution attempt. Source: '") != std::string_view::npos ||
           (line.find("CircuitBreaker '") != std::string_view::npos &&
            line.find("' changed state from ") != std::string_view::npos) ||
           ((line.find("50009") != std::string_view::npos ||
             line.find("ServerBusy") != std::string_view::npos) &&
            line.find("ServiceBus") != std::string_view::npos) ||
           line.find("Retry-Attempt") != std::string_view::npos;
}

namespace {

// The exception Polly throws when its breaker refuses a call: the request was never sent.
bool refusedByBreaker(std::string_view exceptionType)
{
    return exceptionType.ends_with("BrokenCircuitException") ||
           exceptionType.ends_with("IsolatedCircuitException");
}

// Polly v8 telemetry: "Resilience event occurred. EventName: '...', Source: '...', ...".
void readPollyEvent(std::string_view line, RequestEvent &event)
{
    const auto name = quotedAfter(line, "EventName: '");
    const auto source = quotedAfter(line, "Source: '");
    const auto key = quotedAfter(line, "Operation Key: '");
    const auto outcome = quotedAfter(line, "Result: '");
    const std::string_view eventName = name.value_or(std::string_view());
    if (eventName == "OnCircuitOpened" || eventName == "OnCircuitClosed" ||
        eventName == "OnCircuitHalfOpened") {
        event.type = EventType::Breaker;
        event.breakerScope = scopeFromSource(source.value_or(std::string_view()));
        event.breakerState = eventName == "OnCircuitOpened"   ? QStringLiteral("open")
                             : eventName == "OnCircuitClosed" ? QStringLiteral("closed")
                                                              : QStringLiteral("half-open");
    } else {
        event.type = EventType::Annotation;
        event.text = u"Polly " + toQString(eventName) + u" in " +
                     scopeFromSource(source.value_or(std::string_view()));
        if (outcome && !outcome->empty())
            event.text += u" (result " + toQString(*outcome) + u')';
    }
    if (key)
        event.operationId = toQString(*key);
}

// Polly v8's "Execution attempt. Source: '...', Operation Key: '...', Result: '...', ...".
void readExecutionAttempt(std::string_view line, RequestEvent &event, QString &problem)
{
    const auto source = quotedAfter(line, "Source: '");
    const auto key = quotedAfter(line, "Operation Key: '");
    const std::string_view outcome = quotedAfter(line, "Result: '").value_or(std::string_view());
    event.status = statusFromResult(outcome);
    if (event.status == 0 && !outcome.empty()) {
        // An exception: "System.Net.Http.HttpRequestException: ..." -> its type.
        const size_t colon = outcome.find(':');
        event.errorCode = toQString(outcome.substr(0, colon));
        // The breaker refused the call before it was sent (BrokenCircuitException, and
        // IsolatedCircuitException for a breaker held open by hand).
        event.refusedByClientBreaker = refusedByBreaker(outcome.substr(0, colon));
    }
    if (auto attempt = quotedAfter(line, "Attempt: '")) {
        if (auto n = ingest::parseNumber(*attempt)) {
            if (auto value = limits::toBoundedInt(*n, 0, limits::kMaxAttempt))
                event.attempt = *value;
            else
                problem = limits::outOfRangeReason(u"Attempt", *n, 0, limits::kMaxAttempt);
        }
    }
    const size_t timeAt = line.find("Execution Time: ");
    if (timeAt != std::string_view::npos) {
        std::string_view rest = line.substr(timeAt + 16);
        const size_t ms = rest.find("ms");
        if (auto n = ingest::parseNumber(rest.substr(0, ms))) {
            if (limits::inRange(*n, 0, limits::kMaxDurationMs))
                event.durationMs = *n;
            else
                problem =
                    limits::outOfRangeReason(u"Execution Time (ms)", *n, 0, limits::kMaxDurationMs);
        }
    }
    if (key)
        event.operationId = toQString(*key);
    if (source) {
        ingest::ExtraJsonWriter extra;
        extra.addString("pollySource", *source);
        event.extraJson = extra.take();
    }
}

// Resilience4j: "CircuitBreaker 'name' changed state from CLOSED to OPEN" (`at`: where
// "CircuitBreaker '" starts). An unknown state sets `problem`.
void readResilience4j(std::string_view line, size_t at, RequestEvent &event, QString &problem)
{
    const size_t nameBegin = at + 16;
    const size_t nameEnd = line.find('\'', nameBegin);
    const size_t to = line.find(" to ", nameEnd);
    std::string_view target =
        to == std::string_view::npos ? std::string_view() : line.substr(to + 4);
    const size_t targetEnd = target.find_first_of(" .,;\r\t");
    target = target.substr(0, targetEnd);
    const auto state = resilience4jState(target);
    if (!state) {
        problem = u"unknown circuit breaker state " + redact::quoteMasked(toQString(target));
        return;
    }
    event.type = EventType::Breaker;
    event.breakerScope = toQString(line.substr(nameBegin, nameEnd - nameBegin));
    event.breakerState = *state;
}

// An Azure Service Bus SDK exception line.
void readServiceBus(std::string_view line, size_t timestampLength, RequestEvent &event)
{
    const bool throttled = line.find("50009") != std::string_view::npos ||
                           line.find("throttled") != std::string_view::npos;
    event.status = throttled ? 429 : 503;
    event.errorCode = throttled ? QStringLiteral("50009") : QStringLiteral("ServerBusy");
    event.service = QStringLiteral("servicebus");
    if (line.find("Send") != std::string_view::npos)
        event.method = QStringLiteral("Send");
    else if (line.find("Receiv") != std::string_view::npos)
        event.method = QStringLiteral("Receive");
    serviceBusPlace(line, event);
    event.body = ingest::bodyText(ingest::trimmed(line.substr(timestampLength)));
}

// A Microsoft Graph SDK request log line with a Retry-Attempt header.
void readGraphSdk(std::string_view line, RequestEvent &event)
{
    event.attempt = numberAfter(line, "Retry-Attempt").value_or(-1);
    const size_t url = line.find("https://");
    const size_t anyUrl = url != std::string_view::npos ? url : line.find("http://");
    if (anyUrl != std::string_view::npos) {
        const size_t end = line.find_first_of(" \"'\t,", anyUrl);
        event.url = toQString(line.substr(
            anyUrl, end == std::string_view::npos ? std::string_view::npos : end - anyUrl));
        // The method is the word right before the URL when it is one.
        size_t wordEnd = anyUrl;
        while (wordEnd > 0 && line[wordEnd - 1] == ' ')
            --wordEnd;
        size_t wordBegin = wordEnd;
        while (wordBegin > 0 && std::isupper(static_cast<unsigned char>(line[wordBegin - 1])))
            --wordBegin;
        if (wordEnd - wordBegin >= 3 && wordEnd - wordBegin <= 7)
            event.method = toQString(line.substr(wordBegin, wordEnd - wordBegin));
    }
    if (auto status = numberAfter(line, "StatusCode"))
        event.status = *status;
    else if (auto plain = numberAfter(line, "Status"))
        event.status = *plain;
}

// The event of a line that matches one of the patterns (false: ordinary log noise); a value
// out of range or an unknown state sets `problem`.
bool readLine(std::string_view line, size_t timestampLength, RequestEvent &event, QString &problem)
{
    if (line.find("Resilience event occurred.") != std::string_view::npos) {
        readPollyEvent(line, event);
    } else if (line.find("Execution attempt. Source: '") != std::string_view::npos) {
        readExecutionAttempt(line, event, problem);
    } else if (const size_t at = line.find("CircuitBreaker '");
               at != std::string_view::npos &&
               line.find("' changed state from ", at) != std::string_view::npos) {
        readResilience4j(line, at, event, problem);
    } else if (((line.find("50009") != std::string_view::npos ||
                 line.find("ServerBusy") != std::string_view::npos ||
                 line.find("server-busy") != std::string_view::npos) &&
                (line.find("ServiceBus") != std::string_view::npos ||
                 line.find("servicebus") != std::string_view::npos ||
                 line.find("server-busy") != std::string_view::npos))) {
        readServiceBus(line, timestampLength, event);
    } else if (line.find("Retry-Attempt") != std::string_view::npos) {
        readGraphSdk(line, event);
    } else {
        return false;
    }
    return true;
}

} // namespace

ReadResult ResilienceReader::read(QIODevice &input, const QString &sourceName, IngestSink &sink,
                                  const ReadControl &control)
{
    ReadResult result;
    if (control.startOffset > 0 && !input.isSequential() && !input.seek(control.startOffset)) {
        result.fatalError = sourceName + QStringLiteral(": cannot seek to the resume offset");
        return result;
    }
    ingest::LineSource lines(input, control);
    ingest::CountingSink counted(sink);
    std::optional<qint64> lastTimestamp;
    std::string_view line;
    while (lines.next(line)) {
        size_t timestampLength = 0;
        const auto own = leadingTimestampMs(line, &timestampLength);
        if (own)
            lastTimestamp = own;
        RequestEvent event;
        // A value out of range: the line is malformed, with this reason. So is an event whose
        // own timestamp is not a real instant ("2026-02-30 ..."): it must not borrow the time
        // of the line before.
        QString problem;
        if (!own && timestampShapeStart(line) != std::string_view::npos)
            problem = QStringLiteral("the line's timestamp is not a valid date and time");
        if (!readLine(line, timestampLength, event, problem)) {
            lines.checkpoint();
            continue;
        }
        if (!lastTimestamp || !problem.isEmpty()) {
            counted.onMalformed(redact::malformedRecord(
                sourceName, lines.lineNumber(),
                !problem.isEmpty() ? problem
                                   : QStringLiteral("resilience event without a timestamp (no "
                                                    "timestamped line before it)")));
            lines.checkpoint();
            continue;
        }
        event.tsMs = *lastTimestamp;
        event.source = sourceName;
        event.line = lines.lineNumber();
        event.offset = lines.lineOffset();
        ingest::finishEvent(event);
        counted.onEvent(std::move(event));
        lines.checkpoint();
    }
    result.events = counted.events;
    result.malformed = counted.malformed;
    result.bytesRead = lines.bytesRead();
    result.endOffset = lines.offsetAfter();
    result.endLine = lines.lineNumber();
    result.cancelled = lines.cancelled();
    if (!lines.readError().isEmpty())
        result.fatalError = sourceName + u": read error: " + lines.readError();
    if (control.progress)
        control.progress(result.bytesRead, input.isSequential() ? -1 : input.size());
    return result;
}

} // namespace ts
