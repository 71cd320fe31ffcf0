#include "vcrreader.h"

#include "core/timeparse.h"
#include "ingest/readerutil.h"
#include "ingest/redaction.h"

#include <QIODevice>

#include <memory>
#include <string>
#include <vector>

namespace ts {

namespace {

using ingest::toQString;

// The YAML subset vcrpy writes.
struct Node
{
    enum class Kind : quint8 { Null, Scalar, Map, Seq } kind = Kind::Null;
    std::string scalar;
    // A mapping as two parallel lists: std::pair<std::string, Node> would need Node complete
    // (clang rejects it), std::vector<Node> does not.
    std::vector<std::string> keys;
    std::vector<Node> values;
    std::vector<Node> seq;

    [[nodiscard]] const Node *get(std::string_view key) const
    {
        for (size_t i = 0; i < keys.size(); ++i) {
            if (keys[i] == key)
                return &values[i];
        }
        return nullptr;
    }
    // A scalar, or the items of a sequence of scalars joined with ", ".
    [[nodiscard]] std::string text() const
    {
        if (kind == Kind::Scalar)
            return scalar;
        std::string joined;
        if (kind == Kind::Seq) {
            for (const Node &item : seq) {
                if (item.kind != Kind::Scalar)
                    continue;
                if (!joined.empty())
                    joined += ", ";
                joined += item.scalar;
            }
        }
        return joined;
    }
};

int indentOf(const std::string &line)
{
    int indent = 0;
    while (size_t(indent) < line.size() && line[size_t(indent)] == ' ')
        ++indent;
    return indent;
}

bool isBlank(const std::string &line)
{
    return ingest::trimmed(line).empty();
}

class BlockParser
{
public:
    explicit BlockParser(std::vector<std::string> &lines) : m_lines(lines) {}

    Node parseBlock(int indent)
    {
        skipBlank();
        if (m_pos >= m_lines.size() || indentOf(m_lines[m_pos]) < indent)
            return {};
        const int here = indentOf(m_lines[m_pos]);
        if (m_lines[m_pos].compare(size_t(here), 2, "- ") == 0 ||
            m_lines[m_pos].substr(size_t(here)) == "-")
            return parseSequence(here);
        return parseMap(here);
    }

private:
    void skipBlank()
    {
        while (m_pos < m_lines.size() && isBlank(m_lines[m_pos]))
            ++m_pos;
    }

    Node parseSequence(int indent)
    {
        Node node;
        node.kind = Node::Kind::Seq;
        for (;;) {
            skipBlank();
            if (m_pos >= m_lines.size() || indentOf(m_lines[m_pos]) != indent)
                break;
            std::string &line = m_lines[m_pos];
            if (line.compare(size_t(indent), 1, "-") != 0)
                break;
            const std::string_view rest =
                ingest::trimmed(std::string_view(line).substr(size_t(indent) + 1));
            if (rest.empty()) {
                ++m_pos;
                node.seq.push_back(parseBlock(indent + 1));
            } else if (looksLikeMapEntry(rest)) {
                // "- key: value": the item is a mapping whose first line starts here.
                line[size_t(indent)] = ' ';
                node.seq.push_back(parseMap(indent + 2));
            } else {
                const size_t start = line.size() - rest.size();
                node.seq.push_back(parseScalar(start, indent));
            }
        }
        return node;
    }

    static bool looksLikeMapEntry(std::string_view text)
    {
        if (text.empty() || text.front() == '\'' || text.front() == '"')
            return false;
        const size_t colon = text.find(": ");
        return colon != std::string_view::npos || text.back() == ':';
    }

