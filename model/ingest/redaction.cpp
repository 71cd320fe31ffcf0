#include "redaction.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>

#include <array>
#include <string_view>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// Redaction is a scanner, not a set of regular expressions: it runs on every imported event, and
// one pass over the text that collects the ranges to mask (and allocates nothing when it finds
// none) keeps the common clean event free.

namespace ts::redact {

namespace {

using namespace Qt::StringLiterals;

// ---- character helpers (work on char16_t and on bytes) -----------------------------------

constexpr char16_t lower(char16_t c)
{
    return (c >= u'A' && c <= u'Z') ? char16_t(c + 32) : c;
}
constexpr bool isAlnum(char16_t c)
{
    return (c >= u'0' && c <= u'9') || (c >= u'a' && c <= u'z') || (c >= u'A' && c <= u'Z');
}
constexpr bool isKeyChar(char16_t c)
{
    return isAlnum(c) || c == u'_' || c == u'-' || c == u'.';
}
constexpr bool isBase64UrlChar(char16_t c)
{
    return isAlnum(c) || c == u'_' || c == u'-';
}
// RFC 6750 b64token, plus '%' for tokens that were URL-encoded on the way into a log.
constexpr bool isTokenChar(char16_t c)
{
    return isAlnum(c) || c == u'-' || c == u'.' || c == u'_' || c == u'~' || c == u'+' ||
           c == u'/' || c == u'=' || c == u'%';
}
constexpr bool isBlank(char16_t c)
{
    return c == u' ' || c == u'\t';
}
constexpr bool isAsciiLetter(char16_t c)
{
    return (c >= u'a' && c <= u'z') || (c >= u'A' && c <= u'Z');
}
// Characters a key or token is written in (base64, base64url, hex, percent-encoding).
constexpr bool isTokenRunChar(char16_t c)
{
    return isAlnum(c) || c == u'-' || c == u'_' || c == u'+' || c == u'/' || c == u'=' ||
           c == u'%' || c == u'~';
}
constexpr bool isWhite(char16_t c)
{
    return c == u' ' || c == u'\t' || c == u'\r' || c == u'\n';
}

template <typename Char> constexpr char16_t unit(Char c)
{
    if constexpr (sizeof(Char) == 1)
        return char16_t(static_cast<unsigned char>(c));
    else
        return char16_t(c);
}

// Lower-cased ASCII name in a small fixed buffer, for set lookups without allocation. Names
// longer than the buffer are never secret names.
struct SmallName
{
    std::array<char, 40> chars{};
    size_t size = 0;
    bool valid = true;
    void push(char16_t c)
    {
        if (size >= chars.size() || c > 0x7f) {
            valid = false;
            return;
        }
        chars[size++] = char(lower(c));
    }
    [[nodiscard]] std::string_view view() const { return {chars.data(), size}; }
};

using namespace std::string_view_literals;

// Name sets are constexpr arrays: an initializer_list of string literals would run strlen on
// every entry at every lookup (it showed up as 25 % of a profile).
template <size_t N> bool inSet(std::string_view name, const std::array<std::string_view, N> &set)
{
    for (const auto &candidate : set) {
        if (candidate.size() == name.size() && candidate == name)
            return true;
    }
    return false;
}

// Keys whose value is a secret when they appear as `key=value` / `"key": "value"` /
// `Key: value` in free text. "code" and "key" are not here (Graph bodies say "code": ...).
constexpr std::array kSecretTextKeys = {"sig"sv,
                                        "signature"sv,
                                        "sharedaccesskey"sv,
                                        "sharedaccesssignature"sv,
                                        "accountkey"sv,
                                        "client_secret"sv,
                                        "clientsecret"sv,
                                        "client-secret"sv,
                                        "x-ms-client-secret"sv,
                                        "client_assertion"sv,
                                        "access_token"sv,
                                        "accesstoken"sv,
                                        "refresh_token"sv,
                                        "refreshtoken"sv,
                                        "id_token"sv,
                                        "idtoken"sv,
                                        "token"sv,
                                        "sastoken"sv,
                                        "sas_token"sv,
                                        "password"sv,
                                        "passwd"sv,
                                        "pwd"sv,
                                        "secret"sv,
                                        "apikey"sv,
                                        "api_key"sv,
                                        "api-key"sv,
                                        "x-api-key"sv,
                                        "subscription-key"sv,
                                        "subscription_key"sv,
                                        "ocp-apim-subscription-key"sv,
                                        "x-functions-key"sv,
                                        "authorization"sv,
                                        "proxy-authorization"sv,
                                        "cookie"sv,
                                        "set-cookie"sv,
                                        "x-auth-token"sv,
                                        "x-amz-security-token"sv,
                                        "x-goog-api-key"sv,
                                        "x-amz-signature"sv,
                                        "x-goog-signature"sv};
// Longest and shortest entries: anything outside is rejected before the set is walked.
constexpr size_t kShortestSecretKey = 3;
constexpr size_t kLongestSecretKey = 25;

bool isSecretTextKey(std::string_view name)
{
    return name.size() >= kShortestSecretKey && name.size() <= kLongestSecretKey &&
           inSet(name, kSecretTextKeys);
}

// Keys whose value runs to the end of the line (header syntax): the value has spaces and ';'.
bool isLineValuedKey(std::string_view name)
{
    static constexpr std::array keys = {"authorization"sv, "proxy-authorization"sv, "cookie"sv,
                                        "set-cookie"sv};
    return inSet(name, keys);
}

bool isSecretUrlParam(std::string_view name)
{
    static constexpr std::array names = {"sig"sv,
                                         "signature"sv,
                                         "x-amz-signature"sv,
                                         "x-amz-security-token"sv,
                                         "x-goog-signature"sv,
                                         "code"sv,
                                         "access_token"sv,
                                         "refresh_token"sv,
                                         "id_token"sv,
                                         "client_secret"sv,
                                         "client_assertion"sv,
                                         "subscription-key"sv,
                                         "subscription_key"sv,
                                         "api-key"sv,
                                         "api_key"sv,
                                         "apikey"sv,
                                         "key"sv,
                                         "token"sv,
                                         "sastoken"sv,
                                         "password"sv,
                                         "passwd"sv,
                                         "pwd"sv,
                                         "secret"sv,
                                         "auth"sv,
                                         "jwt"sv};
    return name.size() >= 3 && name.size() <= 20 && inSet(name, names);
}

constexpr char16_t hexValue(char16_t c)
{
    if (c >= u'0' && c <= u'9')
        return char16_t(c - u'0');
    if (c >= u'a' && c <= u'f')
        return char16_t(c - u'a' + 10);
    if (c >= u'A' && c <= u'F')
        return char16_t(c - u'A' + 10);
    return 0xff;
}

// A name as written in a URL: case-insensitive, %XX decoded ("client%5Fsecret").
template <typename Char> SmallName urlName(const Char *s, qsizetype begin, qsizetype end)
{
    SmallName name;
    for (qsizetype i = begin; i < end && name.valid; ++i) {
        const char16_t c = unit(s[i]);
        if (c == u'%' && i + 2 < end) {
            const char16_t hi = hexValue(unit(s[i + 1]));
            const char16_t lo = hexValue(unit(s[i + 2]));
            if (hi != 0xff && lo != 0xff) {
                name.push(char16_t(hi * 16 + lo));
                i += 2;
                continue;
            }
        }
        name.push(c);
    }
    return name;
}

template <typename Char>
bool equalsAsciiCi(const Char *s, qsizetype n, qsizetype pos, std::string_view word)
{
    if (pos < 0 || pos + qsizetype(word.size()) > n)
        return false;
    for (size_t k = 0; k < word.size(); ++k) {
        if (lower(unit(s[pos + qsizetype(k)])) != char16_t(word[k]))
            return false;
    }
    return true;
}

template <typename Char> bool isAlreadyRedacted(const Char *s, qsizetype begin, qsizetype end)
{
    return end - begin == 8 && equalsAsciiCi(s, end, begin, "redacted");
}

// Paging cursors named "...Token" (Fabric's continuationToken, OData's $skiptoken and
// $deltatoken, Google's pageToken): a position in a listing, not a credential, and operators
// need them to tell requests apart.
bool isCursorName(std::string_view name)
{
    static constexpr std::array cursors = {
        "continuationtoken"sv, "continuation_token"sv, "continuation-token"sv, "pagetoken"sv,
        "nextpagetoken"sv,     "page_token"sv,         "next_page_token"sv,    "nexttoken"sv,
        "skiptoken"sv,         "$skiptoken"sv,         "deltatoken"sv,         "$deltatoken"sv,
        "synctoken"sv,         "resumetoken"sv};
    return inSet(name, cursors);
}

// A key in free text or a URL parameter that *ends* like a credential's name: "clientSecret",
// "x-ms-token-aad-access-token", "ServiceBusAuthorization", "x-goog-api-key", "adminPassword".
// Only the ending counts, unlike header names: "authorization_uri", "total_tokens",
// "tokenType" and "setDiscoveredCookie" name no credential. Lower-case ASCII in.
bool endsLikeSecretKey(std::string_view name)
{
    for (const std::string_view ending :
         {"authorization"sv, "apikey"sv, "api-key"sv, "api_key"sv, "subscription-key"sv,
          "subscription_key"sv, "secret"sv, "password"sv, "passwd"sv, "signature"sv, "token"sv}) {
        if (name.size() >= ending.size() && name.substr(name.size() - ending.size()) == ending)
            return ending != "token"sv || !isCursorName(name);
    }
    return false;
}

struct Range
{
    qsizetype begin;
    qsizetype end;
    bool quote = false; // write "REDACTED" with quotes (a JSON number / literal was masked)
};

// ---- the free-text scanner ---------------------------------------------------------------

constexpr std::array<bool, 128> makeTriggerTable()
{
    std::array<bool, 128> table{};
    for (const char c : {'=', ':', 'e', 'b', 'B', 's', 'S'})
        table[size_t(c)] = true;
    return table;
}
constexpr std::array<bool, 128> kTrigger = makeTriggerTable();

template <typename Char> class TextScanner
{
public:
    TextScanner(const Char *data, qsizetype size) : s(data), n(size) {}

    std::vector<Range> ranges; // ascending, non-overlapping

    void run()
    {
        // Only a few characters can start something to mask; everything else costs one table
        // lookup. 'e', 'b' and 's' are common letters, so their second letter is checked
        // inline before a full match is attempted.
        qsizetype i = 0;
        while (i < n) {
            const char16_t c = unit(s[i]);
            qsizetype next = i + 1;
            if (c < 128 && kTrigger[c]) {
                const char16_t second = i + 1 < n ? lower(unit(s[i + 1])) : char16_t(0);
                if (c == u'=' || c == u':')
                    next = keyValue(i);
                else if (c == u'e' && second == u'y')
                    next = jwt(i);
                else if ((c == u'b' || c == u'B') && second == u'e')
                    next = bearer(i);
                else if ((c == u's' || c == u'S') && second == u'h')
                    next = sharedAccessSignature(i);
            }
            i = next > i ? next : i + 1;
        }
    }

private:
    const Char *s;
    qsizetype n;

    char16_t at(qsizetype i) const { return i >= 0 && i < n ? unit(s[i]) : char16_t(0); }

    void mask(qsizetype begin, qsizetype end, bool quote = false)
    {
        if (end > begin && !isAlreadyRedacted(s, begin, end))
            ranges.push_back({begin, end, quote});
    }

    // `key = value`, `"key": "value"`, `Key: value`, `\"key\":\"value\"` (JSON inside JSON).
    qsizetype keyValue(qsizetype sep)
    {
        qsizetype k = sep - 1;
        while (k >= 0 && isBlank(at(k)))
            --k;
        const bool jsonKey = at(sep) == u':' && at(k) == u'"';
        if (at(k) == u'"' || at(k) == u'\'') {
            --k;
            if (at(k) == u'\\')
                --k;
        }
        const qsizetype keyEnd = k + 1;
        while (k >= 0 && isKeyChar(at(k)))
            --k;
        const qsizetype keyBegin = k + 1;
        if (keyEnd <= keyBegin)
            return sep + 1;
        // The whole key, and its last dotted segment ("properties.password").
        SmallName whole;
        SmallName segment;
        for (qsizetype p = keyBegin; p < keyEnd; ++p) {
            const char16_t c = at(p);
            whole.push(c);
            if (c == u'.')
                segment = SmallName();
            else
                segment.push(c);
        }
        // A key in a form-encoded or query-like run (`a=1&code=...`, at the start of the text or
        // after '&' / '?') names a secret by the URL parameter rules too: an OAuth `code=` in a
        // token request body is as secret as in a redirect URL.
        const char16_t before = at(keyBegin - 1);
        const bool formContext =
            at(sep) == u'=' && (keyBegin == 0 || before == u'&' || before == u'?');
        const auto secretKey = [formContext](const SmallName &name) {
            if (!name.valid || name.size == 0)
                return false;
            const std::string_view view = name.view();
            return isSecretTextKey(view) || (formContext && isSecretUrlParam(view)) ||
                   endsLikeSecretKey(view);
        };
        const bool secret = secretKey(whole) || secretKey(segment);
        if (!secret)
            return sep + 1;
        const bool lineValued = (whole.valid && isLineValuedKey(whole.view())) ||
                                (segment.valid && isLineValuedKey(segment.view()));

        qsizetype v = sep + 1;
        if (at(sep) == u':' && at(v) == u'/' && at(v + 1) == u'/')
            return sep + 1; // "password://" is a URL scheme, not a value
        while (v < n && isBlank(at(v)))
            ++v;
        if (v >= n)
            return n;
        const char16_t first = at(v);
        if (first == u'\\' && at(v + 1) == u'"') { // escaped JSON string inside a string
            const qsizetype begin = v + 2;
            qsizetype e = begin;
            while (e < n && !(at(e) == u'\\' && at(e + 1) == u'"'))
                e += at(e) == u'\\' ? 2 : 1;
            e = e < n ? e : n;
            mask(begin, e);
            return e + 2;
        }
        if (first == u'"' || first == u'\'') {
            const qsizetype begin = v + 1;
            qsizetype e = begin;
            while (e < n && at(e) != first)
                e += (at(e) == u'\\' && first == u'"') ? 2 : 1;
            e = e < n ? e : n;
            mask(begin, e);
            return e + 1;
        }
        if (first == u'{' || first == u'[')
            return maskStructured(v); // "set-cookie": ["a=1", "b=2"], "authorization": {...}
        qsizetype e = v;
        if (jsonKey) {
            // A JSON number or literal: a numeric PIN is a secret, null/true/false are not. The
            // mask is written as a JSON string so extraJson stays valid JSON.
            e = wordEnd(v);
            if (isWord(v, e, "null") || isWord(v, e, "true") || isWord(v, e, "false"))
                return e;
            mask(v, e, true);
            return e;
        }
        if (lineValued) {
            while (e < n) {
                const char16_t c = at(e);
                if (c == u'\r' || c == u'\n' || c == u'"' || c == u'\'' || c == u'\\' || c == u'<')
                    break;
                ++e;
            }
            while (e > v && isBlank(at(e - 1)))
                --e;
        } else {
            e = wordEnd(v);
            // "token: SharedAccessSignature sr=..&sig=..", "x: Bearer abc": the scheme word
            // is followed by the credential itself, which goes too.
            if (e < n && isBlank(at(e)) &&
                (isWord(v, e, "bearer") || isWord(v, e, "basic") ||
                 isWord(v, e, "sharedaccesssignature"))) {
                qsizetype t = e;
                while (t < n && isBlank(at(t)))
                    ++t;
                if (t < n && credentialEnd(t) > t)
                    e = credentialEnd(t);
            }
        }
        mask(v, e);
        return e;
    }

    // Under a secret key every string *value* of the nested array/object is masked (its keys
    // stay, so the JSON keeps its shape). Returns the position after the closing bracket, or
    // the end of the text when it is truncated.
    qsizetype maskStructured(qsizetype p)
    {
        int depth = 0;
        while (p < n) {
            const char16_t c = at(p);
            if (c == u'{' || c == u'[') {
                ++depth;
                ++p;
            } else if (c == u'}' || c == u']') {
                ++p;
                if (--depth == 0)
                    return p;
            } else if (c == u'"') {
                const qsizetype begin = p + 1;
                qsizetype e = begin;
                while (e < n && at(e) != u'"')
                    e += at(e) == u'\\' ? 2 : 1;
                e = e < n ? e : n;
                qsizetype after = e + 1;
                while (after < n && isWhite(at(after)))
                    ++after;
                if (at(after) != u':') // a value, not a key
                    mask(begin, e);
                p = e + 1;
            } else if (c == u',' || c == u':' || isWhite(c)) {
                ++p;
            } else { // number or literal
                const qsizetype e = wordEnd(p);
                if (!(isWord(p, e, "null") || isWord(p, e, "true") || isWord(p, e, "false")))
                    mask(p, e, true);
                p = e > p ? e : p + 1;
            }
        }
        return n;
    }

    qsizetype wordEnd(qsizetype e) const
    {
        while (e < n) {
            const char16_t c = at(e);
            if (isWhite(c) || c == u'"' || c == u'\'' || c == u';' || c == u'&' || c == u',' ||
                c == u'<' || c == u'>' || c == u'}' || c == u']' || c == u')' || c == u'\\' ||
                c == u'#')
                break;
            ++e;
        }
        return e;
    }

    // End of a credential after an auth scheme: SAS tokens contain '&' and '=', so only
    // whitespace, quotes and list separators end it.
    qsizetype credentialEnd(qsizetype p) const
    {
        while (p < n) {
            const char16_t c = at(p);
            if (isWhite(c) || c == u'"' || c == u'\'' || c == u';' || c == u',' || c == u'<' ||
                c == u'\\')
                break;
            ++p;
        }
        return p;
    }

    bool isWord(qsizetype begin, qsizetype end, std::string_view word) const
    {
        return end - begin == qsizetype(word.size()) && equalsAsciiCi(s, n, begin, word);
    }

    // eyJ<base64url>.<base64url>.<base64url or empty>: a JWT (JSON header, hence "eyJ").
    qsizetype jwt(qsizetype i)
    {
        if (at(i + 1) != u'y' || at(i + 2) != u'J' || isBase64UrlChar(at(i - 1)))
            return i + 1;
        qsizetype p = i;
        while (p < n && isBase64UrlChar(at(p)))
            ++p;
        if (p - i < 10 || at(p) != u'.')
            return i + 1;
        const qsizetype payload = ++p;
        while (p < n && isBase64UrlChar(at(p)))
            ++p;
        if (p - payload < 4)
            return i + 1;
        if (at(p) == u'.') {
            ++p;
            while (p < n && isBase64UrlChar(at(p)))
                ++p;
        }
        mask(i, p);
        return p;
    }

    // `realm="`, `error="`, `authorization_uri="`: a challenge parameter name (letters and
    // underscores) followed by '=' and a quote, not a token.
    bool isChallengeParameter(qsizetype begin, qsizetype end) const
    {
        if (end - begin < 2 || at(end - 1) != u'=' || at(end) != u'"')
            return false;
        for (qsizetype q = begin; q < end - 1; ++q) {
            const char16_t c = at(q);
            if (!((c >= u'a' && c <= u'z') || (c >= u'A' && c <= u'Z') || c == u'_'))
                return false;
        }
        return true;
    }

    // "Bearer <token>" (RFC 6750). A WWW-Authenticate challenge (`Bearer realm="..."`,
    // `Bearer error="invalid_token"`) is not a token.
    qsizetype bearer(qsizetype i)
    {
        if (!equalsAsciiCi(s, n, i, "bearer") || isAlnum(at(i - 1)) || !isBlank(at(i + 6)))
            return i + 1;
        qsizetype p = i + 6;
        while (p < n && isBlank(at(p)))
            ++p;
        const qsizetype begin = p;
        while (p < n && isTokenChar(at(p)))
            ++p;
        if (p - begin < 8 || isChallengeParameter(begin, p))
            return i + 1;
        mask(begin, p);
        return p;
    }

    // "SharedAccessSignature sr=...&sig=...&se=...&skn=..." (Service Bus / Event Hubs tokens).
    qsizetype sharedAccessSignature(qsizetype i)
    {
        static constexpr std::string_view word = "sharedaccesssignature";
        if (!equalsAsciiCi(s, n, i, word) || isAlnum(at(i - 1)) ||
            !isBlank(at(i + qsizetype(word.size()))))
            return i + 1;
        qsizetype p = i + qsizetype(word.size());
        while (p < n && isBlank(at(p)))
            ++p;
        const qsizetype begin = p;
        p = credentialEnd(p);
        mask(begin, p);
        return p;
    }
};

// ---- URLs ----------------------------------------------------------------------------------

template <typename Char> std::vector<Range> urlRanges(const Char *s, qsizetype n)
{
    std::vector<Range> ranges;
    auto at = [&](qsizetype i) { return unit(s[i]); };

    // userinfo password: scheme://user:password@host
    qsizetype authorityBegin = -1;
    for (qsizetype i = 0; i + 2 < n; ++i) {
        const char16_t c = at(i);
        if (c == u':' && at(i + 1) == u'/' && at(i + 2) == u'/') {
            authorityBegin = i + 3;
            break;
        }
        if (!(isAlnum(c) || c == u'+' || c == u'-' || c == u'.'))
            break;
    }
    qsizetype pathBegin = 0;
    if (authorityBegin >= 0) {
        qsizetype end = authorityBegin;
        while (end < n && at(end) != u'/' && at(end) != u'?' && at(end) != u'#')
            ++end;
        pathBegin = end;
        qsizetype atSign = -1;
        for (qsizetype i = authorityBegin; i < end; ++i) {
            if (at(i) == u'@')
                atSign = i;
        }
        if (atSign > authorityBegin) {
            for (qsizetype i = authorityBegin; i < atSign; ++i) {
                if (at(i) == u':') {
                    if (atSign > i + 1 && !isAlreadyRedacted(s, i + 1, atSign))
                        ranges.push_back({i + 1, atSign});
                    break;
                }
            }
        }
    }

    // query and fragment parameters (OAuth implicit flow puts tokens in the fragment)
    qsizetype q = pathBegin;
    while (q < n && at(q) != u'?' && at(q) != u'#')
        ++q;
    qsizetype p = q;
    while (p < n) {
        ++p; // past '?', '&', ';' or '#'
        const qsizetype nameBegin = p;
        while (p < n && at(p) != u'=' && at(p) != u'&' && at(p) != u'#' && at(p) != u';')
            ++p;
        const qsizetype nameEnd = p;
        if (p < n && at(p) == u'=') {
            const qsizetype valueBegin = ++p;
            while (p < n && at(p) != u'&' && at(p) != u'#' && at(p) != u';')
                ++p;
            if (p > valueBegin && !isAlreadyRedacted(s, valueBegin, p)) {
                const SmallName name = urlName(s, nameBegin, nameEnd);
                if (name.valid && (isSecretUrlParam(name.view()) || isSecretTextKey(name.view()) ||
                                   endsLikeSecretKey(name.view())))
                    ranges.push_back({valueBegin, p});
            }
        }
    }
    return ranges;
}

// ---- output ------------------------------------------------------------------------------

QString applyRanges(const QString &text, const std::vector<Range> &ranges)
{
    QString out;
    out.reserve(text.size() + qsizetype(ranges.size()) * 8);
    qsizetype pos = 0;
    const QStringView view(text);
    for (const Range &r : ranges) {
        out.append(view.sliced(pos, r.begin - pos));
        if (r.quote)
            out.append(u'"');
        out.append(kRedacted);
        if (r.quote)
            out.append(u'"');
        pos = r.end;
    }
    out.append(view.sliced(pos));
    return out;
}

QByteArray applyRanges(const QByteArray &bytes, const std::vector<Range> &ranges)
{
    QByteArray out;
    out.reserve(bytes.size() + qsizetype(ranges.size()) * 8);
    qsizetype pos = 0;
    for (const Range &r : ranges) {
        out.append(bytes.constData() + pos, r.begin - pos);
        if (r.quote)
            out.append('"');
        out.append(kRedacted.data(), kRedacted.size());
        if (r.quote)
            out.append('"');
        pos = r.end;
    }
    out.append(bytes.constData() + pos, bytes.size() - pos);
    return out;
}

const char16_t *utf16(const QString &text)
{
    // constData(), not utf16(): utf16() detaches literal-backed strings to terminate them.
    return reinterpret_cast<const char16_t *>(text.constData());
}

// ASCII case-insensitive search without Qt's Unicode folding (which is slow per call).
bool containsAsciiCi(QStringView haystack, QLatin1StringView needle)
{
    const auto *d = reinterpret_cast<const char16_t *>(haystack.utf16());
    for (qsizetype i = 0; i + needle.size() <= haystack.size(); ++i) {
        qsizetype k = 0;
        while (k < needle.size() && lower(d[i + k]) == lower(char16_t(needle[k].unicode())))
            ++k;
        if (k == needle.size())
            return true;
    }
    return false;
}

bool equalsAsciiCi(QStringView a, QLatin1StringView b)
{
    return a.size() == b.size() && containsAsciiCi(a, b);
}

bool looksLikeUrl(const QString &value)
{
    const QStringView v(value);
    return (v.size() >= 7 && equalsAsciiCi(v.first(7), "http://"_L1)) ||
           (v.size() >= 8 && equalsAsciiCi(v.first(8), "https://"_L1)) || v.startsWith(u'/');
}

// Redacts in place; returns whether anything changed (so unchanged strings stay shared).
bool redactTextInPlace(QString &text)
{
    if (text.isEmpty())
        return false;
    TextScanner<char16_t> scanner(utf16(text), text.size());
    scanner.run();
    if (scanner.ranges.empty())
        return false;
    text = applyRanges(text, scanner.ranges);
    return true;
}

// What a URL can hide a secret in, found in one pass (Qt's indexOf for a 3-letter needle and
// three QChar searches cost 4x more on the per-event path).
struct UrlTriggers
{
    bool parameters = false; // '?', '#' or '@': query, fragment, userinfo
    // Worth the free-text scan: "eyJ" (a token pasted into a path segment), a blank (the field
    // holds text, "Bearer ..." say, not a URL) or a '=' before any query (";sig=" path
    // parameters, "AccountKey=" in something that is not a URL at all).
    bool text = false;
};

UrlTriggers urlTriggers(const QString &url)
{
    UrlTriggers found;
    const char16_t *d = utf16(url);
    const qsizetype n = url.size();
    // "eyJ" is found by its rare 'J', then the two characters before it are checked.
    const auto classify = [&found, d](qsizetype i) {
        const char16_t c = d[i];
        if (c == u'?' || c == u'#' || c == u'@')
            found.parameters = true;
        else if ((c == u'J' && i >= 2 && d[i - 2] == u'e' && d[i - 1] == u'y') || c == u' ' ||
                 c == u'\t' || (c == u'=' && !found.parameters))
            found.text = true;
    };
    qsizetype i = 0;
#if defined(__SSE2__)
    // Every report masks every URL: eight characters per step, and only a step that holds one
    // of the trigger characters is looked at one by one (most steps hold none: ~3 % of a
    // report's CPU went to the character loop alone). Once a query is found, its '=' and '&'
    // no longer matter: only the text triggers are looked for.
    const __m128i question = _mm_set1_epi16(short(u'?'));
    const __m128i hash = _mm_set1_epi16(short(u'#'));
    const __m128i atSign = _mm_set1_epi16(short(u'@'));
    const __m128i space = _mm_set1_epi16(short(u' '));
    const __m128i tab = _mm_set1_epi16(short(u'\t'));
    const __m128i equals = _mm_set1_epi16(short(u'='));
    const __m128i letterJ = _mm_set1_epi16(short(u'J'));
    for (; i + 8 <= n; i += 8) {
        const __m128i chars = _mm_loadu_si128(reinterpret_cast<const __m128i *>(d + i));
        __m128i hits =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi16(chars, space), _mm_cmpeq_epi16(chars, tab)),
                         _mm_cmpeq_epi16(chars, letterJ));
        if (!found.parameters) {
            hits = _mm_or_si128(hits, _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi16(chars, question),
                                                                _mm_cmpeq_epi16(chars, hash)),
                                                   _mm_or_si128(_mm_cmpeq_epi16(chars, atSign),
                                                                _mm_cmpeq_epi16(chars, equals))));
        }
        if (_mm_movemask_epi8(hits) == 0)
            continue;
        for (qsizetype k = i; k < i + 8; ++k)
            classify(k);
        if (found.parameters && found.text)
            return found;
    }
