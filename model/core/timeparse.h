#pragma once
// Timestamp parsing and formatting on the hot path: hand-written because QDateTime::fromString
// costs microseconds per call and every log line carries a timestamp.

#include <QString>

#include <optional>
#include <string_view>

namespace ts {

// RFC 3339 / ISO 8601 date-time ("2026-02-18T22:44:09.512Z", "...+01:00", space instead of
// 'T', any number of fraction digits, offset optional = UTC). Returns ms since the epoch.
std::optional<qint64> parseRfc3339Ms(std::string_view text);
std::optional<qint64> parseRfc3339Ms(QStringView text);

// A numeric Unix time as the canonical log defines it: milliseconds, or seconds with a fraction
// when below 10^11 (nginx $msec).
qint64 unixNumberToMs(double value);

// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm).
qint64 daysFromCivil(qint64 year, unsigned month, unsigned day);

// "2026-02-18T22:46:00.000Z"
QString formatIsoMs(qint64 ms);

} // namespace ts
