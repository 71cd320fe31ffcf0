// The headless live commands end to end through the built binary: simulate, tail (directory,
// rotation, SIGTERM flush, resume from the workspace ledger) and serve (loopback HTTP, SIGTERM
// flush, refusal to listen off loopback without a token).
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

namespace {

QString binary()
{
    const QString fromEnvironment = qEnvironmentVariable("TS_APP_BINARY");
    return fromEnvironment.isEmpty() ? QStringLiteral(TS_APP_BINARY) : fromEnvironment;
}

QByteArray line(int i)
{
    return QByteArrayLiteral("{\"ts\":\"2026-02-18T22:44:09.512Z\",\"identity\":\"cli-") +
           QByteArray::number(i) + QByteArrayLiteral("\",\"service\":\"graph\",\"status\":200}\n");
}

void appendTo(const QString &path, const QByteArray &data)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Append));
    QCOMPARE(file.write(data), data.size());
}

QList<QByteArray> readLines(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    QList<QByteArray> lines = file.readAll().split('\n');
    if (!lines.isEmpty() && lines.constLast().isEmpty())
        lines.removeLast();
    return lines;
}

// The identities ("cli-N") in an NDJSON file, sorted.
QStringList identities(const QString &path)
{
    static const QRegularExpression identity(QStringLiteral("\"identity\":\"(cli-\\d+)\""));
    QStringList out;
    for (const QByteArray &text : readLines(path)) {
        const auto match = identity.match(QString::fromUtf8(text));
        if (match.hasMatch())
            out.append(match.captured(1));
    }
    out.sort();
    return out;
}

QStringList expectedIdentities(int from, int to)
{
    QStringList out;
    for (int i = from; i < to; ++i)
        out.append(QStringLiteral("cli-%1").arg(i));
    out.sort();
    return out;
}

// A minimal HTTP/1.1 client on a plain socket (this test links no Qt Network), loopback only.
QByteArray httpPost(quint16 port, const QByteArray &path, const QByteArray &body)
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
    const QByteArray request = "POST " + path +
                               " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                               "application/x-ndjson\r\nContent-Length: " +
                               QByteArray::number(body.size()) + "\r\nConnection: close\r\n\r\n" +
                               body;
    qsizetype sent = 0;
    while (sent < request.size()) {
        const ssize_t n = ::send(fd, request.constData() + sent, size_t(request.size() - sent), 0);
        if (n <= 0)
            break;
        sent += n;
    }
    // Qt 6.4's server keeps the connection open: read the head, then Content-Length bytes.
    timeval timeout{10, 0};
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
            expected = headEnd + 4 + (match.hasMatch() ? match.captured(1).toLongLong() : 0);
        }
    }
    ::close(fd);
    return response;
}

} // namespace

class TestLiveCommands : public QObject
{
    Q_OBJECT
private slots:
    void simulateWritesDeterministicNdjson()
    {
        QTemporaryDir dir;
        const QStringList arguments{u"simulate"_qs,   u"--scenario"_qs, u"servicebus-producers"_qs,
                                    u"--duration"_qs, u"60"_qs,         u"--seed"_qs,
                                    u"5"_qs,          u"--out"_qs};
        QCOMPARE(QProcess::execute(binary(), arguments + QStringList{dir.filePath(u"a.ndjson"_qs)}),
                 0);
        QCOMPARE(QProcess::execute(binary(), arguments + QStringList{dir.filePath(u"b.ndjson"_qs)}),
                 0);
        const QList<QByteArray> a = readLines(dir.filePath(u"a.ndjson"_qs));
        QVERIFY(a.size() > 200);
        QCOMPARE(a, readLines(dir.filePath(u"b.ndjson"_qs)));
        QVERIFY(a.constLast().contains("\"namespace\":\"sb-orders-prod\""));
    }

    void simulateRefusesUnknownScenario()
    {
        QProcess process;
        process.start(binary(),
                      {u"simulate"_qs, u"--scenario"_qs, u"nope"_qs, u"--out"_qs, u"/dev/null"_qs});
        QVERIFY(process.waitForFinished(30000));
        QCOMPARE(process.exitCode(), 2);
        QVERIFY(process.readAllStandardError().contains("onenote-migration"));
    }

