#include "policy.h"

#include "core/textsearch.h"

#include "policy/eventfields.h"
#include "policy/textmatcher.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>

#include <cmath>
#include <cstring>

namespace ts {

namespace {

// Bounded so that the engine can track "which limits charged this event" in one machine word.
constexpr int kMaxLimitsPerPolicy = 64;
constexpr int kMaxKeyFields = 4;

struct FieldName
{
    EventField field;
    QStringView name;
};

constexpr FieldName kFieldNames[] = {
    {EventField::Service, u"service"},     {EventField::Category, u"category"},
    {EventField::Method, u"method"},       {EventField::Url, u"url"},
    {EventField::Path, u"path"},           {EventField::Host, u"host"},
    {EventField::Identity, u"identity"},   {EventField::App, u"app"},
    {EventField::Tenant, u"tenant"},       {EventField::Namespace, u"namespace"},
    {EventField::Entity, u"entity"},       {EventField::Subscription, u"subscription"},
    {EventField::Lane, u"lane"},           {EventField::Status, u"status"},
    {EventField::ErrorCode, u"errorCode"}, {EventField::OperationId, u"operationId"},
    {EventField::BatchId, u"batchId"},
};

struct AlgorithmName
{
    Algorithm algorithm;
    QStringView name;
};

constexpr AlgorithmName kAlgorithmNames[] = {
    {Algorithm::FixedWindow, u"fixed-window"}, {Algorithm::SlidingWindow, u"sliding-window"},
    {Algorithm::TokenBucket, u"token-bucket"}, {Algorithm::LeakyBucket, u"leaky-bucket"},
    {Algorithm::Credits, u"credits"},          {Algorithm::Concurrency, u"concurrency"},
    {Algorithm::Observed, u"observed"},
};

// The built-in policies in default-selection order (see PolicySet::builtin()).
const QStringList &builtinOrder()
{
    static const QStringList order{
        QStringLiteral("fabric"),
        QStringLiteral("graph-onenote-delegated"),
        QStringLiteral("graph-onenote-app"),
        QStringLiteral("servicebus-standard"),
        QStringLiteral("servicebus-premium"),
        QStringLiteral("arm"),
        QStringLiteral("nginx"),
    };
    return order;
}

QString quoted(const QString &text)
{
    return u'\'' + text + u'\'';
}

QString jsonTypeName(const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Null:
        return QStringLiteral("null");
    case QJsonValue::Bool:
        return QStringLiteral("a boolean");
    case QJsonValue::Double:
        return QStringLiteral("a number");
    case QJsonValue::String:
        return QStringLiteral("a string");
    case QJsonValue::Array:
        return QStringLiteral("an array");
    case QJsonValue::Object:
        return QStringLiteral("an object");
    case QJsonValue::Undefined:
        break;
    }
    return QStringLiteral("nothing");
}

// Small parse context: the error message and the path of what is being read ("limit 'x'").
class Reader
{
public:
    explicit Reader(QString *error) : m_error(error) {}

    bool fail(const QString &where, const QString &what)
    {
        if (m_error)
            *m_error = where.isEmpty() ? what : where + QStringLiteral(": ") + what;
        return false;
    }

    bool readString(const QJsonObject &object, QStringView key, const QString &where, QString *out,
                    bool required)
    {
        const QJsonValue value = object.value(key);
        if (value.isUndefined()) {
            if (required)
                return fail(where, QStringLiteral("missing '%1'").arg(key));
            return true;
        }
        if (!value.isString()) {
            return fail(
                where,
                QStringLiteral("'%1' must be a string, not %2").arg(key, jsonTypeName(value)));
        }
        *out = value.toString();
        return true;
    }

    bool readNumber(const QJsonObject &object, QStringView key, const QString &where, double *out)
    {
        const QJsonValue value = object.value(key);
        if (value.isUndefined())
            return true;
        if (!value.isDouble() || !std::isfinite(value.toDouble())) {
            return fail(
                where,
                QStringLiteral("'%1' must be a number, not %2").arg(key, jsonTypeName(value)));
        }
        *out = value.toDouble();
        return true;
    }

    bool readBool(const QJsonObject &object, QStringView key, const QString &where, bool *out,
                  bool *present = nullptr)
    {
        const QJsonValue value = object.value(key);
        if (present)
            *present = !value.isUndefined();
        if (value.isUndefined())
            return true;
        if (!value.isBool()) {
            return fail(
                where,
                QStringLiteral("'%1' must be true or false, not %2").arg(key, jsonTypeName(value)));
        }
        *out = value.toBool();
        return true;
    }

