// PollCursor: the exactly-once rule on its own (model/poll/pollcursor.h), with answers built by
// hand: ties at the boundary, pages cut inside a group, late rows, identical rows, restart.
#include "poll/pollcursor.h"
#include "poll/pollsource.h"

#include <QTest>

#include <map>

using namespace ts::poll;

namespace {

// A store: rows (key, id); answers "key >= low ORDER BY key LIMIT n" like ClickHouse.
struct Store
{
    std::multimap<qint64, int> rows;
    QList<PollCursor::Row> answer(qint64 low, int limit, QList<int> *ids) const
    {
        QList<PollCursor::Row> out;
        for (auto it = rows.lower_bound(low); it != rows.end() && out.size() < limit; ++it) {
            const QByteArray content =
                QByteArray::number(it->first) + ':' + QByteArray::number(it->second);
            out.append({it->first, rowHash(content.constData(), content.size())});
            ids->append(it->second);
        }
        return out;
    }
};

// What a poller does: pages from the cursor's low bound, the next page from the last key.
QList<int> pollAll(const Store &store, PollCursor &cursor, int limit)
{
    QList<int> taken;
    qint64 low = cursor.lowBound(0);
    int pageLimit = limit;
    for (int guard = 0; guard < 10000; ++guard) {
        QList<int> ids;
        const QList<PollCursor::Row> rows = store.answer(low, pageLimit, &ids);
        for (qsizetype index : cursor.accept(rows))
            taken.append(ids.at(index));
        if (rows.size() < pageLimit)
            break;
        const qint64 last = rows.constLast().key;
        pageLimit = rows.constFirst().key == last ? pageLimit * 2 : limit;
        low = last;
    }
    return taken;
}

} // namespace

