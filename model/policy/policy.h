#pragma once
// Throttle policies as plain data (docs/policy.md): what a service limits, per which key,
// with which algorithm. Built-in policies are JSON resources (:/policies/*.json) in the same
// format an operator loads with --policy FILE, and every number stays editable: the GUI policy
// editor changes a Policy value and serialises it back with toJson().

#include "core/requestevent.h"
#include "policy/breakermodel.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>
#include <QStringView>

#include <optional>

namespace ts {

// The event fields a policy can match on or key buckets by. Derived fields: `path` and `host`
// (from the URL), `subscription` (ARM: the id after /subscriptions/ in the URL), `namespace`
// (the event's field, else the first label of a *.servicebus.windows.net host).
enum class EventField : quint8 {
    Service,
    Category,
    Method,
    Url,
    Path,
    Host,
    Identity,
    App,
    Tenant,
    Namespace,
    Entity,
    Subscription,
    Lane,
    Status,
    ErrorCode,
    OperationId,
    BatchId,
};
std::optional<EventField> eventFieldFromName(QStringView name);
QString eventFieldName(EventField field);
QStringList eventFieldNames();

enum class Algorithm : quint8 {
    FixedWindow,
    SlidingWindow,
    TokenBucket,
    LeakyBucket,
    Credits,
    Concurrency,
    // No limit is modelled (e.g. Service Bus Premium: throttling follows CPU and memory): the
    // scope only counts requests and reports what the service said.
    Observed,
};
QString algorithmName(Algorithm algorithm);
std::optional<Algorithm> algorithmFromName(QStringView name);

enum class WindowAlign : quint8 { Clock, FirstRequest };

// "field": "regular expression" (search semantics; anchor with ^ and $).
struct FieldCondition
{
    QString field;
    QString pattern;
    bool operator==(const FieldCondition &) const = default;
};

struct CostRule
{
    QList<FieldCondition> match;
    double credits = 1;
    bool operator==(const CostRule &) const = default;
};

struct CategoryRule
{
    QString name;
    QString urlPattern; // regular expression on the URL path
    bool operator==(const CategoryRule &) const = default;
};

struct PolicyLimit
{
    QString name;
    QString key = QStringLiteral("identity"); // "+"-joined event fields
    QList<FieldCondition> match;
    Algorithm algorithm = Algorithm::FixedWindow;
    double capacity = 0;      // requests / tokens / credits / requests in flight
    double windowSeconds = 0; // fixed-window, sliding-window, credits
    WindowAlign align = WindowAlign::Clock;
    double refillPerSecond = 0; // token-bucket
    // leaky-bucket (nginx limit_req): rate in requests per second and burst in requests. `rate`
    // keeps nginx's own spelling ("20r/s", "30r/m") when given, because nginx rounds r/m rates
    // with integer arithmetic and exact replay needs the same rounding.
    double ratePerSecond = 0;
    QString rate;
    double burst = 0;
    bool nodelay = true;
    QList<CostRule> cost; // first match wins; the event's explicit `credits` wins over all
    double defaultCost = 1;
    // Whether a throttled request consumes quota; unset = the policy's value (leaky-bucket: false,
    // as nginx never updates a zone for a rejected request).
    std::optional<bool> chargeThrottled;
    // The fraction of the capacity already used when a bucket is first seen (0 = idle, the
    // default; 1 = drained: a token bucket that starts with no tokens, a log that starts while
    // the caller is already throttled). The log cannot show state from before its first line.
    double initialFill = 0;
    QJsonObject extra; // keys this version does not know, kept for the round trip

    // Capacity in the unit of usage, for fill = usage / capacity (leaky-bucket: the burst).
    [[nodiscard]] double effectiveCapacity() const;
    // nginx's rate in milli-requests per second (ctx->rate): rate * 1000 / scale, integer.
    [[nodiscard]] qint64 nginxMilliRate() const;
    [[nodiscard]] QStringList keyFields() const;
    bool operator==(const PolicyLimit &) const = default;
};

struct Policy
{
    QString name;
    QString description;
    QList<FieldCondition> match;
    QList<CategoryRule> categories;
    QList<PolicyLimit> limits;
    bool chargeThrottled = true; // Graph documents that throttled requests still count
    // The reference breaker replayed for this policy's events (`breaker` object); unset = the
    // analysis's default (Polly v8, breakermodel.h).
    std::optional<BreakerModel> breaker;
    QJsonObject extra;
    QString
        origin; // where it was loaded from (":/policies/fabric.json", a file path); not serialised

