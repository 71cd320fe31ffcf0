// Exactness against a real limiter: a private nginx (loopback, temporary prefix, one process)
// rate-limits requests with limit_req using the numbers of the built-in `nginx` policy and
// writes the canonical NDJSON log; the engine replays that log and must predict nginx's 429s
// one for one, request by request.
//
// The traffic is bursts from three identities separated by pauses. The pauses keep a margin of
// at least ~10 ms from the instants where one more request would fit (multiples of the 50 ms
// emission interval), so the decisions do not hinge on a millisecond: nginx's limit_req reads
// its cached clock, which the log's $msec reports, but the margin keeps the test honest even on
// builds where limit_req uses the monotonic clock.

#include "engine/throttleengine.h"
#include "policy/policy.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRandomGenerator>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <cmath>

using namespace ts;

namespace {

const QString kNginx = QStringLiteral("/usr/sbin/nginx");

quint16 freeLoopbackPort()
{
    QTcpServer probe;
    if (!probe.listen(QHostAddress::LocalHost, 0))
        return 0;
    return probe.serverPort();
}

// One keep-alive HTTP/1.1 request; returns the status code (0 on failure).
int sendRequest(QTcpSocket &socket, const QByteArray &identity, int sequence)
{
    const QByteArray request = "GET /ok.txt HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Identity: " + identity
                               + "\r\nX-Seq: " + QByteArray::number(sequence) + "\r\n\r\n";
    socket.write(request);
    if (!socket.waitForBytesWritten(5000))
        return 0;
    QByteArray response;
    qsizetype headerEnd = -1;
    qint64 contentLength = -1;
    while (true) {
        if (headerEnd < 0) {
            headerEnd = response.indexOf("\r\n\r\n");
            if (headerEnd >= 0) {
                const QByteArray headers = response.left(headerEnd).toLower();
                const qsizetype at = headers.indexOf("content-length:");
                contentLength = at >= 0 ? headers.mid(at + 15, headers.indexOf('\r', at) - at - 15)
                                              .trimmed()
                                              .toLongLong()
                                        : 0;
            }
        }
        if (headerEnd >= 0 && response.size() >= headerEnd + 4 + contentLength)
            break;
        if (!socket.waitForReadyRead(5000))
            return 0;
        response += socket.readAll();
    }
    // "HTTP/1.1 200 OK"
    return response.mid(9, 3).toInt();
}

} // namespace

class TestNginxGroundTruth : public QObject
{
    Q_OBJECT

private slots:
    void predictionsMatchNginx_data();
    void predictionsMatchNginx();
};

void TestNginxGroundTruth::predictionsMatchNginx_data()
{
    QTest::addColumn<quint32>("seed");
    QTest::newRow("seed 7") << 7u;
    QTest::newRow("seed 11") << 11u;
}