    Node parseMap(int indent)
    {
        Node node;
        node.kind = Node::Kind::Map;
        for (;;) {
            skipBlank();
            if (m_pos >= m_lines.size() || indentOf(m_lines[m_pos]) != indent)
                break;
            const std::string &line = m_lines[m_pos];
            if (line.compare(size_t(indent), 1, "-") == 0)
                break;
            const std::string_view content = std::string_view(line).substr(size_t(indent));
            size_t colon = content.find(": ");
            if (colon == std::string_view::npos) {
                if (!content.empty() && content.back() == ':')
                    colon = content.size() - 1;
                else
                    break; // not a mapping line: stop here
            }
            std::string key(content.substr(0, colon));
            const std::string_view rest = ingest::trimmed(content.substr(colon + 1));
            if (rest.empty()) {
                ++m_pos;
                skipBlank();
                Node value;
                if (m_pos < m_lines.size()) {
                    const int next = indentOf(m_lines[m_pos]);
                    const bool dash = m_lines[m_pos].compare(size_t(next), 1, "-") == 0;
                    if (next > indent || (next == indent && dash))
                        value = dash ? parseSequence(next) : parseMap(next);
                }
                node.keys.push_back(std::move(key));
                node.values.push_back(std::move(value));
            } else {
                node.keys.push_back(std::move(key));
                node.values.push_back(parseScalar(size_t(indent) + colon + 1, indent));
            }
        }
        return node;
    }

    // A scalar beginning at column `start` of the current line; continuation lines are those
    // indented deeper than `indent`.
    Node parseScalar(size_t start, int indent)
    {
        const std::string &first = m_lines[m_pos];
        std::string_view text = ingest::trimmed(std::string_view(first).substr(start));
        Node node;
        node.kind = Node::Kind::Scalar;
        if (!text.empty() && (text.front() == '\'' || text.front() == '"')) {
            const char quote = text.front();
            std::string out;
            std::string_view rest = text.substr(1);
            bool pendingBreak = false;
            bool escapedBreak = false;
            for (;;) {
                escapedBreak = false;
                size_t i = 0;
                bool closed = false;
                while (i < rest.size()) {
                    const char c = rest[i];
                    if (quote == '\'' && c == '\'') {
                        if (i + 1 < rest.size() && rest[i + 1] == '\'') {
                            out.push_back('\'');
                            i += 2;
                            continue;
                        }
                        closed = true;
                        break;
                    }
                    if (quote == '"' && c == '"') {
                        closed = true;
                        break;
                    }
                    if (quote == '"' && c == '\\' && i + 1 < rest.size()) {
                        const char e = rest[i + 1];
                        i += 2;
                        switch (e) {
                        case 'n':
                            out.push_back('\n');
                            break;
                        case 't':
                            out.push_back('\t');
                            break;
                        case 'r':
                            out.push_back('\r');
                            break;
                        case '0':
                            out.push_back('\0');
                            break;
                        case 'x':
                        case 'u':
                        case 'U': {
                            const size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
                            const QString hex = toQString(rest.substr(i, digits));
                            bool ok = false;
                            const uint code = hex.toUInt(&ok, 16);
                            if (ok) {
                                const char32_t codePoint = code;
                                out += QString::fromUcs4(&codePoint, 1).toStdString();
                            }
                            i += std::min(digits, rest.size() - i);
                            break;
                        }
                        default:
                            out.push_back(e);
                            break;
                        }
                        continue;
                    }
                    if (quote == '"' && c == '\\' && i + 1 == rest.size()) {
                        escapedBreak = true; // "\" at the end of a line: no folding space
                        ++i;
                        continue;
                    }
                    out.push_back(c);
                    ++i;
                }
                if (closed || ++m_pos >= m_lines.size())
                    break;
                // Folding: a line break becomes a space; an empty line a newline.
                const std::string &next = m_lines[m_pos];
                if (isBlank(next)) {
                    out.push_back('\n');
                    pendingBreak = true;
                    rest = {};
                    continue;
                }
                if (!pendingBreak && !escapedBreak)
                    out.push_back(' ');
                pendingBreak = false;
                rest = ingest::trimmed(next);
            }
            ++m_pos;
            node.scalar = std::move(out);
            return node;
        }
        if (text == "null" || text == "~") {
            ++m_pos;
            return {};
        }
        if (text.substr(0, 2) == "!!" || text.front() == '|' || text.front() == '>') {
            // Tagged or block scalars (binary bodies): skipped, with their indented lines.
            ++m_pos;
            while (m_pos < m_lines.size() &&
                   (isBlank(m_lines[m_pos]) || indentOf(m_lines[m_pos]) > indent))
                ++m_pos;
            return {};
        }
        std::string out(text);
        ++m_pos;
        while (m_pos < m_lines.size() && !isBlank(m_lines[m_pos]) &&
               indentOf(m_lines[m_pos]) > indent) {
            out.push_back(' ');
            out.append(ingest::trimmed(m_lines[m_pos]));
            ++m_pos;
        }
        node.scalar = std::move(out);
        return node;
    }

