#include "ingestlistener.h"

#include "core/timeparse.h"
#include "inflate.h"
#include "ingest/ndjsonreader.h"
#include "ingest/otlpreader.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMutexLocker>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

#include <atomic>
#include <climits>
#include <cstring>

#include <dirent.h>
#include <sys/resource.h>

namespace ts::live {

namespace {

constexpr int kRecentErrors = 20;
// How long past a request's commit deadline the listener waits for its sink before answering
// 503 on its own: long enough for a transaction that began just before the deadline.
int completionGraceMs(int commitTimeoutMs)
{
    return qBound(1000, commitTimeoutMs / 2, 5000);
}
// GET /health carries no body; a small one is read and ignored.
constexpr qint64 kHealthBodyLimit = 64 * 1024;
// File descriptors left to the rest of the process (workspace, WAL, --out, Qt) when the
// connection cap is fitted to the descriptor limit.
constexpr int kReservedDescriptors = 32;
constexpr int kRetryAfterBusySeconds = 1;
constexpr int kRetryAfterFailedSeconds = 5;
constexpr int kAcceptRetryMs = 100;

const QByteArray kIngestPath = QByteArrayLiteral("/ingest");
const QByteArray kTracesPath = QByteArrayLiteral("/v1/traces");
const QByteArray kHealthPath = QByteArrayLiteral("/health");

QByteArray sha256(const QByteArray &data)
{
    return QCryptographicHash::hash(data, QCryptographicHash::Sha256);
}

// Compares in time independent of where the first difference is (both are digests of the
// same length, so the token's length does not show either).
bool constantTimeEquals(const QByteArray &a, const QByteArray &b)
{
    if (a.size() != b.size())
        return false;
    unsigned char difference = 0;
    for (qsizetype i = 0; i < a.size(); ++i)
        difference |= static_cast<unsigned char>(a.at(i) ^ b.at(i));
    return difference == 0;
}

bool isBlank(const char *data, qsizetype size)
{
    for (qsizetype i = 0; i < size; ++i) {
        if (data[i] != ' ' && data[i] != '\t' && data[i] != '\r')
            return false;
    }
    return true;
}

HttpResponse jsonResponse(const QJsonObject &object, int status)
{
    HttpResponse response;
    response.status = status;
    response.body = QJsonDocument(object).toJson(QJsonDocument::Compact);
    return response;
}

// How many more descriptors this process may open, minus a reserve.
int descriptorRoom()
{
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
        limit.rlim_cur > rlim_t(INT_MAX)) {
        return INT_MAX;
    }
    int open = 0;
    if (DIR *fds = ::opendir("/proc/self/fd")) {
        while (const dirent *entry = ::readdir(fds))
            open += entry->d_name[0] != '.' ? 1 : 0;
        ::closedir(fds);
    } else {
        open = int(limit.rlim_cur) / 4; // no /proc: assume a quarter is in use
    }
    return int(limit.rlim_cur) - open - kReservedDescriptors;
}

QByteArray normalizedOrigin(QByteArray origin)
{
    origin = origin.trimmed().toLower();
    while (origin.endsWith('/'))
        origin.chop(1);
    return origin;
}

} // namespace

// ---- completions ------------------------------------------------------------------------------

struct IngestCompletion::State
{
    std::shared_ptr<IngestListener::CompletionChannel> channel;
    quint64 requestId = 0;
    std::atomic<bool> done{false};

    ~State()
    {
        if (!done.exchange(true))
            deliver(IngestOutcome::Failed, QStringLiteral("the records were dropped unstored"));
    }
    void deliver(IngestOutcome outcome, const QString &message) const
    {
        QMutexLocker locker(&channel->mutex);
        if (IngestListener *listener = channel->listener) {
            // Queued even on the listener's own thread: the sink may complete inside submit().
            QMetaObject::invokeMethod(
                listener,
                [listener, id = requestId, outcome, message] {
                    listener->finishRequest(id, outcome, message);
                },
                Qt::QueuedConnection);
        }
    }
};

