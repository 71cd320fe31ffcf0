// Memory of `throttlescope serve` under a 1 GiB POST it must refuse: a wrong bearer token
// (Content-Length or chunked), or a body over the --max-body-mb cap (announced, chunked, or
// a small gzip body that expands past it). The server runs as a child
// process; its peak resident set (VmHWM in /proc/PID/status) is compared with its resident set
// at idle (after one small valid POST). The client sends the head, then the body in 1 MiB
// writes until the server closes the connection or the whole body is sent.
//
//   bench_serve_ingest [--mib N]        (default 1024)
//
// TS_APP_BINARY selects the binary (e.g. an older build, for a before/after figure).
#include "ingest/inflate.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <arpa/inet.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

namespace {

constexpr qint64 kMiB = 1024 * 1024;
const QByteArray kToken = QByteArrayLiteral("bench-token-1f2e3d");

QString binary()
{
    const QString fromEnvironment = qEnvironmentVariable("TS_APP_BINARY");
    return fromEnvironment.isEmpty() ? QStringLiteral(TS_APP_BINARY) : fromEnvironment;
}

// "VmRSS" / "VmHWM" of a process, in KiB.
qint64 statusKiB(qint64 pid, const char *field)
{
    QFile status(QStringLiteral("/proc/%1/status").arg(pid));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith(field))
            return line.mid(qsizetype(std::strlen(field)) + 1)
                .trimmed()
                .split(' ')
                .value(0)
                .toLongLong();
    }
    return -1;
}

int connectTo(quint16 port)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    timeval timeout{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<const sockaddr *>(&address), sizeof address) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// A small valid POST (warms the server up) answered with Connection: close.
bool postOne(quint16 port)
{
    const int fd = connectTo(port);
    if (fd < 0)
        return false;
    const QByteArray body =
        "{\"ts\":\"2026-02-18T22:44:09.512Z\",\"identity\":\"b\",\"status\":200}\n";
    const QByteArray request =
        "POST /ingest HTTP/1.1\r\nHost: 127.0.0.1:" + QByteArray::number(port) +
        "\r\nAuthorization: Bearer " + kToken +
        "\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\nConnection: close\r\n\r\n" +
        body;
    ::send(fd, request.constData(), size_t(request.size()), MSG_NOSIGNAL);
    char buffer[512];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    ::close(fd);
    return n > 12 && std::strncmp(buffer + 9, "200", 3) == 0;
}

struct Outcome
{
    int status = 0;
    double answerMs = -1;        // from the head's send to the first answer byte
    qint64 sentBeforeAnswer = 0; // body bytes
    qint64 sentTotal = 0;
};

// A gzip body that expands to `bytes` of blanks (a few hundred KiB on the wire).
Outcome postBomb(quint16 port, const QByteArray &authorization, qint64 bytes)
{
    Outcome outcome;
    const int fd = connectTo(port);
    if (fd < 0)
        return outcome;
    const QByteArray body = ts::live::gzipCompress(QByteArray(bytes, ' '));
    const QByteArray request =
        "POST /ingest HTTP/1.1\r\nHost: 127.0.0.1:" + QByteArray::number(port) +
        "\r\nAuthorization: " + authorization +
        "\r\nContent-Encoding: gzip\r\nContent-Length: " + QByteArray::number(body.size()) +
        "\r\n\r\n" + body;
    QElapsedTimer clock;
    clock.start();
    ::send(fd, request.constData(), size_t(request.size()), MSG_NOSIGNAL);
    outcome.sentTotal = outcome.sentBeforeAnswer = body.size();
    char buffer[512];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    outcome.answerMs = double(clock.nsecsElapsed()) / 1e6;
    if (n > 12 && std::strncmp(buffer, "HTTP/1.1 ", 9) == 0)
        outcome.status = QByteArray(buffer + 9, 3).toInt();
    ::close(fd);
    return outcome;
}

