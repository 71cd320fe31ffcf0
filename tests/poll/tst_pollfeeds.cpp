// The dashboard's polled stores side by side (poll/pollfeeds.h, issue 29.10): a store that
// trickles its answer (one byte every half second, 20 s deadline) never holds another feed's
// rows back. Both feeds are started together, the honest one first: on a shared thread the
// slow poll nested inside the honest one's wait, and the honest rows came only after the slow
// one's deadline.
#include "hostilestore.h"

#include "poll/pollfeed.h"
#include "poll/pollfeeds.h"

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>

using namespace ts;

namespace {

QByteArray rows(int count)
{
    QByteArray out;
    for (int i = 0; i < count; ++i)
        out += "{\"ts\":" + QByteArray::number(1771454400000 + i * 10) +
               ",\"service\":\"graph\",\"identity\":\"u\",\"status\":200,\"requestId\":\"r" +
               QByteArray::number(i) + "\"}\n";
    return out;
}

poll::PollSource sourceFor(const QString &url)
{
    QString error;
    const auto source = poll::PollSource::parse(url, &error);
    if (!source)
        qFatal("%s", qPrintable(error));
    return *source;
}

} // namespace

class TestPollFeeds : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void slowStoreDoesNotHoldOthersBack()
    {
        testhostile::Store honest;
        testhostile::Store slow;
        QString error;
        QVERIFY2(honest.start(&error) && slow.start(&error), qPrintable(error));
        QVERIFY(honest.addRows(rows(50)));
        QVERIFY(slow.addRows(rows(50)));
        QVERIFY(slow.configure(
            {{u"fault"_qs, u"slow"_qs}, {u"fault_count"_qs, -1}, {u"slow_seconds"_qs, 0.5}}));

        poll::PollFeeds feeds;
        poll::PollFeed *first = feeds.add(sourceFor(honest.url(u"ndjson"_qs)), 3600, {}, 0, &error);
        poll::PollFeed *second =
            feeds.add(sourceFor(slow.url(u"ndjson"_qs, u"&timeout=20"_qs)), 3600, {}, 0, &error);
        QVERIFY2(first && second, qPrintable(error));
        QVERIFY(!feeds.add(sourceFor(honest.url(u"ndjson"_qs)), 5, {}, 0, &error));
        QVERIFY2(error.contains(u"polled already"), qPrintable(error));
        QSignalSpy honestRows(first, &poll::PollFeed::rowsPolled);
        QElapsedTimer clock;
        clock.start();
        feeds.start(first);
        feeds.start(second);
        QVERIFY(honestRows.wait(15'000));
        qInfo("the honest store's rows after %lld ms, beside a store trickling its answer",
              qint64(clock.elapsed()));
        QCOMPARE(honestRows.constFirst().at(2).value<QList<RequestEvent>>().size(), 50);
        QVERIFY2(clock.elapsed() < 10'000, qPrintable(QString::number(clock.elapsed())));
        // Stopping does not wait for the slow store's deadline.
        clock.restart();
        feeds.stopAll();
        qInfo("stopped in %lld ms", qint64(clock.elapsed()));
        QVERIFY(clock.elapsed() < 2'000);
    }
};

QTEST_GUILESS_MAIN(TestPollFeeds)
#include "tst_pollfeeds.moc"