void IngestCompletion::complete(IngestOutcome outcome, const QString &message) const
{
    if (m_state && !m_state->done.exchange(true))
        m_state->deliver(outcome, message);
}

// ---- the two sink adapters and the HTTP handler ----------------------------------------------

class IngestListener::ImmediateSink final : public IngestBatchSink
{
public:
    explicit ImmediateSink(IngestSink &sink) : m_sink(sink) {}
    void submit(IngestBatch &&batch, IngestCompletion done) override
    {
        for (RequestEvent &event : batch.events)
            m_sink.onEvent(std::move(event));
        for (MalformedRecord &record : batch.malformed)
            m_sink.onMalformed(std::move(record));
        done.complete(IngestOutcome::Stored);
    }

private:
    IngestSink &m_sink;
};

class IngestListener::Handler final : public HttpHandler
{
public:
    explicit Handler(IngestListener &listener) : m_listener(listener) {}
    std::optional<HttpResponse> headReceived(const HttpRequest &request,
                                             qint64 *maxBodyBytes) override
    {
        return m_listener.checkHead(request, maxBodyBytes);
    }
    void requestReceived(HttpConnection &connection, HttpRequest &&request) override
    {
        m_listener.handleRequest(connection, std::move(request));
    }
    HttpResponse errorResponse(int status, const QString &message) override
    {
        return m_listener.reject(status, message);
    }

private:
    IngestListener &m_listener;
};

// ---- the listener -----------------------------------------------------------------------------

IngestListener::IngestListener(IngestBatchSink &sink, QObject *parent)
    : QObject(parent), m_sink(sink), m_handler(std::make_unique<Handler>(*this)),
      m_reader(std::make_unique<NdjsonReader>()), m_channel(std::make_shared<CompletionChannel>())
{
    m_channel->listener = this;
    m_sweepTimer = new QTimer(this);
    m_sweepTimer->setInterval(500);
    connect(m_sweepTimer, &QTimer::timeout, this, &IngestListener::sweepOverdue);
}

IngestListener::IngestListener(IngestSink &sink, QObject *parent)
    : QObject(parent), m_immediateSink(std::make_unique<ImmediateSink>(sink)),
      m_sink(*m_immediateSink), m_handler(std::make_unique<Handler>(*this)),
      m_reader(std::make_unique<NdjsonReader>()), m_channel(std::make_shared<CompletionChannel>())
{
    m_channel->listener = this;
    m_sweepTimer = new QTimer(this);
    m_sweepTimer->setInterval(500);
    connect(m_sweepTimer, &QTimer::timeout, this, &IngestListener::sweepOverdue);
}

IngestListener::~IngestListener()
{
    {
        QMutexLocker locker(&m_channel->mutex);
        m_channel->listener = nullptr;
    }
    m_server.reset();
    // Before the handler they call goes away, and without their closed() reaching us.
    const std::list<HttpConnection *> connections = std::exchange(m_connections, {});
    for (HttpConnection *connection : connections) {
        disconnect(connection, nullptr, this, nullptr);
        delete connection;
    }
}

bool IngestListener::parseListenAddress(const QString &text, QHostAddress *address, quint16 *port,
                                        QString *error)
{
    QString host;
    QString portText = text.trimmed();
    const qsizetype colon = portText.lastIndexOf(u':');
    if (colon >= 0) {
        host = portText.left(colon);
        portText = portText.mid(colon + 1);
    }
    if (host.startsWith(u'[') && host.endsWith(u']'))
        host = host.mid(1, host.size() - 2);
    bool ok = false;
    const uint value = portText.toUInt(&ok);
    if (!ok || value > 65535) {
        *error = QStringLiteral("invalid port in \"%1\" (expected HOST:PORT)").arg(text);
        return false;
    }
    if (host.isEmpty() || host.compare(u"localhost", Qt::CaseInsensitive) == 0) {
        *address = QHostAddress(QHostAddress::LocalHost);
    } else if (!address->setAddress(host)) {
        *error = QStringLiteral("invalid address \"%1\" (expected an IP address)").arg(host);
        return false;
    }
    *port = quint16(value);
    return true;
}

