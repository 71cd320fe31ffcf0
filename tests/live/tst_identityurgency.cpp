// The Overview's identity model (models::IdentityUrgencyModel) on the demo scenarios, through
// the real pipeline (simulator -> Analysis -> snapshot): the OneNote death spiral's identity
// ranks first, is shown at or above its limit as the limiter counts it, and has a running "safe
// to send in" countdown with its reason, live (the end of the data) and in replay (an instant
// of the past, from the series alone). Also: the snapshot math of the safe send, the bucket's
// usage as the limiter counts it against its accepted layer, and the model's update contract
// (QAbstractItemModelTester, no reset while the identities stay the same), and the pace advice
// column.
#include "engine/analysis.h"
#include "live/simulator.h"
#include "models/bucketgridmodel.h"
#include "models/identityurgencymodel.h"
#include "models/snapshotmath.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

using namespace ts;
using namespace ts::models;
using Urgency = IdentityUrgencyModel::Urgency;

namespace {

constexpr qint64 kMinute = 60 * 1000;

// The scenario run until `minutes` into it, through one Analysis as the dashboard does.
std::shared_ptr<const DashboardSnapshot> runUntil(const QString &scenario, qint64 minutes)
{
    live::SimulationOptions options;
    options.scenario = scenario;
    options.seed = 1; // the dashboard's demo
    QString error;
    auto simulation = live::Simulation::create(options, &error);
    if (!simulation)
        qFatal("%s", qPrintable(error));
    Analysis analysis;
    const qint64 until = simulation->startMs() + minutes * kMinute;
    for (qint64 t = simulation->startMs(); t < until;) {
        t = std::min(until, t + kMinute);
        QList<RequestEvent> batch;
        simulation->advanceTo(t, &batch);
        analysis.onEvents(std::vector<RequestEvent>(batch.begin(), batch.end()));
    }
    return std::make_shared<const DashboardSnapshot>(analysis.snapshot());
}

bool isOneNoteUser(const QString &key)
{
    return key.contains(u'+') && key.endsWith(u"@contoso.com");
}

// The OneNote user the spiral hits hardest at that instant: the most 429s per second, or
// (in replay, where rates are not retained) the highest fill as the limiter counts it.
QString spirallingUser(const IdentityUrgencyModel &model)
{
    QString worst;
    double worstScore = -1;
    for (int row = 0; row < model.rowCount(); ++row) {
        const auto &r = model.rowAt(row);
        if (!isOneNoteUser(r.key))
            continue;
        const double score =
            r.throttlesPerSecond > 0 ? r.throttlesPerSecond * 1e6 + r.fill : r.fill;
        if (score > worstScore) {
            worstScore = score;
            worst = r.key;
        }
    }
    return worst;
}

} // namespace

