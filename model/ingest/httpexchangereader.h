#pragma once
// Raw HTTP exchanges saved as text (issue 30.15): `.http` files as people paste them into
// issues, docs and REST-client scratch files. Each exchange is an optional request (request
// line "METHOD URL [HTTP/1.1]", headers, a blank line, a body) followed by its response (status
// line "HTTP/1.1 429 Too Many Requests", headers, a blank line, a body); exchanges are separated
// by a line starting with "###" (the REST-client convention) or by the next request or status
// line after a body. A response alone is an exchange too: Microsoft Graph's documentation shows
// its 429 and its $batch answer that way.
//
// Mapping: status, the headers of interest (Retry-After also into retryAfter), a request id, the
// body of a failed response; method and url from the request line (a POST to .../$batch, or a
// body with a "responses" array, is a Graph $batch: its sub-responses are exploded as the HAR
// reader does, graphbatch.h). The service is Graph when the URL's host is graph.microsoft.com or
// the body is Graph's (a $batch answer, an error with innerError). Time: the Date header, else
// the earliest innerError.date in the body (Graph stamps every error with it; UTC), else the
// exchange is a malformed record ("no Date header and no dated body"), FILE:LINE of its first
// line. Bounded memory: one exchange at a time, its body cut at kMaxExchangeBytes.

#include "ingest/ingest.h"

namespace ts {

class HttpExchangeReader final : public LogReader
{
public:
    [[nodiscard]] QString formatName() const override { return QStringLiteral("http"); }
    ReadResult read(QIODevice &input, const QString &sourceName, IngestSink &sink,
                    const ReadControl &control) override;
};

// Whether a line opens an exchange: a status line ("HTTP/1.1 200 OK") or a request line
// ("GET https://graph.microsoft.com/v1.0/me HTTP/1.1"). For format detection.
bool isHttpExchangeStart(QByteArrayView line);

} // namespace ts
