// The dashboard's pages against a known snapshot: each view draws the series it should (graph
// point counts and values), filters and sorting work, replay at an instant shows the expected
// fills, clicks lead where they should (bar -> events, alert -> time), exports write files.
#include "alertspage.h"
#include "breakerspage.h"
#include "bucketpage.h"
#include "core/timeparse.h"
#include "dashboard.h"
#include "eventspage.h"
#include "ingest/redaction.h"
#include "ingestpage.h"
#include "models/alertsmodel.h"
#include "models/breakercounts.h"
#include "models/bucketgridmodel.h"
#include "models/eventsmodel.h"
#include "models/identityurgencymodel.h"
#include "models/ingestmodels.h"
#include "models/snapshotmath.h"
#include "models/throttletablemodel.h"
#include "models/timerange.h"
#include "overviewpage.h"
#include "plotstyle.h"
#include "policyeditor.h"
#include "qcp.h"
#include "replaybar.h"
#include "snapshotfixture.h"
#include "throttlespage.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QDateTime>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace ts;

namespace {
QVector<double> keysOf(QCPGraph *graph)
{
    QVector<double> keys;
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
        keys.append(it->key);
    return keys;
}
QVector<double> valuesOf(QCPGraph *graph)
{
    QVector<double> values;
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
        values.append(it->value);
    return values;
}
double sec(qint64 seconds)
{
    return static_cast<double>(fixture::at(seconds)) / 1000.0;
}

struct Shown
{
    widgets::Dashboard dashboard;
    Shown()
    {
        dashboard.resize(1200, 800);
        dashboard.show();
        dashboard.applySnapshot(fixture::smallSnapshot());
        dashboard.flushPendingSnapshot();
    }
};
} // namespace

