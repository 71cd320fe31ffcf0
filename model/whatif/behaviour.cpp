#include "whatif/behaviour.h"

#include <QFile>
#include <QJsonDocument>

#include <cmath>
#include <limits>

namespace ts::whatif {

namespace {

// Seconds as --backoff spells them ("2", "0.5"); nullopt unless a finite number >= 0.
std::optional<qint64> secondsToMs(const QString &text)
{
    bool ok = false;
    const double seconds = text.toDouble(&ok);
    if (!ok || !std::isfinite(seconds) || seconds < 0 || seconds > 86400.0 * 365)
        return std::nullopt;
    return qint64(std::llround(seconds * 1000.0));
}

QString secondsText(qint64 ms)
{
    return QString::number(double(ms) / 1000.0, 'g', 10);
}

} // namespace

qint64 Backoff::delayMs(int retry) const
{
    if (kind == Kind::Fixed || retry <= 1)
        return baseMs;
    // Doubling past 2^40 ms (35 years) only overflows: clamp the exponent.
    const int doublings = std::min(retry - 1, 40);
    const double delay = double(baseMs) * std::ldexp(1.0, doublings);
    const double capped = capMs > 0 ? std::min(delay, double(capMs)) : delay;
    return qint64(std::min(capped, double(std::numeric_limits<qint64>::max() / 4)));
}

QString Backoff::spelling() const
{
    if (kind == Kind::Fixed)
        return u"fixed:"_qs + secondsText(baseMs);
    return u"exp:"_qs + secondsText(baseMs) +
           (capMs > 0 ? u":"_qs + secondsText(capMs) : QString());
}

std::optional<Backoff> Backoff::parse(const QString &text, QString *error)
{
    const QStringList parts = text.split(u':');
    Backoff backoff;
    const QString usage =
        u"--backoff takes exp:BASE[:CAP] or fixed:S (seconds), not \""_qs + text + u"\""_qs;
    if (parts.size() == 2 && parts[0] == u"fixed") {
        const auto base = secondsToMs(parts[1]);
        if (!base) {
            *error = usage;
            return std::nullopt;
        }
        backoff.baseMs = *base;
        return backoff;
    }
    if ((parts.size() == 2 || parts.size() == 3) && parts[0] == u"exp") {
        const auto base = secondsToMs(parts[1]);
        const auto cap = parts.size() == 3 ? secondsToMs(parts[2]) : std::optional<qint64>(0);
        if (!base || !cap || *base <= 0 || (parts.size() == 3 && *cap < *base)) {
            *error = usage + u" (BASE > 0, CAP >= BASE)"_qs;
            return std::nullopt;
        }
        backoff.kind = Kind::Exponential;
        backoff.baseMs = *base;
        backoff.capMs = *cap;
        return backoff;
    }
    *error = usage;
    return std::nullopt;
}

std::optional<double> Behaviour::paceFor(const QString &identity) const
{
    const auto it = paceByIdentity.constFind(identity);
    if (it != paceByIdentity.constEnd())
        return it.value();
    return pacePerSecond;
}

QString Behaviour::describe() const
{
    QStringList parts;
    parts << (pacePerSecond ? u"paced at "_qs + formatPace(*pacePerSecond) : u"unpaced"_qs);
    if (obeyRetryAfter)
        parts.last() += u" obeying Retry-After"_qs;
    if (concurrency > 0)
        parts << QStringLiteral("%1 in flight").arg(concurrency);
    if (retries == 0) {
        parts << u"no retries"_qs;
    } else {
        parts << QStringLiteral("%1 retr%2, %3 backoff")
                     .arg(retries)
                     .arg(retries == 1 ? u"y"_qs : u"ies"_qs)
                     .arg(backoff.kind == Backoff::Kind::Fixed
                              ? u"fixed "_qs + secondsText(backoff.baseMs) + u" s"_qs
                              : u"exponential from "_qs + secondsText(backoff.baseMs) + u" s"_qs);
    }
    if (jitterSeed)
        parts << u"jitter"_qs;
    if (breaker)
        parts << breaker->matchingPreset() + u" breaker"_qs;
    if (backgroundCapPercent)
        parts << QStringLiteral("background capped at %1 %").arg(*backgroundCapPercent);
    return parts.join(u", "_qs);
}

QJsonObject Behaviour::toJson() const
{
    QJsonObject object{
        {u"pacePerSecond"_qs, pacePerSecond ? QJsonValue(*pacePerSecond) : QJsonValue()},
        {u"concurrency"_qs, concurrency > 0 ? QJsonValue(concurrency) : QJsonValue(u"log"_qs)},
        {u"obeyRetryAfter"_qs, obeyRetryAfter},
        {u"retries"_qs, retries},
        {u"backoff"_qs, backoff.spelling()},
        {u"jitterSeed"_qs, jitterSeed ? QJsonValue(QString::number(*jitterSeed)) : QJsonValue()},
        {u"breaker"_qs, breaker ? QJsonValue(breaker->toJson()) : QJsonValue()},
        {u"backgroundCapPercent"_qs,
         backgroundCapPercent ? QJsonValue(*backgroundCapPercent) : QJsonValue()},
        {u"description"_qs, describe()},
    };
    if (!paceByIdentity.isEmpty()) {
        QJsonObject paces;
        for (auto it = paceByIdentity.constBegin(); it != paceByIdentity.constEnd(); ++it)
            paces.insert(it.key(), it.value());
        object.insert(u"paceByIdentity"_qs, paces);
    }
    return object;
}

std::optional<double> parsePace(const QString &text, QString *error)
{
    const qsizetype slash = text.indexOf(u'/');
    const QString number = slash < 0 ? text : text.left(slash);
    const QString unit = slash < 0 ? u"s"_qs : text.mid(slash + 1).toLower();
    double seconds = 0;
    if (unit == u"s" || unit == u"sec" || unit == u"second")
        seconds = 1;
    else if (unit == u"min" || unit == u"m" || unit == u"minute")
        seconds = 60;
    else if (unit == u"h" || unit == u"hour")
        seconds = 3600;
    bool ok = false;
    const double count = number.toDouble(&ok);
    if (seconds == 0 || !ok || !std::isfinite(count) || count <= 0 || count > 1e9) {
        *error = u"--pace takes a positive rate: R/s, R/min or R/h (e.g. 110/min), not \""_qs +
                 text + u"\""_qs;
        return std::nullopt;
    }
    return count / seconds;
}

std::optional<BreakerModel> parseBreaker(const QString &nameOrFile, QString *error)
{
    if (const auto preset = BreakerModel::fromPreset(nameOrFile))
        return preset;
    QFile file(nameOrFile);
    if (!file.exists()) {
        *error = u"--breaker takes "_qs + BreakerModel::presetNames().join(u", "_qs) +
                 u" or a JSON file, not \""_qs + nameOrFile + u"\""_qs;
        return std::nullopt;
    }
    if (!file.open(QIODevice::ReadOnly)) {
        *error = nameOrFile + u": "_qs + file.errorString();
        return std::nullopt;
    }
    const QJsonDocument document = QJsonDocument::fromJson(file.readAll());
    // A policy file's `breaker` object, or the object itself.
    QJsonObject object = document.object();
    if (object.value(u"breaker"_qs).isObject())
        object = object.value(u"breaker"_qs).toObject();
    QString why;
    auto model = BreakerModel::fromJson(object, &why);
    if (!document.isObject() || !model) {
        *error = nameOrFile + u": "_qs + (why.isEmpty() ? u"not a JSON object"_qs : why);
        return std::nullopt;
    }
    return model;
}

} // namespace ts::whatif
