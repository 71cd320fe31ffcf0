#include "graphbatch.h"

#include "core/timeparse.h"
#include "ingest/readerutil.h"

#include <QHash>

#include <simdjson.h>

namespace ts::ingest {

namespace {

struct SubRequest
{
    QString method;
    QString url;
    int index = -1;
    int attempt = -1;
};

std::string_view stringOf(simdjson::dom::element element)
{
    std::string_view text;
    if (element.get(text) == simdjson::SUCCESS)
        return text;
    return {};
}

QString stringField(simdjson::dom::element object, std::string_view key)
{
    std::string_view text;
    if (object[key].get_string().get(text) == simdjson::SUCCESS)
        return toQString(text);
    return {};
}

// Batch ids are strings in the documentation, but clients send numbers too.
QString idOf(simdjson::dom::element object)
{
    simdjson::dom::element id;
    if (object["id"].get(id) != simdjson::SUCCESS)
        return {};
    if (id.is_string())
        return toQString(stringOf(id));
    if (id.is_int64())
        return QString::number(id.get_int64().value());
    return {};
}

// "https://graph.microsoft.com/v1.0/$batch?x" -> "https://graph.microsoft.com/v1.0"
QString batchBaseUrl(const QString &envelopeUrl)
{
    QString base = envelopeUrl;
    const qsizetype query = base.indexOf(u'?');
    if (query >= 0)
        base.truncate(query);
    if (base.endsWith(u"/$batch"))
        base.chop(7);
    return base;
}

QString absoluteSubUrl(const QString &base, const QString &subUrl)
{
    if (subUrl.startsWith(u"http://") || subUrl.startsWith(u"https://") || base.isEmpty())
        return subUrl;
    if (subUrl.startsWith(u'/'))
        return base + subUrl;
    return base + u'/' + subUrl;
}

} // namespace

bool isGraphBatchRequest(QStringView method, QStringView url)
{
    if (method.compare(u"POST", Qt::CaseInsensitive) != 0)
        return false;
    const qsizetype query = url.indexOf(u'?');
    const QStringView path = query >= 0 ? url.left(query) : url;
    return path.endsWith(u"/$batch");
}

QString graphBatchId(const RequestEvent &envelope)
{
    if (!envelope.requestId.isEmpty())
        return envelope.requestId;
    return envelope.url + u'@' + formatIsoMs(envelope.tsMs);
}

bool explodeGraphBatch(const RequestEvent &envelope, std::string_view requestJson,
                       std::string_view responseJson, QList<RequestEvent> &out)
{
    simdjson::dom::parser parser;
    const simdjson::padded_string responseText(responseJson);
    simdjson::dom::element response;
    if (parser.parse(responseText).get(response) != simdjson::SUCCESS)
        return false;
    simdjson::dom::array responses;
    if (response["responses"].get_array().get(responses) != simdjson::SUCCESS)
        return false;

    // Sub-requests by id, from the request body when the capture kept it.
    QHash<QString, SubRequest> subRequests;
    if (!requestJson.empty()) {
        simdjson::dom::parser requestParser;
        const simdjson::padded_string requestText(requestJson);
        simdjson::dom::element request;
        simdjson::dom::array requests;
        if (requestParser.parse(requestText).get(request) == simdjson::SUCCESS &&
            request["requests"].get_array().get(requests) == simdjson::SUCCESS) {
            int index = 0;
            for (simdjson::dom::element sub : requests) {
                SubRequest info;
                info.method = stringField(sub, "method");
                info.url = stringField(sub, "url");
                info.index = index++;
                simdjson::dom::object headers;
                if (sub["headers"].get_object().get(headers) == simdjson::SUCCESS) {
                    for (auto field : headers) {
                        if (QString::fromUtf8(field.key.data(),
                                              static_cast<qsizetype>(field.key.size()))
                                .compare(u"retry-attempt", Qt::CaseInsensitive) == 0) {
                            // Advisory on a sub-request: a value out of range is
                            // dropped (attempt unknown), not converted.
                            if (auto n = parseNumber(stringOf(field.value)))
                                info.attempt =
                                    limits::toBoundedInt(*n, 0, limits::kMaxAttempt).value_or(-1);
                        }
                    }
                }
                subRequests.insert(idOf(sub), info);
            }
        }
    }

    const QString batchId = graphBatchId(envelope);
    const QString base = batchBaseUrl(envelope.url);
    int responseIndex = 0;
    for (simdjson::dom::element sub : responses) {
        RequestEvent event;
        event.tsMs = envelope.tsMs;
        event.identity = envelope.identity;
        event.app = envelope.app;
        event.tenant = envelope.tenant;
        event.service = envelope.service;
        event.durationMs = envelope.durationMs;
        event.lane = envelope.lane;
        event.operationId = envelope.operationId;
        event.source = envelope.source;
        event.line = envelope.line;
        event.offset = envelope.offset;
        event.batchId = batchId;

        const QString id = idOf(sub);
        const auto match = subRequests.constFind(id);
        if (match != subRequests.constEnd()) {
            event.method = match->method;
            event.url = absoluteSubUrl(base, match->url);
            event.batchIndex = match->index;
            event.attempt = match->attempt;
        } else {
            event.batchIndex = responseIndex;
        }
        event.requestId = id.isEmpty() ? QString() : batchId + u'#' + id;

        int64_t status = 0;
        if (sub["status"].get_int64().get(status) == simdjson::SUCCESS && status >= 0 &&
            status <= limits::kMaxStatus)
            event.status = static_cast<int>(status);

        simdjson::dom::object headers;
        if (sub["headers"].get_object().get(headers) == simdjson::SUCCESS) {
            for (auto field : headers) {
                const QString name = toQString(field.key).toLower();
                QString value;
                if (field.value.is_string())
                    value = toQString(stringOf(field.value));
                else
                    value = toQString(simdjson::minify(field.value));
                if (name == u"retry-after")
                    event.retryAfter = value;
                if (isHeaderOfInterest(name))
                    event.headers.set(name, value);
            }
        }

        simdjson::dom::element body;
        if (keepsBody(event.status) && sub["body"].get(body) == simdjson::SUCCESS) {
            if (body.is_string())
                event.body = bodyText(stringOf(body));
            else if (!body.is_null())
                event.body = bodyText(simdjson::minify(body));
        }
        out.append(std::move(event));
        ++responseIndex;
    }
    return true;
}

} // namespace ts::ingest
