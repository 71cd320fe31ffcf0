#include "httpconnection.h"

#include <QTcpSocket>
#include <QTimer>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>
#include <limits>

#include <sys/socket.h>

namespace ts::live {

namespace {

// A connection reading its body slower than this, past the grace period, is stalled: it may be
// closed to make room for another (IngestListener's connection caps).
constexpr qint64 kStalledBytesPerSecond = 1024;
constexpr qint64 kStallGraceMs = 1000;

// Bytes Qt may hold for a socket before it stops reading from the kernel: the client is then
// slowed down by TCP instead of filling our memory while a request waits for its answer.
constexpr qint64 kSocketReadBuffer = 64 * 1024;
// The longest chunk-size line.
constexpr qsizetype kMaxChunkLine = 1024;

QByteArray reasonPhrase(int status)
{
    switch (status) {
    case 100:
        return "Continue";
    case 200:
        return "OK";
    case 204:
        return "No Content";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 411:
        return "Length Required";
    case 413:
        return "Content Too Large";
    case 415:
        return "Unsupported Media Type";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 501:
        return "Not Implemented";
    case 503:
        return "Service Unavailable";
    case 505:
        return "HTTP Version Not Supported";
    default:
        return status < 400 ? "OK" : "Error";
    }
}

// Index just past the empty line that ends a head ("\n\n" or "\n\r\n"), -1 if not there yet.
qsizetype headEnd(const QByteArray &buffer)
{
    const char *data = buffer.constData();
    const qsizetype size = buffer.size();
    for (qsizetype i = 0; i + 1 < size; ++i) {
        if (data[i] != '\n')
            continue;
        if (data[i + 1] == '\n')
            return i + 2;
        if (data[i + 1] == '\r' && i + 2 < size && data[i + 2] == '\n')
            return i + 3;
    }
    return -1;
}

bool isTokenChar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

bool isToken(QByteArrayView text)
{
    if (text.isEmpty())
        return false;
    for (const char c : text) {
        if (c == '\0' || !isTokenChar(c))
            return false;
    }
    return true;
}

// Whether a comma-separated header value (Connection) holds `token`.
bool hasToken(const QByteArray &value, QByteArrayView token)
{
    const QList<QByteArray> parts = value.split(',');
    for (const QByteArray &part : parts) {
        if (part.trimmed().compare(token, Qt::CaseInsensitive) == 0)
            return true;
    }
    return false;
}

} // namespace

QByteArray HttpRequest::header(QByteArrayView name) const
{
    for (const auto &header : headers) {
        if (header.first.compare(name, Qt::CaseInsensitive) == 0)
            return header.second;
    }
    return {};
}

bool HttpRequest::hasHeader(QByteArrayView name) const
{
    for (const auto &header : headers) {
        if (header.first.compare(name, Qt::CaseInsensitive) == 0)
            return true;
    }
    return false;
}

HttpConnection::HttpConnection(QTcpSocket *socket, HttpHandler &handler, const HttpLimits &limits,
                               QObject *parent)
    : QObject(parent), m_socket(socket), m_handler(handler), m_limits(limits),
      m_timer(new QTimer(this))
{
    m_socket->setParent(this);
    m_socket->setReadBufferSize(kSocketReadBuffer);
    m_timer->setSingleShot(true);
    connect(m_timer, &QTimer::timeout, this, &HttpConnection::onTimeout);
    connect(m_socket, &QTcpSocket::readyRead, this, &HttpConnection::pump);
    connect(m_socket, &QTcpSocket::bytesWritten, this, [this] {
        if (m_state == State::Closing)
            finishWriting();
    });
    connect(m_socket, &QTcpSocket::disconnected, this, &HttpConnection::closeNow);
    // A connection that sends nothing is a connection that holds a slot: it gets the (short)
    // head timeout, not the idle one.
    armTimer(m_limits.headTimeoutMs);
    // Bytes may have arrived before the readyRead connection.
    QMetaObject::invokeMethod(this, &HttpConnection::pump, Qt::QueuedConnection);
}

HttpConnection::~HttpConnection() = default;

bool HttpConnection::isIdle() const
{
    return m_state == State::Head || m_state == State::Lingering || m_state == State::Closed;
}

void HttpConnection::armTimer(int milliseconds)
{
    m_timer->start(qMax(1, milliseconds));
}

bool HttpConnection::fill(qsizetype limit)
{
    const qsizetype room = limit - m_buffer.size();
    const qint64 available = m_socket->bytesAvailable();
    if (room <= 0 || available <= 0)
        return false;
    const qsizetype before = m_buffer.size();
    const qsizetype wanted = qsizetype(qMin<qint64>(room, available));
    m_buffer.resize(before + wanted);
    const qint64 got = m_socket->read(m_buffer.data() + before, wanted);
    m_buffer.resize(before + qsizetype(qMax<qint64>(0, got)));
    return got > 0;
}

void HttpConnection::pump()
{
    for (;;) {
        bool progressed = false;
        switch (m_state) {
        case State::Head:
            progressed = parseHead();
            break;
        case State::Body:
            progressed = readBody();
            break;
        case State::ChunkSize:
        case State::ChunkData:
        case State::ChunkEnd:
        case State::Trailers:
            progressed = readChunked();
            break;
        case State::Lingering:
            // The answer is out; what the client still sends is dropped unread.
            while (m_socket->bytesAvailable() > 0)
                m_socket->skip(m_socket->bytesAvailable());
            return;
        case State::Waiting:
        case State::Closing:
        case State::Closed:
            return;
        }
        if (!progressed)
            return;
    }
}

std::optional<HeadError> parseRequestHead(const QByteArray &head, HttpRequest *request,
                                          int maxHeaderCount)
{
    *request = HttpRequest();
    QList<QByteArray> lines = head.split('\n');
    for (QByteArray &line : lines) {
        if (line.endsWith('\r'))
            line.chop(1);
    }
    while (!lines.isEmpty() && lines.constLast().isEmpty())
        lines.removeLast();

    // Request line: method SP request-target SP HTTP-version.
    const QList<QByteArray> parts = lines.value(0).split(' ');
    if (parts.size() != 3 || !isToken(parts.at(0)) || parts.at(1).isEmpty())
        return HeadError{400, QStringLiteral("malformed request line")};
    const QByteArray &version = parts.at(2);
    if (version == "HTTP/1.1")
        request->minorVersion = 1;
    else if (version == "HTTP/1.0")
        request->minorVersion = 0;
    else if (version.startsWith("HTTP/"))
        return HeadError{505, QStringLiteral("only HTTP/1.0 and HTTP/1.1 are supported")};
    else
        return HeadError{400, QStringLiteral("malformed request line")};
    request->method = parts.at(0);
    QByteArray target = parts.at(1);
    if (target.startsWith("http://") || target.startsWith("https://")) {
        // absolute-form: only the path matters here.
        const qsizetype slash = target.indexOf('/', target.indexOf("//") + 2);
        target = slash < 0 ? QByteArray("/") : target.mid(slash);
    }
    if (!target.startsWith('/') && target != "*")
        return HeadError{400, QStringLiteral("malformed request target")};
    const qsizetype query = target.indexOf('?');
    request->path = query < 0 ? target : target.left(query);

    if (lines.size() - 1 > maxHeaderCount)
        return HeadError{431, QStringLiteral("more than %1 header fields").arg(maxHeaderCount)};
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray &line = lines.at(i);
        const qsizetype colon = line.indexOf(':');
        // Folded lines (obsolete) and whitespace before the colon are refused (RFC 9112, 5).
        if (colon <= 0 || !isToken(QByteArrayView(line).first(colon)))
            return HeadError{400, QStringLiteral("malformed header field")};
        request->headers.append({line.left(colon), line.mid(colon + 1).trimmed()});
    }
    return parseFraming(request);
}

