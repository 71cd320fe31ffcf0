#include "readerutil.h"

#include "core/timeparse.h"
#include "ingest/redaction.h"

#include <QIODevice>

#include <algorithm>
#include <charconv>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ts::ingest {

QString toQString(std::string_view sv)
{
    // URLs, ids and most bodies are ASCII: widen them 16 bytes at a time straight into the
    // string, and leave anything else to Qt's UTF-8 decoder (which validates and replaces).
    const auto size = static_cast<qsizetype>(sv.size());
    const auto *bytes = reinterpret_cast<const unsigned char *>(sv.data());
    qsizetype ascii = 0;
#if defined(__SSE2__)
    for (; ascii + 16 <= size; ascii += 16) {
        const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i *>(bytes + ascii));
        if (_mm_movemask_epi8(chunk) != 0)
            break;
    }
#endif
    while (ascii < size && bytes[ascii] < 0x80)
        ++ascii;
    if (ascii < size || size == 0)
        return QString::fromUtf8(sv.data(), size);
    QString text(size, Qt::Uninitialized);
    char16_t *out = reinterpret_cast<char16_t *>(text.data());
    qsizetype i = 0;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    for (; i + 16 <= size; i += 16) {
        const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i *>(bytes + i));
        _mm_storeu_si128(reinterpret_cast<__m128i *>(out + i), _mm_unpacklo_epi8(chunk, zero));
        _mm_storeu_si128(reinterpret_cast<__m128i *>(out + i + 8), _mm_unpackhi_epi8(chunk, zero));
    }
#endif
    for (; i < size; ++i)
        out[i] = bytes[i];
    return text;
}

namespace {

constexpr qsizetype kChunkSize = 4 * 1024 * 1024;
constexpr qint64 kProgressEvery = 8 * 1024 * 1024;
constexpr quint32 kCancelCheckEvery = 4096;

} // namespace

LineSource::LineSource(QIODevice &device, const ReadControl &control)
    : m_device(device), m_control(control)
{
    m_total = device.isSequential() ? -1 : device.size();
    m_bufferOffset = device.pos();
    m_offsetAfter = m_bufferOffset;
    m_lineNumber = control.startLine;
    // Small inputs get a small buffer (a test file, a POST body); large ones 4 MiB chunks.
    m_chunkSize = m_total < 0
                      ? kChunkSize
                      : std::clamp<qint64>(m_total - m_bufferOffset + 1, 64 * 1024, kChunkSize);
    m_buffer.reserve(m_chunkSize * 2);
}

bool LineSource::fill()
{
    if (m_eof)
        return false;
    if (m_begin > 0) {
        m_buffer.remove(0, m_begin);
        m_bufferOffset += m_begin;
        m_begin = 0;
    }
    const qsizetype oldSize = m_buffer.size();
    m_buffer.resize(oldSize + m_chunkSize);
    const qint64 got = m_device.read(m_buffer.data() + oldSize, m_chunkSize);
    if (got < 0) {
        m_readError = m_device.errorString();
        m_buffer.resize(oldSize);
        m_eof = true;
        return false;
    }
    m_buffer.resize(oldSize + got);
    m_bytesRead += got;
    if (got == 0) {
        // Sequential devices (stdin, pipes) may simply have nothing yet; wait for more.
        if (m_device.isSequential() && !m_device.atEnd() && m_device.waitForReadyRead(-1))
            return fill();
        m_eof = true;
        return false;
    }
    if (m_control.progress && m_bytesRead - m_lastProgress >= kProgressEvery) {
        m_lastProgress = m_bytesRead;
        m_control.progress(m_bytesRead, m_total);
    }
    return true;
}

bool LineSource::next(std::string_view &line)
{
    if (m_control.cancel && ++m_linesSinceCancelCheck >= kCancelCheckEvery) {
        m_linesSinceCancelCheck = 0;
        if (m_control.cancel->load(std::memory_order_relaxed)) {
            m_cancelled = true;
            return false;
        }
    }
    qsizetype searchFrom = m_begin;
    for (;;) {
        const char *base = m_buffer.constData();
        const auto *newline = static_cast<const char *>(std::memchr(
            base + searchFrom, '\n', static_cast<size_t>(m_buffer.size() - searchFrom)));
        if (newline) {
            const qsizetype end = newline - base;
            qsizetype lineEnd = end;
            if (lineEnd > m_begin && base[lineEnd - 1] == '\r')
                --lineEnd;
            line = std::string_view(base + m_begin, static_cast<size_t>(lineEnd - m_begin));
            m_lineOffset = m_bufferOffset + m_begin;
            m_begin = end + 1;
            m_offsetAfter = m_bufferOffset + m_begin;
            ++m_lineNumber;
            return true;
        }
        const qsizetype scanned = m_buffer.size() - m_begin;
        if (!fill()) {
            if (m_begin >= m_buffer.size())
                return false;
            // The last line has no terminator.
            const char *data = m_buffer.constData();
            qsizetype lineEnd = m_buffer.size();
            if (lineEnd > m_begin && data[lineEnd - 1] == '\r')
                --lineEnd;
            line = std::string_view(data + m_begin, static_cast<size_t>(lineEnd - m_begin));
            m_lineOffset = m_bufferOffset + m_begin;
            m_begin = m_buffer.size();
            m_offsetAfter = m_bufferOffset + m_begin;
            ++m_lineNumber;
            return true;
        }
        // fill() moved the unconsumed bytes to the front: continue where the search stopped.
        searchFrom = m_begin + scanned;
    }
}

