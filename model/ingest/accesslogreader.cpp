#include "accesslogreader.h"

#include "core/timeparse.h"
#include "ingest/readerutil.h"
#include "ingest/redaction.h"

#include <QIODevice>

#include <string>
#include <vector>

namespace ts {

namespace {

using ingest::toQString;

enum class Var : quint8 {
    Ignored,
    Msec,
    TimeLocal,
    TimeIso,
    Status,
    RemoteUser,
    RemoteAddr,
    Request,
    RequestMethod,
    RequestUri,
    Uri,
    Args,
    Host,
    Scheme,
    RequestTime,
    UpstreamResponseTime,
    RequestId,
    RequestHeader,
    ResponseHeader
};

struct Field
{
    Var var = Var::Ignored;
    QString header;    // for RequestHeader / ResponseHeader: lower-case, '-' separated
    std::string after; // the literal text that follows the variable (may be empty)
};

Field fieldFor(const QString &name)
{
    Field field;
    static const QList<QPair<QString, Var>> kNames = {
        {QStringLiteral("msec"), Var::Msec},
        {QStringLiteral("time_local"), Var::TimeLocal},
        {QStringLiteral("time_iso8601"), Var::TimeIso},
        {QStringLiteral("status"), Var::Status},
        {QStringLiteral("remote_user"), Var::RemoteUser},
        {QStringLiteral("remote_addr"), Var::RemoteAddr},
        {QStringLiteral("request"), Var::Request},
        {QStringLiteral("request_method"), Var::RequestMethod},
        {QStringLiteral("request_uri"), Var::RequestUri},
        {QStringLiteral("uri"), Var::Uri},
        {QStringLiteral("args"), Var::Args},
        {QStringLiteral("host"), Var::Host},
        {QStringLiteral("http_host"), Var::Host},
        {QStringLiteral("scheme"), Var::Scheme},
        {QStringLiteral("request_time"), Var::RequestTime},
        {QStringLiteral("upstream_response_time"), Var::UpstreamResponseTime},
        {QStringLiteral("request_id"), Var::RequestId},
    };
    for (const auto &[known, var] : kNames) {
        if (name == known) {
            field.var = var;
            return field;
        }
    }
    const auto headerOf = [](QStringView suffix) {
        QString header = suffix.toString().toLower();
        header.replace(u'_', u'-');
        return header;
    };
    if (name.startsWith(u"http_")) {
        field.var = Var::RequestHeader;
        field.header = headerOf(QStringView(name).mid(5));
    } else if (name.startsWith(u"upstream_http_")) {
        field.var = Var::ResponseHeader;
        field.header = headerOf(QStringView(name).mid(14));
    } else if (name.startsWith(u"sent_http_")) {
        field.var = Var::ResponseHeader;
        field.header = headerOf(QStringView(name).mid(10));
    }
    return field;
}

std::string_view dashless(std::string_view value)
{
    return value == "-" ? std::string_view() : value;
}

} // namespace

struct AccessLogFormat::Compiled
{
    QString text;
    std::string prefix; // literal text before the first variable
    std::vector<Field> fields;
};

AccessLogFormat::AccessLogFormat() = default;
AccessLogFormat::~AccessLogFormat() = default;
AccessLogFormat::AccessLogFormat(const AccessLogFormat &other) = default;
AccessLogFormat &AccessLogFormat::operator=(const AccessLogFormat &other) = default;

std::optional<AccessLogFormat> AccessLogFormat::compile(const QString &logFormat, QString *error)
{
    auto compiled = std::make_shared<Compiled>();
    compiled->text = logFormat;
    const QByteArray utf8 = logFormat.toUtf8();
    std::string literal;
    bool haveTime = false;
    qsizetype i = 0;
    while (i < utf8.size()) {
        const char c = utf8.at(i);
        if (c != '$') {
            literal.push_back(c);
            ++i;
            continue;
        }
        ++i;
        const bool braced = i < utf8.size() && utf8.at(i) == '{';
        if (braced)
            ++i;
        const qsizetype nameStart = i;
        while (i < utf8.size() &&
               (std::isalnum(static_cast<unsigned char>(utf8.at(i))) || utf8.at(i) == '_'))
            ++i;
        const QString name = QString::fromLatin1(utf8.mid(nameStart, i - nameStart)).toLower();
        if (braced) {
            if (i >= utf8.size() || utf8.at(i) != '}') {
                if (error)
                    *error =
                        QStringLiteral("log format: unclosed ${ at character %1").arg(nameStart);
                return std::nullopt;
            }
            ++i;
        }
        if (name.isEmpty()) {
            literal.push_back('$');
            continue;
        }
        if (compiled->fields.empty())
            compiled->prefix = literal;
        else
            compiled->fields.back().after = literal;
        literal.clear();
        Field field = fieldFor(name);
        haveTime = haveTime || field.var == Var::Msec || field.var == Var::TimeLocal ||
                   field.var == Var::TimeIso;
        compiled->fields.push_back(std::move(field));
    }
    if (compiled->fields.empty()) {
        if (error)
            *error = QStringLiteral("log format has no $variable");
        return std::nullopt;
    }
    compiled->fields.back().after = literal;
    if (!haveTime) {
        if (error)
            *error = QStringLiteral("log format has no time variable ($time_local, $time_iso8601 "
                                    "or $msec)");
        return std::nullopt;
    }
    AccessLogFormat format;
    format.d = std::move(compiled);
    return format;
}

AccessLogFormat AccessLogFormat::combined()
{
    static const AccessLogFormat format = *compile(QStringLiteral(
        R"($remote_addr $remote_ident $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent")"));
    return format;
}

AccessLogFormat AccessLogFormat::common()
{
    static const AccessLogFormat format = *compile(QStringLiteral(
        R"($remote_addr $remote_ident $remote_user [$time_local] "$request" $status $body_bytes_sent)"));
    return format;
}

QString AccessLogFormat::text() const
{
    return d ? d->text : QString();
}

bool AccessLogFormat::parse(std::string_view line, RequestEvent &event, QString *reason) const
{
    if (!d)
        return false;
    if (line.substr(0, d->prefix.size()) != d->prefix) {
        *reason = QStringLiteral("does not start like the log format");
        return false;
    }
    size_t pos = d->prefix.size();
    std::string_view host;
    std::string_view scheme;
    std::string_view uri;
    std::string_view args;
    std::string_view remoteAddr;
    std::string_view authorization;
    bool haveTime = false;
    std::string_view unreadableTime; // a time field that is not a real instant
    const size_t count = d->fields.size();
    for (size_t i = 0; i < count; ++i) {
        const Field &field = d->fields[i];
        std::string_view value;
        if (field.after.empty()) {
            // Last variable: the rest of the line; adjacent variables: up to the next space.
            const size_t end = i + 1 == count ? line.size() : line.find(' ', pos);
            value = line.substr(pos, (end == std::string_view::npos ? line.size() : end) - pos);
            pos += value.size();
        } else {
            const size_t end = line.find(field.after, pos);
            if (end == std::string_view::npos) {
                *reason = QStringLiteral("does not match the log format (field %1 of %2)")
                              .arg(i + 1)
                              .arg(count);
                return false;
            }
            value = line.substr(pos, end - pos);
            pos = end + field.after.size();
        }
        switch (field.var) {
        case Var::Ignored:
            break;
        case Var::Msec:
        case Var::TimeLocal:
        case Var::TimeIso: {
            const auto n = field.var == Var::Msec ? ingest::parseNumber(value) : std::nullopt;
            const auto ms = field.var == Var::Msec      ? (n ? unixNumberToMs(*n) : std::nullopt)
                            : field.var == Var::TimeIso ? parseRfc3339Ms(value)
                                                        : ingest::parseClfTimeMs(value);
            if (ms) {
                event.tsMs = *ms;
                haveTime = true;
            } else {
                unreadableTime = value;
            }
            break;
        }
        case Var::Status:
            if (auto n = ingest::parseNumber(value); n && *n >= 0 && *n < 1000) {
                event.status = static_cast<int>(*n);
            } else {
                *reason = u"status is not a number: " + redact::quoteMasked(toQString(value));
                return false;
            }
            break;
        case Var::RemoteUser:
            event.identity = toQString(dashless(value));
            break;
        case Var::RemoteAddr:
            remoteAddr = dashless(value);
            break;
        case Var::Request: {
            // "GET /path HTTP/1.1"; a bare "-" or garbage (scanners) keeps what there is.
            const size_t space = value.find(' ');
            if (space == std::string_view::npos) {
                uri = dashless(value);
                break;
            }
            event.method = toQString(value.substr(0, space));
            std::string_view rest = value.substr(space + 1);
            const size_t protocol = rest.rfind(" HTTP/");
            uri = protocol == std::string_view::npos ? rest : rest.substr(0, protocol);
            break;
        }
        case Var::RequestMethod:
            event.method = toQString(dashless(value));
            break;
        case Var::RequestUri:
        case Var::Uri:
            if (uri.empty())
                uri = dashless(value);
            break;
        case Var::Args:
            args = dashless(value);
            break;
        case Var::Host:
            host = dashless(value);
            break;
        case Var::Scheme:
            scheme = dashless(value);
            break;
        case Var::RequestTime:
            if (auto n = ingest::parseNumber(value)) {
                if (!limits::inRange(*n * 1000.0, 0, limits::kMaxDurationMs)) {
                    *reason = limits::outOfRangeReason(u"request_time (s)", *n, 0,
                                                       limits::kMaxDurationMs / 1000.0);
                    return false;
                }
                event.durationMs = *n * 1000.0;
            }
            break;
        case Var::UpstreamResponseTime:
            if (event.durationMs < 0) {
                if (auto n = ingest::parseNumber(value))
                    event.durationMs = *n * 1000.0;
            }
            break;
        case Var::RequestId:
            event.requestId = toQString(dashless(value));
            break;
        case Var::RequestHeader:
            value = dashless(value);
            if (value.empty())
                break;
            if (field.header == u"authorization")
                authorization = value;
            else if (field.header == u"retry-attempt") {
                if (auto n = ingest::parseNumber(value)) {
                    const auto attempt = limits::toBoundedInt(*n, 0, limits::kMaxAttempt);
                    if (!attempt) {
                        *reason =
                            limits::outOfRangeReason(u"Retry-Attempt", *n, 0, limits::kMaxAttempt);
                        return false;
                    }
                    event.attempt = *attempt;
                }
            } else if (field.header == u"x-ms-client-request-id" ||
                       field.header == u"client-request-id") {
                if (event.requestId.isEmpty())
                    event.requestId = toQString(value);
            } else if (field.header == u"host") {
                host = value;
            }
            break;
        case Var::ResponseHeader:
            value = dashless(value);
            if (value.empty())
                break;
            if (field.header == u"retry-after")
                event.retryAfter = toQString(value);
            if (ingest::isHeaderOfInterest(field.header))
                event.headers.set(field.header, toQString(value));
            break;
        }
    }
    if (!haveTime) {
        *reason = unreadableTime.empty()
                      ? QStringLiteral("no readable time")
                      : u"unreadable time " + redact::quoteMasked(toQString(unreadableTime)) +
                            u" (not a valid date and time in range)";
        return false;
    }
    QString url = toQString(uri);
    if (!args.empty() && !url.contains(u'?'))
        url += u'?' + toQString(args);
    if (!host.empty() && url.startsWith(u'/'))
        url = (scheme.empty() ? QStringLiteral("http") : toQString(scheme)) + u"://" +
              toQString(host) + url;
    event.url = url;
    // Identity: $remote_user, else the bearer token's user, else the client address.
    if (event.identity.isEmpty() && !authorization.empty())
        redact::applyIdentityFromAuthorization(event, toQString(authorization));
    if (event.identity.isEmpty())
        event.identity = toQString(remoteAddr);
    ingest::finishEvent(event);
    return true;
}

AccessLogReader::AccessLogReader(const QString &logFormat) : m_formatText(logFormat) {}

ReadResult AccessLogReader::read(QIODevice &input, const QString &sourceName, IngestSink &sink,
                                 const ReadControl &control)
{
    ReadResult result;
    std::optional<AccessLogFormat> custom;
    if (!m_formatText.isEmpty()) {
        QString error;
        custom = AccessLogFormat::compile(m_formatText, &error);
        if (!custom) {
            result.fatalError = sourceName + u": " + error;
            return result;
        }
    }
    if (control.startOffset > 0 && !input.isSequential() && !input.seek(control.startOffset)) {
        result.fatalError = sourceName + QStringLiteral(": cannot seek to the resume offset");
        return result;
    }
    const AccessLogFormat combined = AccessLogFormat::combined();
    const AccessLogFormat common = AccessLogFormat::common();
    ingest::LineSource lines(input, control);
    ingest::CountingSink counted(sink);
    std::string_view line;
    QString reason;
    while (lines.next(line)) {
        if (lines.lineNumber() == 1 && line.substr(0, 3) == "\xEF\xBB\xBF")
            line.remove_prefix(3);
        if (ingest::trimmed(line).empty()) {
            lines.checkpoint();
            continue;
        }
        RequestEvent event;
        bool ok = false;
        if (custom) {
            ok = custom->parse(line, event, &reason);
        } else {
            ok = combined.parse(line, event, &reason);
            if (!ok) {
                event = RequestEvent();
                QString commonReason;
                ok = common.parse(line, event, &commonReason);
            }
        }
        if (ok) {
            event.source = sourceName;
            event.line = lines.lineNumber();
            event.offset = lines.lineOffset();
            counted.onEvent(std::move(event));
        } else {
            counted.onMalformed(redact::malformedRecord(sourceName, lines.lineNumber(), reason));
        }
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
