// Records a reader must not turn into invented events: a stray quote in a CSV (one malformed
// record at the line where it opened, every later row recovered), dates that do not exist
// ("2026-02-30" is not 2 March) in every time dialect, and numbers outside any believable range
// (ts 1e300, attempt 1e12, durationMs 1e308) in every numeric field of every format: such a
// record is malformed, with its FILE:LINE and a reason, and the rest of the input goes on.
// Finally, extreme values that are accepted (times at 1970 and 9999, 30-day durations, a
// million attempts, advice far in the future) go through the whole analysis and its report
// without overflow: run under the asan-ubsan preset, UBSan aborts on any.
#include "core/timeparse.h"
#include "core/valuelimits.h"
#include "engine/analysis.h"
#include "engine/reportformat.h"
#include "ingest/accesslogreader.h"
#include "ingest/formatdetect.h"
#include "signals/throttlesignals.h"

#include "importertestutil.h"

#include <QJsonDocument>
#include <QJsonObject>

using namespace ts;
using namespace ts::testutil;
using namespace Qt::StringLiterals;

namespace {

// rows = events + malformed, and every malformed record names its source and a line.
void checkAccounting(const ReadResult &result, const CollectingSink &sink, qint64 rows,
                     const QString &source)
{
    QCOMPARE(result.events, qint64(sink.events.size()));
    QCOMPARE(result.malformed, qint64(sink.malformed.size()));
    QCOMPARE(result.events + result.malformed, rows);
    for (const MalformedRecord &record : sink.malformed) {
        QCOMPARE(record.source, source);
        QVERIFY(record.line >= 1);
        QVERIFY(!record.reason.isEmpty());
    }
    for (const RequestEvent &event : sink.events)
        QVERIFY2(limits::eventValueProblem(event).isEmpty(),
                 qPrintable(limits::eventValueProblem(event)));
}

QByteArray csvRow(int i, const QByteArray &body = "ok")
{
    return QByteArray("2026-02-18T22:44:") +
           QByteArray::number(10 + i % 50).rightJustified(2, '0') + "Z,user-" +
           QByteArray::number(i) + ",https://graph.microsoft.com/v1.0/me/" + QByteArray::number(i) +
           ",200," + body + "\n";
}

} // namespace

class TestExtremeValues : public QObject
{
    Q_OBJECT
private slots:
    // The audit's case: 10 rows, a stray quote in row 5 (line 6) merged rows 5-8 into one
    // invented event. Now row 5 alone is malformed, at requests.csv:6, and rows 6-10 are read.
    void csvStrayQuoteCostsOneRecord()
    {
        QByteArray csv = "ts,identity,url,status,body\n";
        for (int i = 1; i <= 10; ++i)
            csv += csvRow(i, i == 5 ? QByteArray("\"it said \"\"no") : QByteArray("fine"));
        const auto reader = createReader(u"csv"_s);
        CollectingSink sink;
        const ReadResult result = readBytes(*reader, csv, sink, u"requests.csv"_s);
        checkAccounting(result, sink, 10, u"requests.csv"_s);
        QCOMPARE(result.events, qint64(9));
        QCOMPARE(result.malformed, qint64(1));
        QVERIFY2(sink.malformed.front().toString().startsWith(u"requests.csv:6: unterminated"),
                 qPrintable(sink.malformed.front().toString()));
        QList<qint64> lines;
        for (const RequestEvent &event : sink.events)
            lines.append(event.line);
        QCOMPARE(lines, (QList<qint64>{2, 3, 4, 5, 7, 8, 9, 10, 11}));
        QCOMPARE(sink.events.back().identity, u"user-10"_s);
        // Offsets point at each record's own first line.
        QCOMPARE(sink.events[4].offset, qint64(csv.indexOf("2026-02-18T22:44:16Z")));
    }

    // Two rows in a row with a stray quote each: the second closes the first's quote, but the
    // joined text is no record, so each row is malformed on its own line.
    void csvTwoStrayQuotesInARow()
    {
        QByteArray csv = "ts,identity,url,status,body\n";
        for (int i = 1; i <= 6; ++i)
            csv += csvRow(i, i == 3 || i == 4 ? QByteArray("\"stray") : QByteArray("fine"));
        const auto reader = createReader(u"csv"_s);
        CollectingSink sink;
        const ReadResult result = readBytes(*reader, csv, sink, u"two.csv"_s);
        checkAccounting(result, sink, 6, u"two.csv"_s);
        QCOMPARE(result.malformed, qint64(2));
        QCOMPARE(sink.malformed[0].line, qint64(4));
        QCOMPARE(sink.malformed[1].line, qint64(5));
    }

