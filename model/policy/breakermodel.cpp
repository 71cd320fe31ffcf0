#include "breakermodel.h"

#include <QJsonDocument>
#include <QJsonParseError>
#include <QJsonValue>

#include <cmath>

namespace ts {

namespace {

const QString kPolly = QStringLiteral("polly-v8");
const QString kResilience4j = QStringLiteral("resilience4j");
const QString kCustom = QStringLiteral("custom");

// The keys of the `breaker` object, in the order toJson() writes them.
const QStringList kKeys{QStringLiteral("preset"),
                        QStringLiteral("failureRatio"),
                        QStringLiteral("window"),
                        QStringLiteral("samplingDurationSeconds"),
                        QStringLiteral("windowCalls"),
                        QStringLiteral("minimumThroughput"),
                        QStringLiteral("breakDurationSeconds"),
                        QStringLiteral("halfOpenCalls"),
                        QStringLiteral("retryAfterExtendsBreak")};

QString seconds(qint64 ms)
{
    return QString::number(double(ms) / 1000.0, 'g', 6) + QStringLiteral(" s");
}

} // namespace

BreakerModel BreakerModel::pollyV8()
{
    return BreakerModel{}; // the member defaults are Polly v8's
}

BreakerModel BreakerModel::resilience4j()
{
    BreakerModel model;
    model.failureRatio = 0.5;
    model.window = Window::Count;
    model.windowCalls = 100;
    model.minimumThroughput = 100;
    model.breakDurationMs = 60000;
    model.halfOpenCalls = 10;
    return model;
}

QStringList BreakerModel::presetNames()
{
    return {kPolly, kResilience4j};
}

std::optional<BreakerModel> BreakerModel::fromPreset(QStringView name)
{
    if (name == kPolly)
        return pollyV8();
    if (name == kResilience4j)
        return resilience4j();
    return std::nullopt;
}

std::optional<BreakerModel> BreakerModel::fromJson(const QJsonObject &object, QString *error)
{
    auto fail = [error](const QString &what) -> std::optional<BreakerModel> {
        if (error)
            *error = QStringLiteral("breaker: ") + what;
        return std::nullopt;
    };
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (!kKeys.contains(it.key())) {
            return fail(QStringLiteral("unknown key '%1' (known: %2)")
                            .arg(it.key(), kKeys.join(QStringLiteral(", "))));
        }
    }
    BreakerModel model;
    const QJsonValue preset = object.value(u"preset");
    if (!preset.isUndefined()) {
        const auto named = preset.isString() ? fromPreset(preset.toString()) : std::nullopt;
        // "custom" is what toJson() writes for edited values: they follow, on top of Polly's.
        if (!named && preset.toString() != kCustom) {
            return fail(QStringLiteral("'preset' must be one of %1 or \"custom\"")
                            .arg(presetNames().join(QStringLiteral(", "))));
        }
        if (named)
            model = *named;
    }
    auto number = [&](QStringView key, double *out) {
        const QJsonValue value = object.value(key);
        if (value.isUndefined())
            return true;
        if (!value.isDouble() || !std::isfinite(value.toDouble())) {
            fail(QStringLiteral("'%1' must be a number").arg(key));
            return false;
        }
        *out = value.toDouble();
        return true;
    };
    double ratio = model.failureRatio;
    double sampling = double(model.samplingDurationMs) / 1000.0;
    double calls = model.windowCalls;
    double minimum = model.minimumThroughput;
    double breakSeconds = double(model.breakDurationMs) / 1000.0;
    double probes = model.halfOpenCalls;
    if (!number(u"failureRatio", &ratio) || !number(u"samplingDurationSeconds", &sampling) ||
        !number(u"windowCalls", &calls) || !number(u"minimumThroughput", &minimum) ||
        !number(u"breakDurationSeconds", &breakSeconds) || !number(u"halfOpenCalls", &probes)) {
        return std::nullopt;
    }
    auto wholeCount = [&](double value, QStringView key) {
        if (value >= 1 && value <= 1e6 && value == std::floor(value))
            return true;
        fail(QStringLiteral("'%1' must be a whole number from 1 to 1000000").arg(key));
        return false;
    };
    if (!wholeCount(calls, u"windowCalls") || !wholeCount(minimum, u"minimumThroughput") ||
        !wholeCount(probes, u"halfOpenCalls")) {
        return std::nullopt;
    }
    model.failureRatio = ratio;
    model.samplingDurationMs = qint64(std::llround(sampling * 1000.0));
    model.windowCalls = int(calls);
    model.minimumThroughput = int(minimum);
    model.breakDurationMs = qint64(std::llround(breakSeconds * 1000.0));
    model.halfOpenCalls = int(probes);