void LineSource::checkpoint() const
{
    if (m_control.checkpoint)
        m_control.checkpoint(m_offsetAfter, m_lineNumber);
}

void finishEvent(RequestEvent &event, QStringView authorization)
{
    if (!authorization.isEmpty())
        redact::applyIdentityFromAuthorization(event, authorization);
    redact::redactEvent(event);
}

void BearerIdentityCache::apply(RequestEvent &event, const QString &authorization)
{
    if (authorization.isEmpty())
        return;
    if (authorization != m_lastAuthorization) {
        m_lastAuthorization = authorization;
        const auto claims = redact::claimsFromAuthorization(authorization);
        m_identity =
            claims ? (claims->user.isEmpty() ? claims->objectId : claims->user) : QString();
        m_app = claims ? claims->app : QString();
        m_tenant = claims ? claims->tenant : QString();
    }
    if (event.identity.isEmpty())
        event.identity = m_identity;
    if (event.app.isEmpty())
        event.app = m_app;
    if (event.tenant.isEmpty())
        event.tenant = m_tenant;
}

namespace {

// Header names are ASCII; they are copied lower-case into a small stack buffer so the checks
// below are plain byte comparisons (QString::contains/startsWith showed up in profiles).
constexpr size_t kMaxHeaderName = 96;

template <typename Char>
std::optional<std::string_view> lowerAscii(const Char *data, size_t size, char *buffer)
{
    if (size > kMaxHeaderName)
        return std::nullopt;
    for (size_t i = 0; i < size; ++i) {
        const auto c = static_cast<char32_t>(data[i]);
        if (c > 0x7F)
            return std::nullopt;
        buffer[i] = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    return std::string_view(buffer, size);
}

bool startsWith(std::string_view text, std::string_view prefix)
{
    return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

bool interesting(std::string_view n)
{
    switch (n.empty() ? '\0' : n.front()) {
    case 'x':
        return startsWith(n, "x-ms-") || startsWith(n, "x-ratelimit") ||
               startsWith(n, "x-rate-limit") || n == "x-request-id" || n == "x-correlation-id" ||
               n.find("throttl") != std::string_view::npos;
    case 'r':
        return startsWith(n, "retry-after") || startsWith(n, "ratelimit") || n == "request-id";
    case 'c':
        return n == "client-request-id";
    default:
        return n.find("throttl") != std::string_view::npos;
    }
}

bool requestId(std::string_view n)
{
    return n == "request-id" || n == "x-ms-request-id" || n == "client-request-id" ||
           n == "x-ms-client-request-id" || n == "x-request-id";
}

} // namespace

bool isHeaderOfInterest(QStringView name)
{
    char buffer[kMaxHeaderName];
    const auto lower = lowerAscii(name.utf16(), size_t(name.size()), buffer);
    return lower && interesting(*lower);
}

bool isHeaderOfInterest(std::string_view name)
{
    char buffer[kMaxHeaderName];
    const auto lower = lowerAscii(name.data(), name.size(), buffer);
    return lower && interesting(*lower);
}

bool isRequestIdHeader(QStringView name)
{
    char buffer[kMaxHeaderName];
    const auto lower = lowerAscii(name.utf16(), size_t(name.size()), buffer);
    return lower && requestId(*lower);
}

bool isRequestIdHeader(std::string_view name)
{
    char buffer[kMaxHeaderName];
    const auto lower = lowerAscii(name.data(), name.size(), buffer);
    return lower && requestId(*lower);
}

QString bodyText(std::string_view utf8)
{
    if (static_cast<qsizetype>(utf8.size()) > kMaxBodyBytes) {
        size_t cut = static_cast<size_t>(kMaxBodyBytes);
        // Step back over UTF-8 continuation bytes so no character is split.
        while (cut > 0 && (static_cast<unsigned char>(utf8[cut]) & 0xC0) == 0x80)
            --cut;
        utf8 = utf8.substr(0, cut);
    }
    return toQString(utf8);
}

void appendJsonEscaped(QByteArray &out, std::string_view utf8)
{
    static constexpr char kHex[] = "0123456789abcdef";
    out.append('"');
    size_t plainStart = 0;
    for (size_t i = 0; i < utf8.size(); ++i) {
        const auto c = static_cast<unsigned char>(utf8[i]);
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        out.append(utf8.data() + plainStart, static_cast<qsizetype>(i - plainStart));
        plainStart = i + 1;
        switch (c) {
        case '"':
            out.append("\\\"", 2);
            break;
        case '\\':
            out.append("\\\\", 2);
            break;
        case '\n':
            out.append("\\n", 2);
            break;
        case '\r':
            out.append("\\r", 2);
            break;
        case '\t':
            out.append("\\t", 2);
            break;
        default: {
            const char escaped[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
            out.append(escaped, 6);
        }
        }
    }
    out.append(utf8.data() + plainStart, static_cast<qsizetype>(utf8.size() - plainStart));
    out.append('"');
}

void ExtraJsonWriter::appendKey(std::string_view key)
{
    m_json.append(m_json.isEmpty() ? '{' : ',');
    appendJsonEscaped(m_json, key);
    m_json.append(':');
}

void ExtraJsonWriter::addString(std::string_view key, std::string_view utf8Value)
{
    appendKey(key);
    appendJsonEscaped(m_json, utf8Value);
}

void ExtraJsonWriter::addString(std::string_view key, const QString &value)
{
    const QByteArray utf8 = value.toUtf8();
    addString(key, std::string_view(utf8.constData(), static_cast<size_t>(utf8.size())));
}

void ExtraJsonWriter::addRaw(std::string_view key, std::string_view json)
{
    appendKey(key);
    m_json.append(json.data(), static_cast<qsizetype>(json.size()));
}

QByteArray ExtraJsonWriter::take()
{
    if (m_json.isEmpty())
        return {};
    m_json.append('}');
    QByteArray result = std::move(m_json);
    m_json = QByteArray();
    return result;
}

std::string_view trimmed(std::string_view text)
{
    while (!text.empty() && static_cast<unsigned char>(text.front()) <= ' ')
        text.remove_prefix(1);
    while (!text.empty() && static_cast<unsigned char>(text.back()) <= ' ')
        text.remove_suffix(1);
    return text;
}

std::optional<double> parseNumber(std::string_view text)
{
    text = trimmed(text);
    if (text.empty())
        return std::nullopt;
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

namespace {

int monthFromAbbreviation(std::string_view name)
{
    static constexpr std::string_view kMonths[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                                   "jul", "aug", "sep", "oct", "nov", "dec"};
    if (name.size() != 3)
        return 0;
    char lower[3];
    for (int i = 0; i < 3; ++i)
        lower[i] = static_cast<char>(name[static_cast<size_t>(i)] | 0x20);
    for (int i = 0; i < 12; ++i) {
        if (std::string_view(lower, 3) == kMonths[i])
            return i + 1;
    }
    return 0;
}

// Reads 1..maxDigits digits at pos, advancing it.
bool readInt(std::string_view s, size_t &pos, int maxDigits, int &out)
{
    int value = 0;
    int count = 0;
    while (pos < s.size() && count < maxDigits && s[pos] >= '0' && s[pos] <= '9') {
        value = value * 10 + (s[pos] - '0');
        ++pos;
        ++count;
    }
    out = value;
    return count > 0;
}

// "+0000", "+00:00", "-05:30", "Z", "UTC", "(UTC)"; empty = UTC.
bool readOffsetMinutes(std::string_view s, size_t pos, qint64 &offsetMinutes)
{
    offsetMinutes = 0;
    std::string_view rest = trimmed(s.substr(std::min(pos, s.size())));
    if (rest.empty() || rest == "Z" || rest == "UTC" || rest == "(UTC)" || rest == "GMT")
        return true;
    const char sign = rest.front();
    if (sign != '+' && sign != '-')
        return false;
    size_t p = 1;
    int hours = 0;
    int minutes = 0;
    size_t before = p;
    if (!readInt(rest, p, 2, hours) || p - before != 2)
        return false;
    if (p < rest.size() && rest[p] == ':')
        ++p;
    if (p < rest.size()) {
        before = p;
        if (!readInt(rest, p, 2, minutes) || p - before != 2)
            return false;
    }
    if (p != rest.size() || hours > 23 || minutes > 59)
        return false;
    offsetMinutes = (hours * 60 + minutes) * (sign == '-' ? -1 : 1);
    return true;
}

qint64 readFractionMs(std::string_view s, size_t &pos)
{
    qint64 millis = 0;
    int scale = 100;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
        millis += (s[pos] - '0') * scale;
        scale /= 10;
        ++pos;
    }
    return millis;
}

} // namespace

std::optional<qint64> parseClfTimeMs(std::string_view s)
{
    // 17/May/2015:10:05:03 +0000
    size_t pos = 0;
    int day, year, hour, minute, second;
    if (!readInt(s, pos, 2, day) || pos >= s.size() || s[pos] != '/')
        return std::nullopt;
    ++pos;
    if (pos + 4 > s.size() || s[pos + 3] != '/')
        return std::nullopt;
    const int month = monthFromAbbreviation(s.substr(pos, 3));
    if (month == 0)
        return std::nullopt;
    pos += 4;
    if (!readInt(s, pos, 4, year) || pos >= s.size() || s[pos] != ':')
        return std::nullopt;
    ++pos;
    if (!readInt(s, pos, 2, hour) || pos >= s.size() || s[pos] != ':')
        return std::nullopt;
    ++pos;
    if (!readInt(s, pos, 2, minute) || pos >= s.size() || s[pos] != ':')
        return std::nullopt;
    ++pos;
    if (!readInt(s, pos, 2, second))
        return std::nullopt;
    qint64 millis = 0;
    if (pos < s.size() && s[pos] == '.') {
        ++pos;
        millis = readFractionMs(s, pos);
    }
    qint64 offset = 0;
    if (!readOffsetMinutes(s, pos, offset))
        return std::nullopt;
    return civilToMs(year, month, day, hour, minute, second, millis, offset);
}

std::optional<qint64> parseUsDateTimeMs(std::string_view s)
{
    // M/D/YYYY[,] h:mm[:ss[.fff]] [AM|PM] [offset]
    s = trimmed(s);
    size_t pos = 0;
    int month, day, year, hour, minute, second = 0;
    if (!readInt(s, pos, 2, month) || pos >= s.size() || s[pos] != '/')
        return std::nullopt;
    ++pos;
    if (!readInt(s, pos, 2, day) || pos >= s.size() || s[pos] != '/')
        return std::nullopt;
    ++pos;
    const size_t yearStart = pos;
    if (!readInt(s, pos, 4, year) || pos - yearStart != 4)
        return std::nullopt;
    if (pos < s.size() && s[pos] == ',')
        ++pos;
    if (pos >= s.size() || s[pos] != ' ')
        return std::nullopt;
    while (pos < s.size() && s[pos] == ' ')
        ++pos;
    if (!readInt(s, pos, 2, hour) || pos >= s.size() || s[pos] != ':')
        return std::nullopt;
    ++pos;
    if (!readInt(s, pos, 2, minute))
        return std::nullopt;
    qint64 millis = 0;
    if (pos < s.size() && s[pos] == ':') {
        ++pos;
        if (!readInt(s, pos, 2, second))
            return std::nullopt;
        if (pos < s.size() && s[pos] == '.') {
            ++pos;
            millis = readFractionMs(s, pos);
        }
    }
    while (pos < s.size() && s[pos] == ' ')
        ++pos;
    if (pos + 1 < s.size() && (s[pos + 1] == 'M' || s[pos + 1] == 'm') &&
        (s[pos] == 'A' || s[pos] == 'a' || s[pos] == 'P' || s[pos] == 'p')) {
        if (hour < 1 || hour > 12)
            return std::nullopt;
        const bool pm = s[pos] == 'P' || s[pos] == 'p';
        hour = hour % 12 + (pm ? 12 : 0);
        pos += 2;
    }
    qint64 offset = 0;
    if (!readOffsetMinutes(s, pos, offset))
        return std::nullopt;
    return civilToMs(year, month, day, hour, minute, second, millis, offset);
}

std::optional<qint64> parseAnyTimestampMs(std::string_view text)
{
    text = trimmed(text);
    if (text.empty())
        return std::nullopt;
    if (auto ms = parseRfc3339Ms(text))
        return ms;
    if (text.find('/') != std::string_view::npos) {
        if (auto ms = parseUsDateTimeMs(text))
            return ms;
        if (auto ms = parseClfTimeMs(text))
            return ms;
    }
    if (auto number = parseNumber(text); number && *number > 0)
        return unixNumberToMs(*number); // nullopt when out of range
    return std::nullopt;
}

} // namespace ts::ingest