    bool readConditions(const QJsonObject &object, QStringView key, const QString &where,
                        QList<FieldCondition> *out)
    {
        const QJsonValue value = object.value(key);
        if (value.isUndefined())
            return true;
        if (!value.isObject()) {
            return fail(where, QStringLiteral("'%1' must be an object of field: pattern, not %2")
                                   .arg(key, jsonTypeName(value)));
        }
        const QJsonObject conditions = value.toObject();
        for (auto it = conditions.begin(); it != conditions.end(); ++it) {
            if (!it.value().isString()) {
                return fail(where, QStringLiteral("'%1.%2' must be a string (a regular "
                                                  "expression), not %3")
                                       .arg(key, it.key(), jsonTypeName(it.value())));
            }
            out->append({it.key(), it.value().toString()});
        }
        return true;
    }

private:
    QString *m_error;
};

const QStringList kPolicyKeys{QStringLiteral("name"),   QStringLiteral("description"),
                              QStringLiteral("match"),  QStringLiteral("categories"),
                              QStringLiteral("limits"), QStringLiteral("chargeThrottled"),
                              QStringLiteral("breaker")};
const QStringList kLimitKeys{QStringLiteral("name"),
                             QStringLiteral("key"),
                             QStringLiteral("match"),
                             QStringLiteral("algorithm"),
                             QStringLiteral("capacity"),
                             QStringLiteral("windowSeconds"),
                             QStringLiteral("align"),
                             QStringLiteral("refillPerSecond"),
                             QStringLiteral("ratePerSecond"),
                             QStringLiteral("rate"),
                             QStringLiteral("burst"),
                             QStringLiteral("nodelay"),
                             QStringLiteral("cost"),
                             QStringLiteral("defaultCost"),
                             QStringLiteral("chargeThrottled"),
                             QStringLiteral("initialFill")};

QJsonObject extraKeys(const QJsonObject &object, const QStringList &known)
{
    QJsonObject extra;
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (!known.contains(it.key()))
            extra.insert(it.key(), it.value());
    }
    return extra;
}

QJsonObject conditionsToJson(const QList<FieldCondition> &conditions)
{
    QJsonObject object;
    for (const FieldCondition &condition : conditions)
        object.insert(condition.field, condition.pattern);
    return object;
}

// nginx "20r/s" / "30r/m": numerator and scale, nullopt when malformed.
std::optional<std::pair<qint64, qint64>> parseNginxRate(QStringView rate)
{
    qint64 scale = 1;
    QStringView number = rate.trimmed();
    if (number.endsWith(u"r/s")) {
        number.chop(3);
    } else if (number.endsWith(u"r/m")) {
        scale = 60;
        number.chop(3);
    }
    bool ok = false;
    const qint64 value = number.toLongLong(&ok);
    if (!ok || value <= 0)
        return std::nullopt;
    return std::make_pair(value, scale);
}

bool validateConditions(const QList<FieldCondition> &conditions, const QString &where,
                        Reader &reader)
{
    for (const FieldCondition &condition : conditions) {
        if (!eventFieldFromName(condition.field)) {
            return reader.fail(where, QStringLiteral("unknown field %1 in match (known: %2)")
                                          .arg(quoted(condition.field),
                                               eventFieldNames().join(QStringLiteral(", "))));
        }
        TextMatcher matcher;
        QString regexError;
        if (!matcher.compile(condition.pattern, &regexError)) {
            return reader.fail(where,
                               QStringLiteral("match.%1: %2").arg(condition.field, regexError));
        }
    }
    return true;
}

} // namespace

// ---- names ------------------------------------------------------------------------------------

std::optional<EventField> eventFieldFromName(QStringView name)
{
    for (const FieldName &entry : kFieldNames) {
        if (entry.name == name)
            return entry.field;
    }
    return std::nullopt;
}

QString eventFieldName(EventField field)
{
    for (const FieldName &entry : kFieldNames) {
        if (entry.field == field)
            return entry.name.toString();
    }
    return {};
}

QStringList eventFieldNames()
{
    QStringList names;
    for (const FieldName &entry : kFieldNames)
        names.append(entry.name.toString());
    return names;
}

QString algorithmName(Algorithm algorithm)
{
    for (const AlgorithmName &entry : kAlgorithmNames) {
        if (entry.algorithm == algorithm)
            return entry.name.toString();
    }
    return {};
}

std::optional<Algorithm> algorithmFromName(QStringView name)
{
    for (const AlgorithmName &entry : kAlgorithmNames) {
        if (entry.name == name)
            return entry.algorithm;
    }
    return std::nullopt;
}

