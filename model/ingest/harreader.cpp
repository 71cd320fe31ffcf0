#include "harreader.h"

#include "core/timeparse.h"
#include "ingest/graphbatch.h"
#include "ingest/jsonscanner.h"
#include "ingest/readerutil.h"
#include "ingest/redaction.h"

#include <QIODevice>
#include <QJsonDocument>
#include <QJsonObject>

#include <simdjson.h>

namespace ts {

namespace {

std::string_view stringOf(simdjson::dom::element element)
{
    std::string_view text;
    if (element.get_string().get(text) == simdjson::SUCCESS)
        return text;
    return {};
}

std::string_view stringField(simdjson::dom::object object, std::string_view key)
{
    simdjson::dom::element value;
    if (object[key].get(value) != simdjson::SUCCESS)
        return {};
    return stringOf(value);
}

std::optional<double> numberField(simdjson::dom::object object, std::string_view key)
{
    simdjson::dom::element value;
    if (object[key].get(value) != simdjson::SUCCESS)
        return std::nullopt;
    double number = 0;
    if (value.get_double().get(number) == simdjson::SUCCESS)
        return number;
    // Some exporters write numbers as strings.
    return ingest::parseNumber(stringOf(value));
}

} // namespace

struct HarReader::Impl
{
    simdjson::dom::parser parser;
    // Reused between entries: the texts an entry needs after its parse tape is reused.
    std::string batchRequest;
    std::string batchResponse;
    QList<RequestEvent> batchEvents;
    ingest::BearerIdentityCache identities;

