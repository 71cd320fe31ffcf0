// The Overview page at a glance, on the OneNote death spiral of the demo (simulator -> Analysis
// -> Dashboard): the identities view comes first and shows the spiralling user first, red,
// at or over the limit, with a running "safe to send in" countdown; the bucket grid stays as a
// second view; the headline says "now" only for a live feed and "as of T" for a file or a
// replay instant; the Bucket page draws the limiter's count with the accepted layer beside it,
// explains 429s below the limit, and counts down to the next safe send.
#include "bucketpage.h"
#include "dashboard.h"
#include "engine/analysis.h"
#include "ingest/ingeststatus.h"
#include "live/simulator.h"
#include "models/bucketgridmodel.h"
#include "models/displaynames.h"
#include "models/identityurgencymodel.h"
#include "models/timerange.h"
#include "overviewpage.h"
#include "qcp.h"
#include "snapshotfixture.h"
#include "urgencydelegate.h"

#include <QAbstractItemModelTester>
#include <QImage>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QTest>

using namespace ts;
using Model = models::IdentityUrgencyModel;

namespace {

constexpr qint64 kMinute = 60 * 1000;

std::shared_ptr<const DashboardSnapshot> spiral(qint64 minutes)
{
    live::SimulationOptions options;
    options.scenario = QStringLiteral("onenote-migration");
    options.seed = 1;
    QString error;
    auto simulation = live::Simulation::create(options, &error);
    if (!simulation)
        qFatal("%s", qPrintable(error));
    Analysis analysis;
    QList<RequestEvent> events;
    simulation->advanceTo(simulation->startMs() + minutes * kMinute, &events);
    analysis.onEvents(std::vector<RequestEvent>(events.begin(), events.end()));
    return std::make_shared<const DashboardSnapshot>(analysis.snapshot());
}

const std::shared_ptr<const DashboardSnapshot> &spiralAt20()
{
    static const auto snapshot = spiral(20);
    return snapshot;
}

IngestStatus liveStatus(bool live)
{
    IngestStatus status;
    IngestSourceStatus source;
    source.path = QStringLiteral("demo");
    source.live = live;
    source.finished = !live;
    status.sources.append(source);
    return status;
}

} // namespace