class TestDashboard : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void overviewHeadline()
    {
        Shown shown;
        widgets::OverviewPage *overview = shown.dashboard.overviewPage();
        QCOMPARE(overview->headline(QStringLiteral("events")), QLocale().toString(1234));
        QCOMPARE(overview->headline(QStringLiteral("throttles")), QStringLiteral("9"));
        QCOMPARE(overview->headline(QStringLiteral("worst")),
                 QStringLiteral("100 % note-bridge+bob@contoso.com"));
        QCOMPARE(overview->headline(QStringLiteral("breakers")), QStringLiteral("none open"));
        QCOMPARE(overview->headline(QStringLiteral("alerts")), QStringLiteral("2 (1 critical)"));
    }

    // Issue 30.6: soft-open breakers are counted apart from open ones, in the card and its
    // tooltip; and where a bucket's key is not the caller (ARM: the subscription), the row shows
    // the breakers of the callers its requests came from, the ones the card counts.
    void softOpenCountedApart()
    {
        auto snap = std::make_shared<DashboardSnapshot>(*fixture::smallSnapshot());
        const auto breaker = [](const QString &scope, const QString &state) {
            BreakerSummary b;
            b.scope = scope;
            b.source = QStringLiteral("reconstructed");
            b.finalState = state;
            return b;
        };
        const QString subscription = QStringLiteral("9f1c2d3e-0000-4000-8000-00000000a1b2");
        ScopeSummary arm = fixture::scope(subscription, QStringLiteral("arm"),
                                          QStringLiteral("subscription-reads"), 250, 0);
        arm.callers = {QStringLiteral("deployer@contoso.com")};
        arm.requests = 40;
        snap->report.scopes.append(arm);
        snap->series.emplace_back();
        snap->report.breakers = {
            breaker(QStringLiteral("user:alice@contoso.com"), QStringLiteral("open")),
            breaker(QStringLiteral("app"), QStringLiteral("open")),
            breaker(QStringLiteral("user:deployer@contoso.com"), QStringLiteral("soft-open"))};
        widgets::Dashboard dashboard;
        dashboard.resize(1280, 800);
        dashboard.show();
        dashboard.applySnapshot(snap);
        dashboard.flushPendingSnapshot();
        widgets::OverviewPage *overview = dashboard.overviewPage();
        QCOMPARE(overview->headline(QStringLiteral("breakers")),
                 QStringLiteral("2 open, 1 soft-open"));
        QCOMPARE(models::breakerCountsText(models::countBreakers(snap->report, std::nullopt)),
                 QStringLiteral("2 open, 1 soft-open"));
        // The subscription's row: its caller's soft-open breaker, not "closed".
        const models::IdentityUrgencyModel *rows = overview->identityModel();
        bool found = false;
        for (int row = 0; row < rows->rowCount(); ++row) {
            if (rows->rowAt(row).key != subscription)
                continue;
            found = true;
            QCOMPARE(rows->rowAt(row).breakerState, QStringLiteral("soft-open"));
            QVERIFY(rows->rowAt(row).breakerScope.contains(QStringLiteral("deployer@contoso.com")));
        }
        QVERIFY(found);
    }

    void fitsALaptopScreen()
    {
        // Keys as long as real ones (an app id and a user principal) must not make any page wider
        // than a 1024 px screen: long headline and breaker texts are elided or wrapped.
        auto snapshot = std::make_shared<DashboardSnapshot>(*fixture::smallSnapshot());
        const QString longKey = QStringLiteral(
            "c919b156-ac59-32c7-742e-2fa6aa0a3bcc+a.very.long.user.name@contoso.com");
        for (ScopeSummary &scope : snapshot->report.scopes)
            scope.key = longKey;
        for (BreakerSummary &breaker : snapshot->report.breakers) {
            breaker.scope = QStringLiteral("user:") + longKey;
            breaker.trips = 12;
            breaker.blockedRequests = 123456;
        }
        widgets::Dashboard dashboard;
        dashboard.resize(1024, 700);
        dashboard.show();
        dashboard.applySnapshot(snapshot);
        dashboard.flushPendingSnapshot();
        for (const QString &page : widgets::Dashboard::pageNames()) {
            QVERIFY(dashboard.showPage(page));
            dashboard.resize(1024, 700);
            QCoreApplication::processEvents();
            // A top-level widget is held at its layout's minimum size: the page would widen it.
            QVERIFY2(
                dashboard.width() <= 1024,
                qPrintable(QStringLiteral("%1 page needs %2 px").arg(page).arg(dashboard.width())));
        }
    }

    void gridFilterAndSort()
    {
        Shown shown;
        widgets::OverviewPage *overview = shown.dashboard.overviewPage();
        QAbstractItemModelTester tester(overview->gridProxy(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSortFilterProxyModel *proxy = overview->gridProxy();
        QCOMPARE(proxy->rowCount(), 3);
        overview->setIdentityFilter(QStringLiteral("ALICE"));
        QCOMPARE(proxy->rowCount(), 1);
        QCOMPARE(proxy->index(0, 0).data().toString(),
                 QStringLiteral("note-bridge+alice@contoso.com"));
        overview->setIdentityFilter(QString());
        QCOMPARE(proxy->rowCount(), 3);
        // Sorting by the per-app column, fullest first: bob (100 %), alice (99.9 %), migrator.
        proxy->sort(2, Qt::DescendingOrder);
        QCOMPARE(proxy->index(0, 0).data().toString(),
                 QStringLiteral("note-bridge+bob@contoso.com"));
        QCOMPARE(proxy->index(2, 0).data().toString(), QStringLiteral("sp-migrator"));
    }

    void gridClickOpensBucket()
    {
        Shown shown;
        widgets::OverviewPage *overview = shown.dashboard.overviewPage();
        overview->showGrid(true); // the second view of the Overview
        QSortFilterProxyModel *proxy = overview->gridProxy();
        proxy->sort(0, Qt::AscendingOrder); // alice, bob, sp-migrator
        const QModelIndex migratorPlatform = proxy->index(2, 1);
        QCOMPARE(migratorPlatform.data(models::BucketGridModel::ScopeIndexRole).toInt(), 0);
        QTableView *view = overview->gridView();
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {},
                          view->visualRect(migratorPlatform).center());
        QCOMPARE(shown.dashboard.currentPageName(), QStringLiteral("bucket"));
        QCOMPARE(shown.dashboard.bucketPage()->scopeIndex(), 0);
        // A click on an empty cell (bob has no platform bucket) goes nowhere.
        shown.dashboard.showPage(QStringLiteral("overview"));
        QTest::mouseClick(view->viewport(), Qt::LeftButton, {},
                          view->visualRect(proxy->index(1, 1)).center());
        QCOMPARE(shown.dashboard.currentPageName(), QStringLiteral("overview"));
    }

    // Issue 30.7: a fill over 100 % says what it counts, in the Overview's cell tooltip, the
    // bucket grid's and the Bucket page's header: a per-hour limit that a retry storm's counted
    // 429s took to 6,066 %.
    void fillOverCapacitySaysWhatItCounts()
    {
        auto snap = std::make_shared<DashboardSnapshot>(*fixture::smallSnapshot());
        ScopeSummary &scope = snap->report.scopes[1]; // sp-migrator · graph/per-app
        scope.capacity = 400;
        scope.windowSeconds = 3600;
        scope.currentUsage = 24264;
        scope.currentFill = 60.66;
        scope.currentAcceptedUsage = 380;
        scope.peakUsage = 24264;
        scope.peakFill = 60.66;
        scope.acceptedPeakUsage = 400;
        scope.acceptedPeakFill = 1.0;
        snap->series[1].usage = {10, 24264};
        snap->series[1].reconstructedPct = {0.025, 60.66};
        const QString expected =
            QStringLiteral("24,264 counted against 400 per hour; refused requests count too");
        widgets::Dashboard dashboard;
        dashboard.resize(1280, 800);
        dashboard.show();
        dashboard.applySnapshot(snap);
        dashboard.flushPendingSnapshot();
        const models::IdentityUrgencyModel *rows = dashboard.overviewPage()->identityModel();
        QAbstractItemModelTester tester(const_cast<models::IdentityUrgencyModel *>(rows),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        bool explained = false;
        for (int row = 0; row < rows->rowCount(); ++row) {
            if (rows->rowAt(row).key != u"sp-migrator")
                continue;
            const QString tip = rows->index(row, models::IdentityUrgencyModel::FillColumn)
                                    .data(Qt::ToolTipRole)
                                    .toString();
            QVERIFY2(tip.contains(expected), qPrintable(tip));
            explained = true;
        }
        QVERIFY(explained);
        // A fill under 100 % gets no such sentence.
        for (int row = 0; row < rows->rowCount(); ++row) {
            if (rows->rowAt(row).key == u"note-bridge+alice@contoso.com")
                QVERIFY(!rows->index(row, models::IdentityUrgencyModel::FillColumn)
                             .data(Qt::ToolTipRole)
                             .toString()
                             .contains(QStringLiteral("counted against")));
        }
        dashboard.showBucket(1);
        const QString header = dashboard.bucketPage()->limitsText();
        QVERIFY2(header.contains(expected), qPrintable(header));
    }

    // Issue 30.5: the limit % pane follows the bucket chosen, not the key's fullest limit: a
    // per-app bucket near empty while another limit of the key reads 3,500 % shows its own fill.
    void bucketPctPaneFollowsTheBucket()
    {
        widgets::Dashboard dashboard;
        dashboard.resize(1200, 800);
        dashboard.show();
        auto snap = std::make_shared<DashboardSnapshot>(*fixture::smallSnapshot());
        snap->series[1].reconstructedPct = {35.0, 35.0}; // the key's worst limit: 3,500 %
        dashboard.applySnapshot(snap);
        dashboard.flushPendingSnapshot();
        dashboard.showBucket(1); // sp-migrator's graph per-app bucket: 10, then 500 of 1000
        widgets::BucketPage *page = dashboard.bucketPage();
        QCOMPARE(keysOf(page->reconstructedPctGraph()), keysOf(page->usageGraph()));
        QCOMPARE(valuesOf(page->reconstructedPctGraph()), QVector<double>({1, 1, 50, 50}));
        QVERIFY(page->plot()->axisRects().at(1)->axis(QCPAxis::atLeft)->range().upper < 200);
    }

    void bucketSeries()
    {
        Shown shown;
        shown.dashboard.showBucket(0);
        widgets::BucketPage *page = shown.dashboard.bucketPage();
        // usage: 5 samples, each step spelled out (drawn as a line: the step ends where the next
        // sample begins) + the last step extended to the end of the data (600 s)
        QCOMPARE(keysOf(page->usageGraph()),
                 QVector<double>({sec(0), sec(60), sec(60), sec(120), sec(120), sec(180), sec(180),
                                  sec(240), sec(240), sec(600)}));
        QCOMPARE(valuesOf(page->usageGraph()),
                 QVector<double>({0, 0, 100, 100, 200, 200, 150, 150, 170, 170}));
        QCOMPARE(valuesOf(page->capacityGraph()), QVector<double>({200, 200}));
        QCOMPARE(valuesOf(page->effectiveLimitGraph()), QVector<double>({180, 180}));
        // 429 markers sit on the usage curve at their instant
        QCOMPARE(keysOf(page->observedThrottleGraph()), QVector<double>({sec(125), sec(130)}));
        QCOMPARE(valuesOf(page->observedThrottleGraph()), QVector<double>({200, 200}));
        QCOMPARE(keysOf(page->predictedThrottleGraph()), QVector<double>({sec(121)}));
        // Retry-After shading: up at 120 s, down at 150 s
        QCOMPARE(keysOf(page->retryAfterGraph()), QVector<double>({sec(120), sec(150)}));
        QCOMPARE(valuesOf(page->retryAfterGraph()), QVector<double>({1, 0}));
        QCOMPARE(valuesOf(page->observedPctGraph()), QVector<double>({90, 100}));
        QCOMPARE(page->reconstructedPctGraph()->dataCount(), 10);
        QVERIFY2(page->limitsText().contains(QStringLiteral("Documented: 200 per 60 s")),
                 qPrintable(page->limitsText()));
        QVERIFY2(page->limitsText().contains(QStringLiteral("effective")),
                 qPrintable(page->limitsText()));
        QVERIFY2(page->limitsText().contains(QStringLiteral("90 % of documented")),
                 qPrintable(page->limitsText()));
        QCOMPARE(page->plot()->interactions(),
                 QCP::iRangeDrag | QCP::iRangeZoom | QCP::iSelectPlottables);
        // The legend has a row of its own above the charts and never covers the data.
        page->plot()->replot(QCustomPlot::rpImmediateRefresh);
        QCOMPARE(page->plot()->legend->layout(), page->plot()->plotLayout());
        for (QCPAxisRect *rect : page->plot()->axisRects())
            QVERIFY(!page->plot()->legend->outerRect().intersects(rect->rect()));

        // Another bucket: its own series.
        shown.dashboard.showBucket(4);
        QCOMPARE(valuesOf(page->usageGraph()), QVector<double>({1000, 1000}));
        QCOMPARE(page->observedThrottleGraph()->dataCount(), 0);
        QVERIFY(page->limitsText().contains(QStringLiteral("unknown")));
    }

    // The shared time range drives every plot's x axis, and zooming one plot moves it.
    void sharedTimeRange()
    {
        Shown shown;
        shown.dashboard.showBucket(0);
        models::TimeRange *range = shown.dashboard.timeRange();
        range->setRange(fixture::at(100), fixture::at(200));
        QCPAxis *bucketX = shown.dashboard.bucketPage()->plot()->xAxis;
        QCOMPARE(bucketX->range().lower, sec(100));
        QCOMPARE(bucketX->range().upper, sec(200));
        shown.dashboard.showPage(QStringLiteral("throttles"));
        QCPAxis *throttlesX = shown.dashboard.throttlesPage()->plot()->xAxis;
        QCOMPARE(throttlesX->range().lower, sec(100));
        // Zoom on the throttles plot: the range follows, the bucket plot too when shown.
        throttlesX->setRange(sec(300), sec(400));
        QCOMPARE(range->startMs(), fixture::at(300));
        QCOMPARE(range->endMs(), fixture::at(400));
        QVERIFY(!range->isFollowing());
        shown.dashboard.showPage(QStringLiteral("bucket"));
        QCOMPARE(bucketX->range().lower, sec(300));
    }

    void throttleBars()
    {
        Shown shown;
        shown.dashboard.showPage(QStringLiteral("throttles"));
        widgets::ThrottlesPage *page = shown.dashboard.throttlesPage();
        QCOMPARE(page->barCodes(), QStringList({QStringLiteral("RequestBlocked"),
                                                QStringLiteral("CapacityLimitExceeded")}));
        const QList<QCPBars *> bars = page->bars();
        QCOMPARE(bars.size(), 2);
        QCOMPARE(bars.at(0)->name(), QStringLiteral("RequestBlocked (8)"));
        QCOMPARE(bars.at(1)->name(), QStringLiteral("CapacityLimitExceeded (1)"));
        QCOMPARE(bars.at(1)->barBelow(), bars.at(0)); // stacked
        QCOMPARE(bars.at(0)->data()->size(), 2);
        QCOMPARE(bars.at(0)->data()->at(0)->value, 5.0);
        QCOMPARE(bars.at(0)->data()->at(1)->value, 3.0);
        QCOMPARE(bars.at(0)->data()->at(0)->key, sec(150)); // centred in [120 s, 180 s)
        QCOMPARE(bars.at(1)->data()->size(), 1);
        QCOMPARE(bars.at(1)->data()->at(0)->value, 1.0);
        QVERIFY(page->splitText().contains(QStringLiteral("Application 6")));
        QVERIFY(page->splitText().contains(QStringLiteral("User 3")));
        QCOMPARE(page->throttleTable()->rowCount(), 2);
    }

    // A click on a bar shows the events behind it: that bin, that code.
    void barClickShowsEvents()
    {
        Shown shown;
        std::vector<RequestEvent> events;
        for (int i = 0; i < 300; ++i) {
            RequestEvent event;
            event.tsMs = fixture::at(i);
            event.status = i % 4 == 0 ? 429 : 200;
            event.errorCode = i % 4 == 0 ? QStringLiteral("RequestBlocked") : QString();
            events.push_back(event);
        }
        shown.dashboard.eventsPage()->setEventSource(
            std::make_shared<models::MemoryEventSource>(std::move(events)));
        shown.dashboard.showPage(QStringLiteral("throttles"));
        QSignalSpy requested(shown.dashboard.throttlesPage(),
                             &widgets::ThrottlesPage::eventsRequested);
        shown.dashboard.throttlesPage()->requestEventsForBar(QStringLiteral("RequestBlocked"), 0);
        QCOMPARE(requested.count(), 1);
        QCOMPARE(requested.first().at(0).toLongLong(), fixture::at(120));
        QCOMPARE(requested.first().at(1).toLongLong(), fixture::at(180));
        QCOMPARE(shown.dashboard.currentPageName(), QStringLiteral("events"));
        models::EventsModel *model = shown.dashboard.eventsPage()->model();
        QCOMPARE(model->query().errorCode, QStringLiteral("RequestBlocked"));
        QCOMPARE(model->matchingCount(), qint64(15)); // every 4th second of [120, 180)
        for (int row = 0; row < model->rowCount(); ++row) {
            QVERIFY(model->eventAt(row).tsMs >= fixture::at(120));
            QVERIFY(model->eventAt(row).tsMs < fixture::at(180));
        }
    }

    // Issue 30.9: a click in the chart, at any zoom, picks the nearest bin with data (bars far
    // narrower than a pixel included) and, in its stack, the code at the click's height.
    void clickPicksTheNearestBinAtAnyZoom()
    {
        widgets::Dashboard dashboard;
        dashboard.resize(1200, 800);
        dashboard.show();
        auto snap = std::make_shared<DashboardSnapshot>(*fixture::smallSnapshot());
        // A day of 1 s bins with throttles in three of them: each bar a tiny fraction of a pixel.
        snap->binMs = 1000;
        snap->throttleBins.clear();
        for (const qint64 second : {qint64(3600), qint64(40'000), qint64(80'000)}) {
            ThrottleBin bin;
            bin.startMs = fixture::at(second);
            bin.byErrorCode = {{QStringLiteral("RequestBlocked"), 5},
                               {QStringLiteral("CapacityLimitExceeded"), 2}};
            snap->throttleBins.push_back(bin);
        }
        snap->report.firstMs = fixture::at(0);
        snap->report.lastMs = fixture::at(86'400);
        dashboard.applySnapshot(snap);
        dashboard.flushPendingSnapshot();
        dashboard.showPage(QStringLiteral("throttles"));
        widgets::ThrottlesPage *page = dashboard.throttlesPage();
        dashboard.timeRange()->showAll();
        QCustomPlot *plot = page->plot();
        plot->replot(QCustomPlot::rpImmediateRefresh);
        QSignalSpy requested(page, &widgets::ThrottlesPage::eventsRequested);
        // A few pixels right of the middle bin, low in the stack: RequestBlocked (the bottom).
        const double x = plot->xAxis->coordToPixel(widgets::plotKey(fixture::at(40'000))) + 3;
        const double low = plot->yAxis->coordToPixel(1);
        QTest::mouseClick(plot, Qt::LeftButton, {}, QPoint(int(x), int(low)));
        QCOMPARE(requested.count(), 1);
        QCOMPARE(requested.first().at(0).toLongLong(), fixture::at(40'000));
        QCOMPARE(requested.first().at(1).toLongLong(), fixture::at(40'001));
        QCOMPARE(requested.first().at(2).toString(), QStringLiteral("RequestBlocked"));
        // Higher up the same stack (5 < y <= 7): the code on top of it.
        const double high = plot->yAxis->coordToPixel(6.5);
        QVERIFY(page->clickAt(QPointF(x, high)));
        QCOMPARE(requested.last().at(2).toString(), QStringLiteral("CapacityLimitExceeded"));
        // Far from any bin, nearer the last one: that one.
        const double late = plot->xAxis->coordToPixel(widgets::plotKey(fixture::at(70'000)));
        QVERIFY(page->clickAt(QPointF(late, low)));
        QCOMPARE(requested.last().at(0).toLongLong(), fixture::at(80'000));
    }

    void breakerBandsFromTransitions()
    {
        Shown shown;
        shown.dashboard.showPage(QStringLiteral("breakers"));
        widgets::BreakersPage *page = shown.dashboard.breakersPage();
        QCOMPARE(page->rowLabels(), QStringList({QStringLiteral("app (logged)"),
                                                 QStringLiteral("app (reconstructed)")}));
        QStringList logged;
        for (const widgets::BreakerBand &band : page->bands()) {
            if (band.row == 0)
                logged.append(QStringLiteral("%1@%2-%3")
                                  .arg(band.state)
                                  .arg((band.startMs - fixture::t0()) / 1000)
                                  .arg((band.endMs - fixture::t0()) / 1000));
        }
        QCOMPARE(
            logged,
            QStringList({QStringLiteral("closed@0-125"), QStringLiteral("open@125-185"),
                         QStringLiteral("half-open@185-200"), QStringLiteral("closed@200-600")}));
        QCOMPARE(page->plot()->itemCount(), int(page->bands().size()) + 1); // + replay cursor
        QCOMPARE(page->tableModel()->rowCount(), 5);
    }

    // Issue 19.4: the Breakers page says which reference breaker was replayed, and its form
    // (preset combo, parameters, Apply) asks for another; the page follows the snapshot.
    void breakerModelForm_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<double>("failurePercent");
        QTest::addColumn<int>("probes");

        QTest::newRow("Resilience4j preset") << QStringLiteral("resilience4j") << 50.0 << 10;
        QTest::newRow("back to Polly v8") << QStringLiteral("polly-v8") << 10.0 << 1;
    }

    void breakerModelForm()
    {
        QFETCH(QString, preset);
        QFETCH(double, failurePercent);
        QFETCH(int, probes);

        Shown shown;
        shown.dashboard.showPage(QStringLiteral("breakers"));
        widgets::BreakersPage *page = shown.dashboard.breakersPage();
        QAbstractItemModelTester tester(page->tableModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto *text = page->findChild<QLabel *>(QStringLiteral("breakerModelText"));
        QVERIFY(text);
        QVERIFY2(text->text().contains(QStringLiteral("Polly v8 defaults")),
                 qPrintable(text->text()));
        auto *apply = page->findChild<QPushButton *>(QStringLiteral("breakerApply"));
        QVERIFY(apply);
        QVERIFY(!apply->isEnabled()); // the form shows what is in effect

        // Start from the other preset's values, then pick this one.
        page->selectPreset(preset == u"polly-v8" ? QStringLiteral("resilience4j")
                                                 : QStringLiteral("polly-v8"));
        page->selectPreset(preset);
        auto *combo = page->findChild<QComboBox *>(QStringLiteral("breakerPreset"));
        QCOMPARE(combo->currentData().toString(), preset);
        QCOMPARE(page->formModel(), *BreakerModel::fromPreset(preset));
        QCOMPARE(
            page->findChild<QDoubleSpinBox *>(QStringLiteral("breakerFailurePercent"))->value(),
            failurePercent);
        QCOMPARE(page->findChild<QSpinBox *>(QStringLiteral("breakerProbes"))->value(), probes);
        QCOMPARE(apply->isEnabled(), preset != u"polly-v8");

        // Editing a value makes it custom; Apply asks for exactly the form's values.
        page->findChild<QSpinBox *>(QStringLiteral("breakerMinimumThroughput"))->setValue(20);
        QCOMPARE(combo->currentData().toString(), QStringLiteral("custom"));
        QVERIFY(apply->isEnabled());
        QSignalSpy requested(page, &widgets::BreakersPage::breakerModelChangeRequested);
        apply->click();
        QCOMPARE(requested.size(), 1);
        QString error;
        const auto asked = BreakerModel::fromJsonText(requested.first().first().toString(), &error);
        QVERIFY2(asked, qPrintable(error));
        QCOMPARE(asked->minimumThroughput, 20);
        QCOMPARE(asked->failureRatio, failurePercent / 100.0);

        // The re-run's snapshot carries the new model: the page says so, the form is clean.
        auto snapshot = std::make_shared<DashboardSnapshot>(*fixture::smallSnapshot());
        snapshot->report.breakerModel = *asked;
        shown.dashboard.applySnapshot(snapshot);
        shown.dashboard.flushPendingSnapshot();
        page->refreshIfStale();
        QCOMPARE(page->modelInEffect(), *asked);
        QVERIFY2(text->text().contains(QStringLiteral("Custom")), qPrintable(text->text()));
        QVERIFY(!apply->isEnabled());
    }

    // Issue 35: the picker offers the Node libraries' presets; their options are the library's,
    // pasted as JSON, and Apply asks for exactly them.
    void breakerLibraryPresets_data()
    {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("defaults"); // the options field after picking the preset
        QTest::addColumn<QString>("pasted");
        QTest::addColumn<QString>("described");

        QTest::newRow("cockatiel")
            << u"cockatiel"_qs
            << u"{\"breaker\":\"ConsecutiveBreaker\",\"halfOpenAfter\":10000,\"threshold\":5}"_qs
            << u"{\"breaker\": \"CountBreaker\", \"threshold\": 0.25, \"size\": 40}"_qs
            << u"cockatiel CountBreaker: opens when > 25 % of the last 40 calls fail"_qs;
        QTest::newRow("opossum") << u"opossum"_qs
                                 << u"{\"errorThresholdPercentage\":50,\"resetTimeout\":30000,"
                                    u"\"rollingCountBuckets\":10,"
                                    u"\"rollingCountTimeout\":10000,\"volumeThreshold\":0}"_qs
                                 << u"{\"errorThresholdPercentage\": 30, \"resetTimeout\": 5000}"_qs
                                 << u"opossum: opens when > 30 % of the calls in 10 s"_qs;
    }
    void breakerLibraryPresets()
    {
        QFETCH(QString, preset);
        QFETCH(QString, defaults);
        QFETCH(QString, pasted);
        QFETCH(QString, described);

        Shown shown;
        shown.dashboard.showPage(QStringLiteral("breakers"));
        widgets::BreakersPage *page = shown.dashboard.breakersPage();
        auto *combo = page->findChild<QComboBox *>(QStringLiteral("breakerPreset"));
        QVERIFY(combo->findData(preset) >= 0);
        auto *options = page->findChild<QLineEdit *>(QStringLiteral("breakerLibraryOptions"));
        auto *error = page->findChild<QLabel *>(QStringLiteral("breakerLibraryError"));
        auto *apply = page->findChild<QPushButton *>(QStringLiteral("breakerApply"));
        auto *failurePercent = page->findChild<QDoubleSpinBox *>(u"breakerFailurePercent"_qs);
        QVERIFY(options && error && apply && failurePercent);

        // Picked as the operator does: the combo, then the library's defaults in its field.
        combo->setCurrentIndex(combo->findData(preset));
        Q_EMIT combo->activated(combo->currentIndex());
        QCOMPARE(combo->currentData().toString(), preset);
        QVERIFY(options->isVisible());
        QVERIFY(!failurePercent->isVisible()); // the reference form is not the library's
        QCOMPARE(options->text(), defaults);
        QCOMPARE(page->formModel(), *BreakerModel::fromPreset(preset));
        QVERIFY(apply->isEnabled());

        // A mistake is said, and nothing can be applied.
        options->selectAll();
        QTest::keyClicks(options, u"{\"resetTimeout\": 5000"_qs); // cut short
        QVERIFY(error->isVisible());
        QVERIFY2(error->text().contains(u"must be a JSON object"), qPrintable(error->text()));
        QVERIFY(!apply->isEnabled());

        // Options pasted from the client's code.
        options->selectAll();
        QTest::keyClicks(options, pasted);
        QVERIFY2(!error->isVisible(), qPrintable(error->text()));
        QVERIFY(apply->isEnabled());
        QSignalSpy requested(page, &widgets::BreakersPage::breakerModelChangeRequested);
        apply->click();
        QCOMPARE(requested.size(), 1);
        QString message;
        const auto asked =
            BreakerModel::fromJsonText(requested.first().first().toString(), &message);
        QVERIFY2(asked, qPrintable(message));
        QCOMPARE(asked->matchingPreset(), preset);
        QVERIFY2(asked->describe().startsWith(described), qPrintable(asked->describe()));

        // The re-run's snapshot carries the library's breaker: the page shows it, form clean.
        auto snapshot = std::make_shared<DashboardSnapshot>(*fixture::smallSnapshot());
        snapshot->report.breakerModel = *asked;
        shown.dashboard.applySnapshot(snapshot);
        shown.dashboard.flushPendingSnapshot();
        page->refreshIfStale();
        QCOMPARE(page->modelInEffect(), *asked);
        auto *text = page->findChild<QLabel *>(QStringLiteral("breakerModelText"));
        QVERIFY2(text->text().contains(described), qPrintable(text->text()));
        QVERIFY(!apply->isEnabled());
    }

    // The scrubber sets the replay instant; the grid shows every bucket as it was then.
    void replayScrubber_data()
    {
        QTest::addColumn<int>("position");
        QTest::addColumn<double>("migratorPlatform");
        QTest::addColumn<double>("bobPerApp");
        // [0 s, 600 s] over 10000 steps: position p -> p * 0.06 s
        QTest::newRow("start") << 0 << 0.0 << 0.0;
        QTest::newRow("60 s") << 1000 << 0.5 << 0.0;
        QTest::newRow("150 s") << 2500 << 1.0 << 0.0;
        QTest::newRow("200 s") << 3333 << 0.75 << 0.0; // 199.98 s
        QTest::newRow("300 s") << 5000 << 0.85 << 1.0;
    }
    void replayScrubber()
    {
        QFETCH(int, position);
        QFETCH(double, migratorPlatform);
        QFETCH(double, bobPerApp);
        Shown shown;
        widgets::ReplayBar *bar = shown.dashboard.replayBar();
        bar->slider()->setValue(position);
        QCOMPARE(shown.dashboard.timeRange()->replayInstant(), bar->instantForPosition(position));
        QVERIFY(!shown.dashboard.timeRange()->isFollowing());
        const models::BucketGridModel *grid = shown.dashboard.overviewPage()->gridModel();
        // rows sorted: alice, bob, sp-migrator; columns: identity, fabric/platform, graph/per-app
        QCOMPARE(grid->fillAt(2, 1), migratorPlatform);
        QCOMPARE(grid->fillAt(1, 2), bobPerApp);
        // Live again: the latest fills.
        bar->liveButton()->click();
        QVERIFY(!shown.dashboard.timeRange()->replayInstant());
        QCOMPARE(grid->fillAt(2, 1), 0.85);
        QCOMPARE(bar->slider()->value(), widgets::ReplayBar::kSteps);
    }

    void alertClickJumps()
    {
        Shown shown;
        shown.dashboard.showPage(QStringLiteral("alerts"));
        widgets::AlertsPage *page = shown.dashboard.alertsPage();
        QAbstractItemModelTester tester(page->tableModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(page->tableModel()->rowCount(), 2);
        // Newest first: the critical retry storm at 130 s.
        const QModelIndex first = page->tableModel()->index(0, models::AlertsModel::TimeColumn);
        QCOMPARE(first.data(models::AlertsModel::TimeMsRole).toLongLong(), fixture::at(130));
        QTest::mouseClick(page->view()->viewport(), Qt::LeftButton, {},
                          page->view()->visualRect(first).center());
        models::TimeRange *range = shown.dashboard.timeRange();
        QCOMPARE(range->replayInstant(), std::optional<qint64>(fixture::at(130)));
        QCOMPARE(range->startMs(), fixture::at(130) - 5 * 60 * 1000);
        QCOMPARE(range->endMs(), fixture::at(130) + 5 * 60 * 1000);
        // The clicked alert is shown in full under the table, and its detail column starts on
        // screen however long the keys are.
        const auto *detail = page->findChild<QLabel *>(QStringLiteral("alertDetail"));
        QVERIFY(detail);
        const QString fullDetail =
            first.siblingAtColumn(models::AlertsModel::DetailColumn).data().toString();
        QVERIFY(!fullDetail.isEmpty());
        QVERIFY(detail->text().contains(fullDetail.toHtmlEscaped()));
        const int detailX = page->view()->columnViewportPosition(models::AlertsModel::DetailColumn);
        QVERIFY(detailX >= 0 && detailX < page->view()->viewport()->width() * 3 / 4 + 200);
    }

    // The selected alert group stays selected while new alerts arrive (its row grows, others
    // are inserted and the view re-sorts) and across a reset that keeps its group.
    void alertSelectionSurvivesRefresh()
    {
        Shown shown;
        shown.dashboard.showPage(QStringLiteral("alerts"));
        widgets::AlertsPage *page = shown.dashboard.alertsPage();
        QTableView *view = page->view();
        auto groupOfCurrent = [view] {
            return view->currentIndex().data(models::AlertsModel::GroupKeyRole).toString();
        };
        // Select the near-limit group (the older one: the second row, newest first).
        QCOMPARE(page->tableModel()->rowCount(), 2);
        const QModelIndex nearIndex = page->tableModel()->index(1, 0);
        view->selectionModel()->setCurrentIndex(nearIndex, QItemSelectionModel::ClearAndSelect |
                                                               QItemSelectionModel::Rows);
        const QString selected = groupOfCurrent();
        QVERIFY(selected.startsWith(u"near-limit"));

        auto snap = std::make_shared<DashboardSnapshot>(*shown.dashboard.snapshot());
        snap->generation += 1;
        const Alert nearAlert = snap->report.alerts.first();
        // A repeat of the selected group after the storm (it moves to the top), and a new key.
        snap->report.alerts.append({nearAlert.kind, nearAlert.severity, fixture::at(300),
                                    nearAlert.key, QStringLiteral("again")});
        snap->report.alerts.append({QStringLiteral("capacity"), QStringLiteral("warning"),
                                    fixture::at(200), QStringLiteral("sb-prod"), QString()});
        shown.dashboard.applySnapshot(snap);
        shown.dashboard.flushPendingSnapshot();
        QCOMPARE(page->tableModel()->rowCount(), 3);
        QCOMPARE(groupOfCurrent(), selected);
        QCOMPARE(view->selectionModel()->selectedRows().size(), 1);
        QCOMPARE(view->currentIndex().data(models::AlertsModel::CountRole).toInt(), 2);
        QCOMPARE(view->currentIndex().row(), 0); // newest first: it moved to the top

        // Another policy: the storm's group disappears (a reset), the selected one stays.
        auto rerun = std::make_shared<DashboardSnapshot>(*snap);
        rerun->generation += 1;
        rerun->report.alerts.removeAt(1);
        shown.dashboard.applySnapshot(rerun);
        shown.dashboard.flushPendingSnapshot();
        QCOMPARE(page->tableModel()->rowCount(), 2);
        QCOMPARE(groupOfCurrent(), selected);
    }

    // Only new, recent critical alerts are announced (a file import's history is not news).
    void criticalAlertNotification()
    {
        widgets::Dashboard dashboard;
        QSignalSpy raised(&dashboard, &widgets::Dashboard::criticalAlertsRaised);
        auto snap = fixture::smallSnapshot(); // alerts from 2026-02-18: history
        dashboard.applySnapshot(snap);
        dashboard.flushPendingSnapshot();
        QCOMPARE(raised.count(), 0);
        auto live = std::make_shared<DashboardSnapshot>(*snap);
        live->generation = 2;
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        live->report.alerts.append({QStringLiteral("lost-work"), QStringLiteral("critical"), now,
                                    QStringLiteral("note-bridge"),
                                    QStringLiteral("batch item 3 never succeeded")});
        live->report.alerts.append({QStringLiteral("near-limit"), QStringLiteral("warning"), now,
                                    QStringLiteral("note-bridge"), QStringLiteral("0.85")});
        dashboard.applySnapshot(live);
        dashboard.flushPendingSnapshot();
        QCOMPARE(raised.count(), 1);
        const auto alerts = raised.first().first().value<QList<Alert>>();
        QCOMPARE(alerts.size(), 1);
        QCOMPARE(alerts.first().kind, QStringLiteral("lost-work"));
        // The same list again: nothing new.
        auto again = std::make_shared<DashboardSnapshot>(*live);
        again->generation = 3;
        dashboard.applySnapshot(again);
        dashboard.flushPendingSnapshot();
        QCOMPARE(raised.count(), 1);
    }

    void eventsPageFollowsALiveFeed()
    {
        // The session stores events as they arrive and then publishes a snapshot: the visible
        // Events page appends the new rows (not a reset) and updates its count.
        Shown shown;
        auto makeEvents = [](int first, int count) {
            std::vector<RequestEvent> events;
            for (int i = first; i < first + count; ++i) {
                RequestEvent event;
                event.tsMs = fixture::at(i);
                event.identity = QStringLiteral("alice");
                event.status = 200;
                events.push_back(event);
            }
            return events;
        };
        auto source = std::make_shared<models::MemoryEventSource>(makeEvents(0, 20));
        widgets::EventsPage *page = shown.dashboard.eventsPage();
        page->setEventSource(source);
        shown.dashboard.showPage(QStringLiteral("events"));
        QAbstractItemModelTester tester(page->model(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(page->model()->rowCount(), 20);
        QSignalSpy resets(page->model(), &QAbstractItemModel::modelReset);
        source->append(makeEvents(20, 15));
        auto next = std::make_shared<DashboardSnapshot>(*fixture::smallSnapshot());
        next->generation += 1;
        shown.dashboard.applySnapshot(next);
        shown.dashboard.flushPendingSnapshot();
        // At most one look per second: right away, or at the end of the second.
        QTRY_COMPARE_WITH_TIMEOUT(page->model()->rowCount(), 35, 3000);
        QCOMPARE(resets.count(), 0);
        QVERIFY2(page->statusText().contains(QStringLiteral("35 matching")),
                 qPrintable(page->statusText()));
    }

    void eventsPageFiltersAndDetail()
    {
        Shown shown;
        std::vector<RequestEvent> events;
        for (int i = 0; i < 50; ++i) {
            RequestEvent event;
            event.tsMs = fixture::at(i);
            event.identity = i < 10 ? QStringLiteral("alice@contoso.com") : QStringLiteral("bob");
            event.app = QStringLiteral("note-bridge"); // alice's buckets: note-bridge+alice@…
            event.status = i % 5 == 0 ? 429 : 200;
            event.lane = QStringLiteral("foreground");
            event.method = QStringLiteral("POST");
            event.url = QStringLiteral("https://graph.microsoft.com/v1.0/$batch");
            event.headers.set(QStringLiteral("Authorization"), QStringLiteral("Bearer secret"));
            event.headers.set(QStringLiteral("Retry-After"), QStringLiteral("7"));
            events.push_back(event);
        }
        widgets::EventsPage *page = shown.dashboard.eventsPage();
        page->setEventSource(std::make_shared<models::MemoryEventSource>(std::move(events)));
        shown.dashboard.showPage(QStringLiteral("events"));
        QAbstractItemModelTester tester(page->model(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(page->model()->rowCount(), 50);
        models::EventQuery query;
        query.identity = QStringLiteral("alice@contoso.com");
        query.status = 429;
        page->setFilter(query);
        QCOMPARE(page->model()->rowCount(), 2);
        QVERIFY2(page->statusText().contains(QStringLiteral("2 matching")),
                 qPrintable(page->statusText()));
        page->view()->setCurrentIndex(page->model()->index(1, 0));
        QVERIFY(page->detailText().contains(QStringLiteral("retry-after: 7")));
        QVERIFY(page->detailText().contains(QStringLiteral("authorization: [redacted]")));
        QVERIFY(!page->detailText().contains(QStringLiteral("secret")));
        // The buckets of the event's key at its instant, as the Bucket chart and the grid read
        // them (models::usageAt on the snapshot's series).
        QVERIFY2(page->detailText().contains(QStringLiteral("Buckets of this key at")),
                 qPrintable(page->detailText()));
        const RequestEvent &selected = page->model()->eventAt(1);
        const auto snapshot = shown.dashboard.snapshot();
        QVERIFY(snapshot);
        const QList<int> ofKey = models::scopesOfEventKey(*snapshot, selected);
        QVERIFY(!ofKey.isEmpty());
        for (int i : ofKey) {
            QCOMPARE(snapshot->report.scopes.at(i).key,
                     QStringLiteral("note-bridge+alice@contoso.com"));
            QVERIFY(page->detailText().contains(
                models::scopeLabel(snapshot->report.scopes.at(i)) + QStringLiteral(": ") +
                QString::number(models::displayedUsage(*snapshot, i, selected.tsMs), 'g', 6)));
        }
        page->setColumnVisible(models::EventsModel::UrlColumn, false);
        QVERIFY(page->view()->isColumnHidden(models::EventsModel::UrlColumn));
        // The filter bar reflects the query (typing drives the same path).
        QCOMPARE(page->currentQuery().identity, QStringLiteral("alice@contoso.com"));
        QCOMPARE(page->currentQuery().status, std::optional<int>(429));
    }

    void ingestSilentFeed()
    {
        widgets::IngestPage page;
        IngestStatus status;
        IngestSourceStatus source;
        source.path = QStringLiteral("http");
        source.format = QStringLiteral("ndjson");
        source.live = true;
        source.events = 10;
        source.lastEventReceivedMs = QDateTime::currentMSecsSinceEpoch() - 120'000;
        status.sources = {source};
        status.malformed = {
            redact::malformedRecord(QStringLiteral("a.ndjson"), 3, QStringLiteral("bad JSON"))};
        status.malformedTotal = 5;
        page.setStatus(status);
        QVERIFY2(page.summaryText().contains(QStringLiteral("Silent feed")),
                 qPrintable(page.summaryText()));
        QVERIFY(page.summaryText().contains(QStringLiteral("2 min 0 s ago")));
        QCOMPARE(page.malformedModel()->rowCount(), 1);
        source.lastEventReceivedMs = QDateTime::currentMSecsSinceEpoch();
        status.sources = {source};
        page.setStatus(status);
        QVERIFY(!page.summaryText().contains(QStringLiteral("Silent feed")));
        // A polled store writing into the followed workspace: its rows are on its own row and
        // in the workspace's, counted once in the total.
        IngestSourceStatus workspace;
        workspace.path = QStringLiteral("/tmp/session.tsws");
        workspace.format = QStringLiteral("workspace");
        workspace.events = 3200;
        IngestSourceStatus polled = source;
        polled.path = QStringLiteral("http://127.0.0.1:1/rows?after={cursor}");
        polled.events = 200;
        polled.countedInWorkspace = true;
        status.sources = {workspace, polled};
        page.setStatus(status);
        QVERIFY2(page.summaryText().contains(QStringLiteral("2 sources, 3200 events")),
                 qPrintable(page.summaryText()));
    }

    void exportPlots_data()
    {
        QTest::addColumn<QString>("suffix");
        QTest::addColumn<QByteArray>("magic");
        QTest::newRow("png") << QStringLiteral("png") << QByteArray("\x89PNG");
        QTest::newRow("pdf") << QStringLiteral("pdf") << QByteArray("%PDF");
        QTest::newRow("svg") << QStringLiteral("svg") << QByteArray("<?xml");
    }
    void exportPlots()
    {
        QFETCH(QString, suffix);
        QFETCH(QByteArray, magic);
        Shown shown;
        shown.dashboard.showBucket(0);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("bucket.") + suffix);
        QCOMPARE(widgets::exportPlot(shown.dashboard.currentPlot(), path, 800, 500), QString());
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray content = file.readAll();
        QVERIFY(content.startsWith(magic));
        QVERIFY(content.size() > 2000);
        if (suffix == u"svg")
            QVERIFY(content.contains("<svg"));
        QVERIFY(!widgets::exportPlot(shown.dashboard.currentPlot(),
                                     dir.filePath(QStringLiteral("x.bmpx")))
                     .isEmpty());
    }

    // Issue 30.14: an exported chart carries the page's title, the time range and the legend.
    void exportedChartStandsOnItsOwn()
    {
        Shown shown;
        shown.dashboard.showPage(QStringLiteral("throttles"));
        QCustomPlot *plot = shown.dashboard.currentPlot();
        plot->legend->setVisible(false); // hidden on the page: shown in the export all the same
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("throttles.svg"));
        const QString title = shown.dashboard.currentPlotTitle();
        QCOMPARE(title, QStringLiteral("Throttles"));
        QCOMPARE(widgets::exportPlot(plot, path, 900, 500, title), QString());
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString svg = QString::fromUtf8(file.readAll());
        const QString heading = widgets::exportHeading(plot, title);
        QVERIFY2(heading.startsWith(QStringLiteral("Throttles · 2026-")) &&
                     heading.endsWith(QStringLiteral(" UTC")),
                 qPrintable(heading));
        // QSvgGenerator writes text as <text> runs: the heading's words and a legend entry.
        for (const QString &word :
             {QStringLiteral("Throttles"), QStringLiteral("UTC"), QStringLiteral("RequestBlocked")})
            QVERIFY2(svg.contains(word), qPrintable(word));
        // The page itself is as it was.
        QVERIFY(!plot->legend->visible());
        QCOMPARE(plot->plotLayout()->rowCount(), 1);
        shown.dashboard.showBucket(0);
        QVERIFY2(shown.dashboard.currentPlotTitle().startsWith(QStringLiteral("Bucket · ")),
                 qPrintable(shown.dashboard.currentPlotTitle()));
    }

    // Issue 30.13: the policy editor opens on the policy in force.
    void policyEditorOpensOnThePolicyInForce()
    {
        const ReportData report = fixture::smallSnapshot()->report;
        QCOMPARE(widgets::PolicyEditor::mostUsedPolicy(report), QStringLiteral("fabric"));
        widgets::PolicyEditor editor;
        editor.showPolicyInForce(QString(), QStringLiteral("fabric"));
        QCOMPARE(editor.policyJsonOrName(), QStringLiteral("fabric"));
        editor.showPolicyInForce(QStringLiteral("nginx"), QStringLiteral("fabric"));
        QCOMPARE(editor.policyJsonOrName(), QStringLiteral("nginx"));
        const QString edited = QStringLiteral("{\"name\": \"fabric\", \"limits\": []}");
        editor.showPolicyInForce(edited, QStringLiteral("fabric"));
        QCOMPARE(editor.policyJsonOrName(), edited);
    }

    void exportCsv()
    {
        Shown shown;
        shown.dashboard.showPage(QStringLiteral("throttles"));
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("t.csv"));
        QCOMPARE(widgets::exportModelCsv(shown.dashboard.currentTable(), path), QString());
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QStringList lines =
            QString::fromUtf8(file.readAll()).split(u'\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 3);
        QCOMPARE(lines.at(0),
                 QStringLiteral("Identity,CapacityLimitExceeded,RequestBlocked,Total"));
        QVERIFY(lines.contains(QStringLiteral("sp-migrator,1,6,7")));
        QCOMPARE(widgets::csvField(QStringLiteral("a,\"b\"")), QStringLiteral("\"a,\"\"b\"\"\""));
    }

    void policyEditorValidates()
    {
        widgets::PolicyEditor editor;
        QSignalSpy applied(&editor, &widgets::PolicyEditor::policyChangeRequested);
        editor.setPolicyText(QStringLiteral("{\n  \"name\": \"x\",\n  oops\n}"));
        QVERIFY2(editor.validationError().startsWith(QStringLiteral("line 3")),
                 qPrintable(editor.validationError()));
        editor.setPolicyText(QStringLiteral("[1, 2]"));
        QVERIFY(!editor.validationError().isEmpty());
        const QString json = QStringLiteral("{\"name\": \"custom\", \"limits\": []}");
        editor.setPolicyText(json);
        QCOMPARE(editor.validationError(), QString());
        QCOMPARE(editor.policyJsonOrName(), json);
        const auto names = widgets::PolicyEditor::builtinPolicyNames();
        if (!names.isEmpty()) {
            editor.selectPolicy(names.first());
            QCOMPARE(editor.policyJsonOrName(), names.first());
        }
    }

    // A hidden page does not redraw per snapshot; it catches up when shown.
    void hiddenPagesCatchUp()
    {
        widgets::Dashboard dashboard;
        dashboard.resize(1000, 700);
        dashboard.show();
        dashboard.showPage(QStringLiteral("overview"));
        auto snap = fixture::smallSnapshot();
        dashboard.applySnapshot(snap);
        dashboard.flushPendingSnapshot();
        QCOMPARE(dashboard.throttlesPage()->bars().size(), 0); // not drawn while hidden
        dashboard.showPage(QStringLiteral("throttles"));
        QCOMPARE(dashboard.throttlesPage()->bars().size(), 2);
    }

    // Issue 19.2: the bars can stack by cause (the same throttles, another breakdown).
    void throttleBarsByCause()
    {
        Shown shown;
        auto snap = std::make_shared<DashboardSnapshot>(*fixture::smallSnapshot());
        snap->generation += 1;
        snap->throttleBins[0].byCause = {{QStringLiteral("limit"), 4},
                                         {QStringLiteral("retry-after"), 1},
                                         {QStringLiteral("capacity"), 1}};
        snap->throttleBins[1].byCause = {{QStringLiteral("limit"), 3}};
        snap->report.throttles.byCause = {{QStringLiteral("limit"), 7},
                                          {QStringLiteral("retry-after"), 1},
                                          {QStringLiteral("capacity"), 1}};
        shown.dashboard.applySnapshot(snap);
        shown.dashboard.flushPendingSnapshot();
        shown.dashboard.showPage(QStringLiteral("throttles"));
        widgets::ThrottlesPage *page = shown.dashboard.throttlesPage();
        QCOMPARE(page->stackBy(), widgets::ThrottlesPage::StackBy::ErrorCode);
        page->setStackBy(widgets::ThrottlesPage::StackBy::Cause);
        QCOMPARE(page->barCodes(), QStringList({QStringLiteral("limit"), QStringLiteral("capacity"),
                                                QStringLiteral("retry-after")}));
        const QList<QCPBars *> bars = page->bars();
        QCOMPARE(bars.size(), 3);
        QCOMPARE(bars.at(0)->name(), QStringLiteral("limit (7)"));
        QCOMPARE(bars.at(0)->data()->size(), 2);
        QCOMPARE(bars.at(0)->data()->at(0)->value, 4.0);
        QCOMPARE(bars.at(1)->barBelow(), bars.at(0));
        QVERIFY2(page->splitText().contains(QStringLiteral("by cause: capacity 1, limit 7")),
                 qPrintable(page->splitText()));
        page->setStackBy(widgets::ThrottlesPage::StackBy::ErrorCode);
        QCOMPARE(page->barCodes(), QStringList({QStringLiteral("RequestBlocked"),
                                                QStringLiteral("CapacityLimitExceeded")}));
    }

    // Issue 19.2: the Events page shows each event's cause and filters by it.
    void eventsCauseColumnAndFilter()
    {
        Shown shown;
        std::vector<RequestEvent> events;
        for (int i = 0; i < 10; ++i) {
            RequestEvent event;
            event.tsMs = fixture::at(i);
            event.identity = QStringLiteral("alice");
            event.status = i >= 6 ? 429 : 200;
            events.push_back(event);
        }
        widgets::EventsPage *page = shown.dashboard.eventsPage();
        page->setEventSource(std::make_shared<models::MemoryEventSource>(std::move(events)));
        shown.dashboard.showPage(QStringLiteral("events"));
        QAbstractItemModelTester tester(page->model(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto causes = std::make_shared<std::vector<EventCause>>();
        auto add = [&](int second, ThrottleCause cause, const QString &limit, bool observed) {
            EventCause &c = causes->emplace_back();
            c.tsMs = fixture::at(second);
            c.identity = QStringLiteral("alice");
            c.cause = cause;
            c.limit = limit;
            c.observed = observed;
        };
        add(5, ThrottleCause::Limit, QStringLiteral("platform"), false);
        add(6, ThrottleCause::Limit, QStringLiteral("platform"), true);
        add(7, ThrottleCause::Limit, QStringLiteral("platform"), true);
        add(8, ThrottleCause::RetryAfter, {}, true);
        add(9, ThrottleCause::Unexplained, {}, true);
        page->setEventCauses(causes);
        models::EventsModel *model = page->model();
        QCOMPARE(model->rowCount(), 10);
        QCOMPARE(model->index(0, models::EventsModel::CauseColumn).data().toString(), QString());
        QCOMPARE(model->index(5, models::EventsModel::CauseColumn).data().toString(),
                 QStringLiteral("predicted: limit (platform)"));
        QCOMPARE(model->index(6, models::EventsModel::CauseColumn).data().toString(),
                 QStringLiteral("limit (platform)"));
        QCOMPARE(model->index(8, models::EventsModel::CauseColumn).data().toString(),
                 QStringLiteral("retry-after"));
        QCOMPARE(
            model->headerData(models::EventsModel::CauseColumn, Qt::Horizontal, Qt::DisplayRole)
                .toString(),
            QStringLiteral("Cause"));
        // The filter reads the engine's causes, not the loaded rows: only those events are rows.
        page->setCauseFilter(QStringLiteral("limit"));
        QCOMPARE(page->causeFilter(), QStringLiteral("limit"));
        QCOMPARE(model->rowCount(), 3);
        QCOMPARE(model->matchingCount(), qint64(3));
        for (int row = 0; row < 3; ++row) {
            QCOMPARE(model->index(row, 0).data(models::EventsModel::CauseRole).toString(),
                     QStringLiteral("limit"));
            QCOMPARE(model->index(row, models::EventsModel::TimeColumn).data().toString(),
                     formatIsoMs(fixture::at(5 + row)));
        }
        QVERIFY2(page->statusText().contains(QStringLiteral("3 matching")),
                 qPrintable(page->statusText()));
        QVERIFY2(page->statusText().contains(QStringLiteral("cause limit")),
                 qPrintable(page->statusText()));
        page->setCauseFilter(QStringLiteral("unexplained"));
        QCOMPARE(model->rowCount(), 1);
        QCOMPARE(model->index(0, models::EventsModel::StatusColumn).data().toString(),
                 QStringLiteral("429"));
        // A newer cause arrives while the filter is on: it joins as the tail.
        add(9, ThrottleCause::Unexplained, {}, true);
        causes->back().tsMs += 1;
        page->setEventCauses(std::make_shared<std::vector<EventCause>>(*causes));
        page->noteNewEvents();
        QTRY_COMPARE(model->rowCount(), 1); // no event at that instant in the source: none shown
        page->setCauseFilter({});
        QCOMPARE(model->rowCount(), 10);
    }

    // The cause filter over a workspace larger than a page: the events of that cause come from
    // every row, not only from the first page loaded.
    void eventsCauseFilterReadsEveryRow()
    {
        Shown shown;
        std::vector<RequestEvent> events;
        auto causes = std::make_shared<std::vector<EventCause>>();
        const int total = 5 * models::EventsModel::kPageSize;
        for (int i = 0; i < total; ++i) {
            RequestEvent event;
            event.tsMs = fixture::at(0) + i * 10;
            event.identity = QStringLiteral("alice");
            event.line = i + 1;
            event.status = i % 97 == 96 ? 429 : 200;
            if (event.status == 429) {
                EventCause &c = causes->emplace_back();
                c.tsMs = event.tsMs;
                c.identity = event.identity;
                c.line = event.line;
                c.cause = ThrottleCause::Unexplained;
                c.observed = true;
            }
            events.push_back(event);
        }
        widgets::EventsPage *page = shown.dashboard.eventsPage();
        page->setEventSource(std::make_shared<models::MemoryEventSource>(std::move(events)));
        shown.dashboard.showPage(QStringLiteral("events"));
        QAbstractItemModelTester tester(page->model(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        page->setEventCauses(causes);
        page->setCauseFilter(QStringLiteral("unexplained"));
        models::EventsModel *model = page->model();
        while (model->canFetchMore({}))
            model->fetchMore({});
        QCOMPARE(qsizetype(model->rowCount()), qsizetype(causes->size()));
        QCOMPARE(
            model->index(model->rowCount() - 1, models::EventsModel::TimeColumn).data().toString(),
            formatIsoMs(causes->back().tsMs));
    }

    // Issue 19.1: the service's corrections are drawn on the Bucket chart and named above it.
    void bucketCorrectionMarkers()
    {
        Shown shown;
        auto snap = std::make_shared<DashboardSnapshot>(*fixture::smallSnapshot());
        snap->generation += 1;
        StateCorrection correction;
        correction.atMs = fixture::at(30);
        correction.saidUsage = 200;
        correction.modelUsage = 193;
        correction.capacity = 200;
        correction.reason = QStringLiteral("429");
        snap->series[0].corrections = {correction};
        snap->report.scopes[0].corrections = 1;
        snap->report.scopes[0].correctionLog = {correction};
        shown.dashboard.applySnapshot(snap);
        shown.dashboard.flushPendingSnapshot();
        shown.dashboard.showBucket(0);
        widgets::BucketPage *page = shown.dashboard.bucketPage();
        QCOMPARE(keysOf(page->correctionGraph()), QVector<double>({sec(30)}));
        QCOMPARE(valuesOf(page->correctionGraph()), QVector<double>({200}));
        QVERIFY2(page->limitsText().contains(
                     QStringLiteral("the service said full (429); the model had room for 7")),
                 qPrintable(page->limitsText()));
        // A bucket never corrected has no markers.
        shown.dashboard.showBucket(4);
        QCOMPARE(page->correctionGraph()->dataCount(), 0);
    }
};

QTEST_MAIN(TestDashboard)
#include "tst_dashboard.moc"
