#include "throttlesignals.h"

#include "core/textsearch.h"
#include "core/timeparse.h"

#include <QLatin1StringView>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

// Everything here is hand scanning over QStringView: these functions run for every event of a
// report (a million lines a second), so the common 2xx event must cost a few comparisons and no
// allocation, and even a 429 body must not go through QRegularExpression or a DOM.

namespace ts::throttle {

namespace {

using namespace Qt::StringLiterals;

// A QStringView literal whose length is known at compile time. A plain u"..."_sv converted to
// QStringView at run time goes through qustrlen, which showed up in the per-header profile.
constexpr QStringView operator""_sv(const char16_t *text, size_t size)
{
    return QStringView(text, qsizetype(size));
}

// Advice further away than this is not advice but garbage (a mangled number, a date in the
// wrong century): it is rejected so that one bad record cannot push "next safe send" a
// thousand years into the future.
constexpr qint64 kMaxAdviceMs = Q_INT64_C(366) * 24 * 3600 * 1000;
// Integer parts longer than this cannot be believable and would overflow the scaling.
constexpr qsizetype kMaxIntegerDigits = 15;

constexpr bool isDigit(QChar c)
{
    return c.unicode() >= u'0' && c.unicode() <= u'9';
}
constexpr bool isAsciiAlpha(QChar c)
{
    const char16_t u = c.unicode();
    return (u >= u'a' && u <= u'z') || (u >= u'A' && u <= u'Z');
}
constexpr bool isAsciiAlnum(QChar c)
{
    return isDigit(c) || isAsciiAlpha(c);
}
constexpr bool isSpace(QChar c)
{
    const char16_t u = c.unicode();
    return u == u' ' || u == u'\t' || u == u'\r' || u == u'\n' || u == 0x00a0;
}

QStringView trim(QStringView v)
{
    qsizetype begin = 0;
    qsizetype end = v.size();
    while (begin < end && isSpace(v[begin]))
        ++begin;
    while (end > begin && isSpace(v[end - 1]))
        --end;
    return v.sliced(begin, end - begin);
}

// ASCII-only case-insensitive helpers. Every needle here is ASCII, and Qt's Unicode case
// folding (QtPrivate::findString) was 10x slower on 429 bodies: it dominated a profile.
constexpr char16_t asciiLower(char16_t c)
{
    return (c >= u'A' && c <= u'Z') ? char16_t(c + 32) : c;
}

bool equalsCi(QStringView a, QLatin1StringView b)
{
    if (a.size() != b.size())
        return false;
    const char16_t *d = a.utf16();
    for (qsizetype i = 0; i < a.size(); ++i) {
        if (asciiLower(d[i]) != asciiLower(char16_t(b[i].unicode())))
            return false;
    }
    return true;
}

bool startsWithCi(QStringView a, QLatin1StringView b)
{
    return a.size() >= b.size() && equalsCi(a.first(b.size()), b);
}

// Whether `prefix` (any case) is a prefix of the ASCII word.
bool startsWithCi(QLatin1StringView word, QStringView prefix)
{
    if (prefix.size() > word.size())
        return false;
    for (qsizetype i = 0; i < prefix.size(); ++i) {
        if (asciiLower(prefix[i].unicode()) != asciiLower(word[i].unicode()))
            return false;
    }
    return true;
}

qsizetype indexOfCi(QStringView s, QLatin1StringView needle, qsizetype from = 0)
{
    const qsizetype m = needle.size();
    if (m == 0)
        return from <= s.size() ? from : -1;
    const char16_t *d = s.utf16();
    const char16_t first = asciiLower(char16_t(needle[0].unicode()));
    const char16_t firstUpper = (first >= u'a' && first <= u'z') ? char16_t(first - 32) : first;
    const qsizetype last = s.size() - m; // the last start where the needle fits
    for (qsizetype i = from < 0 ? 0 : from; i <= last; ++i) {
        // Candidates by the first character, either case, eight units at a time: bodies are
        // a few hundred characters and are searched for several words.
        const qsizetype skip = text::findEither(d + i, last + 1 - i, first, firstUpper);
        if (skip < 0)
            return -1;
        i += skip;
        qsizetype k = 1;
        while (k < m && asciiLower(d[i + k]) == asciiLower(char16_t(needle[k].unicode())))
            ++k;
        if (k == m)
            return i;
    }
    return -1;
}

bool containsCi(QStringView s, QLatin1StringView needle)
{
    return indexOfCi(s, needle) >= 0;
}

// A non-negative decimal ("55", "2.128", "1500.25", ".5"; no sign, no exponent) scaled by
// 10^decimals, rounded *up*: advice is a lower bound, so rounding down would let a client send
// a millisecond too early. Exact integer arithmetic, no double rounding surprises (2.128 s is
// 2128 ms, not 2129).
std::optional<qint64> parseScaledCeil(QStringView text, int decimals)
{
    const QStringView v = trim(text);
    if (v.isEmpty())
        return std::nullopt;
    qsizetype i = 0;
    qint64 integer = 0;
    qsizetype integerDigits = 0;
    bool sawIntegerDigit = false;
    while (i < v.size() && v[i] == u'0') { // leading zeros do not count against the limit
        sawIntegerDigit = true;
        ++i;
    }
    while (i < v.size() && isDigit(v[i])) {
        if (++integerDigits > kMaxIntegerDigits)
            return std::nullopt;
        integer = integer * 10 + (v[i].unicode() - u'0');
        sawIntegerDigit = true;
        ++i;
    }
    qint64 fraction = 0;
    int fractionDigits = 0;
    bool roundUp = false;
    bool sawFractionDigit = false;
    if (i < v.size() && v[i] == u'.') {
        ++i;
        while (i < v.size() && isDigit(v[i])) {
            sawFractionDigit = true;
            const int digit = v[i].unicode() - u'0';
            if (fractionDigits < decimals) {
                fraction = fraction * 10 + digit;
                ++fractionDigits;
            } else if (digit != 0) {
                roundUp = true;
            }
            ++i;
        }
    }
    if (i != v.size() || (!sawIntegerDigit && !sawFractionDigit))
        return std::nullopt;
    qint64 scale = 1;
    for (int d = 0; d < decimals; ++d)
        scale *= 10;
    while (fractionDigits < decimals) {
        fraction *= 10;
        ++fractionDigits;
    }
    return integer * scale + fraction + (roundUp ? 1 : 0);
}

// A plain non-negative decimal as a double ("0.85", "85"; "1e3", signs, "inf" are rejected).
// Digits are gathered as an integer and divided once, so "0.85" is the double nearest 0.85
// (summing 8*0.1 + 5*0.01 is not).
std::optional<double> parseDecimal(QStringView text)
{
    const QStringView v = trim(text);
    qsizetype i = 0;
    quint64 mantissa = 0;
    int significant = 0;
    int exponent = 0; // value = mantissa * 10^exponent
    bool any = false;
    auto addDigit = [&](int digit, bool fractional) {
        any = true;
        if (significant < 18) {
            mantissa = mantissa * 10 + quint64(digit);
            if (mantissa != 0)
                ++significant;
            if (fractional)
                --exponent;
        } else if (!fractional) {
            ++exponent; // integer digits beyond precision still scale the value
        }
    };
    while (i < v.size() && isDigit(v[i]))
        addDigit(v[i++].unicode() - u'0', false);
    if (i < v.size() && v[i] == u'.') {
        ++i;
        while (i < v.size() && isDigit(v[i]))
            addDigit(v[i++].unicode() - u'0', true);
    }
    if (!any || i != v.size())
        return std::nullopt;
    // Powers of ten up to 1e22 are exact doubles: one multiplication or division is correctly
    // rounded, and a table lookup is far cheaper than std::pow on this per-header path.
    static constexpr std::array<double, 23> kPow10 = {
        1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const int magnitude = exponent >= 0 ? exponent : -exponent;
    const double scale =
        magnitude < int(kPow10.size()) ? kPow10[size_t(magnitude)] : std::pow(10.0, magnitude);
    const double value = exponent >= 0 ? double(mantissa) * scale : double(mantissa) / scale;
    if (!std::isfinite(value))
        return std::nullopt;
    return value;
}

// Leading unsigned integer of a field ("100" in "100, 100;w=60"); nullopt when none.
std::optional<double> leadingNumber(QStringView text)
{
    const QStringView v = trim(text);
    qsizetype end = 0;
    while (end < v.size() && (isDigit(v[end]) || v[end] == u'.'))
        ++end;
    if (end == 0)
        return std::nullopt;
    return parseDecimal(v.first(end));
}

std::optional<qint64> secondsToMs(QStringView text)
{
    const auto ms = parseScaledCeil(text, 3);
    if (!ms || *ms > kMaxAdviceMs)
        return std::nullopt;
    return ms;
}

// ---- HTTP-date ---------------------------------------------------------------------------

int monthFromName(QStringView name)
{
    static constexpr std::array<QLatin1StringView, 12> months = {
        "jan"_L1, "feb"_L1, "mar"_L1, "apr"_L1, "may"_L1, "jun"_L1,
        "jul"_L1, "aug"_L1, "sep"_L1, "oct"_L1, "nov"_L1, "dec"_L1};
    if (name.size() != 3)
        return 0;
    for (int m = 0; m < 12; ++m) {
        if (equalsCi(name.first(3), months[size_t(m)]))
            return m + 1;
    }
    return 0;
}

// Reads an unsigned integer of minDigits..maxDigits digits at pos.
bool readNumber(QStringView s, qsizetype &pos, int minDigits, int maxDigits, int &out)
{
    int value = 0;
    int count = 0;
    while (pos < s.size() && isDigit(s[pos]) && count < maxDigits) {
        value = value * 10 + (s[pos].unicode() - u'0');
        ++pos;
        ++count;
    }
    if (count < minDigits || (pos < s.size() && isDigit(s[pos])))
        return false;
    out = value;
    return true;
}

void skipSpaces(QStringView s, qsizetype &pos)
{
    while (pos < s.size() && isSpace(s[pos]))
        ++pos;
}

bool readTime(QStringView s, qsizetype &pos, int &h, int &m, int &sec)
{
    if (!readNumber(s, pos, 1, 2, h) || pos >= s.size() || s[pos] != u':')
        return false;
    ++pos;
    if (!readNumber(s, pos, 2, 2, m) || pos >= s.size() || s[pos] != u':')
        return false;
    ++pos;
    return readNumber(s, pos, 2, 2, sec);
}

// The zone of an HTTP-date must be GMT (RFC 9110); "UTC", "UT", "Z" and "+0000" are what
// sloppy servers and loggers write instead and mean the same. Anything else is not trusted.
bool acceptZone(QStringView rest)
{
    const QStringView zone = trim(rest);
    return zone.isEmpty() || equalsCi(zone, "GMT"_L1) || equalsCi(zone, "UTC"_L1) ||
           equalsCi(zone, "UT"_L1) || equalsCi(zone, "Z"_L1) || zone == u"+0000"_sv ||
           zone == u"-0000"_sv;
}

// IMF-fixdate "Sun, 06 Nov 1994 08:49:37 GMT", RFC 850 "Sunday, 06-Nov-94 08:49:37 GMT",
// asctime "Sun Nov  6 08:49:37 1994". The weekday is not cross-checked: it carries no
// information and servers get it wrong.
std::optional<qint64> parseHttpDateMs(QStringView text)
{
    const QStringView s = trim(text);
    qsizetype pos = 0;
    while (pos < s.size() && isAsciiAlpha(s[pos]))
        ++pos;
    if (pos < 3)
        return std::nullopt;
    int year = 0, month = 0, day = 0, h = 0, m = 0, sec = 0;
    if (pos < s.size() && s[pos] == u',') {
        ++pos;
        skipSpaces(s, pos);
        if (!readNumber(s, pos, 1, 2, day) || pos >= s.size())
            return std::nullopt;
        const bool rfc850 = s[pos] == u'-';
        if (!rfc850 && !isSpace(s[pos]))
            return std::nullopt;
        ++pos;
        skipSpaces(s, pos);
        qsizetype monthEnd = pos;
        while (monthEnd < s.size() && isAsciiAlpha(s[monthEnd]))
            ++monthEnd;
        if (monthEnd - pos < 3)
            return std::nullopt;
        month = monthFromName(s.sliced(pos, monthEnd - pos));
        pos = monthEnd;
        if (month == 0 || pos >= s.size())
            return std::nullopt;
        if (rfc850) {
            if (s[pos] != u'-')
                return std::nullopt;
            ++pos;
            const qsizetype yearStart = pos;
            if (!readNumber(s, pos, 2, 4, year))
                return std::nullopt;
            if (pos - yearStart == 2) // RFC 9110: two-digit years are read as the nearest past
                year += year < 70 ? 2000 : 1900;
            else if (pos - yearStart != 4)
                return std::nullopt;
        } else {
            skipSpaces(s, pos);
            if (!readNumber(s, pos, 4, 4, year))
                return std::nullopt;
        }
        skipSpaces(s, pos);
        if (!readTime(s, pos, h, m, sec) || !acceptZone(s.sliced(pos)))
            return std::nullopt;
    } else {
        // asctime: weekday SP month SP day(padded) SP time SP year
        skipSpaces(s, pos);
        qsizetype monthEnd = pos;
        while (monthEnd < s.size() && isAsciiAlpha(s[monthEnd]))
            ++monthEnd;
        if (monthEnd - pos < 3)
            return std::nullopt;
        month = monthFromName(s.sliced(pos, monthEnd - pos));
        pos = monthEnd;
        skipSpaces(s, pos);
        if (month == 0 || !readNumber(s, pos, 1, 2, day))
            return std::nullopt;
        skipSpaces(s, pos);
        if (!readTime(s, pos, h, m, sec))
            return std::nullopt;
        skipSpaces(s, pos);
        if (!readNumber(s, pos, 4, 4, year))
            return std::nullopt;
        if (!acceptZone(s.sliced(pos)))
            return std::nullopt;
    }
    return civilToMs(year, month, day, h, m, sec);
}

// ---- Error-code scanning -------------------------------------------------------------------

// Codes that only restate the HTTP status. When one of these is the outer code and a more
// specific service code is present (OneNote 20166, SharePoint activityLimitReached), operators
// group by the specific one.
bool isGenericCode(QStringView code)
{
    if (code.size() == 3 && isDigit(code[0]) && isDigit(code[1]) && isDigit(code[2]))
        return true; // an HTTP status echoed as a code ("429")
    static constexpr std::array<QLatin1StringView, 7> generic = {
        "TooManyRequests"_L1,         "ServiceUnavailable"_L1,
        "generalException"_L1,        "UnknownError"_L1,
        "InternalServerError"_L1,     "Throttled"_L1,
        "TooManyRequestsException"_L1};
    for (const auto &g : generic) {
        if (equalsCi(code, g))
            return true;
    }
    return false;
}

// A tolerant walk over (possibly truncated, possibly invalid) JSON that records the codes of
// the shapes Throttlescope knows. It never builds a DOM, stops silently at the first syntax
// error and keeps what it has read so far: a body cut at 1 KiB still yields its errorCode.
class ErrorJsonWalker
{
public:
    explicit ErrorJsonWalker(QStringView text) : m_s(text) {}

    QString fabricCode;      // top-level "errorCode"
    QString rootCode;        // top-level "code" (some APIs put it there)
    QStringList errorChain;  // error.code, error.innerError.code, ... outermost first
    QStringList detailCodes; // moreDetails[].errorCode, error.details[].code
    std::optional<bool> isRetriable;

    void run()
    {
        skipWs();
        if (m_pos < m_s.size() && m_s[m_pos] == u'{')
            value(Role::Root, 0);
    }

private:
    enum class Role : quint8 { Root, Error, Details, DetailItem, Other };
    static constexpr int kMaxDepth = 24;

    QStringView m_s;
    qsizetype m_pos = 0;

    void skipWs()
    {
        while (m_pos < m_s.size() && isSpace(m_s[m_pos]))
            ++m_pos;
    }

    // After a member or an element: ',' (another follows), the closing bracket, or a syntax error.
    enum class Next { Another, Closed, Broken };
    Next separatorOrClose(QChar close)
    {
        skipWs();
        if (m_pos >= m_s.size())
            return Next::Broken;
        if (m_s[m_pos] == u',') {
            ++m_pos;
            return Next::Another;
        }
        if (m_s[m_pos] == close) {
            ++m_pos;
            return Next::Closed;
        }
        return Next::Broken;
    }

    // Reads a JSON string at m_pos (which is '"'); returns the raw (still escaped) content.
    std::optional<QStringView> rawString()
    {
        ++m_pos;
        const qsizetype start = m_pos;
        while (m_pos < m_s.size()) {
            const QChar c = m_s[m_pos];
            if (c == u'\\') {
                m_pos += 2;
                continue;
            }
            if (c == u'"') {
                const QStringView raw = m_s.sliced(start, m_pos - start);
                ++m_pos;
                return raw;
            }
            ++m_pos;
        }
        return std::nullopt; // truncated
    }

    static QString unescape(QStringView raw)
    {
        if (!raw.contains(u'\\'))
            return raw.toString();
        QString out;
        out.reserve(raw.size());
        for (qsizetype i = 0; i < raw.size(); ++i) {
            if (raw[i] != u'\\' || i + 1 >= raw.size()) {
                out.append(raw[i]);
                continue;
            }
            const QChar e = raw[++i];
            switch (e.unicode()) {
            case u'n':
                out.append(u'\n');
                break;
            case u't':
                out.append(u'\t');
                break;
            case u'r':
                out.append(u'\r');
                break;
            case u'b':
                out.append(u'\b');
                break;
            case u'f':
                out.append(u'\f');
                break;
            case u'u':
                if (i + 4 < raw.size()) {
                    bool ok = false;
                    const ushort code = raw.sliced(i + 1, 4).toUShort(&ok, 16);
                    if (ok) {
                        out.append(QChar(code));
                        i += 4;
                    }
                }
                break;
            default:
                out.append(e);
                break;
            }
        }
        return out;
    }

    // Skips or descends into one value. Returns false on truncation / syntax error.
    bool value(Role role, int depth)
    {
        skipWs();
        if (m_pos >= m_s.size() || depth > kMaxDepth)
            return false;
        const QChar c = m_s[m_pos];
        if (c == u'{')
            return object(role, depth);
        if (c == u'[')
            return array(role, depth);
        if (c == u'"')
            return rawString().has_value();
        // literal or number: skip to the next structural character
        while (m_pos < m_s.size()) {
            const QChar d = m_s[m_pos];
            if (d == u',' || d == u'}' || d == u']' || isSpace(d))
                return true;
            ++m_pos;
        }
        return false;
    }

    bool array(Role role, int depth)
    {
        ++m_pos; // '['
        const Role itemRole = role == Role::Details ? Role::DetailItem : Role::Other;
        skipWs();
        if (m_pos < m_s.size() && m_s[m_pos] == u']') {
            ++m_pos;
            return true;
        }
        while (m_pos < m_s.size()) {
            if (!value(itemRole, depth + 1))
                return false;
            const Next next = separatorOrClose(u']');
            if (next == Next::Another)
                continue;
            return next == Next::Closed;
        }
        return false;
    }

    Role childRole(Role parent, QStringView key) const
    {
        if (parent == Role::Root && (equalsCi(key, "error"_L1) || equalsCi(key, "odata.error"_L1)))
            return Role::Error;
        if (parent == Role::Error && equalsCi(key, "innerError"_L1))
            return Role::Error; // Graph nests innerError (also spelled innererror) any depth
        if ((parent == Role::Root && equalsCi(key, "moreDetails"_L1)) ||
            (parent == Role::Error && equalsCi(key, "details"_L1)))
            return Role::Details;
        return Role::Other;
    }

    void stringMember(Role role, QStringView key, QStringView raw)
    {
        if (raw.isEmpty())
            return;
        switch (role) {
        case Role::Root:
            if (equalsCi(key, "errorCode"_L1) && fabricCode.isEmpty())
                fabricCode = unescape(raw);
            else if (equalsCi(key, "code"_L1) && rootCode.isEmpty())
                rootCode = unescape(raw);
            else if (equalsCi(key, "error"_L1) && rootCode.isEmpty())
                rootCode = unescape(raw); // OAuth style {"error":"temporarily_unavailable"}
            break;
        case Role::Error:
            if (equalsCi(key, "code"_L1))
                errorChain.append(unescape(raw));
            break;
        case Role::DetailItem:
            if (equalsCi(key, "errorCode"_L1) || equalsCi(key, "code"_L1))
                detailCodes.append(unescape(raw));
            break;
        case Role::Details:
        case Role::Other:
            break;
        }
    }

    bool object(Role role, int depth)
    {
        ++m_pos; // '{'
        while (true) {
            skipWs();
            if (m_pos >= m_s.size())
                return false;
            if (m_s[m_pos] == u'}') {
                ++m_pos;
                return true;
            }
            if (m_s[m_pos] != u'"')
                return false;
            const auto key = rawString();
            if (!key)
                return false;
            skipWs();
            if (m_pos >= m_s.size() || m_s[m_pos] != u':')
                return false;
            ++m_pos;
            skipWs();
            if (m_pos >= m_s.size())
                return false;
            const QChar c = m_s[m_pos];
            if (c == u'"') {
                const auto raw = rawString();
                if (!raw)
                    return false;
                stringMember(role, *key, *raw);
            } else if (c == u'{' || c == u'[') {
                if (!value(childRole(role, *key), depth + 1))
                    return false;
            } else {
                const qsizetype start = m_pos;
                if (!value(Role::Other, depth + 1))
                    return false;
                if (role == Role::Root && equalsCi(*key, "isRetriable"_L1)) {
                    const QStringView literal = m_s.sliced(start, m_pos - start);
                    if (literal == u"true"_sv)
                        isRetriable = true;
                    else if (literal == u"false"_sv)
                        isRetriable = false;
                } else if (role == Role::Error && equalsCi(*key, "code"_L1)) {
                    // {"error":{"code":20166}}: a numeric code is still a code
                    errorChain.append(m_s.sliced(start, m_pos - start).toString());
                }
            }
            const Next next = separatorOrClose(u'}');
            if (next == Next::Another)
                continue;
            return next == Next::Closed;
        }
    }
};

// True when s[pos, pos+len) is not glued to letters/digits on either side.
bool isWordAt(QStringView s, qsizetype pos, qsizetype len)
{
    if (pos > 0 && (isAsciiAlnum(s[pos - 1]) || s[pos - 1] == u'_'))
        return false;
    const qsizetype end = pos + len;
    return end >= s.size() || !(isAsciiAlnum(s[end]) || s[end] == u'_');
}

qsizetype findWord(QStringView s, QLatin1StringView word)
{
    qsizetype from = 0;
    while (true) {
        const qsizetype at = indexOfCi(s, word, from);
        if (at < 0)
            return -1;
        if (isWordAt(s, at, word.size()))
            return at;
        from = at + 1;
    }
}

// Service Bus "Error code: 50009", "Error code : 50009", "ErrorCode=50009", "SubCode=50009".
QString serviceBusTextCode(QStringView s)
{
    static constexpr std::array<QLatin1StringView, 3> markers = {"error code"_L1, "errorcode"_L1,
                                                                 "subcode"_L1};
    for (const auto &marker : markers) {
        qsizetype from = 0;
        while (true) {
            const qsizetype at = indexOfCi(s, marker, from);
            if (at < 0)
                break;
            from = at + 1;
            qsizetype pos = at + marker.size();
            while (pos < s.size() && (s[pos] == u' ' || s[pos] == u'\t'))
                ++pos;
            if (pos >= s.size() || (s[pos] != u':' && s[pos] != u'='))
                continue;
            ++pos;
            while (pos < s.size() && (s[pos] == u' ' || s[pos] == u'\t'))
                ++pos;
            const qsizetype start = pos;
            while (pos < s.size() && (isAsciiAlnum(s[pos]) || s[pos] == u'_'))
                ++pos;
            if (pos > start)
                return s.sliced(start, pos - start).toString();
        }
    }
    return {};
}

void appendUnique(QStringList &list, const QString &code)
{
    if (!code.isEmpty() && !list.contains(code))
        list.append(code);
}

bool isCapacityCode(QStringView code)
{
    return equalsCi(code, "CapacityLimitExceeded"_L1) ||
           equalsCi(code, "TooManyRequestsForCapacity"_L1);
}

bool isServerBusyCode(QStringView code)
{
    // Service Bus throttling sub-codes 50001..50009 all mean "server busy" (request rate,
    // CPU, memory, connections, entity throttled).
    if (code.size() == 5 && code.startsWith(u"5000"_sv) && isDigit(code[4]) && code[4] != u'0')
        return true;
    return equalsCi(code, "ServerBusy"_L1) || equalsCi(code, "com.microsoft:server-busy"_L1);
}

bool isSharePointThrottleCode(QStringView code)
{
    return equalsCi(code, "activityLimitReached"_L1) || equalsCi(code, "throttledRequest"_L1);
}

bool isThrottleEvidenceCode(QStringView code)
{
    return isServerBusyCode(code) || isSharePointThrottleCode(code) || isCapacityCode(code) ||
           equalsCi(code, "TooManyRequests"_L1) || equalsCi(code, "RequestBlocked"_L1) ||
           code == u"20166"_sv;
}

qint64 addClamped(qint64 base, qint64 delta)
{
    if (delta > 0 && base > std::numeric_limits<qint64>::max() - delta)
        return std::numeric_limits<qint64>::max();
    return base + delta;
}

void takeLatest(std::optional<qint64> &current, std::optional<qint64> candidate)
{
    if (candidate && (!current || *candidate > *current))
        current = candidate;
}

} // namespace

// ---- Retry advice --------------------------------------------------------------------------

std::optional<qint64> parseRetryAfterDelayMs(QStringView value, qint64 responseMs)
{
    const QStringView v = trim(value);
    if (v.isEmpty())
        return std::nullopt;
    if (isDigit(v[0]) || v[0] == u'.') {
        if (!v.contains(u','))
            return secondsToMs(v);
        // A proxy that merged duplicate headers ("55, 55"): every member must be a number;
        // the longest wait is the advice that honours all of them.
        std::optional<qint64> longest;
        for (const QStringView member : v.tokenize(u',')) {
            const auto ms = secondsToMs(member);
            if (!ms)
                return std::nullopt;
            longest = std::max(longest.value_or(0), *ms);
        }
        return longest;
    }
    const auto date = parseHttpDateMs(v);
    if (!date)
        return std::nullopt;
    const qint64 delay = *date - responseMs;
    if (delay > kMaxAdviceMs)
        return std::nullopt;
    return delay > 0 ? delay : 0;
}

std::optional<qint64> parseRetryAfterMsHeader(QStringView value)
{
    const auto ms = parseScaledCeil(value, 0);
    if (!ms || *ms > kMaxAdviceMs)
        return std::nullopt;
    return ms;
}

std::optional<qint64> parseBlockedUntilMs(QStringView text)
{
    // "Request is blocked by the upstream service until: 9/2/2025 5:21:55 PM (UTC)"
    qsizetype from = 0;
    while (true) {
        const qsizetype at = indexOfCi(text, "until"_L1, from);
        if (at < 0)
            return std::nullopt;
        from = at + 1;
        qsizetype pos = at + 5;
        skipSpaces(text, pos);
        if (pos < text.size() && text[pos] == u':')
            ++pos;
        skipSpaces(text, pos);
        int month = 0, day = 0, year = 0, h = 0, m = 0, sec = 0;
        if (!readNumber(text, pos, 1, 2, month) || pos >= text.size() || text[pos] != u'/')
            continue;
        ++pos;
        if (!readNumber(text, pos, 1, 2, day) || pos >= text.size() || text[pos] != u'/')
            continue;
        ++pos;
        if (!readNumber(text, pos, 4, 4, year))
            continue;
        skipSpaces(text, pos);
        if (!readTime(text, pos, h, m, sec))
            continue;
        skipSpaces(text, pos);
        // AM/PM is what .NET's invariant-ish US format writes; a 24-hour clock is accepted too.
        bool twelveHour = false;
        if (pos + 1 < text.size() && (text[pos + 1] == u'M' || text[pos + 1] == u'm') &&
            (pos + 2 >= text.size() || !isAsciiAlpha(text[pos + 2]))) {
            const QChar ap = text[pos];
            const bool am = ap == u'A' || ap == u'a';
            const bool pm = ap == u'P' || ap == u'p';
            if (!am && !pm)
                continue;
            if (h < 1 || h > 12)
                continue;
            h = (h % 12) + (pm ? 12 : 0);
            pos += 2;
            twelveHour = true;
        }
        // A body cut right after the seconds (or inside "PM") may have lost its AM/PM: a
        // 12-hour-looking time followed by nothing or by a letter is ambiguous, not trusted.
        if (!twelveHour && h >= 1 && h <= 12) {
            const QStringView rest = trim(text.sliced(pos));
            if (rest.isEmpty() || isAsciiAlpha(rest[0]))
                continue;
        }
        // Only UTC is ever written by the service; another explicit zone is not guessed at.
        skipSpaces(text, pos);
        if (pos < text.size() && text[pos] == u'(') {
            const qsizetype close = text.indexOf(u')', pos);
            if (close < 0) {
                // Cut inside the zone: "(", "(U", "(UT" still announce UTC.
                const QStringView partial = trim(text.sliced(pos + 1));
                if (partial.size() > 3 ||
                    (!startsWithCi("UTC"_L1, partial) && !startsWithCi("GMT"_L1, partial)))
                    continue;
            } else {
                const QStringView zone = trim(text.sliced(pos + 1, close - pos - 1));
                if (!equalsCi(zone, "UTC"_L1) && !equalsCi(zone, "GMT"_L1))
                    continue;
            }
        }
        if (const auto ms = civilToMs(year, month, day, h, m, sec))
            return ms;
    }
}

std::optional<qint64> parsePleaseWaitDelayMs(QStringView text)
{
    // "... Please wait 2 seconds and try again." / "Please wait 1 second ..."
    qsizetype from = 0;
    while (true) {
        const qsizetype at = indexOfCi(text, "wait"_L1, from);
        if (at < 0)
            return std::nullopt;
        from = at + 1;
        if (!isWordAt(text, at, 4))
            continue;
        qsizetype pos = at + 4;
        skipSpaces(text, pos);
        const qsizetype start = pos;
        while (pos < text.size() && (isDigit(text[pos]) || text[pos] == u'.'))
            ++pos;
        if (pos == start)
            continue;
        const QStringView number = text.sliced(start, pos - start);
        skipSpaces(text, pos);
        const QStringView rest = text.sliced(pos);
        int scaleDecimals = -1;
        if (startsWithCi(rest, "second"_L1) ||
            (startsWithCi(rest, "sec"_L1) && (rest.size() == 3 || !isAsciiAlpha(rest[3]))) ||
            (rest.startsWith(u's') && (rest.size() == 1 || !isAsciiAlpha(rest[1]))))
            scaleDecimals = 3;
        else if (startsWithCi(rest, "millisecond"_L1) ||
                 (startsWithCi(rest, "ms"_L1) && (rest.size() == 2 || !isAsciiAlpha(rest[2]))))
            scaleDecimals = 0;
        else if (startsWithCi(rest, "minute"_L1)) {
            const auto seconds = parseScaledCeil(number, 3);
            if (!seconds || *seconds > kMaxAdviceMs / 60)
                continue;
            return *seconds * 60;
        }
        if (scaleDecimals < 0)
            continue;
        const auto ms = parseScaledCeil(number, scaleDecimals);
        if (ms && *ms <= kMaxAdviceMs)
            return ms;
    }
}

// ---- Error codes -------------------------------------------------------------------------

// Which code is `primary`, i.e. the one an operator groups 429s by:
//  1. Fabric's top-level "errorCode" (RequestBlocked, CapacityLimitExceeded, ...): Fabric's
//     codes are already specific; moreDetails[].errorCode go to `inner`.
//  2. Graph / OData {"error":{"code":…,"innerError":{"code":…}}}: the OUTERMOST code that is not
//     generic. Generic = a restated HTTP status ("TooManyRequests", "ServiceUnavailable", a
//     3-digit number such as Graph's innerError "429"). So TooManyRequests/429 stays
//     "TooManyRequests", TooManyRequests/20166 becomes "20166", activityLimitReached/
//     throttledRequest becomes "activityLimitReached".
//  3. A service code that appears only in text (OneNote "20166" in a message, SharePoint
//     activityLimitReached / throttledRequest, Service Bus "Error code: 50009", "ServerBusy",
//     AMQP com.microsoft:server-busy) beats a generic JSON code; Service Bus numeric codes are
//     preferred over the "ServerBusy" word because they say *which* limit was hit.
//  4. Otherwise the outermost code found, generic or not.
// `inner` lists every code found below the outermost one, outermost first, without duplicates
// (it may contain the primary when that was picked from inside).
ErrorCodes errorCodesFromBody(QStringView body)
{
    ErrorCodes result;
    if (body.isEmpty())
        return result;

    const qsizetype brace = body.indexOf(u'{');
    QStringList structured; // outermost first
    if (brace >= 0) {
        ErrorJsonWalker walker(body.sliced(brace));
        walker.run();
        if (!walker.fabricCode.isEmpty())
            structured.append(walker.fabricCode);
        for (const QString &code : std::as_const(walker.errorChain))
            structured.append(code);
        if (structured.isEmpty() && !walker.rootCode.isEmpty())
            structured.append(walker.rootCode);
        for (const QString &code : std::as_const(walker.detailCodes))
            structured.append(code);
        result.isRetriable = walker.isRetriable;
    }
    // Codes mentioned in free text (messages, non-JSON bodies), after the structured ones.
    QStringList textCodes;
    if (const QString sb = serviceBusTextCode(body); !sb.isEmpty() && !isGenericCode(sb))
        appendUnique(textCodes, sb);
    static constexpr std::array<QLatin1StringView, 5> words = {"activityLimitReached"_L1,
                                                               "throttledRequest"_L1, "20166"_L1,
                                                               "ServerBusy"_L1, "server-busy"_L1};
    bool amqpServerBusy = false;
    for (const auto &word : words) {
        const qsizetype at = findWord(body, word);
        if (at < 0)
            continue;
        if (word == "server-busy"_L1) {
            // AMQP condition com.microsoft:server-busy; the operator groups it as ServerBusy.
            appendUnique(textCodes, QStringLiteral("ServerBusy"));
            amqpServerBusy = at >= 14 && equalsCi(body.sliced(at - 14, 14), "com.microsoft:"_L1);
        } else {
            appendUnique(textCodes, word.toString());
        }
    }
    QStringList all = structured; // outermost first
    for (const QString &code : std::as_const(textCodes)) {
        if (!all.contains(code, Qt::CaseInsensitive))
            all.append(code);
    }
    for (qsizetype i = 1; i < all.size(); ++i)
        appendUnique(result.inner, all[i]);
    if (amqpServerBusy)
        appendUnique(result.inner, QStringLiteral("com.microsoft:server-busy"));
    const QString textCode = textCodes.isEmpty() ? QString() : textCodes.first();

    for (const QString &code : std::as_const(structured)) {
        if (!isGenericCode(code)) {
            result.primary = code;
            break;
        }
    }
    if (result.primary.isEmpty() && !textCode.isEmpty())
        result.primary = textCode;
    if (result.primary.isEmpty() && !structured.isEmpty())
        result.primary = structured.first();
    return result;
}

QString errorCodeOf(const RequestEvent &event)
{
    // The explicit field wins, then Fabric's mirror header, then the body. A generic field or
    // header value ("TooManyRequests") yields to a specific code in the body (see
    // errorCodesFromBody), so the same OneNote 429 groups as "20166" whatever the logger did.
    const QString &field = event.errorCode;
    if (!field.isEmpty() && !isGenericCode(field))
        return field;
    QString header;
    if (!event.headers.isEmpty()) {
        header = event.headers.value(u"x-ms-public-api-error-code"_sv);
        if (!header.isEmpty() && !isGenericCode(header))
            return header;
    }
    if (!event.body.isEmpty()) {
        ErrorCodes codes = errorCodesFromBody(event.body);
        if (!codes.primary.isEmpty() &&
            (!isGenericCode(codes.primary) || (field.isEmpty() && header.isEmpty())))
            return codes.primary;
    }
    return !field.isEmpty() ? field : header;
}

// ---- Graph throttle headers ----------------------------------------------------------------

bool ThrottleScope::isApplicationWide() const
{
    return scope == u"Application"_sv || scope == u"Tenant_Application"_sv || scope == u"Tenant"_sv;
}

std::optional<ThrottleScope> parseThrottleScope(QStringView value)
{
    const QStringView v = trim(value);
    if (v.isEmpty())
        return std::nullopt;
    ThrottleScope result;
    const qsizetype s1 = v.indexOf(u'/');
    const QStringView scopePart = trim(s1 < 0 ? v : v.first(s1));
    if (scopePart.isEmpty())
        return std::nullopt;
    static constexpr std::array<QLatin1StringView, 4> scopes = {
        "Tenant_Application"_L1, "Tenant"_L1, "Application"_L1, "User"_L1};
    result.scope = scopePart.toString();
    for (const auto &known : scopes) {
        if (equalsCi(scopePart, known)) {
            result.scope = known.toString(); // canonical spelling for grouping
            break;
        }
    }
    if (s1 < 0)
        return result;
    QStringView rest = v.sliced(s1 + 1);
    const qsizetype s2 = rest.indexOf(u'/');
    const QStringView limitPart = trim(s2 < 0 ? rest : rest.first(s2));
    static constexpr std::array<QLatin1StringView, 3> limits = {"ReadWrite"_L1, "Read"_L1,
                                                                "Write"_L1};
    result.limit = limitPart.toString();
    for (const auto &known : limits) {
        if (equalsCi(limitPart, known)) {
            result.limit = known.toString();
            break;
        }
    }
    if (s2 < 0)
        return result;
    rest = rest.sliced(s2 + 1);
    const qsizetype s3 = rest.indexOf(u'/');
    result.appId = trim(s3 < 0 ? rest : rest.first(s3)).toString();
    if (s3 >= 0)
        result.id = trim(rest.sliced(s3 + 1)).toString(); // an id never contains '/', keep all
    return result;
}

std::optional<double> parseLimitPercentage(QStringView value)
{
    QStringView v = trim(value);
    bool percentSign = false;
    if (v.endsWith(u'%')) {
        percentSign = true;
        v = trim(v.chopped(1));
    }
    const auto number = parseDecimal(v);
    if (!number)
        return std::nullopt;
    // Graph documents fractions 0.8-1.8; some loggers write percents ("85"). A bare number
    // above 2 cannot be a fraction Graph would send, so it is read as a percent.
    if (percentSign || *number > 2.0)
        return *number / 100.0;
    return number;
}

// ---- Generic rate-limit headers ------------------------------------------------------------

namespace {

struct SfItem
{
    QStringView name;   // quoted policy name or bare token ("default", "100")
    QStringView bare;   // for dictionary members "limit=100": key in name, value here
    QStringView params; // ";r=50;t=30" (without the leading ';')
};

// Parameter value of key in ";k=v;k2=v2" (keys case-insensitive).
QStringView sfParam(QStringView params, QLatin1StringView key)
{
    qsizetype pos = 0;
    while (pos <= params.size()) {
        qsizetype end = params.indexOf(u';', pos);
        if (end < 0)
            end = params.size();
        const QStringView member = trim(params.sliced(pos, end - pos));
        const qsizetype eq = member.indexOf(u'=');
        if (eq > 0 && equalsCi(trim(member.first(eq)), key))
            return trim(member.sliced(eq + 1));
        pos = end + 1;
    }
    return {};
}

template <typename Fn> void forEachSfMember(QStringView field, Fn &&fn)
{
    qsizetype pos = 0;
    while (pos < field.size()) {
        // split on ',' outside quotes
        qsizetype end = pos;
        bool quoted = false;
        while (end < field.size() && (quoted || field[end] != u',')) {
            if (field[end] == u'"')
                quoted = !quoted;
            ++end;
        }
        const QStringView member = trim(field.sliced(pos, end - pos));
        pos = end + 1;
        if (member.isEmpty())
            continue;
        SfItem item;
        qsizetype i = 0;
        if (member[0] == u'"') {
            const qsizetype close = member.indexOf(u'"', 1);
            if (close < 0)
                continue;
            item.name = member.sliced(1, close - 1);
            i = close + 1;
        } else {
            while (i < member.size() && member[i] != u';' && member[i] != u'=')
                ++i;
            item.name = trim(member.first(i));
            if (i < member.size() && member[i] == u'=') {
                const qsizetype semi = member.indexOf(u';', i);
                item.bare = trim(member.sliced(i + 1, (semi < 0 ? member.size() : semi) - i - 1));
                i = semi < 0 ? member.size() : semi;
            }
        }
        if (i < member.size() && member[i] == u';')
            item.params = member.sliced(i + 1);
        fn(item);
    }
}

std::optional<double> sfNumber(QStringView v)
{
    QStringView t = trim(v);
    if (t.size() >= 2 && t.startsWith(u'"') && t.endsWith(u'"'))
        t = t.sliced(1, t.size() - 2);
    return parseDecimal(t);
}

// A policy item's window: "w" (drafts >= 03), "window" (drafts 01-02).
std::optional<double> policyWindow(const SfItem &item)
{
    if (auto w = sfNumber(sfParam(item.params, "w"_L1)))
        return w;
    return sfNumber(sfParam(item.params, "window"_L1));
}

std::optional<qint64> resetDeltaToInstant(QStringView v, qint64 responseMs)
{
    const auto ms = secondsToMs(v);
    if (!ms)
        return std::nullopt;
    return addClamped(responseMs, *ms);
}

} // namespace

RateLimitInfo parseRateLimit(const HttpHeaders &headers, qint64 responseMs)
{
    RateLimitInfo info;
    if (headers.isEmpty())
        return info;

    // 1. IETF structured fields (draft-ietf-httpapi-ratelimit-headers >= 08, and the older
    //    dictionary form "limit=100, remaining=50, reset=30"). With several policies the most
    //    restrictive one (least remaining) is the one that will throttle first.
    const QString rateLimit = headers.value(u"ratelimit"_sv);
    if (!rateLimit.isEmpty()) {
        forEachSfMember(rateLimit, [&](const SfItem &item) {
            if (!item.bare.isEmpty()) { // dictionary form
                const auto n = sfNumber(item.bare);
                if (!n)
                    return;
                if (equalsCi(item.name, "limit"_L1))
                    info.limit = n;
                else if (equalsCi(item.name, "remaining"_L1))
                    info.remaining = n;
                else if (equalsCi(item.name, "reset"_L1))
                    info.resetAtMs = resetDeltaToInstant(item.bare, responseMs);
                return;
            }
            const auto remaining = sfNumber(sfParam(item.params, "r"_L1));
            if (!remaining)
                return;
            if (info.remaining && *info.remaining <= *remaining)
                return;
            info.remaining = remaining;
            info.policyName = item.name.toString();
            const QStringView t = sfParam(item.params, "t"_L1);
            info.resetAtMs = t.isEmpty() ? std::nullopt : resetDeltaToInstant(t, responseMs);
        });
    }
    const QString policy = headers.value(u"ratelimit-policy"_sv);
    if (!policy.isEmpty()) {
        bool matched = false;
        forEachSfMember(policy, [&](const SfItem &item) {
            if (matched)
                return;
            std::optional<double> quota = sfNumber(sfParam(item.params, "q"_L1));
            if (!quota) // draft <= 07: the item itself is the quota ("100;w=60")
                quota = sfNumber(item.name);
            if (!quota)
                return;
            const bool sameName = !info.policyName.isEmpty() && item.name == info.policyName;
            if (!info.limit || sameName) {
                info.limit = quota;
                info.windowSeconds = policyWindow(item);
                if (info.policyName.isEmpty() &&
                    !isDigit(item.name.isEmpty() ? QChar() : item.name[0]))
                    info.policyName = item.name.toString();
                matched = sameName;
            }
        });
    }

    // 2. RateLimit-Limit / -Remaining / -Reset (drafts up to 06; Reset is delta seconds).
    if (!info.limit) {
        const QString v = headers.value(u"ratelimit-limit"_sv);
        if (!v.isEmpty())
            info.limit = leadingNumber(v);
        if (!info.windowSeconds) {
            // "100, 100;w=60" (draft 01-02: "10, 10;window=1"): the first policy item's window
            forEachSfMember(v, [&](const SfItem &item) {
                if (!info.windowSeconds)
                    info.windowSeconds = policyWindow(item);
            });
        }
    }
    if (!info.remaining) {
        const QString v = headers.value(u"ratelimit-remaining"_sv);
        if (!v.isEmpty())
            info.remaining = leadingNumber(v);
    }
    if (!info.resetAtMs) {
        const QString v = headers.value(u"ratelimit-reset"_sv);
        if (!v.isEmpty())
            info.resetAtMs = resetDeltaToInstant(v, responseMs);
    }

    // 3. Legacy X-RateLimit-* (and Twitter's X-Rate-Limit-*). Reset is epoch seconds when it
    //    is above 10^9 (it then is a date after 2001), epoch ms above 10^12, else delta seconds.
    static constexpr std::array<std::array<QStringView, 4>, 2> legacy = {{
        {u"x-ratelimit-limit"_sv, u"x-ratelimit-remaining"_sv, u"x-ratelimit-reset"_sv,
         u"x-ratelimit-reset-after"_sv},
        {u"x-rate-limit-limit"_sv, u"x-rate-limit-remaining"_sv, u"x-rate-limit-reset"_sv,
         u"x-rate-limit-reset-after"_sv},
    }};
    for (const auto &names : legacy) {
        if (!info.limit) {
            const QString v = headers.value(names[0]);
            if (!v.isEmpty())
                info.limit = leadingNumber(v);
        }
        if (!info.remaining) {
            const QString v = headers.value(names[1]);
            if (!v.isEmpty())
                info.remaining = leadingNumber(v);
        }
        if (!info.resetAtMs) {
            const QString v = headers.value(names[2]);
            if (const auto n = v.isEmpty() ? std::nullopt : parseDecimal(v)) {
                if (*n >= 1e12 && *n < 1e15)
                    info.resetAtMs = qint64(std::ceil(*n));
                else if (*n > 1e9 && *n < 1e12)
                    info.resetAtMs = qint64(std::ceil(*n * 1000.0));
                else
                    info.resetAtMs = resetDeltaToInstant(v, responseMs);
            }
        }
        if (!info.resetAtMs) {
            const QString v = headers.value(names[3]);
            if (!v.isEmpty())
                info.resetAtMs = resetDeltaToInstant(v, responseMs);
        }
    }
    return info;
}

QList<ArmRemaining> parseArmRemaining(const HttpHeaders &headers)
{
    static constexpr QLatin1StringView prefix = "x-ms-ratelimit-remaining-"_L1;
    QList<ArmRemaining> result;
    for (const auto &[name, value] : headers.items()) {
        if (!name.startsWith(prefix))
            continue;
        const QStringView suffix = QStringView(name).sliced(prefix.size());
        const QStringView v = trim(value);
        if (suffix.isEmpty() || v.isEmpty())
            continue;
        if (!v.contains(u';')) {
            if (const auto n = parseScaledCeil(v, 0))
                result.append({suffix.toString(), *n});
            continue;
        }
        // "Microsoft.Compute/HighCostGet3Min;139,Microsoft.Compute/HighCostGet30Min;695"
        for (const QStringView entry : v.tokenize(u',')) {
            const qsizetype semi = entry.lastIndexOf(u';');
            if (semi <= 0)
                continue;
            const QStringView entryName = trim(entry.first(semi));
            const auto n = parseScaledCeil(entry.sliced(semi + 1), 0);
            if (!entryName.isEmpty() && n)
                result.append({entryName.toString(), *n});
        }
    }
    return result;
}

// ---- Everything about one event ------------------------------------------------------------

QString throttleKindName(ThrottleKind kind)
{
    switch (kind) {
    case ThrottleKind::RateLimit:
        return QStringLiteral("rate-limit");
    case ThrottleKind::Capacity:
        return QStringLiteral("capacity");
    case ThrottleKind::ServerBusy:
        return QStringLiteral("server-busy");
    case ThrottleKind::None:
        break;
    }
    return QStringLiteral("none");
}

qint64 responseTimeMs(const RequestEvent &event)
{
    if (event.durationMs > 0 && std::isfinite(event.durationMs) &&
        event.durationMs < double(kMaxAdviceMs)) {
        // Half away from zero like llround (the value is positive), without its library call:
        // this runs for every event.
        qint64 whole = qint64(event.durationMs);
        if (event.durationMs - double(whole) >= 0.5)
            ++whole;
        return event.tsMs + whole;
    }
    return event.tsMs;
}

namespace {

bool hasRetryAfterAdvice(const RequestEvent &event)
{
    if (!event.retryAfter.isEmpty())
        return true;
    if (event.headers.isEmpty())
        return false;
    return event.headers.contains(u"retry-after"_sv) ||
           event.headers.contains(u"retry-after-ms"_sv) ||
           event.headers.contains(u"x-ms-retry-after-ms"_sv);
}

// A 503 counts as throttling only when the service says so.
bool serviceSaysThrottling503(const RequestEvent &event, const QString &code)
{
    if (hasRetryAfterAdvice(event))
        return true;
    if (!code.isEmpty() && isThrottleEvidenceCode(code))
        return true;
    if (!event.body.isEmpty()) {
        const QStringView body(event.body);
        if (containsCi(body, "throttl"_L1) || containsCi(body, "server-busy"_L1) ||
            findWord(body, "ServerBusy"_L1) >= 0)
            return true;
    }
    return false;
}

} // namespace

bool isThrottle(const RequestEvent &event)
{
    switch (event.status) {
    case 429:
    case 430:
        return true;
    case 503:
        return serviceSaysThrottling503(event, errorCodeOf(event));
    default:
        return false;
    }
}

bool hasSignalsToRead(const RequestEvent &event)
{
    const bool throttleStatus = event.status == 429 || event.status == 430 || event.status == 503;
    return throttleStatus || !event.headers.isEmpty() || !event.retryAfter.isEmpty() ||
           !event.body.isEmpty();
}

ThrottleSignals extract(const RequestEvent &event)
{
    ThrottleSignals result;
    // Hot path: a plain success with nothing attached costs these comparisons and no allocation.
    if (!hasSignalsToRead(event)) {
        result.errorCode = event.errorCode;
        return result;
    }
    const bool throttleStatus = event.status == 429 || event.status == 430 || event.status == 503;

    const bool interesting = throttleStatus || event.status >= 400;
    result.errorCode = interesting ? errorCodeOf(event) : event.errorCode;

    if (event.status == 503)
        result.throttled = serviceSaysThrottling503(event, result.errorCode);
    else
        result.throttled = event.status == 429 || event.status == 430;

    if (result.throttled) {
        // Capacity: the organisation's capacity is exhausted, not the caller's rate. Waiting
        // the Retry-After and sending again "rarely helps" (Fabric docs), so retryable=false
        // means "do not retry on the advised schedule; back off exponentially / shed load".
        if (event.status == 430 || isCapacityCode(result.errorCode)) {
            result.kind = ThrottleKind::Capacity;
            result.retryable = false;
        } else if (isServerBusyCode(result.errorCode) || event.status == 503) {
            result.kind = ThrottleKind::ServerBusy;
        } else {
            result.kind = ThrottleKind::RateLimit;
        }
        // Fabric's ErrorResponse may say so explicitly; a "false" is believed, a "true" does
        // not lift capacity throttling (waiting the advised time rarely helps there).
        if (!event.body.isEmpty() && containsCi(event.body, "isRetriable"_L1)) {
            const ErrorCodes codes = errorCodesFromBody(event.body);
            if (codes.isRetriable.has_value() && !*codes.isRetriable)
                result.retryable = false;
        }
    }

    const qint64 responseMs = responseTimeMs(event);
    std::optional<qint64> retryAt;
    // The retryAfter field is the Retry-After header as the logger saw it; the header itself
    // is only read when the field is absent or unreadable.
    bool retryAfterRead = false;
    if (!event.retryAfter.isEmpty()) {
        if (const auto d = parseRetryAfterDelayMs(event.retryAfter, responseMs)) {
            takeLatest(retryAt, addClamped(responseMs, *d));
            retryAfterRead = true;
        }
    }

    if (!event.headers.isEmpty()) {
        bool anyRateLimit = false;
        bool anyArm = false;
        for (const auto &[name, value] : event.headers.items()) {
            if (name.size() < 11) {
                if (name == u"ratelimit"_sv)
                    anyRateLimit = true;
                continue;
            }
            if (name == u"retry-after"_sv) {
                if (!retryAfterRead) {
                    if (const auto d = parseRetryAfterDelayMs(value, responseMs))
                        takeLatest(retryAt, addClamped(responseMs, *d));
                }
            } else if (name == u"retry-after-ms"_sv || name == u"x-ms-retry-after-ms"_sv) {
                if (const auto d = parseRetryAfterMsHeader(value))
                    takeLatest(retryAt, addClamped(responseMs, *d));
            } else if (name == u"x-ms-throttle-limit-percentage"_sv) {
                result.limitPercentage = parseLimitPercentage(value);
            } else if (name == u"x-ms-throttle-scope"_sv) {
                result.scope = parseThrottleScope(value);
            } else if (name == u"x-ms-throttle-information"_sv) {
                result.throttleInformation = trim(value).toString();
            } else if (name == u"x-ms-resource-unit"_sv) {
                result.resourceUnits = parseDecimal(value);
            } else if (name.startsWith("x-ms-ratelimit-remaining-"_L1)) {
                anyArm = true;
            } else if (name.startsWith("ratelimit"_L1) || name.startsWith("x-ratelimit"_L1) ||
                       name.startsWith("x-rate-limit"_L1)) {
                anyRateLimit = true;
            }
        }
        if (anyRateLimit)
            result.rateLimit = parseRateLimit(event.headers, responseMs);
        if (anyArm)
            result.armRemaining = parseArmRemaining(event.headers);
    }

    if (!event.body.isEmpty() && interesting) {
        // A "blocked until" further out than any believable advice is a mangled date.
        if (const auto until = parseBlockedUntilMs(event.body);
            until && *until - responseMs <= kMaxAdviceMs)
            takeLatest(retryAt, until);
        if (const auto d = parsePleaseWaitDelayMs(event.body))
            takeLatest(retryAt, addClamped(responseMs, *d));
    }
    // An exhausted generic rate limit on a throttled response is advice too (GitHub-style
    // APIs send no Retry-After, only X-RateLimit-Remaining: 0 and the reset instant).
    if (result.throttled && result.rateLimit.remaining && *result.rateLimit.remaining <= 0)
        takeLatest(retryAt, result.rateLimit.resetAtMs);

    // Advice pointing before the response (clock skew, a reset already passed) means "now":
    // nobody can send again before the answer arrived.
    // (emplace, not an assignment of the local optional: GCC copied that one with a 16-byte
    // load over the two stores that had just written it, a store-forwarding stall on every
    // event with headers.)
    if (retryAt)
        result.retryAtMs.emplace(std::max(*retryAt, responseMs));
    return result;
}

} // namespace ts::throttle
