// HAR 1.2 import: every capture under tests/data/thirdparty/har (expected values written down
// from reading the files with jq, not from this reader's output), Graph $batch explosion, JWT
// identity, secrets, streaming over large captures, and what happens to broken files.
#include "ingest/harreader.h"

#include "importertestutil.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QTemporaryDir>

#include <atomic>

using namespace ts;
using namespace ts::testutil;

namespace {

QJsonObject header(const QString &name, const QString &value)
{
    return QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("value"), value}};
}

QJsonObject harOf(const QJsonArray &entries)
{
    return QJsonObject{
        {QStringLiteral("log"),
         QJsonObject{{QStringLiteral("version"), QStringLiteral("1.2")},
                     {QStringLiteral("creator"),
                      QJsonObject{{QStringLiteral("name"), QStringLiteral("tst_harreader")},
                                  {QStringLiteral("version"), QStringLiteral("1")}}},
                     {QStringLiteral("entries"), entries}}}};
}

QJsonObject entryOf(const QString &started, const QString &method, const QString &url, int status,
                    const QJsonArray &requestHeaders = {}, const QJsonArray &responseHeaders = {},
                    const QString &text = {}, const QString &postData = {})
{
    QJsonObject request{{QStringLiteral("method"), method},
                        {QStringLiteral("url"), url},
                        {QStringLiteral("httpVersion"), QStringLiteral("HTTP/1.1")},
                        {QStringLiteral("headers"), requestHeaders}};
    if (!postData.isEmpty())
        request.insert(QStringLiteral("postData"),
                       QJsonObject{{QStringLiteral("mimeType"), QStringLiteral("application/json")},
                                   {QStringLiteral("text"), postData}});
    return QJsonObject{
        {QStringLiteral("startedDateTime"), started},
        {QStringLiteral("time"), 123.5},
        {QStringLiteral("request"), request},
        {QStringLiteral("response"),
         QJsonObject{{QStringLiteral("status"), status},
                     {QStringLiteral("headers"), responseHeaders},
                     {QStringLiteral("content"),
                      QJsonObject{{QStringLiteral("size"), text.size()},
                                  {QStringLiteral("mimeType"), QStringLiteral("application/json")},
                                  {QStringLiteral("text"), text}}}}}};
}

QByteArray graphBatchResponseBody()
{
    // The documented example response; the HTTP status line and headers precede a blank line.
    const QByteArray http =
        fileBytes(thirdParty("graph/graph-docs_json-batching_example-response.http"));
    const qsizetype blank = http.indexOf("\n\n");
    return blank < 0 ? QByteArray() : http.mid(blank + 2);
}

QString batchRequestBody()
{
    // Deliberately not in response order: sub-events must be matched by id.
    const auto sub = [](const char *id, const char *method, const char *url) {
        return QJsonObject{{QStringLiteral("id"), QString::fromLatin1(id)},
                           {QStringLiteral("method"), QString::fromLatin1(method)},
                           {QStringLiteral("url"), QString::fromLatin1(url)}};
    };
    const QJsonArray requests{
        sub("3", "GET", "/me/planner/tasks"), sub("1", "GET", "/me/memberOf?$top=1"),
        sub("2", "GET", "/groups/abc/events"), sub("5", "GET", "/users?$count=true"),
        sub("4", "PATCH", "/me/onenote/pages/1-x/content")};
    return QString::fromUtf8(
        QJsonDocument(QJsonObject{{QStringLiteral("requests"), requests}}).toJson());
}

} // namespace

class TestHarReader : public QObject
{
    Q_OBJECT
private slots:
    void thirdPartyCaptures_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("events");
        QTest::addColumn<int>("malformed");
        QTest::addColumn<bool>("fatal");
        QTest::addColumn<QString>("firstStarted");
        QTest::addColumn<QString>("firstMethod");
        QTest::addColumn<QString>("firstUrlPrefix");
        QTest::addColumn<int>("firstStatus");
        QTest::addColumn<double>("firstDuration");

