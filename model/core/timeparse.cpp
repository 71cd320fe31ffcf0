#include "timeparse.h"

#include <QDateTime>

#include <algorithm>
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

bool isValidDate(qint64 year, int month, int day)
{
    if (month < 1 || month > 12 || day < 1)
        return false;
    static constexpr int kMonthDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return day <= kMonthDays[month - 1] + (month == 2 && leap ? 1 : 0);
}

std::optional<qint64> civilToMs(qint64 year, int month, int day, int hour, int minute, int second,
                                qint64 millis, qint64 offsetMinutes)
{
    // Years far outside the accepted range are refused before any arithmetic on them.
    if (year < 1969 || year > 10000 || !isValidDate(year, month, day) || hour < 0 || hour > 23 ||
        minute < 0 || minute > 59 || second < 0 || second > 60 || millis < 0 || millis > 999 ||
        offsetMinutes <= -24 * 60 || offsetMinutes >= 24 * 60)
        return std::nullopt;
    const qint64 days = daysFromCivil(year, unsigned(month), unsigned(day));
    const qint64 ms = ((days * 24 + hour) * 60 + minute - offsetMinutes) * Q_INT64_C(60000) +
                      second * 1000 + millis;
    if (ms < limits::kMinTsMs || ms > limits::kMaxTsMs)
        return std::nullopt;
    return ms;
}

std::optional<qint64> parseRfc3339Ms(std::string_view s)
{
    // YYYY-MM-DD[T ]hh:mm:ss[.fff...][Z|+hh:mm|-hh:mm|+hhmm]
    int year, month, day, hour, minute, second;
    if (!digits(s, 0, 4, year) || s.size() < 19 || s[4] != '-' || !digits(s, 5, 2, month) ||
        s[7] != '-' || !digits(s, 8, 2, day) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
        !digits(s, 11, 2, hour) || s[13] != ':' || !digits(s, 14, 2, minute) || s[16] != ':' ||
        !digits(s, 17, 2, second))
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
            if (oh > 23 || om > 59)
                return std::nullopt;
            offsetMinutes = (oh * 60 + om) * (c == '-' ? -1 : 1);
            pos = next;
        } else {
            return std::nullopt;
        }
    }
    if (pos != s.size())
        return std::nullopt;
    return civilToMs(year, month, day, hour, minute, second, millis, offsetMinutes);
}

std::optional<qint64> parseRfc3339Ms(QStringView text)
{
    const QByteArray latin = text.toLatin1();
    return parseRfc3339Ms(std::string_view(latin.constData(), static_cast<size_t>(latin.size())));
}

std::optional<qint64> unixNumberToMs(double value)
{
    const double ms = std::abs(value) < 1e11 ? value * 1000.0 : value;
    // Checked as a double first: llround of a value outside qint64 has no defined result.
    // (NaN fails the comparison too.)
    if (!(ms >= double(limits::kMinTsMs) - 0.5 && ms < double(limits::kMaxTsMs) + 0.5))
        return std::nullopt;
    return std::clamp(static_cast<qint64>(std::llround(ms)), limits::kMinTsMs, limits::kMaxTsMs);
}

namespace {

struct CivilDate
{
    qint64 year;
    unsigned month;
    unsigned day;
};

// The inverse of daysFromCivil() (Howard Hinnant's algorithm).
CivilDate civilFromDays(qint64 days)
{
    days += 719468;
    const qint64 era = (days >= 0 ? days : days - 146096) / 146097;
    const auto doe = static_cast<unsigned>(days - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    const unsigned day = doy - (153 * mp + 2) / 5 + 1;
    const unsigned month = mp < 10 ? mp + 3 : mp - 9;
    return {static_cast<qint64>(yoe) + era * 400 + (month <= 2 ? 1 : 0), month, day};
}

void putDigits(char16_t *out, unsigned value, int count)
{
    for (int i = count - 1; i >= 0; --i) {
        out[i] = char16_t(u'0' + value % 10);
        value /= 10;
    }
}

} // namespace

QString formatIsoMs(qint64 ms)
{
    // By hand: QDateTime::toString() with a format costs ~7,000 instructions per call (calendar
    // and locale machinery), and a report formats a timestamp for every alert and scope.
    constexpr qint64 kMsPerDay = 86400000;
    qint64 days = ms / kMsPerDay;
    qint64 msOfDay = ms % kMsPerDay;
    if (msOfDay < 0) {
        msOfDay += kMsPerDay;
        --days;
    }
    const CivilDate date = civilFromDays(days);
    if (date.year < 1 || date.year > 9999) {
        // Outside four-digit years QDateTime decides the spelling (sign, padding).
        return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC)
            .toString(QStringLiteral("yyyy-MM-ddTHH:mm:ss.zzzZ"));
    }
    const auto msInDay = static_cast<unsigned>(msOfDay);
    QString text(24, Qt::Uninitialized);
    char16_t *out = reinterpret_cast<char16_t *>(text.data());
    putDigits(out, unsigned(date.year), 4);
    out[4] = u'-';
    putDigits(out + 5, date.month, 2);
    out[7] = u'-';
    putDigits(out + 8, date.day, 2);
    out[10] = u'T';
    putDigits(out + 11, msInDay / 3600000, 2);
    out[13] = u':';
    putDigits(out + 14, msInDay / 60000 % 60, 2);
    out[16] = u':';
    putDigits(out + 17, msInDay / 1000 % 60, 2);
    out[19] = u'.';
    putDigits(out + 20, msInDay % 1000, 3);
    out[23] = u'Z';
    return text;
}

QString formatDuration(qint64 ms)
{
    if (ms < 0)
        ms = 0;
    if (ms < 10'000)
        return QString::number(static_cast<double>(ms) / 1000.0, 'f', 1) + QStringLiteral(" s");
    const qint64 seconds = ms / 1000;
    if (seconds < 3600) {
        const qint64 minutes = seconds / 60;
        if (minutes == 0)
            return QString::number(seconds) + QStringLiteral(" s");
        return QString::number(minutes) + QStringLiteral(" min ") + QString::number(seconds % 60) +
               QStringLiteral(" s");
    }
    const qint64 hours = seconds / 3600;
    if (hours < 48)
        return QString::number(hours) + QStringLiteral(" h ") +
               QString::number((seconds % 3600) / 60) + QStringLiteral(" min");
    return QString::number(hours / 24) + QStringLiteral(" d ") + QString::number(hours % 24) +
           QStringLiteral(" h");
}

} // namespace ts
