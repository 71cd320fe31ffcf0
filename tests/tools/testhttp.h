#pragma once
// A minimal blocking HTTP/1.1 client on a plain loopback socket, for the tests that drive
// `throttlescope serve` as a separate process (they link no Qt Network). It sends the request
// bytes as given and reads the answer's head, then Content-Length bytes (or until the server
// closes), with a receive timeout so a silent server fails the test instead of hanging it.

#include <QByteArray>
#include <QRegularExpression>
#include <QString>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

namespace ts::testhttp {

inline QByteArray exchange(quint16 port, const QByteArray &request, int timeoutSeconds = 10)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0) {
        ::close(fd);
        return {};
    }
    qsizetype sent = 0;
    while (sent < request.size()) {
        const ssize_t n =
            ::send(fd, request.constData() + sent, size_t(request.size() - sent), MSG_NOSIGNAL);
        if (n <= 0)
            break;
        sent += n;
    }
    timeval timeout{timeoutSeconds, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    QByteArray response;
    char buffer[4096];
    qsizetype expected = -1;
    while (expected < 0 || response.size() < expected) {
        const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n <= 0)
            break;
        response.append(buffer, n);
        const qsizetype headEnd = response.indexOf("\r\n\r\n");
        if (expected < 0 && headEnd >= 0) {
            static const QRegularExpression length(QStringLiteral("(?i)content-length:\\s*(\\d+)"));
            const auto match = length.match(QString::fromLatin1(response.left(headEnd)));
            if (match.hasMatch())
                expected = headEnd + 4 + match.captured(1).toLongLong();
        }
    }
    ::close(fd);
    return response;
}

// POST with Host, Content-Type and Content-Length filled in; extraHeaders are whole lines
// ending in "\r\n" (an Authorization header, say).
inline QByteArray post(quint16 port, const QByteArray &path, const QByteArray &body,
                       const QByteArray &contentType = "application/x-ndjson",
                       const QByteArray &extraHeaders = {})
{
    return exchange(port, "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" +
                              QByteArray::number(port) + "\r\nContent-Type: " + contentType +
                              "\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n" +
                              extraHeaders + "Connection: close\r\n\r\n" + body);
}

inline QByteArray get(quint16 port, const QByteArray &path, const QByteArray &extraHeaders = {})
{
    return exchange(port, "GET " + path +
                              " HTTP/1.1\r\nHost: 127.0.0.1:" + QByteArray::number(port) + "\r\n" +
                              extraHeaders + "Connection: close\r\n\r\n");
}

} // namespace ts::testhttp
