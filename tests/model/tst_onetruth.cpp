// One truth per instant (issue 19.6): the report (the engine's summary at an instant), the
// Bucket chart (the usage step series it plots), the fill grid (BucketGridModel, live and at a
// replay instant) and snapshotmath's displayed usage agree on every bucket's usage at every
// instant a scenario is walked through: the engine fed what had happened by then (a live
// session) against the whole log replayed to that instant.
//
// The walk is one second apart, at the end of each second (bins of the series are one second
// for these limits, and a bin holds the peak, which is the usage at the bin's end while a fixed
// window only fills): idle gaps across window ends, a burst that throttles, a caller that goes
// silent while another goes on, and a log that starts mid-window.

#include "engine/throttleengine.h"
#include "models/bucketgridmodel.h"
#include "models/snapshotmath.h"
#include "policy/policy.h"

#include <QAbstractItemModelTester>
#include <QTest>

#include <memory>

using namespace ts;

namespace {

// 2026-02-18T22:44:00Z, a minute boundary.
constexpr qint64 kBase = 1771454640000;

RequestEvent fabric(qint64 tsMs, const QString &identity, int status)
{
    RequestEvent e;
    e.service = QStringLiteral("fabric");
    e.identity = identity;
    e.url = QStringLiteral("https://api.fabric.microsoft.com/v1/workspaces");
    e.method = QStringLiteral("GET");
    e.tsMs = tsMs;
    e.status = status;
    if (status == 429)
        e.errorCode = QStringLiteral("RequestBlocked");
    return e;
}

// alpha: 10/s from 5 s to 21 s (160 of 200), silent, then 10/s from 130 s to 160 s (300: the
// last 100 refused), then silent while bravo goes on; bravo: one every 2 s from 1 s to 240 s.
std::vector<RequestEvent> scenario()
{
    std::vector<RequestEvent> events;
    for (qint64 ms = 1000; ms <= 240000; ms += 2000)
        events.push_back(fabric(kBase + ms, QStringLiteral("bravo"), 200));
    for (qint64 ms = 5000; ms < 21000; ms += 100)
        events.push_back(fabric(kBase + ms, QStringLiteral("alpha"), 200));
    int sent = 0;
    for (qint64 ms = 130000; ms < 160000; ms += 100)
        events.push_back(fabric(kBase + ms, QStringLiteral("alpha"), ++sent > 200 ? 429 : 200));
    std::stable_sort(events.begin(), events.end(),
                     [](const RequestEvent &a, const RequestEvent &b) { return a.tsMs < b.tsMs; });
    return events;
}

PolicySet fabricOnly()
{
    PolicySet set;
    set.add(*PolicySet::builtinPolicy(QStringLiteral("fabric")));
    return set;
}

double gridUsage(const models::BucketGridModel &grid, int scopeIndex)
{
    for (int row = 0; row < grid.rowCount(); ++row) {
        for (int column = 1; column < grid.columnCount(); ++column) {
            if (grid.scopeIndexAt(row, column) == scopeIndex)
                return grid.index(row, column).data(models::BucketGridModel::UsageRole).toDouble();
        }
    }
    return -1;
}

} // namespace

class TestOneTruth : public QObject
{
    Q_OBJECT

private slots:
    void everyViewAgreesAtEveryInstant();
};

void TestOneTruth::everyViewAgreesAtEveryInstant()
{
    const std::vector<RequestEvent> events = scenario();
    ThrottleEngine whole(fabricOnly());
    whole.addBatch(std::span<const RequestEvent>(events.data(), events.size()));
    auto final = std::make_shared<DashboardSnapshot>();
    whole.fillSnapshot(final.get());
    QCOMPARE(final->report.scopes.size(), 2);

    models::BucketGridModel replayGrid;
    QAbstractItemModelTester replayTester(&replayGrid);
    replayGrid.setSnapshot(final);
    models::BucketGridModel liveGrid;
    QAbstractItemModelTester liveTester(&liveGrid);

    ThrottleEngine live(fabricOnly());
    size_t fed = 0;
    int walked = 0;
    int throttledInstants = 0;
    for (qint64 t = kBase + 1999; t <= *final->report.lastMs; t += 1000) {
        while (fed < events.size() && events[fed].tsMs <= t)
            live.add(events[fed++]);
        auto now = std::make_shared<DashboardSnapshot>();
        live.fillSnapshot(now.get(), t);
        liveGrid.setSnapshot(now);
        replayGrid.setInstant(t);
        for (int i = 0; i < now->report.scopes.size(); ++i) {
            const ScopeSummary &scope = now->report.scopes.at(i);
            QCOMPARE(final->report.scopes.at(i).key, scope.key);
            const double report = scope.currentUsage;
            const QString where = QStringLiteral("%1 at +%2 ms").arg(scope.key).arg(t - kBase);
            // The Bucket chart plots this step series.
            QVERIFY2(models::usageAt(final->series[size_t(i)], t) == report,
                     qPrintable(where + QStringLiteral(": chart %1, report %2")
                                            .arg(models::usageAt(final->series[size_t(i)], t))
                                            .arg(report)));
            QCOMPARE(models::displayedUsage(*final, i, t), report);
            QCOMPARE(models::displayedUsage(*now, i, std::nullopt), report);
            QVERIFY2(gridUsage(replayGrid, i) == report, qPrintable(where));
            QVERIFY2(gridUsage(liveGrid, i) == report, qPrintable(where));
            throttledInstants += report >= scope.capacity ? 1 : 0;
        }
        ++walked;
    }
    QVERIFY(walked > 230);
    QVERIFY(throttledInstants > 10); // the walk went through the exhausted window too
}

QTEST_GUILESS_MAIN(TestOneTruth)
#include "tst_onetruth.moc"
