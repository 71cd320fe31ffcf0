#include "simulatedservice.h"

#include "policy/eventfields.h"

namespace ts::live {

SimulatedService::SimulatedService(PolicySet policies)
{
    for (const Policy &policy : policies.policies()) {
        Compiled compiled;
        compiled.policy = policy;
        compiled.match = compileConditions(policy.match);
        for (const CategoryRule &rule : policy.categories) {
            Category category;
            category.name = rule.name;
            category.urlPattern.compile(rule.urlPattern);
            compiled.categories.push_back(std::move(category));
        }
        for (const PolicyLimit &spec : policy.limits) {
            Limit limit;
            limit.spec = spec;
            limit.params = limiter::Params::fromLimit(spec);
            limit.match = compileConditions(spec.match);
            for (const CostRule &rule : spec.cost)
                limit.cost.push_back({compileConditions(rule.match), rule.credits});
            for (const QString &name : spec.keyFields()) {
                if (const auto field = eventFieldFromName(name))
                    limit.keyFields.append(*field);
            }
            limit.chargeThrottled = policy.chargesThrottled(spec);
            compiled.limits.push_back(std::move(limit));
        }
        m_policies.push_back(std::move(compiled));
    }
}

std::vector<SimulatedService::Condition>
SimulatedService::compileConditions(const QList<FieldCondition> &conditions)
{
    std::vector<Condition> compiled;
    for (const FieldCondition &condition : conditions) {
        const auto field = eventFieldFromName(condition.field);
        if (!field)
            continue; // Policy::validate() rejects unknown fields before a policy gets here
        Condition c{*field, {}};
        c.matcher.compile(condition.pattern);
        compiled.push_back(std::move(c));
    }
    return compiled;
}

bool SimulatedService::matches(const std::vector<Condition> &conditions, const RequestEvent &event,
                               QStringView service, QStringView category) const
{
    for (const Condition &condition : conditions) {
        if (!condition.matcher.matches(
                eventFieldValue(event, condition.field, service, category, &m_scratch)))
            return false;
    }
    return true;
}

const SimulatedService::Compiled *SimulatedService::policyFor(const RequestEvent &event,
                                                              QStringView service) const
{
    for (const Compiled &policy : m_policies) {
        if (matches(policy.match, event, service, event.category))
            return &policy;
    }
    return nullptr;
}

QString SimulatedService::classify(const Compiled &policy, const RequestEvent &event) const
{
    if (!event.category.isEmpty())
        return event.category;
    const QStringView path = urlPath(event.url);
    for (const Category &category : policy.categories) {
        if (category.urlPattern.matches(path))
            return category.name;
    }
    return {};
}

QString SimulatedService::categoryOf(const RequestEvent &event) const
{
    const QString service = serviceOf(event);
    const Compiled *policy = policyFor(event, service);
    return policy ? classify(*policy, event) : event.category;
}

ServiceVerdict SimulatedService::submit(const RequestEvent &event, qint64 durationMs)
{
    ServiceVerdict verdict;
    const QString service = serviceOf(event);
    const Compiled *constPolicy = policyFor(event, service);
    if (!constPolicy)
        return verdict;
    verdict.matchedPolicy = true;
    Compiled &policy = m_policies[size_t(constPolicy - m_policies.data())];
    const QString category = classify(policy, event);
    const qint64 t = event.tsMs;

    struct Charge
    {
        Limit *limit;
        limiter::State *state;
        double cost;
        bool room;
    };
    std::vector<Charge> charges;
    for (Limit &limit : policy.limits) {
        if (!matches(limit.match, event, service, category))
            continue;
        QString key;
        for (qsizetype i = 0; i < limit.keyFields.size(); ++i) {
            if (i > 0)
                key += u'|';
            key += eventFieldValue(event, limit.keyFields.at(i), service, category, &m_scratch);
        }
        double cost = limit.spec.defaultCost;
        if (limit.params.algorithm == Algorithm::Credits && event.credits >= 0) {
            cost = event.credits;
        } else {
            for (const Limit::Cost &rule : limit.cost) {
                if (matches(rule.match, event, service, category)) {
                    cost = rule.credits;
                    break;
                }
            }
        }
        if (limit.params.algorithm == Algorithm::Concurrency ||
            limit.params.algorithm == Algorithm::LeakyBucket)
            cost = 1;
        limiter::State &state = limit.buckets[key];
        state.advance(limit.params, t);
        const bool room = state.hasRoom(limit.params, t, cost);
        verdict.accepted = verdict.accepted && room;
        charges.push_back({&limit, &state, cost, room});
    }
    for (const Charge &charge : charges) {
        if (verdict.accepted || charge.limit->chargeThrottled)
            charge.state->charge(charge.limit->params, t, charge.cost, verdict.accepted,
                                 t + durationMs);
        const double capacity = charge.limit->params.capacity;
        if (verdict.accepted && capacity > 0 &&
            charge.limit->params.algorithm != Algorithm::Concurrency) {
            verdict.maxFill =
                qMax(verdict.maxFill, charge.state->usageAt(charge.limit->params, t) / capacity);
        }
        if (!verdict.accepted && !charge.room) {
            const qint64 roomAt = charge.state->roomAt(charge.limit->params, t);
            if (roomAt >= verdict.retryAtMs) {
                verdict.retryAtMs = roomAt;
                verdict.exhaustedLimit = charge.limit->spec.name;
            }
        }
    }
    if (!verdict.accepted) {
        // A limit with room now may still be the one that frees last after this charge.
        for (const Charge &charge : charges) {
            const qint64 roomAt = charge.state->roomAt(charge.limit->params, t);
            verdict.retryAtMs = qMax(verdict.retryAtMs, roomAt);
        }
        verdict.retryAtMs = qMax(verdict.retryAtMs, t + 1);
    }
    return verdict;
}

} // namespace ts::live