bool IngestListener::start(const ListenerOptions &options, QString *error)
{
    if (m_server) {
        *error = QStringLiteral("the listener is already running on port %1").arg(m_port);
        return false;
    }
    if (!options.address.isLoopback() && options.bearerToken.isEmpty()) {
        *error =
            QStringLiteral("refusing to listen on %1 without a bearer token: anyone who can reach "
                           "this address could write events into the workspace. Pass a token "
                           "(--token-file or TS_INGEST_TOKEN) or listen on 127.0.0.1.")
                .arg(options.address.toString());
        return false;
    }
    auto server = std::make_unique<QTcpServer>();
    if (!server->listen(options.address, options.port)) {
        *error = QStringLiteral("cannot listen on %1:%2: %3")
                     .arg(options.address.toString())
                     .arg(options.port)
                     .arg(server->errorString());
        return false;
    }
    m_options = options;
    m_tokenDigest =
        options.bearerToken.isEmpty() ? QByteArray() : sha256(options.bearerToken.toUtf8());
    // Past the descriptor limit accept() fails and new clients wait in the kernel's backlog
    // behind whoever holds the connections: the cap keeps a descriptor free for them.
    m_maxConnections = qMax(1, qMin(options.maxConnections, descriptorRoom()));
    m_stopping = false;
    connect(server.get(), &QTcpServer::newConnection, this, &IngestListener::onNewConnection);
    connect(server.get(), &QTcpServer::acceptError, this, [this](QAbstractSocket::SocketError) {
        // Out of descriptors (another part of the process took them): QTcpServer stops
        // accepting. Make room and try again shortly, rather than stop serving for good.
        noteError(503, QStringLiteral("cannot accept a connection: %1")
                           .arg(m_server ? m_server->errorString() : QString()));
        const auto idle = std::find_if(m_connections.begin(), m_connections.end(),
                                       [](HttpConnection *c) { return c->isIdle(); });
        if (idle != m_connections.end())
            (*idle)->abort();
        QTimer::singleShot(kAcceptRetryMs, this, [this] {
            if (m_server && !m_stopping)
                m_server->resumeAccepting();
        });
    });
    m_port = server->serverPort();
    m_server = std::move(server);
    return true;
}

void IngestListener::stopListening()
{
    m_stopping = true;
    if (m_server)
        m_server->close();
    const std::list<HttpConnection *> connections = m_connections;
    for (HttpConnection *connection : connections)
        connection->closeWhenIdle();
    if (m_pending.isEmpty())
        emit drained();
}

void IngestListener::onNewConnection()
{
    HttpLimits limits;
    limits.headTimeoutMs = m_options.headTimeoutMs;
    limits.idleTimeoutMs = m_options.idleTimeoutMs;
    limits.bodyTimeoutMs = m_options.bodyTimeoutMs;
    while (QTcpSocket *socket = m_server->nextPendingConnection()) {
        const QHostAddress client = socket->peerAddress();
        if (!makeRoomFor(client)) {
            refuseConnection(
                socket, int(m_connections.size()) >= m_maxConnections
                            ? QStringLiteral("connection limit of %1 reached").arg(m_maxConnections)
                            : QStringLiteral("connection limit of %1 per client "
                                             "reached")
                                  .arg(m_options.maxConnectionsPerClient));
            continue;
        }
        auto *connection = new HttpConnection(socket, *m_handler, limits, this);
        connect(connection, &HttpConnection::closed, this, [this](HttpConnection *closed) {
            m_connections.remove(closed);
            closed->deleteLater();
        });
        m_connections.push_back(connection);
    }
}

