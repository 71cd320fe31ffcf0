// The breakers' timeline in the report (issue 35.1): `report --json` lists every breaker's
// transitions, `breakers[].timeline: [{"at", "from", "to", "reason"}]`, in time order, with the
// reasons the Breakers page shows, ending in the breaker's final state (a break that ended
// before the end of the data included); the text report prints each breaker's last few.

#include "engine/breakertracker.h"
#include "engine/reportformat.h"
#include "signals/throttlesignals.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace ts;

namespace {

constexpr qint64 kT0 = 1771454400000; // 2026-02-18T22:40:00Z

RequestEvent request(qint64 tMs, const QString &identity, int status)
{
    RequestEvent event;
    event.tsMs = tMs;
    event.identity = identity;
    event.service = QStringLiteral("orders");
    event.method = QStringLiteral("GET");
    event.url = QStringLiteral("/api/orders");
    event.status = status;
    return event;
}

RequestEvent logged(qint64 tMs, const QString &state)
{
    RequestEvent event;
    event.type = EventType::Breaker;
    event.tsMs = tMs;
    event.breakerScope = QStringLiteral("orders-client");
    event.breakerState = state;
    return event;
}

// Any failure opens it, for 30 s.
BreakerTracker::Parameters eager()
{
    BreakerTracker::Parameters parameters;
    parameters.model.failureRatio = 1e-6;
    parameters.model.minimumThroughput = 1;
    parameters.model.breakDurationMs = 30000;
    return parameters;
}

// alice: opens at 0, half-open at 30 s, closed by the probe at 40 s, opens at 50 s, half-open
// at 80 s by the timer (before the data ends). bob: opens at 5 s, half-open at 35 s, closed by
// the probe at 36 s, six times over (18 transitions). The client logged its own breaker twice.
ReportData scenario()
{
    BreakerTracker tracker(eager());
    QList<RequestEvent> events = {request(kT0, u"alice"_qs, 503), logged(kT0 + 1000, u"open"_qs),
                                  request(kT0 + 40000, u"alice"_qs, 200),
                                  logged(kT0 + 45000, u"closed"_qs),
                                  request(kT0 + 50000, u"alice"_qs, 500)};
    for (int i = 0; i < 6; ++i) {
        events.append(request(kT0 + 5000 + i * 40000, u"bob"_qs, 503));
        events.append(request(kT0 + 36000 + i * 40000, u"bob"_qs, 200));
    }
    std::stable_sort(events.begin(), events.end(),
                     [](const RequestEvent &a, const RequestEvent &b) { return a.tsMs < b.tsMs; });
    for (const RequestEvent &event : std::as_const(events))
        tracker.add(event, throttle::extract(event));
    ReportData report;
    report.firstMs = kT0;
    report.lastMs = kT0 + 236000;
    tracker.fillReport(&report, *report.lastMs);
    return report;
}

QJsonObject breakerNamed(const QJsonArray &breakers, const QString &scope)
{
    for (const QJsonValue &breaker : breakers) {
        if (breaker.toObject().value(u"scope").toString() == scope)
            return breaker.toObject();
    }
    return {};
}

} // namespace

class TestBreakerTimeline : public QObject
{
    Q_OBJECT

private slots:
    void jsonListsEveryTransition_data()
    {
        QTest::addColumn<QString>("scope");
        QTest::addColumn<QStringList>("expected"); // "at from->to"

        QTest::newRow("reconstructed, ending in a timer's half-open")
            << u"orders:alice"_qs
            << QStringList{u"2026-02-18T22:40:00.000Z closed->open"_qs,
                           u"2026-02-18T22:40:30.000Z open->half-open"_qs,
                           u"2026-02-18T22:40:40.000Z half-open->closed"_qs,
                           u"2026-02-18T22:40:50.000Z closed->open"_qs,
                           u"2026-02-18T22:41:20.000Z open->half-open"_qs};
        QTest::newRow("logged by the client")
            << u"orders-client"_qs
            << QStringList{u"2026-02-18T22:40:01.000Z closed->open"_qs,
                           u"2026-02-18T22:40:45.000Z open->closed"_qs};
    }
    void jsonListsEveryTransition()
    {
        QFETCH(QString, scope);
        QFETCH(QStringList, expected);
        const QJsonObject report = QJsonDocument::fromJson(reportToJson(scenario())).object();
        const QJsonObject breaker = breakerNamed(report.value(u"breakers").toArray(), scope);
        QVERIFY2(!breaker.isEmpty(), qPrintable(scope));
        const QJsonArray timeline = breaker.value(u"timeline").toArray();
        QStringList actual;
        for (const QJsonValue &value : timeline) {
            const QJsonObject t = value.toObject();
            QCOMPARE(t.keys(), (QStringList{u"at"_qs, u"from"_qs, u"reason"_qs, u"to"_qs}));
            QVERIFY2(!t.value(u"reason").toString().isEmpty(), "every transition says why");
            actual.append(t.value(u"at").toString() + u' ' + t.value(u"from").toString() +
                          u"->"_qs + t.value(u"to").toString());
        }
        QCOMPARE(actual, expected);
        // The counts stay, and agree with the timeline.
        QCOMPARE(breaker.value(u"transitions").toInt(), timeline.size());
        QCOMPARE(breaker.value(u"final").toString(),
                 timeline.last().toObject().value(u"to").toString());
    }

    void reasonsAreThePagesReasons()
    {
        const ReportData data = scenario();
        const QJsonObject report = QJsonDocument::fromJson(reportToJson(data)).object();
        const QJsonArray timeline =
            breakerNamed(report.value(u"breakers").toArray(), u"orders:alice"_qs)
                .value(u"timeline")
                .toArray();
        QStringList pageReasons; // what the Breakers page lists, in its order
        for (const BreakerTransition &transition : data.breakerTransitions) {
            if (transition.scope == u"orders:alice")
                pageReasons.append(transition.reason);
        }
        QStringList jsonReasons;
        for (const QJsonValue &value : timeline)
            jsonReasons.append(value.toObject().value(u"reason").toString());
        QCOMPARE(jsonReasons, pageReasons);
        QVERIFY2(jsonReasons.first().startsWith(u"1 of 1 requests failed"),
                 qPrintable(jsonReasons.first()));
        QCOMPARE(jsonReasons.at(2), u"probe succeeded (HTTP 200)"_qs);
    }

    void textPrintsTheLastFew()
    {
        const QString text = reportToText(scenario());
        // alice's five transitions are all shown; bob's last five of 18, after a count.
        QVERIFY2(text.contains(u"      2026-02-18T22:41:20.000Z  open -> half-open: break elapsed"),
                 qPrintable(text));
        QVERIFY2(text.contains(u"      ... 13 earlier transitions (all in report --json)"),
                 qPrintable(text));
        QVERIFY2(text.contains(u"      2026-02-18T22:43:56.000Z  half-open -> closed: probe "
                               u"succeeded (HTTP 200)"),
                 qPrintable(text));
        QVERIFY2(!text.contains(u"2026-02-18T22:40:05.000Z  closed -> open"), qPrintable(text));
        QVERIFY2(text.contains(u"      2026-02-18T22:40:01.000Z  closed -> open: logged by the "
                               u"client"),
                 qPrintable(text));
        QCOMPARE(kTextTimelineTransitions, 5);
    }
};

QTEST_GUILESS_MAIN(TestBreakerTimeline)
#include "tst_breakertimeline.moc"
