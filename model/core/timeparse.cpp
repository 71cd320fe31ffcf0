#include "timeparse.h"

#include <QDateTime>

#include <cmath>

namespace ts {

qint64 daysFromCivil(qint64 year, unsigned month, unsigned day)
{
    year -= month <= 2 ? 1 : 0;
    const qint64 era = (year >= 0 ? year : year - 399) / 400;
    const auto yoe = static_cast<unsigned>(year - era * 400);
    const unsigned doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<qint64>(doe) - 719468;
}

namespace {

bool digits(std::string_view s, size_t pos, size_t count, int &out)
{
    if (pos + count > s.size())
        return false;
    int value = 0;
    for (size_t i = pos; i < pos + count; ++i) {
        const char c = s[i];
        if (c < '0' || c > '9')
            return false;
        value = value * 10 + (c - '0');
    }
    out = value;
    return true;
}

} // namespace

std::optional<qint64> parseRfc3339Ms(std::string_view s)
{
    // YYYY-MM-DD[T ]hh:mm:ss[.fff...][Z|+hh:mm|-hh:mm|+hhmm]
    int year, month, day, hour, minute, second;
    if (!digits(s, 0, 4, year) || s.size() < 19 || s[4] != '-' || !digits(s, 5, 2, month)
        || s[7] != '-' || !digits(s, 8, 2, day) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ')
        || !digits(s, 11, 2, hour) || s[13] != ':' || !digits(s, 14, 2, minute) || s[16] != ':'
        || !digits(s, 17, 2, second))
        return std::nullopt;
    if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60)
        return std::nullopt;
    size_t pos = 19;
    qint64 millis = 0;
    if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
        ++pos;
        int scale = 100;
        const size_t start = pos;
        while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
            millis += (s[pos] - '0') * scale;
            scale /= 10;
            ++pos;
        }
        if (pos == start)
            return std::nullopt;
    }
    qint64 offsetMinutes = 0;
    if (pos < s.size()) {
        const char c = s[pos];
        if (c == 'Z' || c == 'z') {
            ++pos;
        } else if (c == '+' || c == '-') {
            int oh, om = 0;
            if (!digits(s, pos + 1, 2, oh))
                return std::nullopt;
            size_t next = pos + 3;
            if (next < s.size() && s[next] == ':')
                ++next;
            if (next < s.size()) {
                if (!digits(s, next, 2, om))
                    return std::nullopt;
                next += 2;
            }
            offsetMinutes = (oh * 60 + om) * (c == '-' ? -1 : 1);
            pos = next;
        } else {
            return std::nullopt;
        }
    }
    if (pos != s.size())
        return std::nullopt;
    const qint64 days = daysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
    const qint64 secs = days * 86400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60;
    return secs * 1000 + millis;
}

std::optional<qint64> parseRfc3339Ms(QStringView text)
{
    const QByteArray latin = text.toLatin1();
    return parseRfc3339Ms(std::string_view(latin.constData(), static_cast<size_t>(latin.size())));
}

qint64 unixNumberToMs(double value)
{
    if (std::abs(value) < 1e11)
        return static_cast<qint64>(std::llround(value * 1000.0));
    return static_cast<qint64>(std::llround(value));
}

QString formatIsoMs(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC)
        .toString(QStringLiteral("yyyy-MM-ddTHH:mm:ss.zzzZ"));
}

} // namespace ts
