#pragma once
// CSV / TSV exports with a header row: RFC 4180 quoting (embedded delimiters, quotes and
// newlines), an optional UTF-8 BOM, ',' ';' or TAB as the delimiter (guessed from the header).
//
// Columns are mapped onto RequestEvent fields either explicitly (a CsvMapping, from the CLI's
// --map or a workspace) or automatically by the column names of the exports operators have:
// Application Insights `requests` / `dependencies` (timestamp, name, url / data, resultCode,
// duration, success, customDimensions, user_AuthenticatedId, cloud_RoleName, operation_Id),
// Log Analytics AppRequests / AppDependencies (TimeGenerated, Name, Url / Data, ResultCode,
// DurationMs, Properties, AppRoleName, UserAuthenticatedId, OperationId), API Management
// GatewayLogs (TimeGenerated, Method, Url, ResponseCode, TotalTime, ApimSubscriptionId,
// BackendResponseCode, LastErrorReason ...). A "[UTC]" suffix on a column name is ignored.
// customDimensions / Properties (a JSON object) give identity, app, tenant, Retry-After,
// attempt and throttle headers when they carry them. Columns mapped to nothing go to extraJson.
//
// A row with the wrong number of columns or without a readable timestamp is a malformed record
// reported as FILE:LINE (the line where the row starts).

#include "ingest/ingest.h"

#include <QList>
#include <QPair>
#include <QString>

#include <optional>

namespace ts {

// Which column feeds which event field. Field names are the canonical log's keys (ts, identity,
// app, tenant, service, category, method, url, status, errorCode, retryAfter, body, durationMs,
// requestId, operationId, attempt, lane, credits, namespace, entity), plus "header.<name>" for a
// response header and "dimensions" for a JSON object column read like customDimensions.
class CsvMapping
{
public:
    // "ts=TimeGenerated,status=ResultCode,header.retry-after=RetryAfter". Column names may be
    // double-quoted when they contain ',' or '='. Returns nullopt with *error on a bad spec.
    static std::optional<CsvMapping> fromString(const QString &spec, QString *error = nullptr);
    // The inverse of fromString (fields in insertion order).
    [[nodiscard]] QString toString() const;

    [[nodiscard]] bool isEmpty() const { return m_fields.isEmpty(); }
    void set(const QString &field, const QString &column);
    // The column mapped to a field, empty when none.
    [[nodiscard]] QString column(QStringView field) const;
    [[nodiscard]] const QList<QPair<QString, QString>> &fields() const { return m_fields; }
    // Whether a target field name is one CsvMapping understands.
    static bool isKnownField(QStringView field);

    bool operator==(const CsvMapping &other) const = default;

private:
    QList<QPair<QString, QString>> m_fields; // (field, column)
};

class CsvReader final : public LogReader
{
public:
    // An empty mapping means: recognise the columns by name.
    explicit CsvReader(CsvMapping mapping = {});
    [[nodiscard]] QString formatName() const override { return QStringLiteral("csv"); }
    ReadResult read(QIODevice &input, const QString &sourceName, IngestSink &sink,
                    const ReadControl &control) override;

    // The mapping recognised from a header row (for showing the user what was understood).
    static CsvMapping recogniseColumns(const QStringList &header);

private:
    CsvMapping m_mapping;
};

} // namespace ts
