#include "eventfields.h"

#include "core/textsearch.h"

namespace ts {

QStringView unknownValue()
{
    return u"unknown";
}

QStringView armSubscription(QStringView url)
{
    const QStringView path = urlPath(url);
    constexpr QStringView marker = u"/subscriptions/";
    // ARM writes the segment in lower case; the case-insensitive search (a slow library call)
    // runs only when the exact one finds nothing.
    qsizetype at = text::findSubstring(path.utf16(), path.size(), marker.utf16(), marker.size());
    if (at < 0)
        at = path.indexOf(marker, 0, Qt::CaseInsensitive);
    if (at < 0)
        return {};
    const qsizetype start = at + marker.size();
    qsizetype end = start;
    while (end < path.size() && path[end] != u'/')
        ++end;
    return path.mid(start, end - start);
}

QStringView serviceBusNamespace(const RequestEvent &event)
{
    if (!event.serviceBusNamespace.isEmpty())
        return event.serviceBusNamespace;
    const QStringView host = urlHost(event.url);
    if (host.endsWith(u".servicebus.windows.net", Qt::CaseInsensitive)) {
        const qsizetype dot = host.indexOf(u'.');
        return host.left(dot);
    }
    return {};
}

QStringView eventFieldValue(const RequestEvent &event, EventField field, QStringView service,
                            QStringView category, QString *numberScratch)
{
    auto orUnknown = [](QStringView value) { return value.isEmpty() ? unknownValue() : value; };
    switch (field) {
    case EventField::Service:
        return service;
    case EventField::Category:
        return category;
    case EventField::Method:
        return event.method;
    case EventField::Url:
        return event.url;
    case EventField::Path:
        return urlPath(event.url);
    case EventField::Host:
        return urlHost(event.url);
    case EventField::Identity:
        return orUnknown(event.identity);
    case EventField::App:
        return orUnknown(event.app);
    case EventField::Tenant:
        return orUnknown(event.tenant);
    case EventField::Namespace:
        return orUnknown(serviceBusNamespace(event));
    case EventField::Entity:
        return event.entity;
    case EventField::Subscription:
        return orUnknown(armSubscription(event.url));
    case EventField::Lane:
        return event.lane;
    case EventField::Status:
        if (!numberScratch)
            return {};
        *numberScratch = QString::number(event.status);
        return *numberScratch;
    case EventField::ErrorCode:
        return event.errorCode;
    case EventField::OperationId:
        return event.operationId;
    case EventField::BatchId:
        return event.batchId;
    }
    return {};
}

} // namespace ts
