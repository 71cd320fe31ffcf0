// The forecast of a live feed (issue 33.3): at the current rate, when a limit will be reached
// ("platform limit in ~20.0 s"), raised as a limit-ahead alert before the first 429 and kept
// once raised; the completed work and the accepted rate; and, given the remaining work, the
// finish at the current rate and at the advised pace.

#include "engine/analysis.h"
#include "engine/forecast.h"

#include <QJsonObject>
#include <QTest>

using namespace ts;

namespace {

constexpr qint64 kBase = 1771454640000; // a minute boundary

PolicySet policyOf(const QByteArray &limits)
{
    QString error;
    auto policy = Policy::fromJsonBytes(
        R"({"name": "api", "match": {"service": "^api$"}, "limits": )" + limits + "}", u"test"_qs,
        &error);
    Q_ASSERT_X(policy, "policyOf", qPrintable(error));
    PolicySet set;
    set.add(*policy);
    return set;
}

// `perSecond` requests a second for `seconds`, all accepted (or the last `refused` refused).
void send(Analysis &analysis, const QString &identity, int perSecond, int seconds, qint64 from,
          int refused = 0)
{
    const int total = perSecond * seconds;
    for (int i = 0; i < total; ++i) {
        RequestEvent event;
        event.service = u"api"_qs;
        event.identity = identity;
        event.method = u"GET"_qs;
        event.url = u"https://api.example/items/"_qs + QString::number(i);
        event.tsMs = from + qint64(i) * 1000 / perSecond;
        event.status = i >= total - refused ? 429 : 200;
        analysis.add(event);
    }
}

const KeyForecast *forecastOf(const QList<KeyForecast> &forecasts, const QString &key)
{
    for (const KeyForecast &entry : forecasts) {
        if (entry.key == key)
            return &entry;
    }
    return nullptr;
}

// The limit-ahead alerts of the snapshot's forecast, as report --remaining raises them, kept
// in `raised` from one call to the next.
QList<Alert> limitAhead(const DashboardSnapshot &snapshot, ForecastAlerts &raised)
{
    raised.raise(forecast(snapshot, {}), snapshot.report.lastMs.value_or(0));
    return raised.raised;
}

} // namespace

class TestForecast : public QObject
{
    Q_OBJECT

private slots:
    void limitAheadBeforeTheFirst429_data();
    void limitAheadBeforeTheFirst429();
    void alertRaisedOnceAndKept();
    void finishWithTheRemainingWork();
};

void TestForecast::limitAheadBeforeTheFirst429_data()
{
    QTest::addColumn<QByteArray>("limits");
    QTest::addColumn<int>("perSecond");
    QTest::addColumn<qint64>("expectedInMs"); // -1: no limit ahead
    // 200 a minute: 5 a second fills it in 40 s; 20 s in, 100 used: full in 20 s.
    QTest::newRow("fixed window, 5/s") << QByteArray(R"([{"name": "platform",
        "algorithm": "fixed-window", "capacity": 200, "windowSeconds": 60}])")
                                       << 5 << qint64(20000);
    QTest::newRow("fixed window, 2/s never fills it") << QByteArray(R"([{"name": "platform",
        "algorithm": "fixed-window", "capacity": 200, "windowSeconds": 60}])")
                                                      << 2 << qint64(-1);
    // 100 tokens, 2 a second: 5 a second drains 3 a second; 20 s in, 40 left: empty in 13.3 s.
    QTest::newRow("token bucket, 5/s") << QByteArray(R"([{"name": "tokens",
        "algorithm": "token-bucket", "capacity": 100, "refillPerSecond": 2}])")
                                       << 5 << qint64(13333);
}

