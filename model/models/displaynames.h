#pragma once
// How the views name what a person reads, in one place so no two pages disagree:
// - identities and bucket keys short: a GUID is not a name. An application GUID in a key
//   ("<app-guid>+alice@contoso.com") moves out of the name into its own field (tooltip, column);
//   an application the log names ("note-bridge") is its display name and stays; a key that is
//   nothing but GUIDs shows each one abbreviated ("1f2e3d4c…").
// - the full value is kept for tooltips and exports (FullTextRole);
// - one spelling of "unknown" for a missing or unknown identity ("", "none", "unknown");
// - times in UTC or in local time, as the operator prefers (Preferences).
// Pure functions over strings (plus one display setting), Qt Core only.

#include <QList>
#include <QString>
#include <QStringList>
#include <QtGlobal>

namespace ts::models {

// The item-data role under which a model gives the full, unshortened value of a cell whose
// DisplayRole is shortened; CSV exports write it instead of the display text.
inline constexpr int FullTextRole = Qt::UserRole + 200;

// The one spelling of an unknown identity or key, on every page.
QString unknownLabel();
// "", "unknown", "none" (the engine's and the report's spellings of "no identity").
bool isUnknownName(QStringView name);

// Any other value (an errorCode, a throttle scope) with the one spelling of "unknown".
QString orUnknown(const QString &value);

// 8-4-4-4-12 hexadecimal digits, with or without braces.
bool looksLikeGuid(QStringView text);
// The first 8 hex digits and an ellipsis: "1f2e3d4c…".
QString abbreviatedGuid(QStringView guid);

struct ReadableName
{
    QString shortName;   // what a cell shows
    QString application; // the application GUID(s) moved out of the name, full ("" when none)
    QString full;        // the value as the data has it
};

// A bucket key or identity as a person reads it (parts joined by '+' in the engine's keys).
ReadableName readableName(const QString &key);
QString shortName(const QString &key);
// The full value for a tooltip: the key, and the application it moved out of the name.
QString nameTooltip(const QString &key);

// A breaker scope ("user:<id>", "graph:<id>", "app") with its id part shortened.
QString shortScope(const QString &scope);

// Short names for a whole column: where two different keys would read the same (one user
// through two applications), the abbreviated application is appended to tell them apart.
QStringList shortNames(const QStringList &keys);

// Times in the tables: UTC ("2026-02-18T22:42:10.000Z") or local ("2026-02-18 23:42:10.000").
// A display preference of the GUI thread (default UTC, as the reports).
void setDisplayTimeUtc(bool utc);
bool displayTimeUtc();
QString formatDisplayTime(qint64 ms);
// "Time (UTC)" / "Time (local)" with this label in front.
QString timeHeader(const QString &label);

} // namespace ts::models
