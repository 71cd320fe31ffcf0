#include "engine/reportformat.h"

#include "core/jsonwriter.h"
#include "core/timeparse.h"
#include "engine/paceadvice.h"

#include <QLocale>

#include <algorithm>
#include <cmath>

namespace ts {

namespace {

// A name -> count object; QMap's order is QJsonObject's (UTF-16 order of the names).
void writeCounts(JsonWriter &json, QStringView name, const QMap<QString, qint64> &counts)
{
    json.key(name);
    json.beginObject();
    for (auto it = counts.cbegin(); it != counts.cend(); ++it)
        json.integerMember(it.key(), it.value());
    json.endObject();
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

QString causeCounts(const QMap<QString, qint64> &counts)
{
    const QLocale c = QLocale::c();
    QStringList parts;
    for (auto it = counts.cbegin(); it != counts.cend(); ++it)
        parts << it.key() + u' ' + c.toString(it.value());
    return parts.join(u", "_qs);
}

} // namespace

QString StateCorrection::describe() const
{
    const QLocale c = QLocale::c();
    const QString said = reason == u"429" || (capacity > 0 && saidUsage >= capacity)
                             ? u"full"_qs
                             : c.toString(saidUsage, 'g', 6) + u" used"_qs;
    const double room = capacity - modelUsage;
    const QString model = room >= 0 ? u"the model had room for "_qs + c.toString(room, 'g', 6)
                                    : u"the model counted "_qs + c.toString(modelUsage, 'g', 6);
    return u"at "_qs + formatIsoMs(atMs) + u" the service said "_qs + said + u" ("_qs + reason +
           u"); "_qs + model;
}

namespace {

// "advice": the pace advice per bucket key (docs/report-json.md).
void writeAdvice(JsonWriter &json, const QList<PaceAdvice> &advice)
{
    json.key(u"advice");
    json.beginArray();
    for (const PaceAdvice &entry : advice) {
        json.beginObject();
        json.stringMember(u"bindingLimit", entry.bindingLimit);
        json.stringMember(u"identity", entry.identity);
        json.stringMember(u"key", entry.key);
        json.key(u"limits");
        json.beginArray();
        for (const LimitAllowance &limit : entry.limits) {
            json.beginObject();
            json.stringMember(u"algorithm", limit.algorithm);
            json.stringMember(u"limit", limit.limit);
            json.numberMember(u"meanCost", limit.meanCost);
            json.numberMember(u"ratePerSecond", limit.ratePerSecond);
            json.numberMember(u"share", limit.share);
            json.endObject();
        }
        json.endArray();
        json.numberMember(u"maxRatePerSecond", entry.maxRatePerSecond);
        json.stringMember(u"policy", entry.policy);
        json.stringMember(u"summary", describeAdvice(entry));
        json.endObject();
    }
    json.endArray();
}

// The pace advice in the text report, one line per key.
QString adviceText(const QList<PaceAdvice> &advice)
{
    if (advice.isEmpty())
        return {};
    QString text = u"Pace advice (the fastest steady pace the limits allow for this log's mix of "
                   u"costs):\n"_qs;
    for (const PaceAdvice &entry : advice)
        text += u"  "_qs + entry.key + u" ("_qs + entry.policy + u"): "_qs + describeAdvice(entry) +
                u"\n"_qs;
    return text + u"\n"_qs;
}

} // namespace

QByteArray adviceToJson(const QList<PaceAdvice> &advice)
{
    QByteArray out;
    JsonWriter json(out);
    json.beginObject();
    writeAdvice(json, advice);
    json.endObject();
    return out;
}

QByteArray reportToJson(const ReportData &report)
{
    // Members are written in name order, as QJsonObject would sort them (see JsonWriter).
    QByteArray out;
    out.reserve(4096 + 400 * (report.scopes.size() + report.breakers.size()) +
                600 * report.alerts.size());
    JsonWriter json(out);
    json.beginObject();

    writeAdvice(json, report.advice);
    json.key(u"alerts");
    json.beginArray();
    for (const Alert &alert : report.alerts) {
        json.beginObject();
        json.stringMember(u"at", formatIsoMs(alert.atMs));
        json.stringMember(u"detail", alert.detail);
        json.stringMember(u"key", alert.key);
        json.stringMember(u"kind", alert.kind);
        json.stringMember(u"severity", alert.severity);
        json.endObject();
    }
    json.endArray();

    json.key(u"breakers");
    json.beginArray();
    for (const BreakerSummary &breaker : report.breakers) {
        const bool reconstructed = breaker.source == u"reconstructed";
        json.beginObject();
        if (reconstructed)
            json.integerMember(u"blockedRequests", breaker.blockedRequests);
        if (reconstructed)
            json.integerMember(u"failures", breaker.failures);
        json.stringMember(u"final", breaker.finalState);
        if (reconstructed && breaker.model) {
            const BreakerModel &model = *breaker.model;
            json.key(u"model");
            json.beginObject();
            json.numberMember(u"breakDurationSeconds", double(model.breakDurationMs) / 1000.0);
            json.numberMember(u"failureRatio", model.failureRatio);
            json.integerMember(u"halfOpenCalls", model.halfOpenCalls);
            json.integerMember(u"minimumThroughput", model.minimumThroughput);
            json.stringMember(u"preset", model.matchingPreset());
            json.booleanMember(u"retryAfterExtendsBreak", model.retryAfterExtendsBreak);
            json.numberMember(u"samplingDurationSeconds",
                              double(model.samplingDurationMs) / 1000.0);
            json.stringMember(u"window", model.window == BreakerModel::Window::Time
                                             ? QStringLiteral("time")
                                             : QStringLiteral("count"));
            json.integerMember(u"windowCalls", model.windowCalls);
            json.endObject();
        }
        json.numberMember(u"openSeconds", breaker.openSeconds);
        if (reconstructed) {
            json.numberMember(u"peakFailureRatio", breaker.peakFailureRatio);
            json.integerMember(u"requests", breaker.requests);
        }
        json.stringMember(u"scope", breaker.scope);
        json.stringMember(u"source", breaker.source);
        json.integerMember(u"transitions", breaker.transitions);
        if (reconstructed)
            json.integerMember(u"trips", breaker.trips);
        json.endObject();
    }
    json.endArray();

    // Status codes as names sort as text ("1000" before "200"), as QJsonObject keeps them.
    std::vector<std::pair<QString, qint64>> byStatus;
    byStatus.reserve(size_t(report.byStatus.size()));
    for (auto it = report.byStatus.cbegin(); it != report.byStatus.cend(); ++it)
        byStatus.emplace_back(QString::number(it.key()), it.value());
    std::sort(byStatus.begin(), byStatus.end());
    json.key(u"byStatus");
    json.beginObject();
    for (const auto &[status, count] : byStatus)
        json.integerMember(status, count);
    json.endObject();

    json.integerMember(u"events", report.events);
    if (report.firstMs)
        json.stringMember(u"from", formatIsoMs(*report.firstMs));
    json.integerMember(u"lateEvents", report.lateEvents);
    json.integerMember(u"malformed", report.malformed);

    json.key(u"scopes");
    json.beginArray();
    for (const ScopeSummary &scope : report.scopes) {
        json.beginObject();
        json.numberMember(u"acceptedPeakFill", scope.acceptedPeakFill);
        json.numberMember(u"acceptedPeakUsage", scope.acceptedPeakUsage);
        json.stringMember(u"algorithm", scope.algorithm);
        json.numberMember(u"capacity", scope.capacity);
        if (scope.corrections > 0) {
            json.key(u"correctionLog");
            json.beginArray();
            for (const StateCorrection &correction : scope.correctionLog) {
                json.beginObject();
                json.stringMember(u"at", formatIsoMs(correction.atMs));
                json.numberMember(u"modelUsage", correction.modelUsage);
                json.stringMember(u"reason", correction.reason);
                json.numberMember(u"saidUsage", correction.saidUsage);
                json.endObject();
            }
            json.endArray();
        }
        json.integerMember(u"corrections", scope.corrections);
        if (scope.effectiveLimit)
            json.numberMember(u"effectiveLimit", *scope.effectiveLimit);
        json.stringMember(u"key", scope.key);
        json.stringMember(u"limit", scope.limit);
        if (scope.nextSafeSendMs)
            json.stringMember(u"nextSafeSend", formatIsoMs(*scope.nextSafeSendMs));
        writeCounts(json, u"observedByCause", scope.observedByCause);
        if (scope.observedLimitPercentage)
            json.numberMember(u"observedLimitPercentage", *scope.observedLimitPercentage);
        json.integerMember(u"observedThrottled", scope.observedThrottled);
        json.numberMember(u"peakFill", scope.peakFill);
        json.numberMember(u"peakUsage", scope.peakUsage);
        json.stringMember(u"policy", scope.policy);
        writeCounts(json, u"predictedByCause", scope.predictedByCause);
        json.integerMember(u"predictedThrottled", scope.predictedThrottled);
        json.integerMember(u"requests", scope.requests);
        json.stringMember(u"service", scope.service);
        json.numberMember(u"timeAtLimitSeconds", scope.timeAtLimitSeconds);
        json.numberMember(u"windowSeconds", scope.windowSeconds);
        json.endObject();
    }
    json.endArray();

    json.key(u"throttles");
    json.beginObject();
    writeCounts(json, u"byCause", report.throttles.byCause);
    writeCounts(json, u"byErrorCode", report.throttles.byErrorCode);
    writeCounts(json, u"byKind", report.throttles.byKind);
    writeCounts(json, u"byScope", report.throttles.byScope);
    json.integerMember(u"total", report.throttles.total);
    json.endObject();

    if (report.lastMs)

        json.stringMember(u"to", formatIsoMs(*report.lastMs));
    json.endObject();
    return out;
}

QString reportToText(const ReportData &report)
{
    const QLocale c = QLocale::c();
    QString out;
    auto line = [&out](const QString &text = {}) { out += text + u'\n'; };

    line(u"Throttlescope report"_qs);
    if (report.firstMs && report.lastMs)
        line(u"  from "_qs + formatIsoMs(*report.firstMs) + u" to "_qs +
             formatIsoMs(*report.lastMs) + u" ("_qs +
             duration(double(*report.lastMs - *report.firstMs) / 1000.0) + u')');
    line(u"  "_qs + c.toString(report.events) + u" requests read, "_qs +
         c.toString(report.malformed) + u" malformed records skipped"_qs);
    // Only when there are any: in order input (the usual case) the line would be noise.
    if (report.lateEvents > 0)
        line(u"  "_qs + c.toString(report.lateEvents) +
             u" events late (older than an event already analysed, beyond the reorder "
             u"window): analysed at their limits' latest instant"_qs);
    QStringList statuses;
    for (auto it = report.byStatus.cbegin(); it != report.byStatus.cend(); ++it)
        statuses << QString::number(it.key()) + u": "_qs + c.toString(it.value());
    if (!statuses.isEmpty())
        line(u"  by status: "_qs + statuses.join(u", "_qs));
    line();

    if (report.throttles.total == 0) {
        line(u"No throttling: no 429, and no 503/430 that the service called throttling."_qs);
    } else {
        const double share =
            report.events ? double(report.throttles.total) / double(report.events) : 0;
        line(u"Throttled: "_qs + c.toString(report.throttles.total) + u" responses ("_qs +
             QString::number(share * 100.0, 'f', 1) + u"% of requests)"_qs);
        QList<QPair<qint64, QString>> codes;
        for (auto it = report.throttles.byErrorCode.cbegin();
             it != report.throttles.byErrorCode.cend(); ++it)
            codes.append({it.value(), it.key()});
        std::sort(codes.begin(), codes.end(),
                  [](const auto &a, const auto &b) { return a.first > b.first; });
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
            line(u"  "_qs + code.leftJustified(26) + c.toString(count).rightJustified(10) +
                 (meaning.isEmpty() ? QString() : u"   "_qs + meaning));
        }
        if (!report.throttles.byScope.isEmpty() &&
            !(report.throttles.byScope.size() == 1 &&
              report.throttles.byScope.contains(u"none"_qs))) {
            QStringList scopes;
            for (auto it = report.throttles.byScope.cbegin(); it != report.throttles.byScope.cend();
                 ++it)
                scopes << it.key() + u": "_qs + c.toString(it.value());
            line(u"  by throttle scope: "_qs + scopes.join(u", "_qs));
        }
        if (!report.throttles.byCause.isEmpty())
            line(u"  by cause: "_qs + causeCounts(report.throttles.byCause));
    }
    line();

