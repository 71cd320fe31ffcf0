#include "formatdetect.h"

#include "ingest/accesslogreader.h"
#include "ingest/azurerecordsreader.h"
#include "ingest/harreader.h"
#include "ingest/ndjsonreader.h"
#include "ingest/otlpreader.h"
#include "ingest/readerutil.h"
#include "ingest/resiliencereader.h"
#include "ingest/httpexchangereader.h"
#include "ingest/vcrreader.h"

#include <QFile>

#include <string_view>

namespace ts {

namespace {

constexpr qint64 kHeadBytes = 64 * 1024;

std::string_view skipSpace(std::string_view text)
{
    while (!text.empty() && (text.front() == ' ' || text.front() == '\n' || text.front() == '\r' ||
                             text.front() == '\t'))
        text.remove_prefix(1);
    return text;
}

// The first member name of the JSON object text starts with ('{' already at front).
std::string_view firstKey(std::string_view text)
{
    text = skipSpace(text.substr(1));
    if (text.empty() || text.front() != '"')
        return {};
    const size_t end = text.find('"', 1);
    if (end == std::string_view::npos)
        return {};
    return text.substr(1, end - 1);
}

bool containsInsensitive(std::string_view text, std::string_view lowerNeedle)
{
    if (lowerNeedle.size() > text.size())
        return false;
    for (size_t i = 0; i + lowerNeedle.size() <= text.size(); ++i) {
        size_t j = 0;
        while (j < lowerNeedle.size() &&
               std::tolower(static_cast<unsigned char>(text[i + j])) == lowerNeedle[j])
            ++j;
        if (j == lowerNeedle.size())
            return true;
    }
    return false;
}

// Delimiter counts outside quotes.
int countDelimiters(std::string_view line, char delimiter)
{
    int count = 0;
    bool quoted = false;
    for (const char c : line) {
        if (c == '"')
            quoted = !quoted;
        else if (!quoted && c == delimiter)
            ++count;
    }
    return count;
}

bool looksLikeCsv(const QList<std::string_view> &lines)
{
    if (lines.size() < 2)
        return false;
    for (const char delimiter : {',', '\t', ';'}) {
        const int header = countDelimiters(lines.at(0), delimiter);
        if (header < 2)
            continue;
        // Rows with embedded newlines make exact counts unreliable: the second line agreeing is
        // enough, as is a header of plain names.
        if (countDelimiters(lines.at(1), delimiter) == header)
            return true;
    }
    return false;
}

} // namespace

QStringList knownFormats()
{
    return {QStringLiteral("ndjson"),        QStringLiteral("har"), QStringLiteral("otlp"),
            QStringLiteral("azure-records"), QStringLiteral("csv"), QStringLiteral("access"),
            QStringLiteral("resilience"),    QStringLiteral("vcr"), QStringLiteral("http")};
}

QString detectFormat(const QByteArray &head)
{
    std::string_view text(head.constData(), static_cast<size_t>(head.size()));
    if (text.substr(0, 3) == "\xEF\xBB\xBF")
        text.remove_prefix(3);
    text = skipSpace(text);
    if (text.empty())
        return {};

    if (text.front() == '{') {
        const std::string_view key = firstKey(text);
        if (key == "log")
            return QStringLiteral("har");
        if (key == "resourceSpans")
            return QStringLiteral("otlp");
        if (key == "records")
            return QStringLiteral("azure-records");
        const size_t newline = text.find('\n');
        const std::string_view firstLine = text.substr(0, newline);
        // A canonical line: one object per line, "ts" among its members.
        if (firstLine.find("\"ts\"") != std::string_view::npos &&
            ingest::trimmed(firstLine).back() == '}')
            return QStringLiteral("ndjson");
        // Members other than the first: a HAR whose "log" is not first, OTLP with extra keys.
        if (text.find("\"resourceSpans\"") != std::string_view::npos)
            return QStringLiteral("otlp");
        if (text.find("\"log\"") != std::string_view::npos &&
            text.find("\"entries\"") != std::string_view::npos)
            return QStringLiteral("har");
        if (containsInsensitive(text, "\"resourceid\"") &&
            (containsInsensitive(text, "\"category\"")))
            return QStringLiteral("azure-records");
        if (text.find("\"records\"") != std::string_view::npos)
            return QStringLiteral("azure-records");
        if (text.find("\"ts\"") != std::string_view::npos)
            return QStringLiteral("ndjson");
        return {};
    }
    if (text.front() == '[') {
        if (containsInsensitive(text, "\"resourceid\"") &&
            containsInsensitive(text, "\"category\""))
            return QStringLiteral("azure-records");
        return {};
    }

    if (text.substr(0, 13) == "interactions:")
        return QStringLiteral("vcr");

    // Line-oriented text: look at the first lines (the last may be cut off by the head limit).
    QList<std::string_view> lines;
    std::string_view rest = text;
    while (!rest.empty() && lines.size() < 50) {
        const size_t newline = rest.find('\n');
        if (newline == std::string_view::npos && head.size() >= kHeadBytes)
            break; // a partial last line
        std::string_view line = rest.substr(0, newline);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        if (!ingest::trimmed(line).empty())
            lines.append(line);
        if (newline == std::string_view::npos)
            break;
        rest.remove_prefix(newline + 1);
    }
    if (lines.isEmpty())
        return {};

    RequestEvent probe;
    QString reason;
    if (AccessLogFormat::combined().parse(lines.at(0), probe, &reason) ||
        AccessLogFormat::common().parse(lines.at(0), probe, &reason))
        return QStringLiteral("access");
    // Raw HTTP exchanges (.http): a status or request line first, after REST-client comments.
    for (const std::string_view line : lines) {
        const std::string_view trimmed = ingest::trimmed(line);
        const bool comment = (trimmed.substr(0, 1) == "#" && trimmed.substr(0, 3) != "###") ||
                             trimmed.substr(0, 2) == "//";
        if (comment)
            continue;
        if (isHttpExchangeStart(QByteArrayView(trimmed.data(), qsizetype(trimmed.size()))))
            return QStringLiteral("http");
        break;
    }
    for (const std::string_view line : lines) {
        if (ResilienceReader::looksLikeResilienceLine(line) &&
            ResilienceReader::leadingTimestampMs(line).has_value())
            return QStringLiteral("resilience");
    }
    if (looksLikeCsv(lines))
        return QStringLiteral("csv");
    for (const std::string_view line : lines) {
        if (ResilienceReader::looksLikeResilienceLine(line))
            return QStringLiteral("resilience");
    }
    return {};
}

std::unique_ptr<LogReader> createReader(const QString &format, const ReaderOptions &options)
{
    if (format == u"ndjson")
        return std::make_unique<NdjsonReader>();
    if (format == u"har")
        return std::make_unique<HarReader>();
    if (format == u"otlp")
        return std::make_unique<OtlpReader>();
    if (format == u"azure-records")
        return std::make_unique<AzureRecordsReader>();
    if (format == u"csv")
        return std::make_unique<CsvReader>(options.csvMapping);
    if (format == u"access")
        return std::make_unique<AccessLogReader>(options.accessLogFormat);
    if (format == u"resilience")
        return std::make_unique<ResilienceReader>();
    if (format == u"vcr")
        return std::make_unique<VcrReader>();
    if (format == u"http")
        return std::make_unique<HttpExchangeReader>();
    return nullptr;
}

QString detectFileFormat(const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error)
            *error = path + u": " + file.errorString();
        return {};
    }
    const QByteArray head = file.read(kHeadBytes);
    const QString format = detectFormat(head);
    if (format.isEmpty() && error) {
        *error = path + QStringLiteral(": cannot tell the format from the content (known: %1); "
                                       "name it with --format")
                            .arg(knownFormats().join(QStringLiteral(", ")));
    }
    return format;
}

} // namespace ts