    [[nodiscard]] bool chargesThrottled(const PolicyLimit &limit) const;

    // Parses and validates. On failure returns nullopt and *error says what is wrong
    // ("limit 'platform': capacity must be a positive number"), without the origin.
    static std::optional<Policy> fromJson(const QJsonObject &object, QString *error);
    // Parses bytes; errors are prefixed with origin ("policies/bad.json: ...").
    static std::optional<Policy> fromJsonBytes(const QByteArray &bytes, const QString &origin,
                                               QString *error);
    static std::optional<Policy> fromFile(const QString &path, QString *error);
    [[nodiscard]] QJsonObject toJson() const;
    [[nodiscard]] QByteArray toJsonBytes() const; // indented, for files and the editor
    // Checks values and compiles every regular expression; *error as for fromJson.
    bool validate(QString *error) const;

    bool operator==(const Policy &other) const;
};

// The service an event belongs to: its `service` field, else inferred from the URL host
// (api.fabric.microsoft.com -> fabric, graph.microsoft.com -> graph, *.servicebus.windows.net ->
// servicebus, management.azure.com -> arm), else empty. Returns shared static strings for the
// inferred names, so no allocation.
QString serviceOf(const RequestEvent &event);
QString inferServiceFromUrl(QStringView url);
// URL pieces without allocation: host ("api.fabric.microsoft.com") and path ("/v1/workspaces",
// without query or fragment). A bare path ("/v1/x") has an empty host.
QStringView urlHost(QStringView url);
QStringView urlPath(QStringView url);

// An ordered list of policies; the first whose `match` fits an event applies to it.
class PolicySet
{
public:
    // Every built-in policy, in the order that picks defaults: fabric, graph-onenote-delegated
    // (graph events with a user identity), graph-onenote-app (graph events without one),
    // servicebus-standard, servicebus-premium (only when selected explicitly: standard matches
    // first), arm, nginx.
    static PolicySet builtin();
    static QStringList builtinNames();
    static std::optional<Policy> builtinPolicy(const QString &name, QString *error = nullptr);

    // Appends a built-in policy by name or a policy file by path (--policy NAME|FILE). A loaded
    // policy replaces one of the same name already in the set.
    bool load(const QString &nameOrFile, QString *error);
    void add(const Policy &policy);

    // The policies a saved setting names: what the dashboard keeps in a workspace ("policy"
    // setting, the window's Policy menu and editor) and replays with, so that `report
    // --workspace` replays with the same. Policy JSON (the editor's edit: it replaces the
    // built-in policy of its name, the others stay), "builtin" or empty (the built-in set), or a
    // name or file as --policy takes. nullopt and *error when it cannot be read.
    static std::optional<PolicySet> fromSetting(const QString &setting, QString *error);
    // The setting in words for a report: "built-in", "edited fabric policy", "fabric",
    // "/path/to/policy.json".
    static QString describeSetting(const QString &setting);
    void clear() { m_policies.clear(); }
    // Gives every policy this reference breaker, and makes it the default for events no policy
    // matches (the Breakers page's choice applies to all).
    void setBreaker(const BreakerModel &model);
    // The breaker setBreaker() gave (unset: Polly v8 for what names none).
    [[nodiscard]] const std::optional<BreakerModel> &defaultBreaker() const
    {
        return m_defaultBreaker;
    }

    [[nodiscard]] const QList<Policy> &policies() const { return m_policies; }
    [[nodiscard]] QList<Policy> &policies() { return m_policies; }
    [[nodiscard]] bool isEmpty() const { return m_policies.isEmpty(); }
    [[nodiscard]] qsizetype size() const { return m_policies.size(); }
    [[nodiscard]] int indexOf(const QString &name) const;

    // The policy of an event (nullptr = none). Convenience for tools and tests: it compiles the
    // conditions on every call; the engine precompiles them once instead.
    [[nodiscard]] const Policy *policyFor(const RequestEvent &event) const;

private:
    QList<Policy> m_policies;
    std::optional<BreakerModel> m_defaultBreaker;
};

} // namespace ts