    // Maps one entry; false (with a reason) when it cannot become an event.
    bool mapEntry(simdjson::dom::object entry, RequestEvent &event, QString &authorization,
                  QString &reason);
};

bool HarReader::Impl::mapEntry(simdjson::dom::object entry, RequestEvent &event,
                               QString &authorization, QString &reason)
{
    batchRequest.clear();
    batchResponse.clear();

    const std::string_view started = stringField(entry, "startedDateTime");
    const auto tsMs = parseRfc3339Ms(started);
    if (!tsMs) {
        reason = started.empty() ? QStringLiteral("no startedDateTime")
                                 : u"invalid startedDateTime " +
                                       redact::quoteMasked(ingest::toQString(started));
        return false;
    }
    event.tsMs = *tsMs;
    if (const auto time = numberField(entry, "time"); time && *time >= 0) {
        if (!limits::inRange(*time, 0, limits::kMaxDurationMs)) {
            reason = limits::outOfRangeReason(u"time (ms)", *time, 0, limits::kMaxDurationMs);
            return false;
        }
        event.durationMs = *time;
    }

    simdjson::dom::object request;
    if (entry["request"].get_object().get(request) != simdjson::SUCCESS) {
        reason = QStringLiteral("no request object");
        return false;
    }
    event.method = ingest::toQString(stringField(request, "method"));
    event.url = ingest::toQString(stringField(request, "url"));
    if (event.url.isEmpty()) {
        reason = QStringLiteral("request has no url");
        return false;
    }
    QString clientRequestId;
    simdjson::dom::array requestHeaders;
    if (request["headers"].get_array().get(requestHeaders) == simdjson::SUCCESS) {
        for (simdjson::dom::element header : requestHeaders) {
            simdjson::dom::object fields;
            if (header.get_object().get(fields) != simdjson::SUCCESS)
                continue;
            const std::string_view name = stringField(fields, "name");
            // Only three request headers matter; compare without building strings for the rest.
            if (name.size() == 13 && strncasecmp(name.data(), "authorization", 13) == 0) {
                authorization = ingest::toQString(stringField(fields, "value"));
            } else if (name.size() == 13 && strncasecmp(name.data(), "retry-attempt", 13) == 0) {
                if (auto n = ingest::parseNumber(stringField(fields, "value"))) {
                    const auto attempt = limits::toBoundedInt(*n, 0, limits::kMaxAttempt);
                    if (!attempt) {
                        reason =
                            limits::outOfRangeReason(u"Retry-Attempt", *n, 0, limits::kMaxAttempt);
                        return false;
                    }
                    event.attempt = *attempt;
                }
            } else if ((name.size() == 17 &&
                        strncasecmp(name.data(), "client-request-id", 17) == 0) ||
                       (name.size() == 22 &&
                        strncasecmp(name.data(), "x-ms-client-request-id", 22) == 0)) {
                clientRequestId = ingest::toQString(stringField(fields, "value"));
            }
        }
    }
    if (ingest::isGraphBatchRequest(event.method, event.url)) {
        simdjson::dom::object postData;
        if (request["postData"].get_object().get(postData) == simdjson::SUCCESS)
            batchRequest = stringField(postData, "text");
    }

    QJsonObject extra;
    simdjson::dom::object response;
    const bool hasResponse = entry["response"].get_object().get(response) == simdjson::SUCCESS;
    if (hasResponse) {
        if (const auto status = numberField(response, "status"); status && *status > 0) {
            const auto value = limits::toBoundedInt(*status, 0, limits::kMaxStatus);
            if (!value) {
                reason =
                    limits::outOfRangeReason(u"response status", *status, 0, limits::kMaxStatus);
                return false;
            }
            event.status = *value;
        }
        simdjson::dom::array headers;
        if (response["headers"].get_array().get(headers) == simdjson::SUCCESS) {
            for (simdjson::dom::element header : headers) {
                simdjson::dom::object fields;
                if (header.get_object().get(fields) != simdjson::SUCCESS)
                    continue;
                // Decide on the raw bytes: only kept headers are turned into QStrings.
                const std::string_view rawName = stringField(fields, "name");
                const bool requestId =
                    event.requestId.isEmpty() && ingest::isRequestIdHeader(rawName);
                if (!requestId && !ingest::isHeaderOfInterest(rawName))
                    continue;
                const QString name = ingest::toQString(rawName).toLower();
                const QString value = ingest::toQString(stringField(fields, "value"));
                if (name == u"retry-after")
                    event.retryAfter = value;
                if (requestId)
                    event.requestId = value;
                if (ingest::isHeaderOfInterest(rawName))
                    event.headers.set(name, value);
            }
        }
        simdjson::dom::object content;
        if (response["content"].get_object().get(content) == simdjson::SUCCESS) {
            const std::string_view text = stringField(content, "text");
            const bool base64 = stringField(content, "encoding") == "base64";
            const bool batch = ingest::isGraphBatchRequest(event.method, event.url);
            if (!text.empty() && (batch || ingest::keepsBody(event.status))) {
                std::string_view decoded = text;
                QByteArray bytes;
                if (base64) {
                    bytes = QByteArray::fromBase64(
                        QByteArray::fromRawData(text.data(), static_cast<qsizetype>(text.size())));
                    decoded =
                        std::string_view(bytes.constData(), static_cast<size_t>(bytes.size()));
                }
                if (batch)
                    batchResponse = decoded;
                if (ingest::keepsBody(event.status))
                    event.body = ingest::bodyText(decoded);
            }
        }
        const std::string_view error = stringField(response, "_error");
        if (!error.empty())
            extra.insert(QStringLiteral("_error"), ingest::toQString(error));
    }
    if (const std::string_view error = stringField(entry, "_error"); !error.empty())
        extra.insert(QStringLiteral("_error"), ingest::toQString(error));
    if (event.requestId.isEmpty())
        event.requestId = clientRequestId;
    simdjson::dom::array messages;
    if (entry["_webSocketMessages"].get_array().get(messages) == simdjson::SUCCESS)
        extra.insert(QStringLiteral("webSocketMessages"), static_cast<qint64>(messages.size()));
    if (!hasResponse)
        extra.insert(QStringLiteral("noResponse"), true);
    if (!extra.isEmpty())
        event.extraJson = QJsonDocument(extra).toJson(QJsonDocument::Compact);
    return true;
}

HarReader::HarReader() : d(std::make_unique<Impl>()) {}
HarReader::~HarReader() = default;

ReadResult HarReader::read(QIODevice &input, const QString &sourceName, IngestSink &sink,
                           const ReadControl &control)
{
    ReadResult result;
    ingest::CountingSink counted(sink);
    ingest::JsonStreamScanner scan(input, control);
    std::string key;
    qint64 entryNumber = 0;
    bool sawLog = false;
    bool sawEntries = false;

    const auto finish = [&](const QString &fatal) {
        ingest::finishScan(result, counted, scan, sourceName, fatal);
        if (control.progress)
            control.progress(result.bytesRead, input.isSequential() ? -1 : input.size());
        return result;
    };
    const auto corrupt = [&](const char *expected) {
        return QStringLiteral("corrupt HAR at byte %1 (line %2): expected %3")
            .arg(scan.offset())
            .arg(scan.lineAt(scan.pos()))
            .arg(QLatin1StringView(expected));
    };

    // A UTF-8 byte order mark (Fiddler, some Windows tools).
    if (scan.ensure() && static_cast<unsigned char>(scan.current()) == 0xEF) {
        for (int i = 0; i < 3 && scan.ensure(); ++i)
            scan.advance();
    }
    if (!scan.skipWhitespace())
        return finish(QStringLiteral("empty file, not a HAR capture"));
    if (scan.current() != '{')
        return finish(QStringLiteral("not a HAR capture (not a JSON object)"));
    scan.advance();

    // Iterates the members of the object just opened; onMember consumes each value.
    const auto forEachMember = [&](auto &&onMember) -> QString {
        if (!scan.skipWhitespace())
            return corrupt("a member or '}'");
        if (scan.current() == '}') {
            scan.advance();
            return {};
        }
        for (;;) {
            if (!scan.skipWhitespace() || scan.current() != '"')
                return corrupt("a member name");
            if (!scan.readKey(key))
                return corrupt("the end of a member name");
            if (!scan.skipWhitespace() || scan.current() != ':')
                return corrupt("':'");
            scan.advance();
            if (!scan.skipWhitespace())
                return corrupt("a value");
            if (QString error = onMember(); !error.isEmpty())
                return error;
            if (!scan.skipWhitespace())
                return corrupt("',' or '}'");
            if (scan.current() == ',') {
                scan.advance();
                continue;
            }
            if (scan.current() == '}') {
                scan.advance();
                return {};
            }
            return corrupt("',' or '}'");
        }
    };

    const auto readEntries = [&]() -> QString {
        scan.advance(); // '['
        if (!scan.skipWhitespace())
            return corrupt("an entry or ']'");
        if (scan.current() == ']') {
            scan.advance();
            return {};
        }
        for (;;) {
            if (control.cancel && control.cancel->load(std::memory_order_relaxed)) {
                result.cancelled = true;
                return {};
            }
            if (!scan.skipWhitespace())
                return corrupt("an entry");
            ++entryNumber;
            const size_t start = scan.pos();
            const qint64 line = scan.lineAt(start);
            const qint64 entryOffset = scan.offsetOf(start);
            if (scan.current() != '{') {
                if (!scan.skipValue())
                    return corrupt("an entry");
                counted.onMalformed(redact::malformedRecord(
                    sourceName, line, QStringLiteral("entry %1: not an object").arg(entryNumber)));
            } else {
                scan.pin(start);
                if (!scan.skipContainer())
                    return corrupt("the end of an entry");
                const size_t begin = scan.pinned(); // moved if the buffer was refilled
                const size_t length = scan.pos() - begin;
                RequestEvent event;
                event.source = sourceName;
                event.line = line;
                event.offset = entryOffset;
                QString authorization;
                QString reason;
                simdjson::dom::element element;
                simdjson::dom::object entry;
                if (const auto error =
                        d->parser.parse(scan.data() + begin, length, false).get(element);
                    error != simdjson::SUCCESS) {
                    reason =
                        u"not valid JSON: " + QLatin1StringView(simdjson::error_message(error));
                } else if (element.get_object().get(entry) != simdjson::SUCCESS) {
                    reason = QStringLiteral("not an object");
                } else {
                    d->mapEntry(entry, event, authorization, reason);
                }
                scan.unpin();
                if (!reason.isEmpty()) {
                    counted.onMalformed(redact::malformedRecord(
                        sourceName, line, QStringLiteral("entry %1: ").arg(entryNumber) + reason));
                } else {
                    d->identities.apply(event, authorization);
                    d->batchEvents.clear();
                    if (!d->batchResponse.empty() &&
                        ingest::explodeGraphBatch(event, d->batchRequest, d->batchResponse,
                                                  d->batchEvents)) {
                        event.batchEnvelope = true;
                    }
                    redact::redactEvent(event);
                    counted.onEvent(std::move(event));
                    for (RequestEvent &sub : d->batchEvents) {
                        redact::redactEvent(sub);
                        counted.onEvent(std::move(sub));
                    }
                }
            }
            if (!scan.skipWhitespace())
                return corrupt("',' or ']'");
            if (scan.current() == ',') {
                scan.advance();
                continue;
            }
            if (scan.current() == ']') {
                scan.advance();
                return {};
            }
            return corrupt("',' or ']'");
        }
    };

    const auto readLog = [&]() -> QString {
        return forEachMember([&]() -> QString {
            if (key == "entries" && !sawEntries) {
                if (scan.current() != '[')
                    return QStringLiteral("not a HAR capture (log.entries is not an array)");
                sawEntries = true;
                return readEntries();
            }
            if (!scan.skipValue())
                return corrupt("a value");
            return {};
        });
    };

    const QString error = forEachMember([&]() -> QString {
        if (key == "log" && !sawLog) {
            if (scan.current() != '{')
                return QStringLiteral("not a HAR capture (log is not an object)");
            sawLog = true;
            scan.advance();
            return readLog();
        }
        if (!scan.skipValue())
            return corrupt("a value");
        return {};
    });
    if (result.cancelled)
        return finish({});
    if (!error.isEmpty()) {
        if (!sawEntries)
            return finish(error.startsWith(u"not a HAR") ? error : u"not a HAR capture: " + error);
        return finish(error + QStringLiteral(" (after %1 entries)").arg(entryNumber));
    }
    if (!sawLog)
        return finish(QStringLiteral("not a HAR capture (no \"log\" object at the top level)"));
    if (!sawEntries)
        return finish(QStringLiteral("not a HAR capture (log has no \"entries\" array)"));
    if (scan.skipWhitespace())
        return finish(corrupt("the end of the file after the HAR object"));
    return finish({});
}

} // namespace ts
