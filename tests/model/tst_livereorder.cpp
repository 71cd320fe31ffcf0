// Issue 30.4, live feeds: the reorder window the dashboard puts in front of its analysis
// (ingest/livereorder.h). The real Apache combined sample, fed line by line as a followed file
// delivers it: with a fixed 60 s window nothing is late and everything comes out in time order;
// "auto" sizes the window from the lateness seen, so only the lines before it had grown are
// late; an ordered feed is never held.
#include "session/analysissession.h"
#include "ingest/livereorder.h"
#include "ingest/sourcereader.h"

#include <QSignalSpy>
#include <QTest>

using namespace ts;

namespace {

const QString kApache =
    QStringLiteral(TS_THIRDPARTY_DIR "/oplogs/elastic-examples_apache_logs_combined.log");

class Collect final : public IngestSink
{
public:
    void onEvent(RequestEvent &&event) override { events.push_back(std::move(event)); }
    void onMalformed(MalformedRecord &&) override {}
    std::vector<RequestEvent> events;
};

std::vector<RequestEvent> apacheLines()
{
    Collect collect;
    readSource(kApache, collect);
    return collect.events;
}

// Feeds the events `size` at a time, a batch every 100 ms of wall-clock time, as a follower
// would.
std::vector<RequestEvent> feed(LiveReorderBuffer &buffer, std::vector<RequestEvent> events,
                               qint64 *heldAfterFirst = nullptr, size_t size = 50)
{
    std::vector<RequestEvent> out;
    qint64 now = 1'000'000;
    for (size_t i = 0; i < events.size(); i += size, now += 100) {
        std::vector<RequestEvent> batch(
            std::make_move_iterator(events.begin() + qsizetype(i)),
            std::make_move_iterator(events.begin() + qsizetype(std::min(events.size(), i + size))));
        buffer.release(now, out);
        buffer.add(std::move(batch), now, out);
        if (heldAfterFirst && i == 0)
            *heldAfterFirst = qint64(qint64(std::min(size, events.size())) - qint64(out.size()));
    }
    buffer.flush(out);
    return out;
}

bool inTimeOrder(const std::vector<RequestEvent> &events)
{
    return std::is_sorted(events.begin(), events.end(),
                          [](const RequestEvent &a, const RequestEvent &b) { return a.tsMs < b.tsMs; });
}

} // namespace