    // A quoted field that legitimately spans lines is still one record.
    void csvMultiLineFieldStillJoins()
    {
        QByteArray csv = "ts,identity,url,status,body\n";
        csv += csvRow(1);
        csv += "2026-02-18T22:45:00Z,user-2,https://x/2,500,\"stack:\n  at A()\n  at B()\"\n";
        csv += csvRow(3);
        const auto reader = createReader(u"csv"_s);
        CollectingSink sink;
        const ReadResult result = readBytes(*reader, csv, sink, u"multi.csv"_s);
        checkAccounting(result, sink, 3, u"multi.csv"_s);
        QCOMPARE(result.malformed, qint64(0));
        QCOMPARE(sink.events[1].body, u"stack:\n  at A()\n  at B()"_s);
        QCOMPARE(sink.events[2].line, qint64(6));
    }

    // A stray quote followed by lines that are no records: the search for its end stops after
    // a bounded number of lines, and every line after the quote's is read again on its own.
    void csvStrayQuoteBeforeNonRecords()
    {
        QByteArray csv = "ts,body\n2026-02-18T22:44:10Z,\"opened\n";
        for (int i = 0; i < 250; ++i)
            csv += "no record here\n";
        csv += "2026-02-18T22:44:11Z,last\n";
        const auto reader = createReader(u"csv"_s);
        CollectingSink sink;
        const ReadResult result = readBytes(*reader, csv, sink, u"stray.csv"_s);
        checkAccounting(result, sink, 252, u"stray.csv"_s);
        QCOMPARE(result.events, qint64(1));
        QCOMPARE(sink.malformed.front().line, qint64(2));
        QCOMPARE(sink.events.front().line, qint64(253));
    }

    // 200,000 rows and one stray quote: one malformed record, 199,999 events, exit as usual.
    void csvStrayQuoteInALargeFile()
    {
        constexpr int kRows = 200000;
        constexpr int kStray = 123457;
        QByteArray csv = "ts,identity,url,status,body\n";
        csv.reserve(kRows * 80);
        for (int i = 1; i <= kRows; ++i)
            csv += csvRow(i, i == kStray ? QByteArray("\"stray") : QByteArray("fine"));
        const auto reader = createReader(u"csv"_s);
        CollectingSink sink;
        const ReadResult result = readBytes(*reader, csv, sink, u"big.csv"_s);
        checkAccounting(result, sink, kRows, u"big.csv"_s);
        QCOMPARE(result.malformed, qint64(1));
        QCOMPARE(sink.malformed.front().line, qint64(kStray + 1));
    }