class TestIdentityUrgency : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void deathSpiralRanksFirst_data()
    {
        QTest::addColumn<QString>("scenario");
        QTest::addColumn<qint64>("minutes");
        QTest::addColumn<bool>("replay"); // look at the instant from a later snapshot
        QTest::addColumn<qint64>("replayMinutes");

        QTest::newRow("death spiral, 12 min")
            << u"onenote-migration"_qs << qint64(12) << false << qint64(0);
        QTest::newRow("death spiral, 25 min")
            << u"onenote-migration"_qs << qint64(25) << false << qint64(0);
        QTest::newRow("demo (OneNote only yet), 20 min")
            << u"demo"_qs << qint64(20) << false << qint64(0);
        QTest::newRow("demo with the Fabric deployment, 50 min")
            << u"demo"_qs << qint64(50) << false << qint64(0);
        QTest::newRow("replay of the spiral at 20 min, seen from 40 min")
            << u"onenote-migration"_qs << qint64(40) << true << qint64(20);
    }

    void deathSpiralRanksFirst()
    {
        QFETCH(QString, scenario);
        QFETCH(qint64, minutes);
        QFETCH(bool, replay);
        QFETCH(qint64, replayMinutes);

        const auto snapshot = runUntil(scenario, minutes);
        QVERIFY(snapshot->report.firstMs && snapshot->report.lastMs);
        IdentityUrgencyModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        if (replay)
            model.setInstant(*snapshot->report.firstMs + replayMinutes * kMinute);
        model.setSnapshot(snapshot);
        QVERIFY(model.rowCount() >= 3);

        const QString spiralling = spirallingUser(model);
        QVERIFY(!spiralling.isEmpty());
        const auto &first = model.rowAt(0);
        QCOMPARE(first.key, spiralling);
        QCOMPARE(first.urgency, Urgency::Blocked);
        // At or above its limit, as the limiter counts it (the accepted layer may be lower).
        QVERIFY2(first.fill >= 1.0, qPrintable(QString::number(first.fill)));
        QVERIFY(first.fill >= first.accepted);
        // A running countdown with its reason (a OneNote 429 carries no Retry-After: a window).
        QVERIFY2(first.safeInMs > 0, qPrintable(first.key));
        QVERIFY(first.safeAtMs);
        QVERIFY(first.safeReason.contains(u"onenote-per-"));
        const QModelIndex safe = model.index(0, IdentityUrgencyModel::SafeSendColumn);
        QVERIFY(safe.data().toString().startsWith(u"in "));
        QCOMPARE(safe.data(IdentityUrgencyModel::SafeInMsRole).toLongLong(), first.safeInMs);
        QCOMPARE(model.index(0, IdentityUrgencyModel::StatusColumn).data().toString(),
                 IdentityUrgencyModel::urgencyName(Urgency::Blocked));
        // The worst scope is the one the row shows, and it is a OneNote limit.
        QVERIFY(first.worstScope >= 0);
        QVERIFY(snapshot->report.scopes.at(first.worstScope).limit.startsWith(u"onenote-"));
        if (!replay && minutes <= 30) {
            // Mid-spiral: 429s per second now, by errorCode (OneNote's 20166).
            QVERIFY(first.throttlesPerSecond > 0);
            QVERIFY(first.throttleRates.contains(u"20166"_qs));
        } else if (!replay) {
            // After the fix (32 min) the breaker holds the retries: no 429s now, but the hour
            // window still counts the spiral's charges, so the user is still blocked.
            QVERIFY(first.throttlesPerSecond >= 0);
            QVERIFY(first.safeReason.contains(u"onenote-per-hour"));
        } else {
            // Rates are kept for the last minutes of data only: unknown, said so, never 0.
            QCOMPARE(first.throttlesPerSecond, -1.0);
            QCOMPARE(model.index(0, IdentityUrgencyModel::ThrottleRateColumn).data().toString(),
                     u"–"_qs);
        }
        // Every row is in urgency order.
        for (int row = 1; row < model.rowCount(); ++row)
            QVERIFY(int(model.rowAt(row - 1).urgency) <= int(model.rowAt(row).urgency));
        // The sparkline ends on the fill now.
        QCOMPARE(int(first.sparkline.size()), IdentityUrgencyModel::kSparklineSamples);
        QCOMPARE(first.sparkline.back(), first.fill);
        // The pace its limits allow (issue 33.2): OneNote's 400 an hour binds a delegated user.
        const QModelIndex pace = model.index(0, IdentityUrgencyModel::PaceColumn);
        QCOMPARE(pace.data().toString(), u"max 6.6/min · onenote-per-hour"_qs);
        QVERIFY(pace.data(Qt::ToolTipRole)
                    .toString()
                    .contains(u"Pace: max 6.6/min, onenote-per-hour limit binds"_qs));
        QCOMPARE(pace.data(IdentityUrgencyModel::PaceRole).toDouble(), 400.0 / 3600);
    }

    void usageIsWhatTheLimiterCounts()
    {
        // Mid-spiral, the per-minute bucket of the spiralling user: the limiter counts every
        // charged 429 (Graph charges them), so its usage is at or over the capacity, while the
        // accepted layer stays at or under it. The grid shows the limiter's count.
        const auto snapshot = runUntil(u"onenote-migration"_qs, 20);
        IdentityUrgencyModel identities;
        identities.setSnapshot(snapshot);
        const QString alice = identities.rowAt(0).key;
        int minute = -1;
        for (int i = 0; i < snapshot->report.scopes.size(); ++i) {
            const ScopeSummary &s = snapshot->report.scopes.at(i);
            if (s.key == alice && s.limit == u"onenote-per-minute")
                minute = i;
        }
        QVERIFY(minute >= 0);
        const ScopeSummary &scope = snapshot->report.scopes.at(minute);
        QVERIFY(scope.observedThrottled > 0);
        QVERIFY(scope.peakFill >= 1.0);
        QVERIFY(scope.acceptedPeakFill <= 1.0 + 1e-9);
        QVERIFY(scope.peakUsage > scope.acceptedPeakUsage);
        QVERIFY(scope.currentUsage >= scope.currentAcceptedUsage);
        const ScopeSeries &series = snapshot->series[size_t(minute)];
        QCOMPARE(series.acceptedUsage.size(), series.usageT.size());
        QCOMPARE(series.blockedUntil.size(), series.usageT.size());
        // Every observed 429 of this bucket sits at or over the limit by the limiter's count.
        qsizetype below = 0;
        for (qint64 t : series.observedThrottleT)
            below += usageAt(series, t) + 1 > scope.capacity ? 0 : 1;
        QCOMPARE(below, qsizetype(0));

        BucketGridModel grid;
        grid.setSnapshot(snapshot);
        bool found = false;
        for (int row = 0; row < grid.rowCount(); ++row) {
            for (int column = 1; column < grid.columnCount(); ++column) {
                if (grid.scopeIndexAt(row, column) == minute) {
                    QCOMPARE(grid.fillAt(row, column), scope.currentFill);
                    found = true;
                }
            }
        }
        QVERIFY(found);
    }

    void safeSendMath_data()
    {
        QTest::addColumn<qint64>("blockedUntil"); // of the bin holding t (0: room)
        QTest::addColumn<qint64>("retryEnd");     // of a Retry-After interval holding t (0: none)
        QTest::addColumn<qint64>("expectedAt");   // 0: safe now
        QTest::addColumn<bool>("expectedRetryAfter");
        QTest::addColumn<QString>("expectedText");

        const qint64 t = 100'000;
        QTest::newRow("room") << qint64(0) << qint64(0) << qint64(0) << false
                              << u"safe to send now"_qs;
        QTest::newRow("window frees up") << t + 42'000 << qint64(0) << t + 42'000 << false
                                         << u"safe to send in 42 s: per-minute frees up"_qs;
        QTest::newRow("Retry-After is later")
            << t + 5'000 << t + 65'500 << t + 65'500 << true
            << u"safe to send in 1 min 6 s: Retry-After (per-minute)"_qs;
        QTest::newRow("window is later") << t + 90'000 << t + 30'000 << t + 90'000 << false
                                         << u"safe to send in 1 min 30 s: per-minute frees up"_qs;
    }

    void safeSendMath()
    {
        QFETCH(qint64, blockedUntil);
        QFETCH(qint64, retryEnd);
        QFETCH(qint64, expectedAt);
        QFETCH(bool, expectedRetryAfter);
        QFETCH(QString, expectedText);
        const qint64 t = 100'000;
        DashboardSnapshot snap;
        ScopeSummary scope;
        scope.key = u"k"_qs;
        scope.limit = u"per-minute"_qs;
        scope.policy = u"p"_qs;
        scope.capacity = 10;
        snap.report.scopes = {scope};
        ScopeSeries series;
        series.usageT = {t - 10'000, t - 500};
        series.usage = {3, 11};
        series.acceptedUsage = {3, 10};
        series.blockedUntil = {0, blockedUntil};
        if (retryEnd)
            series.retryAfterIntervals = {{t - 1'000, retryEnd}};
        snap.series = {series};
        snap.report.lastMs = t + 60'000;

        const SafeSend safe = models::safeSend(snap, 0, t);
        QCOMPARE(safe.atMs.value_or(0), expectedAt);
        QCOMPARE(safe.retryAfter, expectedRetryAfter);
        QCOMPARE(safeSendText(safe, t), expectedText);
        QCOMPARE(acceptedUsageAt(series, t), 10.0);
        QCOMPARE(usageAt(series, t), 11.0);
        // Before the blocked bin: room, whatever comes later.
        QVERIFY(!models::safeSend(snap, 0, t - 5'000).atMs);
    }

    void valuesUpdateWithoutReset()
    {
        // The same identities in a later snapshot: values change, the model is not reset (the
        // view keeps its selection and scroll position).
        IdentityUrgencyModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        const auto early = runUntil(u"onenote-migration"_qs, 6);
        model.setSnapshot(early);
        const int rows = model.rowCount();
        QVERIFY(rows >= 3);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy layouts(&model, &QAbstractItemModel::layoutChanged);
        model.setSnapshot(early);
        QCOMPARE(resets.count(), 0);
        QCOMPARE(changes.count(), 1);
        QCOMPARE(layouts.count(), 0);
        // A replay instant at the start: nobody is blocked yet, same identities, no reset.
        model.setInstant(*early->report.firstMs + 30'000);
        QCOMPARE(resets.count(), 0);
        for (int row = 0; row < model.rowCount(); ++row)
            QVERIFY(model.rowAt(row).urgency != Urgency::Blocked);
        QCOMPARE(model.rowCount(), rows);
    }
};

QTEST_GUILESS_MAIN(TestIdentityUrgency)
#include "tst_identityurgency.moc"
