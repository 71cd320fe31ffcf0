#include "whatif/whatifformat.h"

#include "core/timeparse.h"
#include "engine/reportformat.h"

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

QJsonValue adviceArray(const QList<PaceAdvice> &advice)
{
    return QJsonDocument::fromJson(adviceToJson(advice)).object().value(u"advice"_qs);
}

QString pace(const std::optional<double> &perSecond)
{
    return perSecond ? formatPace(*perSecond) : u"unpaced"_qs;
}

QString percentText(double fraction)
{
    return QString::number(fraction * 100.0, 'f', 1) + u" %"_qs;
}

QJsonObject pointToJson(const SweepPoint &point)
{
    QJsonObject object = totalsToJson(point.totals, true);
    object.insert(u"pacePerSecond"_qs,
                  point.pacePerSecond ? QJsonValue(*point.pacePerSecond) : QJsonValue());
    object.insert(u"refusedPercent"_qs, point.refusedShare() * 100.0);
    return object;
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
        {u"advice"_qs, adviceArray(result.advice)},
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
        const QString run =
            outcome.pacePerSecond ? u"paced at "_qs + pace(outcome.pacePerSecond) : u"unpaced"_qs;
        text += u"  "_qs + run +
                (result.behaviour.obeyRetryAfter ? u" obeying Retry-After"_qs : QString()) +
                u": "_qs + describeRun(outcome.whatif) + u"\n"_qs;
        if (const PaceAdvice *advice = tightestAdvice(result.advice, outcome.identity))
            text += u"  the limits allow "_qs + describeAdvice(*advice) + u"\n"_qs;
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

QByteArray sweepToJson(const SweepResult &sweep, const Workload &work)
{
    QJsonArray steps;
    for (const SweepStep &step : sweep.steps) {
        QJsonObject byIdentity;
        for (size_t i = 0; i < step.byIdentity.size(); ++i)
            byIdentity.insert(identityName(work.identities[i].identity),
                              pointToJson(step.byIdentity[i]));
        steps.append(QJsonObject{{u"step"_qs, step.index}, {u"byIdentity"_qs, byIdentity}});
    }
    QJsonObject answers;
    for (const IdentitySweep &identity : sweep.byIdentity) {
        QJsonObject answer = pointToJson(identity.atFastest);
        answer.insert(u"pacePerSecond"_qs,
                      identity.fastestPace ? QJsonValue(*identity.fastestPace) : QJsonValue());
        answer.insert(u"unpaced"_qs, identity.unpaced);
        answer.insert(u"found"_qs, identity.unpaced || identity.fastestPace.has_value());
        answers.insert(identityName(identity.identity), answer);
    }
    const QJsonObject document{
        {u"sweep"_qs, QJsonObject{{u"max429Percent"_qs, sweep.max429Percent},
                                  {u"steps"_qs, steps},
                                  {u"byIdentity"_qs, answers}}},
        {u"advice"_qs, adviceArray(sweep.advice)},
        {u"behaviour"_qs, sweep.behaviour.toJson()},
        {u"cancelled"_qs, sweep.cancelled},
    };
    return QJsonDocument(document).toJson(QJsonDocument::Indented);
}

QString sweepStepToText(const SweepStep &step, const Workload &work)
{
    QStringList parts;
    for (size_t i = 0; i < step.byIdentity.size(); ++i) {
        const SweepPoint &point = step.byIdentity[i];
        parts << identityName(work.identities[i].identity) + u" "_qs + pace(point.pacePerSecond) +
                     u": "_qs + formatDuration(point.totals.finishMs - point.totals.startMs) +
                     u", "_qs + percentText(point.refusedShare()) + u" 429s"_qs;
    }
    return QStringLiteral("step %1: ").arg(step.index) + parts.join(u"; "_qs) + u"\n"_qs;
}

QString sweepToText(const SweepResult &sweep)
{
    QString text;
    for (const IdentitySweep &identity : sweep.byIdentity) {
        const SweepPoint &point = identity.atFastest;
        text += identityName(identity.identity) + u": "_qs;
        if (identity.unpaced)
            text += u"no pace needed"_qs;
        else if (identity.fastestPace)
            text += u"at most "_qs + formatPace(*identity.fastestPace);
        else
            text += u"no pace tried kept 429s within the share"_qs;
        if (identity.unpaced || identity.fastestPace)
            text += u", finishes in "_qs +
                    formatDuration(point.totals.finishMs - point.totals.startMs) + u" ("_qs +
                    percentText(point.refusedShare()) + u" 429s)"_qs;
        if (identity.advice)
            text += u"; the limits allow "_qs + describeAdvice(*identity.advice);
        text += u"\n"_qs;
    }
    if (sweep.cancelled)
        text += u"(cancelled: the sweep stopped early)\n"_qs;
    return text;
}

} // namespace ts::whatif
