#pragma once
// One HTTP/1.1 server connection on a QTcpSocket: just what the ingest listener needs, written so
// that a request can be refused before its body is read. The request line and headers are
// parsed as they arrive (bounded in size and time); the handler sees the head before any body
// byte is buffered and either answers at once (the announced body is never read: the
// connection closes after the answer) or names the largest body it accepts. The body is then
// read with that hard cap, with a Content-Length or chunked, and handed over whole; the answer
// may come later (after a commit), and the connection reads nothing more until it does.
// Keep-alive and pipelined requests are answered in order.
//
// Qt 6.4's QHttpServer reads the whole request into memory before any handler runs, so a 1 GB
// body with a wrong token was buffered before the token was looked at; hence this class.

#include <QByteArray>
#include <QElapsedTimer>
#include <QHostAddress>
#include <QList>
#include <QObject>
#include <QPair>
#include <QString>

#include <optional>

class QTcpSocket;
class QTimer;

namespace ts::live {

struct HttpRequest
{
    QByteArray method;
    QByteArray path;                              // the target without its query
    int minorVersion = 1;                         // HTTP/1.<minorVersion>
    QList<QPair<QByteArray, QByteArray>> headers; // names as sent, values without OWS
    qint64 contentLength = -1;                    // -1: none given
    bool chunked = false;
    QByteArray body; // without the transfer coding (chunked), still content-encoded

    // The first value of a header (names are case-insensitive), empty if absent.
    [[nodiscard]] QByteArray header(QByteArrayView name) const;
    [[nodiscard]] bool hasHeader(QByteArrayView name) const;
    [[nodiscard]] bool announcesBody() const { return chunked || contentLength > 0; }
};

struct HttpResponse
{
    int status = 200;
    QByteArray contentType = QByteArrayLiteral("application/json");
    QByteArray body;
    QList<QPair<QByteArray, QByteArray>> headers; // extra header lines
    bool close = false;                           // close the connection after this answer
};

struct HttpLimits
{
    qsizetype maxHeadBytes = 16 * 1024; // request line + headers
    int maxHeaderCount = 100;
    int headTimeoutMs = 10000; // from a request's first byte (or the connection) to its head
    int idleTimeoutMs = 30000; // between requests, and without progress while reading a body
    int lingerMs = 2000;       // after an early answer: unread body bytes are discarded this long
    // A body must be complete within bodyTimeoutMs plus its length at this rate (a chunked one:
    // the largest accepted body's), however steadily its bytes trickle in.
    int bodyTimeoutMs = 30000;
    qint64 minBodyBytesPerSecond = 256 * 1024;
};

// Why a request head is refused: the status to answer and what to say.
struct HeadError
{
    int status = 400;
    QString message;
};

// Parses a request head (request line and header fields, up to its empty line) into *request,
// with its framing (Content-Length / chunked). Pure: the connection's bytes only, so a fuzzer
// can drive it (tests/fuzz/fuzz_httphead.cpp).
std::optional<HeadError> parseRequestHead(const QByteArray &head, HttpRequest *request,
                                          int maxHeaderCount = 100);
std::optional<HeadError> parseFraming(HttpRequest *request);

class HttpConnection;

class HttpHandler
{
public:
    virtual ~HttpHandler() = default;
    // A request head arrived; no body byte has been read. Return the answer to refuse (or
    // answer) the request right away, or nothing to have the body read, at most
    // *maxBodyBytes bytes (a larger one is answered 413 by the connection).
    virtual std::optional<HttpResponse> headReceived(const HttpRequest &request,
                                                     qint64 *maxBodyBytes) = 0;
    // The whole request arrived. Answer with connection.respond(), now or later.
    virtual void requestReceived(HttpConnection &connection, HttpRequest &&request) = 0;
    // The answer for a request the connection refuses itself (malformed, too large, too slow).
    virtual HttpResponse errorResponse(int status, const QString &message) = 0;
};

class HttpConnection : public QObject
{
    Q_OBJECT
public:
    // Takes the socket over (reparents it).
    HttpConnection(QTcpSocket *socket, HttpHandler &handler, const HttpLimits &limits,
                   QObject *parent = nullptr);
    ~HttpConnection() override;

    // Answers the request handed to requestReceived(). Then reads the next one (keep-alive)
    // or closes.
    void respond(const HttpResponse &response);
    // Closes now, answering nothing.
    void abort();
    // Serves no more requests: closes now when no request is in progress, else after its answer.
    void closeWhenIdle();

    // Between requests or still receiving a head: nothing would be lost by closing it.
    [[nodiscard]] bool isIdle() const;
    // Reading a body far slower than any client sends one (under 1 KiB/s after a second): a
    // connection held rather than used, closed first when room is needed.
    [[nodiscard]] bool isStalled() const;
    [[nodiscard]] QHostAddress peerAddress() const;

signals:
    // The connection is gone (closed by either side); delete it later.
    void closed(ts::live::HttpConnection *connection);

private:
    enum class State {
        Head,      // reading a request line and headers
        Body,      // reading a Content-Length body
        ChunkSize, // chunked body: a chunk-size line
        ChunkData, // chunked body: chunk data
        ChunkEnd,  // chunked body: the CRLF after chunk data
        Trailers,  // chunked body: trailer lines up to the empty one
        Waiting,   // the handler has the request
        Closing,   // the last answer is being sent
        Lingering, // answer sent, write side shut: discarding what the client still sends
        Closed,
    };

    void pump();
    // Reads more from the socket into m_buffer (at most `limit` bytes in the buffer). False
    // when nothing more is available now.
    bool fill(qsizetype limit);
    bool takeHead(QByteArray *head);
    bool parseHead();
    void startBody();
    void armBodyTimer();
    bool readBody();
    bool readChunked();
    void requestComplete();
    void fail(int status, const QString &message);
    void send(const HttpResponse &response);
    void startClosing();
    void finishWriting();
    void onTimeout();
    void armTimer(int milliseconds);
    void closeNow();

    QTcpSocket *m_socket;
    HttpHandler &m_handler;
    const HttpLimits m_limits;
    QTimer *m_timer;
    State m_state = State::Head;
    QByteArray m_buffer; // received, not parsed yet (bounded: see fill())
    HttpRequest m_request;
    qint64 m_maxBody = 0;
    qint64 m_remaining = 0; // of the Content-Length body or the current chunk
    qsizetype m_trailerBytes = 0;
    bool m_keepAlive = true;
    int m_minorVersion = 1; // of the request being answered
    bool m_closeWhenIdle = false;
    bool m_headStarted = false;  // the current request's first byte arrived (head timer armed)
    QElapsedTimer m_bodyStarted; // since the current request's head was read
    qint64 m_bodyDeadlineMs = 0; // of m_bodyStarted: the body is complete by then or refused
    qint64 m_bodyBytes = 0;      // of the current body so far
};

} // namespace ts::live
