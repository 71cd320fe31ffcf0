#include "ingestlistener.h"

#include "core/timeparse.h"
#include "inflate.h"
#include "ingest/ndjsonreader.h"
#include "ingest/otlpreader.h"

#include <QDateTime>
#include <QHttpServer>
#include <QHttpServerRequest>
#include <QHttpServerResponse>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMutexLocker>
#include <QTcpServer>

#include <cstring>

namespace ts::live {

namespace {

using Status = QHttpServerResponse::StatusCode;

constexpr int kRecentErrors = 20;

QByteArray headerValue(const QHttpServerRequest &request, QByteArrayView name)
{
    // Header names are case-insensitive (RFC 9110); Qt 6.4 keeps them as sent.
    const auto headers = request.headers();
    for (const auto &header : headers) {
        if (header.first.compare(name, Qt::CaseInsensitive) == 0)
            return header.second.trimmed();
    }
    return {};
}

// Compares in time independent of where the first difference is, so a token cannot be guessed
// byte by byte from response times.
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

QHttpServerResponse jsonResponse(const QJsonObject &object, Status status)
{
    return QHttpServerResponse(QByteArrayLiteral("application/json"),
                               QJsonDocument(object).toJson(QJsonDocument::Compact), status);
}

} // namespace

IngestListener::IngestListener(IngestSink &sink, QObject *parent)
    : QObject(parent), m_sink(sink), m_reader(std::make_unique<NdjsonReader>())
{
}

IngestListener::~IngestListener() = default;

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
                           "(--token) or listen on 127.0.0.1.")
                .arg(options.address.toString());
        return false;
    }
    m_options = options;
    auto server = std::make_unique<QHttpServer>();
    server->route(QStringLiteral("/ingest"), QHttpServerRequest::Method::Post,
                  [this](const QHttpServerRequest &request) { return handleIngest(request); });
    server->route(QStringLiteral("/v1/traces"), QHttpServerRequest::Method::Post,
                  [this](const QHttpServerRequest &request) { return handleTraces(request); });
    server->route(QStringLiteral("/health"), QHttpServerRequest::Method::Get,
                  [this](const QHttpServerRequest &request) { return handleHealth(request); });
    server->setMissingHandler(
        [this](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
            reject(404, QStringLiteral("no route for %1 (POST /ingest, POST /v1/traces, "
                                       "GET /health)")
                            .arg(request.url().path()))
                .write(std::move(responder));
        });

    auto *tcp = new QTcpServer(server.get());
    if (!tcp->listen(options.address, options.port)) {
        *error = QStringLiteral("cannot listen on %1:%2: %3")
                     .arg(options.address.toString())
                     .arg(options.port)
                     .arg(tcp->errorString());
        return false;
    }
    server->bind(tcp);
    m_port = tcp->serverPort();
    m_server = std::move(server);
    return true;
}

ListenerHealth IngestListener::health() const
{
    QMutexLocker locker(&m_healthMutex);
    return m_health;
}

QHttpServerResponse IngestListener::reject(int status, const QString &message)
{
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
    return jsonResponse({{u"error"_qs, message}}, Status(status));
}

bool IngestListener::admit(const QHttpServerRequest &request, QByteArray *body,
                           std::unique_ptr<QHttpServerResponse> *rejection)
{
    {
        QMutexLocker locker(&m_healthMutex);
        ++m_health.requests;
    }
    if (!m_options.bearerToken.isEmpty()) {
        const QByteArray authorization = headerValue(request, "authorization");
        const QByteArray expected = "Bearer " + m_options.bearerToken.toUtf8();
        if (!constantTimeEquals(authorization, expected)) {
            auto response = std::make_unique<QHttpServerResponse>(reject(
                401, authorization.isEmpty() ? QStringLiteral("missing Authorization: Bearer token")
                                             : QStringLiteral("wrong bearer token")));
            response->setHeader(QByteArrayLiteral("WWW-Authenticate"),
                                QByteArrayLiteral("Bearer realm=\"throttlescope\""));
            *rejection = std::move(response);
            return false;
        }
    }
    const QByteArray raw = request.body();
    if (raw.size() > m_options.maxBodyBytes) {
        *rejection = std::make_unique<QHttpServerResponse>(
            reject(413, QStringLiteral("body of %1 bytes exceeds the limit of %2 bytes")
                            .arg(raw.size())
                            .arg(m_options.maxBodyBytes)));
        return false;
    }
    const QByteArray encoding = headerValue(request, "content-encoding").toLower();
    if (encoding.isEmpty() || encoding == "identity") {
        *body = raw;
        return true;
    }
    if (encoding != "gzip" && encoding != "x-gzip" && encoding != "deflate") {
        *rejection = std::make_unique<QHttpServerResponse>(
            reject(415, QStringLiteral("unsupported Content-Encoding \"%1\" (gzip or identity)")
                            .arg(QString::fromLatin1(encoding))));
        return false;
    }
    QString error;
    switch (inflateBody(raw, m_options.maxBodyBytes, body, &error)) {
    case InflateStatus::Ok:
        return true;
    case InflateStatus::TooLarge:
        *rejection = std::make_unique<QHttpServerResponse>(
            reject(413, QStringLiteral("decompressed body exceeds the limit of %1 bytes")
                            .arg(m_options.maxBodyBytes)));
        return false;
    case InflateStatus::Corrupt:
        break;
    }
    *rejection = std::make_unique<QHttpServerResponse>(reject(400, error));
    return false;
}

