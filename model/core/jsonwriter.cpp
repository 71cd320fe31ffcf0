#include "core/jsonwriter.h"

#include <QLocale>

#include <cmath>

namespace ts {

namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

char *writeUnicodeEscape(char *write, char16_t unit)
{
    *write++ = '\\';
    *write++ = 'u';
    *write++ = kHexDigits[(unit >> 12) & 0xf];
    *write++ = kHexDigits[(unit >> 8) & 0xf];
    *write++ = kHexDigits[(unit >> 4) & 0xf];
    *write++ = kHexDigits[unit & 0xf];
    return write;
}

} // namespace

void JsonWriter::appendEscaped(QByteArray &out, QStringView text)
{
    // Written through a pointer into room for the worst case (a \uXXXX escape, 6 bytes, per
    // UTF-16 unit), then cut to size: one resize per string instead of one append per piece.
    const qsizetype oldSize = out.size();
    out.resize(oldSize + 6 * text.size());
    char *const begin = out.data();
    char *write = begin + oldSize;
    const char16_t *at = text.utf16();
    const char16_t *const end = at + text.size();
    while (at != end) {
        const char16_t unit = *at++;
        if (unit < 0x80) {
            if (unit >= 0x20 && unit != u'"' && unit != u'\\') {
                *write++ = char(unit);
                continue;
            }
            char escaped = 0;
            switch (unit) {
            case u'"':
                escaped = '"';
                break;
            case u'\\':
                escaped = '\\';
                break;
            case u'\b':
                escaped = 'b';
                break;
            case u'\f':
                escaped = 'f';
                break;
            case u'\n':
                escaped = 'n';
                break;
            case u'\r':
                escaped = 'r';
                break;
            case u'\t':
                escaped = 't';
                break;
            default:
                break;
            }
            if (escaped) {
                *write++ = '\\';
                *write++ = escaped;
            } else {
                write = writeUnicodeEscape(write, unit); // the other control characters
            }
        } else if (unit < 0x800) {
            *write++ = char(0xc0 | (unit >> 6));
            *write++ = char(0x80 | (unit & 0x3f));
        } else if (unit < 0xd800 || unit > 0xdfff) {
            *write++ = char(0xe0 | (unit >> 12));
            *write++ = char(0x80 | ((unit >> 6) & 0x3f));
            *write++ = char(0x80 | (unit & 0x3f));
        } else if (unit <= 0xdbff && at != end && *at >= 0xdc00 && *at <= 0xdfff) {
            const char32_t codePoint =
                0x10000 + ((char32_t(unit) - 0xd800) << 10) + (char32_t(*at++) - 0xdc00);
            *write++ = char(0xf0 | (codePoint >> 18));
            *write++ = char(0x80 | ((codePoint >> 12) & 0x3f));
            *write++ = char(0x80 | ((codePoint >> 6) & 0x3f));
            *write++ = char(0x80 | (codePoint & 0x3f));
        } else {
            write = writeUnicodeEscape(write, unit); // an unpaired surrogate: not valid UTF-8
        }
    }
    out.truncate(write - begin);
}

void JsonWriter::indent(qsizetype levels)
{
    static constexpr char kSpaces[] = "                                                        "
                                      "                                        ";
    qsizetype spaces = 4 * levels;
    while (spaces > 0) {
        const qsizetype chunk = std::min<qsizetype>(spaces, qsizetype(sizeof(kSpaces) - 1));
        m_out.append(kSpaces, chunk);
        spaces -= chunk;
    }
}

void JsonWriter::beforeValue()
{
    if (m_afterKey) {
        m_afterKey = false;
        return;
    }
    if (m_levels.empty())
        return; // the document's root
    Level &level = m_levels.back();
    m_out.append(level.empty ? "\n" : ",\n");
    level.empty = false;
    indent(qsizetype(m_levels.size()));
}

void JsonWriter::key(QStringView name)
{
    Q_ASSERT(!m_levels.empty() && !m_afterKey);
    Level &level = m_levels.back();
#ifndef QT_NO_DEBUG
    Q_ASSERT_X(level.empty || QStringView(level.lastKey).compare(name) < 0, "JsonWriter::key",
               "members must come in QJsonObject's (sorted) order");
    level.lastKey = name.toString();
#endif
    m_out.append(level.empty ? "\n" : ",\n");
    level.empty = false;
    indent(qsizetype(m_levels.size()));
    m_out.append('"');
    appendEscaped(m_out, name);
    m_out.append("\": ", 3);
    m_afterKey = true;
}

void JsonWriter::open(char bracket)
{
    beforeValue();
    m_out.append(bracket);
    m_levels.emplace_back();
}

void JsonWriter::close(char bracket)
{
    Q_ASSERT(!m_levels.empty() && !m_afterKey);
    // Qt writes an empty container as its brackets on two lines too.
    m_out.append('\n');
    m_levels.pop_back();
    indent(qsizetype(m_levels.size()));
    m_out.append(bracket);
    if (m_levels.empty())
        m_out.append('\n'); // toJson() ends the document with a newline
}

void JsonWriter::string(QStringView text)
{
    beforeValue();
    m_out.append('"');
    appendEscaped(m_out, text);
    m_out.append('"');
}

void JsonWriter::integer(qint64 number)
{
    beforeValue();
    char digits[24];
    char *end = digits + sizeof(digits);
    char *at = end;
    // Magnitude as unsigned, so the most negative value has one too.
    quint64 magnitude = number < 0 ? quint64(0) - quint64(number) : quint64(number);
    do {
        *--at = char('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude != 0);
    if (number < 0)
        *--at = '-';
    m_out.append(at, end - at);
}

void JsonWriter::number(double value)
{
    beforeValue();
    if (std::isfinite(value))
        m_out.append(QByteArray::number(value, 'g', QLocale::FloatingPointShortest));
    else
        m_out.append("null", 4); // as Qt (RFC 4627 has no infinities or NaN)
}

void JsonWriter::boolean(bool value)
{
    beforeValue();
    m_out.append(value ? "true" : "false");
}

void JsonWriter::null()
{
    beforeValue();
    m_out.append("null", 4);
}

} // namespace ts