Outcome postHuge(quint16 port, const QByteArray &authorization, bool chunked, qint64 bytes)
{
    Outcome outcome;
    const int fd = connectTo(port);
    if (fd < 0)
        return outcome;
    QByteArray head = "POST /ingest HTTP/1.1\r\nHost: 127.0.0.1:" + QByteArray::number(port) +
                      "\r\nContent-Type: application/x-ndjson\r\n";
    if (!authorization.isEmpty())
        head += "Authorization: " + authorization + "\r\n";
    head += chunked ? QByteArray("Transfer-Encoding: chunked\r\n")
                    : "Content-Length: " + QByteArray::number(bytes) + "\r\n";
    head += "\r\n";
    QElapsedTimer clock;
    clock.start();
    ::send(fd, head.constData(), size_t(head.size()), MSG_NOSIGNAL);
    const QByteArray line = "{\"ts\":\"2026-02-18T22:44:09.512Z\",\"identity\":\"x\"}\n";
    QByteArray block;
    while (block.size() < kMiB)
        block += line;
    block.truncate(kMiB);
    const QByteArray chunkHead = QByteArray::number(kMiB, 16) + "\r\n";
    QByteArray answer;
    auto pollAnswer = [&] {
        char buffer[4096];
        const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
        if (n > 0) {
            if (answer.isEmpty()) {
                outcome.answerMs = double(clock.nsecsElapsed()) / 1e6;
                outcome.sentBeforeAnswer = outcome.sentTotal;
            }
            answer.append(buffer, n);
        }
    };
    while (outcome.sentTotal < bytes) {
        const QByteArray piece = chunked ? chunkHead + block + "\r\n" : block;
        const ssize_t n = ::send(fd, piece.constData(), size_t(piece.size()), MSG_NOSIGNAL);
        pollAnswer();
        if (n <= 0)
            break; // closed by the server (or the send timed out)
        outcome.sentTotal += kMiB;
    }
    if (chunked && outcome.sentTotal >= bytes)
        ::send(fd, "0\r\n\r\n", 5, MSG_NOSIGNAL);
    timeval timeout{30, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    while (answer.indexOf("\r\n\r\n") < 0) {
        char buffer[4096];
        const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n <= 0)
            break;
        if (answer.isEmpty()) {
            outcome.answerMs = double(clock.nsecsElapsed()) / 1e6;
            outcome.sentBeforeAnswer = outcome.sentTotal;
        }
        answer.append(buffer, n);
    }
    ::close(fd);
    if (answer.startsWith("HTTP/1.1 "))
        outcome.status = answer.mid(9, 3).toInt();
    return outcome;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    qint64 mib = 1024;
    const QStringList args = app.arguments();
    for (qsizetype i = 1; i + 1 < args.size(); ++i) {
        if (args.at(i) == u"--mib")
            mib = args.at(i + 1).toLongLong();
    }
    const qint64 bytes = mib * kMiB;

    struct Scenario
    {
        const char *name;
        bool token; // the server requires kToken
        QByteArray authorization;
        bool chunked;
        bool gzip = false;
    };
    const Scenario scenarios[] = {
        {"wrong token, Content-Length", true, "Bearer wrong", false},
        {"wrong token, chunked", true, "Bearer wrong", true},
        {"no token, over the 32 MiB cap, Content-Length", false, {}, false},
        {"valid token, over the 32 MiB cap, chunked", true, "Bearer " + kToken, true},
        {"valid token, gzip expanding past the cap", true, "Bearer " + kToken, false, true},
    };
    std::printf("binary: %s\n1 body of %lld MiB per scenario; server RSS from /proc/PID/status\n\n",
                qPrintable(binary()), mib);
    std::printf("%-48s %6s %10s %14s %12s %10s %10s %12s\n", "scenario", "status", "answer ms",
                "sent before", "sent total", "idle MB", "peak MB", "peak-idle MB");
    for (const Scenario &scenario : scenarios) {
        QTemporaryDir dir;
        QProcess serve;
        QStringList arguments{QStringLiteral("serve"),
                              QStringLiteral("--listen"),
                              QStringLiteral("127.0.0.1:0"),
                              QStringLiteral("--workspace"),
                              dir.filePath(QStringLiteral("bench.tsw")),
                              QStringLiteral("--status-interval"),
                              QStringLiteral("0")};
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        if (scenario.token)
            environment.insert(QStringLiteral("TS_INGEST_TOKEN"), QString::fromLatin1(kToken));
        else
            environment.remove(QStringLiteral("TS_INGEST_TOKEN"));
        serve.setProcessEnvironment(environment);
        serve.start(binary(), arguments);
        if (!serve.waitForStarted() || !serve.waitForReadyRead(15000)) {
            std::printf("%s: serve did not start\n", scenario.name);
            return 1;
        }
        const auto match = QRegularExpression(QStringLiteral(":(\\d+)\\s*$"))
                               .match(QString::fromUtf8(serve.readLine()));
        const quint16 port = quint16(match.captured(1).toUInt());
        // (Without a token configured, the warm-up's Authorization header is ignored.)
        if (!postOne(port)) {
            std::printf("%s: the warm-up POST failed\n", scenario.name);
            return 1;
        }
        const qint64 pid = serve.processId();
        const qint64 idleKiB = statusKiB(pid, "VmRSS:");
        const Outcome outcome =
            scenario.gzip ? postBomb(port, scenario.authorization, bytes)
                          : postHuge(port, scenario.authorization, scenario.chunked, bytes);
        const qint64 peakKiB = statusKiB(pid, "VmHWM:");
        std::printf("%-48s %6d %10.1f %10.1f MiB %8.1f MiB %10.1f %10.1f %12.1f\n", scenario.name,
                    outcome.status, outcome.answerMs, double(outcome.sentBeforeAnswer) / kMiB,
                    double(outcome.sentTotal) / kMiB, idleKiB / 1024.0, peakKiB / 1024.0,
                    (peakKiB - idleKiB) / 1024.0);
        std::fflush(stdout);
        serve.terminate();
        if (!serve.waitForFinished(30000))
            serve.kill();
    }
    return 0;
}
