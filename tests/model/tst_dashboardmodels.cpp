// The dashboard's item models against a hand-built snapshot with known values: shape, fills,
// replay at an instant, batched updates (no reset for value changes), paging of the events
// model. Every model runs under QAbstractItemModelTester.
#include "../widgets/snapshotfixture.h"
#include "models/alertsmodel.h"
#include "models/breakertransitionsmodel.h"
#include "models/bucketgridmodel.h"
#include "models/displaynames.h"
#include "models/eventsmodel.h"
#include "models/ingestmodels.h"
#include "models/snapshotmath.h"
#include "models/throttletablemodel.h"
#include "models/timerange.h"
#include "models/workspaceeventsource.h"
#include "store/workspace.h"
#include "store/workspacewriter.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThreadPool>

using namespace ts;
using namespace ts::models;

namespace {
int rowOf(const BucketGridModel &model, const QString &identity)
{
    for (int row = 0; row < model.rowCount(); ++row)
        if (model.identityAt(row) == identity)
            return row;
    return -1;
}
int columnOf(const BucketGridModel &model, const QString &limit)
{
    for (int column = 1; column < model.columnCount(); ++column)
        if (model.limitAt(column) == limit)
            return column;
    return -1;
}
const QString kMigrator = QStringLiteral("sp-migrator");
const QString kAlice = QStringLiteral("note-bridge+alice@contoso.com");
const QString kBob = QStringLiteral("note-bridge+bob@contoso.com");
const QString kPlatform = QStringLiteral("fabric/platform");
const QString kPerApp = QStringLiteral("graph/per-app");

std::vector<RequestEvent> makeEvents(int count)
{
    std::vector<RequestEvent> events;
    for (int i = 0; i < count; ++i) {
        RequestEvent event;
        event.tsMs = fixture::at(i);
        event.identity = i % 2 == 0 ? kMigrator : kAlice;
        event.status = i % 10 == 0 ? 429 : 200;
        event.errorCode = i % 10 == 0 ? QStringLiteral("RequestBlocked") : QString();
        event.url = QStringLiteral("https://api.fabric.microsoft.com/v1/items/%1").arg(i);
        event.lane = i % 3 == 0 ? QStringLiteral("background") : QStringLiteral("foreground");
        events.push_back(event);
    }
    return events;
}
} // namespace

