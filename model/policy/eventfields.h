#pragma once
// Reading a policy field (EventField) out of an event without allocating: every value is a view
// into the event's own strings (or a static string), so the engine's hot path can match and key
// millions of events without building a QString.

#include "core/requestevent.h"
#include "policy/policy.h"

#include <QStringView>

namespace ts {

// "unknown" for an event without identity (request-log.md: absent identity = "unknown").
QStringView unknownValue();
// The subscription id in an ARM URL (".../subscriptions/{id}/..."), empty when absent.
QStringView armSubscription(QStringView url);
// The namespace of a Service Bus event: its field, else the first label of a
// *.servicebus.windows.net host.
QStringView serviceBusNamespace(const RequestEvent &event);

// The value of `field` for `event`. `service` and `category` are the resolved ones (the event's
// own, or inferred / classified), passed in because they depend on the policy. Fields without a
// value give an empty view, except identity, app, tenant, namespace and subscription, which give
// "unknown" so that they still name a bucket.
QStringView eventFieldValue(const RequestEvent &event, EventField field, QStringView service,
                            QStringView category, QString *numberScratch);

} // namespace ts
