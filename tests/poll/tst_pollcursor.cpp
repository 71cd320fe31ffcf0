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
            const QByteArray content = QByteArray::number(it->first) + ':' +
                                       QByteArray::number(it->second);
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

    void sourceUrls_data()
    {
        QTest::addColumn<QString>("url");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<QString>("kind");
        QTest::newRow("clickhouse") << u"clickhouse://127.0.0.1:8123/logs/requests"_qs << true
                                    << u"clickhouse"_qs;
        QTest::newRow("clickhouse options")
            << u"clickhouse://h:9/db/t?overlap=5&page=100&password-env=CH_PW&ms=ms"_qs << true
            << u"clickhouse"_qs;
        QTest::newRow("clickhouse no table") << u"clickhouse://h:9/db"_qs << false << QString();
        QTest::newRow("kql") << u"kql+https://api.loganalytics.io/v1/workspaces/W/query?"
                                u"table=AppRequests&token-env=AZ_TOKEN"_qs
                             << true << u"kql"_qs;
        QTest::newRow("kql without table") << u"kql+https://h/v1/workspaces/W/query"_qs << false
                                           << QString();
        QTest::newRow("ndjson") << u"http://127.0.0.1:9/rows?after={cursor}"_qs << true
                                << u"ndjson-http"_qs;
        QTest::newRow("ndjson without cursor") << u"http://127.0.0.1:9/rows"_qs << false
                                               << QString();
        QTest::newRow("secret in query") << u"http://h/rows?after={cursor}&token=abc"_qs << false
                                         << QString();
        QTest::newRow("password in userinfo") << u"clickhouse://u:pw@h:9/db/t"_qs << false
                                              << QString();
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
