// The cockatiel and opossum presets' rules, one at a time (issue 35.2, 35.3): each row is a
// short sequence of calls whose transitions the libraries themselves gave on a fake clock (run
// through the generator's harness, tests/tools/breaker_groundtruth.mjs, with these calls), so a
// rule that goes wrong names itself here; tst_breakers_groundtruth checks the whole traffic.
// Calls: "T:S" a success at T ms, "T:F" a failure (HTTP 503), "T:R" a call the library refused
// (logged "refused": "breaker"). Transitions: "state@T".

#include "engine/breakertracker.h"
#include "signals/throttlesignals.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace ts;

namespace {

constexpr qint64 kT0 = 1771454400000; // 2026-02-18T22:40:00Z

QList<RequestEvent> calls(const QString &spec)
{
    QList<RequestEvent> events;
    for (const QString &call : spec.split(u' ', Qt::SkipEmptyParts)) {
        const QStringList parts = call.split(u':');
        RequestEvent event;
        event.tsMs = kT0 + parts.at(0).toLongLong();
        event.service = QStringLiteral("orders");
        event.identity = QStringLiteral("client");
        event.method = QStringLiteral("GET");
        event.url = QStringLiteral("/api/orders");
        if (parts.at(1) == u"R")
            event.refusedByClientBreaker = true;
        else
            event.status = parts.at(1) == u"F" ? 503 : 200;
        events.append(event);
    }
    return events;
}

} // namespace