        // Counted with: jq '.log.entries|length' and jq '.log.entries[0]|[.startedDateTime,
        // .time,.request.method,.request.url,.response.status]'. Microsecond times (mitmproxy)
        // are written here truncated to the millisecond, as events store them.
        QTest::newRow("chrome-har yahoo") << "har/chrome-har_yahoo-2018-11-28.har" << 107 << 0
                                          << false << "2018-11-28T19:01:59.447Z"
                                          << "GET"
                                          << "http://yahoo.com/" << 301 << 167.8;
        // Hand-written requests without startedDateTime or response: nothing can be placed in
        // time, so each of the 8 entries is a malformed record.
        QTest::newRow("har-to-k6 requests only")
            << "har/har-to-k6_example_full.REQUEST-ONLY.har" << 0 << 8 << false << QString()
            << QString() << QString() << 0 << 0.0;
        QTest::newRow("har-validator invalid")
            << "har/har-validator_fixture_invalid.INVALID.har" << 0 << 0 << true << QString()
            << QString() << QString() << 0 << 0.0;
        QTest::newRow("har-validator valid") << "har/har-validator_fixture_valid.har" << 1 << 0
                                             << false << "2015-02-10T07:33:17.146Z"
                                             << "GET"
                                             << "http://mockbin.com/" << 200 << 181.59985542297363;
        QTest::newRow("edge") << "har/mitmproxy-example_edge.har" << 22 << 0 << false
                              << "2023-03-29T23:56:40.139Z"
                              << "GET"
                              << "https://mitmproxy.org/" << 304 << 48.18300000624731;
        QTest::newRow("mitmproxy error") << "har/mitmproxy-export_error_log.har" << 2 << 0 << false
                                         << "2023-07-25T11:03:15.216+00:00"
                                         << "GET"
                                         << "http://163.com/" << 0 << 2.851247787475586;
        QTest::newRow("mitmproxy incomplete") << "har/mitmproxy-export_incomplete_log.har" << 4 << 0
                                              << false << "2023-07-17T13:04:44.056+00:00"
                                              << "GET"
                                              << "https://example.com/" << 0 << 0.0;
        QTest::newRow("mitmproxy successful") << "har/mitmproxy-export_successful_log.har" << 2 << 0
                                              << false << "2023-07-25T10:42:01.726+00:00"
                                              << "GET"
                                              << "https://example.com/" << 200 << 489.44091796875;
        QTest::newRow("mitmproxy websocket")
            << "har/mitmproxy-export_websocket.har" << 3 << 0 << false
            << "2023-08-29T13:03:20.195+00:00"
            << "GET"
            << "https://demo.piesocket.com/v3/channel_123?api_key=" << 101 << 424.1049289703369;
        QTest::newRow("mitmproxy broken")
            << "har/mitmproxy-testdata_brokenfile.INVALID.har" << 0 << 0 << true << QString()
            << QString() << QString() << 0 << 0.0;
        QTest::newRow("charles") << "har/mitmproxy-testdata_charles.har" << 1 << 0 << false
                                 << "2023-03-29T17:37:42.482-07:00"
                                 << "GET"
                                 << "https://mitmproxy.org/" << 200 << 107.0;
        QTest::newRow("firefox") << "har/mitmproxy-testdata_firefox.har" << 14 << 0 << false
                                 << "2023-03-29T16:58:59.303-07:00"
                                 << "GET"
                                 << "https://mitmproxy.org/" << 304 << 23.0;
        QTest::newRow("firefox HEAD")
            << "har/mitmproxy-testdata_head-content-length.har" << 1 << 0 << false
            << "2023-12-12T16:23:16.067+00:00"
            << "HEAD"
            << "https://files.pythonhosted.org/packages/" << 200 << 101.56393051147461;
        QTest::newRow("insomnia") << "har/mitmproxy-testdata_insomnia.har" << 1 << 0 << false
                                  << "2023-03-30T04:39:18.981Z"
                                  << "GET"
                                  << "http://mitm.it/" << 200 << 70.402;
        QTest::newRow("chrome POST") << "har/mitmproxy-testdata_postdata.har" << 1 << 0 << false
                                     << "2023-07-15T13:37:26.093Z"
                                     << "POST"
                                     << "https://signal-metrics-collector-beta.s-onetag.com/metrics"
                                     << 200 << 169.79599999582302;
        QTest::newRow("chrome empty") << "har/mswjs-source_chrome_empty-0-entries.har" << 0 << 0
                                      << false << QString() << QString() << QString() << 0 << 0.0;
        QTest::newRow("proxyman") << "har/mswjs-source_proxyman_request-parameters.har" << 1 << 0
                                  << false << "2024-07-09T23:00:16.456Z"
                                  << "GET"
                                  << "https://source.mswjs.io/docs/?hello=world&userId=abc-123"
                                  << 200 << 133.98695;
    }

    void thirdPartyCaptures()
    {
        QFETCH(QString, file);
        QFETCH(int, events);
        QFETCH(int, malformed);
        QFETCH(bool, fatal);
        QFETCH(QString, firstStarted);
        QFETCH(QString, firstMethod);
        QFETCH(QString, firstUrlPrefix);
        QFETCH(int, firstStatus);
        QFETCH(double, firstDuration);

        HarReader reader;
        CollectingSink sink;
        const QString path = QStringLiteral(TS_THIRDPARTY_DIR "/") + file;
        const ReadResult result = readFile(reader, path, sink);
        QCOMPARE(result.events, events);
        QCOMPARE(qint64(sink.events.size()), qint64(events));
        QCOMPARE(result.malformed, malformed);
        QCOMPARE(qint64(sink.malformed.size()), qint64(malformed));
        QCOMPARE(!result.fatalError.isEmpty(), fatal);
        if (fatal)
            QVERIFY2(result.fatalError.startsWith(path + u": "), qPrintable(result.fatalError));
        for (const MalformedRecord &record : sink.malformed) {
            QCOMPARE(record.source, path);
            QVERIFY(record.line > 0);
        }
        if (events == 0)
            return;
        const RequestEvent &first = sink.events.front();
        QCOMPARE(first.tsMs,
                 QDateTime::fromString(firstStarted, Qt::ISODateWithMs).toMSecsSinceEpoch());
        QCOMPARE(first.method, firstMethod);
        QVERIFY2(first.url.startsWith(firstUrlPrefix), qPrintable(first.url));
        QCOMPARE(first.status, firstStatus);
        QCOMPARE(first.durationMs, firstDuration);
        QCOMPARE(first.source, path);
        QVERIFY(first.line > 1);
        QVERIFY(first.offset > 0);
        for (const RequestEvent &event : sink.events) {
            QVERIFY(!event.batchEnvelope);
            QVERIFY(event.batchId.isEmpty());
            // No capture here carries a bearer token; cookies must never survive.
            QVERIFY(!event.headers.contains(u"set-cookie"));
            QVERIFY(!event.headers.contains(u"cookie"));
        }
    }

    void chromeStatusesAsCounted()
    {
        // jq '[.log.entries[].response.status]|group_by(.)|map({(.[0]|tostring):length})'
        HarReader reader;
        CollectingSink sink;
        readFile(reader, thirdParty("har/chrome-har_yahoo-2018-11-28.har"), sink);
        QMap<int, int> statuses;
        for (const RequestEvent &event : sink.events)
            ++statuses[event.status];
        const QMap<int, int> expected{{200, 95}, {204, 3}, {206, 1}, {301, 2}, {302, 5}, {400, 1}};
        QCOMPARE(statuses, expected);
    }

    void failedRequestsKeepTheCreatorsError()
    {
        HarReader reader;
        CollectingSink sink;
        readFile(reader, thirdParty("har/mitmproxy-export_error_log.har"), sink);
        QCOMPARE(sink.events.size(), size_t(2));
        // status 0 = no response: a failed request, not a throttle; mitmproxy's _error kept.
        QCOMPARE(sink.events[0].status, 0);
        QVERIFY(sink.events[0].extraJson.contains("Connect call failed"));
        // The 405's HTML body is kept (failed requests keep their body).
        QCOMPARE(sink.events[1].status, 405);
        QVERIFY(sink.events[1].body.startsWith(u"<!DOCTYPE HTML PUBLIC"));
    }

    void websocketUpgradesCountMessagesAndLoseTheApiKey()
    {
        HarReader reader;
        CollectingSink sink;
        readFile(reader, thirdParty("har/mitmproxy-export_websocket.har"), sink);
        QCOMPARE(sink.events.size(), size_t(3));
        // jq '[.log.entries[]|(._webSocketMessages|length)]' -> [1,1,3]
        const int expectedMessages[] = {1, 1, 3};
        for (size_t i = 0; i < 3; ++i) {
            const RequestEvent &event = sink.events[i];
            QCOMPARE(event.status, 101);
            const QJsonObject extra = QJsonDocument::fromJson(event.extraJson).object();
            QCOMPARE(extra.value(u"webSocketMessages").toInt(), expectedMessages[i]);
            // The capture's URL carries ?api_key=...: a secret query value.
            QVERIFY2(!dumpEvent(event).contains(u"VCXCEuvhGcBDP7XhiJJUDvR1e1D3eiVjgZ9VRiaV"),
                     qPrintable(event.url));
            // jq '.log.entries[].request.url': the second upgrade had no query.
            QVERIFY2(event.url.startsWith(
                         i == 1 ? u"https://demo.piesocket.com/v3/channel_123"
                                : u"https://demo.piesocket.com/v3/channel_123?api_key="),
                     qPrintable(event.url));
        }
    }

    void graphBatchIsExplodedPerSubResponse_data()
    {
        QTest::addColumn<bool>("withThrottle");
        QTest::newRow("docs example as published") << false;
        QTest::newRow("sub-response 2 turned into a 429 with Retry-After") << true;
    }

    void graphBatchIsExplodedPerSubResponse()
    {
        QFETCH(bool, withThrottle);
        QByteArray body = graphBatchResponseBody();
        QVERIFY(body.contains("\"responses\""));
        if (withThrottle) {
            QJsonObject doc = QJsonDocument::fromJson(body).object();
            QJsonArray responses = doc.value(u"responses").toArray();
            QJsonObject second = responses.at(1).toObject();
            second.insert(QStringLiteral("status"), 429);
            QJsonObject headers = second.value(u"headers").toObject();
            headers.insert(QStringLiteral("Retry-After"), QStringLiteral("17"));
            second.insert(QStringLiteral("headers"), headers);
            second.insert(QStringLiteral("body"),
                          QJsonObject{{QStringLiteral("error"),
                                       QJsonObject{{QStringLiteral("code"),
                                                    QStringLiteral("TooManyRequests")}}}});
            responses.replace(1, second);
            doc.insert(QStringLiteral("responses"), responses);
            body = QJsonDocument(doc).toJson();
        }
        const QString jwt = makeJwt({{QStringLiteral("upn"), QStringLiteral("alice@contoso.com")},
                                     {QStringLiteral("oid"), QStringLiteral("oid-1")},
                                     {QStringLiteral("appid"), QStringLiteral("app-42")},
                                     {QStringLiteral("tid"), QStringLiteral("tenant-7")}});
        const QJsonArray entries{
            entryOf(QStringLiteral("2025-02-13T10:17:05.250Z"), QStringLiteral("POST"),
                    QStringLiteral("https://graph.microsoft.com/beta/$batch"), 200,
                    {header(QStringLiteral("Authorization"), u"Bearer " + jwt)},
                    {header(QStringLiteral("request-id"), QStringLiteral("env-req-1"))},
                    QString::fromUtf8(body), batchRequestBody())};
        HarReader reader;
        CollectingSink sink;
        const ReadResult result =
            readBytes(reader, QJsonDocument(harOf(entries)).toJson(), sink, u"batch.har"_qs);
        QVERIFY2(result.fatalError.isEmpty(), qPrintable(result.fatalError));
        QCOMPARE(result.events, 6); // the envelope + 5 sub-responses
        QCOMPARE(sink.events.size(), size_t(6));

        const RequestEvent &envelope = sink.events[0];
        QVERIFY(envelope.batchEnvelope);
        QVERIFY(!envelope.isRequest());
        QCOMPARE(envelope.status, 200);
        QCOMPARE(envelope.identity, u"alice@contoso.com"_qs);

        // Response order: ids 1..5, statuses as in the docs; request positions by id.
        const int statuses[] = {200, withThrottle ? 429 : 403, 403, 405, 200};
        const int positions[] = {1, 2, 0, 4, 3};
        const char *methods[] = {"GET", "GET", "GET", "PATCH", "GET"};
        const char *urls[] = {"https://graph.microsoft.com/beta/me/memberOf?$top=1",
                              "https://graph.microsoft.com/beta/groups/abc/events",
                              "https://graph.microsoft.com/beta/me/planner/tasks",
                              "https://graph.microsoft.com/beta/me/onenote/pages/1-x/content",
                              "https://graph.microsoft.com/beta/users?$count=true"};
        for (int i = 0; i < 5; ++i) {
            const RequestEvent &sub = sink.events[size_t(i + 1)];
            QVERIFY(sub.isRequest());
            QCOMPARE(sub.status, statuses[i]);
            QCOMPARE(sub.batchId, u"env-req-1"_qs);
            QCOMPARE(sub.batchIndex, positions[i]);
            QCOMPARE(sub.method, QString::fromLatin1(methods[i]));
            QCOMPARE(sub.url, QString::fromLatin1(urls[i]));
            QCOMPARE(sub.tsMs, isoMs("2025-02-13T10:17:05.250Z"));
            QCOMPARE(sub.identity, u"alice@contoso.com"_qs);
            QCOMPARE(sub.app, u"app-42"_qs);
            QCOMPARE(sub.tenant, u"tenant-7"_qs);
            QVERIFY(!dumpEvent(sub).contains(jwt));
        }
        // Sub-response 3: 403 with Authorization_RequestDenied in its own body; own headers.
        QVERIFY(sink.events[3].body.contains(u"Authorization_RequestDenied"));
        QCOMPARE(sink.events[3].headers.value(u"x-ms-resource-unit"), u"1"_qs);
        if (withThrottle) {
            QCOMPARE(sink.events[2].retryAfter, u"17"_qs);
            QVERIFY(sink.events[2].body.contains(u"TooManyRequests"));
        } else {
            QVERIFY(sink.events[2].retryAfter.isEmpty());
        }
        QVERIFY(!dumpEvent(envelope).contains(jwt));
    }

    void secretsNeverLeaveTheReader()
    {
        // A capture seeded with every kind of secret an operator's browser or proxy records.
        const QString jwt = makeJwt({{QStringLiteral("upn"), QStringLiteral("bob@contoso.com")},
                                     {QStringLiteral("appid"), QStringLiteral("client-app")},
                                     {QStringLiteral("tid"), QStringLiteral("tid-9")}});
        const QStringList secrets{jwt,
                                  QStringLiteral("SESSIONSECRET123"),
                                  QStringLiteral("SETCOOKIESECRET456"),
                                  QStringLiteral("SASSIGNATURE789"),
                                  QStringLiteral("CLIENTSECRETabc"),
                                  QStringLiteral("AUTHCODEdef"),
                                  QStringLiteral("ACCESSTOKENghi"),
                                  QStringLiteral("REFRESHTOKENjkl"),
                                  QStringLiteral("APIMKEYmno"),
                                  QStringLiteral("APIKEYpqr"),
                                  QStringLiteral("BODYTOKENstu")};
        const QJsonArray entries{
            entryOf(
                QStringLiteral("2026-02-18T22:44:09.512Z"), QStringLiteral("GET"),
                QStringLiteral("https://contoso.blob.core.windows.net/c/"
                               "b?sv=2022-11-02&sig=SASSIGNATURE789&se=2026"),
                200,
                {header(QStringLiteral("Authorization"), u"Bearer " + jwt),
                 header(QStringLiteral("Cookie"), QStringLiteral("session=SESSIONSECRET123")),
                 header(QStringLiteral("Ocp-Apim-Subscription-Key"), QStringLiteral("APIMKEYmno")),
                 header(QStringLiteral("api-key"), QStringLiteral("APIKEYpqr"))},
                {header(QStringLiteral("Set-Cookie"),
                        QStringLiteral("id=SETCOOKIESECRET456; HttpOnly"))}),
            entryOf(QStringLiteral("2026-02-18T22:44:10.000Z"), QStringLiteral("POST"),
                    QStringLiteral("https://login.microsoftonline.com/t/oauth2/v2.0/"
                                   "token?client_secret=CLIENTSECRETabc&code=AUTHCODEdef"),
                    401, {}, {},
                    QStringLiteral(R"({"error":"invalid_grant","access_token":"BODYTOKENstu"})"),
                    QStringLiteral("client_secret=CLIENTSECRETabc&grant_type=authorization_code")),
            entryOf(QStringLiteral("2026-02-18T22:44:11.000Z"), QStringLiteral("GET"),
                    QStringLiteral("https://app.example/"
                                   "cb#access_token=ACCESSTOKENghi&refresh_token=REFRESHTOKENjkl"),
                    400)};
        HarReader reader;
        CollectingSink sink;
        const ReadResult result =
            readBytes(reader, QJsonDocument(harOf(entries)).toJson(), sink, u"seeded.har"_qs);
        QCOMPARE(result.events, 3);
        for (const RequestEvent &event : sink.events) {
            const QString all = dumpEvent(event);
            for (const QString &secret : secrets)
                QVERIFY2(!all.contains(secret), qPrintable(secret + u" leaked in " + all));
        }
        // The identity was taken from the token before it was thrown away.
        QCOMPARE(sink.events[0].identity, u"bob@contoso.com"_qs);
        QCOMPARE(sink.events[0].app, u"client-app"_qs);
        QCOMPARE(sink.events[0].tenant, u"tid-9"_qs);
        // Non-secret parts stay usable.
        QVERIFY(sink.events[0].url.contains(u"sv=2022-11-02"));
        QVERIFY(sink.events[1].body.contains(u"invalid_grant"));
    }

    void quirks()
    {
        // BOM, creator after the entries, entries before "version", a missing response, base64
        // content, numbers as strings, an entry that is not an object.
        const QByteArray har =
            "\xEF\xBB\xBF{ \"log\" : { \"entries\" : [\n"
            "  "
            "{\"startedDateTime\":\"2026-01-01T00:00:00Z\",\"time\":\"12.5\",\"request\":{"
            "\"method\":\"GET\",\"url\":\"https://a.example/"
            "x\",\"headers\":[{\"name\":\"Retry-Attempt\",\"value\":\"2\"}]},"
            "\"response\":{\"status\":503,\"headers\":[{\"name\":\"Retry-After\",\"value\":\"30\"},"
            "{\"name\":\"X-Ms-Throttle-Scope\",\"value\":\"User\"},{\"name\":\"Cache-Control\","
            "\"value\":\"no-cache\"}],"
            "\"content\":{\"encoding\":\"base64\",\"text\":\"" +
            QByteArray("{\"error\":{\"code\":\"ServerBusy\"}}").toBase64() +
            "\"}}},\n"
            "  "
            "{\"startedDateTime\":\"2026-01-01T00:00:01Z\",\"request\":{\"method\":\"GET\",\"url\":"
            "\"https://a.example/y\"}},\n"
            "  42,\n"
            "  "
            "{\"startedDateTime\":\"2026-01-01T00:00:02Z\",\"request\":{\"method\":\"GET\",\"url\":"
            "\"https://a.example/z\\\"}{\\\\\"},\"response\":null}\n"
            "], \"version\": \"1.2\", \"creator\": {\"name\":\"Fiddler\",\"version\":\"5\"} } }\n";
        HarReader reader;
        CollectingSink sink;
        const ReadResult result = readBytes(reader, har, sink, u"quirks.har"_qs);
        QVERIFY2(result.fatalError.isEmpty(), qPrintable(result.fatalError));
        QCOMPARE(result.events, 3);
        QCOMPARE(result.malformed, 1);
        QCOMPARE(sink.malformed[0].line, 4);
        QVERIFY(sink.malformed[0].toString().startsWith(u"quirks.har:4: entry 3"));
        const RequestEvent &first = sink.events[0];
        QCOMPARE(first.status, 503);
        QCOMPARE(first.durationMs, 12.5);
        QCOMPARE(first.attempt, 2);
        QCOMPARE(first.retryAfter, u"30"_qs);
        QCOMPARE(first.headers.value(u"retry-after"), u"30"_qs);
        QCOMPARE(first.headers.value(u"x-ms-throttle-scope"), u"User"_qs);
        QVERIFY(!first.headers.contains(u"cache-control"));
        QCOMPARE(first.body, u"{\"error\":{\"code\":\"ServerBusy\"}}"_qs);
        QCOMPARE(first.line, 2);
        QCOMPARE(sink.events[1].status, 0); // no response: a failed request
        QVERIFY(sink.events[1].extraJson.contains("noResponse"));
        QCOMPARE(sink.events[2].url, u"https://a.example/z\"}{\\"_qs);
        QCOMPARE(sink.events[2].status, 0);
    }

    void notHarEmitsNothing_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("reason");
        QTest::newRow("empty") << QByteArray() << "empty file";
        QTest::newRow("ndjson") << QByteArray("{\"ts\":1,\"url\":\"x\"}\n{\"ts\":2}\n")
                                << "no \"log\"";
        QTest::newRow("array") << QByteArray("[1,2]") << "not a JSON object";
        QTest::newRow("log array")
            << QByteArray("{\"log\":[{\"startedDateTime\":\"2026-01-01T00:00:00Z\"}]}")
            << "log is not an object";
        QTest::newRow("no entries")
            << QByteArray("{\"log\":{\"version\":\"1.2\"}}") << "no \"entries\"";
        QTest::newRow("entries object")
            << QByteArray("{\"log\":{\"entries\":{}}}") << "not an array";
        QTest::newRow("garbage") << QByteArray("{\"log\" 12") << "expected ':'";
    }

    void notHarEmitsNothing()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, reason);
        HarReader reader;
        CollectingSink sink;
        const ReadResult result = readBytes(reader, bytes, sink, u"bad.har"_qs);
        QVERIFY(sink.events.empty());
        QCOMPARE(result.events, 0);
        QVERIFY2(result.fatalError.startsWith(u"bad.har: "), qPrintable(result.fatalError));
        QVERIFY2(result.fatalError.contains(reason), qPrintable(result.fatalError));
    }

    void truncatedCaptureKeepsWholeEntriesOnly()
    {
        const QByteArray whole = fileBytes(thirdParty("har/mitmproxy-testdata_firefox.har"));
        // Cut inside the 6th entry (log.pages come first and have a startedDateTime too).
        qsizetype cut = whole.indexOf("\"entries\"");
        for (int i = 0; i < 6; ++i)
            cut = whole.indexOf("\"startedDateTime\"", cut + 1);
        QVERIFY(cut > 0);
        HarReader reader;
        CollectingSink sink;
        const ReadResult result = readBytes(reader, whole.left(cut + 40), sink, u"cut.har"_qs);
        QCOMPARE(result.events, 5);
        QVERIFY2(result.fatalError.startsWith(u"cut.har: corrupt HAR at byte"),
                 qPrintable(result.fatalError));
        QVERIFY(result.fatalError.contains(u"after 6 entries"));
    }

    void largeCaptureStreamsWithProgressAndCancel()
    {
        // ~30 MB: several buffer refills, with strings full of braces, quotes and backslashes
        // straddling the refill boundaries.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("large.har"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        const int entries = 30000;
        file.write("{\"log\":{\"version\":\"1.2\",\"entries\":[");
        const QByteArray noise = QByteArray("}{][\\\\\\\"").repeated(100);
        for (int i = 0; i < entries; ++i) {
            if (i)
                file.write(",\n");
            file.write("{\"startedDateTime\":\"2026-01-01T00:00:00.000Z\",\"time\":" +
                       QByteArray::number(i) +
                       ",\"request\":{\"method\":\"GET\",\"url\":\"https://x.example/" +
                       QByteArray::number(i) + "\",\"headers\":[]},\"response\":{\"status\":" +
                       (i % 10 == 0 ? "429" : "200") + ",\"headers\":[],\"content\":{\"text\":\"" +
                       noise + "\"}}}");
        }
        file.write("]}}");
        file.close();

        HarReader reader;
        CollectingSink sink;
        qint64 lastDone = -1;
        qint64 lastTotal = 0;
        ReadControl control;
        control.progress = [&](qint64 done, qint64 total) {
            QVERIFY(done >= lastDone);
            lastDone = done;
            lastTotal = total;
        };
        const ReadResult result = readFile(reader, path, sink, control);
        QVERIFY2(result.fatalError.isEmpty(), qPrintable(result.fatalError));
        QCOMPARE(result.events, entries);
        QCOMPARE(sink.events.back().url, u"https://x.example/29999"_qs);
        QCOMPARE(sink.events.back().durationMs, 29999.0);
        QCOMPARE(sink.events[10].status, 429);
        // Each 8-byte chunk }{][\\\" decodes to the 6 characters }{][\"
        QCOMPARE(sink.events[10].body, QString::fromLatin1("}{][\\\"").repeated(100));
        QCOMPARE(lastDone, QFileInfo(path).size());
        QCOMPARE(lastTotal, QFileInfo(path).size());

        // Cancellation from the consumer: stops between entries.
        std::atomic<bool> cancel{false};
        struct CancellingSink final : IngestSink
        {
            std::atomic<bool> *flag;
            qint64 seen = 0;
            void onEvent(RequestEvent &&) override
            {
                if (++seen == 100)
                    flag->store(true);
            }
            void onMalformed(MalformedRecord &&) override {}
        } cancelling;
        cancelling.flag = &cancel;
        ReadControl cancelControl;
        cancelControl.cancel = &cancel;
        QFile again(path);
        QVERIFY(again.open(QIODevice::ReadOnly));
        const ReadResult cancelled = reader.read(again, path, cancelling, cancelControl);
        QVERIFY(cancelled.cancelled);
        QCOMPARE(cancelled.events, 100);
    }
};

QTEST_GUILESS_MAIN(TestHarReader)
#include "tst_harreader.moc"