    if (!report.scopes.isEmpty()) {
        line(
            u"Quota buckets (reconstructed from the log against the service's documented limits):"_qs);
        QList<ScopeSummary> scopes = report.scopes;
        std::sort(scopes.begin(), scopes.end(), [](const ScopeSummary &a, const ScopeSummary &b) {
            return a.peakFill > b.peakFill;
        });
        for (const ScopeSummary &scope : scopes) {
            QString text = u"  "_qs + scope.service + u'/' + scope.limit + u" for "_qs + scope.key +
                           u": peak "_qs + percent(scope.peakFill) + u" of "_qs +
                           c.toString(scope.capacity, 'g', 6);
            if (scope.windowSeconds > 0)
                text += u" per "_qs + duration(scope.windowSeconds);
            text += u" ("_qs + scope.algorithm + u"), "_qs + c.toString(scope.requests) +
                    u" requests"_qs;
            if (scope.timeAtLimitSeconds > 0)
                text += u", at the limit for "_qs + duration(scope.timeAtLimitSeconds);
            line(text);
            // The limiter counts throttled requests too: say what the service really served
            // when that differs visibly from the peak above.
            if (std::abs(scope.acceptedPeakFill - scope.peakFill) >= 0.005)
                line(u"      accepted requests alone peaked at "_qs +
                     percent(scope.acceptedPeakFill) +
                     u" (the limiter also counts the throttled ones)"_qs);
            if (scope.predictedThrottled || scope.observedThrottled)
                line(u"      the model predicts "_qs + c.toString(scope.predictedThrottled) +
                     u" rejections; the service actually throttled "_qs +
                     c.toString(scope.observedThrottled));
            if (!scope.observedByCause.isEmpty())
                line(u"      throttles by cause: "_qs + causeCounts(scope.observedByCause));
            if (scope.corrections > 0) {
                line(u"      corrected from the service's answers "_qs +
                     c.toString(scope.corrections) +
                     (scope.corrections == 1 ? u" time"_qs : u" times"_qs) +
                     u" (state the log does not show), first: "_qs +
                     scope.correctionLog.value(0).describe());
            }
            if (scope.effectiveLimit && scope.capacity > 0) {
                const double effective = *scope.effectiveLimit;
                const QString documented = c.toString(scope.capacity, 'g', 6);
                if (effective < scope.capacity * 0.5)
                    // Far below the limit: this bucket as the log shows it did not cause the 429s.
                    line(
                        u"      the service throttled at a usage of only "_qs +
                        c.toString(effective, 'g', 6) + u" of "_qs + documented +
                        u": the quota is shared with traffic not in this log, or another limit applied"_qs);
                else
                    line(u"      429s really began at a usage of "_qs +
                         c.toString(effective, 'g', 6) + u" (documented: "_qs + documented + u')');
            }
            if (scope.nextSafeSendMs) {
                QString wait = u"      still exhausted at the end of the log: next safe send "_qs +
                               formatIsoMs(*scope.nextSafeSendMs);
                if (report.lastMs)
                    wait += u" (in "_qs +
                            duration(double(*scope.nextSafeSendMs - *report.lastMs) / 1000.0) +
                            u')';
                if (scope.nextSafeSendRetryAfter)
                    wait += u", held by the service's Retry-After"_qs;
                else if (!scope.nextSafeSendLimit.isEmpty())
                    wait += u", when "_qs + scope.nextSafeSendLimit + u" frees up"_qs;
                line(wait);
            }
        }
        line();
    }