// Message framing (RFC 9112, 6): both Content-Length and Transfer-Encoding, or lengths that
// disagree, are how requests are smuggled past proxies: refused.
std::optional<HeadError> parseFraming(HttpRequest *request)
{
    bool hasLength = false;
    for (const auto &header : std::as_const(request->headers)) {
        if (header.first.compare("content-length", Qt::CaseInsensitive) != 0)
            continue;
        for (const QByteArray &item : header.second.split(',')) {
            const QByteArray digits = item.trimmed();
            bool ok = !digits.isEmpty();
            for (const char c : digits)
                ok = ok && c >= '0' && c <= '9';
            if (!ok)
                return HeadError{400, QStringLiteral("malformed Content-Length")};
            const qint64 length =
                digits.size() > 18 ? std::numeric_limits<qint64>::max() : digits.toLongLong();
            if (hasLength && length != request->contentLength)
                return HeadError{400, QStringLiteral("conflicting Content-Length values")};
            hasLength = true;
            request->contentLength = length;
        }
    }
    if (request->hasHeader("transfer-encoding")) {
        if (hasLength)
            return HeadError{400, QStringLiteral("both Content-Length and Transfer-Encoding")};
        if (request->header("transfer-encoding").compare("chunked", Qt::CaseInsensitive) != 0)
            return HeadError{501, QStringLiteral("unsupported Transfer-Encoding (only chunked)")};
        request->chunked = true;
    }
    return std::nullopt;
}