    // Lines written before SIGTERM are all stored, once, across a rotation in the directory.
    void tailDirectoryFlushesOnSigterm()
    {
        QTemporaryDir dir;
        const QString logs = dir.filePath(u"logs"_qs);
        QVERIFY(QDir().mkpath(logs));
        const QString out = dir.filePath(u"out.ndjson"_qs);
        appendTo(logs + u"/app.ndjson"_qs, line(0) + line(1) + line(2));
        QProcess tail;
        tail.start(binary(),
                   {u"tail"_qs, u"--out"_qs, out, u"--status-interval"_qs, u"0"_qs, logs});
        QVERIFY(tail.waitForStarted());
        QTRY_COMPARE_WITH_TIMEOUT(identities(out).size(), 3, 10000);
        for (int i = 3; i < 40; ++i)
            appendTo(logs + u"/app.ndjson"_qs, line(i));
        QVERIFY(QFile::rename(logs + u"/app.ndjson"_qs, logs + u"/app-1.ndjson"_qs));
        appendTo(logs + u"/app.ndjson"_qs, line(40) + line(41));
        appendTo(logs + u"/other.ndjson"_qs, line(42) + "not json\n");
        tail.terminate(); // SIGTERM right away: the final poll must still pick everything up
        QVERIFY(tail.waitForFinished(10000));
        QCOMPARE(tail.exitStatus(), QProcess::NormalExit);
        QCOMPARE(tail.exitCode(), 0);
        const QByteArray errors = tail.readAllStandardError();
        QVERIFY2(errors.contains("other.ndjson:2:"), errors.constData());
        QCOMPARE(identities(out), expectedIdentities(0, 43));
    }

