// The non-HAR importers and format detection: CSV/TSV (Azure Monitor, Log Analytics, APIM
// dialects, explicit mappings), OTLP/JSON traces, access logs, Azure {"records":[...]} exports,
// resilience / SDK logs. Expected values for third-party files are written down from reading the
// files (grep, awk, jq), not from this code's output.
#include "ingest/accesslogreader.h"
#include "ingest/azurerecordsreader.h"
#include "ingest/csvreader.h"
#include "ingest/formatdetect.h"
#include "ingest/otlpreader.h"
#include "ingest/resiliencereader.h"
#include "ingest/vcrreader.h"

#include "importertestutil.h"

#include <QDir>
#include <QJsonArray>
#include <QTemporaryDir>

using namespace ts;
using namespace ts::testutil;

class TestImporters : public QObject
{
    Q_OBJECT
private slots:
    // ---- detection ---------------------------------------------------------------------------

    void detectThirdPartyFiles_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("format");
        const QDir har(thirdParty("har"));
        for (const QString &name : har.entryList({QStringLiteral("*.har")}, QDir::Files)) {
            // Both .INVALID files are HAR-shaped enough to be claimed by the HAR reader (a "log"
            // with "entries" nested under other keys; a top-level "log"), which then rejects
            // them with a precise reason (tst_harreader) instead of "unknown format".
            QTest::newRow(qPrintable(name)) << (u"har/" + name) << u"har"_qs;
        }
        QTest::newRow("otlp") << "otlp/opentelemetry-proto_examples_trace.json"
                              << "otlp";
        QTest::newRow("apache") << "oplogs/elastic-examples_apache_logs_combined.log"
                                << "access";
        QTest::newRow("app service") << "oplogs/otel-contrib_azurelogs_appservice_httplogs.json"
                                     << "azure-records";
        QTest::newRow("front door") << "oplogs/otel-contrib_azurelogs_frontdoor_accesslog.json"
                                    << "azure-records";
        QTest::newRow("sb operational")
            << "servicebus/azure-docs_monitor-service-bus-reference_OperationalLogs-example.json"
            << "azure-records";
        QTest::newRow("sb runtime audit")
            << "servicebus/azure-docs_monitor-service-bus-reference_RuntimeAuditLogs-TEMPLATE.json"
            << "azure-records";
        QTest::newRow("sb vnet")
            << "servicebus/azure-docs_monitor-service-bus-reference_VNetAndIPFiltering-example.json"
            << "azure-records";
        const QDir fabric(thirdParty("fabric"));
        for (const QString &name : fabric.entryList({QStringLiteral("*.yaml")}, QDir::Files))
            QTest::newRow(qPrintable(name)) << (u"fabric/" + name) << u"vcr"_qs;
        // A swagger document: JSON, but no log of any kind.
        QTest::newRow("fabric swagger")
            << "fabric/fabric-rest-api-specs_common_definitions.SPEC.json" << QString();
        QTest::newRow("graph batch http response")
            << "graph/graph-docs_json-batching_example-response.http" << u"http"_qs;
        QTest::newRow("graph http response")
            << "graph/graph-docs_throttling_sample-429-response.http" << u"http"_qs;
    }

    void detectThirdPartyFiles()
    {
        QFETCH(QString, file);
        QFETCH(QString, format);
        const QString path = QStringLiteral(TS_THIRDPARTY_DIR "/") + file;
        QString error;
        QCOMPARE(detectFileFormat(path, &error), format);
        if (format.isEmpty()) {
            QVERIFY2(error.startsWith(path + u": cannot tell the format"), qPrintable(error));
            QVERIFY(error.contains(u"--format"));
        }
    }

    void detectContent_data()
    {
        QTest::addColumn<QByteArray>("head");
        QTest::addColumn<QString>("format");
        QTest::newRow("ndjson")
            << QByteArray("{\"ts\":\"2026-01-01T00:00:00Z\",\"status\":200}\n{\"ts\":1}\n")
            << "ndjson";
        QTest::newRow("ndjson bom")
            << QByteArray("\xEF\xBB\xBF{\"url\":\"x\",\"ts\":1}\n") << "ndjson";
        QTest::newRow("har minified") << QByteArray("{\"log\":{\"entries\":[]}}") << "har";
        QTest::newRow("har log not first")
            << QByteArray("{\"x\":1,\n\"log\":{\"version\":\"1.2\",\"entries\":[") << "har";
        QTest::newRow("otlp collector line")
            << QByteArray("{\"resourceSpans\":[]}\n{\"resourceSpans\":[]}\n") << "otlp";
        QTest::newRow("azure records")
            << QByteArray("{ \"records\": [ {\"time\":\"x\"} ] }") << "azure-records";
        QTest::newRow("azure array")
            << QByteArray("[{\"resourceId\":\"/x\",\"category\":\"FrontDoorAccessLog\"}]")
            << "azure-records";
        QTest::newRow("csv")
            << QByteArray("timestamp,name,resultCode,duration\n2026-01-01T00:00:00Z,GET /,200,1\n")
            << "csv";
        QTest::newRow("tsv") << QByteArray(
                                    "TimeGenerated\tMethod\tUrl\tResponseCode\n2026\tGET\t/\t429\n")
                             << "csv";
        QTest::newRow("csv semicolon") << QByteArray("ts;url;status\n1;/;200\n") << "csv";
        QTest::newRow("common log")
            << QByteArray(
                   "10.0.0.1 - alice [18/Feb/2026:22:44:09 +0000] \"GET / HTTP/1.1\" 429 12\n")
            << "access";
        QTest::newRow("polly")
            << QByteArray("2026-02-18 22:44:09.512 +00:00 [WRN] Resilience event occurred. "
                          "EventName: 'OnCircuitOpened', Source: 'P/(null)/CircuitBreaker', "
                          "Operation Key: '', Result: '429'\n")
            << "resilience";
        QTest::newRow("resilience4j")
            << QByteArray("2026-02-18T22:44:09.512Z INFO CircuitBreaker 'backendA' changed state "
                          "from CLOSED to OPEN\n")
            << "resilience";
        QTest::newRow("empty") << QByteArray("   \n") << QString();
        QTest::newRow("prose") << QByteArray("hello world\nthis is not a log\n") << QString();
        QTest::newRow("json array of numbers") << QByteArray("[1,2,3]") << QString();
    }

    void detectContent()
    {
        QFETCH(QByteArray, head);
        QFETCH(QString, format);
        QCOMPARE(detectFormat(head), format);
        if (!format.isEmpty()) {
            const auto reader = createReader(format);
            QVERIFY(reader);
            QCOMPARE(reader->formatName(), format);
        }
    }

    void createReaderRejectsUnknownNames()
    {
        QVERIFY(!createReader(QStringLiteral("xml")));
        for (const QString &format : knownFormats())
            QVERIFY(createReader(format));
    }

    // ---- CSV ---------------------------------------------------------------------------------

    void csvMappingRoundTrip_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<QString>("canonical");
        QTest::newRow("simple") << "ts=TimeGenerated,status=ResultCode" << true
                                << "ts=TimeGenerated,status=ResultCode";
        QTest::newRow("spaces and header")
            << " ts = timestamp [UTC] , header.Retry-After=RetryAfter" << true
            << "ts=timestamp [UTC],header.Retry-After=RetryAfter";
        QTest::newRow("quoted column")
            << R"(ts=Time,url="a,b=c ""x""")" << true << R"(ts=Time,url="a,b=c ""x""")";
        QTest::newRow("unknown field") << "when=Time" << false << QString();
        QTest::newRow("no column") << "ts=" << false << QString();
        QTest::newRow("no equals") << "ts" << false << QString();
        QTest::newRow("empty") << "" << false << QString();
    }

    void csvMappingRoundTrip()
    {
        QFETCH(QString, spec);
        QFETCH(bool, valid);
        QFETCH(QString, canonical);
        QString error;
        const auto mapping = CsvMapping::fromString(spec, &error);
        QCOMPARE(mapping.has_value(), valid);
        if (!valid) {
            QVERIFY(error.startsWith(u"--map: "));
            return;
        }
        QCOMPARE(mapping->toString(), canonical);
        QCOMPARE(CsvMapping::fromString(mapping->toString()), mapping);
    }

    void csvApplicationInsightsRequests()
    {
        // The portal's "Export to CSV" of the requests table: "[UTC]" suffixes, quoted JSON in
        // customDimensions, a BOM, CRLF line ends, an embedded newline in a quoted field.
        const QByteArray csv =
            "\xEF\xBB\xBFtimestamp "
            "[UTC],id,name,url,success,resultCode,duration,customDimensions,operation_Id,cloud_"
            "RoleName,user_AuthenticatedId,itemCount\r\n"
            "\"2/18/2026, 10:44:09.512 PM\",req-1,GET "
            "/v1.0/me/onenote/pages,https://graph.microsoft.com/v1.0/me/onenote/"
            "pages,False,429,84.5,\"{\"\"Retry-After\"\":\"\"30\"\",\"\"x-ms-throttle-scope\"\":"
            "\"\"Application\"\",\"\"identity\"\":\"\"alice@contoso.com\"\",\"\"Retry-Attempt\"\":"
            "\"\"2\"\",\"\"Lane\"\":\"\"background\"\",\"\"Env\"\":\"\"prod\"\"}\",op-1,note-"
            "bridge,,1\r\n"
            "2026-02-18T22:44:10.000Z,req-2,POST "
            "/items,https://api.fabric.microsoft.com/v1/"
            "items,True,200,12,,op-2,note-bridge,bob@contoso.com,\"multi\nline\"\r\n"
            "2026-02-18T22:44:11Z,req-3,GET /x,https://x.example/,True,200\r\n"
            "not a time,req-4,GET /y,https://x.example/y,True,200,1,,op-4,app,,1\r\n";
        CsvReader reader;
        CollectingSink sink;
        const ReadResult result = readBytes(reader, csv, sink, u"requests.csv"_qs);
        QVERIFY2(result.fatalError.isEmpty(), qPrintable(result.fatalError));
        QCOMPARE(result.events, 2);
        QCOMPARE(result.malformed, 2);
        QCOMPARE(sink.malformed[0].toString(), u"requests.csv:5: expected 12 columns, found 6"_qs);
        QCOMPARE(sink.malformed[1].toString(),
                 u"requests.csv:6: unreadable timestamp \"not a time\""_qs);

        const RequestEvent &first = sink.events[0];
        QCOMPARE(first.tsMs, isoMs("2026-02-18T22:44:09.512Z"));
        QCOMPARE(first.method, u"GET"_qs);
        QCOMPARE(first.url, u"https://graph.microsoft.com/v1.0/me/onenote/pages"_qs);
        QCOMPARE(first.status, 429);
        QCOMPARE(first.durationMs, 84.5);
        QCOMPARE(first.requestId, u"req-1"_qs);
        QCOMPARE(first.operationId, u"op-1"_qs);
        QCOMPARE(first.app, u"note-bridge"_qs);
        QCOMPARE(first.identity, u"alice@contoso.com"_qs); // from customDimensions
        QCOMPARE(first.retryAfter, u"30"_qs);
        QCOMPARE(first.headers.value(u"x-ms-throttle-scope"), u"Application"_qs);
        QCOMPARE(first.attempt, 2);
        QCOMPARE(first.lane, u"background"_qs);
        QCOMPARE(first.line, 2);
        const QJsonObject extra = QJsonDocument::fromJson(first.extraJson).object();
        QCOMPARE(extra.value(u"success").toString(), u"False"_qs);
        QCOMPARE(extra.value(u"customDimensions").toObject().value(u"Env").toString(), u"prod"_qs);

        const RequestEvent &second = sink.events[1];
        QCOMPARE(second.identity, u"bob@contoso.com"_qs);
        QCOMPARE(second.method, u"POST"_qs);
        QCOMPARE(second.line, 3);
        QCOMPARE(QJsonDocument::fromJson(second.extraJson).object().value(u"itemCount").toString(),
                 u"multi\nline"_qs);
    }

    void csvDialects_data()
    {
        QTest::addColumn<QByteArray>("csv");
        QTest::addColumn<QString>("mapping");
        QTest::addColumn<QString>("method");
        QTest::addColumn<QString>("url");
        QTest::addColumn<int>("status");
        QTest::addColumn<double>("duration");
        QTest::addColumn<QString>("identity");
        QTest::addColumn<QString>("errorCode");

        QTest::newRow("APIM GatewayLogs (TSV)")
            << QByteArray("TimeGenerated\tMethod\tUrl\tResponseCode\tTotalTime\tApimSubscriptionId"
                          "\tBackendResponseCode\tLastErrorReason\n"
                          "2026-02-18T22:44:09.5120000Z\tGET\thttps://apim.example/"
                          "orders\t429\t3\tsub-123\t0\tRateLimitExceeded\n")
            << QString() << "GET"
            << "https://apim.example/orders" << 429 << 3.0 << "sub-123"
            << "RateLimitExceeded";
        QTest::newRow("Log Analytics AppDependencies (semicolons)")
            << QByteArray("TimeGenerated;Target;Name;Data;ResultCode;DurationMs;Success;"
                          "UserAuthenticatedId;AppRoleName\n"
                          "2026-02-18T22:44:09.512Z;graph.microsoft.com;GET "
                          "/v1.0/me;https://graph.microsoft.com/v1.0/"
                          "me;503;250.25;False;carol@contoso.com;worker\n")
            << QString() << "GET"
            << "https://graph.microsoft.com/v1.0/me" << 503 << 250.25 << "carol@contoso.com"
            << QString();
        QTest::newRow("explicit mapping") << QByteArray("When,Who,Verb,Where,Code,Took,RA\n"
                                                        "1771454649512,svc,PUT,/v1/x,429,7,55\n")
                                          << "ts=When,identity=Who,method=Verb,url=Where,status="
                                             "Code,durationMs=Took,header.retry-after=RA"
                                          << "PUT"
                                          << "/v1/x" << 429 << 7.0 << "svc" << QString();
    }

    void csvDialects()
    {
        QFETCH(QByteArray, csv);
        QFETCH(QString, mapping);
        QFETCH(QString, method);
        QFETCH(QString, url);
        QFETCH(int, status);
        QFETCH(double, duration);
        QFETCH(QString, identity);
        QFETCH(QString, errorCode);
        ReaderOptions options;
        if (!mapping.isEmpty())
            options.csvMapping = *CsvMapping::fromString(mapping);
        const auto reader = createReader(QStringLiteral("csv"), options);
        CollectingSink sink;
        const ReadResult result = readBytes(*reader, csv, sink);
        QVERIFY2(result.fatalError.isEmpty(), qPrintable(result.fatalError));
        QCOMPARE(result.events, 1);
        const RequestEvent &e = sink.events[0];
        QCOMPARE(e.tsMs, isoMs("2026-02-18T22:44:09.512Z"));
        QCOMPARE(e.method, method);
        QCOMPARE(e.url, url);
        QCOMPARE(e.status, status);
        QCOMPARE(e.durationMs, duration);
        QCOMPARE(e.identity, identity);
        QCOMPARE(e.errorCode, errorCode);
        if (!mapping.isEmpty())
            QCOMPARE(e.retryAfter, u"55"_qs);
    }

    void csvWithoutTimestampNeedsAMapping()
    {
        CsvReader reader;
        CollectingSink sink;
        const ReadResult result = readBytes(reader, "a,b,c\n1,2,3\n", sink, u"x.csv"_qs);
        QVERIFY(result.fatalError.startsWith(u"x.csv: no timestamp column"));
        QVERIFY(result.fatalError.contains(u"--map"));
        CsvReader mapped(*CsvMapping::fromString(QStringLiteral("ts=nope")));
        const ReadResult missing = readBytes(mapped, "a,b,c\n1,2,3\n", sink, u"x.csv"_qs);
        QVERIFY2(missing.fatalError.startsWith(u"x.csv: column \"nope\""),
                 qPrintable(missing.fatalError));
        QVERIFY(sink.events.empty());
    }

    // ---- OTLP --------------------------------------------------------------------------------

    void otlpSpecExample()
    {
        // jq: one resourceSpans, one span (kind 2, server), start 1544712660000000000 ns,
        // end 1544712661000000000 ns, service.name my.service, no HTTP attributes.
        OtlpReader reader;
        CollectingSink sink;
        const QString path = thirdParty("otlp/opentelemetry-proto_examples_trace.json");
        const ReadResult result = readFile(reader, path, sink);
        QVERIFY2(result.fatalError.isEmpty(), qPrintable(result.fatalError));
        QCOMPARE(result.events, 1);
        QCOMPARE(result.malformed, 0);
        const RequestEvent &span = sink.events[0];
        QCOMPARE(span.tsMs, Q_INT64_C(1544712660000));
        QCOMPARE(span.durationMs, 1000.0);
        QCOMPARE(span.app, u"my.service"_qs);
        QCOMPARE(span.method, u"I'm a server span"_qs);
        QCOMPARE(span.status, 200);
        QCOMPARE(span.operationId, u"5B8EFFF798038103D269B633813FC60C"_qs);
        QCOMPARE(span.requestId, u"EEE19B7EC3C1B174"_qs);
        QCOMPARE(span.line, 1);
    }

    void otlpSemanticConventions()
    {
        const auto attr = [](const char *key, const QJsonObject &value) {
            return QJsonObject{{QStringLiteral("key"), QString::fromLatin1(key)},
                               {QStringLiteral("value"), value}};
        };
        const auto str = [](const char *text) {
            return QJsonObject{{QStringLiteral("stringValue"), QString::fromLatin1(text)}};
        };
        const QJsonObject oldSpan{
            {QStringLiteral("traceId"), QStringLiteral("t1")},
            {QStringLiteral("spanId"), QStringLiteral("s1")},
            {QStringLiteral("name"), QStringLiteral("GET")},
            {QStringLiteral("kind"), 3},
            {QStringLiteral("startTimeUnixNano"), QStringLiteral("1771454649512000000")},
            {QStringLiteral("endTimeUnixNano"), QStringLiteral("1771454649596000000")},
            {QStringLiteral("attributes"),
             QJsonArray{
                 attr("http.method", str("GET")),
                 attr("http.url", str("https://graph.microsoft.com/v1.0/me?sig=SECRETSIG")),
                 attr("http.status_code",
                      QJsonObject{{QStringLiteral("intValue"), QStringLiteral("429")}}),
                 attr("enduser.id", str("alice@contoso.com")),
                 attr("http.response.header.retry_after",
                      QJsonObject{{QStringLiteral("arrayValue"),
                                   QJsonObject{{QStringLiteral("values"), QJsonArray{str("7")}}}}}),
                 attr("http.request.header.retry-attempt",
                      QJsonObject{
                          {QStringLiteral("arrayValue"),
                           QJsonObject{{QStringLiteral("values"), QJsonArray{str("1")}}}}})}}};
        const QJsonObject newSpan{
            {QStringLiteral("traceId"), QStringLiteral("t2")},
            {QStringLiteral("spanId"), QStringLiteral("s2")},
            {QStringLiteral("name"), QStringLiteral("POST /jobs")},
            {QStringLiteral("kind"), QStringLiteral("SPAN_KIND_SERVER")},
            {QStringLiteral("startTimeUnixNano"), 1771454650000000000.0},
            {QStringLiteral("endTimeUnixNano"), 1771454650250000000.0},
            {QStringLiteral("attributes"),
             QJsonArray{
                 attr("http.request.method", str("POST")), attr("url.scheme", str("https")),
                 attr("server.address", str("api.fabric.microsoft.com")),
                 attr("url.path", str("/v1/jobs")),
                 attr("http.response.status_code", QJsonObject{{QStringLiteral("intValue"), 200}}),
                 attr("user.id", str("sp-migrator")),
                 attr("http.response.header.x-ms-throttle-limit-percentage", str("0.9"))}}};
        const QJsonObject internal{
            {QStringLiteral("name"), QStringLiteral("compute")},
            {QStringLiteral("kind"), 1},
            {QStringLiteral("startTimeUnixNano"), QStringLiteral("1771454650000000000")}};
        const QJsonObject request{
            {QStringLiteral("resourceSpans"),
             QJsonArray{QJsonObject{
                 {QStringLiteral("resource"),
                  QJsonObject{{QStringLiteral("attributes"),
                               QJsonArray{attr("service.name", str("note-bridge"))}}}},
                 {QStringLiteral("scopeSpans"),
                  QJsonArray{QJsonObject{
                      {QStringLiteral("spans"), QJsonArray{oldSpan, newSpan, internal}}}}}}}}};
        // Two collector lines: the same request twice, once per line.
        const QByteArray line = QJsonDocument(request).toJson(QJsonDocument::Compact);
        OtlpReader reader;
        CollectingSink sink;
        const ReadResult result =
            readBytes(reader, line + '\n' + line + "\nnot json\n", sink, u"traces.jsonl"_qs);
        QCOMPARE(result.events, 4);
        QCOMPARE(result.malformed, 1);
        QCOMPARE(sink.malformed[0].line, 3);
        const RequestEvent &old = sink.events[0];
        QCOMPARE(old.tsMs, Q_INT64_C(1771454649512));
        QCOMPARE(old.durationMs, 84.0);
        QCOMPARE(old.method, u"GET"_qs);
        QCOMPARE(old.status, 429);
        QCOMPARE(old.identity, u"alice@contoso.com"_qs);
        QCOMPARE(old.app, u"note-bridge"_qs);
        QCOMPARE(old.retryAfter, u"7"_qs);
        QCOMPARE(old.attempt, 1);
        QVERIFY(!old.url.contains(u"SECRETSIG"));
        const RequestEvent &current = sink.events[1];
        QCOMPARE(current.url, u"https://api.fabric.microsoft.com/v1/jobs"_qs);
        QCOMPARE(current.method, u"POST"_qs);
        QCOMPARE(current.status, 200);
        // Numbers (not strings) for nanoseconds pass through a double: ~1 µs of rounding.
        QVERIFY2(qAbs(current.durationMs - 250.0) < 0.01,
                 qPrintable(QString::number(current.durationMs)));
        QCOMPARE(current.identity, u"sp-migrator"_qs);
        QCOMPARE(current.headers.value(u"x-ms-throttle-limit-percentage"), u"0.9"_qs);
        QCOMPARE(sink.events[2].line, 2);

        // The function the live listener calls on a POST body.
        CollectingSink live;
        QString error;
        QVERIFY(parseOtlpJson(line, QStringLiteral("http"), live, &error));
        QCOMPARE(live.events.size(), size_t(2));
        QVERIFY(!parseOtlpJson("{\"log\":{}}", QStringLiteral("http"), live, &error));
        QVERIFY(error.contains(u"resourceSpans"));
        QVERIFY(!parseOtlpJson("{", QStringLiteral("http"), live, &error));
        QVERIFY(error.startsWith(u"not valid JSON"));
    }

    // ---- access logs -------------------------------------------------------------------------

    void apacheCombinedLog()
    {
        // wc -l: 10000 lines; grep -E for a full Combined line matches 9999: line 8899's user
        // agent is cut off without its closing quote, so it is read as Common (the request is
        // still a request). awk '{print $9}' | sort | uniq -c gives the statuses below.
        AccessLogReader reader;
        CollectingSink sink;
        const QString path = thirdParty("oplogs/elastic-examples_apache_logs_combined.log");
        const ReadResult result = readFile(reader, path, sink);
        QVERIFY2(result.fatalError.isEmpty(), qPrintable(result.fatalError));
        QCOMPARE(result.events, 10000);
        QCOMPARE(result.malformed, 0);
        QCOMPARE(result.endLine, 10000);
        QMap<int, int> statuses;
        QMap<QString, int> methods;
        QSet<QString> identities;
        for (const RequestEvent &e : sink.events) {
            ++statuses[e.status];
            ++methods[e.method];
            identities.insert(e.identity);
        }
        const QMap<int, int> expectedStatuses{{200, 9126}, {304, 445}, {404, 213}, {301, 164},
                                              {206, 45},   {500, 3},   {416, 2},   {403, 2}};
        QCOMPARE(statuses, expectedStatuses);
        const QMap<QString, int> expectedMethods{
            {u"GET"_qs, 9952}, {u"HEAD"_qs, 42}, {u"OPTIONS"_qs, 1}, {u"POST"_qs, 5}};
        QCOMPARE(methods, expectedMethods);
        // $remote_user is "-" on every line: the client address is the identity (1753 distinct,
        // awk '{print $1}' | sort -u | wc -l).
        QCOMPARE(identities.size(), 1753);
        const RequestEvent &first = sink.events.front();
        QCOMPARE(first.tsMs, isoMs("2015-05-17T10:05:03.000Z"));
        QCOMPARE(first.identity, u"83.149.9.216"_qs);
        QCOMPARE(first.url, u"/presentations/logstash-monitorama-2013/images/kibana-search.png"_qs);
        QCOMPARE(first.line, 1);
        QCOMPARE(first.offset, 0);
        QCOMPARE(sink.events[8898].identity, u"46.118.127.106"_qs);
        QCOMPARE(sink.events[8898].line, 8899);
    }

    void nginxLogFormat()
    {
        const QString format = QStringLiteral(
            R"($remote_addr - $remote_user [$time_iso8601] "$request" $status $request_time "$http_authorization" rt=$upstream_http_retry_after scope=$sent_http_x_ms_throttle_scope $msec)");
        const QString jwt = makeJwt({{QStringLiteral("upn"), QStringLiteral("dave@contoso.com")}});
        const QByteArray log = "10.0.0.1 - - [2026-02-18T22:44:09+00:00] \"GET "
                               "/v1/items?code=AUTHCODE HTTP/1.1\" 429 0.084 \"Bearer " +
                               jwt.toLatin1() +
                               "\" rt=55 scope=User 1771454649.512\n"
                               "10.0.0.2 - erin [2026-02-18T22:44:10+00:00] \"POST /v1/jobs "
                               "HTTP/2.0\" 200 1.5 \"-\" rt=- scope=- 1771454650.000\n"
                               "garbage line\n";
        AccessLogReader reader(format);
        CollectingSink sink;
        const ReadResult result = readBytes(reader, log, sink, u"nginx.log"_qs);
        QVERIFY2(result.fatalError.isEmpty(), qPrintable(result.fatalError));
        QCOMPARE(result.events, 2);
        QCOMPARE(result.malformed, 1);
        QVERIFY(sink.malformed[0].toString().startsWith(u"nginx.log:3: "));
        const RequestEvent &first = sink.events[0];
        QCOMPARE(first.tsMs, Q_INT64_C(1771454649512)); // $msec comes last and wins
        QCOMPARE(first.status, 429);
        QCOMPARE(first.durationMs, 84.0);
        QCOMPARE(first.identity, u"dave@contoso.com"_qs);
        QCOMPARE(first.retryAfter, u"55"_qs);
        QCOMPARE(first.headers.value(u"x-ms-throttle-scope"), u"User"_qs);
        QVERIFY(!dumpEvent(first).contains(jwt));
        QVERIFY(!first.url.contains(u"AUTHCODE"));
        QCOMPARE(sink.events[1].identity, u"erin"_qs);
        QCOMPARE(sink.events[1].method, u"POST"_qs);
        QVERIFY(sink.events[1].retryAfter.isEmpty());

        QString error;
        QVERIFY(!AccessLogFormat::compile(QStringLiteral("$status $request"), &error));
        QVERIFY(error.contains(u"time"));
        QVERIFY(!AccessLogFormat::compile(QStringLiteral("plain"), &error));
        AccessLogReader bad(QStringLiteral("no variables"));
        QVERIFY(readBytes(bad, log, sink, u"n.log"_qs).fatalError.startsWith(u"n.log: "));
    }

    void accessLogResumes()
    {
        const QByteArray whole =
            fileBytes(thirdParty("oplogs/elastic-examples_apache_logs_combined.log"));
        AccessLogReader reader;
        CollectingSink first;
        qint64 resumeOffset = 0;
        qint64 resumeLine = 0;
        std::atomic<bool> cancel{false};
        ReadControl control;
        control.checkpoint = [&](qint64 offset, qint64 line) {
            resumeOffset = offset;
            resumeLine = line;
        };
        // Read the first 1234 lines only (a truncated copy), then resume on the whole file.
        const qsizetype cut = [&] {
            qsizetype at = -1;
            for (int i = 0; i < 1234; ++i)
                at = whole.indexOf('\n', at + 1);
            return at + 1;
        }();
        readBytes(reader, whole.left(cut), first, u"a.log"_qs, control);
        QCOMPARE(resumeLine, 1234);
        QCOMPARE(resumeOffset, cut);
        ReadControl resume;
        resume.startOffset = resumeOffset;
        resume.startLine = resumeLine;
        CollectingSink rest;
        const ReadResult result = readBytes(reader, whole, rest, u"a.log"_qs, resume);
        QCOMPARE(result.events, 10000 - 1234);
        QCOMPARE(rest.events.front().line, 1235);
        QCOMPARE(rest.events.front().offset, cut);
    }

    void lineReadersStopWhenCancelled()
    {
        // Line readers poll the flag every 4096 lines: a pre-set flag stops the 10000-line log
        // early, and the result says so.
        std::atomic<bool> cancel{true};
        ReadControl control;
        control.cancel = &cancel;
        qint64 progressCalls = 0;
        control.progress = [&](qint64 done, qint64 total) {
            ++progressCalls;
            QVERIFY(done <= total);
        };
        AccessLogReader reader;
        CollectingSink sink;
        const ReadResult result = readFile(
            reader, thirdParty("oplogs/elastic-examples_apache_logs_combined.log"), sink, control);
        QVERIFY(result.cancelled);
        QVERIFY(result.events < 10000);
        QCOMPARE(result.events, qint64(sink.events.size()));
        QVERIFY(progressCalls >= 1); // the final report
    }

    // ---- Azure records -----------------------------------------------------------------------

    void azureRecords_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("events");
        QTest::addColumn<int>("malformed");
        QTest::addColumn<QString>("time");
        QTest::addColumn<QString>("method");
        QTest::addColumn<QString>("url");
        QTest::addColumn<int>("status");
        QTest::addColumn<double>("duration");
        QTest::addColumn<QString>("identity");
        QTest::newRow("app service")
            << "oplogs/otel-contrib_azurelogs_appservice_httplogs.json" << 1 << 0
            << "2024-04-24T11:59:40.989Z"
            << "GET"
            << "http://test.com/api/test/?foo=42" << 200 << 420.0 << "user@test.com";
        QTest::newRow("front door") << "oplogs/otel-contrib_azurelogs_frontdoor_accesslog.json" << 1
                                    << 0 << "2024-04-24T12:06:12.000Z"
                                    << "GET"
                                    << "https://test.net/" << 200 << 230.0 << "42.42.42.42";
        // EventTimeString "9/28/2016 8:40:06 PM +00:00", EventName "Create Queue", Succeeded.
        QTest::newRow("sb operational")
            << "servicebus/azure-docs_monitor-service-bus-reference_OperationalLogs-example.json"
            << 1 << 0 << "2016-09-28T20:40:06.000Z"
            << "CreateQueue"
            << "https://mynamespace.servicebus.windows.net/f8096791adb448579ee83d30e006a13e/"
               "?api-version=2016-07"
            << 200 << -1.0 << QString();
        // The documentation's template: Status "Success | Failure" is a placeholder, not data.
        QTest::newRow("sb runtime audit template")
            << "servicebus/azure-docs_monitor-service-bus-reference_RuntimeAuditLogs-TEMPLATE.json"
            << 0 << 1 << QString() << QString() << QString() << 0 << 0.0 << QString();
        // IP filtering: no request, no time.
        QTest::newRow("sb vnet")
            << "servicebus/azure-docs_monitor-service-bus-reference_VNetAndIPFiltering-example.json"
            << 0 << 1 << QString() << QString() << QString() << 0 << 0.0 << QString();
    }

    void azureRecords()
    {
        QFETCH(QString, file);
        QFETCH(int, events);
        QFETCH(int, malformed);
        QFETCH(QString, time);
        QFETCH(QString, method);
        QFETCH(QString, url);
        QFETCH(int, status);
        QFETCH(double, duration);
        QFETCH(QString, identity);
        AzureRecordsReader reader;
        CollectingSink sink;
        const QString path = QStringLiteral(TS_THIRDPARTY_DIR "/") + file;
        const ReadResult result = readFile(reader, path, sink);
        QVERIFY2(result.fatalError.isEmpty(), qPrintable(result.fatalError));
        QCOMPARE(result.events, events);
        QCOMPARE(result.malformed, malformed);
        for (const MalformedRecord &record : sink.malformed)
            QVERIFY2(record.line > 0 && !record.reason.isEmpty(), qPrintable(record.toString()));
        if (events == 0)
            return;
        const RequestEvent &e = sink.events[0];
        QCOMPARE(e.tsMs, isoMs(time.toLatin1().constData()));
        QCOMPARE(e.method, method);
        QCOMPARE(e.url, url);
        QCOMPARE(e.status, status);
        QCOMPARE(e.durationMs, duration);
        QCOMPARE(e.identity, identity);
    }

    void serviceBusRecordsFromDocs()
    {
        AzureRecordsReader reader;
        CollectingSink sink;
        readFile(
            reader,
            thirdParty(
                "servicebus/azure-docs_monitor-service-bus-reference_OperationalLogs-example.json"),
            sink);
        QCOMPARE(sink.events.size(), size_t(1));
        QCOMPARE(sink.events[0].service, u"servicebus"_qs);
        QCOMPARE(sink.events[0].serviceBusNamespace, u"mynamespace"_qs);
        QCOMPARE(sink.events[0].requestId, u"5ee74c9e-72b5-4e98-97c4-08a62e56e221_G1"_qs);

        // A real RuntimeAuditLogs record (the template's shape with values filled in), several
        // records per line and a wrapper with more members after "records".
        const QByteArray records =
            "{\"records\":[{\"ActivityId\":\"a1\",\"ActivityName\":\"SendMessage\",\"ResourceId\":"
            "\"/SUBSCRIPTIONS/x/RESOURCEGROUPS/rg/PROVIDERS/MICROSOFT.SERVICEBUS/NAMESPACES/"
            "SB-PROD/servicebus/orders\","
            "\"Time\":\"2/18/2026 10:44:09 PM "
            "+00:00\",\"Status\":\"Failure\",\"Protocol\":\"AMQP\",\"AuthType\":\"AAD\",\"AuthId\":"
            "\"orders-app\",\"Count\":10,\"Category\":\"RuntimeAuditLogs\"},"
            "{\"ActivityName\":\"ReceiveMessage\",\"Time\":\"2/18/2026 10:44:10 PM "
            "+00:00\",\"Status\":\"Success\",\"AuthId\":\"orders-app\",\"Count\":1,\"Category\":"
            "\"RuntimeAuditLogs\"}],\"extra\":{\"a\":[1,2]}}\n";
        CollectingSink audit;
        const ReadResult result = readBytes(reader, records, audit, u"audit.json"_qs);
        QVERIFY2(result.fatalError.isEmpty(), qPrintable(result.fatalError));
        QCOMPARE(result.events, 2);
        const RequestEvent &send = audit.events[0];
        QCOMPARE(send.method, u"Send"_qs);
        QCOMPARE(send.status, 500);
        QCOMPARE(send.errorCode, u"Failure"_qs);
        QCOMPARE(send.identity, u"orders-app"_qs);
        QCOMPARE(send.credits, 10.0);
        QCOMPARE(send.serviceBusNamespace, u"sb-prod"_qs);
        QCOMPARE(send.entity, u"orders"_qs);
        QCOMPARE(send.tsMs, isoMs("2026-02-18T22:44:09.000Z"));
        QCOMPARE(audit.events[1].method, u"Receive"_qs);
        QCOMPARE(audit.events[1].status, 200);
    }

    // ---- VCR cassettes (Fabric CLI recordings) -------------------------------------------------

    void fabricCassettes_data()
    {
        // grep -c '^- request:' / '^      Date:' / 'code: 429' per file: every interaction has a
        // Date; statuses over all four files: 75x200, 9x201, 1x400, 5x429.
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("events");
        QTest::addColumn<int>("throttled");
        QTest::newRow("acls") << "fabric/fabric-cli-vcr_test_acls_rm_connection_sp_success.yaml"
                              << 16 << 1;
        QTest::newRow("cd") << "fabric/fabric-cli-vcr_test_cd_subfolder_success.yaml" << 36 << 2;
        QTest::newRow("mkdir") << "fabric/fabric-cli-vcr_test_mkdir_subfolder_success.yaml" << 17
                               << 1;
        QTest::newRow("rm") << "fabric/fabric-cli-vcr_test_rm_non_empty_folder_failure.yaml" << 21
                            << 1;
    }

    void fabricCassettes()
    {
        QFETCH(QString, file);
        QFETCH(int, events);
        QFETCH(int, throttled);
        const QString path = QStringLiteral(TS_THIRDPARTY_DIR "/") + file;
        QCOMPARE(detectFileFormat(path, nullptr), u"vcr"_qs);
        VcrReader reader;
        CollectingSink sink;
        const ReadResult result = readFile(reader, path, sink);
        QVERIFY2(result.fatalError.isEmpty(), qPrintable(result.fatalError));
        QCOMPARE(result.events, events);
        QCOMPARE(result.malformed, 0);
        int seen = 0;
        for (const RequestEvent &e : sink.events) {
            QVERIFY(e.url.startsWith(u"https://api.fabric.microsoft.com/v1/"));
            QVERIFY(!e.method.isEmpty());
            QVERIFY(e.tsMs >= isoMs("2025-01-01T00:00:00.000Z"));
            if (e.status != 429)
                continue;
            ++seen;
            QVERIFY(!e.retryAfter.isEmpty());
            QCOMPARE(e.headers.value(u"x-ms-public-api-error-code"), u"RequestBlocked"_qs);
            QVERIFY(e.body.contains(u"\"errorCode\": \"RequestBlocked\""));
        }
        QCOMPARE(seen, throttled);
    }

    void fabricThrottleAsRecorded()
    {
        // The rm cassette's 429 (line 5486 of the file): Date, RequestId, Retry-After and the
        // folded single-quoted body, read by hand.
        VcrReader reader;
        CollectingSink sink;
        readFile(reader, thirdParty("fabric/fabric-cli-vcr_test_rm_non_empty_folder_failure.yaml"),
                 sink);
        QCOMPARE(sink.events.front().tsMs, isoMs("2025-09-03T07:02:21.000Z"));
        const auto it = std::find_if(sink.events.begin(), sink.events.end(),
                                     [](const RequestEvent &e) { return e.status == 429; });
        QVERIFY(it != sink.events.end());
        QCOMPARE(it->tsMs, isoMs("2025-09-03T07:02:27.000Z"));
        QCOMPARE(it->method, u"GET"_qs);
        QCOMPARE(
            it->url,
            u"https://api.fabric.microsoft.com/v1/workspaces/916933dd-72f5-4d84-84d3-3552275d7fbc/folders?recursive=True"_qs);
        QCOMPARE(it->retryAfter, u"53"_qs);
        QCOMPARE(it->requestId, u"31551ddf-4f45-4022-bda9-34a804c5fb62"_qs);
        QCOMPARE(it->body,
                 u"{\"requestId\": \"31551ddf-4f45-4022-bda9-34a804c5fb62\", \"errorCode\": "
                 "\"RequestBlocked\", \"message\": \"Request is blocked by the upstream service "
                 "until: 9/3/2025 7:03:20 AM (UTC)\"}"_qs);
    }

    void vcrScalarsAndDates()
    {
        const QByteArray cassette =
            "interactions:\n"
            "- request:\n"
            "    body: '{\"a\": 1}'\n"
            "    headers:\n"
            "      Authorization:\n"
            "      - Bearer " +
            makeJwt({{QStringLiteral("upn"), QStringLiteral("sp@contoso.com")}}).toLatin1() +
            "\n"
            "    method: POST\n"
            "    uri: https://x.example/a?sig=SECRET\n"
            "  response:\n"
            "    body:\n"
            "      string: \"line one\\n\\\"quoted\\\" \\u00e9\n"
            "        folded\"\n"
            "    headers:\n"
            "      date:\n"
            "      - 18 Feb 2026 22:44:09 GMT\n"
            "      x-ms-throttle-scope:\n"
            "      - User\n"
            "      - Application\n"
            "    status:\n"
            "      code: 503\n"
            "      message: Service Unavailable\n"
            "- request:\n"
            "    method: GET\n"
            "    uri: https://x.example/b\n"
            "  response:\n"
            "    status: {code: 200}\n"
            "version: 1\n";
        VcrReader reader;
        CollectingSink sink;
        const ReadResult result = readBytes(reader, cassette, sink, u"c.yaml"_qs);
        QCOMPARE(result.events, 1);
        QCOMPARE(result.malformed, 1); // the second has no Date
        QCOMPARE(sink.malformed[0].toString().left(9), u"c.yaml:22"_qs);
        const RequestEvent &e = sink.events[0];
        QCOMPARE(e.tsMs, isoMs("2026-02-18T22:44:09.000Z"));
        QCOMPARE(e.status, 503);
        QCOMPARE(e.identity, u"sp@contoso.com"_qs);
        QVERIFY(!e.url.contains(u"SECRET"));
        QCOMPARE(e.headers.value(u"x-ms-throttle-scope"), u"User, Application"_qs);
        QCOMPARE(e.body, u"line one\n\"quoted\" \u00e9 folded"_qs);
        QCOMPARE(parseHttpDateMs("Wed, 03 Sep 2025 07:02:21 GMT"),
                 isoMs("2025-09-03T07:02:21.000Z"));
        QVERIFY(!parseHttpDateMs("Wed, 33 Sep 2025 07:02:21 GMT"));
        QVERIFY(!parseHttpDateMs("yesterday"));
    }

    // ---- resilience --------------------------------------------------------------------------

    void resilienceLines()
    {
        const QByteArray log =
            "2026-02-18 22:44:09.512 +00:00 [WRN] Resilience event occurred. EventName: "
            "'OnCircuitOpened', Source: 'GraphPipeline/(null)/CircuitBreaker', Operation Key: "
            "'page-1', Result: '429'\n"
            "2026-02-18T22:44:09,600Z WARN Execution attempt. Source: "
            "'GraphPipeline/(null)/Retry', Operation Key: 'page-1', Result: '429', Handled: "
            "'True', Attempt: '1', Execution Time: 12.5ms\n"
            "[2026-02-18T22:44:09.700+01:00] Execution attempt. Source: "
            "'GraphPipeline/(null)/Retry', Operation Key: 'page-1', Result: 'TooManyRequests', "
            "Handled: 'True', Attempt: '2', Execution Time: 3ms\n"
            "2026-02-18 22:44:10 warn: Polly[3]\n"
            "      Resilience event occurred. EventName: 'OnRetry', Source: "
            "'GraphPipeline/(null)/Retry', Operation Key: 'page-1', Result: '429'\n"
            "2026-02-18T22:44:11.000Z INFO c.e.Svc - CircuitBreaker 'backendA' changed state from "
            "CLOSED to HALF_OPEN\n"
            "2026-02-18T22:44:12.000Z ERROR Azure.Messaging.ServiceBus.ServiceBusException: The "
            "request was terminated because the entity is being throttled. Error code : 50009. "
            "Please wait 2 seconds and try again. Reference:abc, TrackingId:def, "
            "SystemTracker:sb-prod:Queue:orders, Timestamp:2026-02-18T22:44:12 (ServiceBusy). "
            "Send\n"
            "2026-02-18T22:44:13.000Z dbug: Microsoft.Graph Request GET "
            "https://graph.microsoft.com/v1.0/me/messages Retry-Attempt: 3 StatusCode: 429\n"
            "just noise without a pattern\n";
        ResilienceReader reader;
        CollectingSink sink;
        const ReadResult result = readBytes(reader, log, sink, u"app.log"_qs);
        QVERIFY2(result.fatalError.isEmpty(), qPrintable(result.fatalError));
        QCOMPARE(result.events, 7);
        QCOMPARE(result.malformed, 0);
        const auto &e = sink.events;
        QCOMPARE(e[0].type, EventType::Breaker);
        QCOMPARE(e[0].breakerState, u"open"_qs);
        QCOMPARE(e[0].breakerScope, u"GraphPipeline/CircuitBreaker"_qs);
        QCOMPARE(e[0].tsMs, isoMs("2026-02-18T22:44:09.512Z"));
        QCOMPARE(e[1].type, EventType::Request);
        QCOMPARE(e[1].status, 429);
        QCOMPARE(e[1].attempt, 1);
        QCOMPARE(e[1].durationMs, 12.5);
        QCOMPARE(e[1].operationId, u"page-1"_qs);
        QCOMPARE(e[1].tsMs, isoMs("2026-02-18T22:44:09.600Z"));
        QCOMPARE(e[2].status, 429);
        QCOMPARE(e[2].attempt, 2);
        QCOMPARE(e[2].tsMs, isoMs("2026-02-18T21:44:09.700Z"));
        QCOMPARE(e[3].type, EventType::Annotation); // OnRetry: the attempt lines count retries
        QCOMPARE(e[3].tsMs, isoMs("2026-02-18T22:44:10.000Z")); // from the header line above
        QCOMPARE(e[3].line, 5);
        QCOMPARE(e[4].type, EventType::Breaker);
        QCOMPARE(e[4].breakerScope, u"backendA"_qs);
        QCOMPARE(e[4].breakerState, u"half-open"_qs);
        QCOMPARE(e[5].status, 429);
        QCOMPARE(e[5].errorCode, u"50009"_qs);
        QCOMPARE(e[5].service, u"servicebus"_qs);
        QCOMPARE(e[5].serviceBusNamespace, u"sb-prod"_qs);
        QCOMPARE(e[5].entity, u"orders"_qs);
        QCOMPARE(e[5].method, u"Send"_qs);
        QVERIFY(e[5].body.contains(u"Please wait 2 seconds"));
        QCOMPARE(e[6].attempt, 3);
        QCOMPARE(e[6].status, 429);
        QCOMPARE(e[6].method, u"GET"_qs);
        QCOMPARE(e[6].url, u"https://graph.microsoft.com/v1.0/me/messages"_qs);
    }

    // Polly's breaker refusing a call (issue 35.5): the attempt was never sent.
    void resilienceBrokenCircuitIsRefusedByTheClientsBreaker_data()
    {
        QTest::addColumn<QByteArray>("result");
        QTest::addColumn<bool>("refused");
        QTest::newRow("BrokenCircuitException")
            << QByteArray("Polly.CircuitBreaker.BrokenCircuitException: The circuit is now open "
                          "and is not allowing calls.")
            << true;
        QTest::newRow("IsolatedCircuitException (held open by hand)")
            << QByteArray("Polly.CircuitBreaker.IsolatedCircuitException: The circuit is "
                          "manually held open and is not allowing calls.")
            << true;
        QTest::newRow("another exception: sent, no answer")
            << QByteArray("System.Net.Http.HttpRequestException: Connection refused") << false;
        QTest::newRow("an answer") << QByteArray("503") << false;
    }
    void resilienceBrokenCircuitIsRefusedByTheClientsBreaker()
    {
        QFETCH(QByteArray, result);
        QFETCH(bool, refused);
        const QByteArray log = "2026-02-18T22:44:09.600Z WARN Execution attempt. Source: "
                               "'GraphPipeline/(null)/Retry', Operation Key: 'page-1', Result: '" +
                               result + "', Handled: 'True', Attempt: '2', Execution Time: 0.1ms\n";
        ResilienceReader reader;
        CollectingSink sink;
        const ReadResult result2 = readBytes(reader, log, sink, u"app.log"_qs);
        QCOMPARE(result2.events, 1);
        QCOMPARE(sink.events[0].refusedByClientBreaker, refused);
        if (refused)
            QCOMPARE(sink.events[0].status, 0);
    }

    void resilienceLineWithoutAnyTimestampIsMalformed()
    {
        ResilienceReader reader;
        CollectingSink sink;
        const ReadResult result = readBytes(
            reader, "CircuitBreaker 'b' changed state from OPEN to CLOSED\n", sink, u"r.log"_qs);
        QCOMPARE(result.events, 0);
        QCOMPARE(result.malformed, 1);
        QVERIFY(sink.malformed[0].toString().startsWith(u"r.log:1: "));
    }

    void leadingTimestamps_data()
    {
        QTest::addColumn<QString>("line");
        QTest::addColumn<QString>("expected"); // empty = none
        QTest::newRow("iso z") << "2026-02-18T22:44:09.512Z x"
                               << "2026-02-18T22:44:09.512Z";
        QTest::newRow("space comma") << "2026-02-18 22:44:09,512 INFO"
                                     << "2026-02-18T22:44:09.512Z";
        QTest::newRow("serilog offset") << "2026-02-18 23:44:09.512 +01:00 [INF]"
                                        << "2026-02-18T22:44:09.512Z";
        QTest::newRow("bracketed") << "[2026-02-18T22:44:09-0100] x"
                                   << "2026-02-18T23:44:09.000Z";
        QTest::newRow("none") << "warn: Polly[3]" << QString();
        QTest::newRow("bad month") << "2026-13-18T22:44:09Z" << QString();
    }

    void leadingTimestamps()
    {
        QFETCH(QString, line);
        QFETCH(QString, expected);
        const QByteArray bytes = line.toUtf8();
        const auto ms = ResilienceReader::leadingTimestampMs(
            std::string_view(bytes.constData(), size_t(bytes.size())));
        QCOMPARE(ms.has_value(), !expected.isEmpty());
        if (ms)
            QCOMPARE(*ms, isoMs(expected.toLatin1().constData()));
    }
};

QTEST_GUILESS_MAIN(TestImporters)
#include "tst_importers.moc"
