#pragma once
// Pieces every importer shares: a chunked line source over a QIODevice (bounded memory, progress,
// cancellation, checkpoints), the "finish an event" step (identity from the JWT, then redaction),
// the choice of which response headers are worth keeping, and the timestamp dialects found in
// operators' logs that RFC 3339 alone does not cover.

#include "core/valuelimits.h"
#include "ingest/ingest.h"
#include "ingest/redaction.h"

#include <QByteArray>
#include <QString>
#include <QStringView>

#include <optional>
#include <string_view>

namespace ts::ingest {

// UTF-8 to QString; ASCII (URLs, ids, most bodies) is widened without Qt's decoder.
QString toQString(std::string_view text);

// Reads a device line by line through one large buffer, so a file of any size is read with
// constant memory (the longest line is the only thing that can grow the buffer). Lines come
// back without their terminator ("\n" or "\r\n"); a final line without "\n" is returned too.
class LineSource
{
public:
    LineSource(QIODevice &device, const ReadControl &control);

    // False at the end of input (or when cancelled: check cancelled()).
    bool next(std::string_view &line);

    [[nodiscard]] qint64 lineNumber() const { return m_lineNumber; }   // of the last line returned
    [[nodiscard]] qint64 lineOffset() const { return m_lineOffset; }   // its first byte
    [[nodiscard]] qint64 offsetAfter() const { return m_offsetAfter; } // just past its terminator
    [[nodiscard]] qint64 bytesRead() const { return m_bytesRead; }
    [[nodiscard]] bool cancelled() const { return m_cancelled; }
    [[nodiscard]] QString readError() const { return m_readError; }
    // Tells the control where a caller may resume: after the line last returned.
    void checkpoint() const;

private:
    bool fill();

    QIODevice &m_device;
    const ReadControl &m_control;
    QByteArray m_buffer;
    qsizetype m_begin = 0;     // first unconsumed byte in m_buffer
    qint64 m_bufferOffset = 0; // file offset of m_buffer[0]
    qint64 m_lineNumber = 0;
    qint64 m_lineOffset = 0;
    qint64 m_offsetAfter = 0;
    qint64 m_bytesRead = 0;
    qint64 m_total = -1;
    qint64 m_chunkSize = 0;
    qint64 m_lastProgress = 0;
    quint32 m_linesSinceCancelCheck = 0;
    bool m_eof = false;
    bool m_cancelled = false;
    QString m_readError;
};

// Reports progress, fills a ReadResult's counters and forwards events: every reader funnels its
// output through one of these so counts and the final ReadResult are computed the same way.
// An event with a value outside core/valuelimits.h's ranges leaves as a malformed record at its
// line instead (readers check their fields with a precise reason first; this is the backstop).
class CountingSink final : public IngestSink
{
public:
    explicit CountingSink(IngestSink &target) : m_target(target) {}
    void onEvent(RequestEvent &&event) override
    {
        if (QString problem = limits::eventValueProblem(event); !problem.isEmpty()) {
            onMalformed(redact::malformedRecord(event.source, event.line, std::move(problem)));
            return;
        }
        ++events;
        m_target.onEvent(std::move(event));
    }
    void onMalformed(MalformedRecord &&record) override
    {
        ++malformed;
        m_target.onMalformed(std::move(record));
    }
    qint64 events = 0;
    qint64 malformed = 0;

private:
    IngestSink &m_target;
};

// The last step before an event leaves a reader: take identity (user, app, tenant) from an
// "Authorization: Bearer <JWT>" value when one was seen, then strip every secret (ts::redact).
// The authorization value itself is never stored.
void finishEvent(RequestEvent &event, QStringView authorization = {});

// Identity from bearer tokens, decoded once per distinct token: a capture repeats the same
// token on thousands of requests, and decoding (base64 + JSON) costs microseconds each time.
// Fills identity (user, else object id), app and tenant, each only when still empty.
class BearerIdentityCache
{
public:
    void apply(RequestEvent &event, const QString &authorization);

private:
    QString m_lastAuthorization;
    QString m_identity;
    QString m_app;
    QString m_tenant;
};

// Whether a response header is worth keeping on an event: throttle and rate-limit dialects,
// Retry-After variants, request ids, Azure diagnostics. Everything else (caching, content,
// security headers) is dropped so that captures of hundreds of MB stay small in memory.
// Names in any case.
bool isHeaderOfInterest(QStringView name);
bool isHeaderOfInterest(std::string_view name);
// Request ids carried by response (or request) headers. Names in any case.
bool isRequestIdHeader(QStringView name);
bool isRequestIdHeader(std::string_view name);

// Apache/nginx $time_local: "17/May/2015:10:05:03 +0000" (without the brackets).
std::optional<qint64> parseClfTimeMs(std::string_view text);
// US-style dates as Azure portals and .NET write them: "9/28/2016 8:40:06 PM +00:00",
// "2/18/2026, 10:44:09.512 PM", "1/1/2021 20:40:06" (no offset = UTC).
std::optional<qint64> parseUsDateTimeMs(std::string_view text);
// Any timestamp an export may carry: RFC 3339, US style, CLF, or a Unix number (ms, or seconds
// with a fraction below 10^11).
std::optional<qint64> parseAnyTimestampMs(std::string_view text);

// Response bodies are kept for failed requests only (error codes, "wait N seconds"), and cut to
// this many bytes: enough for every error document seen in the wild.
constexpr qsizetype kMaxBodyBytes = 64 * 1024;
// A body as kept on an event: UTF-8 decoded, cut at kMaxBodyBytes on a character boundary.
QString bodyText(std::string_view utf8);
// Whether a status means the body is worth keeping (4xx, 5xx, or no response at all).
inline bool keepsBody(int status)
{
    return status >= 400 || status == 0;
}

// Parses a non-negative decimal number (duration, status); nullopt when the text is not one.
std::optional<double> parseNumber(std::string_view text);

std::string_view trimmed(std::string_view text);

// Builds a compact JSON object ("{...}") for RequestEvent::extraJson without a DOM: readers
// call it per record, so it appends escaped bytes straight into one buffer.
class ExtraJsonWriter
{
public:
    void addString(std::string_view key, std::string_view utf8Value);
    void addString(std::string_view key, const QString &value);
    // value must already be valid JSON (a number, an object from the source...).
    void addRaw(std::string_view key, std::string_view json);
    [[nodiscard]] bool isEmpty() const { return m_json.isEmpty(); }
    // The object, and the writer is empty again.
    QByteArray take();

private:
    void appendKey(std::string_view key);
    QByteArray m_json;
};

void appendJsonEscaped(QByteArray &out, std::string_view utf8);

} // namespace ts::ingest