    const QJsonValue window = object.value(u"window");
    if (window == QJsonValue(QStringLiteral("time")))
        model.window = Window::Time;
    else if (window == QJsonValue(QStringLiteral("count")))
        model.window = Window::Count;
    else if (!window.isUndefined())
        return fail(QStringLiteral("'window' must be \"time\" or \"count\""));

    const QJsonValue extends = object.value(u"retryAfterExtendsBreak");
    if (extends.isBool())
        model.retryAfterExtendsBreak = extends.toBool();
    else if (!extends.isUndefined())
        return fail(QStringLiteral("'retryAfterExtendsBreak' must be true or false"));

    if (const QString invalid = model.validationError(); !invalid.isEmpty())
        return fail(invalid);
    return model;
}

std::optional<BreakerModel> BreakerModel::fromJsonText(const QString &text, QString *error)
{
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(text.toUtf8(), &parseError);
    if (!document.isObject()) {
        if (error) {
            *error = QStringLiteral("breaker: ") + (parseError.error != QJsonParseError::NoError
                                                        ? parseError.errorString()
                                                        : QStringLiteral("must be a JSON object"));
        }
        return std::nullopt;
    }
    return fromJson(document.object(), error);
}

QJsonObject BreakerModel::toJson() const
{
    return QJsonObject{
        {QStringLiteral("preset"), matchingPreset()},
        {QStringLiteral("failureRatio"), failureRatio},
        {QStringLiteral("window"),
         window == Window::Time ? QStringLiteral("time") : QStringLiteral("count")},
        {QStringLiteral("samplingDurationSeconds"), double(samplingDurationMs) / 1000.0},
        {QStringLiteral("windowCalls"), windowCalls},
        {QStringLiteral("minimumThroughput"), minimumThroughput},
        {QStringLiteral("breakDurationSeconds"), double(breakDurationMs) / 1000.0},
        {QStringLiteral("halfOpenCalls"), halfOpenCalls},
        {QStringLiteral("retryAfterExtendsBreak"), retryAfterExtendsBreak},
    };
}

QString BreakerModel::validationError() const
{
    if (!(failureRatio > 0 && failureRatio <= 1)) // (NaN fails too)
        return QStringLiteral("'failureRatio' must be above 0 and at most 1");
    // Bounds keep the replay's memory and arithmetic sane (a day of sampling, a day's break).
    if (samplingDurationMs < 100 || samplingDurationMs > 86400000)
        return QStringLiteral("'samplingDurationSeconds' must be from 0.1 to 86400");
    if (windowCalls < 1 || windowCalls > 1000000)
        return QStringLiteral("'windowCalls' must be from 1 to 1000000");
    if (minimumThroughput < 1 || minimumThroughput > 1000000)
        return QStringLiteral("'minimumThroughput' must be from 1 to 1000000");
    if (breakDurationMs < 0 || breakDurationMs > 86400000)
        return QStringLiteral("'breakDurationSeconds' must be from 0 to 86400");
    if (halfOpenCalls < 1 || halfOpenCalls > 1000000)
        return QStringLiteral("'halfOpenCalls' must be from 1 to 1000000");
    return {};
}

QString BreakerModel::matchingPreset() const
{
    for (const QString &name : presetNames()) {
        if (*fromPreset(name) == *this)
            return name;
    }
    return kCustom;
}

QString BreakerModel::describe() const
{
    const QString name = matchingPreset();
    QString text = name == kPolly          ? QStringLiteral("Polly v8 defaults")
                   : name == kResilience4j ? QStringLiteral("Resilience4j defaults")
                                           : QStringLiteral("Custom");
    const QString percent = QString::number(failureRatio * 100.0, 'g', 4) + QStringLiteral(" %");
    const QString over = window == Window::Time
                             ? QStringLiteral("in %1").arg(seconds(samplingDurationMs))
                             : QStringLiteral("among the last %1").arg(windowCalls);
    text += QStringLiteral(": opens when >= %1 of >= %2 requests %3 fail; open %4")
                .arg(percent)
                .arg(minimumThroughput)
                .arg(over, seconds(breakDurationMs));
    if (retryAfterExtendsBreak)
        text += QStringLiteral(" (longer when Retry-After says so)");
    text += halfOpenCalls == 1 ? QStringLiteral("; 1 probe decides")
                               : QStringLiteral("; %1 probes decide").arg(halfOpenCalls);
    return text;
}

} // namespace ts
