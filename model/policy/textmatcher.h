#pragma once
// A regular expression from a policy file, compiled once into the cheapest matcher that gives
// the same answer. Policies match on service names, methods and URL shapes; nearly all of those
// patterns are literals, anchored literals, alternations of literals or URL shapes made of
// literals and "[^/]+" segments. Those run as plain QStringView scans (tens of ns); anything
// else falls back to QRegularExpression with a bounded cache keyed by the input, because logs
// repeat the same values (methods, identities, URL shapes) millions of times.

#include <QHash>
#include <QRegularExpression>
#include <QString>
#include <QStringList>
#include <QStringView>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace ts {

class TextMatcher
{
public:
    TextMatcher() = default;
    // Returns false (and sets *error) when the pattern is not a valid regular expression.
    bool compile(const QString &pattern, QString *error = nullptr);

    // Search semantics (like QRegularExpression::match(...).hasMatch()): the pattern may match
    // anywhere unless it is anchored with ^ / $.
    [[nodiscard]] bool matches(QStringView text) const;

    [[nodiscard]] const QString &pattern() const { return m_pattern; }
    // For tests and diagnostics: which strategy the pattern compiled to.
    enum class Strategy { Always, Literal, Alternatives, Tokens, NegativeLookahead, Regex };
    [[nodiscard]] Strategy strategy() const { return m_strategy; }
    // The one text this pattern matches ("^fabric$"), when it is a case-sensitive anchored
    // literal: lets a caller index policies by service name instead of testing each one.
    [[nodiscard]] std::optional<QString> exactText() const
    {
        if (m_strategy == Strategy::Literal && m_anchorStart && m_anchorEnd &&
            m_case == Qt::CaseSensitive) {
            return m_literal;
        }
        return std::nullopt;
    }

    // True when this pattern matches exactly the texts `other` does not: "^(?!.*/onenote/)"
    // against "/onenote/". A caller that has the answer of one has the other's for free.
    [[nodiscard]] bool isComplementOf(const TextMatcher &other) const;

private:
    // Same strategy and literal: the two match the same texts (a conservative test).
    [[nodiscard]] bool sameLiteralAs(const TextMatcher &other) const;

    enum class TokenKind : quint8 { Literal, AnyChar, SegmentPlus, SegmentStar, AnyPlus, AnyStar };
    struct Token
    {
        TokenKind kind;
        QString text; // Literal only
    };

    bool compileTokens(QStringView body);
    bool compileAlternatives(QStringView body);
    bool compileLookahead(QStringView body);
    [[nodiscard]] bool matchTokensAt(size_t tokenIndex, QStringView text, qsizetype pos) const;
    [[nodiscard]] bool matchRegex(QStringView text) const;

    QString m_pattern;
    Strategy m_strategy = Strategy::Always;
    bool m_anchorStart = false;
    bool m_anchorEnd = false;
    Qt::CaseSensitivity m_case = Qt::CaseSensitive;
    QString m_literal;           // Literal
    QStringList m_alternatives;  // Alternatives (each a literal)
    std::vector<Token> m_tokens; // Tokens
    // NegativeLookahead: "^(?!inner)rest" = rest matches at the start and inner does not.
    std::shared_ptr<const TextMatcher> m_lookaheadInner;
    std::shared_ptr<const TextMatcher> m_lookaheadRest;
    bool m_lookaheadRestAlways = false;
    bool m_lookaheadRestNonEmpty = false; // the rest is "." alone
    QRegularExpression m_regex;           // Regex
    // Regex results by input. Mutable: a cache does not change what matches() answers. Not
    // thread-safe; each engine compiles its own matchers.
    mutable QHash<size_t, std::pair<QString, bool>> m_regexCache;
};

} // namespace ts