#endif
    for (; i < n; ++i)
        classify(i);
    return found;
}

bool redactUrlParametersInPlace(QString &url)
{
    auto ranges = urlRanges(utf16(url), url.size());
    if (ranges.empty())
        return false;
    url = applyRanges(url, ranges);
    return true;
}

bool redactUrlInPlace(QString &url)
{
    // Nothing to mask without a query, a fragment or a userinfo.
    if (url.isEmpty() || !urlTriggers(url).parameters)
        return false;
    auto ranges = urlRanges(utf16(url), url.size());
    if (ranges.empty())
        return false;
    url = applyRanges(url, ranges);
    return true;
}

QString claimString(const QJsonObject &payload, QLatin1StringView key)
{
    const QJsonValue v = payload.value(key);
    return v.isString() ? v.toString() : QString();
}

std::optional<QByteArray> decodeBase64Url(QStringView part)
{
    const QByteArray latin = part.toLatin1();
    auto decoded = QByteArray::fromBase64Encoding(
        latin, QByteArray::Base64UrlEncoding | QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded) // some issuers use the standard alphabet
        decoded = QByteArray::fromBase64Encoding(latin, QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded)
        return std::nullopt;
    return *decoded;
}

} // namespace

bool isSecretHeader(QStringView lowerName)
{
    // Families, matched anywhere in the name: "...authorization" (proxy-, servicebus-,
    // x-ms-copy-source-, x-ms-authorization-auxiliary), "...cookie", "...secret",
    // "...password", "...token" (x-auth-token, x-csrf-token, x-ms-token-aad-access-token,
    // x-amz-security-token), "...api-key" / "apikey" (x-api-key, x-goog-api-key),
    // "...subscription-key" (ocp-apim-subscription-key), "...signature". One pass over the
    // name, dispatching on the letter a family starts with: this runs for every header of
    // every event.
    const auto *d = reinterpret_cast<const char16_t *>(lowerName.utf16());
    const qsizetype n = lowerName.size();
    for (qsizetype i = 0; i < n; ++i) {
        switch (lower(d[i])) {
        case u'a':
            if (equalsAsciiCi(d, n, i, "authorization") || equalsAsciiCi(d, n, i, "api-key") ||
                equalsAsciiCi(d, n, i, "api_key") || equalsAsciiCi(d, n, i, "apikey"))
                return true;
            break;
        case u'c':
            if (equalsAsciiCi(d, n, i, "cookie"))
                return true;
            break;
        case u's':
            if (equalsAsciiCi(d, n, i, "secret") || equalsAsciiCi(d, n, i, "subscription-key") ||
                equalsAsciiCi(d, n, i, "subscription_key") || equalsAsciiCi(d, n, i, "signature"))
                return true;
            break;
        case u'p':
            if (equalsAsciiCi(d, n, i, "password") || equalsAsciiCi(d, n, i, "passwd"))
                return true;
            break;
        case u't':
            if (equalsAsciiCi(d, n, i, "token"))
                return true;
            break;
        default:
            break;
        }
    }
    // Key headers outside the families.
    return (n == 15 && equalsAsciiCi(d, n, 0, "x-functions-key")) ||
           (n == 19 && equalsAsciiCi(d, n, 0, "x-ms-encryption-key"));
}

