#include "otlpreader.h"

#include "ingest/jsonscanner.h"
#include "ingest/readerutil.h"
#include "ingest/redaction.h"

#include <QIODevice>

#include <simdjson.h>

#include <charconv>
#include <string>
#include <vector>

namespace ts {

namespace {

using ingest::toQString;

struct Attribute
{
    std::string_view key;
    std::string value; // rendered as text; arrays joined with ", "
};

void renderAnyValue(simdjson::dom::element anyValue, std::string &out)
{
    simdjson::dom::object object;
    if (anyValue.get_object().get(object) != simdjson::SUCCESS)
        return;
    for (auto field : object) {
        const std::string_view kind = field.key;
        if (kind == "stringValue") {
            std::string_view text;
            if (field.value.get_string().get(text) == simdjson::SUCCESS)
                out.append(text);
        } else if (kind == "intValue" || kind == "doubleValue") {
            // int64 is a string in OTLP/JSON, but producers write numbers too.
            std::string_view text;
            if (field.value.get_string().get(text) == simdjson::SUCCESS)
                out.append(text);
            else
                out.append(simdjson::minify(field.value));
        } else if (kind == "boolValue") {
            bool flag = false;
            if (field.value.get_bool().get(flag) == simdjson::SUCCESS)
                out.append(flag ? "true" : "false");
        } else if (kind == "arrayValue") {
            simdjson::dom::array values;
            if (field.value["values"].get_array().get(values) == simdjson::SUCCESS) {
                bool first = true;
                for (simdjson::dom::element item : values) {
                    if (!first)
                        out.append(", ");
                    first = false;
                    renderAnyValue(item, out);
                }
            }
        }
    }
}

void collectAttributes(simdjson::dom::element owner, std::vector<Attribute> &out)
{
    simdjson::dom::array attributes;
    if (owner["attributes"].get_array().get(attributes) != simdjson::SUCCESS)
        return;
    for (simdjson::dom::element attribute : attributes) {
        std::string_view key;
        if (attribute["key"].get_string().get(key) != simdjson::SUCCESS)
            continue;
        Attribute item{key, {}};
        simdjson::dom::element value;
        if (attribute["value"].get(value) == simdjson::SUCCESS)
            renderAnyValue(value, item.value);
        out.push_back(std::move(item));
    }
}

const std::string *find(const std::vector<Attribute> &attributes, std::string_view key)
{
    for (const Attribute &attribute : attributes) {
        if (attribute.key == key)
            return &attribute.value;
    }
    return nullptr;
}

// Nanoseconds since the epoch, as a string ("1544712660000000000") or a number.
std::optional<quint64> nanosOf(simdjson::dom::element span, std::string_view key)
{
    simdjson::dom::element value;
    if (span[key].get(value) != simdjson::SUCCESS)
        return std::nullopt;
    std::string_view text;
    if (value.get_string().get(text) == simdjson::SUCCESS) {
        quint64 nanos = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), nanos);
        if (ec != std::errc() || end != text.data() + text.size())
            return std::nullopt;
        return nanos;
    }
    uint64_t number = 0;
    if (value.get_uint64().get(number) == simdjson::SUCCESS)
        return number;
    double real = 0;
    // Only doubles that fit: converting 1e300 to an integer has no defined result.
    if (value.get_double().get(real) == simdjson::SUCCESS && real >= 0 && real < 1.8e19)
        return static_cast<quint64>(real);
    return std::nullopt;
}

// Span kind as a number (OTLP/JSON allows the enum name too).
int kindOf(simdjson::dom::element span)
{
    simdjson::dom::element kind;
    if (span["kind"].get(kind) != simdjson::SUCCESS)
        return 0;
    int64_t number = 0;
    if (kind.get_int64().get(number) == simdjson::SUCCESS)
        return number >= 0 && number <= 5 ? static_cast<int>(number) : 0;
    std::string_view name;
    if (kind.get_string().get(name) == simdjson::SUCCESS) {
        static constexpr std::string_view kNames[] = {
            "SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER",
            "SPAN_KIND_CLIENT",      "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER"};
        for (int i = 0; i < 6; ++i) {
            if (name == kNames[i])
                return i;
        }
    }
    return 0;
}

