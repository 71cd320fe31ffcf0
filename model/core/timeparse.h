#pragma once
// Timestamp parsing and formatting on the hot path: hand-written because QDateTime::fromString
// costs microseconds per call and every log line carries a timestamp.

#include "core/valuelimits.h"

#include <QString>

#include <optional>
#include <string_view>

namespace ts {

// Every parser below returns only real instants within [limits::kMinTsMs, limits::kMaxTsMs]
// (1970-01-01 to 9999-12-31, core/valuelimits.h): "2026-02-30" or "25:00" is not a time, and
// neither is a Unix number of 1e300, rather than being rolled over into another instant.

// RFC 3339 / ISO 8601 date-time ("2026-02-18T22:44:09.512Z", "...+01:00", space instead of
// 'T', any number of fraction digits, offset optional = UTC, offsets up to +-23:59). Returns ms
// since the epoch.
std::optional<qint64> parseRfc3339Ms(std::string_view text);
std::optional<qint64> parseRfc3339Ms(QStringView text);

// A numeric Unix time as the canonical log defines it: milliseconds, or seconds with a fraction
// when below 10^11 (nginx $msec). nullopt for NaN, infinities and instants out of range.
std::optional<qint64> unixNumberToMs(double value);

// Whether year-month-day is a day of the proleptic Gregorian calendar (day within its month,
// February 29 in leap years only).
bool isValidDate(qint64 year, int month, int day);

// The instant of a civil date and time at a UTC offset (minutes east of UTC), after checking
// every field: a valid date, hour 0..23, minute 0..59, second 0..60 (a leap second is read as
// the next second), millis 0..999, offset within +-23:59; and the result within the range above.
// Every time parser in the codebase composes its fields through this one function.
std::optional<qint64> civilToMs(qint64 year, int month, int day, int hour, int minute, int second,
                                qint64 millis = 0, qint64 offsetMinutes = 0);

// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm).
qint64 daysFromCivil(qint64 year, unsigned month, unsigned day);

// "2026-02-18T22:46:00.000Z"
QString formatIsoMs(qint64 ms);
// "1.2 s", "3 min 20 s", "2 h 5 min", "3 d 4 h": durations an operator reads at a glance.
QString formatDuration(qint64 ms);

} // namespace ts
