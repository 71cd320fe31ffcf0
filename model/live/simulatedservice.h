#pragma once
// The service side of the demo simulator: answers simulated requests the way the real service
// would, driven by the very policies the engine replays (PolicySet + the limiter algorithms of
// engine/limiterstate.h), so that what the dashboard reconstructs from the simulated log is what
// the simulated service actually enforced.

#include "engine/limiterstate.h"
#include "policy/policy.h"
#include "policy/textmatcher.h"

#include <QHash>
#include <QString>

#include <vector>

namespace ts::live {

struct ServiceVerdict
{
    bool accepted = true;
    bool matchedPolicy = false;
    // Throttled: the earliest instant at which every exhausted limit has room again (the safe
    // wait is the maximum over the exhausted limits, never the minimum).
    qint64 retryAtMs = 0;
    QString exhaustedLimit; // the limit that decided (the one that frees last)
    // Accepted: the highest fill (usage / capacity) among the limits that charged the request,
    // what Graph reports as x-ms-throttle-limit-percentage.
    double maxFill = 0;
};

class SimulatedService
{
public:
    explicit SimulatedService(PolicySet policies = PolicySet::builtin());

    // Decides a request sent at event.tsMs that would take durationMs, and charges it.
    // Requests must come in time order (the simulator sends them so).
    ServiceVerdict submit(const RequestEvent &event, qint64 durationMs);

    // The category the policy gives this event (its own, else the first matching URL rule).
    [[nodiscard]] QString categoryOf(const RequestEvent &event) const;

private:
    struct Condition
    {
        EventField field;
        TextMatcher matcher;
    };
    struct Limit
    {
        PolicyLimit spec;
        limiter::Params params;
        std::vector<Condition> match;
        struct Cost
        {
            std::vector<Condition> match;
            double credits;
        };
        std::vector<Cost> cost;
        QList<EventField> keyFields;
        bool chargeThrottled = true;
        QHash<QString, limiter::State> buckets;
    };
    struct Category
    {
        QString name;
        TextMatcher urlPattern;
    };
    struct Compiled
    {
        Policy policy;
        std::vector<Condition> match;
        std::vector<Category> categories;
        std::vector<Limit> limits;
    };

    static std::vector<Condition> compileConditions(const QList<FieldCondition> &conditions);
    bool matches(const std::vector<Condition> &conditions, const RequestEvent &event,
                 QStringView service, QStringView category) const;
    const Compiled *policyFor(const RequestEvent &event, QStringView service) const;
    QString classify(const Compiled &policy, const RequestEvent &event) const;

    std::vector<Compiled> m_policies;
    mutable QString m_scratch;
};

} // namespace ts::live