void IngestListener::noteEvents(qint64 events, qint64 malformed)
{
    {
        QMutexLocker locker(&m_healthMutex);
        m_health.eventsReceived += events;
        m_health.malformedLines += malformed;
        if (events > 0)
            m_health.lastEventMs = QDateTime::currentMSecsSinceEpoch();
    }
    if (events > 0)
        emit eventsIngested(events);
}

QHttpServerResponse IngestListener::handleIngest(const QHttpServerRequest &request)
{
    QByteArray body;
    std::unique_ptr<QHttpServerResponse> rejection;
    if (!admit(request, &body, &rejection))
        return std::move(*rejection);

    static const QString source = QStringLiteral("http");
    qint64 accepted = 0;
    qint64 malformed = 0;
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
                m_sink.onEvent(std::move(event));
                ++accepted;
            } else {
                ++malformed;
                if (errors.size() < m_options.maxReportedErrors)
                    errors.append(QJsonObject{{u"line"_qs, lineNumber}, {u"reason"_qs, reason}});
                m_sink.onMalformed(MalformedRecord{source, lineNumber, reason});
            }
        }
        lineStart = lineEnd + 1;
    }
    noteEvents(accepted, malformed);
    if (malformed == 0)
        return jsonResponse({{u"accepted"_qs, accepted}, {u"rejected"_qs, 0}}, Status::Ok);

    QJsonObject answer{{u"error"_qs, QStringLiteral("%1 malformed line(s); the %2 valid "
                                                    "line(s) were accepted")
                                         .arg(malformed)
                                         .arg(accepted)},
                       {u"accepted"_qs, accepted},
                       {u"rejected"_qs, malformed},
                       {u"errors"_qs, errors}};
    if (malformed > errors.size())
        answer.insert(u"errorsOmitted"_qs, malformed - errors.size());
    QString firstLines;
    for (qsizetype i = 0; i < qMin<qsizetype>(errors.size(), 5); ++i) {
        const QJsonObject error = errors.at(i).toObject();
        firstLines += QStringLiteral(" line %1: %2;")
                          .arg(error.value(u"line").toInteger())
                          .arg(error.value(u"reason").toString());
    }
    reject(400,
           QStringLiteral("POST /ingest: %1 malformed line(s):%2").arg(malformed).arg(firstLines));
    return jsonResponse(answer, Status::BadRequest);
}

QHttpServerResponse IngestListener::handleTraces(const QHttpServerRequest &request)
{
    QByteArray body;
    std::unique_ptr<QHttpServerResponse> rejection;
    if (!admit(request, &body, &rejection))
        return std::move(*rejection);
    const QByteArray contentType = headerValue(request, "content-type").toLower();
    if (contentType.startsWith("application/x-protobuf") ||
        contentType.startsWith("application/protobuf")) {
        return reject(415, QStringLiteral("OTLP protobuf is not supported: configure the exporter "
                                          "for JSON (OTEL_EXPORTER_OTLP_PROTOCOL=http/json)"));
    }

    // Counts what the importer hands over on its way to the caller's sink.
    struct CountingSink final : IngestSink
    {
        explicit CountingSink(IngestSink &next) : next(next) {}
        void onEvent(RequestEvent &&event) override
        {
            ++events;
            next.onEvent(std::move(event));
        }
        void onMalformed(MalformedRecord &&record) override
        {
            ++malformed;
            next.onMalformed(std::move(record));
        }
        IngestSink &next;
        qint64 events = 0;
        qint64 malformed = 0;
    } counting(m_sink);
    QString error;
    const bool ok = parseOtlpJson(body, QStringLiteral("otlp"), counting, &error);
    noteEvents(counting.events, counting.malformed);
    if (!ok)
        return reject(400, QStringLiteral("POST /v1/traces: %1").arg(error));
    // ExportTraceServiceResponse; partialSuccess names spans that could not be used.
    QJsonObject answer;
    if (counting.malformed > 0) {
        answer.insert(
            u"partialSuccess"_qs,
            QJsonObject{{u"rejectedSpans"_qs, counting.malformed},
                        {u"errorMessage"_qs,
                         QStringLiteral("%1 span(s) could not be read").arg(counting.malformed)}});
    }
    return jsonResponse(answer, Status::Ok);
}

QHttpServerResponse IngestListener::handleHealth(const QHttpServerRequest &request)
{
    if (!m_options.bearerToken.isEmpty()) {
        QByteArray ignored;
        std::unique_ptr<QHttpServerResponse> rejection;
        if (!admit(request, &ignored, &rejection))
            return std::move(*rejection);
    }
    const ListenerHealth health = this->health();
    QJsonObject answer{
        {u"status"_qs, u"ok"_qs},
        {u"eventsReceived"_qs, health.eventsReceived},
        {u"malformedLines"_qs, health.malformedLines},
        {u"requests"_qs, health.requests},
        {u"errors"_qs, health.rejectedRequests},
        {u"lastEventTime"_qs,
         health.lastEventMs < 0 ? QJsonValue() : QJsonValue(formatIsoMs(health.lastEventMs))},
        {u"recentErrors"_qs, QJsonArray::fromStringList(health.recentErrors)},
    };
    return jsonResponse(answer, Status::Ok);
}

} // namespace ts::live