// ---- PolicyLimit ------------------------------------------------------------------------------

double PolicyLimit::effectiveCapacity() const
{
    return algorithm == Algorithm::LeakyBucket ? burst : capacity;
}

qint64 PolicyLimit::nginxMilliRate() const
{
    if (!rate.isEmpty()) {
        if (const auto parsed = parseNginxRate(rate))
            return parsed->first * 1000 / parsed->second;
    }
    return static_cast<qint64>(std::floor(ratePerSecond * 1000.0 + 1e-6));
}

QStringList PolicyLimit::keyFields() const
{
    return key.split(u'+', Qt::SkipEmptyParts);
}

// ---- Policy -----------------------------------------------------------------------------------

bool Policy::chargesThrottled(const PolicyLimit &limit) const
{
    if (limit.chargeThrottled)
        return *limit.chargeThrottled;
    if (limit.algorithm == Algorithm::LeakyBucket)
        return false;
    return chargeThrottled;
}

bool Policy::operator==(const Policy &other) const
{
    return name == other.name && description == other.description && match == other.match &&
           categories == other.categories && limits == other.limits &&
           chargeThrottled == other.chargeThrottled && breaker == other.breaker &&
           extra == other.extra;
}

std::optional<Policy> Policy::fromJson(const QJsonObject &object, QString *error)
{
    Reader reader(error);
    Policy policy;
    if (!reader.readString(object, u"name", {}, &policy.name, true))
        return std::nullopt;
    if (policy.name.trimmed().isEmpty()) {
        reader.fail({}, QStringLiteral("'name' must not be empty"));
        return std::nullopt;
    }
    const QString where = QStringLiteral("policy ") + quoted(policy.name);
    if (!reader.readString(object, u"description", where, &policy.description, false) ||
        !reader.readConditions(object, u"match", where, &policy.match) ||
        !reader.readBool(object, u"chargeThrottled", where, &policy.chargeThrottled)) {
        return std::nullopt;
    }

    const QJsonValue breaker = object.value(u"breaker");
    if (!breaker.isUndefined()) {
        if (!breaker.isObject()) {
            reader.fail(
                where,
                QStringLiteral("'breaker' must be an object, not %1").arg(jsonTypeName(breaker)));
            return std::nullopt;
        }
        QString breakerError;
        policy.breaker = BreakerModel::fromJson(breaker.toObject(), &breakerError);
        if (!policy.breaker) {
            reader.fail(where, breakerError);
            return std::nullopt;
        }
    }

    const QJsonValue categories = object.value(u"categories");
    if (!categories.isUndefined() && !categories.isArray()) {
        reader.fail(
            where,
            QStringLiteral("'categories' must be an array, not %1").arg(jsonTypeName(categories)));
        return std::nullopt;
    }
    const QJsonArray categoryArray = categories.toArray();
    for (qsizetype i = 0; i < categoryArray.size(); ++i) {
        const QString categoryWhere = QStringLiteral("categories[%1]").arg(i);
        if (!categoryArray.at(i).isObject()) {
            reader.fail(categoryWhere, QStringLiteral("must be an object"));
            return std::nullopt;
        }
        const QJsonObject rule = categoryArray.at(i).toObject();
        CategoryRule category;
        if (!reader.readString(rule, u"name", categoryWhere, &category.name, true) ||
            !reader.readString(rule, u"urlPattern", categoryWhere, &category.urlPattern, true)) {
            return std::nullopt;
        }
        policy.categories.append(category);
    }

    const QJsonValue limits = object.value(u"limits");
    if (limits.isUndefined()) {
        reader.fail(where, QStringLiteral("missing 'limits'"));
        return std::nullopt;
    }
    if (!limits.isArray()) {
        reader.fail(where,
                    QStringLiteral("'limits' must be an array, not %1").arg(jsonTypeName(limits)));
        return std::nullopt;
    }
    const QJsonArray limitArray = limits.toArray();
    for (qsizetype i = 0; i < limitArray.size(); ++i) {
        if (!limitArray.at(i).isObject()) {
            reader.fail(where, QStringLiteral("limits[%1] must be an object").arg(i));
            return std::nullopt;
        }
        const QJsonObject json = limitArray.at(i).toObject();
        PolicyLimit limit;
        if (!reader.readString(json, u"name", QStringLiteral("limits[%1]").arg(i), &limit.name,
                               true)) {
            return std::nullopt;
        }
        const QString limitWhere = QStringLiteral("limit ") + quoted(limit.name);
        QString algorithm;
        QString align;
        bool chargePresent = false;
        bool charge = true;
        if (!reader.readString(json, u"key", limitWhere, &limit.key, false) ||
            !reader.readConditions(json, u"match", limitWhere, &limit.match) ||
            !reader.readString(json, u"algorithm", limitWhere, &algorithm, true) ||
            !reader.readNumber(json, u"capacity", limitWhere, &limit.capacity) ||
            !reader.readNumber(json, u"windowSeconds", limitWhere, &limit.windowSeconds) ||
            !reader.readString(json, u"align", limitWhere, &align, false) ||
            !reader.readNumber(json, u"refillPerSecond", limitWhere, &limit.refillPerSecond) ||
            !reader.readNumber(json, u"ratePerSecond", limitWhere, &limit.ratePerSecond) ||
            !reader.readNumber(json, u"burst", limitWhere, &limit.burst) ||
            !reader.readBool(json, u"nodelay", limitWhere, &limit.nodelay) ||
            !reader.readNumber(json, u"defaultCost", limitWhere, &limit.defaultCost) ||
            !reader.readNumber(json, u"initialFill", limitWhere, &limit.initialFill) ||
            !reader.readBool(json, u"chargeThrottled", limitWhere, &charge, &chargePresent)) {
            return std::nullopt;
        }
        if (chargePresent)
            limit.chargeThrottled = charge;
        const auto parsedAlgorithm = algorithmFromName(algorithm);
        if (!parsedAlgorithm) {
            QStringList known;
            for (const AlgorithmName &entry : kAlgorithmNames)
                known.append(entry.name.toString());
            reader.fail(limitWhere, QStringLiteral("unknown algorithm %1 (known: %2)")
                                        .arg(quoted(algorithm), known.join(QStringLiteral(", "))));
            return std::nullopt;
        }
        limit.algorithm = *parsedAlgorithm;
        if (align.isEmpty() || align == u"clock") {
            limit.align = WindowAlign::Clock;
        } else if (align == u"first-request") {
            limit.align = WindowAlign::FirstRequest;
        } else {
            reader.fail(limitWhere, QStringLiteral("'align' must be \"clock\" or "
                                                   "\"first-request\", not %1")
                                        .arg(quoted(align)));
            return std::nullopt;
        }
        const QJsonValue rate = json.value(u"rate");
        if (rate.isString()) {
            limit.rate = rate.toString();
            const auto parsedRate = parseNginxRate(limit.rate);
            if (!parsedRate) {
                reader.fail(limitWhere, QStringLiteral("'rate' must look like \"20r/s\" or "
                                                       "\"30r/m\", not %1")
                                            .arg(quoted(limit.rate)));
                return std::nullopt;
            }
            limit.ratePerSecond = double(parsedRate->first) / double(parsedRate->second);
        } else if (rate.isDouble()) {
            limit.ratePerSecond = rate.toDouble();
        } else if (!rate.isUndefined()) {
            reader.fail(limitWhere, QStringLiteral("'rate' must be a number or a string like "
                                                   "\"20r/s\", not %1")
                                        .arg(jsonTypeName(rate)));
            return std::nullopt;
        }
        const QJsonValue cost = json.value(u"cost");
        if (!cost.isUndefined() && !cost.isArray()) {
            reader.fail(limitWhere,
                        QStringLiteral("'cost' must be an array, not %1").arg(jsonTypeName(cost)));
            return std::nullopt;
        }
        const QJsonArray costArray = cost.toArray();
        for (qsizetype c = 0; c < costArray.size(); ++c) {
            const QString costWhere = limitWhere + QStringLiteral(": cost[%1]").arg(c);
            if (!costArray.at(c).isObject()) {
                reader.fail(costWhere, QStringLiteral("must be an object"));
                return std::nullopt;
            }
            const QJsonObject ruleJson = costArray.at(c).toObject();
            CostRule rule;
            if (!reader.readConditions(ruleJson, u"match", costWhere, &rule.match) ||
                !reader.readNumber(ruleJson, u"credits", costWhere, &rule.credits)) {
                return std::nullopt;
            }
            limit.cost.append(rule);
        }
        limit.extra = extraKeys(json, kLimitKeys);
        policy.limits.append(limit);
    }
    policy.extra = extraKeys(object, kPolicyKeys);

    if (!policy.validate(error))
        return std::nullopt;
    return policy;
}

