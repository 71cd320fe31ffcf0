#include "engine/reportformat.h"

#include "core/timeparse.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>

#include <algorithm>

namespace ts {

namespace {

QJsonObject countsObject(const QMap<QString, qint64> &counts)
{
    QJsonObject object;
    for (auto it = counts.cbegin(); it != counts.cend(); ++it)
        object.insert(it.key(), it.value());
    return object;
}

QString percent(double fraction)
{
    return QString::number(fraction * 100.0, 'f', 0) + u'%';
}

QString duration(double seconds)
{
    if (seconds < 120)
        return QString::number(seconds, 'f', seconds < 10 ? 1 : 0) + u" s";
    if (seconds < 7200)
        return QString::number(seconds / 60.0, 'f', 1) + u" min";
    return QString::number(seconds / 3600.0, 'f', 1) + u" h";
}

} // namespace

QByteArray reportToJson(const ReportData &report)
{
    QJsonObject root;
    root.insert(u"events"_qs, report.events);
    root.insert(u"malformed"_qs, report.malformed);
    QJsonObject byStatus;
    for (auto it = report.byStatus.cbegin(); it != report.byStatus.cend(); ++it)
        byStatus.insert(QString::number(it.key()), it.value());
    root.insert(u"byStatus"_qs, byStatus);

    QJsonObject throttles;
    throttles.insert(u"total"_qs, report.throttles.total);
    throttles.insert(u"byErrorCode"_qs, countsObject(report.throttles.byErrorCode));
    throttles.insert(u"byScope"_qs, countsObject(report.throttles.byScope));
    throttles.insert(u"byKind"_qs, countsObject(report.throttles.byKind));
    root.insert(u"throttles"_qs, throttles);

    QJsonArray scopes;
    for (const ScopeSummary &scope : report.scopes) {
        QJsonObject object;
        object.insert(u"service"_qs, scope.service);
        object.insert(u"limit"_qs, scope.limit);
        object.insert(u"key"_qs, scope.key);
        object.insert(u"algorithm"_qs, scope.algorithm);
        object.insert(u"policy"_qs, scope.policy);
        object.insert(u"capacity"_qs, scope.capacity);
        object.insert(u"windowSeconds"_qs, scope.windowSeconds);
        object.insert(u"requests"_qs, scope.requests);
        object.insert(u"peakUsage"_qs, scope.peakUsage);
        object.insert(u"peakFill"_qs, scope.peakFill);
        object.insert(u"timeAtLimitSeconds"_qs, scope.timeAtLimitSeconds);
        object.insert(u"predictedThrottled"_qs, scope.predictedThrottled);
        object.insert(u"observedThrottled"_qs, scope.observedThrottled);
        if (scope.nextSafeSendMs)
            object.insert(u"nextSafeSend"_qs, formatIsoMs(*scope.nextSafeSendMs));
        if (scope.effectiveLimit)
            object.insert(u"effectiveLimit"_qs, *scope.effectiveLimit);
        if (scope.observedLimitPercentage)
            object.insert(u"observedLimitPercentage"_qs, *scope.observedLimitPercentage);
        scopes.append(object);
    }
    root.insert(u"scopes"_qs, scopes);

    QJsonArray breakers;
    for (const BreakerSummary &breaker : report.breakers) {
        QJsonObject object;
        object.insert(u"scope"_qs, breaker.scope);
        object.insert(u"source"_qs, breaker.source);
        object.insert(u"transitions"_qs, breaker.transitions);
        object.insert(u"openSeconds"_qs, breaker.openSeconds);
        object.insert(u"final"_qs, breaker.finalState);
        if (breaker.source == u"reconstructed") {
            object.insert(u"trips"_qs, breaker.trips);
            object.insert(u"blockedRequests"_qs, breaker.blockedRequests);
        }
        breakers.append(object);
    }
    root.insert(u"breakers"_qs, breakers);

    QJsonArray alerts;
    for (const Alert &alert : report.alerts) {
        QJsonObject object;
        object.insert(u"kind"_qs, alert.kind);
        object.insert(u"severity"_qs, alert.severity);
        object.insert(u"at"_qs, formatIsoMs(alert.atMs));
        object.insert(u"key"_qs, alert.key);
        object.insert(u"detail"_qs, alert.detail);
        alerts.append(object);
    }
    root.insert(u"alerts"_qs, alerts);

    if (report.firstMs)
        root.insert(u"from"_qs, formatIsoMs(*report.firstMs));
    if (report.lastMs)
        root.insert(u"to"_qs, formatIsoMs(*report.lastMs));
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

QString reportToText(const ReportData &report)
{
    const QLocale c = QLocale::c();
    QString out;
    auto line = [&out](const QString &text = {}) { out += text + u'\n'; };

    line(u"Throttlescope report"_qs);
    if (report.firstMs && report.lastMs)
        line(u"  from "_qs + formatIsoMs(*report.firstMs) + u" to "_qs + formatIsoMs(*report.lastMs)
             + u" ("_qs + duration(double(*report.lastMs - *report.firstMs) / 1000.0) + u')');
    line(u"  "_qs + c.toString(report.events) + u" requests read, "_qs + c.toString(report.malformed)
         + u" malformed records skipped"_qs);
    QStringList statuses;
    for (auto it = report.byStatus.cbegin(); it != report.byStatus.cend(); ++it)
        statuses << QString::number(it.key()) + u": "_qs + c.toString(it.value());
    if (!statuses.isEmpty())
        line(u"  by status: "_qs + statuses.join(u", "_qs));
    line();

    if (report.throttles.total == 0) {
        line(u"No throttling: no 429, and no 503/430 that the service called throttling."_qs);
    } else {
        const double share = report.events ? double(report.throttles.total) / double(report.events) : 0;
        line(u"Throttled: "_qs + c.toString(report.throttles.total) + u" responses ("_qs
             + QString::number(share * 100.0, 'f', 1) + u"% of requests)"_qs);
        QList<QPair<qint64, QString>> codes;
        for (auto it = report.throttles.byErrorCode.cbegin(); it != report.throttles.byErrorCode.cend(); ++it)
            codes.append({it.value(), it.key()});
        std::sort(codes.begin(), codes.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
        for (const auto &[count, code] : codes) {
            QString meaning;
            if (code == u"RequestBlocked" || code == u"TooManyRequests")
                meaning = u"rate limit: wait for Retry-After"_qs;
            else if (code == u"CapacityLimitExceeded" || code == u"TooManyRequestsForCapacity")
                meaning = u"capacity overloaded, not your rate: back off exponentially"_qs;
            else if (code == u"50009" || code == u"ServerBusy")
                meaning = u"Service Bus namespace throttled (credits or server busy)"_qs;
            else if (code == u"20166")
                meaning = u"OneNote per-app/user limit (no Retry-After is sent)"_qs;
            else if (code == u"none")
                meaning = u"no error code given"_qs;
            line(u"  "_qs + code.leftJustified(26) + c.toString(count).rightJustified(10)
                 + (meaning.isEmpty() ? QString() : u"   "_qs + meaning));
        }
        if (!report.throttles.byScope.isEmpty() && !(report.throttles.byScope.size() == 1 && report.throttles.byScope.contains(u"none"_qs))) {
            QStringList scopes;
            for (auto it = report.throttles.byScope.cbegin(); it != report.throttles.byScope.cend(); ++it)
                scopes << it.key() + u": "_qs + c.toString(it.value());
            line(u"  by throttle scope: "_qs + scopes.join(u", "_qs));
        }
    }
    line();

    if (!report.scopes.isEmpty()) {
        line(u"Quota buckets (reconstructed from the log against the service's documented limits):"_qs);
        QList<ScopeSummary> scopes = report.scopes;
        std::sort(scopes.begin(), scopes.end(), [](const ScopeSummary &a, const ScopeSummary &b) {
            return a.peakFill > b.peakFill;
        });
        for (const ScopeSummary &scope : scopes) {
            QString text = u"  "_qs + scope.service + u'/' + scope.limit + u" for "_qs + scope.key + u": peak "_qs
                           + percent(scope.peakFill) + u" of "_qs + c.toString(scope.capacity, 'g', 6);
            if (scope.windowSeconds > 0)
                text += u" per "_qs + duration(scope.windowSeconds);
            text += u" ("_qs + scope.algorithm + u"), "_qs + c.toString(scope.requests) + u" requests"_qs;
            if (scope.timeAtLimitSeconds > 0)
                text += u", at the limit for "_qs + duration(scope.timeAtLimitSeconds);
            line(text);
            if (scope.predictedThrottled || scope.observedThrottled)
                line(u"      the model predicts "_qs + c.toString(scope.predictedThrottled)
                     + u" rejections; the service actually throttled "_qs + c.toString(scope.observedThrottled));
            if (scope.effectiveLimit && scope.capacity > 0) {
                const double effective = *scope.effectiveLimit;
                const QString documented = c.toString(scope.capacity, 'g', 6);
                if (effective < scope.capacity * 0.5)
                    // Far below the limit: this bucket as the log shows it did not cause the 429s.
                    line(u"      the service throttled at a usage of only "_qs + c.toString(effective, 'g', 6)
                         + u" of "_qs + documented
                         + u": the quota is shared with traffic not in this log, or another limit applied"_qs);
                else
                    line(u"      429s really began at a usage of "_qs + c.toString(effective, 'g', 6)
                         + u" (documented: "_qs + documented + u')');
            }
            if (scope.nextSafeSendMs)
                line(u"      still exhausted at the end of the log: next safe send "_qs + formatIsoMs(*scope.nextSafeSendMs));
        }
        line();
    }

    if (!report.breakers.isEmpty()) {
        line(u"Circuit breakers:"_qs);
        for (const BreakerSummary &breaker : report.breakers)
        {
            QString text = u"  "_qs + breaker.scope + u" ("_qs + breaker.source + u"): "_qs
                           + c.toString(breaker.transitions) + u" transitions, open for "_qs
                           + duration(breaker.openSeconds) + u", now "_qs + breaker.finalState;
            if (breaker.blockedRequests > 0)
                text += u"; "_qs + c.toString(breaker.blockedRequests)
                        + u" requests were sent while it was open (a shared breaker would have held them)"_qs;
            line(text);
        }
        line();
    }

    if (report.alerts.isEmpty()) {
        line(u"No alerts."_qs);
    } else {
        line(u"Alerts:"_qs);
        for (const Alert &alert : report.alerts)
            line(u"  ["_qs + alert.severity + u"] "_qs + formatIsoMs(alert.atMs) + u"  "_qs + alert.kind + u"  "_qs
                 + alert.key + u": "_qs + alert.detail);
    }

    if (!report.malformedSamples.isEmpty()) {
        line();
        line(u"Malformed records (first "_qs + QString::number(report.malformedSamples.size()) + u" of "_qs
             + c.toString(report.malformed) + u"):"_qs);
        for (const MalformedRecord &record : report.malformedSamples)
            line(u"  "_qs + record.toString());
    }
    return out;
}

} // namespace ts
