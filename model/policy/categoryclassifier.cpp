#include "categoryclassifier.h"

#include "policy/eventfields.h"

namespace ts {

CategoryClassifier::CategoryClassifier(const PolicySet &policies)
{
    for (const Policy &policy : policies.policies()) {
        if (policy.categories.isEmpty())
            continue;
        // Only policies that name one service exactly ("^fabric$"): a rule set must not be
        // applied to services its policy was not written for.
        for (const FieldCondition &condition : policy.match) {
            if (condition.field != u"service")
                continue;
            TextMatcher service;
            if (!service.compile(condition.pattern) || !service.exactText())
                continue;
            const QString name = *service.exactText();
            bool known = false;
            for (const ServiceRules &existing : m_services)
                known = known || existing.service == name;
            if (known)
                break; // the first policy of a service decides, as in the engine
            ServiceRules rules{name, {}};
            for (const CategoryRule &rule : policy.categories) {
                TextMatcher matcher;
                if (matcher.compile(rule.urlPattern))
                    rules.rules.emplace_back(rule.name, std::move(matcher));
            }
            m_services.push_back(std::move(rules));
            break;
        }
    }
}

QString CategoryClassifier::categoryOf(const RequestEvent &event) const
{
    if (!event.category.isEmpty())
        return event.category;
    if (m_services.empty())
        return {};
    const QString service = serviceOf(event);
    for (const ServiceRules &rules : m_services) {
        if (rules.service != service)
            continue;
        const QStringView path = urlPath(event.url);
        for (const auto &[name, matcher] : rules.rules) {
            if (matcher.matches(path))
                return name;
        }
        return {};
    }
    return {};
}

} // namespace ts