bool Policy::validate(QString *error) const
{
    Reader reader(error);
    const QString where = QStringLiteral("policy ") + quoted(name);
    if (name.trimmed().isEmpty())
        return reader.fail({}, QStringLiteral("'name' must not be empty"));
    if (!validateConditions(match, where, reader))
        return false;
    for (const CategoryRule &category : categories) {
        const QString categoryWhere = QStringLiteral("category ") + quoted(category.name);
        if (category.name.isEmpty())
            return reader.fail(where, QStringLiteral("a category has an empty name"));
        TextMatcher matcher;
        QString regexError;
        if (!matcher.compile(category.urlPattern, &regexError))
            return reader.fail(categoryWhere, QStringLiteral("urlPattern: ") + regexError);
    }
    if (limits.size() > kMaxLimitsPerPolicy) {
        return reader.fail(where, QStringLiteral("has %1 limits; at most %2 are supported")
                                      .arg(limits.size())
                                      .arg(kMaxLimitsPerPolicy));
    }
    QStringList seen;
    for (const PolicyLimit &limit : limits) {
        const QString limitWhere = QStringLiteral("limit ") + quoted(limit.name);
        if (limit.name.trimmed().isEmpty())
            return reader.fail(where, QStringLiteral("a limit has an empty name"));
        if (seen.contains(limit.name))
            return reader.fail(limitWhere, QStringLiteral("appears twice (names must be unique)"));
        seen.append(limit.name);
        const QStringList fields = limit.keyFields();
        if (fields.isEmpty())
            return reader.fail(limitWhere, QStringLiteral("'key' must name at least one field"));
        if (fields.size() > kMaxKeyFields) {
            return reader.fail(limitWhere, QStringLiteral("'key' has %1 fields; at most %2")
                                               .arg(fields.size())
                                               .arg(kMaxKeyFields));
        }
        for (const QString &field : fields) {
            if (!eventFieldFromName(field)) {
                return reader.fail(
                    limitWhere,
                    QStringLiteral("unknown field %1 in 'key' (known: %2)")
                        .arg(quoted(field), eventFieldNames().join(QStringLiteral(", "))));
            }
        }
        if (!validateConditions(limit.match, limitWhere, reader))
            return false;
        for (const CostRule &rule : limit.cost) {
            if (!validateConditions(rule.match, limitWhere + QStringLiteral(": cost"), reader))
                return false;
            if (rule.credits < 0)
                return reader.fail(limitWhere, QStringLiteral("cost credits must not be negative"));
        }
        if (limit.defaultCost < 0)
            return reader.fail(limitWhere, QStringLiteral("'defaultCost' must not be negative"));
        if (!(limit.initialFill >= 0 && limit.initialFill <= 1))
            return reader.fail(limitWhere, QStringLiteral("'initialFill' must be between 0 and 1 "
                                                          "(got %1)")
                                               .arg(limit.initialFill));
        auto positive = [&](double value, QStringView key) {
            if (value > 0)
                return true;
            return reader.fail(limitWhere, QStringLiteral("'%1' must be a positive number for "
                                                          "%2 (got %3)")
                                               .arg(key, algorithmName(limit.algorithm))
                                               .arg(value));
        };
        switch (limit.algorithm) {
        case Algorithm::FixedWindow:
        case Algorithm::SlidingWindow:
        case Algorithm::Credits:
            if (!positive(limit.capacity, u"capacity") ||
                !positive(limit.windowSeconds, u"windowSeconds")) {
                return false;
            }
            break;
        case Algorithm::TokenBucket:
            if (!positive(limit.capacity, u"capacity") ||
                !positive(limit.refillPerSecond, u"refillPerSecond")) {
                return false;
            }
            break;
        case Algorithm::LeakyBucket:
            if (limit.nginxMilliRate() <= 0) {
                return reader.fail(limitWhere, QStringLiteral("leaky-bucket needs a positive "
                                                              "'rate' or 'ratePerSecond'"));
            }
            if (limit.burst < 0)
                return reader.fail(limitWhere, QStringLiteral("'burst' must not be negative"));
            break;
        case Algorithm::Concurrency:
            if (!positive(limit.capacity, u"capacity"))
                return false;
            break;
        case Algorithm::Observed:
            break;
        }
    }
    return true;
}