    // A second run resumes from the workspace ledger: nothing twice, nothing lost.
    void tailResumesFromWorkspace()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath(u"app.ndjson"_qs);
        const QString workspace = dir.filePath(u"live.tsw"_qs);
        appendTo(log, line(0) + line(1) + line(2) + "{\"ts\":\"2026-02-18T22:4");
        for (int run = 0; run < 2; ++run) {
            const QString out = dir.filePath(QStringLiteral("run%1.ndjson").arg(run));
            QProcess tail;
            tail.start(binary(), {u"tail"_qs, u"--workspace"_qs, workspace, u"--out"_qs, out,
                                  u"--status-interval"_qs, u"0"_qs, log});
            QVERIFY(tail.waitForStarted());
            QTRY_COMPARE_WITH_TIMEOUT(identities(out).size(), 3, 10000);
            tail.terminate();
            QVERIFY(tail.waitForFinished(10000));
            QCOMPARE(tail.exitCode(), 0);
            QCOMPARE(identities(out),
                     run == 0 ? expectedIdentities(0, 3) : expectedIdentities(3, 6));
            // Complete the partial line and add more for the second run.
            if (run == 0)
                appendTo(log,
                         QByteArray("4:09.512Z\",\"identity\":\"cli-3\"}\n") + line(4) + line(5));
        }
    }

    // Restarts meet files changed while tail was stopped. Files are recognised by content: a
    // renamed or copied file resumes where its content was read up to, a file truncated and
    // rewritten is read again from its start (with a warning). Each run's own output (--out)
    // must hold exactly the lines that are new to the workspace, once.
    void tailRestartRecognisesContent_data()
    {
        QTest::addColumn<QString>("change");
        QTest::newRow("renamed within the glob") << u"rename"_qs;
        QTest::newRow("truncated and rewritten") << u"rewrite"_qs;
        QTest::newRow("copied into the glob") << u"copy"_qs;
    }
    void tailRestartRecognisesContent()
    {
        QFETCH(QString, change);
        QTemporaryDir dir;
        const QString logs = dir.filePath(u"logs"_qs);
        QVERIFY(QDir().mkpath(logs));
        const QString workspace = dir.filePath(u"live.tsw"_qs);
        const QString original = logs + u"/app.log"_qs;
        auto lines = [](int from, int to) {
            QByteArray data;
            for (int i = from; i < to; ++i)
                data += line(i);
            return data;
        };
        int runs = 0;
        // Runs tail until `expected` lines are out (in file order: a line read twice would come
        // before them), then stops it; returns its stderr.
        auto runTail = [&](const QStringList &expected) -> QByteArray {
            const QString out = dir.filePath(QStringLiteral("run%1.ndjson").arg(++runs));
            QProcess tail;
            tail.start(binary(), {u"tail"_qs, u"--workspace"_qs, workspace, u"--out"_qs, out,
                                  u"--status-interval"_qs, u"0"_qs, logs});
            if (!tail.waitForStarted())
                return "did not start";
            // Not reaching the count is reported by the comparison below.
            [[maybe_unused]] const bool reached =
                QTest::qWaitFor([&] { return identities(out).size() >= expected.size(); }, 20000);
            tail.terminate();
            tail.waitForFinished(10000);
            const QByteArray errors = tail.readAllStandardError();
            [&] { QCOMPARE(identities(out), expected); }();
            return errors;
        };

        appendTo(original, lines(0, 2000));
        runTail(expectedIdentities(0, 2000));
        if (QTest::currentTestFailed())
            return;
        QString grown = original;
        if (change == u"rename") {
            grown = logs + u"/app-old.log"_qs;
            QVERIFY(QFile::rename(original, grown));
        } else if (change == u"copy") {
            grown = logs + u"/app-copy.log"_qs;
            QVERIFY(QFile::copy(original, grown));
        } else {
            // Longer than before, so the old offset lies inside the new content.
            QFile file(original);
            QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
            file.write(lines(10000, 13000));
        }
        appendTo(grown, lines(20000, 20500));
        QStringList expected = expectedIdentities(20000, 20500);
        if (change == u"rewrite")
            expected = (expectedIdentities(10000, 13000) + expected);
        expected.sort();
        const QByteArray errors = runTail(expected);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(errors.contains("truncated or rewritten"), change == u"rewrite");
        // And once more: only what was appended since.
        appendTo(grown, lines(30000, 30100));
        runTail(expectedIdentities(30000, 30100));
    }

    void serveStoresPostsAndFlushesOnSigterm()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(u"served.ndjson"_qs);
        QProcess serve;
        serve.start(binary(), {u"serve"_qs, u"--listen"_qs, u"127.0.0.1:0"_qs, u"--out"_qs, out,
                               u"--status-interval"_qs, u"0"_qs});
        QVERIFY(serve.waitForStarted());
        QVERIFY(serve.waitForReadyRead(10000));
        const QByteArray announced = serve.readLine();
        const auto match =
            QRegularExpression(QStringLiteral("listening on http://127\\.0\\.0\\.1:(\\d+)"))
                .match(QString::fromUtf8(announced));
        QVERIFY2(match.hasMatch(), announced.constData());
        const quint16 port = quint16(match.captured(1).toUInt());
        const QByteArray ok = httpPost(port, "/ingest", line(0) + line(1) + line(2));
        QVERIFY2(ok.startsWith("HTTP/1.1 200"), ok.constData());
        const QByteArray bad = httpPost(port, "/ingest", line(3) + "oops\n");
        QVERIFY2(bad.startsWith("HTTP/1.1 400"), bad.constData());
        QVERIFY(bad.contains("\"line\":2"));
        serve.terminate();
        QVERIFY(serve.waitForFinished(10000));
        QCOMPARE(serve.exitCode(), 0);
        QCOMPARE(identities(out), expectedIdentities(0, 4));
    }

    void serveRefusesOpenAddressWithoutToken()
    {
        QTemporaryDir dir;
        const QString workspace = dir.filePath(u"open.tsw"_qs);
        QProcess serve;
        serve.start(binary(),
                    {u"serve"_qs, u"--listen"_qs, u"0.0.0.0:0"_qs, u"--workspace"_qs, workspace});
        QVERIFY(serve.waitForFinished(10000));
        QCOMPARE(serve.exitCode(), 1);
        QVERIFY(serve.readAllStandardError().contains("without a bearer token"));
        QVERIFY(!QFile::exists(workspace));
    }
};

QTEST_GUILESS_MAIN(TestLiveCommands)
#include "tst_livecommands.moc"
