#include "displaynames.h"

#include "core/timeparse.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QHash>

namespace ts::models {

namespace {
// Written by the Preferences on the GUI thread, read by the models on the same thread.
bool g_displayTimeUtc = true;

bool isHex(QChar c)
{
    return (c >= u'0' && c <= u'9') || (c >= u'a' && c <= u'f') || (c >= u'A' && c <= u'F');
}
} // namespace

QString unknownLabel()
{
    return QStringLiteral("unknown");
}

bool isUnknownName(QStringView name)
{
    const QStringView trimmed = name.trimmed();
    return trimmed.isEmpty() || trimmed.compare(u"unknown", Qt::CaseInsensitive) == 0 ||
           trimmed.compare(u"none", Qt::CaseInsensitive) == 0;
}

QString orUnknown(const QString &value)
{
    return isUnknownName(value) ? unknownLabel() : value;
}

bool looksLikeGuid(QStringView text)
{
    if (text.size() == 38 && text.front() == u'{' && text.back() == u'}')
        text = text.mid(1, 36);
    if (text.size() != 36)
        return false;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? text[i] != u'-' : !isHex(text[i]))
            return false;
    }
    return true;
}

QString abbreviatedGuid(QStringView guid)
{
    if (guid.startsWith(u'{'))
        guid = guid.mid(1);
    return guid.left(8).toString() + QChar(0x2026);
}

ReadableName readableName(const QString &key)
{
    ReadableName name;
    name.full = key;
    if (isUnknownName(key)) {
        name.shortName = unknownLabel();
        return name;
    }
    const QStringList parts = key.split(u'+');
    QStringList readable;
    QStringList guids;
    for (const QString &part : parts) {
        if (looksLikeGuid(part))
            guids.append(part);
        else
            readable.append(isUnknownName(part) ? unknownLabel() : part);
    }
    name.application = guids.join(u'+');
    if (readable.isEmpty()) {
        // Nothing but GUIDs (a service principal, an app-wide bucket): abbreviate them.
        QStringList abbreviated;
        for (const QString &guid : std::as_const(guids))
            abbreviated.append(abbreviatedGuid(guid));
        name.shortName = abbreviated.join(u'+');
        name.application.clear(); // the whole name is the id: nothing moved out
        return name;
    }
    name.shortName = readable.join(u'+');
    return name;
}

QString shortName(const QString &key)
{
    return readableName(key).shortName;
}

QString nameTooltip(const QString &key)
{
    const ReadableName name = readableName(key);
    if (name.full.isEmpty())
        return unknownLabel();
    if (name.application.isEmpty())
        return name.full;
    return QCoreApplication::translate("DisplayNames", "%1\nApplication: %2")
        .arg(name.full, name.application);
}

QString shortScope(const QString &scope)
{
    const qsizetype colon = scope.indexOf(u':');
    if (colon < 0)
        return looksLikeGuid(scope) || isUnknownName(scope) ? shortName(scope) : scope;
    return scope.left(colon + 1) + shortName(scope.mid(colon + 1));
}

QStringList shortNames(const QStringList &keys)
{
    QStringList names;
    names.reserve(keys.size());
    QHash<QString, int> uses; // distinct keys per short name
    QHash<QString, bool> seen;
    for (const QString &key : keys) {
        names.append(shortName(key));
        if (!seen.contains(key)) {
            seen.insert(key, true);
            ++uses[names.constLast()];
        }
    }
    for (qsizetype i = 0; i < keys.size(); ++i) {
        if (uses.value(names.at(i)) < 2)
            continue;
        const ReadableName name = readableName(keys.at(i));
        if (!name.application.isEmpty()) {
            QStringList abbreviated;
            for (const QString &guid : name.application.split(u'+'))
                abbreviated.append(abbreviatedGuid(guid));
            names[i] += QStringLiteral(" (") + abbreviated.join(u'+') + u')';
        }
    }
    return names;
}

void setDisplayTimeUtc(bool utc)
{
    g_displayTimeUtc = utc;
}

bool displayTimeUtc()
{
    return g_displayTimeUtc;
}

QString formatDisplayTime(qint64 ms)
{
    if (g_displayTimeUtc)
        return formatIsoMs(ms);
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::LocalTime)
        .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"));
}

QString timeHeader(const QString &label)
{
    return g_displayTimeUtc ? QCoreApplication::translate("DisplayNames", "%1 (UTC)").arg(label)
                            : QCoreApplication::translate("DisplayNames", "%1 (local)").arg(label);
}

} // namespace ts::models