void TestForecast::limitAheadBeforeTheFirst429()
{
    QFETCH(QByteArray, limits);
    QFETCH(int, perSecond);
    QFETCH(qint64, expectedInMs);
    Analysis analysis(policyOf(limits));
    send(analysis, u"alice"_qs, perSecond, 20, kBase);
    const DashboardSnapshot snapshot = analysis.snapshot();
    const qint64 now = *snapshot.report.lastMs;
    const QList<KeyForecast> forecasts = forecast(snapshot, {});
    const KeyForecast *alice = forecastOf(forecasts, u"alice"_qs);
    QVERIFY(alice);
    QCOMPARE(alice->completed, qint64(perSecond * 20));
    QVERIFY2(std::abs(alice->requestsPerSecond - perSecond) < 0.2,
             qPrintable(QString::number(alice->requestsPerSecond)));
    ForecastAlerts raised;
    if (expectedInMs < 0) {
        QVERIFY(!alice->limitAtMs);
        QVERIFY(limitAhead(snapshot, raised).isEmpty());
        return;
    }
    QVERIFY(alice->limitAtMs);
    QVERIFY2(std::abs((*alice->limitAtMs - now) - expectedInMs) <= 1500,
             qPrintable(QString::number(*alice->limitAtMs - now)));
    const QList<Alert> alerts = limitAhead(snapshot, raised);
    QCOMPARE(alerts.size(), 1);
    QCOMPARE(alerts.first().severity, u"warning"_qs);
    QCOMPARE(alerts.first().key, u"alice"_qs);
    QVERIFY2(alerts.first().detail.startsWith(alice->limit + u" limit in ~"_qs),
             qPrintable(alerts.first().detail));
    QVERIFY(alerts.first().detail.contains(u"before any 429"_qs));
}

void TestForecast::alertRaisedOnceAndKept()
{
    Analysis analysis(policyOf(R"([{"name": "platform", "algorithm": "fixed-window",
        "capacity": 200, "windowSeconds": 60}])"));
    send(analysis, u"alice"_qs, 5, 20, kBase);
    ForecastAlerts raised;
    QCOMPARE(limitAhead(analysis.snapshot(), raised).size(), 1);
    QCOMPARE(limitAhead(analysis.snapshot(), raised).size(), 1); // not raised again
    // The limit is reached, 429s come: the forecast no longer warns, the alert stays.
    send(analysis, u"alice"_qs, 5, 20, kBase + 20000, 60);
    const DashboardSnapshot later = analysis.snapshot();
    QCOMPARE(limitAhead(later, raised).size(), 1);
    QVERIFY(forecastOf(forecast(later, {}), u"alice"_qs)->throttlesInWindow > 0);
}

void TestForecast::finishWithTheRemainingWork()
{
    Analysis analysis(policyOf(R"([{"name": "platform", "algorithm": "fixed-window",
        "capacity": 200, "windowSeconds": 60}])"));
    send(analysis, u"alice"_qs, 2, 60, kBase);
    const DashboardSnapshot snapshot = analysis.snapshot();
    const qint64 now = *snapshot.report.lastMs;
    ForecastOptions options;
    options.remaining = 1200;
    const KeyForecast *alice = forecastOf(forecast(snapshot, options), u"alice"_qs);
    QVERIFY(alice && alice->finishAtCurrentMs && alice->finishAtAdvisedMs);
    QVERIFY(alice->advisedPerSecond);
    QCOMPARE(*alice->advisedPerSecond, 200.0 / 60);
    // 1,200 at 2 a second: 10 min; at the advised 200 a minute: 6 min.
    QVERIFY(std::abs((*alice->finishAtCurrentMs - now) - 600000) <= 10000);
    QCOMPARE(*alice->finishAtAdvisedMs - now, qint64(360000));
    const QJsonObject json = forecastToJson({*alice}).first().toObject();
    QCOMPARE(json.value(u"completed"_qs).toInteger(), 120);
    QVERIFY(json.value(u"finishAtAdvisedPace"_qs).toString().endsWith(u'Z'));
    QVERIFY(forecastText({*alice}, now).contains(u"paced at 200/min"_qs));
}

QTEST_GUILESS_MAIN(TestForecast)
#include "tst_forecast.moc"