int statusCodeOf(simdjson::dom::element span)
{
    simdjson::dom::element code;
    if (span["status"]["code"].get(code) != simdjson::SUCCESS)
        return 0;
    int64_t number = 0;
    if (code.get_int64().get(number) == simdjson::SUCCESS)
        return number >= 0 && number <= 2 ? static_cast<int>(number) : 0;
    std::string_view name;
    if (code.get_string().get(name) == simdjson::SUCCESS)
        return name == "STATUS_CODE_ERROR" ? 2 : name == "STATUS_CODE_OK" ? 1 : 0;
    return 0;
}

bool startsWith(std::string_view text, std::string_view prefix)
{
    return text.size() >= prefix.size() && text.substr(0, prefix.size()) == prefix;
}

QString headerName(std::string_view suffix)
{
    QString name = toQString(suffix).toLower();
    name.replace(u'_', u'-');
    return name;
}

void mapSpan(simdjson::dom::element span, const std::vector<Attribute> &resource,
             std::vector<Attribute> &attributes, const QString &source, qint64 line, qint64 offset,
             ingest::CountingSink &sink)
{
    attributes.clear();
    collectAttributes(span, attributes);
    const int kind = kindOf(span);
    const auto attr = [&](std::string_view key) -> const std::string * {
        if (const std::string *value = find(attributes, key))
            return value;
        return find(resource, key);
    };
    const std::string *method = attr("http.request.method");
    if (!method)
        method = attr("http.method");
    const std::string *status = attr("http.response.status_code");
    if (!status)
        status = attr("http.status_code");
    const std::string *urlFull = attr("url.full");
    if (!urlFull)
        urlFull = attr("http.url");
    const bool http = method || status || urlFull;
    if (!http && (kind < 2 || kind > 5))
        return;

    std::string_view name;
    if (span["name"].get_string().get(name) != simdjson::SUCCESS)
        name = {};
    const auto start = nanosOf(span, "startTimeUnixNano");
    if (!start) {
        sink.onMalformed(redact::malformedRecord(source, line,
                                                 u"span " + redact::quoteMasked(toQString(name)) +
                                                     u" has no startTimeUnixNano"));
        return;
    }
    RequestEvent event;
    event.source = source;
    event.line = line;
    event.offset = offset;
    event.tsMs = static_cast<qint64>(*start / 1000000);
    if (const auto end = nanosOf(span, "endTimeUnixNano"); end && *end >= *start)
        event.durationMs = static_cast<double>(*end - *start) / 1e6;
    event.method = method ? toQString(*method) : toQString(name);

    if (urlFull) {
        event.url = toQString(*urlFull);
    } else {
        const std::string *host = attr("server.address");
        const std::string *path = attr("url.path");
        const std::string *scheme = attr("url.scheme");
        if (!host)
            host = attr("http.host");
        if (!path)
            path = attr("http.target");
        if (!scheme)
            scheme = attr("http.scheme");
        if (host || path) {
            QString url;
            if (host) {
                url = (scheme ? toQString(*scheme) : QStringLiteral("https")) + u"://" +
                      toQString(*host);
                if (const std::string *port = attr("server.port"))
                    url += u':' + toQString(*port);
            }
            if (path)
                url += toQString(*path);
            if (const std::string *query = attr("url.query"); query && !query->empty())
                url += u'?' + toQString(*query);
            event.url = url;
        }
    }
    // A value out of range makes the span malformed, with this reason.
    QString problem;
    if (status) {
        if (auto n = ingest::parseNumber(*status)) {
            if (auto value = limits::toBoundedInt(*n, 0, limits::kMaxStatus))
                event.status = *value;
            else
                problem = limits::outOfRangeReason(u"http.response.status_code", *n, 0,
                                                   limits::kMaxStatus);
        }
    } else {
        event.status = statusCodeOf(span) == 2 ? 0 : 200;
    }
    if (const std::string *errorType = attr("error.type"); errorType && event.status == 0)
        event.errorCode = toQString(*errorType);

    if (const std::string *user = attr("enduser.id"))
        event.identity = toQString(*user);
    else if (const std::string *userId = attr("user.id"))
        event.identity = toQString(*userId);
    if (const std::string *service = find(resource, "service.name"))
        event.app = toQString(*service);

    QString authorization;
    for (const Attribute &attribute : attributes) {
        if (startsWith(attribute.key, "http.response.header.")) {
            const QString header = headerName(attribute.key.substr(21));
            if (header == u"retry-after")
                event.retryAfter = toQString(attribute.value);
            if (ingest::isHeaderOfInterest(header))
                event.headers.set(header, toQString(attribute.value));
            if (event.requestId.isEmpty() && ingest::isRequestIdHeader(header))
                event.requestId = toQString(attribute.value);
        } else if (startsWith(attribute.key, "http.request.header.")) {
            const QString header = headerName(attribute.key.substr(20));
            if (header == u"retry-attempt") {
                if (auto n = ingest::parseNumber(attribute.value)) {
                    if (auto value = limits::toBoundedInt(*n, 0, limits::kMaxAttempt))
                        event.attempt = *value;
                    else
                        problem =
                            limits::outOfRangeReason(u"retry-attempt", *n, 0, limits::kMaxAttempt);
                }
            } else if (header == u"authorization") {
                authorization = toQString(attribute.value);
            }
        }
    }

    // Messaging (Service Bus) spans.
    const std::string *system = attr("messaging.system");
    if (system && (*system == "servicebus" || *system == "azure_servicebus")) {
        event.service = QStringLiteral("servicebus");
        const std::string *destination = attr("messaging.destination.name");
        if (destination)
            event.entity = toQString(*destination);
        if (const std::string *host = attr("server.address")) {
            const QString namespaceHost = toQString(*host);
            event.serviceBusNamespace = namespaceHost.section(u'.', 0, 0);
        }
        if (const std::string *count = attr("messaging.batch.message_count")) {
            if (auto n = ingest::parseNumber(*count))
                event.credits = *n;
        }
        const std::string *operation = attr("messaging.operation.type");
        if (!operation)
            operation = attr("messaging.operation");
        if (operation && !method) {
            if (*operation == "publish" || *operation == "send")
                event.method = QStringLiteral("Send");
            else if (*operation == "receive")
                event.method = QStringLiteral("Receive");
            else if (*operation == "settle")
                event.method = QStringLiteral("Complete");
        }
    }

    std::string_view traceId;
    std::string_view spanId;
    if (span["traceId"].get_string().get(traceId) != simdjson::SUCCESS)
        traceId = {};
    if (span["spanId"].get_string().get(spanId) != simdjson::SUCCESS)
        spanId = {};
    event.operationId = toQString(traceId);
    if (event.requestId.isEmpty())
        event.requestId = toQString(spanId);
    ingest::ExtraJsonWriter extra;
    extra.addRaw("spanKind", std::to_string(kind));
    if (!name.empty())
        extra.addString("spanName", name);
    event.extraJson = extra.take();
    if (!problem.isEmpty()) {
        sink.onMalformed(redact::malformedRecord(
            source, line, u"span " + redact::quoteMasked(toQString(name)) + u": " + problem));
        return;
    }
    ingest::finishEvent(event, authorization);
    sink.onEvent(std::move(event));
}