bool isSecretParameterName(QStringView name)
{
    const SmallName small =
        urlName(reinterpret_cast<const char16_t *>(name.utf16()), 0, name.size());
    return small.valid && isSecretUrlParam(small.view());
}

QString redactUrl(const QString &url)
{
    QString result = url;
    redactUrlInPlace(result);
    return result;
}

QString redactText(const QString &text)
{
    QString result = text;
    redactTextInPlace(result);
    return result;
}

QByteArray redactBytes(const QByteArray &bytes)
{
    if (bytes.isEmpty())
        return bytes;
    TextScanner<char> scanner(bytes.constData(), bytes.size());
    scanner.run();
    if (scanner.ranges.empty())
        return bytes;
    return applyRanges(bytes, scanner.ranges);
}

void redactShortField(QString &value)
{
    if (!value.isEmpty() && looksLikeUrl(value))
        redactUrlInPlace(value);
    redactTextInPlace(value);
}

void redactEvent(RequestEvent &event, AlreadyMasked already)
{
    if (already == AlreadyMasked::Nothing && !event.headers.isEmpty()) {
        const QString authorization = event.headers.value(u"authorization");
        if (!authorization.isEmpty())
            applyIdentityFromAuthorization(event, authorization);
        bool needsRewrite = false;
        for (const auto &[name, value] : event.headers.items()) {
            if (isSecretHeader(name)) {
                needsRewrite = true;
                break;
            }
            QString probe = value;
            if ((looksLikeUrl(probe) && redactUrlInPlace(probe)) || redactTextInPlace(probe)) {
                needsRewrite = true;
                break;
            }
        }
        if (needsRewrite) {
            HttpHeaders kept;
            for (const auto &[name, value] : event.headers.items()) {
                if (isSecretHeader(name))
                    continue;
                QString v = value;
                if (looksLikeUrl(v))
                    redactUrlInPlace(v);
                redactTextInPlace(v);
                kept.set(name, v);
            }
            event.headers = kept;
        }
    }
    // A URL's secrets are its parameters and userinfo (redactUrl); the free-text scan runs only
    // when the URL shows something else worth it (see UrlTriggers).
    if (!event.url.isEmpty()) {
        const UrlTriggers triggers = urlTriggers(event.url);
        if (triggers.parameters)
            redactUrlParametersInPlace(event.url);
        if (triggers.text)
            redactTextInPlace(event.url);
    }
    if (already == AlreadyMasked::Nothing)
        redactTextInPlace(event.body);
    redactTextInPlace(event.text);
    if (!event.extraJson.isEmpty())
        event.extraJson = redactBytes(event.extraJson);
    // The short fields are not meant to hold secrets, but a log may put anything anywhere
    // ("identity": "Bearer eyJ...", an operation id that is a SAS URL): every text field is
    // scanned. Clean values cost one table lookup per character and stay shared.
    for (QString *field : {&event.requestId, &event.batchId, &event.operationId})
        redactShortField(*field);
    if (already == AlreadyMasked::Nothing) {
        for (QString *field :
             {&event.identity, &event.app, &event.tenant, &event.service, &event.category,
              &event.method, &event.serviceBusNamespace, &event.entity, &event.lane,
              &event.errorCode, &event.retryAfter, &event.breakerScope, &event.breakerState})
            redactShortField(*field);
    }
    event.secretsMasked = true;
}

