// The HTTP listener against real HTTP clients on 127.0.0.1: valid, malformed, oversize, gzip,
// token and concurrent posts, and the health document.
#include "live/inflate.h"
#include "live/ingestlistener.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QSet>
#include <QSignalSpy>
#include <QTest>

#include <memory>

using namespace ts;
using namespace ts::live;

namespace {

struct CollectingSink final : IngestSink
{
    QList<RequestEvent> events;
    QList<MalformedRecord> malformed;
    void onEvent(RequestEvent &&event) override { events.append(std::move(event)); }
    void onMalformed(MalformedRecord &&record) override { malformed.append(std::move(record)); }
};

struct Answer
{
    int status = 0;
    QJsonObject json;
    QByteArray raw;
    QByteArray authenticate;
};

QByteArray requestLine(int i, int status = 200)
{
    return QByteArrayLiteral("{\"ts\":\"2026-02-18T22:44:09.512Z\",\"identity\":\"sp-") +
           QByteArray::number(i) +
           QByteArrayLiteral("\",\"service\":\"fabric\",\"method\":\"GET\",\"url\":\"https://"
                             "api.fabric.microsoft.com/v1/workspaces\",\"status\":") +
           QByteArray::number(status) + "}";
}

} // namespace

class TestIngestListener : public QObject
{
    Q_OBJECT

    QNetworkAccessManager m_network;

    static QUrl url(const IngestListener &listener, const QString &path)
    {
        return QUrl(QStringLiteral("http://127.0.0.1:%1%2").arg(listener.port()).arg(path));
    }

    Answer send(QNetworkReply *reply)
    {
        Answer answer;
        if (!reply->isFinished()) {
            QSignalSpy finished(reply, &QNetworkReply::finished);
            if (!finished.wait(10000))
                return answer;
        }
        answer.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        answer.raw = reply->readAll();
        answer.json = QJsonDocument::fromJson(answer.raw).object();
        answer.authenticate = reply->rawHeader("WWW-Authenticate");
        reply->deleteLater();
        return answer;
    }

    Answer post(const IngestListener &listener, const QString &path, const QByteArray &body,
                const QList<QPair<QByteArray, QByteArray>> &headers = {})
    {
        QNetworkRequest request(url(listener, path));
        request.setHeader(QNetworkRequest::ContentTypeHeader,
                          QByteArrayLiteral("application/x-ndjson"));
        for (const auto &header : headers)
            request.setRawHeader(header.first, header.second);
        return send(m_network.post(request, body));
    }

    Answer get(const IngestListener &listener, const QString &path,
               const QList<QPair<QByteArray, QByteArray>> &headers = {})
    {
        QNetworkRequest request(url(listener, path));
        for (const auto &header : headers)
            request.setRawHeader(header.first, header.second);
        return send(m_network.get(request));
    }

