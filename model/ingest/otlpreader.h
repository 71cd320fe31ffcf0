#pragma once
// OTLP/JSON traces: the collector's file exporter (one ExportTraceServiceRequest JSON object per
// line) and OTLP/HTTP JSON bodies (one object, possibly pretty-printed; several may follow each
// other). Objects are sliced out of the stream one at a time, so files of any size import with
// bounded memory.
//
// Which spans become events: every span that carries HTTP attributes, and every server, client,
// producer or consumer span (kind 2..5) even without them (a request served or sent, with the
// span name as its operation); internal / unspecified spans without HTTP attributes are skipped.
// Mapping: startTimeUnixNano (string or number) -> tsMs, end - start -> durationMs; both
// semantic conventions: http.request.method | http.method -> method, url.full | http.url |
// url.scheme + server.address[:server.port] + url.path[?url.query] | http.scheme + http.host +
// http.target -> url, http.response.status_code | http.status_code -> status; enduser.id |
// user.id -> identity; resource service.name -> app; traceId -> operationId, spanId ->
// requestId; http.response.header.<name> (string or array) -> headers (retry-after also to
// retryAfter); http.request.header.retry-attempt -> attempt; messaging spans (servicebus) ->
// service, entity, namespace, credits from messaging.batch.message_count. A span without an HTTP
// status counts as answered (200) unless its status code is ERROR (2), then status 0 and
// errorCode from error.type. Span kind, name and ids go to extraJson.

#include "ingest/ingest.h"

#include <QByteArray>

namespace ts {

class OtlpReader final : public LogReader
{
public:
    [[nodiscard]] QString formatName() const override { return QStringLiteral("otlp"); }
    ReadResult read(QIODevice &input, const QString &sourceName, IngestSink &sink,
                    const ReadControl &control) override;
};

// One OTLP/JSON ExportTraceServiceRequest (the body of POST /v1/traces). Emits one event per
// span as described above. Returns false with *error when the body is not OTLP/JSON traces;
// events already emitted for a valid body are complete.
bool parseOtlpJson(const QByteArray &body, const QString &source, IngestSink &sink, QString *error);

} // namespace ts
