// Polling HTTP stores through a loopback server: the Azure Monitor Logs query API (its
// documented response shapes: tables[] with columns and rows, 429 with Retry-After, 200 with a
// PartialError, a fatal OneAPI error) with a column mapping, and an NDJSON endpoint with a
// {cursor} placeholder. Every row goes through the canonical reader: secrets are masked.
#include "fakestore.h"

#include "models/ingestmodels.h"
#include "poll/pollanswer.h"
#include "poll/poller.h"

#include <QAbstractItemModelTester>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSet>
#include <QTest>
#include <QTimeZone>
#include <QUrlQuery>

#include <map>

using namespace ts;

namespace {

constexpr qint64 kBaseMs = 1771454400000; // 2026-02-18T22:40:00Z

QString isoOf(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(Qt::ISODateWithMs);
}

// A Log Analytics table held in memory: ts -> row values (TimeGenerated, ResultCode as text
// like App Insights' resultCode, UserId, AppId, Url, OperationId).
struct KqlTable
{
    std::multimap<qint64, QJsonArray> rows;
    void add(qint64 ts, int id, const QString &code = u"200"_qs)
    {
        rows.insert({ts, QJsonArray{isoOf(ts), code, u"user-%1"_qs.arg(id % 3), u"app-1"_qs,
                                    u"https://graph.microsoft.com/v1.0/me?sig=SECRETSIG"_qs,
                                    u"op-%1"_qs.arg(id)}});
    }
    // The answer to "T | where TimeGenerated >= datetime(X) | order by ... | take N".
    QJsonObject answer(const QByteArray &body, int skipEvery = 0) const
    {
        const QString query = QJsonDocument::fromJson(body).object().value(u"query").toString();
        static const QRegularExpression since(u"datetime\\(([^)]+)\\)"_qs);
        static const QRegularExpression take(u"take (\\d+)"_qs);
        const qint64 low = QDateTime::fromString(since.match(query).captured(1), Qt::ISODateWithMs)
                               .toMSecsSinceEpoch();
        const int limit = take.match(query).captured(1).toInt();
        QJsonArray out;
        int index = 0;
        for (auto it = rows.lower_bound(low); it != rows.end() && out.size() < limit; ++it) {
            if (skipEvery > 0 && ++index % skipEvery == 0)
                continue; // what a partial answer lacks
            out.append(it->second);
        }
        QJsonArray columns;
        for (const auto &[name, type] : {std::pair{u"TimeGenerated"_qs, u"datetime"_qs},
                                         {u"ResultCode"_qs, u"string"_qs},
                                         {u"UserId"_qs, u"string"_qs},
                                         {u"AppId"_qs, u"string"_qs},
                                         {u"Url"_qs, u"string"_qs},
                                         {u"OperationId"_qs, u"string"_qs}}) {
            columns.append(QJsonObject{{u"name"_qs, name}, {u"type"_qs, type}});
        }
        QJsonObject table{
            {u"name"_qs, u"PrimaryResult"_qs}, {u"columns"_qs, columns}, {u"rows"_qs, out}};
        return QJsonObject{{u"tables"_qs, QJsonArray{table}}};
    }
};

QByteArray json(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

QStringList pollOps(poll::Poller &poller, poll::Poller::Outcome *outcome,
                    QList<RequestEvent> *all = nullptr)
{
    QStringList ids;
    *outcome = poller.pollOnce(
        [&](QList<RequestEvent> &&events, QList<MalformedRecord> &&, const QByteArray &) {
            for (const RequestEvent &event : events) {
                ids << event.operationId;
                if (all)
                    all->append(event);
            }
            return true;
        });
    return ids;
}

} // namespace

class TestPollHttp : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // What fuzz_pollanswer found (tests/data/fuzz-regressions/pollanswer/): each answer is read
    // by the three store kinds' parsers without a crash; a broken query API answer is refused
    // with a message (a broken error object, then tables[]: simdjson's abandoned parser was
    // read through a null pointer).
    void fuzzRegressions_data()
    {
        QTest::addColumn<QString>("path");
        QDirIterator it(QStringLiteral(TS_TEST_DATA_DIR "/fuzz-regressions/pollanswer"),
                        QDir::Files);
        while (it.hasNext()) {
            const QString path = it.next();
            QTest::newRow(qPrintable(it.fileName())) << path;
        }
    }
    void fuzzRegressions()
    {
        QFETCH(QString, path);
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray bytes = file.readAll();
        poll::KqlAnswer answer;
        QString error;
        const bool read = poll::parseKqlAnswer(bytes, {}, u"TimeGenerated"_qs, &answer, &error);
        QVERIFY(read || !error.isEmpty());
        if (path.contains(u"/broken-"))
            QVERIFY2(!read && error.contains(u"not its JSON"), qPrintable(error));
        poll::PageRows page;
        poll::RowSplitter splitter(page);
        splitter.feed(bytes);
        QString splitError;
        splitter.finish(false, &splitError);
        QCOMPARE(page.oversize.size(), page.oversizeHashes.size());
    }

