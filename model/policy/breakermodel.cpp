#include "breakermodel.h"

#include <QJsonDocument>
#include <QJsonParseError>
#include <QJsonValue>

#include <cmath>

namespace ts {

namespace {

const QString kPolly = QStringLiteral("polly-v8");
const QString kResilience4j = QStringLiteral("resilience4j");
const QString kCockatiel = QStringLiteral("cockatiel");
const QString kOpossum = QStringLiteral("opossum");
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

// The options each library preset takes, by the library's names.
const QStringList kCockatielKeys{QStringLiteral("preset"),
                                 QStringLiteral("breaker"),
                                 QStringLiteral("threshold"),
                                 QStringLiteral("duration"),
                                 QStringLiteral("minimumRps"),
                                 QStringLiteral("size"),
                                 QStringLiteral("minimumNumberOfCalls"),
                                 QStringLiteral("halfOpenAfter")};
const QStringList kOpossumKeys{QStringLiteral("preset"),
                               QStringLiteral("errorThresholdPercentage"),
                               QStringLiteral("resetTimeout"),
                               QStringLiteral("rollingCountTimeout"),
                               QStringLiteral("rollingCountBuckets"),
                               QStringLiteral("volumeThreshold")};

const QString kConsecutiveBreaker = QStringLiteral("ConsecutiveBreaker");
const QString kCountBreaker = QStringLiteral("CountBreaker");
const QString kSamplingBreaker = QStringLiteral("SamplingBreaker");

QString seconds(qint64 ms)
{
    return QString::number(double(ms) / 1000.0, 'g', 6) + QStringLiteral(" s");
}

QString breakerName(BreakerModel::Cockatiel::Breaker breaker)
{
    switch (breaker) {
    case BreakerModel::Cockatiel::Breaker::Consecutive:
        return kConsecutiveBreaker;
    case BreakerModel::Cockatiel::Breaker::Count:
        return kCountBreaker;
    case BreakerModel::Cockatiel::Breaker::Sampling:
        break;
    }
    return kSamplingBreaker;
}

// Reads the members of a `breaker` object: each read returns false after setting the error.
class OptionReader
{
public:
    OptionReader(const QJsonObject &object, QString *error) : m_object(object), m_error(error) {}

