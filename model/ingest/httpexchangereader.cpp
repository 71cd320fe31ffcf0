#include "ingest/httpexchangereader.h"

#include "core/timeparse.h"
#include "ingest/graphbatch.h"
#include "ingest/readerutil.h"
#include "ingest/redaction.h"
#include "ingest/vcrreader.h"

#include <QIODevice>
#include <QRegularExpression>
#include <QUrl>

#include <simdjson.h>

#include <optional>
#include <string>

namespace ts {

namespace {

using ingest::toQString;

// A pasted exchange is a page or two; a body past this is cut (a capture is a HAR's business).
constexpr size_t kMaxExchangeBytes = 4 * 1024 * 1024;

const QRegularExpression &statusLinePattern()
{
    static const QRegularExpression pattern(
        QStringLiteral(R"(^HTTP/\d(?:\.\d)? (\d{3})(?: .*)?$)"));
    return pattern;
}

const QRegularExpression &requestLinePattern()
{
    static const QRegularExpression pattern(QStringLiteral(
        R"(^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) (\S+)(?: HTTP/\d(?:\.\d)?)?$)"));
    return pattern;
}

struct Exchange
{
    qint64 line = 0;    // of its first line
    qint64 offset = -1; // of its first byte
    QString method;
    QString url;
    int status = -1;                            // -1: no response yet
    QList<std::pair<QString, QString>> headers; // the response's
    QString authorization;                      // the request's, for identity only
    std::string requestBody;
    std::string responseBody;
};

enum class Part : quint8 { None, RequestHeaders, RequestBody, ResponseHeaders, ResponseBody };

void appendLine(std::string &body, std::string_view line)
{
    if (body.size() >= kMaxExchangeBytes)
        return;
    body.append(line);
    body.push_back('\n');
}

// Graph's errors carry innerError.date ("2020-08-18T12:51:51", UTC without a designator); a
// $batch answer carries them in its sub-responses. The earliest one dates the exchange.
void earliestInnerErrorDate(simdjson::dom::element element, std::optional<qint64> &earliest,
                            bool &graphShaped, int depth = 0)
{
    if (depth > 8)
        return;
    simdjson::dom::object object;
    if (element.get_object().get(object) == simdjson::SUCCESS) {
        for (auto field : object) {
            if (field.key == "innerError" || field.key == "innererror") {
                graphShaped = true;
                std::string_view date;
                if (field.value["date"].get_string().get(date) == simdjson::SUCCESS) {
                    if (const auto ms = parseRfc3339Ms(date))
                        earliest = earliest ? std::min(*earliest, *ms) : *ms;
                }
            }
            earliestInnerErrorDate(field.value, earliest, graphShaped, depth + 1);
        }
        return;
    }
    simdjson::dom::array array;
    if (element.get_array().get(array) == simdjson::SUCCESS) {
        for (simdjson::dom::element item : array)
            earliestInnerErrorDate(item, earliest, graphShaped, depth + 1);
    }
}

struct BodyFacts
{
    std::optional<qint64> dateMs;
    bool graph = false; // Graph's error shape or a $batch answer
    bool batch = false; // {"responses": [...]}
};

BodyFacts bodyFacts(const std::string &body)
{
    BodyFacts facts;
    if (body.find_first_not_of(" \t\r\n") == std::string::npos)
        return facts;
    simdjson::dom::parser parser;
    const simdjson::padded_string text(body);
    simdjson::dom::element root;
    if (parser.parse(text).get(root) != simdjson::SUCCESS)
        return facts;
    simdjson::dom::array responses;
    facts.batch = root["responses"].get_array().get(responses) == simdjson::SUCCESS;
    earliestInnerErrorDate(root, facts.dateMs, facts.graph);
    facts.graph = facts.graph || facts.batch;
    return facts;
}

// The events of one exchange, or a reason it cannot be read.
QString eventsOf(const Exchange &exchange, const QString &sourceName, QList<RequestEvent> &out)
{
    if (exchange.status < 0)
        return QStringLiteral("a request without its response");
    RequestEvent event;
    event.source = sourceName;
    event.line = exchange.line;
    event.offset = exchange.offset;
    event.method = exchange.method;
    event.url = exchange.url;
    event.status = exchange.status;
    std::optional<qint64> dateMs;
    for (const auto &[name, value] : exchange.headers) {
        const QString lower = name.toLower();
        if (lower == u"date")
            dateMs = parseHttpDateMs(value.toStdString());
        if (lower == u"retry-after")
            event.retryAfter = value;
        if (ingest::isRequestIdHeader(QStringView(name)) && event.requestId.isEmpty())
            event.requestId = value;
        if (ingest::isHeaderOfInterest(QStringView(name)))
            event.headers.set(name, value);
    }
    const BodyFacts facts = bodyFacts(exchange.responseBody);
    const std::optional<qint64> ts = dateMs ? dateMs : facts.dateMs;
    if (!ts)
        return QStringLiteral("no Date header and no dated body: the exchange has no time");
    event.tsMs = *ts;
    const QString host = QUrl(exchange.url).host();
    if (host == u"graph.microsoft.com" || (host.isEmpty() && facts.graph))
        event.service = QStringLiteral("graph");
    if (ingest::keepsBody(event.status))
        event.body = ingest::bodyText(exchange.responseBody);
    if (facts.batch &&
        ingest::explodeGraphBatch(event, exchange.requestBody, exchange.responseBody, out)) {
        event.batchEnvelope = true;
        for (RequestEvent &sub : out)
            ingest::finishEvent(sub, exchange.authorization);
    }
    ingest::finishEvent(event, exchange.authorization);
    out.prepend(std::move(event));
    return {};
}

} // namespace

bool isHttpExchangeStart(QByteArrayView line)
{
    const QString text = QString::fromUtf8(line).trimmed();
    return statusLinePattern().match(text).hasMatch() ||
           requestLinePattern().match(text).hasMatch();
}

ReadResult HttpExchangeReader::read(QIODevice &input, const QString &sourceName, IngestSink &sink,
                                    const ReadControl &control)
{
    ingest::CountingSink counted(sink);
    ingest::LineSource lines(input, control);
    Exchange exchange;
    Part part = Part::None;
    const auto finish = [&] {
        if (part == Part::None)
            return;
        QList<RequestEvent> events;
        const QString reason = eventsOf(exchange, sourceName, events);
        if (!reason.isEmpty())
            counted.onMalformed(redact::malformedRecord(sourceName, exchange.line, reason));
        for (RequestEvent &event : events)
            counted.onEvent(std::move(event));
        exchange = Exchange{};
        part = Part::None;
    };
    std::string_view raw;
    while (lines.next(raw)) {
        const QString line = toQString(raw).trimmed();
        const bool separator = line.startsWith(u"###");
        const auto status = statusLinePattern().match(line);
        const auto request = requestLinePattern().match(line);
        const bool inBody = part == Part::RequestBody || part == Part::ResponseBody;
        // A new exchange: a separator, or a request line where none can be (after a response,
        // or before anything), or a status line where no response has begun yet.
        if (separator ||
            (request.hasMatch() && (part == Part::None || part == Part::ResponseBody)) ||
            (status.hasMatch() && part == Part::ResponseBody)) {
            finish();
            if (separator)
                continue;
        }
        if (status.hasMatch() && part != Part::ResponseHeaders) {
            if (part == Part::None) {
                exchange.line = lines.lineNumber();
                exchange.offset = lines.lineOffset();
            }
            exchange.status = status.captured(1).toInt();
            part = Part::ResponseHeaders;
            continue;
        }
        if (request.hasMatch() && part == Part::None) {
            exchange.line = lines.lineNumber();
            exchange.offset = lines.lineOffset();
            exchange.method = request.captured(1);
            exchange.url = request.captured(2);
            part = Part::RequestHeaders;
            continue;
        }
        if (part == Part::RequestHeaders || part == Part::ResponseHeaders) {
            if (line.isEmpty()) {
                part = part == Part::RequestHeaders ? Part::RequestBody : Part::ResponseBody;
                continue;
            }
            const qsizetype colon = line.indexOf(u':');
            if (colon <= 0) {
                counted.onMalformed(
                    redact::malformedRecord(sourceName, lines.lineNumber(),
                                            QStringLiteral("not a header line (NAME: value)")));
                continue;
            }
            const QString name = line.left(colon).trimmed();
            const QString value = line.mid(colon + 1).trimmed();
            if (part == Part::ResponseHeaders)
                exchange.headers.append({name, value});
            else if (name.compare(u"authorization", Qt::CaseInsensitive) == 0)
                exchange.authorization = value;
            continue;
        }
        if (inBody)
            appendLine(part == Part::RequestBody ? exchange.requestBody : exchange.responseBody,
                       raw);
        // Outside any exchange: comments and blank lines (REST-client files have both).
    }
    finish();
    ReadResult result;
    result.events = counted.events;
    result.malformed = counted.malformed;
    result.bytesRead = lines.bytesRead();
    result.endOffset = lines.bytesRead();
    result.endLine = lines.lineNumber();
    result.cancelled = lines.cancelled();
    if (!lines.readError().isEmpty())
        result.fatalError = sourceName + QStringLiteral(": ") + lines.readError();
    return result;
}

} // namespace ts