    void kqlRowsMappedAndMasked()
    {
        KqlTable table;
        for (int i = 0; i < 700; ++i)
            table.add(kBaseMs + (i / 5) * 100, i); // five rows per instant
        testfake::Server server([&](const testfake::Request &request) {
            return testfake::Response{200, json(table.answer(request.body))};
        });
        qputenv("TS_TEST_KQL_TOKEN", "token-from-env");
        QString error;
        const auto source = poll::PollSource::parse(
            u"kql+http://127.0.0.1:%1/v1/workspaces/ws-1/query?table=AppRequests&page=64&"
            u"token-env=TS_TEST_KQL_TOKEN&map=identity=UserId,status=ResultCode,app=AppId,"
            u"url=Url,operationId=OperationId"_qs.arg(server.port()),
            &error);
        QVERIFY2(source, qPrintable(error));
        poll::Poller poller(*source, {});
        poll::Poller::Outcome outcome{};
        QList<RequestEvent> events;
        QStringList ids = pollOps(poller, &outcome, &events);
        QCOMPARE(outcome, poll::Poller::Outcome::CaughtUp);
        QCOMPARE(ids.size(), 700);
        QCOMPARE(QSet<QString>(ids.cbegin(), ids.cend()).size(), 700);
        const RequestEvent &first = events.constFirst();
        QCOMPARE(first.tsMs, kBaseMs);
        QCOMPARE(first.status, 200); // a string column, a number field
        QVERIFY(first.identity.startsWith(u"user-"));
        QCOMPARE(first.app, u"app-1"_qs);
        QVERIFY(first.secretsMasked);
        QVERIFY(!first.url.contains(u"SECRETSIG"));
        // The token went in the Authorization header, never in the URL or the body.
        const testfake::Request &request = server.requests.constFirst();
        QCOMPARE(request.headers.value("authorization"), QByteArray("Bearer token-from-env"));
        QVERIFY(!request.target.contains("token-from-env"));
        QVERIFY(request.target.startsWith("/v1/workspaces/ws-1/query"));
        QVERIFY(!request.target.contains("token-env")); // the poller's options stay home
        QVERIFY(QJsonDocument::fromJson(request.body)
                    .object()
                    .value(u"query")
                    .toString()
                    .startsWith(u"AppRequests"));
        // 300 more, some at the newest instant: only they arrive.
        for (int i = 700; i < 1000; ++i)
            table.add(kBaseMs + (i / 5) * 100 - (i < 720 ? 100 : 0), i);
        ids += pollOps(poller, &outcome);
        QCOMPARE(ids.size(), 1000);
        QCOMPARE(QSet<QString>(ids.cbegin(), ids.cend()).size(), 1000);
    }

