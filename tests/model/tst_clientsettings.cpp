// Client settings to copy (issue 33.5): Polly v8 C#, Resilience4j YAML and the Azure SDK's retry
// options carry the pace the limits allow (or the one asked for) as whole permits per window
// never above it, and the behaviour's retries, backoff, jitter, Retry-After and breaker. The
// YAML is read back by PyYAML (a parser no one here wrote) and its values checked.

#include "engine/paceadvice.h"
#include "whatif/clientsettings.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTest>

using namespace ts;
using namespace ts::whatif;

namespace {

QList<PaceAdvice> oneNoteAdvice()
{
    PaceAdvice advice;
    advice.policy = u"graph-onenote-delegated"_qs;
    advice.key = u"note-bridge+alice@contoso.com"_qs;
    advice.identity = u"alice@contoso.com"_qs;
    advice.maxRatePerSecond = 400.0 / 3600;
    advice.bindingLimit = u"onenote-per-hour"_qs;
    return {advice};
}

// The YAML as JSON, through PyYAML.
QJsonObject yamlToJson(const QString &yaml)
{
    QProcess python;
    python.start(u"python3"_qs, {u"-c"_qs, u"import json, sys, yaml; "
                                           u"json.dump(yaml.safe_load(sys.stdin), sys.stdout)"_qs});
    python.write(yaml.toUtf8());
    python.closeWriteChannel();
    if (!python.waitForFinished(30000) || python.exitCode() != 0)
        qWarning() << python.readAllStandardError();
    return QJsonDocument::fromJson(python.readAllStandardOutput()).object();
}

} // namespace

class TestClientSettings : public QObject
{
    Q_OBJECT

private slots:
    void permitWindowNeverExceedsThePace_data();
    void permitWindowNeverExceedsThePace();
    void pollyCarriesTheBehaviour();
    void resilience4jYamlReadsBack();
    void azureSdkRetryOptions();
    void names();
};

void TestClientSettings::permitWindowNeverExceedsThePace_data()
{
    QTest::addColumn<double>("perSecond");
    QTest::addColumn<int>("permits");
    QTest::addColumn<int>("seconds");
    QTest::newRow("110/min: 55 per 30 s") << 110.0 / 60 << 55 << 30;
    QTest::newRow("400/h: 100 per 15 min") << 400.0 / 3600 << 100 << 900;
    QTest::newRow("25/s") << 25.0 << 25 << 1;
    QTest::newRow("2.5/s") << 2.5 << 5 << 2;
    QTest::newRow("1/h") << 1.0 / 3600 << 1 << 3600;
}

void TestClientSettings::permitWindowNeverExceedsThePace()
{
    QFETCH(double, perSecond);
    QFETCH(int, permits);
    QFETCH(int, seconds);
    const PermitWindow window = permitWindow(perSecond);
    QCOMPARE(window.permits, permits);
    QCOMPARE(window.windowSeconds, seconds);
    QVERIFY(double(window.permits) / window.windowSeconds <= perSecond + 1e-9);
}

void TestClientSettings::pollyCarriesTheBehaviour()
{
    Behaviour behaviour;
    behaviour.obeyRetryAfter = true;
    behaviour.retries = 5;
    behaviour.backoff.kind = Backoff::Kind::Exponential;
    behaviour.backoff.baseMs = 500;
    behaviour.backoff.capMs = 60000;
    behaviour.jitterSeed = 1;
    behaviour.breaker = BreakerModel::pollyV8();
    const QString text =
        clientSettings(ClientKind::Polly, {u"alice@contoso.com"_qs}, oneNoteAdvice(), behaviour);
    for (const QString &expected :
         {u"// alice@contoso.com: the limits allow max 6.6/min, onenote-per-hour limit binds"_qs,
          u"MaxRetryAttempts = 5,"_qs, u"BackoffType = DelayBackoffType.Exponential,"_qs,
          u"Delay = TimeSpan.FromMilliseconds(500),"_qs, u"MaxDelay = TimeSpan.FromSeconds(60),"_qs,
          u"UseJitter = true,"_qs, u"args.Outcome.Result?.Headers.RetryAfter?.Delta"_qs,
          u"FailureRatio = 0.1,"_qs, u"MinimumThroughput = 100,"_qs,
          u"BreakDuration = TimeSpan.FromSeconds(5),"_qs, u"PermitLimit = 100,"_qs,
          u"Window = TimeSpan.FromSeconds(900),"_qs, u".Build();"_qs})
        QVERIFY2(text.contains(expected), qPrintable(expected + u"\n---\n"_qs + text));
    QCOMPARE(text.count(u'{'), text.count(u'}'));
    QCOMPARE(text.count(u'('), text.count(u')'));
    // Without --obey-retry-after, no Retry-After reading; a given pace wins over the advice.
    behaviour.obeyRetryAfter = false;
    behaviour.pacePerSecond = 1;
    const QString paced =
        clientSettings(ClientKind::Polly, {u"alice@contoso.com"_qs}, oneNoteAdvice(), behaviour);
    QVERIFY(!paced.contains(u"RetryAfter"_qs));
    QVERIFY2(paced.contains(u"PermitLimit = 1,"_qs), qPrintable(paced));
}

