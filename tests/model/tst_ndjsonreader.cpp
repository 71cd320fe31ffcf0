// The canonical NDJSON reader: every line shape the spec allows, and every way a line can be bad.
#include "core/immortaltext.h"
#include "importertestutil.h"
#include "ingest/ndjsonreader.h"
#include "ingest/redaction.h"

#include <QBuffer>
#include <QTest>

#include <mutex>
#include <thread>
#include <vector>

using namespace ts;

namespace {

struct CollectingSink final : IngestSink
{
    std::vector<RequestEvent> events;
    std::vector<MalformedRecord> malformed;
    void onEvent(RequestEvent &&event) override { events.push_back(std::move(event)); }
    void onMalformed(MalformedRecord &&record) override { malformed.push_back(std::move(record)); }
};

ReadResult readAll(const QByteArray &bytes, CollectingSink &sink, ReadControl control = {})
{
    QBuffer buffer;
    buffer.setData(bytes);
    buffer.open(QIODevice::ReadOnly);
    NdjsonReader reader;
    return reader.read(buffer, QStringLiteral("test.ndjson"), sink, control);
}

} // namespace

class TestNdjsonReader : public QObject
{
    Q_OBJECT
private slots:
    void specExamples()
    {
        // The example lines of docs/request-log.md, verbatim.
        const QByteArray log =
            "{\"ts\":\"2026-02-18T22:44:09.512Z\",\"identity\":\"sp-migrator\",\"service\":"
            "\"fabric\",\"method\":\"GET\",\"url\":\"https://api.fabric.microsoft.com/v1/"
            "workspaces\",\"status\":200,\"durationMs\":84}\n"
            "{\"ts\":\"2026-02-18T22:44:10.020Z\",\"identity\":\"sp-migrator\",\"service\":"
            "\"fabric\",\"method\":\"POST\",\"url\":\"https://api.fabric.microsoft.com/v1/"
            "workspaces/1f2e/items/9a8b/jobs/"
            "instances?jobType=Pipeline\",\"status\":429,\"errorCode\":\"RequestBlocked\","
            "\"retryAfter\":\"55\",\"body\":\"{\\\"errorCode\\\":\\\"RequestBlocked\\\","
            "\\\"message\\\":\\\"Request is blocked by the upstream service until: 2/18/2026 "
            "10:45:04 PM (UTC)\\\"}\"}\n"
            "{\"ts\":1771454650100,\"identity\":\"alice@contoso.com\",\"app\":\"note-bridge\","
            "\"service\":\"graph\",\"method\":\"GET\",\"url\":\"https://graph.microsoft.com/v1.0/"
            "me/onenote/pages/1-abc/"
            "content\",\"status\":429,\"headers\":{\"x-ms-throttle-scope\":\"Application\"},"
            "\"lane\":\"background\",\"attempt\":1,\"operationId\":\"page-1-abc\"}\n"
            "{\"ts\":\"2026-02-18T22:44:11Z\",\"identity\":\"orders-app\",\"service\":"
            "\"servicebus\",\"namespace\":\"sb-prod\",\"entity\":\"orders\",\"method\":\"Send\","
            "\"credits\":10,\"status\":429,\"errorCode\":\"50009\",\"body\":\"The request was "
            "terminated because the entity is being throttled. Error code: 50009. Please wait 2 "
            "seconds and try again.\"}\n"
            "{\"ts\":\"2026-02-18T22:44:12Z\",\"type\":\"breaker\",\"scope\":\"app\",\"state\":"
            "\"open\"}\n";
        CollectingSink sink;
        const ReadResult result = readAll(log, sink);
        QCOMPARE(result.events, 5);
        QCOMPARE(result.malformed, 0);
        QCOMPARE(sink.events.size(), size_t(5));
        const RequestEvent &first = sink.events[0];
        QCOMPARE(first.tsMs, Q_INT64_C(1771454649512));
        QCOMPARE(first.identity, u"sp-migrator"_qs);
        QCOMPARE(first.service, u"fabric"_qs);
        QCOMPARE(first.method, u"GET"_qs);
        QCOMPARE(first.status, 200);
        QCOMPARE(first.durationMs, 84.0);
        QCOMPARE(first.line, 1);
        QCOMPARE(first.offset, 0);
        QCOMPARE(first.source, u"test.ndjson"_qs);
        const RequestEvent &blocked = sink.events[1];
        QCOMPARE(blocked.errorCode, u"RequestBlocked"_qs);
        QCOMPARE(blocked.retryAfter, u"55"_qs);
        QVERIFY(blocked.body.contains(
            u"blocked by the upstream service until: 2/18/2026 10:45:04 PM (UTC)"));
        QCOMPARE(blocked.offset, qint64(log.indexOf('\n') + 1));
        const RequestEvent &graph = sink.events[2];
        QCOMPARE(graph.tsMs, Q_INT64_C(1771454650100));
        QCOMPARE(graph.headers.value(u"x-ms-throttle-scope"), u"Application"_qs);
        QCOMPARE(graph.lane, u"background"_qs);
        QCOMPARE(graph.attempt, 1);
        QCOMPARE(graph.operationId, u"page-1-abc"_qs);
        QCOMPARE(graph.app, u"note-bridge"_qs);
        const RequestEvent &bus = sink.events[3];
        QCOMPARE(bus.serviceBusNamespace, u"sb-prod"_qs);
        QCOMPARE(bus.entity, u"orders"_qs);
        QCOMPARE(bus.credits, 10.0);
        QCOMPARE(bus.errorCode, u"50009"_qs);
        const RequestEvent &breaker = sink.events[4];
        QCOMPARE(breaker.type, EventType::Breaker);
        QCOMPARE(breaker.breakerScope, u"app"_qs);
        QCOMPARE(breaker.breakerState, u"open"_qs);
        QCOMPARE(breaker.line, 5);
    }