    void kqlThrottledObeysRetryAfter()
    {
        KqlTable table;
        for (int i = 0; i < 10; ++i)
            table.add(kBaseMs + i, i);
        int calls = 0;
        testfake::Server server([&](const testfake::Request &request) {
            if (++calls == 1) {
                // The API's own throttling answer: 429, a OneAPI error, Retry-After.
                return testfake::Response{
                    429,
                    json({{u"error"_qs, QJsonObject{{u"code"_qs, u"ThrottledError"_qs},
                                                    {u"message"_qs, u"Too many requests"_qs}}}}),
                    "application/json",
                    {{"Retry-After", "1"}}};
            }
            return testfake::Response{200, json(table.answer(request.body))};
        });
        QString error;
        const auto source = poll::PollSource::parse(
            u"kql+http://127.0.0.1:%1/v1/apps/app-9/query?table=requests"_qs.arg(server.port()),
            &error);
        QVERIFY2(source, qPrintable(error));
        QCOMPARE(source->kqlTimeColumn(), u"timestamp"_qs); // Application Insights
        poll::PollSource logs = *source;
        logs.mapping.insert(u"ts"_qs, u"TimeGenerated"_qs);
        poll::Poller poller(logs, {});
        QElapsedTimer clock;
        clock.start();
        poll::Poller::Outcome outcome{};
        const QStringList ids = pollOps(poller, &outcome);
        QCOMPARE(outcome, poll::Poller::Outcome::CaughtUp);
        QCOMPARE(ids.size(), 10);
        QCOMPARE(server.requests.size(), 2);
        QCOMPARE(poller.health().storeThrottles, 1);
        QCOMPARE(poller.health().requests, 2);
        QVERIFY(clock.elapsed() >= 900); // it waited as told before asking again
        QVERIFY(poller.health().lastError.isEmpty());
    }