std::optional<Policy> Policy::fromJsonBytes(const QByteArray &bytes, const QString &origin,
                                            QString *error)
{
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(bytes, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        // Line numbers help more than offsets in a hand-edited file.
        const qsizetype offset = parseError.offset;
        const qsizetype line = bytes.left(offset).count('\n') + 1;
        if (error) {
            *error = QStringLiteral("%1:%2: not valid JSON: %3 (at offset %4)")
                         .arg(origin)
                         .arg(line)
                         .arg(parseError.errorString())
                         .arg(offset);
        }
        return std::nullopt;
    }
    if (!document.isObject()) {
        if (error)
            *error = origin + QStringLiteral(": a policy must be a JSON object");
        return std::nullopt;
    }
    QString reason;
    auto policy = fromJson(document.object(), &reason);
    if (!policy) {
        if (error)
            *error = origin + QStringLiteral(": ") + reason;
        return std::nullopt;
    }
    policy->origin = origin;
    return policy;
}

std::optional<Policy> Policy::fromFile(const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error)
            *error = path + QStringLiteral(": cannot open: ") + file.errorString();
        return std::nullopt;
    }
    return fromJsonBytes(file.readAll(), path, error);
}

QJsonObject Policy::toJson() const
{
    QJsonObject object = extra;
    object.insert(u"name", name);
    if (!description.isEmpty())
        object.insert(u"description", description);
    if (!match.isEmpty())
        object.insert(u"match", conditionsToJson(match));
    if (!chargeThrottled)
        object.insert(u"chargeThrottled", false);
    if (breaker)
        object.insert(u"breaker", breaker->toJson());
    if (!categories.isEmpty()) {
        QJsonArray array;
        for (const CategoryRule &category : categories) {
            array.append(QJsonObject{{QStringLiteral("name"), category.name},
                                     {QStringLiteral("urlPattern"), category.urlPattern}});
        }
        object.insert(u"categories", array);
    }
    QJsonArray limitArray;
    const PolicyLimit defaults;
    for (const PolicyLimit &limit : limits) {
        QJsonObject json = limit.extra;
        json.insert(u"name", limit.name);
        json.insert(u"key", limit.key);
        if (!limit.match.isEmpty())
            json.insert(u"match", conditionsToJson(limit.match));
        json.insert(u"algorithm", algorithmName(limit.algorithm));
        // Write what the algorithm needs, plus anything that differs from the default, so that
        // a round trip gives back the same value.
        const bool windowed = limit.algorithm == Algorithm::FixedWindow ||
                              limit.algorithm == Algorithm::SlidingWindow ||
                              limit.algorithm == Algorithm::Credits;
        const bool hasCapacity =
            limit.algorithm != Algorithm::LeakyBucket && limit.algorithm != Algorithm::Observed;
        if (hasCapacity || limit.capacity != defaults.capacity)
            json.insert(u"capacity", limit.capacity);
        if (windowed || limit.windowSeconds != defaults.windowSeconds)
            json.insert(u"windowSeconds", limit.windowSeconds);
        if (limit.algorithm == Algorithm::FixedWindow || limit.algorithm == Algorithm::Credits ||
            limit.align != defaults.align) {
            json.insert(u"align", limit.align == WindowAlign::Clock
                                      ? QStringLiteral("clock")
                                      : QStringLiteral("first-request"));
        }
        if (limit.algorithm == Algorithm::TokenBucket ||
            limit.refillPerSecond != defaults.refillPerSecond) {
            json.insert(u"refillPerSecond", limit.refillPerSecond);
        }
        if (!limit.rate.isEmpty())
            json.insert(u"rate", limit.rate);
        else if (limit.algorithm == Algorithm::LeakyBucket || limit.ratePerSecond != 0)
            json.insert(u"ratePerSecond", limit.ratePerSecond);
        if (limit.algorithm == Algorithm::LeakyBucket || limit.burst != defaults.burst)
            json.insert(u"burst", limit.burst);
        if (limit.nodelay != defaults.nodelay)
            json.insert(u"nodelay", limit.nodelay);
        if (!limit.cost.isEmpty()) {
            QJsonArray costArray;
            for (const CostRule &rule : limit.cost) {
                costArray.append(
                    QJsonObject{{QStringLiteral("match"), conditionsToJson(rule.match)},
                                {QStringLiteral("credits"), rule.credits}});
            }
            json.insert(u"cost", costArray);
        }
        if (limit.defaultCost != defaults.defaultCost || limit.algorithm == Algorithm::Credits)
            json.insert(u"defaultCost", limit.defaultCost);
        if (limit.chargeThrottled)
            json.insert(u"chargeThrottled", *limit.chargeThrottled);
        if (limit.initialFill != defaults.initialFill)
            json.insert(u"initialFill", limit.initialFill);
        limitArray.append(json);
    }
    object.insert(u"limits", limitArray);
    return object;
}