    std::vector<std::string> &m_lines;
    size_t m_pos = 0;
};

int monthNumber(std::string_view name)
{
    static constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    for (int i = 0; i < 12; ++i) {
        if (name == kMonths[i])
            return i + 1;
    }
    return 0;
}

} // namespace

std::optional<qint64> parseHttpDateMs(std::string_view text)
{
    text = ingest::trimmed(text);
    const size_t comma = text.find(", ");
    if (comma != std::string_view::npos && comma <= 9)
        text.remove_prefix(comma + 2);
    // "03 Sep 2025 07:02:21 GMT"
    if (text.size() < 20 || text[2] != ' ' || text[6] != ' ' || text[11] != ' ' ||
        text[14] != ':' || text[17] != ':')
        return std::nullopt;
    const auto number = [&](size_t pos, size_t count) -> int {
        int value = 0;
        for (size_t i = pos; i < pos + count; ++i) {
            if (text[i] < '0' || text[i] > '9')
                return -1;
            value = value * 10 + (text[i] - '0');
        }
        return value;
    };
    const int day = number(0, 2);
    const int month = monthNumber(text.substr(3, 3));
    const int year = number(7, 4);
    const int hour = number(12, 2);
    const int minute = number(15, 2);
    const int second = number(18, 2);
    const std::string_view zone = ingest::trimmed(text.substr(20));
    if (!zone.empty() && zone != "GMT" && zone != "UTC")
        return std::nullopt;
    // number() gives -1 for a non-digit: civilToMs rejects it with every other invalid field.
    return civilToMs(year, month, day, hour, minute, second);
}

ReadResult VcrReader::read(QIODevice &input, const QString &sourceName, IngestSink &sink,
                           const ReadControl &control)
{
    ReadResult result;
    ingest::LineSource lines(input, control);
    ingest::CountingSink counted(sink);
    ingest::BearerIdentityCache identities;
    std::vector<std::string> block;
    qint64 blockLine = 0;
    qint64 blockOffset = 0;
    bool sawInteractions = false;

    const auto flush = [&] {
        if (block.empty())
            return;
        BlockParser parser(block);
        const Node interaction = parser.parseBlock(0);
        block.clear();
        const Node *item = interaction.kind == Node::Kind::Seq && !interaction.seq.empty()
                               ? &interaction.seq.front()
                               : nullptr;
        const Node *request = item ? item->get("request") : nullptr;
        const Node *response = item ? item->get("response") : nullptr;
        if (!request || request->kind != Node::Kind::Map) {
            counted.onMalformed(redact::malformedRecord(
                sourceName, blockLine, QStringLiteral("interaction without a request")));
            return;
        }
        RequestEvent event;
        event.source = sourceName;
        event.line = blockLine;
        event.offset = blockOffset;
        if (const Node *method = request->get("method"))
            event.method = toQString(method->text());
        if (const Node *uri = request->get("uri"))
            event.url = toQString(uri->text());
        QString authorization;
        QString problem; // a value out of range: the interaction is malformed, with this reason
        if (const Node *headers = request->get("headers"); headers) {
            for (size_t h = 0; h < headers->keys.size(); ++h) {
                const std::string &name = headers->keys[h];
                const Node &value = headers->values[h];
                const QString lower = toQString(name).toLower();
                if (lower == u"authorization")
                    authorization = toQString(value.text());
                else if (lower == u"retry-attempt") {
                    if (auto n = ingest::parseNumber(value.text())) {
                        if (auto attempt = limits::toBoundedInt(*n, 0, limits::kMaxAttempt))
                            event.attempt = *attempt;
                        else
                            problem = limits::outOfRangeReason(u"Retry-Attempt", *n, 0,
                                                               limits::kMaxAttempt);
                    }
                }
            }
        }
        std::optional<qint64> when;
        if (response && response->kind == Node::Kind::Map) {
            if (const Node *status = response->get("status")) {
                if (const Node *code = status->get("code")) {
                    if (auto n = ingest::parseNumber(code->text())) {
                        if (auto value = limits::toBoundedInt(*n, 0, limits::kMaxStatus))
                            event.status = *value;
                        else
                            problem =
                                limits::outOfRangeReason(u"status code", *n, 0, limits::kMaxStatus);
                    }
                }
            }
            if (const Node *headers = response->get("headers"); headers) {
                for (size_t h = 0; h < headers->keys.size(); ++h) {
                    const std::string &name = headers->keys[h];
                    const std::string text = headers->values[h].text();
                    if (name.size() == 4 && strncasecmp(name.c_str(), "date", 4) == 0)
                        when = parseHttpDateMs(text);
                    const bool isRequestId = event.requestId.isEmpty() &&
                                             (ingest::isRequestIdHeader(std::string_view(name)) ||
                                              strcasecmp(name.c_str(), "requestid") == 0);
                    if (isRequestId)
                        event.requestId = toQString(text);
                    if (!ingest::isHeaderOfInterest(std::string_view(name)))
                        continue;
                    const QString lower = toQString(name).toLower();
                    if (lower == u"retry-after")
                        event.retryAfter = toQString(text);
                    event.headers.set(lower, toQString(text));
                }
            }
            if (ingest::keepsBody(event.status)) {
                if (const Node *body = response->get("body")) {
                    const Node *string = body->get("string");
                    const std::string text = string ? string->text() : body->text();
                    if (!text.empty())
                        event.body = ingest::bodyText(text);
                }
            }
        }
        if (!problem.isEmpty()) {
            counted.onMalformed(redact::malformedRecord(sourceName, blockLine, problem));
            return;
        }
        if (!when) {
            counted.onMalformed(redact::malformedRecord(
                sourceName, blockLine,
                QStringLiteral("interaction without a readable response Date "
                               "header (cassettes record no other time)")));
            return;
        }
        event.tsMs = *when;
        identities.apply(event, authorization);
        ingest::finishEvent(event);
        counted.onEvent(std::move(event));
    };

    std::string_view line;
    while (lines.next(line)) {
        if (lines.lineNumber() == 1 && line.substr(0, 3) == "\xEF\xBB\xBF")
            line.remove_prefix(3);
        if (line.substr(0, 13) == "interactions:") {
            sawInteractions = true;
            continue;
        }
        if (!line.empty() && line.front() != ' ' && line.front() != '-') {
            flush(); // a top-level key ("version: 1") ends the list
            continue;
        }
        if (line.substr(0, 1) == "-") {
            flush();
            blockLine = lines.lineNumber();
            blockOffset = lines.lineOffset();
        }
        if (sawInteractions)
            block.emplace_back(line);
    }
    flush();
    result.events = counted.events;
    result.malformed = counted.malformed;
    result.bytesRead = lines.bytesRead();
    result.endOffset = lines.offsetAfter();
    result.endLine = lines.lineNumber();
    result.cancelled = lines.cancelled();
    if (!sawInteractions)
        result.fatalError =
            sourceName + QStringLiteral(": not a VCR cassette (no \"interactions:\" list)");
    else if (!lines.readError().isEmpty())
        result.fatalError = sourceName + u": read error: " + lines.readError();
    if (control.progress)
        control.progress(result.bytesRead, input.isSequential() ? -1 : input.size());
    return result;
}

} // namespace ts