bool IngestListener::makeRoomFor(const QHostAddress &client)
{
    // Room for the newcomer: the oldest connection with no request in progress (a half-open
    // one, a slow head, an idle keep-alive) or whose body has stalled goes, the client's own
    // first when it is the client that is over its cap. Only when every connection carries a
    // request that moves is the newcomer refused.
    auto evictable = [](const HttpConnection *c) { return c->isIdle() || c->isStalled(); };
    const int perClient = int(std::count_if(
        m_connections.cbegin(), m_connections.cend(),
        [&client](const HttpConnection *c) { return c->peerAddress().isEqual(client); }));
    if (perClient >= std::max(1, m_options.maxConnectionsPerClient)) {
        const auto own =
            std::find_if(m_connections.begin(), m_connections.end(), [&](const HttpConnection *c) {
                return c->peerAddress().isEqual(client) && evictable(c);
            });
        if (own == m_connections.end())
            return false;
        (*own)->abort(); // removed from m_connections by its closed() signal
    }
    if (int(m_connections.size()) < m_maxConnections)
        return true;
    const auto other = std::find_if(m_connections.begin(), m_connections.end(), evictable);
    if (other == m_connections.end())
        return false;
    (*other)->abort();
    return true;
}

void IngestListener::refuseConnection(QTcpSocket *socket, const QString &why)
{
    noteError(503, why);
    const QByteArray body = QJsonDocument(QJsonObject{{u"error"_qs, u"too many connections"_qs}})
                                .toJson(QJsonDocument::Compact);
    connect(socket, &QAbstractSocket::disconnected, socket, &QObject::deleteLater);
    socket->write("HTTP/1.1 503 Service Unavailable\r\nContent-Type: "
                  "application/json\r\nRetry-After: 1\r\nConnection: close\r\n"
                  "Content-Length: " +
                  QByteArray::number(body.size()) + "\r\n\r\n" + body);
    socket->disconnectFromHost();
}

ListenerHealth IngestListener::health() const
{
    QMutexLocker locker(&m_healthMutex);
    return m_health;
}

void IngestListener::noteError(int status, const QString &message)
{
    QMutexLocker locker(&m_healthMutex);
    ++m_health.rejectedRequests;
    m_health.recentErrors.append(QStringLiteral("%1 %2: %3")
                                     .arg(formatIsoMs(QDateTime::currentMSecsSinceEpoch()))
                                     .arg(status)
                                     .arg(message));
    while (m_health.recentErrors.size() > kRecentErrors)
        m_health.recentErrors.removeFirst();
}

HttpResponse IngestListener::reject(int status, const QString &message)
{
    noteError(status, message);
    return jsonResponse({{u"error"_qs, message}}, status);
}

void IngestListener::noteStored(qint64 events, qint64 malformed)
{
    QMutexLocker locker(&m_healthMutex);
    m_health.eventsReceived += events;
    m_health.malformedLines += malformed;
    if (events > 0)
        m_health.lastEventMs = QDateTime::currentMSecsSinceEpoch();
}