QByteArray Policy::toJsonBytes() const
{
    return QJsonDocument(toJson()).toJson(QJsonDocument::Indented);
}

// ---- service inference ------------------------------------------------------------------------

namespace {

// Index just past "scheme://", or -1. Hand-rolled: a scheme is a few letters, so this looks at
// a handful of characters instead of searching the whole URL (it runs for every event).
qsizetype afterScheme(QStringView url)
{
    // Nearly every URL in a log is https (or http): recognised without the character loop
    // (and without a library call: this runs for every event that routes by path or host).
    if (url.size() >= 8) {
        static constexpr char16_t https[8] = {u'h', u't', u't', u'p', u's', u':', u'/', u'/'};
        if (std::memcmp(url.utf16(), https, sizeof(https)) == 0)
            return 8;
        if (std::memcmp(url.utf16(), https, 4 * sizeof(char16_t)) == 0 &&
            std::memcmp(url.utf16() + 4, https + 5, 3 * sizeof(char16_t)) == 0)
            return 7;
    }
    const qsizetype limit = std::min<qsizetype>(url.size() - 2, 16);
    for (qsizetype i = 0; i < limit; ++i) {
        const char16_t c = url[i].unicode();
        if (c == u':')
            return (url[i + 1] == u'/' && url[i + 2] == u'/') ? i + 3 : -1;
        if (!((c >= u'a' && c <= u'z') || (c >= u'A' && c <= u'Z') || (c >= u'0' && c <= u'9') ||
              c == u'+' || c == u'-' || c == u'.')) {
            return -1;
        }
    }
    return -1;
}

} // namespace

