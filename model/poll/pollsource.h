#pragma once
// A polled log store, named by one URL (docs/throttlescope.1, POLLED SOURCES):
//
//   clickhouse://HOST:PORT/DATABASE/TABLE[?OPTIONS]   ClickHouse's HTTP interface
//   kql+https://HOST/v1/workspaces/ID/query?table=T&map=...   Azure Monitor Logs
//   kql+https://HOST/v1/apps/ID/query?table=requests&map=...  Application Insights
//   https://HOST/PATH?after={cursor}                  any endpoint answering NDJSON
//   (http:// instead of https:// and kql+http:// for a loopback or test server)
//
// Options (query parameters of the URL, consumed here, not sent):
//   overlap=S          seconds re-read behind the newest row (late rows, equal timestamps)
//   page=N             rows per request
//   user=NAME          ClickHouse user
//   password-env=VAR, password-file=PATH   ClickHouse password
//   token-env=VAR, token-file=PATH         bearer token (KQL, NDJSON endpoints)
//   ms=COLUMN          ClickHouse: a DateTime ts plus this column's milliseconds
//   table=T, query=KQL KQL: the table, or a whole query the poller appends its filter to
//   map=FIELD=COLUMN,...   KQL: which column holds which canonical field (as report --map)
//   skew=S             a row more than S seconds ahead of the store's clock is counted as
//                      stamped ahead (default 60); no row moves the cursor past that clock
//   timeout=S          the longest one answer may take, start to end (default 60)
//   retries=N          attempts of one request before the poll gives up (default 6)
//   max-answer=MB      the largest answer read (default 64; a larger one shrinks the page when
//                      the store takes a page size, else is refused)
// An NDJSON endpoint's URL may hold {limit} where the poller puts its page size: a page full of
// rows of one instant is then asked again larger (without it such an endpoint's page cannot be
// grown, and the poll says so).
//
// Secrets are never part of the URL: the URL is stored in the workspace and shown on screen,
// so a parameter the redaction rules treat as secret (ingest/redaction.h: token, key, sig,
// api_key, client_secret, *-token, jwt, ...), a value shaped like a credential (a JWT) or a
// password in the userinfo is refused, and messages about a refused URL mask it; the secret is
// named by the environment variable or file that holds it, read when a request is made.

#include <QHash>
#include <QString>
#include <QUrl>

#include <optional>

namespace ts::poll {

enum class SourceKind { ClickHouse, Kql, NdjsonHttp };

QString sourceKindName(SourceKind kind); // "clickhouse", "kql", "ndjson-http"

struct PollSource
{
    SourceKind kind = SourceKind::NdjsonHttp;
    QString url;      // as given (no secret in it), what the workspace stores
    QUrl endpoint;    // where requests go (http/https), options removed
    QString database; // ClickHouse
    QString table;    // ClickHouse; KQL table
    QString kqlQuery; // KQL: a whole query instead of a table
    QString user;     // ClickHouse
    QString passwordEnv, passwordFile;
    QString tokenEnv, tokenFile;
    QString msColumn; // ClickHouse: milliseconds of a DateTime ts
    // KQL: canonical field -> column name. ts defaults to TimeGenerated (Log Analytics) or
    // timestamp (Application Insights).
    QHash<QString, QString> mapping;
    qint64 overlapMs = 30'000;
    int pageRows = 50'000;
    qint64 skewMs = 60'000;
    int timeoutMs = 60'000;
    int retries = 6;
    qint64 maxAnswerBytes = 64LL * 1024 * 1024;

    // Parses a source URL; nullopt and *error when it is not one (or carries a secret).
    static std::optional<PollSource> parse(const QString &url, QString *error);
    // A URL as it may be shown: what the redaction rules treat as secret masked.
    static QString shown(const QString &url);
    // NDJSON: whether the URL has a {limit} placeholder.
    [[nodiscard]] bool takesPageSize() const;

    // The secret a request needs (password or token), read now from the environment variable
    // or file the URL names; empty when none is named. *error when one is named but missing.
    [[nodiscard]] QString secret(QString *error) const;
    // The column KQL rows carry the timestamp in.
    [[nodiscard]] QString kqlTimeColumn() const;
};

} // namespace ts::poll
