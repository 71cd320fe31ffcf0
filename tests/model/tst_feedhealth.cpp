// A live feed's health as the Ingest page judges it (ingest/feedhealth.h): silence measured from
// the last event or from the feed's start, "stale" past the threshold, the arrival rate over a
// trailing window and its decay once the feed goes quiet; and the Ingest model's rows for them.
#include "ingest/feedhealth.h"
#include "models/ingestmodels.h"

#include <QAbstractItemModelTester>
#include <QTest>

using namespace ts;
using namespace ts::models;

namespace {
constexpr qint64 kNow = 1'800'000'000'000;

IngestSourceStatus liveFeed(std::optional<qint64> lastEventAgoMs, std::optional<qint64> startedAgoMs)
{
    IngestSourceStatus source;
    source.path = QStringLiteral("http://127.0.0.1:4318");
    source.live = true;
    if (lastEventAgoMs)
        source.lastEventReceivedMs = kNow - *lastEventAgoMs;
    if (startedAgoMs)
        source.liveSinceMs = kNow - *startedAgoMs;
    return source;
}
} // namespace

class TestFeedHealth : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void staleness_data()
    {
        QTest::addColumn<bool>("live");
        QTest::addColumn<bool>("finished");
        QTest::addColumn<qint64>("lastEventAgo"); // -1: none yet
        QTest::addColumn<qint64>("startedAgo");   // -1: unknown
        QTest::addColumn<qint64>("staleAfter");
        QTest::addColumn<qint64>("silence"); // -1: not measured
        QTest::addColumn<bool>("stale");
        QTest::newRow("fresh") << true << false << 5'000ll << 600'000ll << 60'000ll << 5'000ll << false;
        QTest::newRow("at the threshold") << true << false << 60'000ll << 600'000ll << 60'000ll
                                          << 60'000ll << false;
        QTest::newRow("past it") << true << false << 60'001ll << 600'000ll << 60'000ll << 60'001ll
                                 << true;
        QTest::newRow("never sent, just started")
            << true << false << -1ll << 10'000ll << 60'000ll << 10'000ll << false;
        QTest::newRow("never sent, long silent")
            << true << false << -1ll << 90'000ll << 60'000ll << 90'000ll << true;
        QTest::newRow("finished feed is not stale")
            << true << true << 600'000ll << 900'000ll << 60'000ll << -1ll << false;
        QTest::newRow("an import is not a feed")
            << false << true << 600'000ll << -1ll << 60'000ll << -1ll << false;
        QTest::newRow("threshold off") << true << false << 600'000ll << 900'000ll << 0ll
                                       << 600'000ll << false;
    }
    void staleness()
    {
        QFETCH(bool, live);
        QFETCH(bool, finished);
        QFETCH(qint64, lastEventAgo);
        QFETCH(qint64, startedAgo);
        QFETCH(qint64, staleAfter);
        QFETCH(qint64, silence);
        QFETCH(bool, stale);
        IngestSourceStatus source =
            liveFeed(lastEventAgo < 0 ? std::nullopt : std::optional<qint64>(lastEventAgo),
                     startedAgo < 0 ? std::nullopt : std::optional<qint64>(startedAgo));
        source.live = live;
        source.finished = finished;
        QCOMPARE(feedSilenceMs(source, kNow),
                 silence < 0 ? std::nullopt : std::optional<qint64>(silence));
        QCOMPARE(isFeedStale(source, kNow, staleAfter), stale);
    }

    void rateMeter_data()
    {
        QTest::addColumn<QList<qint64>>("arrivalsMs"); // one event each, relative to 0
        QTest::addColumn<qint64>("atMs");
        QTest::addColumn<double>("perSecond");
        // A first burst counts over at least one second, not over the milliseconds it took.
        QTest::newRow("burst") << QList<qint64>{0, 1, 2, 3, 4} << 10ll << 5.0;
        QTest::newRow("two seconds") << QList<qint64>{0, 500, 1000, 1500} << 2000ll << 2.0;
        QList<qint64> steady;
        for (qint64 t = 0; t < 30'000; t += 100)
            steady.append(t); // 10/s for 30 s: the window holds the last 10 s only
        QTest::newRow("steady 10/s") << steady << 30'000ll << 10.0;
        QTest::newRow("quiet since") << QList<qint64>{0, 100, 200} << 20'000ll << 0.0;
    }
    void rateMeter()
    {
        QFETCH(QList<qint64>, arrivalsMs);
        QFETCH(qint64, atMs);
        QFETCH(double, perSecond);
        RateMeter meter;
        for (const qint64 at : arrivalsMs)
            meter.add(kNow + at, 1);
        QVERIFY2(qAbs(meter.perSecond(kNow + atMs) - perSecond) < 1.01,
                 qPrintable(QString::number(meter.perSecond(kNow + atMs))));
    }

    void rateDecaysInTheModel()
    {
        IngestSourceStatus source = liveFeed(2'000, 60'000);
        source.eventsPerSecond = 40;
        QCOMPARE(feedRateNow(source, kNow), 40.0);
        source.lastEventReceivedMs = kNow - RateMeter::kWindowMs - 1;
        QCOMPARE(feedRateNow(source, kNow), 0.0);
    }

    void staleRowInTheModel()
    {
        IngestSourcesModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        IngestSourceStatus feed = liveFeed(5'000, 60'000);
        feed.events = 12;
        feed.errors = 2;
        feed.rejectedRequests = 1;
        feed.lagMs = 1500;
        IngestSourceStatus file;
        file.path = QStringLiteral("a.ndjson");
        file.finished = true;
        model.setSources({feed, file});
        model.setStaleAfterMs(30'000);
        model.setNow(kNow);
        QCOMPARE(model.index(0, IngestSourcesModel::StateColumn).data().toString(), u"live"_qs);
        QCOMPARE(model.index(0, IngestSourcesModel::ErrorsColumn).data().toLongLong(), 3);
        QCOMPARE(model.index(0, IngestSourcesModel::LagColumn).data().toString(), u"1.5 s"_qs);
        QVERIFY(!model.index(0, 0).data(IngestSourcesModel::StaleRole).toBool());
        QVERIFY(model.staleFeeds().isEmpty());
        model.setNow(kNow + 40'000); // 45 s silent
        QCOMPARE(model.index(0, IngestSourcesModel::StateColumn).data().toString(), u"stale"_qs);
        QVERIFY(model.index(0, IngestSourcesModel::PathColumn).data(IngestSourcesModel::StaleRole).toBool());
        QVERIFY(!model.index(1, 0).data(IngestSourcesModel::StaleRole).toBool());
        QCOMPARE(model.staleFeeds(), QStringList{u"http://127.0.0.1:4318 (last event 45 s ago)"_qs});
        model.setStaleAfterMs(60'000);
        QVERIFY(model.staleFeeds().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestFeedHealth)
#include "tst_feedhealth.moc"
