#include "whatif/whatifformat.h"

#include "core/timeparse.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QLocale>

namespace ts::whatif {

namespace {

QString identityName(const QString &identity)
{
    return identity.isEmpty() ? u"none"_qs : identity;
}

QString count(qint64 value, const QString &singular, const QString &plural)
{
    return QLocale::c().toString(value) + u' ' + (value == 1 ? singular : plural);
}

} // namespace

QJsonObject totalsToJson(const RunTotals &totals, bool simulated)
{
    const bool any = totals.requests > 0 || totals.operations > 0;
    QJsonObject object{
        {u"requests"_qs, totals.requests},
        {u"throttles"_qs, totals.throttles},
        {u"retries"_qs, totals.retries},
        {u"operations"_qs, totals.operations},
        {u"lostOperations"_qs, totals.lostOperations},
        {u"start"_qs, any ? QJsonValue(formatIsoMs(totals.startMs)) : QJsonValue()},
        {u"finish"_qs, any ? QJsonValue(formatIsoMs(totals.finishMs)) : QJsonValue()},
        {u"makespanSeconds"_qs, any ? totals.makespanSeconds() : 0.0},
    };
    if (simulated)
        object.insert(u"shortCircuited"_qs, totals.shortCircuited);
    return object;
}

QJsonObject resultToJsonObject(const SimulationResult &result)
{
    QJsonObject actual = totalsToJson(result.actual, false);
    QJsonObject whatif = totalsToJson(result.whatif, true);
    QJsonObject actualById;
    QJsonObject whatifById;
    for (const IdentityOutcome &outcome : result.byIdentity) {
        const QString name = identityName(outcome.identity);
        actualById.insert(name, totalsToJson(outcome.actual, false));
        QJsonObject simulated = totalsToJson(outcome.whatif, true);
        simulated.insert(u"pacePerSecond"_qs,
                         outcome.pacePerSecond ? QJsonValue(*outcome.pacePerSecond) : QJsonValue());
        simulated.insert(u"concurrency"_qs, outcome.concurrency);
        whatifById.insert(name, simulated);
    }
    actual.insert(u"byIdentity"_qs, actualById);
    whatif.insert(u"byIdentity"_qs, whatifById);
    return QJsonObject{
        {u"actual"_qs, actual},
        {u"whatif"_qs, whatif},
        {u"behaviour"_qs, result.behaviour.toJson()},
        {u"policies"_qs, QJsonArray::fromStringList(result.policies)},
        {u"cancelled"_qs, result.cancelled},
    };
}

QByteArray resultToJson(const SimulationResult &result)
{
    return QJsonDocument(resultToJsonObject(result)).toJson(QJsonDocument::Indented);
}

QString describeRun(const RunTotals &totals)
{
    QString text = formatDuration(totals.finishMs - totals.startMs) + u", "_qs +
                   count(totals.throttles, u"429"_qs, u"429s"_qs) + u", "_qs +
                   count(totals.retries, u"retry"_qs, u"retries"_qs) + u", "_qs +
                   QLocale::c().toString(totals.lostOperations) + u" lost"_qs;
    if (totals.shortCircuited > 0)
        text +=
            u", "_qs + QLocale::c().toString(totals.shortCircuited) + u" refused by the breaker"_qs;
    return text;
}

QString resultToText(const SimulationResult &result)
{
    const QString how = result.behaviour.describe();
    QString text = u"what if: "_qs + how + u"\n"_qs;
    if (!result.policies.isEmpty())
        text += u"policies: "_qs + result.policies.join(u", "_qs) + u"\n"_qs;
    text += u"\n"_qs;
    for (const IdentityOutcome &outcome : result.byIdentity) {
        text += identityName(outcome.identity) + u" (" +
                count(outcome.whatif.operations, u"operation"_qs, u"operations"_qs) + u")\n";
        text += u"  actual: "_qs + describeRun(outcome.actual) + u"\n"_qs;
        const QString pace = outcome.pacePerSecond
                                 ? u"paced at "_qs + formatPace(*outcome.pacePerSecond)
                                 : u"unpaced"_qs;
        text += u"  "_qs + pace +
                (result.behaviour.obeyRetryAfter ? u" obeying Retry-After"_qs : QString()) +
                u": "_qs + describeRun(outcome.whatif) + u"\n"_qs;
    }
    if (result.byIdentity.size() > 1) {
        text += u"all identities\n"_qs;
        text += u"  actual: "_qs + describeRun(result.actual) + u"\n"_qs;
        text += u"  what-if: "_qs + describeRun(result.whatif) + u"\n"_qs;
    }
    if (result.cancelled)
        text += u"(cancelled: the simulation stopped early)\n"_qs;
    return text;
}

} // namespace ts::whatif
