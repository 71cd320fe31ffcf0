#pragma once
// Microsoft Graph JSON batching ($batch): one envelope request carries up to 20 sub-requests and
// its response carries one sub-response each, with its own status, headers (its own Retry-After)
// and body. Every sub-request counts against the limits on its own, and a 200 envelope can hide
// 429s inside, so each sub-response becomes an event of its own.

#include "core/requestevent.h"

#include <QList>
#include <QString>

#include <string_view>

namespace ts::ingest {

// Whether a request looks like a Graph batch envelope: POST to a path ending in "/$batch".
bool isGraphBatchRequest(QStringView method, QStringView url);

// Explodes a batch response body into one event per sub-response. `envelope` is the fully mapped
// envelope event (time, identity, url...); requestJson is the request body ({"requests":[...]},
// may be empty: sub-requests are then known only by id) and responseJson the response body
// ({"responses":[...]}). Sub-events inherit the envelope's time, identity, app, tenant, duration
// and source; they get batchId (the envelope's request id, else "<url>@<time>") and batchIndex
// (the sub-request's position in the request, else in the response). Returns false (and no
// events) when responseJson is not a batch response.
bool explodeGraphBatch(const RequestEvent &envelope, std::string_view requestJson,
                       std::string_view responseJson, QList<RequestEvent> &out);

// The batch id given to sub-events of an envelope.
QString graphBatchId(const RequestEvent &envelope);

} // namespace ts::ingest
