#pragma once
// The HTTP listener: applications (or a log shipper) POST their request log while the operator
// watches. Loopback by default; any other address must be protected by a bearer token.
//
//   POST /ingest      canonical NDJSON (docs/request-log.md), optionally gzip-encoded
//   POST /v1/traces   OTLP/HTTP JSON (OpenTelemetry exporters), mapped by the OTLP importer
//   GET  /health      JSON: status, events received, last event time, errors
//
// Acknowledged means stored: each request's records go to the sink with a completion, and the
// client is answered when the sink completes it (200 once the records are durable, 503 with
// Retry-After when they are not). Everything that can refuse a request (Host, Origin, token,
// route, size, encoding) is checked on its head, before any body byte is read (see
// HttpConnection). Connections are capped (beyond the cap the oldest idle one is closed, or the
// newcomer is answered 503) and time out when idle or slow to send their head.
//
// Threading: the listener, its connections and the sink's submit() run on the thread the
// listener lives in. Completions may be called from any thread. health() may be called from any
// thread.

#include "httpconnection.h"
#include "ingest/ingest.h"

#include <QDeadlineTimer>
#include <QHash>
#include <QHostAddress>
#include <QMutex>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>

#include <list>
#include <memory>
#include <optional>

class QTcpServer;
class QTimer;

namespace ts {
class NdjsonReader;
}

namespace ts::live {

class IngestListener;

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
    // Browsers: a request with an Origin header is refused (403) unless the origin is listed
    // here ("https://app.example:8443"; "*" = any). Clients that send no Origin are unaffected.
    QStringList allowedOrigins;
    // The Host header must name the listening address and port (any loopback name when
    // listening on loopback), which defeats DNS rebinding; others listed here are accepted too
    // ("name" = any port, "name:port"; "*" = any Host).
    QStringList allowedHosts;
    // Open connections at most (lowered to what the process's file descriptor limit allows).
    int maxConnections = 64;
    // Open connections from one client address at most: one host cannot take every slot.
    // Past either cap, the oldest idle or stalled connection (a body trickling in under 1 KiB/s)
    // makes room; only when there is none is the newcomer answered 503.
    int maxConnectionsPerClient = 16;
    // A connection that sends nothing for this long between requests (or while sending a body)
    // is closed; a request head must arrive within headTimeoutMs of its first byte (or of the
    // connection).
    int idleTimeoutMs = 30000;
    int headTimeoutMs = 10000;
    // A body must be complete within this (plus its length at 256 KiB/s), however steadily its
    // bytes trickle in: the idle timeout alone lets a byte every 25 s hold a slot for ever.
    int bodyTimeoutMs = 30000;
    // How long a request waits for its records to be stored before it is answered 503: below
    // clients' own timeouts (OpenTelemetry exporters give up after 10 s), so that they see the
    // 503 and its Retry-After.
    int commitTimeoutMs = 5000;
};

struct ListenerHealth
{
    qint64 requests = 0;
    qint64 eventsReceived = 0; // stored (acknowledged) events
    qint64 malformedLines = 0;
    qint64 rejectedRequests = 0; // 4xx/5xx answers
    qint64 lastEventMs = -1;     // wall clock of the last accepted event, -1 = none yet
    QStringList recentErrors;    // newest last, bounded
};

// What became of a request's records.
enum class IngestOutcome {
    Stored, // durable in every sink: 200 (or the 400 naming malformed lines)
    Busy,   // not stored, the sink could not keep up or wait longer: 503, retry soon
    Failed, // not stored, the sink failed (a full disk): 503, retry later
};

// The records of one request, as the sink receives them.
struct IngestBatch
{
    QList<RequestEvent> events;
    QList<MalformedRecord> malformed;
    // The client is answered by then: a sink that has not stored the records by this time
    // should give up (Busy) rather than store them later.
    QDeadlineTimer deadline;
};

// Settles one request. Copyable and thread-safe; the first call counts, later ones are
// ignored. A completion dropped without a call settles its request as Failed.
class IngestCompletion
{
public:
    IngestCompletion() = default;
    void complete(IngestOutcome outcome, const QString &message = {}) const;

private:
    friend class IngestListener;
    struct State;
    explicit IngestCompletion(std::shared_ptr<State> state) : m_state(std::move(state)) {}
    std::shared_ptr<State> m_state;
};

class IngestBatchSink
{
public:
    virtual ~IngestBatchSink() = default;
    // Called on the listener's thread for each request that carries records, in the order the
    // requests completed. Call done.complete() exactly once, from any thread, now or later:
    // Stored once the records are durable, Busy/Failed (with a reason the client may read) if
    // they are not and never will be. A sink still undecided at batch.deadline plus a grace
    // period has its request answered 503 by the listener: the only case in which a client
    // told 503 may find its records stored later.
    virtual void submit(IngestBatch &&batch, IngestCompletion done) = 0;
};