// The next request head from the buffer (and the socket), bounded in size and time; false
// while it has not all arrived. *head is empty when the connection failed instead.
bool HttpConnection::takeHead(QByteArray *head)
{
    for (;;) {
        // Empty lines before a request line are ignored (RFC 9112, 2.2).
        qsizetype blank = 0;
        while (blank < m_buffer.size() &&
               (m_buffer.at(blank) == '\r' || m_buffer.at(blank) == '\n'))
            ++blank;
        if (blank > 0)
            m_buffer.remove(0, blank);
        if (!m_buffer.isEmpty() && !m_headStarted) {
            // From the first byte the whole head must arrive within the head timeout: a client
            // sending one byte now and then cannot hold the connection.
            m_headStarted = true;
            armTimer(m_limits.headTimeoutMs);
        }
        const qsizetype end = headEnd(m_buffer);
        if (end >= 0) {
            *head = m_buffer.left(end);
            m_buffer.remove(0, end);
            m_headStarted = false;
            return true;
        }
        if (m_buffer.size() > m_limits.maxHeadBytes) {
            fail(431, QStringLiteral("request head exceeds %1 bytes").arg(m_limits.maxHeadBytes));
            head->clear();
            return true;
        }
        if (!fill(m_limits.maxHeadBytes + 1))
            return false;
    }
}

bool HttpConnection::parseHead()
{
    QByteArray head;
    if (!takeHead(&head))
        return false;
    if (head.isEmpty())
        return true; // failed (431)
    if (const std::optional<HeadError> error =
            parseRequestHead(head, &m_request, m_limits.maxHeaderCount)) {
        fail(error->status, error->message);
        return true;
    }
    m_minorVersion = m_request.minorVersion;
    const QByteArray connection = m_request.header("connection");
    m_keepAlive = m_request.minorVersion >= 1 ? !hasToken(connection, "close")
                                              : hasToken(connection, "keep-alive");

    m_maxBody = 0;
    if (std::optional<HttpResponse> answer = m_handler.headReceived(m_request, &m_maxBody)) {
        // The body, if any, is never read: the connection cannot carry another request.
        if (m_request.announcesBody())
            answer->close = true;
        send(*answer);
        return true;
    }
    if (m_request.contentLength > m_maxBody) {
        fail(413, QStringLiteral("body of %1 bytes exceeds the limit of %2 bytes")
                      .arg(m_request.contentLength)
                      .arg(m_maxBody));
        return true;
    }
    if (m_request.announcesBody() &&
        m_request.header("expect").compare("100-continue", Qt::CaseInsensitive) == 0) {
        m_socket->write("HTTP/1.1 100 Continue\r\n\r\n");
    }
    startBody();
    return true;
}

void HttpConnection::startBody()
{
    if (!m_request.announcesBody()) {
        requestComplete();
        return;
    }
    // The whole body is due by a deadline (a time for any body plus one for its size at a
    // modest rate), not only without pauses longer than the idle timeout: a client sending a
    // byte now and then cannot hold the connection, however short its pauses.
    const qint64 expected = m_request.chunked ? m_maxBody : m_request.contentLength;
    m_bodyStarted.start();
    m_bodyDeadlineMs = m_limits.bodyTimeoutMs +
                       expected * 1000 / std::max<qint64>(1, m_limits.minBodyBytesPerSecond);
    m_bodyBytes = 0;
    armBodyTimer();
    if (m_request.chunked) {
        m_state = State::ChunkSize;
    } else {
        m_request.body.reserve(m_request.contentLength);
        m_remaining = m_request.contentLength;
        m_state = State::Body;
    }
}

// While a body is read: whichever comes first, the idle timeout or the body's deadline.
void HttpConnection::armBodyTimer()
{
    const qint64 left = m_bodyDeadlineMs - m_bodyStarted.elapsed();
    armTimer(int(std::clamp<qint64>(std::min<qint64>(left, m_limits.idleTimeoutMs), 1, INT_MAX)));
}

