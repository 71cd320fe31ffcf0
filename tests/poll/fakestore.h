#pragma once
// A loopback HTTP/1.1 server for the poller's tests, answering each request with what a
// handler returns: the Azure Monitor query API's documented shapes (tables[] with columns and
// rows, its 429 with Retry-After, 200 with a PartialError), an NDJSON endpoint. One request per
// connection (Connection: close). Lives on the test's thread: the poller's requests run a local
// event loop there, which serves it.

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QTcpServer>
#include <QTcpSocket>

#include <functional>

namespace ts::testfake {

struct Request
{
    QByteArray method;
    QByteArray target; // path and query, as sent
    QHash<QByteArray, QByteArray> headers; // names lower-case
    QByteArray body;
};

struct Response
{
    Response(int code, QByteArray content,
             QByteArray type = "application/json; charset=utf-8",
             QList<std::pair<QByteArray, QByteArray>> extraHeaders = {})
        : status(code), body(std::move(content)), contentType(std::move(type)),
          headers(std::move(extraHeaders))
    {
    }
    int status = 200;
    QByteArray body;
    QByteArray contentType;
    QList<std::pair<QByteArray, QByteArray>> headers;
};

class Server : public QObject
{
public:
    using Handler = std::function<Response(const Request &)>;

    explicit Server(Handler handler) : m_handler(std::move(handler))
    {
        m_server.listen(QHostAddress::LocalHost, 0);
        QObject::connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *socket = m_server.nextPendingConnection()) {
                QObject::connect(socket, &QTcpSocket::readyRead, this,
                                 [this, socket] { onData(socket); });
                QObject::connect(socket, &QTcpSocket::disconnected, socket,
                                 &QObject::deleteLater);
            }
        });
    }

    [[nodiscard]] quint16 port() const { return m_server.serverPort(); }
    QList<Request> requests;

private:
    void onData(QTcpSocket *socket)
    {
        QByteArray &buffer = m_buffers[socket];
        buffer += socket->readAll();
        const qsizetype headEnd = buffer.indexOf("\r\n\r\n");
        if (headEnd < 0)
            return;
        Request request;
        const QList<QByteArray> lines = buffer.left(headEnd).split('\n');
        const QList<QByteArray> first = lines.value(0).trimmed().split(' ');
        request.method = first.value(0);
        request.target = first.value(1);
        qsizetype length = 0;
        for (qsizetype i = 1; i < lines.size(); ++i) {
            const qsizetype colon = lines.at(i).indexOf(':');
            if (colon < 0)
                continue;
            const QByteArray name = lines.at(i).left(colon).trimmed().toLower();
            const QByteArray value = lines.at(i).mid(colon + 1).trimmed();
            request.headers.insert(name, value);
            if (name == "content-length")
                length = value.toLongLong();
        }
        if (buffer.size() < headEnd + 4 + length)
            return;
        request.body = buffer.mid(headEnd + 4, length);
        m_buffers.remove(socket);
        requests.append(request);
        const Response response = m_handler(request);
        QByteArray out = "HTTP/1.1 " + QByteArray::number(response.status) + " X\r\n" +
                         "Content-Type: " + response.contentType + "\r\n" +
                         "Content-Length: " + QByteArray::number(response.body.size()) +
                         "\r\nConnection: close\r\n";
        for (const auto &[name, value] : response.headers)
            out += name + ": " + value + "\r\n";
        out += "\r\n" + response.body;
        socket->write(out);
        socket->disconnectFromHost();
    }

    QTcpServer m_server;
    QHash<QTcpSocket *, QByteArray> m_buffers;
    Handler m_handler;
};

} // namespace ts::testfake
