#pragma once
// VCR cassettes: recorded HTTP interactions as written by vcrpy (the YAML "interactions:" list
// used by the Fabric CLI, Azure SDK for Python and many other test suites). Real captures of
// Fabric 429 RequestBlocked with Retry-After live in such files.
//
// Read one interaction at a time (bounded memory) with a small YAML reader for the subset vcrpy
// writes: block mappings and sequences, plain, single- and double-quoted scalars folded over
// several lines. Mapping: request method and uri, response status code, response headers of
// interest (Retry-After also into retryAfter; list values joined with ", "), the RequestId /
// request-id header as requestId, the response body string as body for failed requests,
// identity from a request Authorization bearer token when one was recorded.
//
// Time: cassettes record no timestamps except the response's Date header (one-second
// resolution), which becomes tsMs. An interaction without a readable Date is a malformed
// record (FILE:LINE of its "- request:" line).

#include "ingest/ingest.h"

#include <optional>
#include <string_view>

namespace ts {

class VcrReader final : public LogReader
{
public:
    [[nodiscard]] QString formatName() const override { return QStringLiteral("vcr"); }
    ReadResult read(QIODevice &input, const QString &sourceName, IngestSink &sink,
                    const ReadControl &control) override;
};

// RFC 9110 IMF-fixdate ("Wed, 03 Sep 2025 07:02:21 GMT"), also without the weekday.
std::optional<qint64> parseHttpDateMs(std::string_view text);

} // namespace ts