bool HttpConnection::isStalled() const
{
    switch (m_state) {
    case State::Body:
    case State::ChunkSize:
    case State::ChunkData:
    case State::ChunkEnd:
    case State::Trailers:
        break;
    default:
        return false;
    }
    const qint64 elapsed = m_bodyStarted.elapsed();
    return elapsed >= kStallGraceMs && m_bodyBytes * 1000 / elapsed < kStalledBytesPerSecond;
}

QHostAddress HttpConnection::peerAddress() const
{
    return m_socket->peerAddress();
}

bool HttpConnection::readBody()
{
    bool progressed = false;
    while (m_remaining > 0) {
        qint64 taken = 0;
        if (!m_buffer.isEmpty()) {
            taken = qMin<qint64>(m_remaining, m_buffer.size());
            m_request.body.append(m_buffer.constData(), qsizetype(taken));
            m_buffer.remove(0, qsizetype(taken));
        } else {
            const qint64 wanted = qMin(m_remaining, m_socket->bytesAvailable());
            if (wanted <= 0)
                break;
            const qsizetype before = m_request.body.size();
            m_request.body.resize(before + qsizetype(wanted));
            taken = qMax<qint64>(0, m_socket->read(m_request.body.data() + before, wanted));
            m_request.body.resize(before + qsizetype(taken));
            if (taken == 0)
                break;
        }
        m_remaining -= taken;
        m_bodyBytes += taken;
        progressed = true;
    }
    if (progressed)
        armBodyTimer();
    if (m_remaining > 0)
        return false;
    if (m_state == State::Body) {
        requestComplete();
        return true;
    }
    return progressed; // chunk data (readChunked() goes on)
}

bool HttpConnection::readChunked()
{
    bool progressed = false;
    for (;;) {
        switch (m_state) {
        case State::ChunkSize: {
            const qsizetype newline = m_buffer.indexOf('\n');
            if (newline < 0) {
                if (m_buffer.size() > kMaxChunkLine) {
                    fail(400, QStringLiteral("malformed chunked body"));
                    return true;
                }
                if (!fill(kMaxChunkLine + 1))
                    return progressed;
                continue;
            }
            QByteArray line = m_buffer.left(newline);
            m_buffer.remove(0, newline + 1);
            if (line.endsWith('\r'))
                line.chop(1);
            const qsizetype extension = line.indexOf(';');
            const QByteArray sizeText = (extension < 0 ? line : line.left(extension)).trimmed();
            bool ok = !sizeText.isEmpty() && sizeText.size() <= 15;
            for (const char c : sizeText)
                ok = ok && std::isxdigit(static_cast<unsigned char>(c));
            const qint64 size = ok ? sizeText.toLongLong(&ok, 16) : 0;
            if (!ok) {
                fail(400, QStringLiteral("malformed chunked body"));
                return true;
            }
            progressed = true;
            if (size == 0) {
                m_trailerBytes = 0;
                m_state = State::Trailers;
                continue;
            }
            if (m_request.body.size() + size > m_maxBody) {
                fail(413,
                     QStringLiteral("chunked body exceeds the limit of %1 bytes").arg(m_maxBody));
                return true;
            }
            // Room for the largest body at once: growing by doubling would keep the previous
            // buffers resident (a 32 MiB cap cost 80 MiB). Pages are touched only as data comes.
            if (m_request.body.capacity() < m_maxBody)
                m_request.body.reserve(m_maxBody);
            m_remaining = size;
            m_state = State::ChunkData;
            continue;
        }
        case State::ChunkData:
            if (!readBody())
                return progressed;
            progressed = true;
            m_state = State::ChunkEnd;
            continue;
        case State::ChunkEnd:
            if (m_buffer.size() < 2)
                fill(2);
            if (m_buffer.startsWith("\r\n")) {
                m_buffer.remove(0, 2);
            } else if (m_buffer.startsWith('\n')) {
                m_buffer.remove(0, 1);
            } else if (m_buffer.isEmpty() || m_buffer == "\r") {
                return progressed; // the line end has not arrived yet
            } else {
                fail(400, QStringLiteral("malformed chunked body"));
                return true;
            }
            progressed = true;
            m_state = State::ChunkSize;
            continue;
        case State::Trailers: {
            const qsizetype newline = m_buffer.indexOf('\n');
            if (newline < 0) {
                if (m_trailerBytes + m_buffer.size() > m_limits.maxHeadBytes) {
                    fail(431, QStringLiteral("chunked trailers exceed %1 bytes")
                                  .arg(m_limits.maxHeadBytes));
                    return true;
                }
                if (!fill(m_limits.maxHeadBytes + 1))
                    return progressed;
                continue;
            }
            m_trailerBytes += newline + 1;
            const bool last = newline == 0 || (newline == 1 && m_buffer.at(0) == '\r');
            m_buffer.remove(0, newline + 1);
            if (last) {
                requestComplete();
                return true;
            }
            progressed = true;
            continue;
        }
        default:
            return progressed;
        }
    }
}