class TestLibraryBreakers : public QObject
{
    Q_OBJECT

private slots:
    void rulesAsTheLibrariesHaveThem_data()
    {
        QTest::addColumn<QString>("breaker");
        QTest::addColumn<QString>("calls");
        QTest::addColumn<QString>("transitions");
        QTest::addColumn<int>("refused");

        QTest::newRow("cockatiel Consecutive: the threshold in a row (>=), a success restarts")
            << R"({"preset":"cockatiel","breaker":"ConsecutiveBreaker","threshold":3,
                   "halfOpenAfter":1000})"
            << "0:F 10:F 20:S 30:F 40:F 50:F"
            << "open@50" << 0;
        QTest::newRow("cockatiel Count: the threshold is strict (>)")
            << R"({"preset":"cockatiel","breaker":"CountBreaker","threshold":0.5,"size":4,
                   "minimumNumberOfCalls":4,"halfOpenAfter":1000})"
            << "0:S 10:S 20:F 30:F 40:F"
            << "open@40" << 0;
        QTest::newRow("cockatiel Count: weighed only when a failure arrives")
            << R"({"preset":"cockatiel","breaker":"CountBreaker","threshold":0.25,"size":4,
                   "minimumNumberOfCalls":4,"halfOpenAfter":1000})"
            << "0:F 10:F 20:S 30:S 40:F"
            << "open@40" << 0;
        QTest::newRow("cockatiel: half-open at the first call after halfOpenAfter")
            << R"({"preset":"cockatiel","breaker":"ConsecutiveBreaker","threshold":1,
                   "halfOpenAfter":1000})"
            << "0:F 500:R 1700:S"
            << "open@0 half-open@1700 closed@1700" << 1;
        QTest::newRow("cockatiel Count: closing restarts the window with the probe's success")
            << R"({"preset":"cockatiel","breaker":"CountBreaker","threshold":0.5,"size":3,
                   "minimumNumberOfCalls":3,"halfOpenAfter":1000})"
            << "0:F 10:F 20:F 1100:S 1200:F 1300:F"
            << "open@20 half-open@1100 closed@1100 open@1300" << 0;
        QTest::newRow("cockatiel Sampling: slots are not expired by age after a pause")
            << R"({"preset":"cockatiel","breaker":"SamplingBreaker","threshold":0.5,
                   "duration":5000,"minimumRps":1,"halfOpenAfter":1000})"
            << "0:F 100:F 200:S 300:S 60000:F"
            << "open@60000" << 0;
        QTest::newRow("opossum: buckets rotate from the breaker's first call")
            << R"({"preset":"opossum","errorThresholdPercentage":50,"rollingCountTimeout":1000,
                   "rollingCountBuckets":2,"resetTimeout":5000})"
            << "300:S 700:S 850:F 1250:F 1310:F"
            << "open@1310" << 0;
        QTest::newRow("opossum: refused calls count toward the volume and the ratio")
            << R"({"preset":"opossum","resetTimeout":1000})"
            << "0:F 100:R 300:R 500:R 700:R 900:R 1100:S 1200:F"
            << "open@0 half-open@1000 closed@1100" << 5;
        QTest::newRow("opossum: closing keeps the window")
            << R"({"preset":"opossum","resetTimeout":1000})"
            << "0:F 1100:S 1200:F"
            << "open@0 half-open@1000 closed@1100 open@1200" << 0;
        QTest::newRow("opossum: the threshold is strict (>)") << R"({"preset":"opossum"})"
                                                              << "0:S 10:F 20:F"
                                                              << "open@20" << 0;
        // The reference breaker's rule as docs/policy.md and report-json.md state it (issue
        // 35.4): a time window (Polly) is weighed only when a failure arrives, so a ratio that
        // successes reach as older ones leave opens nothing until the next failure; a count
        // window (Resilience4j) after every call.
        QTest::newRow("reference time window: opens only when a failure arrives")
            << R"({"failureRatio":0.5,"minimumThroughput":4,"samplingDurationSeconds":1,
                   "breakDurationSeconds":5})"
            << "0:S 10:S 20:S 150:F 160:F 170:S 1005:S 1010:F"
            << "open@1010" << 0;
        QTest::newRow("reference count window: weighed after every call")
            << R"({"failureRatio":0.5,"window":"count","windowCalls":4,"minimumThroughput":4,
                   "breakDurationSeconds":5})"
            << "0:F 10:F 20:S 30:S"
            << "open@30" << 0;
    }
    void rulesAsTheLibrariesHaveThem()
    {
        QFETCH(QString, breaker);
        QFETCH(QString, calls);
        QFETCH(QString, transitions);
        QFETCH(int, refused);
        QString error;
        const auto model = BreakerModel::fromJsonText(breaker, &error);
        QVERIFY2(model, qPrintable(error));
        BreakerTracker::Parameters parameters;
        parameters.model = *model;
        BreakerTracker tracker(parameters);
        const QList<RequestEvent> events = ::calls(calls);
        for (const RequestEvent &event : events)
            tracker.add(event, throttle::extract(event));
        ReportData report;
        tracker.fillReport(&report, events.last().tsMs);
        QStringList actual;
        for (const BreakerTransition &transition : std::as_const(report.breakerTransitions))
            actual.append(transition.to + u'@' + QString::number(transition.tsMs - kT0));
        QCOMPARE(actual.join(u' '), transitions);
        QCOMPARE(report.breakers.size(), 1);
        QCOMPARE(report.breakers.first().blockedRequests, qint64(refused));
    }

    // Every preset is documented: its options in docs/policy.md, its rules in
    // docs/throttle-models.md (issue 35.4).
    void presetsAreDocumented()
    {
        const QStringList presets{u"polly-v8"_qs, u"resilience4j"_qs, u"cockatiel"_qs,
                                  u"opossum"_qs};
        QCOMPARE(BreakerModel::presetNames(), presets);
        auto read = [](const char *name) {
            QFile file(QStringLiteral(TS_TEST_DATA_DIR "/../../docs/") + QLatin1StringView(name));
            return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
        };
        const QString policy = read("policy.md");
        const QString models = read("throttle-models.md");
        const qsizetype rules = models.indexOf(u"## Circuit breakers: the rules of each preset");
        QVERIFY2(rules >= 0, "throttle-models.md has no section on the presets' rules");
        for (const QString &preset : presets) {
            const QString quoted = u'`' + preset + u'`';
            QVERIFY2(policy.contains(quoted), qPrintable(preset + u" not in policy.md"_qs));
            QVERIFY2(models.indexOf(quoted, rules) > rules,
                     qPrintable(preset + u" has no rules in throttle-models.md"_qs));
        }
        for (const char *option :
             {"errorThresholdPercentage", "rollingCountBuckets", "volumeThreshold", "minimumRps",
              "minimumNumberOfCalls", "halfOpenAfter"})
            QVERIFY2(policy.contains(u'`' + QLatin1StringView(option) + u'`'), option);
    }

    // The options as the library takes them: its names, its defaults, its checks.
    void options_data()
    {
        QTest::addColumn<QString>("json");
        QTest::addColumn<QString>("error"); // empty: accepted
        QTest::addColumn<QString>("roundTrip");

        QTest::newRow("cockatiel's defaults: the README's ConsecutiveBreaker(5), 10 s")
            << R"({"preset":"cockatiel"})" << QString()
            << R"({"breaker":"ConsecutiveBreaker","halfOpenAfter":10000,"preset":"cockatiel","threshold":5})";
        QTest::newRow("CountBreaker: minimumNumberOfCalls defaults to size")
            << R"({"preset":"cockatiel","breaker":"CountBreaker","size":40})" << QString()
            << R"({"breaker":"CountBreaker","halfOpenAfter":10000,"minimumNumberOfCalls":40,"preset":"cockatiel","size":40,"threshold":0.2})";
        QTest::newRow("SamplingBreaker without minimumRps: the library's own")
            << R"({"preset":"cockatiel","breaker":"SamplingBreaker","duration":10000})" << QString()
            << R"({"breaker":"SamplingBreaker","duration":10000,"halfOpenAfter":10000,"preset":"cockatiel","threshold":0.2})";
        QTest::newRow("opossum's defaults")
            << R"({"preset":"opossum"})" << QString()
            << R"({"errorThresholdPercentage":50,"preset":"opossum","resetTimeout":30000,"rollingCountBuckets":10,"rollingCountTimeout":10000,"volumeThreshold":0})";
        QTest::newRow("an option of another breaker")
            << R"({"preset":"cockatiel","breaker":"SamplingBreaker","size":40})"
            << "'size' is an option of CountBreaker, not of SamplingBreaker" << QString();
        QTest::newRow("a ratio threshold of 1 (the library's RangeError)")
            << R"({"preset":"cockatiel","breaker":"CountBreaker","threshold":1})"
            << "'threshold' must be between 0 and 1" << QString();
        QTest::newRow("more minimum calls than the window")
            << R"({"preset":"cockatiel","breaker":"CountBreaker","size":10,"minimumNumberOfCalls":11})"
            << "'minimumNumberOfCalls' must be a whole number from 1 to 10" << QString();
        QTest::newRow("an unknown breaker") << R"({"preset":"cockatiel","breaker":"RatioBreaker"})"
                                            << "'breaker' must be" << QString();
        QTest::newRow("our parameters under a library's preset")
            << R"({"preset":"opossum","failureRatio":0.5})"
            << "unknown key 'failureRatio' for preset opossum" << QString();
        QTest::newRow("a library's option without its preset") << R"({"resetTimeout":1000})"
                                                               << "need its preset" << QString();
        QTest::newRow("buckets shorter than a millisecond")
            << R"({"preset":"opossum","rollingCountTimeout":5,"rollingCountBuckets":10})"
            << "'rollingCountTimeout' must be from 'rollingCountBuckets'" << QString();
    }
    void options()
    {
        QFETCH(QString, json);
        QFETCH(QString, error);
        QFETCH(QString, roundTrip);
        QString message;
        const auto model = BreakerModel::fromJsonText(json, &message);
        if (!error.isEmpty()) {
            QVERIFY(!model);
            QVERIFY2(message.contains(error), qPrintable(message));
            return;
        }
        QVERIFY2(model, qPrintable(message));
        QCOMPARE(QString::fromUtf8(QJsonDocument(model->toJson()).toJson(QJsonDocument::Compact)),
                 roundTrip);
        QCOMPARE(BreakerModel::fromJson(model->toJson(), &message), model);
        QCOMPARE(model->matchingPreset(),
                 QJsonDocument::fromJson(json.toUtf8()).object().value(u"preset").toString());
        QVERIFY(!model->describe().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestLibraryBreakers)
#include "tst_librarybreakers.moc"