    void lineShapes_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<int>("events");
        QTest::addColumn<int>("malformed");
        QTest::addColumn<QList<qint64>>("malformedLines");
        const QByteArray ok = R"({"ts":"2026-02-18T22:44:09Z","status":200})";
        QTest::newRow("lf") << (ok + '\n' + ok + '\n') << 2 << 0 << QList<qint64>{};
        QTest::newRow("crlf") << (ok + "\r\n" + ok + "\r\n") << 2 << 0 << QList<qint64>{};
        QTest::newRow("bom") << (QByteArray("\xEF\xBB\xBF") + ok + '\n' + ok) << 2 << 0
                             << QList<qint64>{};
        QTest::newRow("no-final-newline") << (ok + '\n' + ok) << 2 << 0 << QList<qint64>{};
        QTest::newRow("blank-lines")
            << (QByteArray("\n\n") + ok + "\n   \n\t\n" + ok + "\n\n") << 2 << 0 << QList<qint64>{};
        QTest::newRow("empty") << QByteArray() << 0 << 0 << QList<qint64>{};
        QTest::newRow("not-json") << (ok + "\nhello world\n" + ok + '\n') << 2 << 1
                                  << QList<qint64>{2};
        QTest::newRow("array") << (QByteArray("[1,2]\n") + ok) << 1 << 1 << QList<qint64>{1};
        QTest::newRow("missing-ts")
            << (QByteArray(R"({"status":200})") + '\n' + ok) << 1 << 1 << QList<qint64>{1};
        QTest::newRow("bad-ts") << (QByteArray(R"({"ts":"tomorrow"})") + '\n' + ok) << 1 << 1
                                << QList<qint64>{1};
        QTest::newRow("ts-object")
            << (QByteArray(R"({"ts":{}})") + '\n') << 0 << 1 << QList<qint64>{1};
        QTest::newRow("truncated")
            << (ok + '\n' + "{\"ts\":\"2026-02-18T22:44:09Z\",\"sta" + '\n' + ok) << 2 << 1
            << QList<qint64>{2};
        QTest::newRow("two-objects-one-line") << (ok + ok + '\n') << 0 << 1 << QList<qint64>{1};
        QTest::newRow("bad-status")
            << (QByteArray(R"({"ts":1,"status":"abc"})") + '\n') << 0 << 1 << QList<qint64>{1};
        QTest::newRow("unknown-type")
            << (QByteArray(R"({"ts":1,"type":"weird"})") + '\n') << 0 << 1 << QList<qint64>{1};
        QTest::newRow("invalid-utf8") << (QByteArray("{\"ts\":1,\"identity\":\"\xff\xfe\"}\n") + ok)
                                      << 1 << 1 << QList<qint64>{1};
        QTest::newRow("nul-byte") << (QByteArray("{\"ts\":1,\0}\n", 11) + ok) << 1 << 1
                                  << QList<qint64>{1};
        QTest::newRow("status-as-string")
            << (QByteArray(R"({"ts":1,"status":"429"})") + '\n') << 1 << 0 << QList<qint64>{};
    }
    void lineShapes()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(int, events);
        QFETCH(int, malformed);
        QFETCH(QList<qint64>, malformedLines);
        CollectingSink sink;
        const ReadResult result = readAll(bytes, sink);
        QCOMPARE(result.events, events);
        QCOMPARE(result.malformed, malformed);
        QCOMPARE(int(sink.malformed.size()), malformed);
        for (int i = 0; i < malformedLines.size(); ++i) {
            QCOMPARE(sink.malformed[size_t(i)].line, malformedLines[i]);
            QVERIFY(sink.malformed[size_t(i)].toString().startsWith(
                u"test.ndjson:" + QString::number(malformedLines[i]) + u": "));
        }
        QCOMPARE(result.endOffset, qint64(bytes.size()));
    }

    void timestampForms_data()
    {
        QTest::addColumn<QByteArray>("line");
        QTest::addColumn<qint64>("ms");
        QTest::newRow("rfc3339") << QByteArray(R"({"ts":"2026-02-18T22:44:09.512Z"})")
                                 << Q_INT64_C(1771454649512);
        QTest::newRow("offset") << QByteArray(R"({"ts":"2026-02-18T23:44:09.512+01:00"})")
                                << Q_INT64_C(1771454649512);
        QTest::newRow("millis") << QByteArray(R"({"ts":1771454649512})")
                                << Q_INT64_C(1771454649512);
        QTest::newRow("nginx-msec")
            << QByteArray(R"({"ts":1771454649.512})") << Q_INT64_C(1771454649512);
        QTest::newRow("seconds-int")
            << QByteArray(R"({"ts":1771454649})") << Q_INT64_C(1771454649000);
    }
    void internedValuesStayRight()
    {
        // Identities repeat (interned: one shared string each) until there are more distinct
        // values than the interner keeps; past that it starts over. Every event must carry
        // its own value whatever the table did meanwhile (grew, started over, probed past
        // colliding entries), and an empty value is a value.
        QByteArray log;
        std::vector<QString> expected;
        for (int i = 0; i < 12000; ++i) {
            const int id = i < 6000 ? i % 37 : i * 7919 % 10007;
            QString identity =
                i % 101 == 0 ? QString() : QStringLiteral("user-%1@contoso.com").arg(id);
            log += "{\"ts\":" + QByteArray::number(i + 1) + ",\"identity\":\"" + identity.toUtf8() +
                   "\",\"method\":\"" + (i % 3 ? "GET" : "POST") + "\"}\n";
            expected.push_back(identity);
        }
        CollectingSink sink;
        const ReadResult result = readAll(log, sink);
        QCOMPARE(result.events, qint64(expected.size()));
        for (size_t i = 0; i < expected.size(); ++i) {
            QCOMPARE(sink.events[i].identity, expected[i]);
            QCOMPARE(sink.events[i].method, i % 3 ? QStringLiteral("GET") : QStringLiteral("POST"));
        }
    }

    void internedValuesDifferingInOneByte()
    {
        // The interner hashes and compares short values by whole words (overlapping loads from
        // both ends, or the first, middle and last byte under four bytes): values of every
        // length that differ in a single byte, anywhere, must stay apart, in any order. The
        // UTF-8 of "é" makes some differ in two bytes of a multi-byte character.
        QByteArray log;
        std::vector<QString> expected;
        for (int round = 0; round < 2; ++round) {
            for (int length = 1; length <= 24; ++length) {
                for (int position = -1; position < length; ++position) {
                    QString value(length, u'a');
                    if (position >= 0)
                        value[position] = (position + round) % 3 == 0 ? u'é' : u'b';
                    log += "{\"ts\":1,\"lane\":\"" + value.toUtf8() + "\"}\n";
                    expected.push_back(value);
                }
            }
        }
        CollectingSink sink;
        const ReadResult result = readAll(log, sink);
        QCOMPARE(result.events, qint64(expected.size()));
        for (size_t i = 0; i < expected.size(); ++i)
            QCOMPARE(sink.events[i].lane, expected[i]);
    }

    void wholeChunksAgreeWithLineByLine_data()
    {
        // Chunks go through simdjson's document stream while every document is one line's
        // object, and line by line from the first line that is anything else (blank lines
        // excepted). Each odd line comes after 300 good ones, so the stream meets it; then all
        // of them in a log of several 1 MB chunks, with and without a byte-order mark.
        QTest::addColumn<QByteArray>("log");
        const std::vector<QByteArray> oddLines = {
            "",
            "   ",
            "\t",
            "\r",
            " \t\r",
            "\r\r",
            "  {\"ts\":5,\"identity\":\"lead\"}  ",
            "\t{\"ts\":6}\r",
            "\r{\"ts\":6}",
            "{\"ts\":7}{\"ts\":8}",
            "{\"ts\":7} {\"ts\":8}",
            "{\"ts\":9,\"status\":200",
            "}",
            "{",
            "[1,2]",
            "\"text\"",
            "42",
            "null",
            "{\"ts\":\"nope\"}",
            "{\"status\":200}",
            "{\"ts\":10,\n\"status\":200}",
            "{\"ts\":11,\"identity\":\"\xff\"}",
            "{\"ts\":12,\"x\":1}  garbage",
            "{\"ts\":13} // comment",
            "\xEF\xBB\xBF{\"ts\":14}",
            "{\"ts\":15,\"identity\":\"tab\there\"}",
            "{\"ts\":16,\"x\":{\"deep\":[1,{\"a\":null}]},\"status\":\"503\"}",
            "{\"ts\":17,\"status\":1000}",
            "{\"ts\":18,\"headers\":{\"Retry-After\":[\"1\",\"2\"]}}",
        };
        auto goodLine = [](int i) -> QByteArray {
            return "{\"ts\":" + QByteArray::number(1771454649000 + i) + ",\"identity\":\"user" +
                   QByteArray::number(i % 53) +
                   "@contoso.com\",\"service\":\"graph\",\"method\":\"GET\",\"url\":"
                   "\"https://graph.microsoft.com/v1.0/me/onenote/pages/" +
                   QByteArray::number(i) + "\",\"status\":" + (i % 7 ? "200" : "429") +
                   (i % 3 ? "" : ",\"extra\":{\"k\":[1,2]}") + (i % 11 ? "}\n" : "}\r\n");
        };
        for (size_t k = 0; k < oddLines.size(); ++k) {
            QByteArray log;
            for (int i = 0; i < 600; ++i)
                log += i == 300 ? QByteArray(oddLines[k] + '\n') : goodLine(i);
            QTest::addRow("odd line %zu", k) << log;
        }
        for (const bool byteOrderMark : {false, true}) {
            QByteArray log = byteOrderMark ? QByteArray("\xEF\xBB\xBF") : QByteArray();
            int odd = 0;
            for (int i = 0; log.size() < 3 * 1024 * 1024 + 12345; ++i)
                log += i % 89 == 17 ? QByteArray(oddLines[size_t(odd++) % oddLines.size()] + '\n')
                                    : goodLine(i);
            log += "{\"ts\":99,\"status\":200"; // an unterminated last line, cut mid-record
            QTest::addRow("chunks, %s", byteOrderMark ? "byte-order mark" : "plain") << log;
        }
    }
    void wholeChunksAgreeWithLineByLine()
    {
        // The oracle is parseLine() on each line alone: every event (line, offset, fields)
        // and every malformed line (line, reason) must come out the same.
        QFETCH(QByteArray, log);
        CollectingSink sink;
        const ReadResult result = readAll(log, sink);

        std::vector<RequestEvent> expected;
        std::vector<MalformedRecord> expectedMalformed;
        NdjsonReader oracle;
        qsizetype start = 0;
        for (qint64 line = 1; start < log.size(); ++line) {
            qsizetype end = log.indexOf('\n', start);
            if (end < 0)
                end = log.size();
            qsizetype from = start;
            if (line == 1 && log.startsWith("\xEF\xBB\xBF"))
                from += 3;
            QByteArray text = log.mid(from, end - from);
            if (text.endsWith('\r'))
                text.chop(1);
            bool blank = true;
            for (char c : std::as_const(text))
                blank = blank && (c == ' ' || c == '\t');
            if (!blank) {
                RequestEvent event;
                QString reason;
                if (oracle.parseLine(text.constData(), text.size(), event, &reason)) {
                    event.line = line;
                    event.offset = from;
                    expected.push_back(std::move(event));
                } else {
                    expectedMalformed.push_back(
                        redact::malformedRecord(QStringLiteral("test.ndjson"), line, reason));
                }
            }
            start = end + 1;
        }
        QCOMPARE(result.events, qint64(expected.size()));
        QCOMPARE(result.malformed, qint64(expectedMalformed.size()));
        QCOMPARE(sink.events.size(), expected.size());
        for (size_t i = 0; i < expected.size(); ++i) {
            testutil::compareEvents(sink.events[i], expected[i]);
            if (QTest::currentTestFailed())
                return;
        }
        QCOMPARE(sink.malformed.size(), expectedMalformed.size());
        for (size_t i = 0; i < expectedMalformed.size(); ++i) {
            QCOMPARE(sink.malformed[i].line, expectedMalformed[i].line);
            QCOMPARE(sink.malformed[i].reason, expectedMalformed[i].reason);
        }
    }

    void immortalTextUntilItsBudget()
    {
        // Values are copied into the arena until its budget is spent, then handed back as they
        // are; either way a value reads right, and an arena copy shares nothing (copying and
        // dropping it touches no reference count), from any thread.
        ImmortalTextArena arena(100);
        std::vector<QString> kept;
        std::vector<QString> expected;
        std::vector<std::thread> threads;
        std::mutex keptMutex; // protects kept and expected
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([&, t] {
                for (int i = 0; i < 10; ++i) {
                    const QString value = QStringLiteral("v%1-%2").arg(t).arg(i);
                    QString copy = arena.keep(value);
                    std::lock_guard lock(keptMutex);
                    kept.push_back(std::move(copy));
                    expected.push_back(value);
                }
            });
        }
        for (std::thread &thread : threads)
            thread.join();
        QCOMPARE(kept, expected);
        int inArena = 0;
        for (size_t i = 0; i < kept.size(); ++i) {
            // (a raw-data string has no header: the copy is not "detached", it is not counted)
            if (kept[i].constData() != expected[i].constData()) {
                ++inArena;
                QCOMPARE(kept[i].constData()[kept[i].size()], QChar(u'\0'));
            }
        }
        // "vT-I" is 4 characters plus a terminator: 100 characters hold 20 of the 40.
        QCOMPARE(inArena, 20);
        QCOMPARE(arena.charsUsed(), size_t(100));
        QCOMPARE(arena.keep(QString()), QString());
    }

    void immortalTextKeptOnce()
    {
        // Equal text kept by any thread is one copy: the same characters for everyone (what
        // lets the analysis compare interned values by address), and budget spent once. A value
        // kept before the budget ran out is still found afterwards.
        ImmortalTextArena arena(60);
        std::vector<std::vector<QString>> kept(4);
        std::vector<std::thread> threads;
        for (size_t t = 0; t < kept.size(); ++t) {
            threads.emplace_back([&arena, &kept, t] {
                for (int i = 0; i < 10; ++i)
                    kept[t].push_back(arena.keep(QStringLiteral("value-%1").arg(i)));
            });
        }
        for (std::thread &thread : threads)
            thread.join();
        // "value-I" is 7 characters plus a terminator: 60 hold 7 of the 10.
        QCOMPARE(arena.charsUsed(), size_t(56));
        for (int i = 0; i < 10; ++i) {
            const QString expected = QStringLiteral("value-%1").arg(i);
            for (size_t t = 0; t < kept.size(); ++t) {
                QCOMPARE(kept[t][size_t(i)], expected);
                if (i < 7)
                    QCOMPARE(kept[t][size_t(i)].constData(), kept[0][size_t(i)].constData());
            }
        }
        const QString again = arena.keep(QStringLiteral("value-3"));
        QCOMPARE(again.constData(), kept[0][3].constData());
        QCOMPARE(arena.charsUsed(), size_t(56));
    }

    void textDecodedAtEveryLength()
    {
        // ASCII text is widened 16 bytes at a time; anything else goes to the UTF-8 decoder.
        // Every length around the 16-byte step, with the first non-ASCII byte anywhere.
        const QString tail = QStringLiteral("é€😀");
        for (int length = 0; length <= 40; ++length) {
            for (int nonAscii = -1; nonAscii < length; nonAscii += (length > 20 ? 7 : 1)) {
                QString url;
                for (int i = 0; i < length; ++i)
                    url.append(QChar(u'a' + char16_t(i % 26)));
                if (nonAscii >= 0)
                    url.insert(nonAscii, tail);
                QByteArray line = "{\"ts\":1,\"url\":\"" + url.toUtf8() + "\",\"requestId\":\"" +
                                  url.toUtf8() + "\"}\n";
                CollectingSink sink;
                const ReadResult result = readAll(line, sink);
                QCOMPARE(result.events, 1);
                QCOMPARE(sink.events[0].url, url);
                QCOMPARE(sink.events[0].requestId, url);
            }
        }
    }

    void timestampForms()
    {
        QFETCH(QByteArray, line);
        QFETCH(qint64, ms);
        NdjsonReader reader;
        RequestEvent event;
        QString reason;
        QVERIFY2(reader.parseLine(line.constData(), line.size(), event, &reason),
                 qPrintable(reason));
        QCOMPARE(event.tsMs, ms);
    }

    void unknownKeysKept()
    {
        const QByteArray line = "{\"ts\":1,\"custom\":{\"a\":[1,2]},\"region\":\"westeurope\","
                                "\"n\":3.5,\"flag\":true,\"we\\\"ird\":null}";
        NdjsonReader reader;
        RequestEvent event;
        QString reason;
        QVERIFY2(reader.parseLine(line.constData(), line.size(), event, &reason),
                 qPrintable(reason));
        QCOMPARE(event.extraJson, QByteArray("{\"custom\":{\"a\":[1,2]},\"region\":\"westeurope\","
                                             "\"n\":3.5,\"flag\":true,\"we\\\"ird\":null}"));
    }

    void headersAreLowerCasedAndScalarsKept()
    {
        const QByteArray line =
            R"({"ts":1,"headers":{"Retry-After":"2.128","X-RateLimit-Remaining":5,"Link":["a","b"],"Set-Cookie":["c=1"]}})";
        NdjsonReader reader;
        RequestEvent event;
        QString reason;
        QVERIFY2(reader.parseLine(line.constData(), line.size(), event, &reason),
                 qPrintable(reason));
        QCOMPARE(event.headers.value(u"retry-after"), u"2.128"_qs);
        QCOMPARE(event.headers.value(u"x-ratelimit-remaining"), u"5"_qs);
        QCOMPARE(event.headers.value(u"link"), u"[\"a\",\"b\"]"_qs);
        // The reader masks what it reads: a credential header never leaves it.
        QVERIFY(!event.headers.contains(u"set-cookie"));
        QVERIFY(event.secretsMasked);
    }

    // "refused": "breaker": the client's own breaker refused the request (issue 35.5).
    void refusedByTheClientsBreaker_data()
    {
        QTest::addColumn<QByteArray>("line");
        QTest::addColumn<bool>("readable");
        QTest::addColumn<bool>("refused");
        QTest::addColumn<QString>("reason");

        QTest::newRow("refused") << QByteArray(R"({"ts":1,"url":"/a","refused":"breaker"})") << true
                                 << true << QString();
        QTest::newRow("null: not refused")
            << QByteArray(R"({"ts":1,"status":200,"refused":null})") << true << false << QString();
        QTest::newRow("absent") << QByteArray(R"({"ts":1,"status":200})") << true << false
                                << QString();
        QTest::newRow("another refusal") << QByteArray(R"({"ts":1,"refused":"bulkhead"})") << false
                                         << false << u"\"refused\" must be \"breaker\""_qs;
        QTest::newRow("not a string") << QByteArray(R"({"ts":1,"refused":true})") << false << false
                                      << u"\"refused\" must be \"breaker\""_qs;
        QTest::newRow("refused with an answer")
            << QByteArray(R"({"status":503,"ts":1,"refused":"breaker"})") << false << false
            << u"has no \"status\""_qs;
    }
    void refusedByTheClientsBreaker()
    {
        QFETCH(QByteArray, line);
        QFETCH(bool, readable);
        QFETCH(bool, refused);
        QFETCH(QString, reason);
        NdjsonReader reader;
        RequestEvent event;
        QString why;
        QCOMPARE(reader.parseLine(line.constData(), line.size(), event, &why), readable);
        if (!readable) {
            QVERIFY2(why.contains(reason), qPrintable(why));
            return;
        }
        QCOMPARE(event.refusedByClientBreaker, refused);
        QVERIFY(event.extraJson.isEmpty()); // a field of its own, not an unknown key
        QVERIFY(event.isRequest());
    }

    void batchFields()
    {
        const QByteArray log =
            "{\"ts\":1,\"method\":\"POST\",\"url\":\"https://graph.microsoft.com/v1.0/"
            "$batch\",\"status\":200,\"batch\":true,\"batchId\":\"b1\"}\n"
            "{\"ts\":1,\"method\":\"GET\",\"url\":\"/me/onenote/"
            "pages\",\"status\":429,\"batchId\":\"b1\",\"batchIndex\":0}\n";
        CollectingSink sink;
        readAll(log, sink);
        QCOMPARE(sink.events.size(), size_t(2));
        QVERIFY(sink.events[0].batchEnvelope);
        QVERIFY(!sink.events[0].isRequest());
        QCOMPARE(sink.events[1].batchId, u"b1"_qs);
        QCOMPARE(sink.events[1].batchIndex, 0);
        QVERIFY(sink.events[1].isRequest());
    }

    void resumeFromOffset()
    {
        QByteArray log;
        for (int i = 0; i < 10; ++i)
            log += R"({"ts":)" + QByteArray::number(1000 + i) + R"(,"status":200})" + '\n';
        // Checkpoints arrive after each delivered batch; the last one is the end of the input.
        qint64 lastCheckpointOffset = -1, lastCheckpointLine = -1;
        ReadControl control;
        control.checkpoint = [&](qint64 offsetAfter, qint64 line) {
            lastCheckpointOffset = offsetAfter;
            lastCheckpointLine = line;
        };
        CollectingSink all;
        readAll(log, all, control);
        QCOMPARE(lastCheckpointOffset, qint64(log.size()));
        QCOMPARE(lastCheckpointLine, 10);
        // Resume after line 4, as a ledger would after a kill.
        qint64 offsetAfter4 = 0;
        for (int i = 0; i < 4; ++i)
            offsetAfter4 = log.indexOf('\n', offsetAfter4) + 1;
        QVERIFY(offsetAfter4 > 0);
        // Second pass: resume there; lines are numbered as in the file.
        ReadControl resume;
        resume.startOffset = offsetAfter4;
        resume.startLine = 4;
        CollectingSink rest;
        const ReadResult result = readAll(log, rest, resume);
        QCOMPARE(result.events, 6);
        QCOMPARE(rest.events.front().line, 5);
        QCOMPARE(rest.events.front().tsMs, Q_INT64_C(1004000));
        QCOMPARE(rest.events.front().offset, offsetAfter4);
        QCOMPARE(rest.events.back().line, 10);
    }

    void longLinesAcrossChunks()
    {
        // A line far larger than the read chunk must still be read whole.
        const QByteArray body(9 * 1024 * 1024, 'x');
        const QByteArray log = "{\"ts\":1,\"body\":\"" + body + "\"}\n" + R"({"ts":2})" + '\n';
        CollectingSink sink;
        const ReadResult result = readAll(log, sink);
        QCOMPARE(result.events, 2);
        QCOMPARE(sink.events[0].body.size(), body.size());
        QCOMPARE(sink.events[1].line, 2);
    }

    void manyLinesAcrossChunkBoundaries()
    {
        QByteArray log;
        const int lines = 60000; // ~6 MB: crosses the 4 MiB chunk boundary mid-line
        for (int i = 0; i < lines; ++i)
            log += "{\"ts\":\"2026-02-18T22:44:09.512Z\",\"identity\":\"user-" +
                   QByteArray::number(i % 97) + R"(","url":"https://example.test/items/)" +
                   QByteArray::number(i) + "\",\"status\":200}" + '\n';
        CollectingSink sink;
        const ReadResult result = readAll(log, sink);
        QCOMPARE(result.events, lines);
        QCOMPARE(result.malformed, 0);
        for (int i = 0; i < lines; i += 997) {
            QCOMPARE(sink.events[size_t(i)].line, qint64(i + 1));
            QCOMPARE(sink.events[size_t(i)].url,
                     u"https://example.test/items/" + QString::number(i));
        }
    }

    void cancellation()
    {
        QByteArray log;
        for (int i = 0; i < 1000; ++i)
            log += R"({"ts":1})"
                   "\n";
        std::atomic<bool> cancel{true};
        ReadControl control;
        control.cancel = &cancel;
        CollectingSink sink;
        const ReadResult result = readAll(log, sink, control);
        QVERIFY(result.cancelled);
        QCOMPARE(result.events, 0);
    }
};

QTEST_GUILESS_MAIN(TestNdjsonReader)
#include "tst_ndjsonreader.moc"