void TestNginxGroundTruth::predictionsMatchNginx()
{
    QFETCH(quint32, seed);
    if (!QFile::exists(kNginx))
        QSKIP("nginx is not installed (/usr/sbin/nginx)");

    QString error;
    const auto policy = PolicySet::builtinPolicy(QStringLiteral("nginx"), &error);
    QVERIFY2(policy, qPrintable(error));
    const PolicyLimit &limit = policy->limits.first();
    QCOMPARE(limit.algorithm, Algorithm::LeakyBucket);
    QVERIFY(limit.nodelay);

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString root = dir.path();
    QVERIFY(QDir(root).mkpath(QStringLiteral("www")));
    QVERIFY(QDir(root).mkpath(QStringLiteral("tmp")));
    QFile page(root + QStringLiteral("/www/ok.txt"));
    QVERIFY(page.open(QIODevice::WriteOnly));
    page.write("ok\n");
    page.close();

    const quint16 port = freeLoopbackPort();
    QVERIFY(port != 0);
    // The zone mirrors the built-in policy: rate and burst come from it, so this test checks the
    // shipped example, not a private copy of the numbers.
    const QString config = QStringLiteral(R"(daemon off;
master_process off;
worker_processes 1;
error_log %1/error.log info;
pid %1/nginx.pid;
events { worker_connections 64; }
http {
    client_body_temp_path %1/tmp/body;
    proxy_temp_path %1/tmp/proxy;
    fastcgi_temp_path %1/tmp/fastcgi;
    uwsgi_temp_path %1/tmp/uwsgi;
    scgi_temp_path %1/tmp/scgi;
    log_format canonical escape=json '{"ts":$msec,"service":"nginx","identity":"$http_x_identity",'
        '"method":"$request_method","url":"$request_uri","status":$status,"requestId":"$http_x_seq"}';
    limit_req_zone $http_x_identity zone=api:1m rate=%2;
    limit_req_status 429;
    server {
        listen 127.0.0.1:%3;
        access_log %1/access.log canonical;
        root %1/www;
        location / {
            limit_req zone=api burst=%4 nodelay;
        }
    }
}
)")
                               .arg(root, limit.rate)
                               .arg(port)
                               .arg(qRound(limit.burst));
    QFile configFile(root + QStringLiteral("/nginx.conf"));
    QVERIFY(configFile.open(QIODevice::WriteOnly));
    configFile.write(config.toUtf8());
    configFile.close();

    QProcess nginx;
    nginx.setProcessChannelMode(QProcess::MergedChannels);
    nginx.start(kNginx, {QStringLiteral("-p"), root, QStringLiteral("-e"),
                         root + QStringLiteral("/error.log"), QStringLiteral("-c"),
                         root + QStringLiteral("/nginx.conf")});
    QVERIFY2(nginx.waitForStarted(5000), qPrintable(nginx.errorString()));
    auto stopNginx = qScopeGuard([&nginx] {
        nginx.terminate();
        if (!nginx.waitForFinished(5000))
            nginx.kill();
        nginx.waitForFinished(2000);
    });

    const QList<QByteArray> identities{"alpha", "bravo", "charlie"};
    QList<QTcpSocket *> sockets;
    auto deleteSockets = qScopeGuard([&sockets] { qDeleteAll(sockets); });
    for (int i = 0; i < identities.size(); ++i) {
        auto *socket = new QTcpSocket;
        sockets.append(socket);
        bool connected = false;
        for (int attempt = 0; attempt < 50 && !connected; ++attempt) {
            socket->connectToHost(QHostAddress::LocalHost, port);
            connected = socket->waitForConnected(200);
            if (!connected) {
                socket->abort();
                QThread::msleep(100);
            }
        }
        QVERIFY2(connected, qPrintable(QString::fromUtf8(nginx.readAll())));
    }

    // Pauses in ms: drains of 1.5, 2.5, 3.5 and 6.5 requests at 20 r/s, and a full reset.
    const QList<int> pauses{0, 0, 75, 125, 175, 325, 600};
    QRandomGenerator rng(seed);
    QHash<int, int> sentStatus; // sequence -> status nginx answered
    int sequence = 0;
    while (sequence < 360) {
        const int who = int(rng.bounded(quint32(identities.size())));
        const int burst = 1 + int(rng.bounded(10u));
        for (int i = 0; i < burst; ++i) {
            const int status = sendRequest(*sockets[who], identities[who], sequence);
            QVERIFY2(status == 200 || status == 429,
                     qPrintable(QStringLiteral("request %1: status %2").arg(sequence).arg(status)));
            sentStatus.insert(sequence++, status);
        }
        const int pause = pauses[int(rng.bounded(quint32(pauses.size())))];
        if (pause > 0)
            QThread::msleep(ulong(pause));
    }
    stopNginx.dismiss();
    nginx.terminate();
    QVERIFY(nginx.waitForFinished(5000));

    QFile log(root + QStringLiteral("/access.log"));
    QVERIFY(log.open(QIODevice::ReadOnly));
    ThrottleEngine engine(PolicySet::builtin());
    int lines = 0;
    int rejected = 0;
    int mismatches = 0;
    QString firstMismatch;
    while (!log.atEnd()) {
        const QByteArray line = log.readLine().trimmed();
        if (line.isEmpty())
            continue;
        QJsonParseError parseError;
        const QJsonObject record = QJsonDocument::fromJson(line, &parseError).object();
        QVERIFY2(parseError.error == QJsonParseError::NoError, line.constData());
        RequestEvent event;
        // $msec is seconds with exactly three decimals.
        event.tsMs = qint64(std::llround(record.value(u"ts").toDouble() * 1000.0));
        event.service = record.value(u"service").toString();
        event.identity = record.value(u"identity").toString();
        event.method = record.value(u"method").toString();
        event.url = record.value(u"url").toString();
        event.status = record.value(u"status").toInt();
        event.requestId = record.value(u"requestId").toString();
        const int seq = event.requestId.toInt();
        QCOMPARE(event.status, sentStatus.value(seq, -1)); // the log is what the client saw
        const ThrottleEngine::Verdict verdict = engine.add(event);
        QVERIFY(verdict.matched);
        const bool nginxRejected = event.status == 429;
        rejected += nginxRejected ? 1 : 0;
        if (verdict.predictedThrottled != nginxRejected) {
            if (mismatches++ == 0) {
                firstMismatch = QStringLiteral("request %1 (%2 at %3): nginx %4, engine %5")
                                    .arg(seq)
                                    .arg(event.identity)
                                    .arg(event.tsMs)
                                    .arg(event.status)
                                    .arg(verdict.predictedThrottled ? u"429" : u"200");
            }
        }
        ++lines;
    }
    QCOMPARE(lines, sequence);
    QVERIFY2(mismatches == 0, qPrintable(QStringLiteral("%1 mismatches; first: %2")
                                             .arg(mismatches)
                                             .arg(firstMismatch)));
    // The traffic must exercise both sides of the limiter.
    QVERIFY2(rejected >= 20, qPrintable(QStringLiteral("only %1 rejections").arg(rejected)));
    QVERIFY2(lines - rejected >= 100, qPrintable(QStringLiteral("only %1 accepted").arg(lines - rejected)));

    qint64 predicted = 0;
    qint64 observed = 0;
    for (const ScopeSummary &scope : engine.scopes()) {
        QCOMPARE(scope.policy, QStringLiteral("nginx"));
        QCOMPARE(scope.algorithm, QStringLiteral("leaky-bucket"));
        QCOMPARE(scope.predictedThrottled, scope.observedThrottled);
        QVERIFY(scope.peakUsage <= scope.capacity);
        predicted += scope.predictedThrottled;
        observed += scope.observedThrottled;
    }
    QCOMPARE(predicted, qint64(rejected));
    QCOMPARE(observed, qint64(rejected));
}

QTEST_GUILESS_MAIN(TestNginxGroundTruth)
#include "tst_nginx_groundtruth.moc"
