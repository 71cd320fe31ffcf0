#include "ndjsonformat.h"

#include "core/timeparse.h"

#include <cmath>

namespace ts::live {

namespace {

void appendEscaped(QByteArray &out, const QString &text)
{
    const QByteArray utf8 = text.toUtf8();
    out += '"';
    for (const char c : utf8) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                static const char hex[] = "0123456789abcdef";
                out += "\\u00";
                out += hex[(c >> 4) & 0xf];
                out += hex[c & 0xf];
            } else {
                out += c;
            }
        }
    }
    out += '"';
}

class ObjectWriter
{
public:
    explicit ObjectWriter(QByteArray &out) : m_out(out) { m_out += '{'; }
    void key(const char *name)
    {
        if (!m_first)
            m_out += ',';
        m_first = false;
        m_out += '"';
        m_out += name;
        m_out += "\":";
    }
    void string(const char *name, const QString &value)
    {
        if (value.isEmpty())
            return;
        key(name);
        appendEscaped(m_out, value);
    }
    void integer(const char *name, qint64 value)
    {
        key(name);
        m_out += QByteArray::number(value);
    }
    void number(const char *name, double value)
    {
        key(name);
        if (value == std::floor(value) && std::abs(value) < 1e15)
            m_out += QByteArray::number(qint64(value));
        else
            m_out += QByteArray::number(value, 'g', 15);
    }
    void raw(const char *name, const QByteArray &json)
    {
        key(name);
        m_out += json;
    }
    void finish() { m_out += '}'; }

private:
    QByteArray &m_out;
    bool m_first = true;
};

} // namespace

void appendNdjsonLine(const RequestEvent &event, QByteArray &out)
{
    ObjectWriter w(out);
    w.string("ts", formatIsoMs(event.tsMs));
    if (event.type != EventType::Request)
        w.string("type", eventTypeName(event.type));
    if (event.type == EventType::Breaker) {
        w.string("scope", event.breakerScope);
        w.string("state", event.breakerState);
    } else if (event.type == EventType::Annotation) {
        w.string("text", event.text);
    }
    w.string("identity", event.identity);
    w.string("app", event.app);
    w.string("tenant", event.tenant);
    w.string("service", event.service);
    w.string("category", event.category);
    w.string("method", event.method);
    w.string("url", event.url);
    if (event.status != 0)
        w.integer("status", event.status);
    if (event.refusedByClientBreaker)
        w.raw("refused", "\"breaker\"");
    w.string("errorCode", event.errorCode);
    w.string("retryAfter", event.retryAfter);
    if (!event.headers.isEmpty()) {
        QByteArray headers;
        ObjectWriter h(headers);
        for (const auto &item : event.headers.items()) {
            h.key(item.first.toUtf8().constData());
            appendEscaped(headers, item.second);
        }
        h.finish();
        w.raw("headers", headers);
    }
    w.string("body", event.body);
    if (event.durationMs >= 0)
        w.number("durationMs", event.durationMs);
    w.string("requestId", event.requestId);
    w.string("batchId", event.batchId);
    if (event.batchIndex >= 0)
        w.integer("batchIndex", event.batchIndex);
    if (event.batchEnvelope)
        w.raw("batch", "true");
    if (event.attempt >= 0)
        w.integer("attempt", event.attempt);
    w.string("operationId", event.operationId);
    w.string("lane", event.lane);
    if (event.credits >= 0)
        w.number("credits", event.credits);
    if (event.weight > 1)
        w.integer("weight", event.weight);
    w.string("namespace", event.serviceBusNamespace);
    w.string("entity", event.entity);
    // Unknown keys of the source travel along verbatim ("{...}" without the braces merged in).
    if (event.extraJson.size() > 2 && event.extraJson.startsWith('{')) {
        out += ',';
        out += QByteArrayView(event.extraJson).sliced(1, event.extraJson.size() - 2);
    }
    w.finish();
    out += '\n';
}

QByteArray toNdjsonLine(const RequestEvent &event)
{
    QByteArray line;
    appendNdjsonLine(event, line);
    line.chop(1);
    return line;
}

} // namespace ts::live
