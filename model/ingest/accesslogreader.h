#pragma once
// Web server access logs: Apache/NCSA Common and Combined, and any nginx-style log_format given
// by the user ("$remote_addr - $remote_user [$time_local] \"$request\" $status ..."). A format is
// compiled once into a list of literal separators and variables; a line is matched by finding
// each separator in turn (memchr/find, no regular expression per line).
//
// Variables understood: $msec, $time_local, $time_iso8601, $status, $remote_user, $remote_addr,
// $request ("GET /path HTTP/1.1"), $request_method, $request_uri, $uri, $args, $host,
// $http_host, $scheme, $request_time (seconds), $upstream_response_time, $request_id,
// $http_<name> (request header: authorization -> JWT identity, retry_attempt -> attempt,
// x_ms_client_request_id -> requestId), $upstream_http_<name> and $sent_http_<name> (response
// headers: retry_after -> retryAfter, throttle and rate-limit headers kept). Any other variable
// is matched and ignored. "-" means empty.
//
// Identity: $remote_user when set, else $remote_addr: nginx limit_req / limit_conn key on the
// client address, so that is the bucket a self-hosted API charges.
//
// A line that does not match, or whose time cannot be read, is a malformed record (FILE:LINE).
// Resumable (lines are independent).

#include "ingest/ingest.h"

#include <QString>

#include <memory>
#include <optional>

namespace ts {

class AccessLogFormat
{
public:
    AccessLogFormat();
    ~AccessLogFormat();
    AccessLogFormat(const AccessLogFormat &other);
    AccessLogFormat &operator=(const AccessLogFormat &other);

    // Compiles an nginx log_format string. nullopt with *error when it has no variable or no
    // time variable.
    static std::optional<AccessLogFormat> compile(const QString &logFormat,
                                                  QString *error = nullptr);
    static AccessLogFormat combined(); // Apache/nginx "combined"
    static AccessLogFormat common();   // NCSA Common Log Format

    [[nodiscard]] QString text() const;
    // Maps one line; false with *reason when it does not match.
    bool parse(std::string_view line, RequestEvent &event, QString *reason) const;

private:
    struct Compiled;
    std::shared_ptr<const Compiled> d;
};

class AccessLogReader final : public LogReader
{
public:
    // An empty format means: Combined, falling back to Common line by line.
    explicit AccessLogReader(const QString &logFormat = {});
    [[nodiscard]] QString formatName() const override { return QStringLiteral("access"); }
    [[nodiscard]] bool supportsResume() const override { return true; }
    ReadResult read(QIODevice &input, const QString &sourceName, IngestSink &sink,
                    const ReadControl &control) override;

private:
    QString m_formatText;
};

} // namespace ts