class TestOverviewPage : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void spirallingUserFirstAndRed()
    {
        widgets::Dashboard dashboard;
        dashboard.resize(1280, 800);
        dashboard.show();
        dashboard.applySnapshot(spiralAt20());
        dashboard.flushPendingSnapshot();
        widgets::OverviewPage *overview = dashboard.overviewPage();
        QAbstractItemModelTester tester(overview->identityProxy(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        // The identities view is the first thing the Overview shows; the grid is a tab away.
        QCOMPARE(overview->views()->currentWidget(), overview->identityView());
        QCOMPARE(overview->views()->count(), 2);
        QVERIFY(overview->identityView()->isVisible());

        QSortFilterProxyModel *proxy = overview->identityProxy();
        QVERIFY(proxy->rowCount() >= 3);
        const QModelIndex first = proxy->index(0, Model::IdentityColumn);
        QVERIFY2(first.data(Model::KeyRole).toString().endsWith(u"+alice@contoso.com"),
                 qPrintable(first.data(Model::KeyRole).toString()));
        // Shown short (the app GUID is in the tooltip), full for exports.
        QCOMPARE(first.data().toString(), u"alice@contoso.com"_qs);
        QCOMPARE(first.data(ts::models::FullTextRole).toString(),
                 first.data(Model::KeyRole).toString());
        QCOMPARE(first.data(Model::UrgencyRole).toInt(), int(Model::Urgency::Blocked));
        QVERIFY(first.data(Model::FillRole).toDouble() >= 1.0);
        QVERIFY(first.data(Model::SafeInMsRole).toLongLong() > 0);
        QVERIFY(proxy->index(0, Model::SafeSendColumn).data().toString().startsWith(u"in "));
        QVERIFY(
            proxy->index(0, Model::ThrottleRateColumn).data(Model::ThrottleRateRole).toDouble() >
            0);

        // Red on screen: the status badge and the fill bar of the first row are painted in the
        // blocked / over-limit colour.
        QTableView *view = overview->identityView();
        const QImage image = view->viewport()->grab().toImage();
        const QColor red = widgets::urgencyColor(int(Model::Urgency::Blocked));
        for (int column : {int(Model::StatusColumn), int(Model::FillColumn)}) {
            const QRect cell = view->visualRect(proxy->index(0, column));
            QVERIFY(!cell.isEmpty());
            int redPixels = 0;
            for (int x = cell.left(); x <= cell.right(); ++x)
                for (int y = cell.top(); y <= cell.bottom(); ++y)
                    redPixels += image.pixelColor(x, y) == red ? 1 : 0;
            QVERIFY2(redPixels > cell.width() * cell.height() / 4,
                     qPrintable(QStringLiteral("column %1: %2 red pixels of %3")
                                    .arg(column)
                                    .arg(redPixels)
                                    .arg(cell.width() * cell.height())));
        }

        // The worst bucket headline agrees: a OneNote bucket of the same user, at or over 100 %.
        const QString worst = overview->headline(QStringLiteral("worst"));
        QVERIFY2(worst.contains(u"alice@contoso.com"), qPrintable(worst));

        // Activating the row opens its worst bucket.
        view->setCurrentIndex(first);
        Q_EMIT view->activated(first);
        QCOMPARE(dashboard.currentPageName(), QStringLiteral("bucket"));
        QCOMPARE(dashboard.bucketPage()->scopeIndex(), first.data(Model::ScopeIndexRole).toInt());
    }

    // Issue 30.14: at the default 1280x800 no column up to "Safe to send" cuts its values (the
    // spiral's countdowns and reasons are long); what is longer than a third of the table
    // elides, whole in the row's tooltip.
    void safeToSendFitsAtTheDefaultSize()
    {
        widgets::Dashboard dashboard;
        dashboard.resize(1280, 800);
        dashboard.show();
        dashboard.applySnapshot(spiralAt20());
        dashboard.flushPendingSnapshot();
        widgets::OverviewPage *overview = dashboard.overviewPage();
        QAbstractItemModelTester tester(overview->identityProxy(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QTableView *view = overview->identityView();
        QSortFilterProxyModel *proxy = overview->identityProxy();
        QVERIFY(proxy->rowCount() >= 3);
        const QFontMetrics metrics = view->fontMetrics();
        const int third = std::max(210, view->viewport()->width() / 3);
        int longest = 0;
        for (int row = 0; row < proxy->rowCount(); ++row) {
            const QModelIndex cell = proxy->index(row, Model::SafeSendColumn);
            const QString text = cell.data().toString();
            const int needed = metrics.horizontalAdvance(text) + 8;
            longest = std::max(longest, needed);
            if (needed <= third) {
                QVERIFY2(view->columnWidth(Model::SafeSendColumn) >= needed,
                         qPrintable(QStringLiteral("'%1' needs %2 px, the column has %3")
                                        .arg(text)
                                        .arg(needed)
                                        .arg(view->columnWidth(Model::SafeSendColumn))));
            } else {
                QVERIFY(cell.data(Qt::ToolTipRole).toString().contains(text));
            }
        }
        QVERIFY2(longest > 210, "the spiral has a reason longer than the old fixed width");
    }

    void nowOnlyWhenLive_data()
    {
        QTest::addColumn<bool>("live");
        QTest::addColumn<bool>("replay");
        QTest::addColumn<QString>("captionStart");
        QTest::addColumn<QString>("worstCaptionStart");
        QTest::newRow("live feed") << true << false << u"Now"_qs << u"Worst bucket now"_qs;
        QTest::newRow("file") << false << false << u"As of "_qs << u"Worst bucket as of "_qs;
        QTest::newRow("live, replay instant")
            << true << true << u"As of "_qs << u"Worst bucket as of "_qs;
        QTest::newRow("file, replay instant")
            << false << true << u"As of "_qs << u"Worst bucket as of "_qs;
    }

    void nowOnlyWhenLive()
    {
        QFETCH(bool, live);
        QFETCH(bool, replay);
        QFETCH(QString, captionStart);
        QFETCH(QString, worstCaptionStart);
        widgets::Dashboard dashboard;
        dashboard.resize(1280, 800);
        dashboard.show();
        dashboard.setIngestStatus(liveStatus(live));
        dashboard.applySnapshot(fixture::smallSnapshot());
        dashboard.flushPendingSnapshot();
        if (replay)
            dashboard.timeRange()->setReplayInstant(fixture::at(300));
        widgets::OverviewPage *overview = dashboard.overviewPage();
        QCOMPARE(overview->isLive(), live);
        QVERIFY2(overview->instantCaption().startsWith(captionStart),
                 qPrintable(overview->instantCaption()));
        const QString worstCaption = overview->headline(QStringLiteral("worstCaption"));
        QVERIFY2(worstCaption.startsWith(worstCaptionStart), qPrintable(worstCaption));
        if (replay) {
            QVERIFY(worstCaption.contains(u"22:45:00 UTC"));
            // The tiles are evaluated at the instant: throttles of the bins up to 300 s,
            // alerts raised by then, breakers in their state then.
            const auto &snap = *dashboard.snapshot();
            qint64 throttles = 0;
            for (const ThrottleBin &bin : snap.throttleBins)
                if (bin.startMs <= fixture::at(300))
                    for (qint64 count : bin.byErrorCode)
                        throttles += count;
            QCOMPARE(overview->headline(QStringLiteral("throttles")),
                     QLocale().toString(throttles));
            QCOMPARE(overview->headline(QStringLiteral("eventsCaption")), u"Events (whole log)"_qs);
        } else if (!live)
            QVERIFY(worstCaption.contains(u"22:50:00 UTC")); // the end of the data
    }

    void gridStaysAsSecondView()
    {
        widgets::Dashboard dashboard;
        dashboard.resize(1280, 800);
        dashboard.show();
        dashboard.applySnapshot(spiralAt20());
        dashboard.flushPendingSnapshot();
        widgets::OverviewPage *overview = dashboard.overviewPage();
        overview->showGrid(true);
        QVERIFY(overview->gridView()->isVisible());
        QVERIFY(overview->gridModel()->rowCount() >= 3);
        // The filter applies to both views.
        overview->setIdentityFilter(QStringLiteral("bob@"));
        QCOMPARE(overview->identityProxy()->rowCount(), 1);
        QCOMPARE(overview->gridProxy()->rowCount(), 1);
    }

    void bucketShowsLimiterCountAndAcceptedLayer()
    {
        const auto &snapshot = spiralAt20();
        int minute = -1;
        for (int i = 0; i < snapshot->report.scopes.size(); ++i) {
            const ScopeSummary &scope = snapshot->report.scopes.at(i);
            if (scope.key.endsWith(u"+alice@contoso.com") && scope.limit == u"onenote-per-minute")
                minute = i;
        }
        QVERIFY(minute >= 0);
        widgets::Dashboard dashboard;
        dashboard.resize(1280, 800);
        dashboard.show();
        dashboard.applySnapshot(snapshot);
        dashboard.flushPendingSnapshot();
        dashboard.showBucket(minute);
        widgets::BucketPage *page = dashboard.bucketPage();
        const double capacity = snapshot->report.scopes.at(minute).capacity;
        double usagePeak = 0;
        for (auto it = page->usageGraph()->data()->constBegin();
             it != page->usageGraph()->data()->constEnd(); ++it)
            usagePeak = std::max(usagePeak, it->value);
        double acceptedPeak = 0;
        for (auto it = page->acceptedGraph()->data()->constBegin();
             it != page->acceptedGraph()->data()->constEnd(); ++it)
            acceptedPeak = std::max(acceptedPeak, it->value);
        QVERIFY(page->acceptedGraph()->dataCount() > 0);
        QVERIFY2(usagePeak >= capacity, qPrintable(QString::number(usagePeak)));
        QVERIFY(acceptedPeak <= capacity + 1e-9);
        // Every observed 429 marker sits at or over the limit: no note needed.
        for (auto it = page->observedThrottleGraph()->data()->constBegin();
             it != page->observedThrottleGraph()->data()->constEnd(); ++it)
            QVERIFY(it->value + 1 > capacity);
        QVERIFY(page->belowLimitNote().isEmpty());
        QVERIFY2(page->safeSendText().startsWith(u"safe to send in "),
                 qPrintable(page->safeSendText()));
        QVERIFY(page->safeSendText().contains(u"frees up"));
    }

    void bucketExplainsThrottlesBelowTheLimit()
    {
        // The fixture's sp-migrator platform bucket has observed 429s at 125 s and 130 s with a
        // usage of 200 of 200 (at the limit), and a Retry-After: lower the usage there and the
        // chart must say why the 429s came.
        auto snapshot = std::make_shared<DashboardSnapshot>(*fixture::smallSnapshot());
        snapshot->series[0].usage = {0, 100, 150, 150, 170};
        widgets::Dashboard dashboard;
        dashboard.resize(1280, 800);
        dashboard.show();
        dashboard.applySnapshot(snapshot);
        dashboard.flushPendingSnapshot();
        dashboard.showBucket(0);
        const QString note = dashboard.bucketPage()->belowLimitNote();
        QVERIFY2(note.startsWith(u"2 of 2 observed 429s came while this limit had room"),
                 qPrintable(note));
        QVERIFY(note.contains(u"Retry-After"));
        QVERIFY(note.contains(u"180")); // the effective limit learned from them
    }

    void bucketCountdownFollowsTheReplayInstant()
    {
        // fixture: sp-migrator platform next safe send at 660 s, the data ends at 600 s.
        widgets::Dashboard dashboard;
        dashboard.resize(1280, 800);
        dashboard.show();
        auto snapshot = std::make_shared<DashboardSnapshot>(*fixture::smallSnapshot());
        snapshot->report.scopes[0].nextSafeSendLimit = QStringLiteral("platform");
        snapshot->series[0].blockedUntil = {0, 0, fixture::at(180), 0, 0};
        snapshot->series[0].acceptedUsage = snapshot->series[0].usage;
        dashboard.applySnapshot(snapshot);
        dashboard.flushPendingSnapshot();
        dashboard.showBucket(0);
        widgets::BucketPage *page = dashboard.bucketPage();
        QVERIFY2(page->safeSendText().startsWith(u"safe to send in 1 min 0 s: platform frees up"),
                 qPrintable(page->safeSendText()));
        // At 150 s the bin from 120 s says "no room until 180 s", and a Retry-After ran until
        // 150 s (over): 30 s.
        dashboard.timeRange()->setReplayInstant(fixture::at(150));
        QVERIFY2(page->safeSendText().startsWith(u"safe to send in 30 s: platform frees up"),
                 qPrintable(page->safeSendText()));
        QVERIFY(page->safeSendText().contains(u"(replay)"));
        // At 130 s the Retry-After (until 150 s) is earlier than the window: still the window.
        dashboard.timeRange()->setReplayInstant(fixture::at(130));
        QVERIFY2(page->safeSendText().startsWith(u"safe to send in 50 s"),
                 qPrintable(page->safeSendText()));
        dashboard.timeRange()->setReplayInstant(fixture::at(250));
        QVERIFY2(page->safeSendText().startsWith(u"safe to send now"),
                 qPrintable(page->safeSendText()));
    }
};

QTEST_MAIN(TestOverviewPage)
#include "tst_overviewpage.moc"