class TestLiveReorder : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void apacheSample_data()
    {
        QTest::addColumn<int>("fixedSeconds"); // -1: auto
        QTest::addColumn<int>("batch");        // lines per delivery
        QTest::addColumn<bool>("noneLate");
        QTest::newRow("fixed 60 s: every line in its place") << 60 << 50 << true;
        QTest::newRow("fixed 0 s: every line behind another is late") << 0 << 50 << false;
        QTest::newRow("auto, 50 lines a delivery: sized before anything is late")
            << -1 << 50 << true;
        QTest::newRow("auto, line by line: late only until it has grown") << -1 << 1 << false;
    }

    void apacheSample()
    {
        QFETCH(int, fixedSeconds);
        QFETCH(int, batch);
        QFETCH(bool, noneLate);
        const std::vector<RequestEvent> lines = apacheLines();
        QCOMPARE(lines.size(), size_t(10000));
        LiveReorderBuffer buffer;
        if (fixedSeconds >= 0)
            buffer.setFixedWindow(qint64(fixedSeconds) * 1000);
        const std::vector<RequestEvent> out = feed(buffer, lines, nullptr, size_t(batch));
        QCOMPARE(out.size(), lines.size());
        QCOMPARE(buffer.largestLatenessMs() > 55'000, true); // up to 59 s behind
        if (fixedSeconds < 0)
            QCOMPARE(buffer.windowMs(), buffer.largestLatenessMs()); // sized from what was seen
        if (noneLate) {
            QCOMPARE(buffer.lateEvents(), qint64(0));
            QVERIFY(inTimeOrder(out));
            return;
        }
        QVERIFY(buffer.lateEvents() > 0);
        QCOMPARE(buffer.lateEvents(kApache), buffer.lateEvents());
        if (fixedSeconds < 0) {
            // Late lines are the few that came before the window had grown to the lateness
            // they needed (the merge's 5 s window counted 7,304).
            QVERIFY2(buffer.lateEvents() < 1000, qPrintable(QString::number(buffer.lateEvents())));
        }
    }

    // A feed in time order is handed on as it arrives: nothing waits for a window.
    void orderedFeedIsNotHeld()
    {
        std::vector<RequestEvent> events(200);
        for (size_t i = 0; i < events.size(); ++i)
            events[i].tsMs = 1'771'454'400'000 + qint64(i) * 10;
        LiveReorderBuffer buffer;
        qint64 held = -1;
        const std::vector<RequestEvent> out = feed(buffer, events, &held);
        QCOMPARE(held, qint64(0));
        QCOMPARE(buffer.windowMs(), qint64(0));
        QCOMPARE(buffer.lateEvents(), qint64(0));
        QCOMPARE(out.size(), events.size());
    }

    // The dashboard's session: the Apache sample followed line batch by line batch. With a 60 s
    // window the analysis sees every line in its place and the Ingest page counts none late;
    // with none (0 s) the analysis charged thousands late and the page says how many, per file.
    void sessionHoldsLiveEventsForTheWindow_data()
    {
        QTest::addColumn<qint64>("windowMs");
        QTest::addColumn<bool>("noneLate");
        QTest::newRow("60 s") << qint64(60'000) << true;
        QTest::newRow("0 s") << qint64(0) << false;
    }

    void sessionHoldsLiveEventsForTheWindow()
    {
        QFETCH(qint64, windowMs);
        QFETCH(bool, noneLate);
        const std::vector<RequestEvent> lines = apacheLines();
        AnalysisSession session;
        QSignalSpy snapshots(&session, &AnalysisSession::snapshotReady);
        QSignalSpy statuses(&session, &AnalysisSession::ingestStatusChanged);
        session.setReorderWindow(windowMs);
        for (size_t i = 0; i < lines.size(); i += 50) {
            const QList<RequestEvent> batch(lines.begin() + qsizetype(i),
                                            lines.begin() + qsizetype(std::min(lines.size(), i + 50)));
            session.ingestFollowed(kApache, batch, {});
        }
        session.setReorderWindow(0); // hands on what the window still holds
        session.publishIfDirty();
        QVERIFY(!snapshots.isEmpty() && !statuses.isEmpty());
        const auto snapshot =
            snapshots.last().at(0).value<std::shared_ptr<const DashboardSnapshot>>();
        const IngestStatus status = statuses.last().at(0).value<IngestStatus>();
        QCOMPARE(snapshot->report.events, qint64(10000));
        qint64 sourceLate = -1;
        for (const IngestSourceStatus &source : status.sources) {
            if (source.path == kApache)
                sourceLate = source.lateEvents;
        }
        QCOMPARE(sourceLate, status.lateEvents);
        if (noneLate) {
            QCOMPARE(snapshot->report.lateEvents, qint64(0));
            QCOMPARE(status.lateEvents, qint64(0));
        } else {
            QVERIFY(snapshot->report.lateEvents > 1000);
            QCOMPARE(status.lateEvents, snapshot->report.lateEvents);
        }
    }

    // A feed that goes quiet: what is held is handed on once it has waited the window.
    void quietFeedIsReleased()
    {
        LiveReorderBuffer buffer;
        buffer.setFixedWindow(5000);
        std::vector<RequestEvent> one(1);
        one[0].tsMs = 1'771'454'400'000;
        std::vector<RequestEvent> out;
        buffer.add(std::move(one), 1000, out);
        QVERIFY(out.empty());
        buffer.release(5999, out);
        QVERIFY(out.empty());
        buffer.release(6000, out);
        QCOMPARE(out.size(), size_t(1));
    }
};

QTEST_GUILESS_MAIN(TestLiveReorder)
#include "tst_livereorder.moc"