void TestClientSettings::resilience4jYamlReadsBack()
{
    QVERIFY2(!QStandardPaths::findExecutable(u"python3"_qs).isEmpty(), "python3 is not installed");
    Behaviour behaviour;
    behaviour.retries = 3;
    behaviour.breaker = BreakerModel::resilience4j();
    const QString yaml = clientSettings(ClientKind::Resilience4j, {u"alice@contoso.com"_qs},
                                        oneNoteAdvice(), behaviour);
    const QJsonObject root = yamlToJson(yaml).value(u"resilience4j"_qs).toObject();
    QVERIFY2(!root.isEmpty(), qPrintable(yaml));
    const auto instance = [&](const QString &section) {
        return root.value(section)
            .toObject()
            .value(u"instances"_qs)
            .toObject()
            .value(u"alice@contoso.com"_qs)
            .toObject();
    };
    QCOMPARE(instance(u"ratelimiter"_qs).value(u"limitForPeriod"_qs).toInt(), 100);
    QCOMPARE(instance(u"ratelimiter"_qs).value(u"limitRefreshPeriod"_qs).toString(), u"900s"_qs);
    QCOMPARE(instance(u"retry"_qs).value(u"maxAttempts"_qs).toInt(), 4);
    QCOMPARE(instance(u"retry"_qs).value(u"waitDuration"_qs).toString(), u"2s"_qs);
    QCOMPARE(instance(u"retry"_qs).value(u"enableExponentialBackoff"_qs).toBool(), false);
    const QJsonObject breaker = instance(u"circuitbreaker"_qs);
    QCOMPARE(breaker.value(u"slidingWindowType"_qs).toString(), u"COUNT_BASED"_qs);
    QCOMPARE(breaker.value(u"slidingWindowSize"_qs).toInt(), 100);
    QCOMPARE(breaker.value(u"failureRateThreshold"_qs).toDouble(), 50.0);
    QCOMPARE(breaker.value(u"waitDurationInOpenState"_qs).toString(), u"60s"_qs);
    QCOMPARE(breaker.value(u"permittedNumberOfCallsInHalfOpenState"_qs).toInt(), 10);
}

void TestClientSettings::azureSdkRetryOptions()
{
    Behaviour behaviour;
    behaviour.backoff.kind = Backoff::Kind::Exponential;
    behaviour.backoff.baseMs = 800;
    behaviour.backoff.capMs = 60000;
    const QString text =
        clientSettings(ClientKind::AzureSdk, {u"alice@contoso.com"_qs}, oneNoteAdvice(), behaviour);
    for (const QString &expected :
         {u"options.Retry.Mode = RetryMode.Exponential;"_qs, u"options.Retry.MaxRetries = 3;"_qs,
          u"options.Retry.Delay = TimeSpan.FromMilliseconds(800);"_qs,
          u"options.Retry.MaxDelay = TimeSpan.FromSeconds(60);"_qs,
          u"//   alice@contoso.com: 100 per 900 s"_qs})
        QVERIFY2(text.contains(expected), qPrintable(expected + u"\n---\n"_qs + text));
}

void TestClientSettings::names()
{
    for (const QString &name : clientKindNames())
        QVERIFY(clientKindFromName(name));
    QVERIFY(!clientKindFromName(u"hystrix"));
}

QTEST_GUILESS_MAIN(TestClientSettings)
#include "tst_clientsettings.moc"