void HttpConnection::requestComplete()
{
    m_state = State::Waiting;
    m_timer->stop();
    HttpRequest request = std::exchange(m_request, HttpRequest());
    m_handler.requestReceived(*this, std::move(request));
}

void HttpConnection::respond(const HttpResponse &response)
{
    if (m_state != State::Waiting)
        return;
    send(response);
    if (m_state == State::Head) // a pipelined request may be buffered already
        QMetaObject::invokeMethod(this, &HttpConnection::pump, Qt::QueuedConnection);
}

void HttpConnection::fail(int status, const QString &message)
{
    HttpResponse response = m_handler.errorResponse(status, message);
    response.close = true;
    send(response);
}

void HttpConnection::send(const HttpResponse &response)
{
    if (m_state == State::Closed || m_state == State::Closing || m_state == State::Lingering)
        return;
    const bool close = response.close || !m_keepAlive || m_closeWhenIdle;
    QByteArray out = "HTTP/1.1 " + QByteArray::number(response.status) + ' ' +
                     reasonPhrase(response.status) + "\r\n";
    if (response.status != 204) {
        if (!response.body.isEmpty() && !response.contentType.isEmpty())
            out += "Content-Type: " + response.contentType + "\r\n";
        out += "Content-Length: " + QByteArray::number(response.body.size()) + "\r\n";
    }
    for (const auto &header : response.headers)
        out += header.first + ": " + header.second + "\r\n";
    if (close)
        out += "Connection: close\r\n";
    else if (m_minorVersion == 0)
        out += "Connection: keep-alive\r\n";
    out += "\r\n";
    if (response.status != 204)
        out += response.body;
    m_socket->write(out);
    m_socket->flush();
    m_request = HttpRequest();
    m_remaining = 0;
    if (close) {
        startClosing();
        return;
    }
    m_state = State::Head;
    m_headStarted = false;
    armTimer(m_limits.idleTimeoutMs);
}

void HttpConnection::startClosing()
{
    m_state = State::Closing;
    // A client that does not read its answer does not hold the connection longer than this.
    armTimer(m_limits.idleTimeoutMs);
    finishWriting();
}

void HttpConnection::finishWriting()
{
    if (m_state != State::Closing || m_socket->bytesToWrite() > 0)
        return;
    if (m_socket->state() != QAbstractSocket::ConnectedState) {
        closeNow();
        return;
    }
    // Half-close and keep reading a little: closing with unread bytes would send a reset, which
    // can destroy the answer before the client reads it (RFC 9112, 9.6).
    ::shutdown(int(m_socket->socketDescriptor()), SHUT_WR);
    m_buffer.clear();
    m_state = State::Lingering;
    armTimer(m_limits.lingerMs);
    pump();
}

void HttpConnection::onTimeout()
{
    switch (m_state) {
    case State::Head:
        if (m_headStarted || !m_buffer.isEmpty()) {
            fail(408, QStringLiteral("request head not received within %1 s")
                          .arg(m_limits.headTimeoutMs / 1000.0));
        } else {
            closeNow(); // an idle connection: nothing to answer
        }
        return;
    case State::Body:
    case State::ChunkSize:
    case State::ChunkData:
    case State::ChunkEnd:
    case State::Trailers:
        if (m_bodyStarted.elapsed() >= m_bodyDeadlineMs) {
            fail(408, QStringLiteral("request body not complete within %1 s")
                          .arg(double(m_bodyDeadlineMs) / 1000.0));
        } else {
            fail(408, QStringLiteral("no body bytes received for %1 s")
                          .arg(m_limits.idleTimeoutMs / 1000.0));
        }
        return;
    case State::Closing:
    case State::Lingering:
        closeNow();
        return;
    case State::Waiting:
    case State::Closed:
        return;
    }
}

void HttpConnection::abort()
{
    closeNow();
}

void HttpConnection::closeWhenIdle()
{
    m_closeWhenIdle = true;
    if (m_state == State::Head)
        closeNow();
}

void HttpConnection::closeNow()
{
    if (m_state == State::Closed)
        return;
    m_state = State::Closed;
    m_timer->stop();
    m_socket->abort();
    emit closed(this);
}

} // namespace ts::live
