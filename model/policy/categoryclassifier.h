#pragma once
// The quota group (category) of an event, as its service's policy defines it: Fabric throttles
// per API group (platform, jobScheduler, longRunningOperations), and a block on one group says
// nothing about the others. Used outside the engine by detectors that must not mix groups; the
// engine classifies with its own compiled policies on its own thread.

#include "core/requestevent.h"
#include "policy/policy.h"
#include "policy/textmatcher.h"

#include <QString>

#include <utility>
#include <vector>

namespace ts {

class CategoryClassifier
{
public:
    CategoryClassifier() = default;
    explicit CategoryClassifier(const PolicySet &policies);

    // The event's own category when it has one; else the first category rule, of the first
    // policy naming the event's service (given or inferred from the URL host) that has rules,
    // matching the URL path; else empty.
    [[nodiscard]] QString categoryOf(const RequestEvent &event) const;

private:
    struct ServiceRules
    {
        QString service;
        std::vector<std::pair<QString, TextMatcher>> rules;
    };
    std::vector<ServiceRules> m_services;
};

} // namespace ts