QString quoteMasked(QStringView value, qsizetype maxChars)
{
    QString masked = value.toString();
    redactTextInPlace(masked);
    if (looksLikeUrl(masked))
        redactUrlInPlace(masked);
    // A credential in the wrong column ("status": "<an API key>") matches no pattern; a value
    // that is quoted only to explain why it was refused does not need its long random-looking
    // runs, so any run of 16 or more token characters mixing letters and digits goes too.
    QString out;
    out.reserve(masked.size() + 2);
    out.append(u'"');
    const QStringView view(masked);
    qsizetype i = 0;
    while (i < view.size()) {
        qsizetype end = i;
        bool letter = false;
        bool digit = false;
        while (end < view.size() && isTokenRunChar(view[end].unicode())) {
            letter = letter || isAsciiLetter(view[end].unicode());
            digit = digit || (view[end] >= u'0' && view[end] <= u'9');
            ++end;
        }
        if (end == i) {
            out.append(view[i]);
            ++i;
            continue;
        }
        if (end - i >= 16 && letter && digit)
            out.append(kRedacted);
        else
            out.append(view.sliced(i, end - i));
        i = end;
    }
    if (maxChars > 0 && out.size() > maxChars + 1) {
        out.truncate(maxChars + 1);
        out.append(u'…');
    }
    out.append(u'"');
    return out;
}

