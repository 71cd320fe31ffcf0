#include "requestevent.h"

namespace ts {

void HttpHeaders::set(const QString &name, const QString &value)
{
    setLowerCase(name.toLower(), value);
}

void HttpHeaders::setLowerCase(const QString &lowerName, const QString &value)
{
    for (auto &item : m_items) {
        if (item.first == lowerName) {
            item.second = value;
            return;
        }
    }
    m_items.append({lowerName, value});
}

QString HttpHeaders::value(QStringView lowerName) const
{
    for (const auto &item : m_items) {
        if (item.first == lowerName)
            return item.second;
    }
    return {};
}

bool HttpHeaders::contains(QStringView lowerName) const
{
    for (const auto &item : m_items) {
        if (item.first == lowerName)
            return true;
    }
    return false;
}

void HttpHeaders::remove(QStringView lowerName)
{
    m_items.removeIf([lowerName](const auto &item) { return item.first == lowerName; });
}

QString MalformedRecord::toString() const
{
    return source + u':' + QString::number(line) + u": " + reason;
}

QString eventTypeName(EventType type)
{
    switch (type) {
    case EventType::Request:
        return QStringLiteral("request");
    case EventType::Breaker:
        return QStringLiteral("breaker");
    case EventType::Annotation:
        return QStringLiteral("annotation");
    }
    return QStringLiteral("request");
}

std::optional<EventType> eventTypeFromName(QStringView name)
{
    if (name == u"request")
        return EventType::Request;
    if (name == u"breaker")
        return EventType::Breaker;
    if (name == u"annotation")
        return EventType::Annotation;
    return std::nullopt;
}

} // namespace ts
