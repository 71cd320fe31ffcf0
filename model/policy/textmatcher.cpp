#include "textmatcher.h"

#include "core/textsearch.h"

#include <QHash>

#include <algorithm>
#include <mutex>
#include <string>

namespace ts {

namespace {

constexpr qsizetype kRegexCacheLimit = 4096;

// One compiled (and JIT-compiled) expression per distinct pattern in the process. Qt 6
// compiles with the JIT as soon as a pattern is checked, ~0.1 ms per pattern, and the same
// policy patterns are compiled by the policy's validation, the engine and the detectors'
// category classifier: a one-line `report` spent ~3 ms of its start-up doing it three times.
// QRegularExpression is implicitly shared and safe to match from several threads.
QRegularExpression compiledRegex(const QString &pattern)
{
    static std::mutex mutex; // protects cache
    static QHash<QString, QRegularExpression> cache;
    std::lock_guard lock(mutex);
    auto it = cache.constFind(pattern);
    if (it == cache.cend()) {
        if (cache.size() >= kRegexCacheLimit) // (patterns come from policies: a few dozen)
            cache.clear();
        QRegularExpression regex(pattern);
        regex.optimize(); // (compiles it now, under the lock, not on the first match)
        it = cache.insert(pattern, regex);
    }
    return it.value();
}

bool isMeta(QChar c)
{
    switch (c.unicode()) {
    case '\\':
    case '.':
    case '^':
    case '$':
    case '|':
    case '?':
    case '*':
    case '+':
    case '(':
    case ')':
    case '[':
    case ']':
    case '{':
    case '}':
        return true;
    default:
        return false;
    }
}

// An escaped character that stands for itself ("\." "\/" "\$"), as opposed to a class (\d, \w).
bool isLiteralEscape(QChar c)
{
    return !c.isLetterOrNumber();
}

// The hot comparisons of the matcher, inline: policy values are short (methods, service names,
// URL paths), where a library call into Qt's general string search costs more than the scan.
inline char16_t foldAscii(char16_t c)
{
    return (c >= u'A' && c <= u'Z') ? char16_t(c + (u'a' - u'A')) : c;
}

bool equalText(QStringView text, QStringView literal, Qt::CaseSensitivity cs)
{
    if (text.size() != literal.size())
        return false;
    if (text.isEmpty()) // (an empty string's data may be null: no memcmp on it)
        return true;
    const char16_t *a = text.utf16();
    const char16_t *b = literal.utf16();
    if (cs == Qt::CaseSensitive)
        return a == b || std::memcmp(a, b, size_t(text.size()) * sizeof(char16_t)) == 0;
    for (qsizetype i = 0; i < text.size(); ++i) {
        if (a[i] >= 0x80 || b[i] >= 0x80) // beyond ASCII: Unicode case folding
            return text.mid(i).compare(literal.mid(i), Qt::CaseInsensitive) == 0;
        if (foldAscii(a[i]) != foldAscii(b[i]))
            return false;
    }
    return true;
}

bool startsWithText(QStringView text, QStringView literal, Qt::CaseSensitivity cs)
{
    return text.size() >= literal.size() && equalText(text.left(literal.size()), literal, cs);
}

bool endsWithText(QStringView text, QStringView literal, Qt::CaseSensitivity cs)
{
    return text.size() >= literal.size() && equalText(text.right(literal.size()), literal, cs);
}

// Index of the first occurrence of literal in text at or after from, or -1.
qsizetype findText(QStringView text, QStringView literal, qsizetype from, Qt::CaseSensitivity cs)
{
    if (cs == Qt::CaseInsensitive || literal.isEmpty())
        return text.indexOf(literal, from, cs);
    return text::findSubstring(text.utf16(), text.size(), literal.utf16(), literal.size(), from);
}

} // namespace

bool TextMatcher::compile(const QString &pattern, QString *error)
{
    m_pattern = pattern;
    m_tokens.clear();
    m_alternatives.clear();
    m_literal.clear();
    m_regexCache.clear();
    m_lookaheadInner.reset();
    m_lookaheadRest.reset();
    m_lookaheadRestAlways = false;
    m_anchorStart = false;
    m_anchorEnd = false;
    m_case = Qt::CaseSensitive;

    // Validate with the real engine first, so every pattern that the fast paths accept is also a
    // valid regular expression and error messages come from PCRE.
    m_regex = compiledRegex(pattern);
    if (!m_regex.isValid()) {
        if (error) {
            *error = QStringLiteral("invalid regular expression \"%1\": %2 (at offset %3)")
                         .arg(pattern, m_regex.errorString())
                         .arg(m_regex.patternErrorOffset());
        }
        return false;
    }

    QStringView body(pattern);
    if (body.startsWith(u"(?i)")) {
        m_case = Qt::CaseInsensitive;
        body = body.mid(4);
    }
    if (body.startsWith(u'^')) {
        m_anchorStart = true;
        body = body.mid(1);
    }
    if (body.endsWith(u'$')) {
        // "\$" at the end is a literal dollar, not an anchor.
        qsizetype backslashes = 0;
        for (qsizetype i = body.size() - 2; i >= 0 && body[i] == u'\\'; --i)
            ++backslashes;
        if (backslashes % 2 == 0) {
            m_anchorEnd = true;
            body.chop(1);
        }
    }

    if (body.isEmpty() && !m_anchorStart && !m_anchorEnd) {
        m_strategy = Strategy::Always;
        return true;
    }
    if (compileTokens(body)) {
        // ".*" at either end only restates that the match may start or end anywhere: "^.*/x/"
        // is "/x/" unanchored, so it runs as one literal search instead of a scan per position.
        if (!m_tokens.empty() && m_tokens.front().kind == TokenKind::AnyStar) {
            m_tokens.erase(m_tokens.begin());
            m_anchorStart = false;
        }
        if (!m_tokens.empty() && m_tokens.back().kind == TokenKind::AnyStar) {
            m_tokens.pop_back();
            m_anchorEnd = false;
        }
        if (m_tokens.empty() && !m_anchorStart && !m_anchorEnd) {
            m_strategy = Strategy::Always;
            return true;
        }
        if (m_tokens.empty() || (m_tokens.size() == 1 && m_tokens[0].kind == TokenKind::Literal)) {
            m_strategy = Strategy::Literal;
            m_literal = m_tokens.empty() ? QString() : m_tokens[0].text;
            m_tokens.clear();
        } else {
            m_strategy = Strategy::Tokens;
        }
        return true;
    }
    if (compileAlternatives(body)) {
        m_strategy = Strategy::Alternatives;
        return true;
    }
    if (compileLookahead(body)) {
        m_strategy = Strategy::NegativeLookahead;
        return true;
    }
    m_strategy = Strategy::Regex;
    return true;
}

bool TextMatcher::compileTokens(QStringView body)
{
    m_tokens.clear();
    QString literal;
    auto flushLiteral = [&] {
        if (!literal.isEmpty()) {
            m_tokens.push_back({TokenKind::Literal, literal});
            literal.clear();
        }
    };
    for (qsizetype i = 0; i < body.size(); ++i) {
        const QChar c = body[i];
        if (c == u'\\') {
            if (i + 1 >= body.size() || !isLiteralEscape(body[i + 1]))
                return false;
            literal.append(body[++i]);
            continue;
        }
        if (c == u'.') {
            flushLiteral();
            if (i + 1 < body.size() && body[i + 1] == u'*') {
                m_tokens.push_back({TokenKind::AnyStar, {}});
                ++i;
            } else if (i + 1 < body.size() && body[i + 1] == u'+') {
                m_tokens.push_back({TokenKind::AnyPlus, {}});
                ++i;
            } else {
                if (i + 1 < body.size() && (body[i + 1] == u'?' || body[i + 1] == u'{'))
                    return false;
                m_tokens.push_back({TokenKind::AnyChar, {}});
            }
            continue;
        }
        if (c == u'[') {
            const QStringView rest = body.mid(i);
            if (rest.startsWith(u"[^/]+")) {
                flushLiteral();
                m_tokens.push_back({TokenKind::SegmentPlus, {}});
                i += 4;
                continue;
            }
            if (rest.startsWith(u"[^/]*")) {
                flushLiteral();
                m_tokens.push_back({TokenKind::SegmentStar, {}});
                i += 4;
                continue;
            }
            return false;
        }
        if (isMeta(c))
            return false;
        // A literal followed by a quantifier binds only to its last character: not ours.
        if (i + 1 < body.size()) {
            const QChar next = body[i + 1];
            if (next == u'?' || next == u'*' || next == u'+' || next == u'{')
                return false;
        }
        literal.append(c);
    }
    flushLiteral();
    return true;
}

bool TextMatcher::compileAlternatives(QStringView body)
{
    // "(a|b|c)" or, unanchored, "a|b|c": every alternative a plain literal.
    QStringView inner = body;
    if (inner.startsWith(u'(') && inner.endsWith(u')')) {
        inner = inner.mid(1, inner.size() - 2);
        if (inner.startsWith(u"?:"))
            inner = inner.mid(2);
    } else if (m_anchorStart || m_anchorEnd) {
        return false; // "^a|b$" means "(^a)|(b$)"
    }
    QStringList alternatives;
    QString current;
    for (qsizetype i = 0; i < inner.size(); ++i) {
        const QChar c = inner[i];
        if (c == u'|') {
            alternatives.append(current);
            current.clear();
            continue;
        }
        if (c == u'\\') {
            if (i + 1 >= inner.size() || !isLiteralEscape(inner[i + 1]))
                return false;
            current.append(inner[++i]);
            continue;
        }
        if (isMeta(c))
            return false;
        current.append(c);
    }
    alternatives.append(current);
    m_alternatives = alternatives;
    return true;
}

bool TextMatcher::compileLookahead(QStringView body)
{
    // Policies say "not a OneNote URL" as ^(?!.*/onenote/) and "a real user" as ^(?!unknown$).
    if (!m_anchorStart || m_case != Qt::CaseSensitive || !body.startsWith(u"(?!"))
        return false;
    const qsizetype close = body.indexOf(u')');
    if (close < 0)
        return false;
    const QStringView inner = body.mid(3, close - 3);
    if (inner.contains(u'('))
        return false;
    QStringView rest = body.mid(close + 1);
    // Both parts are anchored at the start, as the lookahead is.
    QString innerPattern = u'^' + inner.toString();
    QString restPattern = u'^' + rest.toString();
    if (m_anchorEnd)
        restPattern += u'$';
    auto innerMatcher = std::make_shared<TextMatcher>();
    auto restMatcher = std::make_shared<TextMatcher>();
    if (!innerMatcher->compile(innerPattern) || !restMatcher->compile(restPattern))
        return false;
    if (innerMatcher->strategy() == Strategy::Regex || restMatcher->strategy() == Strategy::Regex)
        return false;
    m_lookaheadInner = std::move(innerMatcher);
    // "^(?!inner)" alone: the rest is the empty pattern at the start, which always matches.
    m_lookaheadRestAlways = rest.isEmpty() && !m_anchorEnd;
    // "^(?!unknown$)." : the rest only asks for one character, whatever it is.
    m_lookaheadRestNonEmpty = rest == u"." && !m_anchorEnd;
    m_lookaheadRest = std::move(restMatcher);
    return true;
}

bool TextMatcher::sameLiteralAs(const TextMatcher &other) const
{
    return m_strategy == Strategy::Literal && other.m_strategy == Strategy::Literal &&
           m_anchorStart == other.m_anchorStart && m_anchorEnd == other.m_anchorEnd &&
           m_case == other.m_case && m_literal == other.m_literal;
}

bool TextMatcher::isComplementOf(const TextMatcher &other) const
{
    return m_strategy == Strategy::NegativeLookahead && m_lookaheadRestAlways &&
           m_lookaheadInner->sameLiteralAs(other);
}

bool TextMatcher::matches(QStringView text) const
{
    switch (m_strategy) {
    case Strategy::Always:
        return true;
    case Strategy::Literal:
        if (m_anchorStart && m_anchorEnd)
            return equalText(text, m_literal, m_case);
        if (m_anchorStart)
            return startsWithText(text, m_literal, m_case);
        if (m_anchorEnd)
            return endsWithText(text, m_literal, m_case);
        return findText(text, m_literal, 0, m_case) >= 0;
    case Strategy::Alternatives:
        for (const QString &alternative : m_alternatives) {
            bool hit = false;
            if (m_anchorStart && m_anchorEnd)
                hit = equalText(text, alternative, m_case);
            else if (m_anchorStart)
                hit = startsWithText(text, alternative, m_case);
            else if (m_anchorEnd)
                hit = endsWithText(text, alternative, m_case);
            else
                hit = findText(text, alternative, 0, m_case) >= 0;
            if (hit)
                return true;
        }
        return false;
    case Strategy::Tokens: {
        if (m_anchorStart)
            return matchTokensAt(0, text, 0);
        if (m_tokens.front().kind == TokenKind::Literal) {
            const QString &first = m_tokens.front().text;
            for (qsizetype pos = findText(text, first, 0, m_case); pos >= 0;
                 pos = findText(text, first, pos + 1, m_case)) {
                if (matchTokensAt(0, text, pos))
                    return true;
            }
            return false;
        }
        for (qsizetype pos = 0; pos <= text.size(); ++pos) {
            if (matchTokensAt(0, text, pos))
                return true;
        }
        return false;
    }
    case Strategy::NegativeLookahead:
        if (m_lookaheadRestNonEmpty && text.isEmpty())
            return false;
        return !m_lookaheadInner->matches(text) &&
               (m_lookaheadRestAlways || m_lookaheadRestNonEmpty || m_lookaheadRest->matches(text));
    case Strategy::Regex:
        return matchRegex(text);
    }
    return false;
}

bool TextMatcher::matchTokensAt(size_t tokenIndex, QStringView text, qsizetype pos) const
{
    if (tokenIndex == m_tokens.size())
        return !m_anchorEnd || pos == text.size();
    const Token &token = m_tokens[tokenIndex];
    const qsizetype size = text.size();
    switch (token.kind) {
    case TokenKind::Literal:
        if (!startsWithText(text.mid(pos), token.text, m_case))
            return false;
        return matchTokensAt(tokenIndex + 1, text, pos + token.text.size());
    case TokenKind::AnyChar:
        return pos < size && matchTokensAt(tokenIndex + 1, text, pos + 1);
    case TokenKind::SegmentPlus:
    case TokenKind::SegmentStar: {
        qsizetype end = pos;
        while (end < size && text[end] != u'/')
            ++end;
        const qsizetype first = token.kind == TokenKind::SegmentPlus ? pos + 1 : pos;
        // A literal that starts with '/' can only follow where the segment ends ("[^/]+/items/"):
        // one attempt instead of one per length of the segment.
        if (tokenIndex + 1 < m_tokens.size() &&
            m_tokens[tokenIndex + 1].kind == TokenKind::Literal &&
            m_tokens[tokenIndex + 1].text.startsWith(u'/')) {
            return end >= first && matchTokensAt(tokenIndex + 1, text, end);
        }
        // Longest first: a segment normally runs up to the next '/'.
        for (qsizetype k = end; k >= first; --k) {
            if (matchTokensAt(tokenIndex + 1, text, k))
                return true;
        }
        return false;
    }
    case TokenKind::AnyPlus:
    case TokenKind::AnyStar: {
        const qsizetype first = token.kind == TokenKind::AnyPlus ? pos + 1 : pos;
        // ".*/onenote/": jump between occurrences of the literal instead of trying every
        // position (the order of attempts does not change a yes/no answer).
        if (tokenIndex + 1 < m_tokens.size() &&
            m_tokens[tokenIndex + 1].kind == TokenKind::Literal) {
            const QString &next = m_tokens[tokenIndex + 1].text;
            for (qsizetype k = findText(text, next, first, m_case); k >= 0;
                 k = findText(text, next, k + 1, m_case)) {
                if (matchTokensAt(tokenIndex + 1, text, k))
                    return true;
            }
            return false;
        }
        for (qsizetype k = size; k >= first; --k) {
            if (matchTokensAt(tokenIndex + 1, text, k))
                return true;
        }
        return false;
    }
    }
    return false;
}

bool TextMatcher::matchRegex(QStringView text) const
{
    // Keyed by the hash of the view so that a hit costs no allocation; the stored text settles
    // collisions.
    const size_t hash = qHash(text);
    const auto cached = m_regexCache.constFind(hash);
    if (cached != m_regexCache.cend() && cached->first == text)
        return cached->second;
    const bool hit = m_regex.match(text).hasMatch();
    if (m_regexCache.size() >= kRegexCacheLimit)
        m_regexCache.clear();
    m_regexCache.insert(hash, {text.toString(), hit});
    return hit;
}

} // namespace ts