bool IngestListener::hostAllowed(const QByteArray &hostHeader) const
{
    const QByteArray host = hostHeader.trimmed().toLower();
    QByteArray name;
    QByteArray portText;
    if (host.startsWith('[')) {
        const qsizetype close = host.indexOf(']');
        if (close < 0)
            return false;
        name = host.mid(1, close - 1);
        const QByteArray rest = host.mid(close + 1);
        if (rest.startsWith(':'))
            portText = rest.mid(1);
        else if (!rest.isEmpty())
            return false;
    } else {
        const qsizetype colon = host.indexOf(':');
        if (colon >= 0 && host.lastIndexOf(':') != colon)
            return false; // an IPv6 address must be bracketed
        name = colon < 0 ? host : host.left(colon);
        portText = colon < 0 ? QByteArray() : host.mid(colon + 1);
    }
    bool portOk = true;
    const uint port = portText.isEmpty() ? 80 : portText.toUInt(&portOk);
    if (name.isEmpty() || !portOk)
        return false;
    for (const QString &allowed : m_options.allowedHosts) {
        const QByteArray entry = allowed.trimmed().toLower().toUtf8();
        if (entry == "*" || entry == host || entry == name)
            return true;
    }
    if (port != m_port)
        return false;
    QHostAddress literal;
    const bool isAddress = literal.setAddress(QString::fromLatin1(name));
    if (m_options.address.isLoopback())
        return name == "localhost" || (isAddress && literal.isLoopback());
    if (m_options.address == QHostAddress::AnyIPv4 || m_options.address == QHostAddress::AnyIPv6 ||
        m_options.address == QHostAddress::Any) {
        // Every address of the machine: an address literal cannot be rebound by DNS.
        return isAddress || name == "localhost";
    }
    return isAddress && literal.isEqual(m_options.address, QHostAddress::TolerantConversion);
}

bool IngestListener::originAllowed(const QByteArray &origin) const
{
    const QByteArray wanted = normalizedOrigin(origin);
    for (const QString &allowed : m_options.allowedOrigins) {
        const QByteArray entry = normalizedOrigin(allowed.toUtf8());
        if (entry == "*" || entry == wanted)
            return true;
    }
    return false;
}

QList<QPair<QByteArray, QByteArray>> IngestListener::corsHeaders(const HttpRequest &request) const
{
    if (!request.hasHeader("origin"))
        return {};
    return {{"Access-Control-Allow-Origin", request.header("origin")}, {"Vary", "Origin"}};
}