// Maps one ExportTraceServiceRequest; false (with *error) when it is not one.
bool mapDocument(simdjson::dom::element document, const QString &source, qint64 line, qint64 offset,
                 ingest::CountingSink &sink, QString *error)
{
    simdjson::dom::array resourceSpans;
    if (document["resourceSpans"].get_array().get(resourceSpans) != simdjson::SUCCESS) {
        if (error)
            *error = QStringLiteral("not an OTLP/JSON trace request (no resourceSpans array)");
        return false;
    }
    std::vector<Attribute> resource;
    std::vector<Attribute> attributes;
    for (simdjson::dom::element resourceSpan : resourceSpans) {
        resource.clear();
        simdjson::dom::element resourceObject;
        if (resourceSpan["resource"].get(resourceObject) == simdjson::SUCCESS)
            collectAttributes(resourceObject, resource);
        simdjson::dom::array scopeSpans;
        // "instrumentationLibrarySpans" is the pre-1.0 name, still written by old exporters.
        if (resourceSpan["scopeSpans"].get_array().get(scopeSpans) != simdjson::SUCCESS &&
            resourceSpan["instrumentationLibrarySpans"].get_array().get(scopeSpans) !=
                simdjson::SUCCESS)
            continue;
        for (simdjson::dom::element scopeSpan : scopeSpans) {
            simdjson::dom::array spans;
            if (scopeSpan["spans"].get_array().get(spans) != simdjson::SUCCESS)
                continue;
            for (simdjson::dom::element span : spans)
                mapSpan(span, resource, attributes, source, line, offset, sink);
        }
    }
    return true;
}

} // namespace