QStringView urlHost(QStringView url)
{
    qsizetype start = afterScheme(url);
    if (start < 0) {
        if (url.isEmpty() || url.startsWith(u'/'))
            return {};
        start = 0; // "graph.microsoft.com/v1.0/me": a host without scheme
    }
    const qsizetype length =
        text::findAnyOf4(url.utf16() + start, url.size() - start, u'/', u'?', u'#', u':');
    const qsizetype end = length < 0 ? url.size() : start + length;
    const QStringView host = url.mid(start, end - start);
    if (start == 0 && !host.contains(u'.'))
        return {};
    return host;
}

QStringView urlPath(QStringView url)
{
    qsizetype start = 0;
    if (!url.startsWith(u'/')) {
        // The host is short: a plain scan to its end.
        const qsizetype scheme = std::max<qsizetype>(afterScheme(url), 0);
        const qsizetype slash =
            text::findEither(url.utf16() + scheme, url.size() - scheme, u'/', u'/');
        if (slash < 0)
            return {};
        start = scheme + slash;
    }
    // The rest is long: one vectorised search for the query or fragment (this runs for every
    // event that routes by path).
    const qsizetype stop = text::findEither(url.utf16() + start, url.size() - start, u'?', u'#');
    return url.mid(start, stop < 0 ? url.size() - start : stop);
}

namespace {

// Host names compare case-insensitively (ASCII: the names we look for are ASCII, and a host
// with other letters is not one of them); the size test first makes the usual mismatch free.
bool hostIs(QStringView host, QLatin1String name)
{
    if (host.size() != name.size())
        return false;
    for (qsizetype i = 0; i < host.size(); ++i) {
        char16_t c = host[i].unicode();
        if (c >= u'A' && c <= u'Z')
            c = char16_t(c + (u'a' - u'A'));
        if (c != char16_t(uchar(name[i].toLatin1())))
            return false;
    }
    return true;
}

bool hostEndsWith(QStringView host, QLatin1String suffix)
{
    return host.size() >= suffix.size() && hostIs(host.right(suffix.size()), suffix);
}

} // namespace

QString inferServiceFromUrl(QStringView url)
{
    const QStringView host = urlHost(url);
    if (host.isEmpty())
        return {};
    if (hostIs(host, QLatin1String("api.fabric.microsoft.com")) ||
        hostEndsWith(host, QLatin1String(".fabric.microsoft.com")))
        return QStringLiteral("fabric");
    if (hostIs(host, QLatin1String("graph.microsoft.com")))
        return QStringLiteral("graph");
    if (hostEndsWith(host, QLatin1String(".servicebus.windows.net")))
        return QStringLiteral("servicebus");
    if (hostIs(host, QLatin1String("management.azure.com")))
        return QStringLiteral("arm");
    return {};
}

QString serviceOf(const RequestEvent &event)
{
    if (!event.service.isEmpty())
        return event.service;
    return inferServiceFromUrl(event.url);
}

// ---- PolicySet --------------------------------------------------------------------------------

