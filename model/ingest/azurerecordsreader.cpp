#include "azurerecordsreader.h"

#include "ingest/jsonscanner.h"
#include "ingest/readerutil.h"
#include "ingest/redaction.h"

#include <QIODevice>

#include <simdjson.h>

#include <string>
#include <vector>

namespace ts {

namespace {

using ingest::toQString;

// A record's fields, top level and "properties" merged, names lower-cased once.
class RecordFields
{
public:
    void load(simdjson::dom::object record, simdjson::dom::parser &propertiesParser,
              simdjson::padded_string &propertiesText)
    {
        m_fields.clear();
        add(record);
        simdjson::dom::element properties;
        if (record["properties"].get(properties) != simdjson::SUCCESS)
            return;
        simdjson::dom::object object;
        std::string_view text;
        if (properties.get_object().get(object) == simdjson::SUCCESS) {
            add(object);
        } else if (properties.get_string().get(text) == simdjson::SUCCESS) {
            // Some pipelines write properties as a JSON string.
            propertiesText = simdjson::padded_string(text);
            if (propertiesParser.parse(propertiesText).get_object().get(object) ==
                simdjson::SUCCESS)
                add(object);
        }
    }

    // The first of the names present, rendered as text (numbers as written); empty if none.
    std::string text(std::initializer_list<std::string_view> names) const
    {
        for (const std::string_view name : names) {
            for (const auto &[key, value] : m_fields) {
                if (key != name)
                    continue;
                std::string_view string;
                if (value.get_string().get(string) == simdjson::SUCCESS)
                    return std::string(string);
                if (value.is_null())
                    return {};
                return simdjson::minify(value);
            }
        }
        return {};
    }

    std::optional<simdjson::dom::element> element(std::string_view name) const
    {
        for (const auto &[key, value] : m_fields) {
            if (key == name)
                return value;
        }
        return std::nullopt;
    }

private:
    void add(simdjson::dom::object object)
    {
        for (auto field : object) {
            std::string key(field.key);
            for (char &c : key)
                c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            m_fields.emplace_back(std::move(key), field.value);
        }
    }