bool parseOtlpJson(const QByteArray &body, const QString &source, IngestSink &sink, QString *error)
{
    simdjson::dom::parser parser;
    simdjson::dom::element document;
    const simdjson::padded_string padded(body.constData(), static_cast<size_t>(body.size()));
    if (const auto parseError = parser.parse(padded).get(document);
        parseError != simdjson::SUCCESS) {
        if (error)
            *error = u"not valid JSON: " + QLatin1StringView(simdjson::error_message(parseError));
        return false;
    }
    ingest::CountingSink counted(sink);
    return mapDocument(document, source, 1, 0, counted, error);
}

ReadResult OtlpReader::read(QIODevice &input, const QString &sourceName, IngestSink &sink,
                            const ReadControl &control)
{
    ReadResult result;
    ingest::CountingSink counted(sink);
    ingest::JsonStreamScanner scan(input, control);
    simdjson::dom::parser parser;
    qint64 documents = 0;
    QString fatal;

    if (scan.ensure() && static_cast<unsigned char>(scan.current()) == 0xEF) {
        for (int i = 0; i < 3 && scan.ensure(); ++i)
            scan.advance();
    }
    while (scan.skipWhitespace()) {
        if (control.cancel && control.cancel->load(std::memory_order_relaxed)) {
            result.cancelled = true;
            break;
        }
        const size_t start = scan.pos();
        const qint64 line = scan.lineAt(start);
        const qint64 offset = scan.offsetOf(start);
        if (scan.current() != '{') {
            // Not an object: skip to the end of the line and report it.
            counted.onMalformed(
                redact::malformedRecord(sourceName, line, QStringLiteral("not a JSON object")));
            while (scan.ensure() && scan.current() != '\n')
                scan.advance();
            continue;
        }
        scan.pin(start);
        if (!scan.skipContainer()) {
            fatal = QStringLiteral("unterminated JSON object starting at line %1").arg(line);
            break;
        }
        const size_t begin = scan.pinned();
        simdjson::dom::element document;
        QString reason;
        if (const auto error =
                parser.parse(scan.data() + begin, scan.pos() - begin, false).get(document);
            error != simdjson::SUCCESS) {
            reason = u"not valid JSON: " + QLatin1StringView(simdjson::error_message(error));
        } else {
            mapDocument(document, sourceName, line, offset, counted, &reason);
        }
        scan.unpin();
        ++documents;
        if (!reason.isEmpty())
            counted.onMalformed(redact::malformedRecord(sourceName, line, reason));
        if (control.checkpoint)
            control.checkpoint(scan.offset(), scan.lineAt(scan.pos()));
    }
    if (!ingest::finishScan(result, counted, scan, sourceName, fatal) && documents == 0 &&
        counted.malformed == 0 && !result.cancelled)
        result.fatalError = sourceName + QStringLiteral(": empty file, no OTLP/JSON request");
    if (control.progress)
        control.progress(result.bytesRead, input.isSequential() ? -1 : input.size());
    return result;
}

} // namespace ts