QStringList PolicySet::builtinNames()
{
    QStringList names = builtinOrder();
    // Any further policy file shipped in the resources is built in too, after the known ones.
    QStringList extra = QDir(QStringLiteral(":/policies"))
                            .entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
    for (QString &file : extra) {
        file.chop(5);
        if (!names.contains(file))
            names.append(file);
    }
    return names;
}

std::optional<Policy> PolicySet::builtinPolicy(const QString &name, QString *error)
{
    const QString path = QStringLiteral(":/policies/") + name + QStringLiteral(".json");
    if (!QFile::exists(path)) {
        if (error)
            *error = QStringLiteral("no built-in policy named %1").arg(quoted(name));
        return std::nullopt;
    }
    return Policy::fromFile(path, error);
}

PolicySet PolicySet::builtin()
{
    PolicySet set;
    for (const QString &name : builtinNames()) {
        if (auto policy = builtinPolicy(name))
            set.m_policies.append(*policy);
    }
    return set;
}

bool PolicySet::load(const QString &nameOrFile, QString *error)
{
    std::optional<Policy> policy;
    if (builtinNames().contains(nameOrFile)) {
        policy = builtinPolicy(nameOrFile, error);
    } else if (QFileInfo(nameOrFile).isFile()) {
        policy = Policy::fromFile(nameOrFile, error);
    } else {
        if (error) {
            *error = QStringLiteral("%1: not a built-in policy (%2) and no such file")
                         .arg(nameOrFile, builtinNames().join(QStringLiteral(", ")));
        }
        return false;
    }
    if (!policy)
        return false;
    add(*policy);
    return true;
}

std::optional<PolicySet> PolicySet::fromSetting(const QString &setting, QString *error)
{
    const QString trimmed = setting.trimmed();
    if (trimmed.isEmpty() || trimmed == u"builtin")
        return builtin();
    PolicySet policies;
    if (trimmed.startsWith(u'{')) {
        const auto policy =
            Policy::fromJsonBytes(trimmed.toUtf8(), QStringLiteral("policy editor"), error);
        if (!policy)
            return std::nullopt;
        // The edited policy replaces the built-in of the same name; the others stay.
        policies = builtin();
        const int index = policies.indexOf(policy->name);
        if (index >= 0)
            policies.policies()[index] = *policy;
        else
            policies.policies().prepend(*policy);
        return policies;
    }
    if (!policies.load(trimmed, error))
        return std::nullopt;
    return policies;
}

QString PolicySet::describeSetting(const QString &setting)
{
    const QString trimmed = setting.trimmed();
    if (trimmed.isEmpty() || trimmed == u"builtin")
        return QStringLiteral("built-in");
    if (trimmed.startsWith(u'{')) {
        const auto policy =
            Policy::fromJsonBytes(trimmed.toUtf8(), QStringLiteral("policy editor"), nullptr);
        return QStringLiteral("edited %1 policy").arg(policy ? policy->name : QStringLiteral("a"));
    }
    return trimmed;
}

void PolicySet::add(const Policy &policy)
{
    const int existing = indexOf(policy.name);
    if (existing >= 0)
        m_policies[existing] = policy;
    else
        m_policies.append(policy);
}

void PolicySet::setBreaker(const BreakerModel &model)
{
    for (Policy &policy : m_policies)
        policy.breaker = model;
    m_defaultBreaker = model;
}

int PolicySet::indexOf(const QString &name) const
{
    for (int i = 0; i < m_policies.size(); ++i) {
        if (m_policies.at(i).name == name)
            return i;
    }
    return -1;
}

const Policy *PolicySet::policyFor(const RequestEvent &event) const
{
    const QString service = serviceOf(event);
    for (const Policy &policy : m_policies) {
        QString category = event.category;
        if (category.isEmpty()) {
            const QStringView path = urlPath(event.url);
            for (const CategoryRule &rule : policy.categories) {
                TextMatcher matcher;
                if (matcher.compile(rule.urlPattern) && matcher.matches(path)) {
                    category = rule.name;
                    break;
                }
            }
        }
        bool fits = true;
        QString scratch;
        for (const FieldCondition &condition : policy.match) {
            const auto field = eventFieldFromName(condition.field);
            TextMatcher matcher;
            if (!field || !matcher.compile(condition.pattern) ||
                !matcher.matches(eventFieldValue(event, *field, service, category, &scratch))) {
                fits = false;
                break;
            }
        }
        if (fits)
            return &policy;
    }
    return nullptr;
}

} // namespace ts
