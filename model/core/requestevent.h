#pragma once
// The one value type that flows through every stage: readers produce it, the engine, the
// workspace and the views consume it. Plain data, cheap to move, no Qt object.

#include <QByteArray>
#include <QList>
#include <QMetaType>
#include <QPair>
#include <QString>
#include <QStringView>

#include <cstddef>

#include <optional>

namespace ts {

// Response headers of interest. Names are stored lower-case so lookups are exact and cheap;
// the list is short (a handful of throttle headers), so a linear scan beats a hash.
class HttpHeaders
{
public:
    void set(const QString &name, const QString &value);
    // set() for a name the caller has already lower-cased (readers that intern names lower-case
    // once, instead of lower-casing every header of every line).
    void setLowerCase(const QString &lowerName, const QString &value);
    void reserve(qsizetype count) { m_items.reserve(count); }
    // lowerName must already be lower-case.
    [[nodiscard]] QString value(QStringView lowerName) const;
    [[nodiscard]] bool contains(QStringView lowerName) const;
    [[nodiscard]] const QList<QPair<QString, QString>> &items() const { return m_items; }
    [[nodiscard]] bool isEmpty() const { return m_items.isEmpty(); }
    void remove(QStringView lowerName);
    bool operator==(const HttpHeaders &other) const = default;

private:
    QList<QPair<QString, QString>> m_items;
};

enum class EventType : quint8 { Request, Breaker, Annotation };

struct RequestEvent
{
    // Laid out by how often the engine reads a field: the scalars and the strings every policy
    // match or key reads come first, so an event costs the engine four or five cache lines of
    // this struct instead of nine (it is ~600 bytes, and a stream of them goes through the cache
    // once). prefetchForEngine() below names the same lines.
    EventType type = EventType::Request;
    bool batchEnvelope = false;
    // Set by ts::redact::redactEvent() once the event's secrets are masked. Readers mask each
    // event as they make it (on their own threads); every sink that can write or show an event
    // (the workspace writer, --out, the analysis behind reports and views) calls
    // redact::ensureMasked(), which masks whatever arrives unmasked and costs one byte load for
    // the rest, so no path can skip masking and no event pays for it twice.
    bool secretsMasked = false;
    // The client's own circuit breaker refused the request: it never reached the service
    // (canonical `"refused": "breaker"`; cockatiel's BrokenCircuitError, opossum's reject,
    // Polly's BrokenCircuitException). No status; charged to no limit.
    bool refusedByClientBreaker = false;
    int status = 0;         // 0 = no response (failed request, not a throttle)
    int batchIndex = -1;    // position inside its batch, -1 = none
    int attempt = -1;       // 0 first try, 1.. retries, -1 unknown
    qint64 tsMs = 0;        // when the request was sent, ms since the Unix epoch (UTC)
    double durationMs = -1; // < 0 = unknown
    double credits = -1;    // explicit cost, < 0 = none
    // How many identical requests this event stands for (>= 1): a push-down aggregate (a
    // store's count per second, poll/pushdown.h) or a canonical record with "weight". Every
    // count of the report counts it that many times; the engine charges it in one step where
    // that is exact and as that many single requests where order matters (throttleengine.cpp).
    // credits stays the cost of each one of them.
    qint64 weight = 1;

    QString identity; // empty = unknown
    QString app;
    QString service;  // empty = infer from URL host
    QString category; // empty = classify by policy URL rules
    QString method;
    QString url;
    QString serviceBusNamespace;
    QString entity;
    HttpHeaders headers;
    QString lane; // "foreground" / "background" / empty
    QString errorCode;
    QString retryAfter; // exactly as received
    QString tenant;
    QString body;
    QString requestId;
    QString batchId; // set on each sub-response of a $batch
    QString operationId;

    // type == Breaker
    QString breakerScope;
    QString breakerState;
    // type == Annotation
    QString text;

    // Unknown keys of the source record, kept verbatim as a compact JSON object ("{...}"),
    // empty when there were none.
    QByteArray extraJson;

    // Provenance: where this event came from.
    QString source;     // file path, "-" for stdin, "http", "demo", ...
    qint64 line = 0;    // 1-based line (or record index) in the source, 0 = n/a
    qint64 offset = -1; // byte offset of the record in the source, -1 = n/a

    [[nodiscard]] bool isRequest() const { return type == EventType::Request && !batchEnvelope; }
    // The requests the report counts this event as (its `events`, Analysis::count): its weight
    // (at least 1) for a request; none for an annotation or a $batch envelope (its
    // sub-responses are the requests). The Ingest page counts a source's events the same way.
    [[nodiscard]] qint64 countedRequests() const
    {
        return isRequest() ? (weight > 1 ? weight : 1) : 0;
    }
};

// countedRequests() summed over a batch of events.
template <typename Events> [[nodiscard]] qint64 countedRequests(const Events &events)
{
    qint64 requests = 0;
    for (const RequestEvent &event : events)
        requests += event.countedRequests();
    return requests;
}

// Ask the cache for what the engine is about to read of an event, a few events ahead while
// processing a batch, so the engine's loads find it in cache instead of waiting on memory.
// Two steps, because the text lives behind pointers in the struct: first the struct's hot
// lines (prefetchEventFields, four events ahead), then, once those have arrived, the text of
// the strings that route and key the event (prefetchEventText, two events ahead).
inline void prefetchEventFields(const RequestEvent &event)
{
    const char *base = reinterpret_cast<const char *>(&event);
    for (size_t line = 0; line < offsetof(RequestEvent, lane); line += 64)
        __builtin_prefetch(base + line);
}

// All of the struct, for stages that read its later fields too (breakers, detectors).
inline void prefetchEventStruct(const RequestEvent &event)
{
    const char *base = reinterpret_cast<const char *>(&event);
    for (size_t line = 0; line < sizeof(RequestEvent); line += 64)
        __builtin_prefetch(base + line);
}

inline void prefetchEventText(const RequestEvent &event)
{
    __builtin_prefetch(event.identity.constData());
    __builtin_prefetch(event.service.constData());
    __builtin_prefetch(event.method.constData());
    __builtin_prefetch(event.app.constData());
    __builtin_prefetch(event.serviceBusNamespace.constData());
    __builtin_prefetch(event.operationId.constData());
    // A URL is a few lines of text, and the path the policies match is past the host.
    const char *url = reinterpret_cast<const char *>(event.url.constData());
    const qsizetype urlBytes = event.url.size() * qsizetype(sizeof(char16_t));
    for (qsizetype offset = 0; offset < urlBytes && offset < 256; offset += 64)
        __builtin_prefetch(url + offset);
}

// A record that could not be read. Reported as "FILE:LINE: reason".
struct MalformedRecord
{
    // Not an aggregate on purpose: a record is made by redact::malformedRecord()
    // (ingest/redaction.h), which masks the reason's secrets. The reason may quote the record it
    // rejects, and every reader makes its records there, before any sink (stderr, report,
    // workspace, HTTP answers) can see them; core itself knows nothing of secrets. Readers quote
    // values through redact::quoteMasked(), which also hides bare credentials that no pattern
    // can recognise. Fields are set one by one only where the reason is masked already (a
    // workspace reading back what it stored).
    MalformedRecord() = default;

    QString source;
    qint64 line = 0;
    QString reason;
    [[nodiscard]] QString toString() const;
};

QString eventTypeName(EventType type);
std::optional<EventType> eventTypeFromName(QStringView name);

} // namespace ts

// Batches of events cross threads through queued signals (live sources -> the analysis worker).
Q_DECLARE_METATYPE(QList<ts::RequestEvent>)
