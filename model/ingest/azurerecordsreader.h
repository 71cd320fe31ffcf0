#pragma once
// Azure diagnostic-log exports: {"records":[...]} documents (diagnostic settings to a storage
// account or Event Hub, the portal's JSON export), a bare record object, an array of records, or
// one record per line. Records are sliced out one at a time, so exports of any size stream.
//
// What maps (by the record's category; property names matched case-insensitively):
//  - AppServiceHTTPLogs: CsMethod, CsHost + CsUriStem + CsUriQuery -> url, ScStatus, TimeTaken
//    (ms), CsUsername -> identity (else CIp).
//  - FrontDoorAccessLog / AzureCdnAccessLog / ApplicationGatewayAccessLog: httpMethod,
//    requestUri, httpStatusCode | httpStatus, timeTaken (seconds), clientIp -> identity,
//    trackingReference -> requestId.
//  - API Management GatewayLogs: method, url, responseCode, totalTime (ms), apimSubscriptionId
//    | userId -> identity, lastError.reason -> errorCode.
//  - Service Bus OperationalLogs (management operations): EventName ("Create Queue" ->
//    "CreateQueue"), EventTimeString, Status (Succeeded -> 200, Failed -> 500), namespace and
//    url (Via) from EventProperties; service "servicebus".
//  - Service Bus RuntimeAuditLogs: ActivityName (SendMessage -> Send, ReceiveMessage ->
//    Receive, other names as written), Time, Status (Success -> 200, Failure -> 500 with
//    errorCode "Failure"), AuthId -> identity, Count -> credits, namespace / entity from the
//    resource id. A record whose Status is neither (the documentation's template, "Success |
//    Failure") is malformed.
//  - Any other category is read with the same property names when it has a time and a method,
//    url or status; otherwise (e.g. ServiceBusVNetConnectionEvent: IP filtering, no request and
//    no time) the record is reported as malformed with the reason, so nothing is dropped
//    silently.

#include "ingest/ingest.h"

namespace ts {

class AzureRecordsReader final : public LogReader
{
public:
    [[nodiscard]] QString formatName() const override { return QStringLiteral("azure-records"); }
    ReadResult read(QIODevice &input, const QString &sourceName, IngestSink &sink,
                    const ReadControl &control) override;
};

} // namespace ts
