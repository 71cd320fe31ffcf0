// Issue 30.15: raw HTTP exchanges saved as text (.http) are read like the other formats: the
// Microsoft Graph documentation's 429 (a Graph throttle with its headers) and its $batch answer
// (exploded into its sub-responses), kept as they were published in tests/data/thirdparty/graph
// (see SOURCES.md there), and a REST-client file with requests, responses and separators.
#include "engine/analysis.h"
#include "ingest/formatdetect.h"
#include "ingest/sourcereader.h"
#include "signals/throttlesignals.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace ts;
using namespace Qt::StringLiterals;

namespace {

const QString kGraph = QStringLiteral(TS_THIRDPARTY_DIR "/graph/");

class Collect final : public IngestSink
{
public:
    void onEvent(RequestEvent &&event) override { events.append(std::move(event)); }
    void onMalformed(MalformedRecord &&record) override { malformed.append(record); }
    QList<RequestEvent> events;
    QList<MalformedRecord> malformed;
};

SourceOutcome readAll(const QString &path, Collect &collect)
{
    return readSource(path, collect);
}

} // namespace

class TestHttpExchange : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void graphThrottleSample()
    {
        const QString path = kGraph + u"graph-docs_throttling_sample-429-response.http"_s;
        QCOMPARE(detectFileFormat(path, nullptr), u"http"_s);
        Collect collect;
        const SourceOutcome outcome = readAll(path, collect);
        QVERIFY2(outcome.readable(), qPrintable(outcome.result.fatalError));
        QCOMPARE(collect.malformed.size(), 0);
        QCOMPARE(collect.events.size(), 1);
        const RequestEvent &event = collect.events.first();
        QCOMPARE(event.status, 429);
        QCOMPARE(event.service, u"graph"_s);
        QCOMPARE(event.retryAfter, u"2.128"_s);
        QCOMPARE(event.tsMs, qint64(1597755111000)); // innerError.date 2020-08-18T12:51:51 (UTC)
        const throttle::ThrottleSignals sig = throttle::extract(event);
        QVERIFY(sig.throttled);
        QCOMPARE(sig.errorCode, u"TooManyRequests"_s);
        QVERIFY(sig.retryAtMs);
        QCOMPARE(*sig.retryAtMs, event.tsMs + 2128);

        Analysis analysis(PolicySet::builtin(), Analysis::Purpose::ReportOnly);
        readSource(path, analysis);
        const ReportData report = analysis.report();
        QCOMPARE(report.events, qint64(1));
        QCOMPARE(report.throttles.total, qint64(1));
        QCOMPARE(report.throttles.byErrorCode.value(u"TooManyRequests"_s), qint64(1));
    }

    void graphBatchSampleIsExploded()
    {
        const QString path = kGraph + u"graph-docs_json-batching_example-response.http"_s;
        QCOMPARE(detectFileFormat(path, nullptr), u"http"_s);
        Collect collect;
        QVERIFY(readAll(path, collect).readable());
        QCOMPARE(collect.malformed.size(), 0);
        QCOMPARE(collect.events.size(), 6); // the envelope and its 5 sub-responses
        QVERIFY(collect.events.first().batchEnvelope);
        QList<int> statuses;
        for (const RequestEvent &sub : collect.events.mid(1)) {
            QVERIFY(!sub.batchEnvelope);
            QCOMPARE(sub.batchId, collect.events.at(1).batchId);
            QCOMPARE(sub.service, u"graph"_s);
            statuses.append(sub.status);
        }
        QCOMPARE(statuses, QList<int>({200, 403, 403, 405, 200}));
        // Dated by the earliest innerError.date of its sub-responses.
        QCOMPARE(collect.events.first().tsMs, qint64(1739441825000)); // 2025-02-13T10:17:05Z

        Analysis analysis(PolicySet::builtin(), Analysis::Purpose::ReportOnly);
        readSource(path, analysis);
        const ReportData report = analysis.report();
        QCOMPARE(report.events, qint64(5)); // the envelope is not a request of its own
        QCOMPARE(report.byStatus.value(403), qint64(2));
    }

    // A REST-client scratch file: comments, two exchanges with request lines and Date headers,
    // a ### separator, and one response nobody dated.
    void restClientFile()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"calls.http"_s);
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("# calls made while the migration ran\n"
                   "GET https://graph.microsoft.com/v1.0/me/onenote/pages HTTP/1.1\n"
                   "Authorization: Bearer not-a-jwt\n"
                   "\n"
                   "HTTP/1.1 200 OK\n"
                   "Date: Wed, 18 Feb 2026 22:44:01 GMT\n"
                   "request-id: 11111111-2222-3333-4444-555555555555\n"
                   "\n"
                   "{\"value\": []}\n"
                   "###\n"
                   "POST https://api.fabric.microsoft.com/v1/workspaces/1f2e/items\n"
                   "Content-Type: application/json\n"
                   "\n"
                   "{\"displayName\": \"x\"}\n"
                   "HTTP/1.1 429 Too Many Requests\n"
                   "Date: Wed, 18 Feb 2026 22:44:02 GMT\n"
                   "Retry-After: 55\n"
                   "\n"
                   "{\"errorCode\": \"RequestBlocked\", \"message\": \"blocked\"}\n"
                   "###\n"
                   "HTTP/1.1 503 Service Unavailable\n"
                   "\n"
                   "upstream down\n");
        file.close();
        QCOMPARE(detectFileFormat(path, nullptr), u"http"_s);
        Collect collect;
        QVERIFY(readAll(path, collect).readable());
        QCOMPARE(collect.events.size(), 2);
        QCOMPARE(collect.events.at(0).method, u"GET"_s);
        QCOMPARE(collect.events.at(0).service, u"graph"_s);
        QCOMPARE(collect.events.at(0).requestId, u"11111111-2222-3333-4444-555555555555"_s);
        QCOMPARE(collect.events.at(0).line, qint64(2));
        QCOMPARE(collect.events.at(1).status, 429);
        QCOMPARE(collect.events.at(1).url, u"https://api.fabric.microsoft.com/v1/workspaces/1f2e/items"_s);
        QCOMPARE(collect.events.at(1).retryAfter, u"55"_s);
        QCOMPARE(collect.events.at(1).tsMs - collect.events.at(0).tsMs, qint64(1000));
        QCOMPARE(collect.malformed.size(), 1);
        QCOMPARE(collect.malformed.first().line, qint64(21));
        QVERIFY2(collect.malformed.first().reason.contains(u"no Date header"_s),
                 qPrintable(collect.malformed.first().reason));
    }
};

QTEST_GUILESS_MAIN(TestHttpExchange)
#include "tst_httpexchange.moc"