class TestPollCursor : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void exactlyOnce_data()
    {
        QTest::addColumn<int>("rowsPerKey");
        QTest::addColumn<int>("pageRows");
        QTest::newRow("ties cut by every page") << 7 << 5;
        QTest::newRow("one row per key") << 1 << 50;
        QTest::newRow("groups larger than a page") << 40 << 16;
        QTest::newRow("one page") << 3 << 100000;
    }
    void exactlyOnce()
    {
        QFETCH(int, rowsPerKey);
        QFETCH(int, pageRows);
        Store store;
        int id = 0;
        for (int i = 0; i < 2000; ++i)
            store.rows.insert({1000 * qint64(i / rowsPerKey), id++});
        PollCursor cursor(5000);
        QList<int> taken = pollAll(store, cursor, pageRows);
        QCOMPARE(taken.size(), 2000);
        // 500 more: some at the newest key (ties at the cursor), some late (within the
        // overlap), the rest newer.
        const qint64 newest = *cursor.newestKey();
        for (int i = 0; i < 500; ++i) {
            const qint64 key = i < 100 ? newest : i < 200 ? newest - 3000 : newest + 1000 * i;
            store.rows.insert({key, id++});
        }
        // Restart from the saved state between the two polls.
        std::optional<PollCursor> restored = PollCursor::restore(cursor.save(), 5000);
        QVERIFY(restored);
        taken += pollAll(store, *restored, pageRows);
        QCOMPARE(taken.size(), 2500);
        std::sort(taken.begin(), taken.end());
        for (int i = 0; i < 2500; ++i)
            QCOMPARE(taken.at(i), i);
        // Nothing new: nothing taken.
        QVERIFY(pollAll(store, *restored, pageRows).isEmpty());
    }

    void identicalRowsCountAsOftenAsStored()
    {
        PollCursor cursor(1000);
        const QByteArray row = "{\"ts\":5000}";
        const quint64 h = rowHash(row.constData(), row.size());
        QCOMPARE(cursor.accept({{5000, h}, {5000, h}}).size(), 2);
        // A third copy written since: one new row.
        QCOMPARE(cursor.accept({{5000, h}, {5000, h}, {5000, h}}).size(), 1);
        QCOMPARE(cursor.accept({{5000, h}, {5000, h}, {5000, h}}).size(), 0);
    }

    void lateBeyondOverlapIsTheBound()
    {
        PollCursor cursor(1000);
        QCOMPARE(cursor.accept({{10'000, 1}}).size(), 1);
        QCOMPARE(cursor.lowBound(0), 9000);
        // Rows older than the overlap are not asked for again (the documented bound); within
        // it they are taken.
        QCOMPARE(cursor.accept({{9500, 2}, {10'000, 1}}).size(), 1);
        QCOMPARE(cursor.rememberedRows(), 2);
        QCOMPARE(cursor.accept({{20'000, 3}}).size(), 1);
        QCOMPARE(cursor.rememberedRows(), 1); // the window moved on
    }

    // A store that ignores the filter (a static NDJSON file over HTTP) answers every row
    // again: the rows below what was asked are not taken twice.
    void rowsBelowTheAskedBoundAreNotTakenAgain()
    {
        PollCursor cursor(1000);
        QList<PollCursor::Row> everything;
        for (int i = 0; i < 100; ++i)
            everything.append({qint64(i) * 100, quint64(i + 1)});
        QCOMPARE(cursor.accept(everything).size(), 100);
        QCOMPARE(cursor.accept(everything).size(), 0);
        everything.append({10'000, 101}); // one appended since
        QCOMPARE(cursor.accept(everything), QList<qsizetype>{100});
    }

    void partialAnswerDoesNotMoveTheCursor()
    {
        PollCursor cursor(1000);
        QCOMPARE(cursor.accept({{5000, 1}}).size(), 1);
        QCOMPARE(cursor.accept({{6000, 2}}, false).size(), 1);
        QCOMPARE(*cursor.newestKey(), 5000);
        QCOMPARE(cursor.accept({{5500, 3}, {6000, 2}}).size(), 1); // only the missing one
    }

    void restoreRejectsGarbage()
    {
        QVERIFY(!PollCursor::restore("nonsense", 1000));
        QVERIFY(!PollCursor::restore("1 12\nx y z\n", 1000));
        QVERIFY(PollCursor::restore("1 -\n", 1000));
    }

    // Issue 29.1: a row stamped past the store's present never moves the cursor there; it is
    // taken once, counted, and remembered while the store's clock has not passed it.
    void futureRowsDoNotMoveTheCursor()
    {
        PollCursor cursor(1000);
        cursor.beginAnswer(/*ceiling=*/10'000, /*aheadAfter=*/10'500);
        QCOMPARE(cursor.acceptChunk({{9000, 1}, {3'600'000, 2}}).size(), 2);
        cursor.endAnswer();
        QCOMPARE(*cursor.newestKey(), 9000);
        QCOMPARE(cursor.rowsAhead(), 1);
        QCOMPARE(cursor.lowBound(0), 8000);
        // Asked again: the future row comes back and is not taken twice; a late ordinary row is.
        cursor.beginAnswer(11'000, 11'500);
        QCOMPARE(cursor.acceptChunk({{9000, 1}, {9500, 3}, {3'600'000, 2}}), QList<qsizetype>{1});
        cursor.endAnswer();
        QCOMPARE(cursor.rowsAhead(), 1);
        const auto restored = PollCursor::restore(cursor.save(), 1000);
        QVERIFY(restored);
        QCOMPARE(restored->rowsAhead(), 1);
        QCOMPARE(restored->save(), cursor.save());
    }

    // An answer accepted a chunk at a time takes what it takes whole, and the state after any
    // chunk resumes exactly (each chunk is committed with it).
    void chunksEqualAWholeAnswer()
    {
        Store store;
        for (int i = 0; i < 3000; ++i)
            store.rows.insert({qint64(i / 7) * 10, i % 50}); // ties and identical rows
        QList<int> ids;
        const QList<PollCursor::Row> answer = store.answer(0, 100000, &ids);
        PollCursor whole(500);
        const QList<qsizetype> wholeFresh = whole.accept(answer);
        for (const qsizetype chunk : {1, 7, 256, 1000}) {
            PollCursor chunked(500);
            QList<qsizetype> fresh;
            chunked.beginAnswer();
            for (qsizetype start = 0; start < answer.size(); start += chunk) {
                for (const qsizetype index : chunked.acceptChunk(answer.mid(start, chunk)))
                    fresh.append(start + index);
                // A restart here: the saved state reads the rest exactly.
                if (start == chunk * 3) {
                    auto resumed = PollCursor::restore(chunked.save(), 500);
                    QVERIFY(resumed);
                    QList<int> rest;
                    const QList<qsizetype> later =
                        resumed->accept(store.answer(resumed->lowBound(0), 100000, &rest));
                    QCOMPARE(qsizetype(fresh.size() + later.size()), answer.size());
                }
            }
            chunked.endAnswer();
            QCOMPARE(fresh, wholeFresh);
            QCOMPARE(chunked.save(), whole.save());
        }
    }

    // Issue 29.12: more rows within the overlap than the cursor remembers: the window shrinks
    // to the newest ones (whole keys), the state stays small, and nothing is read twice.
    void windowIsBounded()
    {
        Store store;
        for (int i = 0; i < 100'000; ++i)
            store.rows.insert({qint64(i / 4), i}); // 100,000 rows within 25 s
        PollCursor cursor(30'000);
        QCOMPARE(pollAll(store, cursor, 50'000).size(), 100'000);
        QVERIFY(cursor.rememberedRows() <= PollCursor::kMaxRememberedRows);
        QVERIFY(cursor.rememberedRows() > PollCursor::kMaxRememberedRows - 8);
        QVERIFY2(cursor.save().size() < 400 * 1024,
                 QByteArray::number(cursor.save().size()).constData());
        QCOMPARE(cursor.lowBound(0), 25'000 - PollCursor::kMaxRememberedRows / 4);
        QVERIFY(pollAll(store, cursor, 50'000).isEmpty());
        store.rows.insert({25'000, 100'000});
        QCOMPARE(pollAll(store, cursor, 50'000), QList<int>{100'000});
    }

    void restoreRejectsGarbageV2()
    {
        QVERIFY(!PollCursor::restore("2 10 5 0\n+3 ab\n", 1000)); // a delta before any key
        QVERIFY(!PollCursor::restore("2 10 5 x\n", 1000));
        QVERIFY(!PollCursor::restore("2 10 5 0\n=7 zz\n", 1000));
        QVERIFY(!PollCursor::restore("2 10 5 0\n=7 ab*0\n", 1000));
        QVERIFY(!PollCursor::restore("2 10 5 0\n=7 ab\n=8 cd\n", 1000)); // one absolute key
        QVERIFY(PollCursor::restore("2 10 5 3\n=7 ab*2 cd\n+1 ef\n", 1000));
        QVERIFY(PollCursor::restore("2 - - 0\n", 1000));
    }

    // Issue 29.8: whatever the redaction rules treat as secret in a URL is refused in a
    // source URL (it would be stored in the workspace and shown), and never quoted back.
    void secretsInSourceUrls_data()
    {
        QTest::addColumn<QString>("url");
        const QString value = u"SeCrEtVaLuE123"_qs;
        for (const char *name : {"api_key", "client_secret", "subscription-key", "x-api-key",
                                 "access-token", "signature", "private_token", "jwt", "auth", "sig",
                                 "token", "key", "Ocp-Apim-Subscription-Key", "code", "password"}) {
            QTest::addRow("ndjson %s", name)
                << u"http://h/rows?after={cursor}&%1=%2"_qs.arg(QLatin1StringView(name), value);
            QTest::addRow("kql %s", name)
                << u"kql+https://h/v1/workspaces/W/query?table=T&%1=%2"_qs.arg(
                       QLatin1StringView(name), value);
        }
        QTest::newRow("a JWT under an innocent name")
            << u"http://h/rows?after={cursor}&state=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0."
               u"SeCrEtVaLuE123abc"_qs;
        QTest::newRow("a secret next to a bad option")
            << u"http://h/rows?after={cursor}&overlap=soon&api_key=SeCrEtVaLuE123"_qs;
        QTest::newRow("a secret in an unknown scheme") << u"ftp://h/x?api_key=SeCrEtVaLuE123"_qs;
    }
    void secretsInSourceUrls()
    {
        QFETCH(QString, url);
        QString error;
        QVERIFY(!PollSource::parse(url, &error));
        QVERIFY(!error.isEmpty());
        QVERIFY2(!error.contains(u"SeCrEtVaLuE123"), qPrintable(error));
        QVERIFY2(!error.contains(u"eyJ"), qPrintable(error));
        QVERIFY(!PollSource::shown(url).contains(u"SeCrEtVaLuE123"));
    }

    void sourceUrls_data()
    {
        QTest::addColumn<QString>("url");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<QString>("kind");
        QTest::newRow("clickhouse")
            << u"clickhouse://127.0.0.1:8123/logs/requests"_qs << true << u"clickhouse"_qs;
        QTest::newRow("clickhouse options")
            << u"clickhouse://h:9/db/t?overlap=5&page=100&password-env=CH_PW&ms=ms"_qs << true
            << u"clickhouse"_qs;
        QTest::newRow("clickhouse no table") << u"clickhouse://h:9/db"_qs << false << QString();
        QTest::newRow("kql") << u"kql+https://api.loganalytics.io/v1/workspaces/W/query?"
                                u"table=AppRequests&token-env=AZ_TOKEN"_qs
                             << true << u"kql"_qs;
        QTest::newRow("kql without table")
            << u"kql+https://h/v1/workspaces/W/query"_qs << false << QString();
        QTest::newRow("ndjson") << u"http://127.0.0.1:9/rows?after={cursor}"_qs << true
                                << u"ndjson-http"_qs;
        QTest::newRow("ndjson without cursor")
            << u"http://127.0.0.1:9/rows"_qs << false << QString();
        QTest::newRow("secret in query")
            << u"http://h/rows?after={cursor}&token=abc"_qs << false << QString();
        QTest::newRow("password in userinfo")
            << u"clickhouse://u:pw@h:9/db/t"_qs << false << QString();
        QTest::newRow("unknown scheme") << u"ftp://h/x"_qs << false << QString();
    }
    void sourceUrls()
    {
        QFETCH(QString, url);
        QFETCH(bool, valid);
        QFETCH(QString, kind);
        QString error;
        const auto source = PollSource::parse(url, &error);
        QCOMPARE(bool(source), valid);
        if (valid)
            QCOMPARE(sourceKindName(source->kind), kind);
        else
            QVERIFY(!error.isEmpty());
        // A refused secret is not quoted back.
        QVERIFY(!error.contains(u"abc"));
        QVERIFY(!error.contains(u":pw@"));
    }
};

QTEST_GUILESS_MAIN(TestPollCursor)
#include "tst_pollcursor.moc"