class TestDashboardModels : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void gridShape()
    {
        BucketGridModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSnapshot(fixture::smallSnapshot());
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.columnCount(), 3);
        QCOMPARE(model.headerData(1, Qt::Horizontal, Qt::DisplayRole).toString(), kPlatform);
        QCOMPARE(model.headerData(2, Qt::Horizontal, Qt::DisplayRole).toString(), kPerApp);
        // bob has no fabric/platform bucket: an empty cell, not a 0 % one.
        const QModelIndex empty = model.index(rowOf(model, kBob), columnOf(model, kPlatform));
        QVERIFY(!empty.data(BucketGridModel::FillRole).isValid());
        QCOMPARE(empty.data(BucketGridModel::ScopeIndexRole).toInt(), -1);
        QCOMPARE(empty.data(Qt::DisplayRole).toString(), QString());
        const QModelIndex full = model.index(rowOf(model, kBob), columnOf(model, kPerApp));
        QCOMPARE(full.data(Qt::DisplayRole).toString(), QStringLiteral("100 %"));
        QCOMPARE(full.data(BucketGridModel::ScopeIndexRole).toInt(), 4);
        const QString tip = model.index(rowOf(model, kMigrator), columnOf(model, kPlatform))
                                .data(Qt::ToolTipRole)
                                .toString();
        QVERIFY2(tip.contains(QStringLiteral("200 per 60 s")), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("2026-02-18T22:51:00.000Z")), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("Effective limit")), qPrintable(tip));
    }

    void currentFills_data()
    {
        QTest::addColumn<QString>("identity");
        QTest::addColumn<QString>("limit");
        QTest::addColumn<double>("fill");
        QTest::newRow("migrator platform") << kMigrator << kPlatform << 0.85;
        QTest::newRow("migrator per-app") << kMigrator << kPerApp << 0.5;
        QTest::newRow("alice platform") << kAlice << kPlatform << 0.1;
        QTest::newRow("alice per-app") << kAlice << kPerApp << 0.999;
        QTest::newRow("bob per-app") << kBob << kPerApp << 1.0;
    }
    void currentFills()
    {
        QFETCH(QString, identity);
        QFETCH(QString, limit);
        QFETCH(double, fill);
        BucketGridModel model;
        model.setSnapshot(fixture::smallSnapshot());
        const QModelIndex cell = model.index(rowOf(model, identity), columnOf(model, limit));
        QCOMPARE(cell.data(BucketGridModel::FillRole).toDouble(), fill);
    }

    // Replay: the fill at t is the usage step function at t over the capacity.
    void replayFills_data()
    {
        QTest::addColumn<QString>("identity");
        QTest::addColumn<QString>("limit");
        QTest::addColumn<qint64>("seconds");
        QTest::addColumn<double>("fill");
        QTest::newRow("before first sample") << kMigrator << kPlatform << qint64(-10) << 0.0;
        QTest::newRow("at first sample") << kMigrator << kPlatform << qint64(0) << 0.0;
        QTest::newRow("just before step") << kMigrator << kPlatform << qint64(59) << 0.0;
        QTest::newRow("on step") << kMigrator << kPlatform << qint64(60) << 0.5;
        QTest::newRow("full") << kMigrator << kPlatform << qint64(150) << 1.0;
        QTest::newRow("draining") << kMigrator << kPlatform << qint64(200) << 0.75;
        QTest::newRow("after last") << kMigrator << kPlatform << qint64(590) << 0.85;
        QTest::newRow("bob before") << kBob << kPerApp << qint64(249) << 0.0;
        QTest::newRow("bob at") << kBob << kPerApp << qint64(250) << 1.0;
        QTest::newRow("alice mid") << kAlice << kPerApp << qint64(200) << 0.95;
    }
    void replayFills()
    {
        QFETCH(QString, identity);
        QFETCH(QString, limit);
        QFETCH(qint64, seconds);
        QFETCH(double, fill);
        BucketGridModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSnapshot(fixture::smallSnapshot());
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);
        model.setInstant(fixture::at(seconds));
        QCOMPARE(resets.count(), 0);
        QCOMPARE(changes.count(), 1);
        QCOMPARE(model.fillAt(rowOf(model, identity), columnOf(model, limit)), fill);
        model.setInstant(std::nullopt);
        QCOMPARE(changes.count(), 2);
    }

    // Live snapshots with new values keep the model's shape (no reset: selection and scroll
    // survive); a new identity changes the shape and resets.
    void gridBatchedUpdates()
    {
        BucketGridModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSnapshot(fixture::smallSnapshot());
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy changes(&model, &QAbstractItemModel::dataChanged);

        auto next = fixture::smallSnapshot();
        next->generation = 2;
        next->report.scopes[0].currentFill = 0.95;
        model.setSnapshot(next);
        QCOMPARE(resets.count(), 0);
        QCOMPARE(changes.count(), 1);
        QCOMPARE(model.fillAt(rowOf(model, kMigrator), columnOf(model, kPlatform)), 0.95);

        auto grown = fixture::smallSnapshot();
        grown->generation = 3;
        grown->report.scopes.append(fixture::scope(QStringLiteral("zed"), QStringLiteral("fabric"),
                                                   QStringLiteral("platform"), 200, 60));
        grown->series.emplace_back();
        model.setSnapshot(grown);
        QCOMPARE(resets.count(), 1);
        QCOMPARE(model.rowCount(), 4);
    }

    void alertsAppendOrReset()
    {
        AlertsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy added(&model, &AlertsModel::alertsAdded);
        auto alerts = fixture::smallSnapshot()->report.alerts;
        model.setAlerts(alerts.mid(0, 1));
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(added.count(), 1);
        model.setAlerts(alerts);
        QCOMPARE(inserted.count(), 2);
        QCOMPARE(inserted.last().at(1).toInt(), 1);
        QCOMPARE(added.last().first().value<QList<Alert>>().size(), 1);
        QCOMPARE(model.rowCount(), 2);
        model.setAlerts(alerts); // unchanged: nothing
        QCOMPARE(inserted.count(), 2);
        QCOMPARE(added.count(), 2);
        QCOMPARE(resets.count(), 0);
        model.setAlerts({alerts.at(1)}); // a group is gone (re-run): reset
        QCOMPARE(resets.count(), 1);
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.index(0, AlertsModel::SeverityColumn).data().toString(),
                 QStringLiteral("critical"));
        QCOMPARE(model.index(0, AlertsModel::TimeColumn).data().toString(),
                 QStringLiteral("2026-02-18T22:42:10.000Z"));
    }

    // Repeats of one kind and key are one row with a count and first/last time; a repeat
    // changes its row in place (no insert, no reset), a new key inserts one; an alert dated
    // before the newest (a retry storm is dated from its start) is folded in all the same.
    void alertsGrouped()
    {
        AlertsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy added(&model, &AlertsModel::alertsAdded);
        const QString near = QStringLiteral("near-limit");
        const QString storm = QStringLiteral("retry-storm");
        const QString key =
            QStringLiteral("0f8fad5b-d9cb-469f-a165-70867728950e+alice@contoso.com");
        QList<Alert> alerts;
        for (int i = 0; i < 47; ++i)
            alerts.append({near, QStringLiteral("warning"), fixture::at(10 * i), key,
                           QStringLiteral("fill %1").arg(i)});
        alerts.append({storm, QStringLiteral("critical"), fixture::at(100), key, QString()});
        model.setAlerts(alerts);
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(added.last().first().value<QList<Alert>>().size(), 48);
        const int nearRow = model.rowOfGroup(AlertsModel::groupKey(near, key));
        QVERIFY(nearRow >= 0);
        QCOMPARE(model.index(nearRow, AlertsModel::CountColumn).data().toString(),
                 QStringLiteral("47"));
        QCOMPARE(model.index(nearRow, 0).data(AlertsModel::CountRole).toInt(), 47);
        QCOMPARE(model.index(nearRow, 0).data(AlertsModel::FirstMsRole).toLongLong(),
                 fixture::at(0));
        QCOMPARE(model.index(nearRow, 0).data(AlertsModel::TimeMsRole).toLongLong(),
                 fixture::at(460));
        QCOMPARE(model.index(nearRow, AlertsModel::DetailColumn).data().toString(),
                 QStringLiteral("fill 46"));
        // Short key on screen, the full one for tooltips and exports.
        QCOMPARE(model.index(nearRow, AlertsModel::KeyColumn).data().toString(),
                 QStringLiteral("alice@contoso.com"));
        QCOMPARE(model.index(nearRow, AlertsModel::KeyColumn).data(FullTextRole).toString(), key);

        // One more near-limit, and an earlier-dated storm for a new key, in time order.
        const int insertsBefore = inserted.count();
        QList<Alert> more = alerts;
        more.append(
            {near, QStringLiteral("warning"), fixture::at(470), key, QStringLiteral("fill 47")});
        more.insert(0, {storm, QStringLiteral("critical"), fixture::at(1), QStringLiteral("bob"),
                        QString()});
        model.setAlerts(more);
        QCOMPARE(resets.count(), 0);
        QCOMPARE(inserted.count(), insertsBefore + 1);
        QVERIFY(changed.count() >= 1);
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.rowOfGroup(AlertsModel::groupKey(near, key)), nearRow);
        QCOMPARE(model.index(nearRow, 0).data(AlertsModel::CountRole).toInt(), 48);
        // The same user without the application: both names say which is which now.
        model.setAlerts(more + QList<Alert>{{near, QStringLiteral("warning"), fixture::at(480),
                                             QStringLiteral("alice@contoso.com"), QString()}});
        QCOMPARE(model.rowCount(), 4);
        QCOMPARE(model.index(nearRow, AlertsModel::KeyColumn).data().toString(),
                 QStringLiteral("alice@contoso.com (0f8fad5b…)"));
        QCOMPARE(model.index(3, AlertsModel::KeyColumn).data().toString(),
                 QStringLiteral("alice@contoso.com"));
        model.setAlerts(more); // a group gone: a reset, rows in a new order
        QCOMPARE(resets.count(), 1);
        QCOMPARE(
            model.index(model.rowOfGroup(AlertsModel::groupKey(near, key)), AlertsModel::KeyColumn)
                .data()
                .toString(),
            QStringLiteral("alice@contoso.com"));
        const auto fresh = added.at(added.count() - 2).first().value<QList<Alert>>();
        QCOMPARE(fresh.size(), 2);
        QCOMPARE(model.alerts().size(), 50);
    }

    // The one alert a notification names: the most severe, then the gravest kind, then the
    // newest; never simply the last of the batch.
    void mostSevereAlert_data()
    {
        QTest::addColumn<QStringList>("alerts"); // "severity kind atSeconds"
        QTest::addColumn<int>("expected");
        QTest::newRow("critical over a later warning")
            << QStringList{u"critical retry-storm 10"_qs, u"warning near-limit 20"_qs} << 0;
        QTest::newRow("lost work over a storm")
            << QStringList{u"critical lost-work 10"_qs, u"critical retry-storm 20"_qs} << 0;
        QTest::newRow("newest of equals")
            << QStringList{u"critical retry-storm 10"_qs, u"critical retry-storm 30"_qs,
                           u"critical retry-storm 20"_qs}
            << 1;
        QTest::newRow("warning kinds")
            << QStringList{u"warning near-limit 50"_qs, u"warning capacity 10"_qs} << 1;
        QTest::newRow("empty") << QStringList{} << -1;
    }
    void mostSevereAlert()
    {
        QFETCH(QStringList, alerts);
        QFETCH(int, expected);
        QList<Alert> list;
        for (const QString &spec : alerts) {
            const QStringList parts = spec.split(u' ');
            list.append({parts.at(1), parts.at(0), fixture::at(parts.at(2).toInt()),
                         QStringLiteral("k"), QString()});
        }
        QCOMPARE(int(AlertsModel::mostSevere(list)), expected);
    }

    void breakerTransitions()
    {
        BreakerTransitionsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setTransitions(fixture::smallSnapshot()->report.breakerTransitions);
        QCOMPARE(model.rowCount(), 5);
        QCOMPARE(model.index(2, BreakerTransitionsModel::ToColumn).data().toString(),
                 QStringLiteral("half-open"));
        QCOMPARE(model.index(2, 0).data(BreakerTransitionsModel::TimeMsRole).toLongLong(),
                 fixture::at(185));
        QCOMPARE(model.index(0, BreakerTransitionsModel::ReasonColumn).data().toString(),
                 QStringLiteral("429 RequestBlocked, cooldown 55 s"));
    }

    void throttleTable()
    {
        ThrottleTableModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setThrottles(fixture::smallSnapshot()->report.throttles);
        // identities x (CapacityLimitExceeded, RequestBlocked) + total
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.columnCount(), 4);
        QCOMPARE(model.errorCodeAt(1), QStringLiteral("CapacityLimitExceeded"));
        QCOMPARE(model.errorCodeAt(2), QStringLiteral("RequestBlocked"));
        QCOMPARE(model.identityAt(1), kMigrator);
        QCOMPARE(model.countAt(1, 1), qint64(1));
        QCOMPARE(model.countAt(1, 2), qint64(6));
        QCOMPARE(model.countAt(1, 3), qint64(7));
        QCOMPARE(model.countAt(0, 1), qint64(0));
        QCOMPARE(model.index(0, 1).data().toString(), QString()); // zero shows blank
        QCOMPARE(model.headerData(3, Qt::Horizontal, Qt::DisplayRole).toString(),
                 QStringLiteral("Total"));
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        ThrottleSummary more = fixture::smallSnapshot()->report.throttles;
        more.byIdentityAndErrorCode[kMigrator][QStringLiteral("RequestBlocked")] = 10;
        model.setThrottles(more);
        QCOMPARE(resets.count(), 0);
        QCOMPARE(model.countAt(1, 3), qint64(11));
    }

    void eventsPaging()
    {
        EventsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSource(std::make_shared<MemoryEventSource>(makeEvents(1000)));
        QCOMPARE(model.matchingCount(), qint64(1000));
        QCOMPARE(model.rowCount(), EventsModel::kPageSize); // one page, not everything
        QVERIFY(model.canFetchMore({}));
        model.fetchMore({});
        QCOMPARE(model.rowCount(), 2 * EventsModel::kPageSize);
        while (model.canFetchMore({}))
            model.fetchMore({});
        QCOMPARE(model.rowCount(), 1000);
        QCOMPARE(model.index(999, EventsModel::TimeColumn).data().toString(),
                 formatIsoMs(fixture::at(999)));
    }

    // Notes and breaker transitions in a log are rows too: they say what they are, and a note
    // without an identity is not shown as a request from "unknown".
    void eventsNotesAndBreakerRows()
    {
        std::vector<RequestEvent> events = makeEvents(2);
        events[0].type = EventType::Annotation;
        events[0].identity.clear();
        events[0].method.clear();
        events[0].url.clear();
        events[0].text = QStringLiteral("migration started");
        events[1].type = EventType::Breaker;
        events[1].identity.clear();
        events[1].breakerScope = QStringLiteral("graph");
        events[1].breakerState = QStringLiteral("open");
        EventsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSource(std::make_shared<MemoryEventSource>(std::move(events)));
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.index(0, EventsModel::MethodColumn).data().toString(), u"note"_qs);
        QCOMPARE(model.index(0, EventsModel::UrlColumn).data().toString(), u"migration started"_qs);
        QCOMPARE(model.index(0, EventsModel::IdentityColumn).data().toString(), QString());
        QCOMPARE(model.index(1, EventsModel::MethodColumn).data().toString(), u"breaker"_qs);
        QCOMPARE(model.index(1, EventsModel::UrlColumn).data().toString(),
                 QStringLiteral("graph \u2192 open"));
    }

    // Two events of one identity in one millisecond: each row shows its own line's cause, and
    // a row whose line has none shows none (not its neighbour's).
    void eventsCauseByLine()
    {
        std::vector<RequestEvent> events = makeEvents(3);
        for (int i = 0; i < 3; ++i) {
            events[size_t(i)].tsMs = events[0].tsMs;
            events[size_t(i)].identity = events[0].identity;
            events[size_t(i)].line = 10 + i;
        }
        auto causes = std::make_shared<std::vector<EventCause>>(2);
        (*causes)[0] = {
            events[0].tsMs, events[0].identity, 10, ThrottleCause::RetryAfter, {}, true};
        (*causes)[1] = {events[0].tsMs, events[0].identity, 11, ThrottleCause::Capacity, {}, true};
        EventsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSource(std::make_shared<MemoryEventSource>(std::move(events)));
        model.setEventCauses(causes);
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.index(0, 0).data(EventsModel::CauseRole).toString(), u"retry-after"_qs);
        QCOMPARE(model.index(1, 0).data(EventsModel::CauseRole).toString(), u"capacity"_qs);
        QCOMPARE(model.index(2, 0).data(EventsModel::CauseRole).toString(), u"none"_qs);
    }

    void eventsFilter_data()
    {
        QTest::addColumn<QString>("identity");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("errorCode");
        QTest::addColumn<QString>("lane");
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("expected");
        QTest::newRow("none") << QString() << 0 << QString() << QString() << QString()
                              << qint64(100);
        QTest::newRow("identity") << kMigrator << 0 << QString() << QString() << QString()
                                  << qint64(50);
        QTest::newRow("status") << QString() << 429 << QString() << QString() << QString()
                                << qint64(10);
        QTest::newRow("code") << QString() << 0 << QStringLiteral("RequestBlocked") << QString()
                              << QString() << qint64(10);
        QTest::newRow("lane") << QString() << 0 << QString() << QStringLiteral("background")
                              << QString() << qint64(34);
        QTest::newRow("text in url")
            << QString() << 0 << QString() << QString() << QStringLiteral("ITEMS/42") << qint64(1);
        QTest::newRow("combined") << kMigrator << 429 << QString() << QString() << QString()
                                  << qint64(10);
        // Issue 30.10: a part of the name, in any case ("bob" finds bob@contoso.com).
        QTest::newRow("part of the identity, any case")
            << QStringLiteral("ALICE@") << 0 << QString() << QString() << QString() << qint64(50);
    }
    void eventsFilter()
    {
        QFETCH(QString, identity);
        QFETCH(int, status);
        QFETCH(QString, errorCode);
        QFETCH(QString, lane);
        QFETCH(QString, text);
        QFETCH(qint64, expected);
        EventsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSource(std::make_shared<MemoryEventSource>(makeEvents(100)));
        EventQuery query;
        query.identity = identity;
        if (status != 0)
            query.status = status;
        query.errorCode = errorCode;
        query.lane = lane;
        query.text = text;
        model.setQuery(query);
        QCOMPARE(model.matchingCount(), expected);
        QCOMPARE(model.rowCount(), static_cast<int>(expected));
        for (int row = 0; row < model.rowCount(); ++row)
            QVERIFY(query.matches(model.eventAt(row)));
    }

    // A live feed: new events in the source appear after the loaded rows (an insertion, not a
    // reset, so the operator's selection and scroll position stay), filtered like the rest.
    void liveTailAppends()
    {
        EventsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto source = std::make_shared<MemoryEventSource>(makeEvents(100));
        model.setSource(source);
        EventQuery query;
        query.status = 429;
        model.setQuery(query);
        const int before = model.rowCount();
        const qint64 lastRowId =
            model.index(before - 1, 0).data(EventsModel::RowIdRole).toLongLong();
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy inserts(&model, &QAbstractItemModel::rowsInserted);
        std::vector<RequestEvent> more = makeEvents(50);
        qint64 newThrottles = 0;
        for (const RequestEvent &event : more)
            newThrottles += query.matches(event) ? 1 : 0;
        QVERIFY(newThrottles > 0);
        source->append(std::move(more));
        model.refreshTail();
        QCOMPARE(resets.count(), 0);
        QCOMPARE(inserts.count(), 1);
        QCOMPARE(model.rowCount(), before + int(newThrottles));
        QCOMPARE(model.matchingCount(), qint64(before) + newThrottles);
        QCOMPARE(model.index(before - 1, 0).data(EventsModel::RowIdRole).toLongLong(), lastRowId);
        for (int row = before; row < model.rowCount(); ++row)
            QVERIFY(query.matches(model.eventAt(row)));
        // Nothing new: nothing changes.
        model.refreshTail();
        QCOMPARE(inserts.count(), 1);
    }

    // Over a real workspace: pages by keyset, the count arrives from a background thread, and
    // a substring search is not counted on the GUI thread at all.
    void workspaceEvents()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("ws.db"));
        {
            Workspace workspace;
            QVERIFY2(workspace.open(path), qPrintable(workspace.errorString()));
            const qint64 sourceId = workspace.addSource(QStringLiteral("t.ndjson"),
                                                        QStringLiteral("ndjson"), 0, 0, "t");
            QVERIFY(sourceId > 0);
            WorkspaceWriter writer;
            QVERIFY2(writer.start(path), qPrintable(writer.errorString()));
            WriteBatch batch;
            batch.sourceId = sourceId;
            for (const RequestEvent &event : makeEvents(1000))
                batch.events.append(event);
            QVERIFY(writer.submit(std::move(batch)));
            QVERIFY2(writer.finish(), qPrintable(writer.errorString()));
        }
        QString error;
        auto source = WorkspaceEventSource::open(path, &error);
        QVERIFY2(source, qPrintable(error));
        EventsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy counted(&model, &EventsModel::matchingCountChanged);
        model.setSource(source);
        QCOMPARE(model.rowCount(), EventsModel::kPageSize);
        if (model.isCounting())
            QVERIFY(counted.wait(5000));
        QCOMPARE(model.matchingCount(), qint64(1000));
        while (model.canFetchMore({}))
            model.fetchMore({});
        QCOMPARE(model.rowCount(), 1000);

        EventQuery throttles;
        throttles.status = 429;
        model.setQuery(throttles);
        if (model.isCounting())
            QVERIFY(counted.wait(5000));
        QCOMPARE(model.matchingCount(), qint64(100));
        QCOMPARE(model.rowCount(), 100);
        QCOMPARE(model.eventAt(0).errorCode, QStringLiteral("RequestBlocked"));

        EventQuery text;
        text.text = QStringLiteral("ITEMS/999"); // case-insensitive substring
        // Nor is its first page fetched there: it arrives from a worker thread.
        QSignalSpy fetching(&model, &EventsModel::fetchingChanged);
        model.setQuery(text);
        QVERIFY(!model.isCounting());
        QCOMPARE(model.matchingCount(), qint64(-1));
        QVERIFY(model.isFetching());
        QCOMPARE(model.rowCount(), 0);
        QTRY_VERIFY_WITH_TIMEOUT(!model.isFetching(), 5000);
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.eventAt(0).url,
                 QStringLiteral("https://api.fabric.microsoft.com/v1/items/999"));
        QCOMPARE(fetching.count(), 2);    // started, finished
        QVERIFY(!model.canFetchMore({})); // one match: the search is exhausted

        // Two exact values combined: their pages come from the worker too (each value is
        // common, the combination may be rare), and every row has both.
        EventQuery combined;
        combined.identity = kMigrator;
        combined.lane = QStringLiteral("background");
        model.setQuery(combined);
        QVERIFY(model.isFetching());
        QTRY_VERIFY_WITH_TIMEOUT(!model.isFetching(), 5000);
        while (model.canFetchMore({})) {
            model.fetchMore({});
            QTRY_VERIFY_WITH_TIMEOUT(!model.isFetching(), 5000);
        }
        QCOMPARE(model.rowCount(), 167); // i % 6 == 0 for i < 1000
        for (int row = 0; row < model.rowCount(); ++row)
            QVERIFY(combined.matches(model.eventAt(row)));

        // A query changed while a page is on its way: the old page is dropped, not shown.
        EventQuery first;
        first.text = QStringLiteral("items/1");
        EventQuery second;
        second.text = QStringLiteral("items/2");
        model.setQuery(first);
        model.setQuery(second);
        QTRY_VERIFY_WITH_TIMEOUT(!model.isFetching(), 5000);
        QTest::qWait(50); // let a stale page arrive, if it were going to be shown
        QVERIFY(model.rowCount() > 0);
        for (int row = 0; row < model.rowCount(); ++row)
            QVERIFY(second.matches(model.eventAt(row)));

        QVERIFY(!WorkspaceEventSource::open(dir.filePath(QStringLiteral("missing.db")), &error));
        QVERIFY(!error.isEmpty());
    }

    // Another connection commits rows while the model's page or count is on its way from a
    // worker, read before that commit: the refresh asked meanwhile is not dropped, it runs when
    // the page or count arrives, and the new rows and the new count show.
    void workspaceTailWhileBusy_data()
    {
        QTest::addColumn<QString>("text");
        QTest::newRow("count on its way") << QString();
        QTest::newRow("search page on its way") << QStringLiteral("items/");
    }
    void workspaceTailWhileBusy()
    {
        QFETCH(QString, text);
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("ws.db"));
        qint64 sourceId = 0;
        {
            Workspace workspace;
            QVERIFY2(workspace.open(path), qPrintable(workspace.errorString()));
            sourceId = workspace.addSource(QStringLiteral("t.ndjson"), QStringLiteral("ndjson"), 0,
                                           0, "t");
            QVERIFY(sourceId > 0);
        }
        auto commit = [&](int count) {
            WorkspaceWriter writer; // a connection of its own, as another process has
            QVERIFY2(writer.start(path), qPrintable(writer.errorString()));
            WriteBatch batch;
            batch.sourceId = sourceId;
            for (const RequestEvent &event : makeEvents(count))
                batch.events.append(event);
            QVERIFY(writer.submit(std::move(batch)));
            QVERIFY2(writer.finish(), qPrintable(writer.errorString()));
        };
        commit(100);
        QString error;
        auto source = WorkspaceEventSource::open(path, &error);
        QVERIFY2(source, qPrintable(error));
        EventsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        EventQuery query;
        query.text = text;
        model.setQuery(query);
        model.setSource(source);
        QVERIFY(model.isCounting() || model.isFetching());
        // The worker has read the workspace; its answer waits in this thread's event queue.
        QThreadPool::globalInstance()->waitForDone();
        commit(50);
        model.refreshTail(); // while the answer read before that commit is still on its way
        QSignalSpy counted(&model, &EventsModel::matchingCountChanged);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        while (model.rowCount() < 150 && inserted.wait(5000)) {
        }
        QCOMPARE(model.rowCount(), 150);
        if (text.isEmpty()) {
            while (model.matchingCount() != 150 && counted.wait(5000)) {
            }
            QCOMPARE(model.matchingCount(), qint64(150));
        }
    }

    void eventsTimeWindow()
    {
        EventsModel model;
        model.setSource(std::make_shared<MemoryEventSource>(makeEvents(100)));
        EventQuery query;
        query.fromMs = fixture::at(10);
        query.toMs = fixture::at(20);
        model.setQuery(query);
        QCOMPARE(model.rowCount(), 10);
        QCOMPARE(model.eventAt(0).tsMs, fixture::at(10));
        QCOMPARE(model.eventAt(9).tsMs, fixture::at(19));
    }

    void detailMasksSecrets()
    {
        RequestEvent event;
        event.method = QStringLiteral("GET");
        event.url = QStringLiteral("https://graph.microsoft.com/v1.0/me");
        event.status = 429;
        event.headers.set(QStringLiteral("Authorization"), QStringLiteral("Bearer eyJabc"));
        event.headers.set(QStringLiteral("Retry-After"), QStringLiteral("5"));
        event.body = QStringLiteral("{\"error\":{\"code\":\"TooManyRequests\"}}");
        const QString text = eventDetailText(event);
        QVERIFY(!text.contains(QStringLiteral("eyJabc")));
        QVERIFY(text.contains(QStringLiteral("authorization: [redacted]")));
        QVERIFY(text.contains(QStringLiteral("retry-after: 5")));
        QVERIFY(text.contains(QStringLiteral("TooManyRequests")));
    }

    void ingestSilence()
    {
        IngestSourcesModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        const qint64 now = fixture::at(1000);
        IngestSourceStatus quiet;
        quiet.path = QStringLiteral("http");
        quiet.live = true;
        quiet.lastEventReceivedMs = now - 42'000;
        IngestSourceStatus never;
        never.path = QStringLiteral("tail.log");
        model.setSources({quiet, never});
        model.setNow(now);
        QCOMPARE(model.index(0, IngestSourcesModel::LastEventColumn).data().toString(),
                 QStringLiteral("42 s ago"));
        QCOMPARE(model.index(0, 0).data(IngestSourcesModel::SilenceSecondsRole).toLongLong(),
                 qint64(42));
        QCOMPARE(model.index(1, IngestSourcesModel::LastEventColumn).data().toString(),
                 QStringLiteral("never"));
        model.setNow(now + 3 * 60'000);
        QCOMPARE(model.index(0, IngestSourcesModel::LastEventColumn).data().toString(),
                 QStringLiteral("3 min 42 s ago"));

        MalformedRecordsModel malformed;
        QAbstractItemModelTester malformedTester(
            &malformed, QAbstractItemModelTester::FailureReportingMode::QtTest);
        malformed.setRecords(
            {redact::malformedRecord(QStringLiteral("a.ndjson"), 17, QStringLiteral("not JSON"))});
        QCOMPARE(malformed.index(0, 0).data().toString(), QStringLiteral("a.ndjson:17"));
        QCOMPARE(malformed.index(0, 1).data().toString(), QStringLiteral("not JSON"));
    }

    // Issue 30.12: a file read to its end and followed since is "following", not "finished".
    void followedFileIsFollowing()
    {
        IngestSourcesModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        IngestSourceStatus followed;
        followed.path = QStringLiteral("/var/log/app.ndjson");
        followed.finished = true; // read to its end
        followed.followed = true; // and followed since
        IngestSourceStatus read = followed;
        read.path = QStringLiteral("/tmp/once.ndjson");
        read.followed = false; // Follow Files switched off
        model.setSources({followed, read});
        model.setNow(fixture::at(1000));
        QCOMPARE(model.index(0, IngestSourcesModel::StateColumn).data().toString(),
                 QStringLiteral("following"));
        QCOMPARE(model.index(1, IngestSourcesModel::StateColumn).data().toString(),
                 QStringLiteral("finished"));
    }

    void timeRangeFollowAndReplay()
    {
        TimeRange range;
        QSignalSpy changed(&range, &TimeRange::rangeChanged);
        range.setBounds(fixture::at(0), fixture::at(600));
        QCOMPARE(range.startMs(), fixture::at(0));
        QCOMPARE(range.endMs(), fixture::at(600));
        QVERIFY(range.isFollowing());
        // The operator zooms to the last minute; following keeps that width as data arrives.
        range.setRange(fixture::at(540), fixture::at(600));
        QVERIFY(range.isFollowing());
        range.setBounds(fixture::at(0), fixture::at(660));
        QCOMPARE(range.startMs(), fixture::at(600));
        QCOMPARE(range.endMs(), fixture::at(660));
        // Looking back stops following; new data no longer moves the view.
        range.setRange(fixture::at(100), fixture::at(200));
        QVERIFY(!range.isFollowing());
        range.setBounds(fixture::at(0), fixture::at(720));
        QCOMPARE(range.startMs(), fixture::at(100));
        // Replay implies not following; following again clears the replay instant.
        range.setFollowing(true);
        range.setReplayInstant(fixture::at(150));
        QVERIFY(!range.isFollowing());
        range.setFollowing(true);
        QVERIFY(!range.replayInstant());
        QCOMPARE(range.endMs(), fixture::at(720));
        QVERIFY(changed.count() >= 4);
    }

    void durations_data()
    {
        QTest::addColumn<qint64>("ms");
        QTest::addColumn<QString>("text");
        QTest::newRow("sub-second") << qint64(400) << QStringLiteral("0.4 s");
        QTest::newRow("seconds") << qint64(42'000) << QStringLiteral("42 s");
        QTest::newRow("minutes") << qint64(125'000) << QStringLiteral("2 min 5 s");
        QTest::newRow("hours") << qint64(7'500'000) << QStringLiteral("2 h 5 min");
        QTest::newRow("days") << qint64(3 * 86'400'000LL + 3'600'000) << QStringLiteral("3 d 1 h");
    }
    void durations()
    {
        QFETCH(qint64, ms);
        QFETCH(QString, text);
        QCOMPARE(formatDuration(ms), text);
    }
};

QTEST_GUILESS_MAIN(TestDashboardModels)
#include "tst_dashboardmodels.moc"
