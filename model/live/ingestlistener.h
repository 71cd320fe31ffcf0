#pragma once
// The HTTP listener: applications (or a log shipper) POST their request log while the operator
// watches. Loopback by default; any other address must be protected by a bearer token.
//
//   POST /ingest      canonical NDJSON (shared/spec/request-log.md), optionally gzip-encoded
//   POST /v1/traces   OTLP/HTTP JSON (OpenTelemetry exporters), mapped by the OTLP importer
//   GET  /health      JSON: status, events received, last event time, errors
//
// Threading: the listener serves requests on the thread it lives in, one at a time (Qt 6.4's
// QHttpServer runs route handlers synchronously on its thread). The IngestSink is therefore only
// ever called from that thread and never concurrently with itself; it needs no locking unless the
// caller shares it with other producers. health() may be called from any thread.

#include "ingest/ingest.h"

#include <QHostAddress>
#include <QMutex>
#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>

class QHttpServer;
class QHttpServerRequest;
class QHttpServerResponse;

namespace ts {
class NdjsonReader;
}

namespace ts::live {

struct ListenerOptions
{
    QHostAddress address = QHostAddress(QHostAddress::LocalHost);
    quint16 port = 0; // 0 = any free port (see IngestListener::port())
    // Required ("Authorization: Bearer <token>") when non-empty; mandatory off loopback.
    QString bearerToken;
    // Largest accepted body, before and after decompression.
    qint64 maxBodyBytes = 32 * 1024 * 1024;
    // How many bad lines a 400 answer names (the count is always complete).
    int maxReportedErrors = 100;
};

struct ListenerHealth
{
    qint64 requests = 0;
    qint64 eventsReceived = 0;
    qint64 malformedLines = 0;
    qint64 rejectedRequests = 0; // 4xx/5xx answers
    qint64 lastEventMs = -1;     // wall clock of the last accepted event, -1 = none yet
    QStringList recentErrors;    // newest last, bounded
};

class IngestListener : public QObject
{
    Q_OBJECT
public:
    explicit IngestListener(IngestSink &sink, QObject *parent = nullptr);
    ~IngestListener() override;

    // Starts listening. Returns false with a message naming the problem (address in use,
    // non-loopback address without a token, ...).
    bool start(const ListenerOptions &options, QString *error);
    [[nodiscard]] quint16 port() const { return m_port; }
    [[nodiscard]] QHostAddress address() const { return m_options.address; }
    [[nodiscard]] ListenerHealth health() const;

    // "127.0.0.1:8080", "[::1]:8080", "localhost:8080", ":8080" (loopback) or "8080".
    static bool parseListenAddress(const QString &text, QHostAddress *address, quint16 *port,
                                   QString *error);

signals:
    // After each request that delivered events to the sink (on the listener's thread).
    void eventsIngested(qint64 count);

private:
    QHttpServerResponse handleIngest(const QHttpServerRequest &request);
    QHttpServerResponse handleTraces(const QHttpServerRequest &request);
    QHttpServerResponse handleHealth(const QHttpServerRequest &request);
    // Checks the token and size and decodes Content-Encoding. On failure returns false and sets
    // *rejection to the answer to send.
    bool admit(const QHttpServerRequest &request, QByteArray *body,
               std::unique_ptr<QHttpServerResponse> *rejection);
    QHttpServerResponse reject(int status, const QString &message);
    void noteEvents(qint64 events, qint64 malformed);

    IngestSink &m_sink;
    ListenerOptions m_options;
    std::unique_ptr<QHttpServer> m_server;
    std::unique_ptr<NdjsonReader> m_reader;
    quint16 m_port = 0;

    // Protects m_health: updated on the listener's thread, read by health() from anywhere
    // (the GUI's status bar, the headless status line).
    mutable QMutex m_healthMutex;
    ListenerHealth m_health;
};

} // namespace ts::live