    // Dates that do not exist, hours and offsets out of range, in every time dialect of every
    // reader: the record is malformed (never rolled over into another day).
    void invalidCalendarDates_data()
    {
        QTest::addColumn<QString>("format");
        QTest::addColumn<QByteArray>("input");
        QTest::addColumn<int>("events");
        QTest::addColumn<int>("malformed");
        const auto ndjson = [](const char *ts) -> QByteArray {
            return QByteArray("{\"ts\":\"") + ts + "\",\"url\":\"https://x/\",\"status\":200}\n";
        };
        QTest::newRow("ndjson 30 February")
            << u"ndjson"_s << ndjson("2026-02-30T10:00:00Z") << 0 << 1;
        QTest::newRow("ndjson 29 February, not a leap year")
            << u"ndjson"_s << ndjson("2025-02-29T10:00:00Z") << 0 << 1;
        QTest::newRow("ndjson 29 February 1900")
            << u"ndjson"_s << ndjson("1900-02-29T10:00:00Z") << 0 << 1;
        QTest::newRow("ndjson 31 April") << u"ndjson"_s << ndjson("2026-04-31T10:00:00Z") << 0 << 1;
        QTest::newRow("ndjson hour 24") << u"ndjson"_s << ndjson("2026-02-18T24:00:00Z") << 0 << 1;
        QTest::newRow("ndjson minute 60")
            << u"ndjson"_s << ndjson("2026-02-18T22:60:00Z") << 0 << 1;
        QTest::newRow("ndjson offset +24:00")
            << u"ndjson"_s << ndjson("2026-02-18T22:00:00+24:00") << 0 << 1;
        QTest::newRow("ndjson offset +05:60")
            << u"ndjson"_s << ndjson("2026-02-18T22:00:00+05:60") << 0 << 1;
        QTest::newRow("ndjson before 1970")
            << u"ndjson"_s << ndjson("1969-12-31T23:59:59Z") << 0 << 1;
        QTest::newRow("ndjson leap day 2024 is fine")
            << u"ndjson"_s << ndjson("2024-02-29T10:00:00Z") << 1 << 0;
        QTest::newRow("ndjson leap day 2000 is fine")
            << u"ndjson"_s << ndjson("2000-02-29T10:00:00Z") << 1 << 0;
        QTest::newRow("csv RFC 3339 30 February")
            << u"csv"_s << QByteArray("ts,url\n2026-02-30T10:00:00Z,https://x/\n") << 0 << 1;
        QTest::newRow("csv US 30 February")
            << u"csv"_s << QByteArray("ts,url\n\"2/30/2026, 10:44:09 PM\",https://x/\n") << 0 << 1;
        QTest::newRow("csv US 13 PM")
            << u"csv"_s << QByteArray("ts,url\n2/18/2026 13:44:09 PM,https://x/\n") << 0 << 1;
        QTest::newRow("csv US month 13")
            << u"csv"_s << QByteArray("ts,url\n13/18/2026 10:44:09,https://x/\n") << 0 << 1;
        QTest::newRow("csv US offset +05:99")
            << u"csv"_s << QByteArray("ts,url\n2/18/2026 10:44:09 +05:99,https://x/\n") << 0 << 1;
        QTest::newRow("access CLF 30 Feb") << u"access"_s
                                           << QByteArray("1.2.3.4 - - [30/Feb/2026:10:05:03 +0000] "
                                                         "\"GET /a HTTP/1.1\" 200 5 \"-\" \"ua\"\n")
                                           << 0 << 1;
        QTest::newRow("access CLF 31 Apr") << u"access"_s
                                           << QByteArray("1.2.3.4 - - [31/Apr/2026:10:05:03 +0000] "
                                                         "\"GET /a HTTP/1.1\" 200 5 \"-\" \"ua\"\n")
                                           << 0 << 1;
        QTest::newRow("access CLF hour 25")
            << u"access"_s
            << QByteArray("1.2.3.4 - - [18/Feb/2026:25:05:03 +0000] \"GET /a HTTP/1.1\" 200 5 "
                          "\"-\" \"ua\"\n")
            << 0 << 1;
        QTest::newRow("har startedDateTime 30 Feb")
            << u"har"_s
            << QByteArray("{\"log\":{\"entries\":[{\"startedDateTime\":\"2026-02-30T10:00:00Z\","
                          "\"time\":5,\"request\":{\"method\":\"GET\",\"url\":\"https://x/\"},"
                          "\"response\":{\"status\":200}}]}}")
            << 0 << 1;
        QTest::newRow("azure records time 30 Feb")
            << u"azure-records"_s
            << QByteArray("{\"records\":[{\"time\":\"2026-02-30T10:00:00Z\",\"category\":"
                          "\"AppServiceHTTPLogs\",\"properties\":{\"CsMethod\":\"GET\","
                          "\"CsUriStem\":\"/a\",\"ScStatus\":\"200\"}}]}")
            << 0 << 1;
        QTest::newRow("resilience own timestamp 30 Feb")
            << u"resilience"_s
            << QByteArray(
                   "2026-02-18T22:44:09.600Z WARN Execution attempt. Source: 'P/(null)/Retry', "
                   "Operation Key: 'k', Result: '200', Handled: 'False', Attempt: '0', "
                   "Execution Time: 12.5ms\n"
                   "2026-02-30T22:44:09.600Z WARN Execution attempt. Source: 'P/(null)/Retry', "
                   "Operation Key: 'k', Result: '429', Handled: 'True', Attempt: '1', "
                   "Execution Time: 12.5ms\n")
            << 1 << 1;
        QTest::newRow("vcr Date 30 Feb")
            << u"vcr"_s
            << QByteArray("interactions:\n- request:\n    method: GET\n    uri: https://x/\n"
                          "  response:\n    status:\n      code: 200\n    headers:\n      Date:\n"
                          "      - Mon, 30 Feb 2026 07:02:21 GMT\n")
            << 0 << 1;
    }
    void invalidCalendarDates()
    {
        QFETCH(QString, format);
        QFETCH(QByteArray, input);
        QFETCH(int, events);
        QFETCH(int, malformed);
        const auto reader = createReader(format);
        QVERIFY(reader);
        CollectingSink sink;
        const ReadResult result = readBytes(*reader, input, sink, u"dates.log"_s);
        QVERIFY2(result.fatalError.isEmpty(), qPrintable(result.fatalError));
        checkAccounting(result, sink, events + malformed, u"dates.log"_s);
        QCOMPARE(result.events, qint64(events));
    }