    bool fail(const QString &what) const
    {
        if (m_error)
            *m_error = QStringLiteral("breaker: ") + what;
        return false;
    }
    // Every key is one of `known`.
    bool onlyKeys(const QStringList &known, const QString &preset) const
    {
        for (auto it = m_object.begin(); it != m_object.end(); ++it) {
            if (!known.contains(it.key())) {
                return fail(QStringLiteral("unknown key '%1' for preset %2 (known: %3)")
                                .arg(it.key(), preset, known.join(QStringLiteral(", "))));
            }
        }
        return true;
    }
    [[nodiscard]] bool has(QStringView key) const { return !m_object.value(key).isUndefined(); }
    // A finite number, left as it is when absent.
    bool number(QStringView key, double *out) const
    {
        const QJsonValue value = m_object.value(key);
        if (value.isUndefined())
            return true;
        if (!value.isDouble() || !std::isfinite(value.toDouble()))
            return fail(QStringLiteral("'%1' must be a number").arg(key));
        *out = value.toDouble();
        return true;
    }
    // A number of milliseconds from `least` to a day.
    bool milliseconds(QStringView key, qint64 least, qint64 *out) const
    {
        double value = double(*out);
        if (!number(key, &value))
            return false;
        if (!(value >= double(least) && value <= 86400000.0 && value == std::floor(value))) {
            return fail(QStringLiteral("'%1' must be a whole number of milliseconds from %2 to "
                                       "86400000")
                            .arg(key)
                            .arg(least));
        }
        *out = qint64(value);
        return true;
    }
    // A whole number in [least, most].
    bool whole(QStringView key, int least, int most, int *out) const
    {
        double value = *out;
        if (!number(key, &value))
            return false;
        if (!(value >= least && value <= most && value == std::floor(value))) {
            return fail(QStringLiteral("'%1' must be a whole number from %2 to %3")
                            .arg(key)
                            .arg(least)
                            .arg(most));
        }
        *out = int(value);
        return true;
    }

private:
    const QJsonObject &m_object;
    QString *m_error;
};

// cockatiel's options on top of its preset: {"breaker", "threshold", ...} as the library takes
// them, with the library's checks (its RangeErrors) and an error for an option the chosen
// breaker does not take.
std::optional<BreakerModel> cockatielFromJson(const OptionReader &read, const QJsonObject &object)
{
    using Breaker = BreakerModel::Cockatiel::Breaker;
    BreakerModel model = BreakerModel::cockatielDefaults();
    BreakerModel::Cockatiel &options = model.cockatiel;
    const QJsonValue kind = object.value(u"breaker");
    if (kind == QJsonValue(kCountBreaker)) {
        options = {Breaker::Count, 0.2, 30000, std::nullopt, 100, 100, 10000};
    } else if (kind == QJsonValue(kSamplingBreaker)) {
        options = {Breaker::Sampling, 0.2, 30000, std::nullopt, 100, 100, 10000};
    } else if (!kind.isUndefined() && kind != QJsonValue(kConsecutiveBreaker)) {
        read.fail(QStringLiteral("'breaker' must be \"ConsecutiveBreaker\", \"CountBreaker\" or "
                                 "\"SamplingBreaker\""));
        return std::nullopt;
    }
    const QString name = breakerName(options.breaker);
    const std::pair<QString, Breaker> kindOptions[] = {
        {u"duration"_qs, Breaker::Sampling},
        {u"minimumRps"_qs, Breaker::Sampling},
        {u"size"_qs, Breaker::Count},
        {u"minimumNumberOfCalls"_qs, Breaker::Count}};
    for (const auto &[key, takes] : kindOptions) {
        if (read.has(key) && options.breaker != takes) {
            read.fail(QStringLiteral("'%1' is an option of %2, not of %3")
                          .arg(key, breakerName(takes), name));
            return std::nullopt;
        }
    }
    double minimumRps = 0;
    if (!read.number(u"threshold", &options.threshold) ||
        !read.milliseconds(u"duration", 10, &options.durationMs) ||
        !read.number(u"minimumRps", &minimumRps) ||
        !read.whole(u"size", 1, 1000000, &options.size) ||
        !read.milliseconds(u"halfOpenAfter", 0, &options.halfOpenAfterMs)) {
        return std::nullopt;
    }
    // The library's default minimum number of calls is the size given.
    options.minimumNumberOfCalls = options.size;
    if (!read.whole(u"minimumNumberOfCalls", 1, options.size, &options.minimumNumberOfCalls))
        return std::nullopt;
    // `if (minimumRps)`: 0 is the library's default too.
    if (minimumRps < 0) {
        read.fail(QStringLiteral("'minimumRps' must not be negative"));
        return std::nullopt;
    }
    if (minimumRps > 0)
        options.minimumRps = minimumRps;
    if (const QString invalid = model.validationError(); !invalid.isEmpty()) {
        read.fail(invalid);
        return std::nullopt;
    }
    return model;
}

std::optional<BreakerModel> opossumFromJson(const OptionReader &read)
{
    BreakerModel model = BreakerModel::opossumDefaults();
    BreakerModel::Opossum &options = model.opossum;
    if (!read.number(u"errorThresholdPercentage", &options.errorThresholdPercentage) ||
        !read.milliseconds(u"resetTimeout", 1, &options.resetTimeoutMs) ||
        !read.milliseconds(u"rollingCountTimeout", 1, &options.rollingCountTimeoutMs) ||
        !read.whole(u"rollingCountBuckets", 1, 10000, &options.rollingCountBuckets) ||
        !read.whole(u"volumeThreshold", 0, 1000000000, &options.volumeThreshold)) {
        return std::nullopt;
    }
    if (const QString invalid = model.validationError(); !invalid.isEmpty()) {
        read.fail(invalid);
        return std::nullopt;
    }
    return model;
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

BreakerModel BreakerModel::cockatielDefaults()
{
    BreakerModel model;
    model.rules = Rules::Cockatiel;
    return model; // the Cockatiel member defaults: ConsecutiveBreaker(5), halfOpenAfter 10 s
}

BreakerModel BreakerModel::opossumDefaults()
{
    BreakerModel model;
    model.rules = Rules::Opossum;
    return model; // the Opossum member defaults are the library's
}

QStringList BreakerModel::presetNames()
{
    return {kPolly, kResilience4j, kCockatiel, kOpossum};
}

std::optional<BreakerModel> BreakerModel::fromPreset(QStringView name)
{
    if (name == kPolly)
        return pollyV8();
    if (name == kResilience4j)
        return resilience4j();
    if (name == kCockatiel)
        return cockatielDefaults();
    if (name == kOpossum)
        return opossumDefaults();
    return std::nullopt;
}

namespace {

// The reference breaker's parameters on top of `model` (a preset's values, or Polly's).
std::optional<BreakerModel> referenceFromJson(const OptionReader &read, const QJsonObject &object,
                                              BreakerModel model)
{
    double ratio = model.failureRatio;
    double sampling = double(model.samplingDurationMs) / 1000.0;
    double breakSeconds = double(model.breakDurationMs) / 1000.0;
    if (!read.number(u"failureRatio", &ratio) ||
        !read.number(u"samplingDurationSeconds", &sampling) ||
        !read.whole(u"windowCalls", 1, 1000000, &model.windowCalls) ||
        !read.whole(u"minimumThroughput", 1, 1000000, &model.minimumThroughput) ||
        !read.number(u"breakDurationSeconds", &breakSeconds) ||
        !read.whole(u"halfOpenCalls", 1, 1000000, &model.halfOpenCalls)) {
        return std::nullopt;
    }
    model.failureRatio = ratio;
    model.samplingDurationMs = qint64(std::llround(sampling * 1000.0));
    model.breakDurationMs = qint64(std::llround(breakSeconds * 1000.0));

    const QJsonValue window = object.value(u"window");
    const QJsonValue extends = object.value(u"retryAfterExtendsBreak");
    if (window == QJsonValue(QStringLiteral("time"))) {
        model.window = BreakerModel::Window::Time;
    } else if (window == QJsonValue(QStringLiteral("count"))) {
        model.window = BreakerModel::Window::Count;
    } else if (!window.isUndefined()) {
        read.fail(QStringLiteral("'window' must be \"time\" or \"count\""));
        return std::nullopt;
    }
    if (extends.isBool()) {
        model.retryAfterExtendsBreak = extends.toBool();
    } else if (!extends.isUndefined()) {
        read.fail(u"'retryAfterExtendsBreak' must be true or false"_qs);
        return std::nullopt;
    }
    if (const QString invalid = model.validationError(); !invalid.isEmpty()) {
        read.fail(invalid);
        return std::nullopt;
    }
    return model;
}

} // namespace

std::optional<BreakerModel> BreakerModel::fromJson(const QJsonObject &object, QString *error)
{
    const OptionReader read(object, error);
    BreakerModel model;
    const QJsonValue preset = object.value(u"preset");
    if (!preset.isUndefined()) {
        const auto named = preset.isString() ? fromPreset(preset.toString()) : std::nullopt;
        // "custom" is what toJson() writes for edited values: they follow, on top of Polly's.
        if (!named && preset.toString() != kCustom) {
            read.fail(QStringLiteral("'preset' must be one of %1 or \"custom\"")
                          .arg(presetNames().join(QStringLiteral(", "))));
            return std::nullopt;
        }
        if (named)
            model = *named;
    }
    // Each library preset takes its library's options, by the library's names.
    switch (model.rules) {
    case Rules::Cockatiel:
        if (!read.onlyKeys(kCockatielKeys, kCockatiel))
            return std::nullopt;
        return cockatielFromJson(read, object);
    case Rules::Opossum:
        if (!read.onlyKeys(kOpossumKeys, kOpossum))
            return std::nullopt;
        return opossumFromJson(read);
    case Rules::Reference:
        break;
    }
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (!kKeys.contains(it.key())) {
            const bool library =
                kCockatielKeys.contains(it.key()) || kOpossumKeys.contains(it.key());
            read.fail(QStringLiteral("unknown key '%1' (known: %2)%3")
                          .arg(it.key(), kKeys.join(QStringLiteral(", ")),
                               library ? QStringLiteral("; a library's options need its preset, "
                                                        "\"cockatiel\" or \"opossum\"")
                                       : QString()));
            return std::nullopt;
        }
    }
    return referenceFromJson(read, object, model);
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

QJsonObject BreakerModel::libraryOptions() const
{
    using Breaker = Cockatiel::Breaker;
    switch (rules) {
    case Rules::Cockatiel: {
        QJsonObject options{{u"breaker"_qs, breakerName(cockatiel.breaker)},
                            {u"threshold"_qs, cockatiel.threshold},
                            {u"halfOpenAfter"_qs, double(cockatiel.halfOpenAfterMs)}};
        if (cockatiel.breaker == Breaker::Sampling) {
            options.insert(u"duration"_qs, double(cockatiel.durationMs));
            if (cockatiel.minimumRps)
                options.insert(u"minimumRps"_qs, *cockatiel.minimumRps);
        } else if (cockatiel.breaker == Breaker::Count) {
            options.insert(u"size"_qs, cockatiel.size);
            options.insert(u"minimumNumberOfCalls"_qs, cockatiel.minimumNumberOfCalls);
        }
        return options;
    }
    case Rules::Opossum:
        return QJsonObject{
            {u"errorThresholdPercentage"_qs, opossum.errorThresholdPercentage},
            {u"resetTimeout"_qs, double(opossum.resetTimeoutMs)},
            {u"rollingCountTimeout"_qs, double(opossum.rollingCountTimeoutMs)},
            {u"rollingCountBuckets"_qs, opossum.rollingCountBuckets},
            {u"volumeThreshold"_qs, opossum.volumeThreshold},
        };
    case Rules::Reference:
        break;
    }
    return {};
}

QJsonObject BreakerModel::toJson() const
{
    if (rules != Rules::Reference) {
        QJsonObject object = libraryOptions();
        object.insert(u"preset"_qs, matchingPreset());
        return object;
    }
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

qint64 BreakerModel::breakMs() const
{
    switch (rules) {
    case Rules::Cockatiel:
        return cockatiel.halfOpenAfterMs;
    case Rules::Opossum:
        return opossum.resetTimeoutMs;
    case Rules::Reference:
        break;
    }
    return breakDurationMs;
}

namespace {

QString cockatielError(const BreakerModel::Cockatiel &options)
{
    using Breaker = BreakerModel::Cockatiel::Breaker;
    // The library's own RangeErrors, and bounds that keep the replay sane.
    if (options.breaker == Breaker::Consecutive) {
        if (!(options.threshold > 0 && options.threshold <= 1e6))
            return u"'threshold' of a ConsecutiveBreaker must be above 0 and at most 1000000"_qs;
    } else if (!(options.threshold > 0 && options.threshold < 1)) {
        return u"'threshold' must be between 0 and 1 (both excluded)"_qs;
    }
    if (options.durationMs < 10 || options.durationMs > 86400000)
        return u"'duration' must be from 10 to 86400000 ms"_qs;
    if (options.minimumRps && !(*options.minimumRps > 0 && std::isfinite(*options.minimumRps)))
        return u"'minimumRps' must be above 0"_qs;
    if (options.size < 1 || options.size > 1000000)
        return u"'size' must be from 1 to 1000000"_qs;
    if (options.minimumNumberOfCalls < 1 || options.minimumNumberOfCalls > options.size)
        return u"'minimumNumberOfCalls' must be from 1 to 'size'"_qs;
    if (options.halfOpenAfterMs < 0 || options.halfOpenAfterMs > 86400000)
        return u"'halfOpenAfter' must be from 0 to 86400000 ms"_qs;
    return {};
}

QString opossumError(const BreakerModel::Opossum &options)
{
    if (!(options.errorThresholdPercentage >= 0 && options.errorThresholdPercentage <= 100))
        return u"'errorThresholdPercentage' must be from 0 to 100"_qs;
    if (options.resetTimeoutMs < 1 || options.resetTimeoutMs > 86400000)
        return u"'resetTimeout' must be from 1 to 86400000 ms"_qs;
    if (options.rollingCountBuckets < 1 || options.rollingCountBuckets > 10000)
        return u"'rollingCountBuckets' must be from 1 to 10000"_qs;
    // The library rotates a bucket every floor(rollingCountTimeout / rollingCountBuckets) ms.
    if (options.rollingCountTimeoutMs < options.rollingCountBuckets ||
        options.rollingCountTimeoutMs > 86400000)
        return u"'rollingCountTimeout' must be from 'rollingCountBuckets' to 86400000 ms"_qs;
    if (options.volumeThreshold < 0)
        return u"'volumeThreshold' must not be negative"_qs;
    return {};
}

} // namespace

QString BreakerModel::validationError() const
{
    if (rules == Rules::Cockatiel)
        return cockatielError(cockatiel);
    if (rules == Rules::Opossum)
        return opossumError(opossum);
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
    if (rules == Rules::Cockatiel)
        return kCockatiel;
    if (rules == Rules::Opossum)
        return kOpossum;
    for (const QString &name : {kPolly, kResilience4j}) {
        if (*fromPreset(name) == *this)
            return name;
    }
    return kCustom;
}

namespace {

QString describeCockatiel(const BreakerModel::Cockatiel &options)
{
    using Breaker = BreakerModel::Cockatiel::Breaker;
    const QString percent = QString::number(options.threshold * 100.0, 'g', 4) + u" %"_qs;
    QString text = u"cockatiel "_qs + breakerName(options.breaker) + u": opens "_qs;
    switch (options.breaker) {
    case Breaker::Consecutive:
        text += QStringLiteral("at %1 failures in a row").arg(options.threshold, 0, 'g', 6);
        break;
    case Breaker::Count:
        text += QStringLiteral("when > %1 of the last %2 calls fail (at least %3 calls), "
                               "weighed at a failure")
                    .arg(percent)
                    .arg(options.size)
                    .arg(options.minimumNumberOfCalls);
        break;
    case Breaker::Sampling:
        text += QStringLiteral("when > %1 of the calls in %2 fail (%3), weighed at a failure")
                    .arg(percent, seconds(options.durationMs),
                         options.minimumRps ? QStringLiteral("at least %1 calls a second")
                                                  .arg(*options.minimumRps, 0, 'g', 6)
                                            : u"at least 5 failures a second at the threshold"_qs);
        break;
    }
    return text + QStringLiteral("; open %1, then the next call is the probe")
                      .arg(seconds(options.halfOpenAfterMs));
}

QString describeOpossum(const BreakerModel::Opossum &options)
{
    QString text = QStringLiteral("opossum: opens when > %1 % of the calls in %2 (%3 buckets) "
                                  "fail, refused calls counted")
                       .arg(options.errorThresholdPercentage, 0, 'g', 6)
                       .arg(seconds(options.rollingCountTimeoutMs))
                       .arg(options.rollingCountBuckets);
    if (options.volumeThreshold > 0)
        text += QStringLiteral(", at least %1 calls").arg(options.volumeThreshold);
    return text + QStringLiteral("; half-open %1 after opening, the next call is the probe")
                      .arg(seconds(options.resetTimeoutMs));
}

} // namespace

QString BreakerModel::describe() const
{
    if (rules == Rules::Cockatiel)
        return describeCockatiel(cockatiel);
    if (rules == Rules::Opossum)
        return describeOpossum(opossum);
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