std::optional<JwtClaims> claimsFromAuthorization(QStringView authorizationHeaderValue)
{
    QStringView token = authorizationHeaderValue.trimmed();
    if (token.size() > 6 && equalsAsciiCi(token.first(6), "bearer"_L1) &&
        (token[6] == u' ' || token[6] == u'\t'))
        token = token.sliced(7).trimmed();
    const qsizetype dot1 = token.indexOf(u'.');
    if (dot1 <= 0)
        return std::nullopt;
    qsizetype dot2 = token.indexOf(u'.', dot1 + 1);
    if (dot2 < 0)
        dot2 = token.size();
    const QStringView payloadPart = token.sliced(dot1 + 1, dot2 - dot1 - 1);
    if (payloadPart.isEmpty())
        return std::nullopt;
    const auto payloadBytes = decodeBase64Url(payloadPart);
    if (!payloadBytes)
        return std::nullopt;
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(*payloadBytes, &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        return std::nullopt;
    const QJsonObject payload = doc.object();

    JwtClaims claims;
    for (const auto key : {"upn"_L1, "unique_name"_L1, "preferred_username"_L1}) {
        claims.user = claimString(payload, key);
        if (!claims.user.isEmpty())
            break;
    }
    claims.objectId = claimString(payload, "oid"_L1);
    claims.app = claimString(payload, "appid"_L1);
    if (claims.app.isEmpty())
        claims.app = claimString(payload, "azp"_L1);
    claims.tenant = claimString(payload, "tid"_L1);
    if (claims.user.isEmpty() && claims.objectId.isEmpty() && claims.app.isEmpty() &&
        claims.tenant.isEmpty())
        return std::nullopt;
    return claims;
}

void applyIdentityFromAuthorization(RequestEvent &event, QStringView authorizationValue)
{
    const auto claims = claimsFromAuthorization(authorizationValue);
    if (!claims)
        return;
    if (event.identity.isEmpty())
        event.identity = !claims->user.isEmpty() ? claims->user : claims->objectId;
    if (event.app.isEmpty())
        event.app = claims->app;
    if (event.tenant.isEmpty())
        event.tenant = claims->tenant;
}

} // namespace ts::redact