    // The throttle signals read dates too: Retry-After HTTP-dates and Fabric's "blocked until".
    void invalidDatesInThrottleAdvice_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("valid");
        QTest::newRow("Retry-After 30 Feb")
            << u"retry-after"_s << u"Mon, 30 Feb 2026 22:45:04 GMT"_s << false;
        QTest::newRow("Retry-After 29 Feb 2025")
            << u"retry-after"_s << u"Sat, 29 Feb 2025 22:45:04 GMT"_s << false;
        QTest::newRow("Retry-After hour 24")
            << u"retry-after"_s << u"Wed, 18 Feb 2026 24:45:04 GMT"_s << false;
        QTest::newRow("Retry-After fine")
            << u"retry-after"_s << u"Wed, 18 Feb 2026 22:45:04 GMT"_s << true;
        QTest::newRow("blocked until 30 Feb")
            << u"blocked"_s
            << u"Request is blocked by the upstream service until: 2/30/2026 10:45:04 PM (UTC)"_s
            << false;
        QTest::newRow("blocked until 13 PM")
            << u"blocked"_s
            << u"Request is blocked by the upstream service until: 2/18/2026 13:45:04 PM (UTC)"_s
            << false;
        QTest::newRow("blocked until fine")
            << u"blocked"_s
            << u"Request is blocked by the upstream service until: 2/18/2026 10:45:04 PM (UTC)"_s
            << true;
    }
    void invalidDatesInThrottleAdvice()
    {
        QFETCH(QString, kind);
        QFETCH(QString, text);
        QFETCH(bool, valid);
        const qint64 responseMs = isoMs("2026-02-18T22:44:09Z");
        const auto parsed = kind == u"blocked" ? throttle::parseBlockedUntilMs(text)
                                               : throttle::parseRetryAfterDelayMs(text, responseMs);
        QCOMPARE(parsed.has_value(), valid);
    }

    // Numbers outside any believable range in each numeric field of each format: the record
    // is malformed with a reason naming the field; the other records of the input still count.
    void extremeNumbers_data()
    {
        QTest::addColumn<QString>("format");
        QTest::addColumn<QByteArray>("input");
        QTest::addColumn<QString>("reasonPart");
        const QByteArray goodLine =
            "{\"ts\":\"2026-02-18T22:44:09Z\",\"url\":\"https://x/\",\"status\":200}\n";
        const auto ndjson = [&](const char *field) -> QByteArray {
            const QByteArray &good = goodLine;
            return good + "{\"ts\":\"2026-02-18T22:44:10Z\",\"url\":\"https://x/\"," + field +
                   "}\n" + good;
        };
        QTest::newRow("ndjson ts 1e300")
            << u"ndjson"_s << (goodLine + "{\"ts\":1e300}\n" + goodLine) << u"ts"_s;
        QTest::newRow("ndjson ts -1e300")
            << u"ndjson"_s << (goodLine + "{\"ts\":-1e300}\n" + goodLine) << u"ts"_s;
        QTest::newRow("ndjson ts negative")
            << u"ndjson"_s << (goodLine + "{\"ts\":-5}\n" + goodLine) << u"ts"_s;
        QTest::newRow("ndjson ts 1e15 ms (year 33658)")
            << u"ndjson"_s << (goodLine + "{\"ts\":1e15}\n" + goodLine) << u"ts"_s;
        QTest::newRow("ndjson attempt 1e12")
            << u"ndjson"_s << ndjson("\"attempt\":1e12") << u"attempt"_s;
        QTest::newRow("ndjson attempt -7")
            << u"ndjson"_s << ndjson("\"attempt\":-7") << u"attempt"_s;
        QTest::newRow("ndjson attempt \"1e60\"")
            << u"ndjson"_s << ndjson("\"attempt\":\"1e60\"") << u"attempt"_s;
        QTest::newRow("ndjson batchIndex 1e12")
            << u"ndjson"_s << ndjson("\"batchIndex\":1e12") << u"batchIndex"_s;
        QTest::newRow("ndjson durationMs 1e308")
            << u"ndjson"_s << ndjson("\"durationMs\":1e308") << u"durationMs"_s;
        QTest::newRow("ndjson durationMs \"inf\"")
            << u"ndjson"_s << ndjson("\"durationMs\":\"inf\"") << u"durationMs"_s;
        QTest::newRow("ndjson credits 1e308")
            << u"ndjson"_s << ndjson("\"credits\":1e308") << u"credits"_s;
        QTest::newRow("ndjson status \"nan\"")
            << u"ndjson"_s << ndjson("\"status\":\"nan\"") << u"status"_s;
        QTest::newRow("ndjson status 1e300")
            << u"ndjson"_s << ndjson("\"status\":1e300") << u"status"_s;

        const QByteArray csvHead = "ts,url,status,attempt,durationMs,credits\n";
        const QByteArray csvGood = "2026-02-18T22:44:09Z,https://x/,200,0,5,1\n";
        QTest::newRow("csv ts 1e300")
            << u"csv"_s << (csvHead + csvGood + "1e300,https://x/,200,0,5,1\n" + csvGood)
            << u"timestamp"_s;
        QTest::newRow("csv attempt 1e12")
            << u"csv"_s
            << (csvHead + csvGood + "2026-02-18T22:44:10Z,https://x/,200,1e12,5,1\n" + csvGood)
            << u"attempt"_s;
        QTest::newRow("csv durationMs 1e308")
            << u"csv"_s
            << (csvHead + csvGood + "2026-02-18T22:44:10Z,https://x/,200,0,1e308,1\n" + csvGood)
            << u"durationMs"_s;
        QTest::newRow("csv credits 1e308")
            << u"csv"_s
            << (csvHead + csvGood + "2026-02-18T22:44:10Z,https://x/,200,0,5,1e308\n" + csvGood)
            << u"credits"_s;

        const QByteArray resGood =
            "2026-02-18T22:44:09.600Z WARN Execution attempt. Source: 'P/(null)/Retry', Operation "
            "Key: 'k', Result: '200', Handled: 'False', Attempt: '0', Execution Time: 12.5ms\n";
        QTest::newRow("resilience Attempt 1e60")
            << u"resilience"_s
            << (resGood +
                "2026-02-18T22:44:10.600Z WARN Execution attempt. Source: 'P/(null)/Retry', "
                "Operation Key: 'k', Result: '429', Handled: 'True', Attempt: '1e60', Execution "
                "Time: 12.5ms\n" +
                resGood)
            << u"Attempt"_s;
        QTest::newRow("resilience Execution Time 1e308")
            << u"resilience"_s
            << (resGood +
                "2026-02-18T22:44:10.600Z WARN Execution attempt. Source: 'P/(null)/Retry', "
                "Operation Key: 'k', Result: '429', Handled: 'True', Attempt: '1', Execution Time: "
                "1e308ms\n" +
                resGood)
            << u"Execution Time"_s;

        const auto har = [](const char *entry) -> QByteArray {
            const QByteArray good =
                "{\"startedDateTime\":\"2026-02-18T22:44:09Z\",\"time\":5,\"request\":{\"method\":"
                "\"GET\",\"url\":\"https://x/\"},\"response\":{\"status\":200}}";
            return "{\"log\":{\"entries\":[" + good + "," + entry + "," + good + "]}}";
        };
        QTest::newRow("har time 1e308")
            << u"har"_s
            << har("{\"startedDateTime\":\"2026-02-18T22:44:10Z\",\"time\":1e308,\"request\":{"
                   "\"method\":\"GET\",\"url\":\"https://x/\"},\"response\":{\"status\":200}}")
            << u"time"_s;
        QTest::newRow("har status 1e300")
            << u"har"_s
            << har("{\"startedDateTime\":\"2026-02-18T22:44:10Z\",\"time\":5,\"request\":{"
                   "\"method\":\"GET\",\"url\":\"https://x/\"},\"response\":{\"status\":1e300}}")
            << u"status"_s;
        QTest::newRow("har Retry-Attempt 1e12")
            << u"har"_s
            << har("{\"startedDateTime\":\"2026-02-18T22:44:10Z\",\"time\":5,\"request\":{"
                   "\"method\":\"GET\",\"url\":\"https://x/"
                   "\",\"headers\":[{\"name\":\"Retry-Attempt\",\"value\":\"1e12\"}]},\"response\":"
                   "{\"status\":200}}")
            << u"Retry-Attempt"_s;

        const auto otlp = [](const char *attributes, const char *start = "\"1771454649000000000\"",
                             const char *end = "\"1771454649005000000\"") -> QByteArray {
            const QByteArray span =
                QByteArray("{\"name\":\"GET\",\"kind\":3,\"startTimeUnixNano\":") + start +
                ",\"endTimeUnixNano\":" + end +
                ",\"attributes\":[{\"key\":\"http.request.method\",\"value\":{\"stringValue\":"
                "\"GET\"}}" +
                attributes + "]}";
            const QByteArray goodSpan =
                "{\"name\":\"GET\",\"kind\":3,\"startTimeUnixNano\":\"1771454649000000000\","
                "\"endTimeUnixNano\":\"1771454649005000000\",\"attributes\":[{\"key\":\"http."
                "request.method\",\"value\":{\"stringValue\":\"GET\"}}]}";
            return "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[" + goodSpan + "," + span +
                   "," + goodSpan + "]}]}]}\n";
        };
        QTest::newRow("otlp status_code 1e300")
            << u"otlp"_s
            << otlp(
                   ",{\"key\":\"http.response.status_code\",\"value\":{\"stringValue\":\"1e300\"}}")
            << u"status_code"_s;
        QTest::newRow("otlp retry-attempt 1e12")
            << u"otlp"_s
            << otlp(",{\"key\":\"http.request.header.retry-attempt\",\"value\":{\"stringValue\":"
                    "\"1e12\"}}")
            << u"retry-attempt"_s;
        QTest::newRow("otlp start 1e300")
            << u"otlp"_s << otlp("", "1e300", "1e301") << u"startTimeUnixNano"_s;
        QTest::newRow("otlp a span of 500 years")
            << u"otlp"_s << otlp("", "\"1000000000000000000\"", "\"16000000000000000000\"")
            << u"durationMs"_s;

        const auto vcr = [](const char *status, const char *attempt) -> QByteArray {
            const QByteArray one =
                QByteArray("- request:\n    method: GET\n    uri: https://x/\n    headers:\n      "
                           "Retry-Attempt:\n      - '") +
                attempt + "'\n  response:\n    status:\n      code: " + status +
                "\n    headers:\n      Date:\n      - Wed, 18 Feb 2026 07:02:21 GMT\n";
            const QByteArray good =
                "- request:\n    method: GET\n    uri: https://x/\n  response:\n    status:\n      "
                "code: 200\n    headers:\n      Date:\n      - Wed, 18 Feb 2026 07:02:21 GMT\n";
            return "interactions:\n" + good + one + good;
        };
        QTest::newRow("vcr status 1e300") << u"vcr"_s << vcr("1e300", "0") << u"status"_s;
        QTest::newRow("vcr Retry-Attempt 1e12")
            << u"vcr"_s << vcr("200", "1e12") << u"Retry-Attempt"_s;

        const auto azure = [](const char *record) -> QByteArray {
            const QByteArray good = "{\"time\":\"2026-02-18T22:44:09Z\",\"category\":"
                                    "\"AppServiceHTTPLogs\",\"properties\":{\"CsMethod\":\"GET\","
                                    "\"CsUriStem\":\"/a\",\"ScStatus\":\"200\",\"TimeTaken\":5}}";
            return "{\"records\":[" + good + "," + record + "," + good + "]}";
        };
        QTest::newRow("azure TimeTaken 1e308")
            << u"azure-records"_s
            << azure("{\"time\":\"2026-02-18T22:44:10Z\",\"category\":\"AppServiceHTTPLogs\","
                     "\"properties\":{\"CsMethod\":\"GET\",\"CsUriStem\":\"/"
                     "a\",\"ScStatus\":\"200\",\"TimeTaken\":1e308}}")
            << u"durationMs"_s;
        QTest::newRow("azure time 1e300")
            << u"azure-records"_s
            << azure("{\"time\":1e300,\"category\":\"AppServiceHTTPLogs\",\"properties\":{"
                     "\"CsMethod\":\"GET\",\"CsUriStem\":\"/a\",\"ScStatus\":\"200\"}}")
            << u"time"_s;
        QTest::newRow("azure Service Bus Count 1e308")
            << u"azure-records"_s
            << azure("{\"time\":\"2026-02-18T22:44:10Z\",\"category\":\"RuntimeAuditLogs\","
                     "\"properties\":{\"Status\":\"Success\",\"ActivityName\":\"SendMessage\","
                     "\"Count\":1e308}}")
            << u"credits"_s;
    }
    void extremeNumbers()
    {
        QFETCH(QString, format);
        QFETCH(QByteArray, input);
        QFETCH(QString, reasonPart);
        const auto reader = createReader(format);
        QVERIFY(reader);
        CollectingSink sink;
        const ReadResult result = readBytes(*reader, input, sink, u"extreme.log"_s);
        QVERIFY2(result.fatalError.isEmpty(), qPrintable(result.fatalError));
        checkAccounting(result, sink, 3, u"extreme.log"_s);
        QCOMPARE(result.events, qint64(2));
        QVERIFY2(sink.malformed.front().reason.contains(reasonPart, Qt::CaseInsensitive),
                 qPrintable(sink.malformed.front().reason));
    }

    // A custom nginx format: $msec (Unix seconds), $request_time and $http_retry_attempt.
    void extremeNumbersInAccessLogs_data()
    {
        QTest::addColumn<QByteArray>("line");
        QTest::addColumn<QString>("reasonPart");
        QTest::newRow("msec 1e300") << QByteArray("1e300 200 0.005 1") << u"time"_s;
        QTest::newRow("msec negative") << QByteArray("-1771454649.5 200 0.005 1") << u"time"_s;
        QTest::newRow("request_time 1e306")
            << QByteArray("1771454649.5 200 1e306 1") << u"request_time"_s;
        QTest::newRow("retry attempt 1e12")
            << QByteArray("1771454649.5 200 0.005 1e12") << u"Retry-Attempt"_s;
    }
    void extremeNumbersInAccessLogs()
    {
        QFETCH(QByteArray, line);
        QFETCH(QString, reasonPart);
        AccessLogReader reader(u"$msec $status $request_time $http_retry_attempt"_s);
        const QByteArray good = "1771454649.5 200 0.005 1\n";
        CollectingSink sink;
        const ReadResult result =
            readBytes(reader, good + line + "\n" + good, sink, u"access.log"_s);
        QVERIFY2(result.fatalError.isEmpty(), qPrintable(result.fatalError));
        checkAccounting(result, sink, 3, u"access.log"_s);
        QCOMPARE(result.events, qint64(2));
        QCOMPARE(sink.malformed.front().line, qint64(2));
        QVERIFY2(sink.malformed.front().reason.contains(reasonPart, Qt::CaseInsensitive),
                 qPrintable(sink.malformed.front().reason));
    }

    // The values the audit found overflowing (ts 1e300, attempt 1e12, durationMs 1e308...),
    // through the whole analysis: they are malformed records, never events with a wrapped
    // timestamp, and the report is whole.
    void wholeAnalysisOnRejectedValues_data()
    {
        QTest::addColumn<QString>("format");
        QTest::addColumn<QString>("file");
        QTest::addColumn<qint64>("requests");
        QTest::addColumn<qint64>("malformed");
        QTest::newRow("ndjson") << u"ndjson"_s << u"ndjson/extreme-numbers-and-dates.ndjson"_s
                                << qint64(2) << qint64(13);
        QTest::newRow("csv") << u"csv"_s << u"csv/stray-quote-and-extreme-numbers.csv"_s
                             << qint64(3) << qint64(7);
        QTest::newRow("resilience")
            << u"resilience"_s << u"resilience/extreme-attempt-and-dates.log"_s << qint64(0)
            << qint64(4);
    }
    void wholeAnalysisOnRejectedValues()
    {
        QFETCH(QString, format);
        QFETCH(QString, file);
        QFETCH(qint64, requests);
        QFETCH(qint64, malformed);
        const QString path = QStringLiteral(TS_TEST_DATA_DIR "/fuzz-regressions/") + file;
        QFile input(path);
        QVERIFY(input.open(QIODevice::ReadOnly));
        Analysis analysis(PolicySet::builtin(), Analysis::Purpose::ReportOnly);
        const ReadResult result = createReader(format)->read(input, path, analysis, {});
        const ReportData report = analysis.report();
        QCOMPARE(report.events, requests);
        QCOMPARE(report.malformed, malformed);
        QCOMPARE(result.malformed, malformed);
        QJsonParseError error{};
        QJsonDocument::fromJson(reportToJson(report), &error);
        QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
        QVERIFY(!reportToText(report).isEmpty());
    }

    // Values at the very edges of what is accepted, through everything `report` runs: the
    // engine (every built-in policy), breakers, alert detectors, and both report formats.
    // Under the asan-ubsan preset any overflow on the way aborts the test.
    void wholeAnalysisOnExtremeAcceptedValues()
    {
        QByteArray log;
        const QByteArray minTs = "\"1970-01-01T00:00:00Z\"";
        const QByteArray maxTs = "\"9999-12-31T23:59:59.999Z\"";
        const QByteArray maxDuration = QByteArray::number(limits::kMaxDurationMs, 'f', 0);
        const QByteArray maxAttempt = QByteArray::number(limits::kMaxAttempt);
        const auto request = [&](const QByteArray &ts, const QByteArray &rest) {
            log += "{\"ts\":" + ts + ",\"identity\":\"sp\",\"app\":\"a\"," + rest + "}\n";
        };
        for (const QByteArray &ts :
             {minTs, QByteArray("0"), QByteArray("253402300799999"), maxTs}) {
            request(ts, "\"service\":\"graph\",\"method\":\"GET\",\"url\":\"https://"
                        "graph.microsoft.com/v1.0/me\",\"status\":429,"
                        "\"durationMs\":" +
                            maxDuration + ",\"attempt\":" + maxAttempt +
                            ",\"operationId\":\"op\","
                            "\"retryAfter\":\"999999999999999\",\"headers\":{\"retry-after-ms\":"
                            "\"99999999999999999999\","
                            "\"x-ms-throttle-limit-percentage\":\"99999999999999999999999\",\"x-"
                            "ratelimit-reset\":\"99999999999999\","
                            "\"ratelimit-reset\":\"999999999999999\",\"x-ratelimit-remaining\":"
                            "\"99999999999999999999\","
                            "\"x-ms-ratelimit-remaining-subscription-reads\":"
                            "\"999999999999999999\",\"x-ms-resource-unit\":\"1e308\"}");
            request(
                ts,
                "\"service\":\"graph\",\"method\":\"GET\",\"url\":\"https://graph.microsoft.com/"
                "v1.0/me\",\"status\":429,"
                "\"retryAfter\":\"Fri, 31 Dec 9999 23:59:59 GMT\",\"durationMs\":0,\"attempt\":0");
            request(ts, "\"service\":\"fabric\",\"method\":\"POST\",\"url\":\"https://"
                        "api.fabric.microsoft.com/v1/workspaces/w/items\",\"status\":429,"
                        "\"errorCode\":\"RequestBlocked\",\"body\":\"Request is blocked by the "
                        "upstream service until: 12/31/9999 11:59:59 PM (UTC)\"");
            request(
                ts,
                "\"service\":\"servicebus\",\"namespace\":\"sb\",\"entity\":\"q\",\"method\":"
                "\"Send\",\"status\":429,"
                "\"errorCode\":\"50009\",\"credits\":" +
                    QByteArray::number(limits::kMaxCredits, 'f', 0) +
                    ",\"body\":\"Please wait 99999999999 seconds and try again.\",\"batchIndex\":" +
                    QByteArray::number(limits::kMaxBatchIndex));
            request(ts, "\"service\":\"graph\",\"method\":\"GET\",\"url\":\"https://"
                        "graph.microsoft.com/v1.0/me\",\"status\":200,\"durationMs\":" +
                            maxDuration);
            log +=
                "{\"ts\":" + ts + ",\"type\":\"breaker\",\"scope\":\"app\",\"state\":\"open\"}\n";
            log += "{\"ts\":" + ts + ",\"type\":\"annotation\",\"text\":\"edge\"}\n";
        }
        const auto reader = createReader(u"ndjson"_s);
        QBuffer buffer(&log);
        QVERIFY(buffer.open(QIODevice::ReadOnly));
        Analysis analysis(PolicySet::builtin(), Analysis::Purpose::ReportOnly);
        const ReadResult result = reader->read(buffer, u"edges.ndjson"_s, analysis, {});
        QCOMPARE(result.malformed, qint64(0));
        QCOMPARE(result.events, qint64(4 * 7));
        const ReportData report = analysis.report();
        QCOMPARE(report.events, qint64(4 * 5));
        const QByteArray json = reportToJson(report);
        QJsonParseError error{};
        const QJsonDocument document = QJsonDocument::fromJson(json, &error);
        QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
        QVERIFY(document.isObject());
        QVERIFY(!reportToText(report).isEmpty());
        // The dashboard's snapshot runs the same data through the plot series.
        Analysis dashboard(PolicySet::builtin(), Analysis::Purpose::Dashboard);
        QBuffer again(&log);
        QVERIFY(again.open(QIODevice::ReadOnly));
        createReader(u"ndjson"_s)->read(again, u"edges.ndjson"_s, dashboard, {});
        const DashboardSnapshot snapshot = dashboard.snapshot();
        QCOMPARE(snapshot.report.events, report.events);
    }
};

QTEST_GUILESS_MAIN(TestExtremeValues)
#include "tst_extremevalues.moc"