std::optional<HttpResponse> IngestListener::checkAccess(const HttpRequest &request)
{
    // Host: a browser led to this port by a DNS name that was rebound to 127.0.0.1 sends that
    // name. Header values are never quoted back: they are the client's bytes.
    if (!request.hasHeader("host")) {
        if (request.minorVersion >= 1)
            return reject(400, QStringLiteral("missing Host header"));
    } else if (!hostAllowed(request.header("host"))) {
        return reject(403, QStringLiteral("the Host header does not name this listener (allow "
                                          "other names with --allow-host)"));
    }
    // Origin: any web page can make a browser POST here (a text/plain POST needs no
    // preflight); browsers name the page's origin, other clients send none.
    const bool hasOrigin = request.hasHeader("origin");
    if (hasOrigin && !originAllowed(request.header("origin"))) {
        return reject(403, QStringLiteral("cross-origin requests from browsers are refused "
                                          "(allow an origin with --allow-origin)"));
    }
    const QList<QPair<QByteArray, QByteArray>> cors = corsHeaders(request);
    if (request.method == "OPTIONS") {
        // A CORS preflight (never carries credentials) or a plain OPTIONS.
        HttpResponse response;
        response.status = 204;
        response.headers = cors;
        response.headers.emplaceBack("Allow", "GET, POST, OPTIONS");
        if (hasOrigin) {
            response.headers.emplaceBack("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
            response.headers.emplaceBack("Access-Control-Allow-Headers",
                                         "Authorization, Content-Type, Content-Encoding");
            response.headers.emplaceBack("Access-Control-Max-Age", "600");
        }
        return response;
    }
    if (!m_tokenDigest.isEmpty()) {
        // "Bearer" is case-insensitive (RFC 9110, 11.1); the token is compared as a digest.
        const QByteArray authorization = request.header("authorization");
        const qsizetype space = authorization.indexOf(' ');
        const QByteArrayView scheme =
            space < 0 ? QByteArrayView(authorization) : QByteArrayView(authorization).first(space);
        const QByteArray credentials =
            space < 0 ? QByteArray() : authorization.mid(space + 1).trimmed();
        const bool schemeOk = scheme.compare("bearer", Qt::CaseInsensitive) == 0;
        if (!constantTimeEquals(sha256(credentials), m_tokenDigest) || !schemeOk) {
            HttpResponse response = reject(
                401, authorization.isEmpty() ? QStringLiteral("missing Authorization: Bearer token")
                                             : QStringLiteral("wrong bearer token"));
            response.headers = cors;
            response.headers.emplaceBack("WWW-Authenticate", "Bearer realm=\"throttlescope\"");
            return response;
        }
    }
    return std::nullopt;
}

std::optional<HttpResponse> IngestListener::checkHead(const HttpRequest &request,
                                                      qint64 *maxBodyBytes)
{
    {
        QMutexLocker locker(&m_healthMutex);
        ++m_health.requests;
    }
    if (std::optional<HttpResponse> refused = checkAccess(request))
        return refused;
    const bool post = request.method == "POST";
    const bool get = request.method == "GET";
    if (request.path == kHealthPath) {
        if (!get) {
            HttpResponse response = reject(405, QStringLiteral("GET /health"));
            response.headers.emplaceBack("Allow", "GET");
            return response;
        }
        *maxBodyBytes = kHealthBodyLimit;
        return std::nullopt;
    }
    const bool traces = request.path == kTracesPath;
    if (request.path != kIngestPath && !traces) {
        return reject(404, QStringLiteral("no such route (POST /ingest, POST /v1/traces, "
                                          "GET /health)"));
    }
    if (!post) {
        HttpResponse response = reject(405, traces ? QStringLiteral("POST /v1/traces")
                                                   : QStringLiteral("POST /ingest"));
        response.headers.emplaceBack("Allow", "POST");
        return response;
    }
    const QList<QPair<QByteArray, QByteArray>> cors = corsHeaders(request);
    if (request.contentLength < 0 && !request.chunked) {
        // Without a length (an HTTP/1.0 POST) the body would run to the connection's close,
        // which cannot be told from a cut: refused rather than taken as empty.
        HttpResponse response = reject(411, QStringLiteral("a POST needs a Content-Length (or "
                                                           "chunked transfer encoding)"));
        response.headers = cors;
        return response;
    }
    *maxBodyBytes = m_options.maxBodyBytes;
    if (request.contentLength > m_options.maxBodyBytes) {
        HttpResponse response = reject(413, QStringLiteral("body of %1 bytes exceeds the limit of "
                                                           "%2 bytes")
                                                .arg(request.contentLength)
                                                .arg(m_options.maxBodyBytes));
        response.headers = cors;
        return response;
    }
    const QByteArray encoding = request.header("content-encoding").toLower();
    if (!encoding.isEmpty() && encoding != "identity" && encoding != "gzip" &&
        encoding != "x-gzip" && encoding != "deflate") {
        return reject(415, QStringLiteral("unsupported Content-Encoding (gzip or identity)"));
    }
    const QByteArray contentType = request.header("content-type").toLower();
    if (traces && (contentType.startsWith("application/x-protobuf") ||
                   contentType.startsWith("application/protobuf"))) {
        return reject(415, QStringLiteral("OTLP protobuf is not supported: configure the exporter "
                                          "for JSON (OTEL_EXPORTER_OTLP_PROTOCOL=http/json)"));
    }
    return std::nullopt;
}

void IngestListener::handleRequest(HttpConnection &connection, HttpRequest &&request)
{
    const QList<QPair<QByteArray, QByteArray>> cors = corsHeaders(request);
    auto answer = [&](HttpResponse response) {
        response.headers += cors;
        connection.respond(response);
    };
    if (request.path == kHealthPath) {
        const ListenerHealth health = this->health();
        answer(jsonResponse(
            QJsonObject{
                {u"status"_qs, u"ok"_qs},
                {u"eventsReceived"_qs, health.eventsReceived},
                {u"malformedLines"_qs, health.malformedLines},
                {u"requests"_qs, health.requests},
                {u"errors"_qs, health.rejectedRequests},
                {u"lastEventTime"_qs, health.lastEventMs < 0
                                          ? QJsonValue()
                                          : QJsonValue(formatIsoMs(health.lastEventMs))},
                {u"recentErrors"_qs, QJsonArray::fromStringList(health.recentErrors)},
            },
            200));
        return;
    }

    QByteArray body;
    const QByteArray encoding = request.header("content-encoding").toLower();
    if (encoding.isEmpty() || encoding == "identity") {
        body = std::exchange(request.body, QByteArray());
    } else {
        QString error;
        const InflateStatus status =
            inflateBody(request.body, m_options.maxBodyBytes, &body, &error);
        request.body = QByteArray();
        if (status == InflateStatus::TooLarge) {
            answer(reject(413, QStringLiteral("decompressed body exceeds the limit of %1 bytes")
                                   .arg(m_options.maxBodyBytes)));
            return;
        }
        if (status == InflateStatus::Corrupt) {
            answer(reject(400, error));
            return;
        }
    }

    IngestBatch batch;
    batch.deadline = QDeadlineTimer(qMax(0, m_options.commitTimeoutMs));
    PendingRequest pending;
    HttpResponse storedAnswer;
    if (request.path == kTracesPath) {
        // Collects what the importer maps, for the sink.
        struct CollectingSink final : IngestSink
        {
            explicit CollectingSink(IngestBatch &batch) : batch(batch) {}
            void onEvent(RequestEvent &&event) override { batch.events.append(std::move(event)); }
            void onMalformed(MalformedRecord &&record) override
            {
                batch.malformed.append(std::move(record));
            }
            IngestBatch &batch;
        } collecting(batch);
        QString error;
        if (!parseOtlpJson(body, QStringLiteral("otlp"), collecting, &error)) {
            answer(reject(400, QStringLiteral("POST /v1/traces: %1").arg(error)));
            return;
        }
        // ExportTraceServiceResponse; partialSuccess names spans that could not be used.
        QJsonObject object;
        if (!batch.malformed.isEmpty()) {
            object.insert(
                u"partialSuccess"_qs,
                QJsonObject{
                    {u"rejectedSpans"_qs, batch.malformed.size()},
                    {u"errorMessage"_qs,
                     QStringLiteral("%1 span(s) could not be read").arg(batch.malformed.size())}});
        }
        storedAnswer = jsonResponse(object, 200);
    } else {
        static const QString source = QStringLiteral("http");
        QJsonArray errors;
        const char *const begin = body.constData();
        const qsizetype size = body.size();
        qsizetype lineStart = 0;
        qint64 lineNumber = 0;
        while (lineStart < size) {
            const char *newline = static_cast<const char *>(
                std::memchr(begin + lineStart, '\n', size_t(size - lineStart)));
            const qsizetype lineEnd = newline ? newline - begin : size;
            ++lineNumber;
            qsizetype length = lineEnd - lineStart;
            if (length > 0 && begin[lineStart + length - 1] == '\r')
                --length;
            if (!isBlank(begin + lineStart, length)) {
                RequestEvent event;
                QString reason;
                if (m_reader->parseLine(begin + lineStart, length, event, &reason)) {
                    event.source = source;
                    event.line = lineNumber;
                    event.offset = lineStart;
                    batch.events.append(std::move(event));
                } else {
                    if (errors.size() < m_options.maxReportedErrors) {
                        errors.append(
                            QJsonObject{{u"line"_qs, lineNumber}, {u"reason"_qs, reason}});
                    }
                    batch.malformed.append(MalformedRecord{source, lineNumber, reason});
                }
            }
            lineStart = lineEnd + 1;
        }
        const qint64 accepted = batch.events.size();
        const qint64 malformed = batch.malformed.size();
        if (malformed == 0) {
            storedAnswer = jsonResponse({{u"accepted"_qs, accepted}, {u"rejected"_qs, 0}}, 200);
        } else {
            QJsonObject object{{u"error"_qs, QStringLiteral("%1 malformed line(s); the %2 valid "
                                                            "line(s) were accepted")
                                                 .arg(malformed)
                                                 .arg(accepted)},
                               {u"accepted"_qs, accepted},
                               {u"rejected"_qs, malformed},
                               {u"errors"_qs, errors}};
            if (malformed > errors.size())
                object.insert(u"errorsOmitted"_qs, malformed - errors.size());
            // Only the reader's reasons are quoted, never the lines themselves.
            QString firstLines;
            for (qsizetype i = 0; i < qMin<qsizetype>(errors.size(), 5); ++i) {
                const QJsonObject error = errors.at(i).toObject();
                firstLines += QStringLiteral(" line %1: %2;")
                                  .arg(error.value(u"line").toInteger())
                                  .arg(error.value(u"reason").toString());
            }
            pending.errorLine = QStringLiteral("POST /ingest: %1 malformed line(s):%2")
                                    .arg(malformed)
                                    .arg(firstLines);
            storedAnswer = jsonResponse(object, 400);
        }
    }
    body = QByteArray();

    if (batch.events.isEmpty() && batch.malformed.isEmpty()) {
        answer(storedAnswer); // nothing to store
        return;
    }
    const quint64 id = ++m_nextRequestId;
    pending.connection = &connection;
    pending.storedAnswer = std::make_shared<HttpResponse>(std::move(storedAnswer));
    pending.extraHeaders = cors;
    pending.events = batch.events.size();
    pending.malformed = batch.malformed.size();
    pending.answerBy = QDeadlineTimer(qMax(0, m_options.commitTimeoutMs) +
                                      completionGraceMs(m_options.commitTimeoutMs));
    m_pending.insert(id, std::move(pending));
    if (!m_sweepTimer->isActive())
        m_sweepTimer->start();
    auto state = std::make_shared<IngestCompletion::State>();
    state->channel = m_channel;
    state->requestId = id;
    m_sink.submit(std::move(batch), IngestCompletion(std::move(state)));
}

void IngestListener::finishRequest(quint64 requestId, IngestOutcome outcome, const QString &message)
{
    const auto it = m_pending.find(requestId);
    if (it == m_pending.end())
        return; // answered already (overdue)
    const PendingRequest pending = std::move(it.value());
    m_pending.erase(it);
    if (m_pending.isEmpty())
        m_sweepTimer->stop();

    HttpResponse response;
    if (outcome == IngestOutcome::Stored) {
        noteStored(pending.events, pending.malformed);
        if (!pending.errorLine.isEmpty())
            noteError(400, pending.errorLine);
        response = *pending.storedAnswer;
        if (pending.events > 0)
            emit eventsIngested(pending.events);
    } else {
        response =
            reject(503, QStringLiteral("not stored, retry: %1")
                            .arg(message.isEmpty() ? QStringLiteral("the store failed") : message));
        response.headers.emplaceBack("Retry-After",
                                     QByteArray::number(outcome == IngestOutcome::Busy
                                                            ? kRetryAfterBusySeconds
                                                            : kRetryAfterFailedSeconds));
    }
    response.headers += pending.extraHeaders;
    if (pending.connection)
        pending.connection->respond(response);
    if (m_stopping && m_pending.isEmpty())
        emit drained();
}

void IngestListener::sweepOverdue()
{
    QList<quint64> overdue;
    for (auto it = m_pending.cbegin(); it != m_pending.cend(); ++it) {
        if (it.value().answerBy.hasExpired())
            overdue.append(it.key());
    }
    for (const quint64 id : std::as_const(overdue)) {
        finishRequest(
            id, IngestOutcome::Busy,
            QStringLiteral("the records were not stored within %1 s")
                .arg((m_options.commitTimeoutMs + completionGraceMs(m_options.commitTimeoutMs)) /
                     1000.0));
    }
}

} // namespace ts::live