    // A store that keeps answering 429: the poller gives up after its retries, each after the
    // store's Retry-After, and the Ingest page's row says so.
    void storeBusyShowsOnTheIngestPage()
    {
        testfake::Server server([](const testfake::Request &) {
            return testfake::Response{429,
                                      QByteArray("{\"error\":{\"code\":\"ThrottledError\"}}"),
                                      "application/json",
                                      {{"Retry-After", "0"}}};
        });
        QString error;
        poll::Poller::Options options;
        options.maxRetries = 3;
        poll::Poller poller(
            *poll::PollSource::parse(
                u"kql+http://127.0.0.1:%1/v1/workspaces/w/query?table=T"_qs.arg(server.port()),
                &error),
            options);
        poll::Poller::Outcome outcome{};
        QVERIFY(pollOps(poller, &outcome).isEmpty());
        QCOMPARE(outcome, poll::Poller::Outcome::Failed);
        QCOMPARE(server.requests.size(), 3);
        QCOMPARE(poller.health().storeThrottles, 3);
        QVERIFY(poller.health().lastError.contains(u"429"));

        models::IngestSourcesModel model;
        QAbstractItemModelTester tester(&model);
        model.setNow(QDateTime::currentMSecsSinceEpoch());
        model.setSources({poll::toIngestStatus(poller.source(), poller.health())});
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.index(0, models::IngestSourcesModel::FormatColumn).data().toString(),
                 u"kql"_qs);
        const QString state =
            model.index(0, models::IngestSourcesModel::StateColumn).data().toString();
        QVERIFY2(state.contains(u"polled") && state.contains(u"3 request") &&
                     state.contains(u"429"),
                 qPrintable(state));
        QVERIFY(model.index(0, models::IngestSourcesModel::ErrorsColumn).data().toLongLong() >= 3);
    }

    // A PartialError (200 with the results and an error object): nothing of that answer is
    // taken, the page is asked again smaller at once, and every row is read exactly once.
    void kqlPartialErrorIsAskedAgain()
    {
        KqlTable table;
        for (int i = 0; i < 50; ++i)
            table.add(kBaseMs + i * 10, i);
        int calls = 0;
        testfake::Server server([&](const testfake::Request &request) {
            const bool partial = ++calls == 1;
            QJsonObject answer = table.answer(request.body, partial ? 7 : 0);
            if (partial) {
                // Non-fatal: 200, the results, and an error object coded PartialError.
                answer.insert(
                    u"error"_qs,
                    QJsonObject{
                        {u"code"_qs, u"PartialError"_qs},
                        {u"message"_qs, u"There were some errors when processing your "
                                        u"query."_qs},
                        {u"details"_qs,
                         QJsonArray{QJsonObject{{u"code"_qs, u"EngineError"_qs},
                                                {u"message"_qs, u"Something went wrong"_qs}}}}});
            }
            return testfake::Response{200, json(answer)};
        });
        QString error;
        const auto source = poll::PollSource::parse(
            u"kql+http://127.0.0.1:%1/v1/workspaces/w/query?table=T&map=operationId=OperationId"_qs
                .arg(server.port()),
            &error);
        poll::Poller poller(*source, {});
        poll::Poller::Outcome outcome{};
        const QStringList ids = pollOps(poller, &outcome);
        QCOMPARE(outcome, poll::Poller::Outcome::CaughtUp);
        QCOMPARE(ids.size(), 50);
        QCOMPARE(QSet<QString>(ids.cbegin(), ids.cend()).size(), 50);
        QCOMPARE(server.requests.size(), 2);
        QVERIFY(server.requests.at(1).body.contains("take 25000"));
    }

    void kqlFatalError()
    {
        testfake::Server server([](const testfake::Request &) {
            return testfake::Response{
                400,
                json({{u"error"_qs, QJsonObject{{u"code"_qs, u"BadArgumentError"_qs},
                                                {u"message"_qs, u"The request had some invalid "
                                                                u"properties"_qs}}}})};
        });
        QString error;
        poll::Poller poller(
            *poll::PollSource::parse(
                u"kql+http://127.0.0.1:%1/v1/workspaces/w/query?table=T"_qs.arg(server.port()),
                &error),
            {});
        poll::Poller::Outcome outcome{};
        QVERIFY(pollOps(poller, &outcome).isEmpty());
        QCOMPARE(outcome, poll::Poller::Outcome::Failed);
        QVERIFY(poller.health().lastError.contains(u"BadArgumentError"));
        QCOMPARE(server.requests.size(), 1); // not retried: it would fail the same way
    }

    void ndjsonEndpointWithCursor()
    {
        std::multimap<qint64, QByteArray> rows;
        auto add = [&](qint64 ts, int id) {
            rows.insert({ts, "{\"ts\":" + QByteArray::number(ts) +
                                 ",\"identity\":\"a\",\"status\":200,\"operationId\":\"op-" +
                                 QByteArray::number(id) +
                                 "\",\"url\":\"https://x/y?sig=SECRETSIG\"}"});
        };
        for (int i = 0; i < 1000; ++i)
            add(kBaseMs + (i / 4) * 7, i);
        testfake::Server server([&](const testfake::Request &request) {
            const QUrlQuery query(QUrl(QString::fromLatin1(request.target)));
            const qint64 after = query.queryItemValue(u"after"_qs).toLongLong();
            QByteArray body;
            int n = 0;
            for (auto it = rows.lower_bound(after); it != rows.end() && n < 300; ++it, ++n)
                body += it->second + '\n';
            return testfake::Response{200, body, "application/x-ndjson"};
        });
        QString error;
        const auto source = poll::PollSource::parse(
            u"http://127.0.0.1:%1/rows?after={cursor}&format=ndjson"_qs.arg(server.port()), &error);
        QVERIFY2(source, qPrintable(error));
        poll::Poller poller(*source, {});
        poll::Poller::Outcome outcome{};
        QList<RequestEvent> events;
        QStringList ids = pollOps(poller, &outcome, &events);
        QCOMPARE(outcome, poll::Poller::Outcome::CaughtUp);
        QCOMPARE(ids.size(), 1000);
        QCOMPARE(QSet<QString>(ids.cbegin(), ids.cend()).size(), 1000);
        QVERIFY(!events.constFirst().url.contains(u"SECRETSIG"));
        QVERIFY(server.requests.constFirst().target.contains("after=0&format=ndjson"));
        for (int i = 1000; i < 1200; ++i)
            add(kBaseMs + (i / 4) * 7 - 7, i); // ties with the newest, then newer
        ids += pollOps(poller, &outcome);
        QCOMPARE(ids.size(), 1200);
        QCOMPARE(QSet<QString>(ids.cbegin(), ids.cend()).size(), 1200);
        // The Ingest page's row for it.
        const IngestSourceStatus status = poll::toIngestStatus(poller.source(), poller.health());
        QCOMPARE(status.events, 1200);
        QCOMPARE(status.format, u"ndjson-http"_qs);
        QVERIFY(status.live);
        QCOMPARE(*status.lastEventTsMs, (rows.rbegin())->first);
        QVERIFY(status.lagMs);
        QCOMPARE(*status.lagMs, *status.lastEventReceivedMs - *status.lastEventTsMs);
        QVERIFY(status.requests >= 5);
    }
};

QTEST_GUILESS_MAIN(TestPollHttp)
#include "tst_pollhttp.moc"