    static std::unique_ptr<IngestListener> startListener(CollectingSink &sink,
                                                         ListenerOptions options = {})
    {
        auto listener = std::make_unique<IngestListener>(sink);
        QString error;
        if (!listener->start(options, &error))
            qWarning("listener: %s", qPrintable(error));
        return listener;
    }

private slots:
    void validBodies_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<int>("events");
        QTest::newRow("one-line-no-newline") << requestLine(1) << 1;
        QTest::newRow("lf") << requestLine(1) + '\n' + requestLine(2) + '\n' << 2;
        QTest::newRow("crlf") << requestLine(1) + "\r\n" + requestLine(2) + "\r\n" << 2;
        QTest::newRow("blank-lines-skipped")
            << "\n" + requestLine(1) + "\n   \n\n" + requestLine(2) + "\n\n"
            << 2;
        QTest::newRow("breaker-and-annotation")
            << QByteArrayLiteral("{\"ts\":\"2026-02-18T22:44:12Z\",\"type\":\"breaker\",\"scope\":"
                                 "\"app\",\"state\":\"open\"}\n{\"ts\":\"2026-02-18T22:44:13Z\","
                                 "\"type\":\"annotation\",\"text\":\"fix on\"}")
            << 2;
        QTest::newRow("empty-body") << QByteArray() << 0;
    }
    void validBodies()
    {
        QFETCH(QByteArray, body);
        QFETCH(int, events);
        CollectingSink sink;
        auto listener = startListener(sink);
        QVERIFY(listener->port() != 0);
        QSignalSpy ingested(listener.get(), &IngestListener::eventsIngested);
        const Answer answer = post(*listener, u"/ingest"_qs, body);
        QCOMPARE(answer.status, 200);
        QCOMPARE(answer.json.value(u"accepted").toInt(), events);
        QCOMPARE(sink.events.size(), events);
        QCOMPARE(sink.malformed.size(), 0);
        QCOMPARE(ingested.size(), events > 0 ? 1 : 0);
        for (const RequestEvent &event : std::as_const(sink.events)) {
            QCOMPARE(event.source, u"http"_qs);
            QVERIFY(event.line >= 1);
        }
        if (events == 2 && sink.events.constFirst().isRequest()) {
            QCOMPARE(sink.events.at(0).identity, u"sp-1"_qs);
            QCOMPARE(sink.events.at(1).identity, u"sp-2"_qs);
            QCOMPARE(sink.events.at(0).status, 200);
            QCOMPARE(sink.events.at(0).tsMs, Q_INT64_C(1771454649512));
        }
    }

    void malformedLinesAreNamedAndGoodOnesKept()
    {
        CollectingSink sink;
        auto listener = startListener(sink);
        const QByteArray body = requestLine(1) + "\n" +        // 1 good
                                "this is not json\n" +         // 2 bad
                                requestLine(3) + "\n" +        // 3 good
                                "{\"identity\":\"no-ts\"}\n" + // 4 bad: no ts
                                "\n" +                         // 5 blank
                                requestLine(6) + "\n" +        // 6 good
                                "[1,2,3]\n";                   // 7 bad: not an object
        const Answer answer = post(*listener, u"/ingest"_qs, body);
        QCOMPARE(answer.status, 400);
        QCOMPARE(answer.json.value(u"accepted").toInt(), 3);
        QCOMPARE(answer.json.value(u"rejected").toInt(), 3);
        const QJsonArray errors = answer.json.value(u"errors").toArray();
        QCOMPARE(errors.size(), 3);
        QList<int> badLines;
        for (const QJsonValue &error : errors) {
            badLines.append(error.toObject().value(u"line").toInt());
            QVERIFY2(!error.toObject().value(u"reason").toString().isEmpty(), "reason missing");
        }
        QCOMPARE(badLines, (QList<int>{2, 4, 7}));
        QCOMPARE(sink.events.size(), 3);
        QCOMPARE(sink.events.at(2).line, 6);
        QCOMPARE(sink.malformed.size(), 3);
        QCOMPARE(sink.malformed.at(1).line, 4);
        QCOMPARE(sink.malformed.at(1).source, u"http"_qs);
        QCOMPARE(listener->health().malformedLines, 3);
    }

    void errorListIsBounded()
    {
        CollectingSink sink;
        ListenerOptions options;
        options.maxReportedErrors = 10;
        auto listener = startListener(sink, options);
        QByteArray body;
        for (int i = 0; i < 500; ++i)
            body += "garbage\n";
        const Answer answer = post(*listener, u"/ingest"_qs, body);
        QCOMPARE(answer.status, 400);
        QCOMPARE(answer.json.value(u"rejected").toInt(), 500);
        QCOMPARE(answer.json.value(u"errors").toArray().size(), 10);
        QCOMPARE(answer.json.value(u"errorsOmitted").toInt(), 490);
    }

    void oversizeBodies_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<bool>("gzip");
        QByteArray big;
        for (int i = 0; big.size() <= 4096; ++i)
            big += requestLine(i) + '\n';
        QTest::newRow("plain") << big << false;
        // Compresses to far below the limit, expands far beyond it.
        QTest::newRow("gzip-bomb") << QByteArray(2 * 1024 * 1024, ' ') << true;
    }
    void oversizeBodies()
    {
        QFETCH(QByteArray, body);
        QFETCH(bool, gzip);
        CollectingSink sink;
        ListenerOptions options;
        options.maxBodyBytes = 4096;
        auto listener = startListener(sink, options);
        const QByteArray sent = gzip ? gzipCompress(body) : body;
        if (gzip)
            QVERIFY(sent.size() < options.maxBodyBytes);
        const Answer answer =
            post(*listener, u"/ingest"_qs, sent,
                 gzip ? QList<QPair<QByteArray, QByteArray>>{{"Content-Encoding", "gzip"}}
                      : QList<QPair<QByteArray, QByteArray>>{});
        QCOMPARE(answer.status, 413);
        QVERIFY(answer.json.value(u"error").toString().contains(u"4096"));
        QCOMPARE(sink.events.size(), 0);
        // Just under the limit is fine.
        QCOMPARE(post(*listener, u"/ingest"_qs, requestLine(1)).status, 200);
    }

    void gzipBodies_data()
    {
        QTest::addColumn<QByteArray>("encoding");
        QTest::addColumn<bool>("corrupt");
        QTest::addColumn<int>("status");
        QTest::newRow("gzip") << QByteArray("gzip") << false << 200;
        QTest::newRow("GZIP-upper") << QByteArray("GZIP") << false << 200;
        QTest::newRow("corrupt") << QByteArray("gzip") << true << 400;
        QTest::newRow("brotli-unsupported") << QByteArray("br") << false << 415;
    }
    void gzipBodies()
    {
        QFETCH(QByteArray, encoding);
        QFETCH(bool, corrupt);
        QFETCH(int, status);
        CollectingSink sink;
        auto listener = startListener(sink);
        QByteArray body;
        for (int i = 0; i < 300; ++i)
            body += requestLine(i, i % 7 == 0 ? 429 : 200) + '\n';
        QByteArray compressed = gzipCompress(body);
        if (corrupt)
            compressed.truncate(compressed.size() / 2);
        const Answer answer =
            post(*listener, u"/ingest"_qs, compressed, {{"Content-Encoding", encoding}});
        QCOMPARE(answer.status, status);
        QCOMPARE(sink.events.size(), status == 200 ? 300 : 0);
        if (status == 200) {
            QCOMPARE(sink.events.at(7).status, 429);
            QCOMPARE(sink.events.at(299).identity, u"sp-299"_qs);
        }
    }

    void bearerToken_data()
    {
        QTest::addColumn<QByteArray>("authorization");
        QTest::addColumn<int>("status");
        QTest::newRow("missing") << QByteArray() << 401;
        QTest::newRow("wrong") << QByteArray("Bearer nope") << 401;
        QTest::newRow("prefix-of-token") << QByteArray("Bearer s3cret-tok") << 401;
        QTest::newRow("right") << QByteArray("Bearer s3cret-token") << 200;
    }
    void bearerToken()
    {
        QFETCH(QByteArray, authorization);
        QFETCH(int, status);
        CollectingSink sink;
        ListenerOptions options;
        options.bearerToken = u"s3cret-token"_qs;
        auto listener = startListener(sink, options);
        QList<QPair<QByteArray, QByteArray>> headers;
        if (!authorization.isEmpty())
            headers.append({"Authorization", authorization});
        const Answer answer = post(*listener, u"/ingest"_qs, requestLine(1), headers);
        QCOMPARE(answer.status, status);
        QCOMPARE(sink.events.size(), status == 200 ? 1 : 0);
        if (status == 401)
            QVERIFY(answer.authenticate.startsWith("Bearer"));
        QCOMPARE(get(*listener, u"/health"_qs, headers).status, status);
    }

    void nonLoopbackNeedsToken()
    {
        CollectingSink sink;
        IngestListener listener(sink);
        ListenerOptions options;
        options.address = QHostAddress(QHostAddress::AnyIPv4);
        QString error;
        QVERIFY(!listener.start(options, &error));
        QVERIFY2(error.contains(u"token"), qPrintable(error));
        QVERIFY2(error.contains(u"0.0.0.0"), qPrintable(error));
        QCOMPARE(listener.port(), quint16(0));
    }

    void portInUseIsReported()
    {
        CollectingSink sink;
        auto first = startListener(sink);
        IngestListener second(sink);
        ListenerOptions options;
        options.port = first->port();
        QString error;
        QVERIFY(!second.start(options, &error));
        QVERIFY2(error.contains(QString::number(first->port())), qPrintable(error));
    }

    void parseListenAddress_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<QString>("address");
        QTest::addColumn<int>("port");
        QTest::newRow("ipv4") << u"127.0.0.1:8080"_qs << true << u"127.0.0.1"_qs << 8080;
        QTest::newRow("localhost") << u"localhost:9"_qs << true << u"127.0.0.1"_qs << 9;
        QTest::newRow("port-only") << u"4318"_qs << true << u"127.0.0.1"_qs << 4318;
        QTest::newRow("colon-port") << u":4318"_qs << true << u"127.0.0.1"_qs << 4318;
        QTest::newRow("ipv6") << u"[::1]:4318"_qs << true << u"::1"_qs << 4318;
        QTest::newRow("any") << u"0.0.0.0:80"_qs << true << u"0.0.0.0"_qs << 80;
        QTest::newRow("bad-port") << u"127.0.0.1:http"_qs << false << QString() << 0;
        QTest::newRow("port-too-big") << u"127.0.0.1:70000"_qs << false << QString() << 0;
        QTest::newRow("hostname") << u"example.com:80"_qs << false << QString() << 0;
    }
    void parseListenAddress()
    {
        QFETCH(QString, text);
        QFETCH(bool, valid);
        QFETCH(QString, address);
        QFETCH(int, port);
        QHostAddress parsedAddress;
        quint16 parsedPort = 0;
        QString error;
        QCOMPARE(IngestListener::parseListenAddress(text, &parsedAddress, &parsedPort, &error),
                 valid);
        if (valid) {
            QCOMPARE(parsedAddress, QHostAddress(address));
            QCOMPARE(int(parsedPort), port);
        } else {
            QVERIFY(!error.isEmpty());
        }
    }

    void concurrentPosts()
    {
        CollectingSink sink;
        auto listener = startListener(sink);
        constexpr int kRequests = 24;
        constexpr int kLines = 150;
        QList<QNetworkReply *> replies;
        for (int r = 0; r < kRequests; ++r) {
            QByteArray body;
            for (int i = 0; i < kLines; ++i)
                body += requestLine(r * kLines + i) + '\n';
            QNetworkRequest request(url(*listener, u"/ingest"_qs));
            request.setHeader(QNetworkRequest::ContentTypeHeader,
                              QByteArrayLiteral("application/x-ndjson"));
            replies.append(m_network.post(request, r % 2 ? gzipCompress(body) : body));
        }
        int ok = 0;
        for (QNetworkReply *reply : std::as_const(replies)) {
            const Answer answer = send(reply);
            ok += answer.status == 200 ? 1 : 0;
        }
        // Odd requests were sent gzip-compressed without saying so: those are malformed bodies,
        // answered 400 each, and none of their bytes may become events.
        QCOMPARE(ok, kRequests / 2);
        QSet<QString> identities;
        for (const RequestEvent &event : std::as_const(sink.events))
            identities.insert(event.identity);
        QCOMPARE(sink.events.size(), kRequests / 2 * kLines);
        QCOMPARE(identities.size(), kRequests / 2 * kLines);
        QCOMPARE(listener->health().eventsReceived, qint64(kRequests / 2 * kLines));
    }

    void concurrentGzipPosts()
    {
        CollectingSink sink;
        auto listener = startListener(sink);
        constexpr int kRequests = 16;
        constexpr int kLines = 200;
        QList<QNetworkReply *> replies;
        for (int r = 0; r < kRequests; ++r) {
            QByteArray body;
            for (int i = 0; i < kLines; ++i)
                body += requestLine(r * kLines + i) + '\n';
            QNetworkRequest request(url(*listener, u"/ingest"_qs));
            request.setHeader(QNetworkRequest::ContentTypeHeader,
                              QByteArrayLiteral("application/x-ndjson"));
            request.setRawHeader("Content-Encoding", "gzip");
            replies.append(m_network.post(request, gzipCompress(body)));
        }
        for (QNetworkReply *reply : std::as_const(replies))
            QCOMPARE(send(reply).status, 200);
        QSet<QString> identities;
        for (const RequestEvent &event : std::as_const(sink.events))
            identities.insert(event.identity);
        QCOMPARE(identities.size(), kRequests * kLines);
    }

    // OTLP/HTTP JSON: the OpenTelemetry project's own example request, then bodies the importer
    // must refuse.
    void otlpTraces_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QByteArray>("contentType");
        QTest::addColumn<int>("status");
        QTest::addColumn<int>("events");
        QFile example(
            QStringLiteral(TS_THIRDPARTY_DIR "/otlp/opentelemetry-proto_examples_trace.json"));
        QVERIFY(example.open(QIODevice::ReadOnly));
        const QByteArray json = example.readAll();
        QTest::newRow("proto-example") << json << QByteArray("application/json") << 200 << 1;
        QTest::newRow("empty-request")
            << QByteArray("{\"resourceSpans\":[]}") << QByteArray("application/json") << 200 << 0;
        QTest::newRow("not-json") << QByteArray("hello") << QByteArray("application/json") << 400
                                  << 0;
        QTest::newRow("protobuf") << QByteArray("\x0a\x02\x08\x01")
                                  << QByteArray("application/x-protobuf") << 415 << 0;
    }
    void otlpTraces()
    {
        QFETCH(QByteArray, body);
        QFETCH(QByteArray, contentType);
        QFETCH(int, status);
        QFETCH(int, events);
        CollectingSink sink;
        auto listener = startListener(sink);
        QNetworkRequest request(url(*listener, u"/v1/traces"_qs));
        request.setHeader(QNetworkRequest::ContentTypeHeader, contentType);
        const Answer answer = send(m_network.post(request, body));
        QCOMPARE(answer.status, status);
        QCOMPARE(sink.events.size(), events);
        if (status != 200)
            QVERIFY(!answer.json.value(u"error").toString().isEmpty());
        if (events == 1) {
            const RequestEvent &span = sink.events.constFirst();
            QCOMPARE(span.tsMs, Q_INT64_C(1544712660000));
            QCOMPARE(span.durationMs, 1000.0);
            QCOMPARE(span.app, u"my.service"_qs);
            QCOMPARE(listener->health().eventsReceived, 1);
        }
    }

    void healthDocument()
    {
        CollectingSink sink;
        auto listener = startListener(sink);
        Answer health = get(*listener, u"/health"_qs);
        QCOMPARE(health.status, 200);
        QCOMPARE(health.json.value(u"status").toString(), u"ok"_qs);
        QCOMPARE(health.json.value(u"eventsReceived").toInt(), 0);
        QVERIFY(health.json.value(u"lastEventTime").isNull());

        QCOMPARE(post(*listener, u"/ingest"_qs, requestLine(1) + '\n' + requestLine(2)).status,
                 200);
        QCOMPARE(post(*listener, u"/ingest"_qs, QByteArray("nope")).status, 400);
        QCOMPARE(get(*listener, u"/nowhere"_qs).status, 404);
        health = get(*listener, u"/health"_qs);
        QCOMPARE(health.json.value(u"eventsReceived").toInt(), 2);
        QCOMPARE(health.json.value(u"malformedLines").toInt(), 1);
        QCOMPARE(health.json.value(u"errors").toInt(), 2);
        QVERIFY(health.json.value(u"lastEventTime").toString().endsWith(u'Z'));
        const QJsonArray recent = health.json.value(u"recentErrors").toArray();
        QCOMPARE(recent.size(), 2);
        QVERIFY2(recent.at(0).toString().contains(u"line 1"), qPrintable(recent.at(0).toString()));
    }
};

QTEST_GUILESS_MAIN(TestIngestListener)
#include "tst_ingestlistener.moc"