    out += adviceText(report.advice);

    if (!report.breakers.isEmpty()) {
        line(u"Circuit breakers:"_qs);
        // Which reference breaker the reconstruction replayed, once per model in use.
        QStringList models;
        for (const BreakerSummary &breaker : report.breakers) {
            if (breaker.model && !models.contains(breaker.model->describe()))
                models.append(breaker.model->describe());
        }
        for (const QString &model : std::as_const(models))
            line(u"  reference breaker: "_qs + model);
        for (const BreakerSummary &breaker : report.breakers) {
            QString text = u"  "_qs + breaker.scope + u" ("_qs + breaker.source + u"): "_qs +
                           c.toString(breaker.transitions) + u" transitions, open for "_qs +
                           duration(breaker.openSeconds) + u", now "_qs + breaker.finalState;
            if (breaker.failures > 0) {
                text += u"; "_qs + c.toString(breaker.failures) + u" of "_qs +
                        c.toString(breaker.requests) + u" requests failed, peak failure ratio "_qs +
                        QString::number(breaker.peakFailureRatio, 'g', 3);
            }
            if (breaker.blockedRequests > 0)
                text +=
                    u"; "_qs + c.toString(breaker.blockedRequests) +
                    u" requests were sent while it was open (a shared breaker would have held them)"_qs;
            line(text);
        }
        line();
    }

    if (report.alerts.isEmpty()) {
        line(u"No alerts."_qs);
    } else {
        line(u"Alerts:"_qs);
        for (const Alert &alert : report.alerts)
            line(u"  ["_qs + alert.severity + u"] "_qs + formatIsoMs(alert.atMs) + u"  "_qs +
                 alert.kind + u"  "_qs + alert.key + u": "_qs + alert.detail);
    }

    if (!report.malformedSamples.isEmpty()) {
        line();
        line(u"Malformed records (first "_qs + QString::number(report.malformedSamples.size()) +
             u" of "_qs + c.toString(report.malformed) + u"):"_qs);
        for (const MalformedRecord &record : report.malformedSamples)
            line(u"  "_qs + record.toString());
    }
    return out;
}

} // namespace ts