class IngestListener : public QObject
{
    Q_OBJECT
public:
    explicit IngestListener(IngestBatchSink &sink, QObject *parent = nullptr);
    // For a consumer that holds events in memory (the dashboard): each request's records are
    // handed to `sink` and acknowledged at once.
    explicit IngestListener(IngestSink &sink, QObject *parent = nullptr);
    ~IngestListener() override;

    // Starts listening. Returns false with a message naming the problem (address in use,
    // non-loopback address without a token, ...).
    bool start(const ListenerOptions &options, QString *error);
    // Stops accepting connections; idle ones are closed, the others after their answer.
    // drained() follows once no request waits for its records to be stored.
    void stopListening();
    [[nodiscard]] int pendingRequests() const { return int(m_pending.size()); }
    [[nodiscard]] quint16 port() const { return m_port; }
    [[nodiscard]] QHostAddress address() const { return m_options.address; }
    // The connection cap in force (ListenerOptions::maxConnections, maybe lowered).
    [[nodiscard]] int maxConnections() const { return m_maxConnections; }
    [[nodiscard]] int openConnections() const { return int(m_connections.size()); }
    [[nodiscard]] ListenerHealth health() const;

    // "127.0.0.1:8080", "[::1]:8080", "localhost:8080", ":8080" (loopback) or "8080".
    static bool parseListenAddress(const QString &text, QHostAddress *address, quint16 *port,
                                   QString *error);

signals:
    // After each request whose events were stored (on the listener's thread).
    void eventsIngested(qint64 count);
    // After stopListening(), once no request waits for its records.
    void drained();

private:
    class Handler;
    class ImmediateSink;
    friend class IngestCompletion;
    struct PendingRequest
    {
        QPointer<HttpConnection> connection;
        std::shared_ptr<HttpResponse> storedAnswer;        // sent when the records are stored
        QList<QPair<QByteArray, QByteArray>> extraHeaders; // CORS, for any answer
        qint64 events = 0;
        qint64 malformed = 0;
        QString errorLine; // health's recent-error line for a 400 answer, if any
        // Past this the listener answers 503 itself (the sink did not settle in time).
        QDeadlineTimer answerBy;
    };
    // Shared with completions: lets them reach the listener while it exists.
    struct CompletionChannel
    {
        // Protects `listener`: set to null by the listener's destructor, read by completions
        // on any thread.
        QMutex mutex;
        IngestListener *listener = nullptr;
    };

    void onNewConnection();
    // Makes room for a newcomer from `client` under the caps: false when none can be made.
    bool makeRoomFor(const QHostAddress &client);
    void refuseConnection(QTcpSocket *socket, const QString &why);
    std::optional<HttpResponse> checkHead(const HttpRequest &request, qint64 *maxBodyBytes);
    // Host, Origin, OPTIONS and the bearer token: who may ask at all.
    std::optional<HttpResponse> checkAccess(const HttpRequest &request);
    void handleRequest(HttpConnection &connection, HttpRequest &&request);
    // Hands a request's records to the sink; the answer follows from the completion.
    void submitBatch(HttpConnection &connection, IngestBatch &&batch, PendingRequest pending,
                     HttpResponse storedAnswer);
    void finishRequest(quint64 requestId, IngestOutcome outcome, const QString &message);
    // Answers 503 for requests whose sink is past the answer deadline.
    void sweepOverdue();
    [[nodiscard]] bool hostAllowed(const QByteArray &host) const;
    [[nodiscard]] bool originAllowed(const QByteArray &origin) const;
    [[nodiscard]] QList<QPair<QByteArray, QByteArray>>
    corsHeaders(const HttpRequest &request) const;
    HttpResponse reject(int status, const QString &message);
    void noteError(int status, const QString &message);
    void noteStored(qint64 events, qint64 malformed);

    std::unique_ptr<ImmediateSink> m_immediateSink; // when constructed with an IngestSink
    IngestBatchSink &m_sink;
    std::unique_ptr<Handler> m_handler;
    ListenerOptions m_options;
    std::unique_ptr<QTcpServer> m_server;
    std::unique_ptr<NdjsonReader> m_reader;
    quint16 m_port = 0;
    int m_maxConnections = 0;
    bool m_stopping = false;
    QByteArray m_tokenDigest;                  // SHA-256 of the bearer token
    std::list<HttpConnection *> m_connections; // oldest first
    QHash<quint64, PendingRequest> m_pending;
    QTimer *m_sweepTimer = nullptr; // runs while requests are pending
    quint64 m_nextRequestId = 0;
    std::shared_ptr<CompletionChannel> m_channel;

    // Protects m_health: updated on the listener's thread, read by health() from anywhere
    // (the GUI's status bar, the headless status line).
    mutable QMutex m_healthMutex;
    ListenerHealth m_health;
};

} // namespace ts::live