    std::vector<std::pair<std::string, simdjson::dom::element>> m_fields;
};

QString qs(const std::string &text)
{
    return QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
}

// "/SUBSCRIPTIONS/x/.../NAMESPACES/<ns>/servicebus/<entity>" -> ns, entity
void namespaceFromResourceId(const std::string &resourceId, RequestEvent &event)
{
    const QStringList parts = qs(resourceId).split(u'/', Qt::SkipEmptyParts);
    for (qsizetype i = 0; i + 1 < parts.size(); ++i) {
        if (parts.at(i).compare(u"NAMESPACES", Qt::CaseInsensitive) == 0) {
            const QString name = parts.at(i + 1);
            if (!name.startsWith(u'<'))
                event.serviceBusNamespace = name.toLower();
            if (i + 3 < parts.size() && !parts.at(i + 3).startsWith(u'<'))
                event.entity = parts.at(i + 3);
        }
    }
}

// Maps one record; false with *reason when it carries no request.
bool mapRecord(const RecordFields &f, RequestEvent &event, QString &reason)
{
    const std::string category = f.text({"category"});
    const std::string timeText =
        f.text({"time", "timegenerated", "eventtime", "eventtimestring", "timestamp"});
    const auto ts = ingest::parseAnyTimestampMs(timeText);

    if (category == "OperationalLogs") {
        if (!ts) {
            reason = QStringLiteral("OperationalLogs record without a readable time");
            return false;
        }
        event.tsMs = *ts;
        event.service = QStringLiteral("servicebus");
        event.method = qs(f.text({"eventname"})).remove(u' ');
        const std::string status = f.text({"status"});
        if (status == "Succeeded" || status == "Success")
            event.status = 200;
        else if (status == "Failed" || status == "Failure") {
            event.status = 500;
            event.errorCode = qs(status);
        } else {
            reason =
                u"OperationalLogs record with an unknown Status " + redact::quoteMasked(qs(status));
            return false;
        }
        namespaceFromResourceId(f.text({"resourceid"}), event);
        const std::string eventProperties = f.text({"eventproperties"});
        if (!eventProperties.empty()) {
            simdjson::dom::parser parser;
            simdjson::dom::object properties;
            const simdjson::padded_string padded(eventProperties);
            if (parser.parse(padded).get_object().get(properties) == simdjson::SUCCESS) {
                std::string_view text;
                if (properties["Namespace"].get_string().get(text) == simdjson::SUCCESS)
                    event.serviceBusNamespace = toQString(text);
                if (properties["Via"].get_string().get(text) == simdjson::SUCCESS)
                    event.url = toQString(text);
                if (properties["TrackingId"].get_string().get(text) == simdjson::SUCCESS)
                    event.requestId = toQString(text);
            }
        }
        event.requestId = event.requestId.isEmpty() ? qs(f.text({"activityid"})) : event.requestId;
        return true;
    }

    if (category == "RuntimeAuditLogs") {
        const std::string status = f.text({"status"});
        if (status == "Success")
            event.status = 200;
        else if (status == "Failure") {
            event.status = 500;
            event.errorCode = QStringLiteral("Failure");
        } else {
            reason = u"RuntimeAuditLogs record with an unknown Status " +
                     redact::quoteMasked(qs(status)) + u" (a template, not a log?)";
            return false;
        }
        if (!ts) {
            reason = QStringLiteral("RuntimeAuditLogs record without a readable time");
            return false;
        }
        event.tsMs = *ts;
        event.service = QStringLiteral("servicebus");
        const QString activity = qs(f.text({"activityname"}));
        event.method = activity == u"SendMessage"      ? QStringLiteral("Send")
                       : activity == u"ReceiveMessage" ? QStringLiteral("Receive")
                                                       : activity;
        event.identity = qs(f.text({"authid"}));
        if (auto count = ingest::parseNumber(f.text({"count"})))
            event.credits = *count;
        namespaceFromResourceId(f.text({"resourceid"}), event);
        event.requestId = qs(f.text({"activityid"}));
        return true;
    }

    // HTTP-shaped records: App Service, Front Door / CDN, Application Gateway, APIM, others.
    if (!ts) {
        reason = category.empty() ? QStringLiteral("record without a category or a readable time")
                                  : u"record of category " + redact::quoteMasked(qs(category)) +
                                        u" has no readable time (not a request log)";
        return false;
    }
    event.tsMs = *ts;
    event.method = qs(f.text({"csmethod", "httpmethod", "method", "requestmethod"}));
    const std::string status = f.text(
        {"scstatus", "httpstatuscode", "httpstatus", "responsecode", "statuscode", "resultcode"});
    if (auto n = ingest::parseNumber(status); n && *n > 0 && *n < 1000)
        event.status = static_cast<int>(*n);
    const std::string stem = f.text({"csuristem"});
    if (!stem.empty()) {
        const std::string host = f.text({"cshost"});
        const std::string port = f.text({"sport"});
        QString url =
            host.empty() ? QString()
                         : (port == "80" ? QStringLiteral("http://") : QStringLiteral("https://")) +
                               qs(host);
        url += qs(stem);
        const std::string query = f.text({"csuriquery"});
        if (!query.empty() && query != "-")
            url += u'?' + qs(query);
        event.url = url;
    } else {
        event.url = qs(f.text({"requesturi", "url", "requesturl", "uri"}));
    }
    if (event.method.isEmpty() && event.url.isEmpty() && event.status == 0) {
        reason = u"record of category " + redact::quoteMasked(qs(category)) +
                 u" carries no request (no method, url "
                 u"or status)";
        return false;
    }
    const bool seconds = category == "FrontDoorAccessLog" || category == "AzureCdnAccessLog" ||
                         category == "ApplicationGatewayAccessLog";
    if (auto n = ingest::parseNumber(f.text({"timetaken", "totaltime", "durationms", "duration"})))
        event.durationMs = seconds ? *n * 1000.0 : *n;
    event.identity = qs(f.text({"csusername", "apimsubscriptionid", "userid", "identity"}));
    if (event.identity.isEmpty() || event.identity == u"-")
        event.identity = qs(f.text({"clientip", "cip", "callerip", "calleripaddress"}));
    event.requestId = qs(f.text({"trackingreference", "correlationid", "requestid"}));
    if (auto lastError = f.element("lasterror")) {
        std::string_view text;
        if ((*lastError)["reason"].get_string().get(text) == simdjson::SUCCESS)
            event.errorCode = toQString(text);
    }
    if (event.errorCode.isEmpty())
        event.errorCode = qs(f.text({"errorcode", "lasterrorreason"}));
    if (!category.empty()) {
        ingest::ExtraJsonWriter extra;
        extra.addString("category", category);
        const std::string backend = f.text({"backendresponsecode"});
        if (!backend.empty())
            extra.addRaw("backendResponseCode", backend);
        const std::string errorInfo = f.text({"errorinfo"});
        if (!errorInfo.empty() && errorInfo != "NoError")
            extra.addString("errorInfo", errorInfo);
        event.extraJson = extra.take();
    }
    return true;
}

} // namespace

ReadResult AzureRecordsReader::read(QIODevice &input, const QString &sourceName, IngestSink &sink,
                                    const ReadControl &control)
{
    ReadResult result;
    ingest::CountingSink counted(sink);
    ingest::JsonStreamScanner scan(input, control);
    simdjson::dom::parser parser;
    simdjson::dom::parser propertiesParser;
    simdjson::padded_string propertiesText;
    RecordFields fields;
    std::string key;
    QString fatal;

    // The value at the scanner is one record object: slice, parse, map, emit.
    const auto handleRecord = [&]() -> bool {
        const size_t start = scan.pos();
        const qint64 line = scan.lineAt(start);
        const qint64 offset = scan.offsetOf(start);
        if (scan.current() != '{') {
            if (!scan.skipValue())
                return false;
            counted.onMalformed(redact::malformedRecord(sourceName, line,
                                                        QStringLiteral("record is not an object")));
            return true;
        }
        scan.pin(start);
        if (!scan.skipContainer())
            return false;
        const size_t begin = scan.pinned();
        simdjson::dom::object record;
        QString reason;
        RequestEvent event;
        if (const auto error = parser.parse(scan.data() + begin, scan.pos() - begin, false)
                                   .get_object()
                                   .get(record);
            error != simdjson::SUCCESS) {
            reason = u"not a JSON object: " + QLatin1StringView(simdjson::error_message(error));
        } else {
            fields.load(record, propertiesParser, propertiesText);
            mapRecord(fields, event, reason);
        }
        scan.unpin();
        if (!reason.isEmpty()) {
            counted.onMalformed(redact::malformedRecord(sourceName, line, reason));
            return true;
        }
        event.source = sourceName;
        event.line = line;
        event.offset = offset;
        ingest::finishEvent(event);
        counted.onEvent(std::move(event));
        return true;
    };

    // At '[': every element is a record.
    const auto handleArray = [&]() -> bool {
        scan.advance();
        for (;;) {
            if (control.cancel && control.cancel->load(std::memory_order_relaxed)) {
                result.cancelled = true;
                return true;
            }
            if (!scan.skipWhitespace())
                return false;
            if (scan.current() == ']') {
                scan.advance();
                return true;
            }
            if (scan.current() == ',') {
                scan.advance();
                continue;
            }
            if (!handleRecord())
                return false;
        }
    };

    if (scan.ensure() && static_cast<unsigned char>(scan.current()) == 0xEF) {
        for (int i = 0; i < 3 && scan.ensure(); ++i)
            scan.advance();
    }
    bool sawValue = false;
    while (!result.cancelled && scan.skipWhitespace()) {
        sawValue = true;
        const size_t start = scan.pos();
        const qint64 line = scan.lineAt(start);
        const char c = scan.current();
        if (c == '[') {
            if (!handleArray()) {
                fatal =
                    QStringLiteral("unterminated array of records starting at line %1").arg(line);
                break;
            }
            continue;
        }
        if (c != '{') {
            counted.onMalformed(
                redact::malformedRecord(sourceName, line, QStringLiteral("not a JSON object")));
            while (scan.ensure() && scan.current() != '\n')
                scan.advance();
            continue;
        }
        // {"records":[...]} streams its records; any other object is one record.
        scan.pin(start);
        scan.advance();
        bool wrapper = false;
        if (scan.skipWhitespace() && scan.current() == '"' && scan.readKey(key) &&
            key == "records" && scan.skipWhitespace() && scan.current() == ':') {
            scan.advance();
            wrapper = scan.skipWhitespace() && scan.current() == '[';
        }
        if (!wrapper) {
            scan.rewindToPin();
            scan.unpin();
            if (!handleRecord()) {
                fatal = QStringLiteral("unterminated JSON object starting at line %1").arg(line);
                break;
            }
            continue;
        }
        scan.unpin();
        if (!handleArray()) {
            fatal = QStringLiteral("unterminated \"records\" array starting at line %1").arg(line);
            break;
        }
        if (result.cancelled)
            break;
        // Whatever follows "records" in the wrapper object is not a record.
        bool closed = false;
        while (scan.skipWhitespace()) {
            if (scan.current() == '}') {
                scan.advance();
                closed = true;
                break;
            }
            if (scan.current() == ',') {
                scan.advance();
                continue;
            }
            if (scan.current() == '"' && scan.readKey(key) && scan.skipWhitespace() &&
                scan.current() == ':') {
                scan.advance();
                if (scan.skipValue())
                    continue;
            }
            break;
        }
        if (!closed) {
            fatal =
                QStringLiteral("corrupt {\"records\":[...]} object starting at line %1").arg(line);
            break;
        }
    }
    if (!ingest::finishScan(result, counted, scan, sourceName, fatal) && !sawValue)
        result.fatalError = sourceName + QStringLiteral(": no Azure log records found");
    if (control.progress)
        control.progress(result.bytesRead, input.isSequential() ? -1 : input.size());
    return result;
}

} // namespace ts
