#include "csvreader.h"

#include "ingest/readerutil.h"
#include "ingest/redaction.h"

#include <QIODevice>

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace ts {

namespace {

using ingest::toQString;

enum class Target : quint8 {
    Extra,
    Ts,
    Identity,
    App,
    Tenant,
    Service,
    Category,
    Method,
    Url,
    Name,
    Status,
    ErrorCode,
    RetryAfter,
    Body,
    DurationMs,
    RequestId,
    OperationId,
    Attempt,
    Lane,
    Credits,
    Namespace,
    Entity,
    Header,
    Dimensions
};

struct FieldInfo
{
    const char16_t *name;
    Target target;
    // Column names recognised automatically, normalised (lower case, no "[UTC]"), in priority
    // order: the first one present in the header wins.
    std::vector<std::u16string_view> synonyms;
};

const std::vector<FieldInfo> &fieldTable()
{
    static const std::vector<FieldInfo> table = {
        {u"ts",
         Target::Ts,
         {u"ts", u"timestamp", u"timegenerated", u"time", u"starttime", u"eventtime", u"datetime",
          u"date"}},
        {u"identity",
         Target::Identity,
         {u"identity", u"user_authenticatedid", u"userauthenticatedid", u"upn",
          u"userprincipalname", u"enduser.id", u"apimsubscriptionid", u"userid", u"user_id"}},
        {u"app",
         Target::App,
         {u"app", u"clientapp", u"clientappid", u"applicationid", u"cloud_rolename",
          u"approlename"}},
        {u"tenant", Target::Tenant, {u"tenant", u"tenantid", u"tid"}},
        {u"service", Target::Service, {u"service"}},
        {u"category", Target::Category, {u"category"}},
        {u"method",
         Target::Method,
         {u"method", u"httpmethod", u"http_method", u"requestmethod", u"verb"}},
        {u"url", Target::Url, {u"url", u"requesturl", u"requesturi", u"uri", u"data"}},
        {u"name", Target::Name, {u"name"}},
        {u"status",
         Target::Status,
         {u"status", u"resultcode", u"responsecode", u"statuscode", u"httpstatuscode",
          u"httpstatus", u"scstatus", u"sc-status"}},
        {u"errorCode", Target::ErrorCode, {u"errorcode", u"error_code", u"lasterrorreason"}},
        {u"retryAfter", Target::RetryAfter, {u"retryafter", u"retry-after"}},
        {u"body", Target::Body, {u"body", u"responsebody", u"lasterrormessage"}},
        {u"durationMs",
         Target::DurationMs,
         {u"durationms", u"duration", u"totaltime", u"timetaken", u"elapsedms"}},
        {u"requestId", Target::RequestId, {u"requestid", u"id", u"correlationid"}},
        {u"operationId", Target::OperationId, {u"operation_id", u"operationid"}},
        {u"attempt", Target::Attempt, {u"attempt", u"retryattempt", u"retry-attempt"}},
        {u"lane", Target::Lane, {u"lane"}},
        {u"credits", Target::Credits, {u"credits"}},
        {u"namespace", Target::Namespace, {u"namespace"}},
        {u"entity", Target::Entity, {u"entity"}},
        {u"dimensions", Target::Dimensions, {u"customdimensions", u"properties"}},
    };
    return table;
}

// "timestamp [UTC]" -> "timestamp"; "Result Code" -> "resultcode".
QString normaliseColumn(QStringView name)
{
    QString result = name.trimmed().toString().toLower();
    if (result.endsWith(u"[utc]"))
        result.chop(5);
    result.remove(u' ');
    return result;
}

struct Column
{
    Target target = Target::Extra;
    QString headerName;   // for "header.<name>" targets: the header name; else the column name
    std::string extraKey; // UTF-8 column name for extraJson
};

// Splits one record (RFC 4180). Returns false when a quoted field is not closed.
bool splitRecord(std::string_view record, char delimiter, std::vector<std::string> &fields,
                 size_t &count)
{
    count = 0;
    size_t pos = 0;
    for (;;) {
        if (fields.size() <= count)
            fields.emplace_back();
        std::string &field = fields[count++];
        field.clear();
        if (pos < record.size() && record[pos] == '"') {
            ++pos;
            for (;;) {
                const size_t quote = record.find('"', pos);
                if (quote == std::string_view::npos)
                    return false;
                field.append(record.substr(pos, quote - pos));
                pos = quote + 1;
                if (pos < record.size() && record[pos] == '"') {
                    field.push_back('"');
                    ++pos;
                    continue;
                }
                break;
            }
            // Anything between the closing quote and the delimiter is kept (lenient).
            const size_t next = record.find(delimiter, pos);
            if (next == std::string_view::npos) {
                field.append(record.substr(pos));
                return true;
            }
            field.append(record.substr(pos, next - pos));
            pos = next + 1;
            continue;
        }
        const size_t next = record.find(delimiter, pos);
        if (next == std::string_view::npos) {
            field.assign(record.substr(pos));
            return true;
        }
        field.assign(record.substr(pos, next - pos));
        pos = next + 1;
    }
}

char guessDelimiter(std::string_view header)
{
    std::array<int, 3> counts{};
    bool quoted = false;
    for (const char c : header) {
        if (c == '"')
            quoted = !quoted;
        else if (!quoted && c == ',')
            ++counts[0];
        else if (!quoted && c == ';')
            ++counts[1];
        else if (!quoted && c == '\t')
            ++counts[2];
    }
    if (counts[2] >= counts[0] && counts[2] >= counts[1] && counts[2] > 0)
        return '\t';
    if (counts[1] > counts[0])
        return ';';
    return ',';
}

// How far a quoted field may run over lines before its quote is taken for a stray one (see
// CsvReader::read). Error texts and stack traces in exports run to tens of lines.
constexpr size_t kMaxQuotedFieldLines = 200;
constexpr size_t kMaxQuotedFieldBytes = 4 * 1024 * 1024;

qsizetype countQuotes(std::string_view text)
{
    return std::count(text.begin(), text.end(), '"');
}

// customDimensions / Properties: an application's own JSON bag. Pulls out what Throttlescope
// understands; the rest is returned as JSON for extraJson.
void applyDimensions(std::string_view json, RequestEvent &event, QString &authorization,
                     simdjson::dom::parser &parser, std::string &rest)
{
    rest.clear();
    if (json.empty())
        return;
    // parse(ptr, len) copies into the parser's own padded buffer, reused from row to row.
    simdjson::dom::object object;
    if (parser.parse(json.data(), json.size()).get_object().get(object) != simdjson::SUCCESS)
        return;
    for (auto field : object) {
        std::string_view key = field.key;
        std::string valueText;
        std::string_view value;
        if (field.value.get_string().get(value) != simdjson::SUCCESS) {
            if (field.value.is_array()) {
                // OpenTelemetry records header attributes as arrays of strings.
                simdjson::dom::array values = field.value.get_array().value_unsafe();
                for (simdjson::dom::element item : values) {
                    std::string_view part;
                    if (item.get_string().get(part) == simdjson::SUCCESS) {
                        if (!valueText.empty())
                            valueText += ", ";
                        valueText += part;
                    }
                }
            } else {
                valueText = simdjson::minify(field.value);
            }
            value = valueText;
        }
        QString lowerKey = toQString(key).toLower();
        for (const QStringView prefix :
             {QStringView(u"http.response.header."), QStringView(u"response.header."),
              QStringView(u"header.")}) {
            if (lowerKey.startsWith(prefix)) {
                lowerKey.remove(0, prefix.size());
                lowerKey.replace(u'_', u'-');
                break;
            }
        }
        bool used = true;
        if (lowerKey == u"retry-after" || lowerKey == u"retryafter") {
            event.retryAfter = toQString(value);
            event.headers.set(QStringLiteral("retry-after"), event.retryAfter);
        } else if (lowerKey == u"authorization") {
            authorization = toQString(value);
        } else if (lowerKey == u"identity" || lowerKey == u"upn" ||
                   lowerKey == u"userprincipalname" || lowerKey == u"enduser.id" ||
                   lowerKey == u"user.id" || lowerKey == u"user") {
            if (event.identity.isEmpty())
                event.identity = toQString(value);
        } else if (lowerKey == u"app" || lowerKey == u"appid" || lowerKey == u"clientappid" ||
                   lowerKey == u"application" || lowerKey == u"client_id" || lowerKey == u"azp") {
            if (event.app.isEmpty())
                event.app = toQString(value);
        } else if (lowerKey == u"tenant" || lowerKey == u"tenantid" || lowerKey == u"tid") {
            if (event.tenant.isEmpty())
                event.tenant = toQString(value);
        } else if (lowerKey == u"attempt" || lowerKey == u"retry-attempt" ||
                   lowerKey == u"retryattempt") {
            // An application's own bag: an attempt out of range is dropped, not converted.
            if (auto n = ingest::parseNumber(value))
                event.attempt = limits::toBoundedInt(*n, 0, limits::kMaxAttempt).value_or(-1);
        } else if (lowerKey == u"errorcode" || lowerKey == u"error.code") {
            if (event.errorCode.isEmpty())
                event.errorCode = toQString(value);
        } else if (lowerKey == u"lane") {
            event.lane = toQString(value);
        } else if (lowerKey == u"operationid") {
            if (event.operationId.isEmpty())
                event.operationId = toQString(value);
        } else if (ingest::isHeaderOfInterest(lowerKey)) {
            event.headers.set(lowerKey, toQString(value));
        } else {
            used = false;
        }
        if (!used) {
            rest += rest.empty() ? "{" : ",";
            QByteArray escaped;
            ingest::appendJsonEscaped(escaped, key);
            rest.append(escaped.constData(), static_cast<size_t>(escaped.size()));
            rest += ':';
            rest += simdjson::minify(field.value);
        }
    }
    if (!rest.empty())
        rest += '}';
}

} // namespace

// ---- CsvMapping -------------------------------------------------------------------------------

bool CsvMapping::isKnownField(QStringView field)
{
    if (field.startsWith(u"header.") && field.size() > 7)
        return true;
    for (const FieldInfo &info : fieldTable()) {
        if (field == QStringView(info.name))
            return true;
    }
    return false;
}

void CsvMapping::set(const QString &field, const QString &column)
{
    for (auto &item : m_fields) {
        if (item.first == field) {
            item.second = column;
            return;
        }
    }
    m_fields.append({field, column});
}

QString CsvMapping::column(QStringView field) const
{
    for (const auto &item : m_fields) {
        if (item.first == field)
            return item.second;
    }
    return {};
}

std::optional<CsvMapping> CsvMapping::fromString(const QString &spec, QString *error)
{
    CsvMapping mapping;
    qsizetype pos = 0;
    const auto fail = [&](const QString &message) -> std::optional<CsvMapping> {
        if (error)
            *error = message;
        return std::nullopt;
    };
    // Reads a name up to one of the stop characters; a double-quoted name may hold anything
    // ("" for a quote inside).
    const auto readName = [&](QStringView stops) -> std::optional<QString> {
        while (pos < spec.size() && spec.at(pos).isSpace())
            ++pos;
        QString name;
        if (pos < spec.size() && spec.at(pos) == u'"') {
            ++pos;
            for (;;) {
                if (pos >= spec.size())
                    return std::nullopt;
                if (spec.at(pos) == u'"') {
                    if (pos + 1 < spec.size() && spec.at(pos + 1) == u'"') {
                        name.append(u'"');
                        pos += 2;
                        continue;
                    }
                    ++pos;
                    break;
                }
                name.append(spec.at(pos++));
            }
            while (pos < spec.size() && spec.at(pos).isSpace())
                ++pos;
            return name;
        }
        while (pos < spec.size() && !stops.contains(spec.at(pos)))
            name.append(spec.at(pos++));
        return name.trimmed();
    };
    while (pos < spec.size()) {
        const auto field = readName(u"=,");
        if (!field || field->isEmpty())
            return fail(
                QStringLiteral("--map: expected field=column at character %1").arg(pos + 1));
        if (pos >= spec.size() || spec.at(pos) != u'=')
            return fail(u"--map: expected '=' after \"" + *field + u'"');
        ++pos;
        const auto column = readName(u",");
        if (!column || column->isEmpty())
            return fail(u"--map: no column given for \"" + *field + u'"');
        if (!isKnownField(*field))
            return fail(u"--map: unknown field \"" + *field +
                        u"\" (fields: ts, identity, app, tenant, service, category, method, url, "
                        u"name, status, errorCode, retryAfter, body, durationMs, requestId, "
                        u"operationId, attempt, lane, credits, namespace, entity, dimensions, "
                        u"header.<name>)");
        mapping.set(*field, *column);
        if (pos < spec.size()) {
            if (spec.at(pos) != u',')
                return fail(QStringLiteral("--map: expected ',' at character %1").arg(pos + 1));
            ++pos;
        }
    }
    if (mapping.isEmpty())
        return fail(QStringLiteral("--map: empty mapping"));
    return mapping;
}

QString CsvMapping::toString() const
{
    const auto quoted = [](const QString &name) -> QString {
        if (!name.contains(u',') && !name.contains(u'=') && !name.contains(u'"') &&
            name.trimmed() == name)
            return name;
        QString escaped = name;
        escaped.replace(QStringLiteral("\""), QStringLiteral("\"\""));
        return u'"' + escaped + u'"';
    };
    QStringList parts;
    for (const auto &[field, column] : m_fields)
        parts.append(quoted(field) + u'=' + quoted(column));
    return parts.join(u',');
}

// ---- CsvReader --------------------------------------------------------------------------------

CsvReader::CsvReader(CsvMapping mapping) : m_mapping(std::move(mapping)) {}

CsvMapping CsvReader::recogniseColumns(const QStringList &header)
{
    QStringList normalised;
    for (const QString &name : header)
        normalised.append(normaliseColumn(name));
    CsvMapping mapping;
    QList<qsizetype> taken;
    for (const FieldInfo &info : fieldTable()) {
        for (const std::u16string_view synonym : info.synonyms) {
            const qsizetype index =
                normalised.indexOf(QStringView(synonym.data(), qsizetype(synonym.size())));
            if (index >= 0 && !taken.contains(index)) {
                mapping.set(QString::fromUtf16(info.name), header.at(index).trimmed());
                taken.append(index);
                break;
            }
        }
    }
    return mapping;
}

ReadResult CsvReader::read(QIODevice &input, const QString &sourceName, IngestSink &sink,
                           const ReadControl &control)
{
    ReadResult result;
    ingest::CountingSink counted(sink);
    ingest::LineSource lines(input, control);
    const auto finish = [&](const QString &fatal) {
        result.events = counted.events;
        result.malformed = counted.malformed;
        result.bytesRead = lines.bytesRead();
        result.endOffset = lines.offsetAfter();
        result.endLine = lines.lineNumber();
        result.cancelled = lines.cancelled();
        if (!fatal.isEmpty())
            result.fatalError = sourceName + u": " + fatal;
        else if (!lines.readError().isEmpty())
            result.fatalError = sourceName + u": read error: " + lines.readError();
        return result;
    };

    // Lines come from the source, or again from `replay`: the lines read ahead while looking for
    // the end of a quoted field that turned out not to end (see nextRecord).
    struct HeldLine
    {
        std::string text;
        qint64 number = 0;
        qint64 offset = 0;
    };
    std::deque<HeldLine> replay;
    std::string replayed; // the text of the last line taken from `replay` (views point into it)
    const auto nextLine = [&](std::string_view &line, qint64 &number, qint64 &offset) -> bool {
        if (!replay.empty()) {
            replayed = std::move(replay.front().text);
            number = replay.front().number;
            offset = replay.front().offset;
            replay.pop_front();
            line = replayed;
            return true;
        }
        if (!lines.next(line))
            return false;
        number = lines.lineNumber();
        offset = lines.lineOffset();
        return true;
    };

    // Set once the header is known: whether a line starts a record of its own (see below). Such
    // a line ends the search for a quote's end: the quote was a stray one.
    std::function<bool(std::string_view)> looksLikeRecord;

    // A record may span lines when a quoted field holds a newline: lines are joined while the
    // number of quotes seen is odd, but only as far as a quoted field can believably run (up to
    // kMaxQuotedFieldLines lines and kMaxQuotedFieldBytes, and never into a line that is a record
    // of its own). Past that, the quote is a stray one: the record where it opened is
    // unterminated (reported at its first line) and reading resumes on the line after it, so one
    // stray quote costs one record, not the rest of the file.
    std::string record;
    qint64 recordLine = 0;
    qint64 recordOffset = 0;
    bool recordUnterminated = false;
    std::vector<HeldLine> held; // the lines after the first one of a record that spans lines
    size_t joinedLines = 0;     // how many of them the current record took
    const auto unreadHeld = [&] {
        for (auto it = held.rbegin(); it != held.rend(); ++it)
            replay.push_front(std::move(*it));
        held.clear();
    };
    const auto nextRecord = [&]() -> bool {
        recordUnterminated = false;
        joinedLines = 0;
        std::string_view line;
        if (!nextLine(line, recordLine, recordOffset))
            return false;
        record.assign(line);
        qsizetype quotes = countQuotes(line);
        if (quotes % 2 == 0)
            return true;
        held.clear();
        size_t heldBytes = 0;
        HeldLine next;
        while (held.size() < kMaxQuotedFieldLines && heldBytes <= kMaxQuotedFieldBytes &&
               nextLine(line, next.number, next.offset)) {
            next.text.assign(line);
            held.push_back(std::move(next));
            heldBytes += line.size() + 1;
            // A field does not run into the next record: the quote was a stray one.
            if (looksLikeRecord && looksLikeRecord(held.back().text))
                break;
            quotes += countQuotes(held.back().text);
            if (quotes % 2 == 0) {
                for (const HeldLine &part : held) {
                    record.push_back('\n');
                    record.append(part.text);
                }
                joinedLines = held.size();
                return true;
            }
        }
        recordUnterminated = true;
        unreadHeld();
        return true;
    };

    // Header row (skipping leading blank lines).
    do {
        if (!nextRecord())
            return finish(QStringLiteral("empty file, no CSV header row"));
        if (record.size() >= 3 && record.compare(0, 3, "\xEF\xBB\xBF") == 0)
            record.erase(0, 3);
    } while (ingest::trimmed(record).empty());
    const char delimiter = guessDelimiter(record);
    std::vector<std::string> fields;
    size_t fieldCount = 0;
    if (recordUnterminated || !splitRecord(record, delimiter, fields, fieldCount))
        return finish(QStringLiteral("unterminated quote in the header row"));
    QStringList header;
    for (size_t i = 0; i < fieldCount; ++i)
        header.append(toQString(ingest::trimmed(fields[i])));

    const CsvMapping mapping = m_mapping.isEmpty() ? recogniseColumns(header) : m_mapping;
    std::vector<Column> columns(static_cast<size_t>(header.size()));
    for (qsizetype i = 0; i < header.size(); ++i) {
        columns[static_cast<size_t>(i)].extraKey = header.at(i).toStdString();
        columns[static_cast<size_t>(i)].headerName = header.at(i);
    }
    bool haveTs = false;
    for (const auto &[field, columnName] : mapping.fields()) {
        const QString wanted = normaliseColumn(columnName);
        qsizetype index = -1;
        for (qsizetype i = 0; i < header.size() && index < 0; ++i) {
            if (normaliseColumn(header.at(i)) == wanted)
                index = i;
        }
        if (index < 0) {
            if (m_mapping.isEmpty())
                continue;
            return finish(u"column \"" + columnName + u"\" (for " + field +
                          u") is not in the header row: " + header.join(u", "));
        }
        Column &column = columns[static_cast<size_t>(index)];
        if (field.startsWith(u"header.")) {
            column.target = Target::Header;
            column.headerName = field.mid(7).toLower();
            continue;
        }
        for (const FieldInfo &info : fieldTable()) {
            if (field == QStringView(info.name))
                column.target = info.target;
        }
        haveTs = haveTs || column.target == Target::Ts;
    }
    // Looked up after the mapping is applied: a later entry may have taken the time column for
    // something else (--map ts=When,header.x=When).
    const auto tsColumnIt = std::find_if(columns.begin(), columns.end(),
                                         [](const Column &c) { return c.target == Target::Ts; });
    if (!haveTs || tsColumnIt == columns.end()) {
        return finish(u"no timestamp column recognised in the header row (" + header.join(u", ") +
                      u"); give a mapping such as --map ts=<column>,status=<column>");
    }
    const auto tsColumn = static_cast<size_t>(tsColumnIt - columns.begin());
    std::vector<std::string> lookaheadFields;
    // A line starts a record of its own when its fields up to the time column are complete and
    // that column holds a time: with balanced quotes and the header's number of fields, or with
    // a quote of its own left open (a second stray quote must not close the first one's field).
    looksLikeRecord = [&](std::string_view line) {
        size_t count = 0;
        const bool complete = splitRecord(line, delimiter, lookaheadFields, count);
        const size_t completeFields = complete ? count : count - 1;
        return (complete ? count == columns.size() : count <= columns.size()) &&
               tsColumn < completeFields &&
               ingest::parseAnyTimestampMs(lookaheadFields[tsColumn]).has_value();
    };

    simdjson::dom::parser dimensionsParser;
    std::string dimensionsRest;
    ingest::ExtraJsonWriter extra;
    while (nextRecord()) {
        if (ingest::trimmed(record).empty())
            continue;
        const auto malformed = [&](const QString &reason) {
            counted.onMalformed(redact::malformedRecord(sourceName, recordLine, reason));
        };
        bool split = !recordUnterminated && splitRecord(record, delimiter, fields, fieldCount);
        if (split && joinedLines > 0 && fieldCount != columns.size()) {
            // The quote was closed only by another stray quote on a later line (the joined
            // text is no record): this line is the unterminated one, the others are read again.
            unreadHeld();
            split = false;
        }
        if (!split) {
            malformed(QStringLiteral("unterminated quoted field: the quote opened on this line "
                                     "is not closed before the next record (or within %1 lines)")
                          .arg(kMaxQuotedFieldLines));
            continue;
        }
        if (fieldCount != columns.size()) {
            malformed(QStringLiteral("expected %1 columns, found %2")
                          .arg(columns.size())
                          .arg(fieldCount));
            continue;
        }
        RequestEvent event;
        event.source = sourceName;
        event.line = recordLine;
        event.offset = recordOffset;
        QString authorization;
        QString name;
        QString problem; // a value out of range: the record is malformed, with this reason
        bool haveTime = false;
        std::string_view rawTime;
        for (size_t i = 0; i < fieldCount; ++i) {
            const std::string_view value = fields[i];
            const Column &column = columns[i];
            // An empty cell says nothing: it must not overwrite what another column (or
            // customDimensions) already gave.
            if (ingest::trimmed(value).empty() && column.target != Target::Ts)
                continue;
            switch (column.target) {
            case Target::Ts:
                rawTime = value;
                if (auto ms = ingest::parseAnyTimestampMs(value)) {
                    event.tsMs = *ms;
                    haveTime = true;
                }
                break;
            case Target::Identity:
                event.identity = toQString(ingest::trimmed(value));
                break;
            case Target::App:
                event.app = toQString(ingest::trimmed(value));
                break;
            case Target::Tenant:
                event.tenant = toQString(ingest::trimmed(value));
                break;
            case Target::Service:
                event.service = toQString(ingest::trimmed(value));
                break;
            case Target::Category:
                event.category = toQString(ingest::trimmed(value));
                break;
            case Target::Method:
                event.method = toQString(ingest::trimmed(value));
                break;
            case Target::Url:
                event.url = toQString(ingest::trimmed(value));
                break;
            case Target::Name:
                name = toQString(ingest::trimmed(value));
                break;
            case Target::Status:
                if (auto n = ingest::parseNumber(value); n && *n > 0 && *n < 1000)
                    event.status = static_cast<int>(*n);
                else if (!ingest::trimmed(value).empty())
                    extra.addString(column.extraKey, value); // "Faulted", SQL codes...
                break;
            case Target::ErrorCode:
                event.errorCode = toQString(ingest::trimmed(value));
                break;
            case Target::RetryAfter:
                event.retryAfter = toQString(ingest::trimmed(value));
                break;
            case Target::Body:
                if (!value.empty())
                    event.body = ingest::bodyText(value);
                break;
            case Target::DurationMs:
                if (auto n = ingest::parseNumber(value); n && *n >= 0) {
                    if (limits::inRange(*n, 0, limits::kMaxDurationMs))
                        event.durationMs = *n;
                    else
                        problem = limits::outOfRangeReason(toQString(column.extraKey), *n, 0,
                                                           limits::kMaxDurationMs);
                }
                break;
            case Target::RequestId:
                event.requestId = toQString(ingest::trimmed(value));
                break;
            case Target::OperationId:
                event.operationId = toQString(ingest::trimmed(value));
                break;
            case Target::Attempt:
                if (auto n = ingest::parseNumber(value)) {
                    if (auto attempt = limits::toBoundedInt(*n, 0, limits::kMaxAttempt))
                        event.attempt = *attempt;
                    else
                        problem = limits::outOfRangeReason(toQString(column.extraKey), *n, 0,
                                                           limits::kMaxAttempt);
                }
                break;
            case Target::Lane:
                event.lane = toQString(ingest::trimmed(value));
                break;
            case Target::Credits:
                if (auto n = ingest::parseNumber(value)) {
                    if (limits::inRange(*n, 0, limits::kMaxCredits))
                        event.credits = *n;
                    else
                        problem = limits::outOfRangeReason(toQString(column.extraKey), *n, 0,
                                                           limits::kMaxCredits);
                }
                break;
            case Target::Namespace:
                event.serviceBusNamespace = toQString(ingest::trimmed(value));
                break;
            case Target::Entity:
                event.entity = toQString(ingest::trimmed(value));
                break;
            case Target::Header:
                if (!value.empty()) {
                    event.headers.set(column.headerName, toQString(ingest::trimmed(value)));
                    if (column.headerName == u"retry-after")
                        event.retryAfter = toQString(ingest::trimmed(value));
                }
                break;
            case Target::Dimensions:
                applyDimensions(ingest::trimmed(value), event, authorization, dimensionsParser,
                                dimensionsRest);
                if (!dimensionsRest.empty())
                    extra.addRaw(column.extraKey, dimensionsRest);
                break;
            case Target::Extra:
                if (!value.empty())
                    extra.addString(column.extraKey, value);
                break;
            }
        }
        if (!haveTime || !problem.isEmpty()) {
            extra.take();
            malformed(!problem.isEmpty() ? problem
                      : rawTime.empty()
                          ? QStringLiteral("no timestamp")
                          : u"unreadable timestamp " + redact::quoteMasked(toQString(rawTime)));
            continue;
        }
        // Application Insights "name" is "GET /path" for requests, the operation otherwise.
        if (!name.isEmpty()) {
            const qsizetype space = name.indexOf(u' ');
            if (event.method.isEmpty() && space > 0 && space <= 7 &&
                name.left(space).toUpper() == name.left(space))
                event.method = name.left(space);
            if (event.url.isEmpty())
                event.url =
                    space > 0 && event.method == name.left(space) ? name.mid(space + 1) : name;
            else if (event.method.isEmpty())
                event.method = name;
        }
        event.extraJson = extra.take();
        ingest::finishEvent(event, authorization);
        counted.onEvent(std::move(event));
    }
    return finish({});
}

} // namespace ts
