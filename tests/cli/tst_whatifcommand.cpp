// `throttlescope whatif` end to end (issue 33.1): usage errors say what is wrong, a bad line is
// named FILE:LINE and the rest is still simulated, the text prints two lines per identity, the
// JSON has both sides and the behaviour, and the --out log is a log like any other: `report`
// reads it and counts the predicted throttles as its own, and `whatif` reads it as work again
// (the same operations; its 429s and retries as the actual side).
#include "testcli.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using ts::test::AppRun;
using ts::test::runApp;

namespace {

// Two Fabric identities, each sending 300 distinct GETs 100 ms apart (10 a second against
// 200 a minute: the actual log overran the limit; its refusals are in the statuses).
QByteArray fabricLog(bool withMalformedLine)
{
    QByteArray log;
    const qint64 base = Q_INT64_C(1771454640000);
    for (int i = 0; i < 300; ++i) {
        for (const char *identity : {"sp-migrator", "sp-loader"}) {
            const bool refused = i >= 200 && identity[3] == 'm';
            log += "{\"ts\":" + QByteArray::number(base + i * 100) + ",\"identity\":\"" + identity +
                   "\",\"service\":\"fabric\",\"method\":\"GET\",\"url\":\"https://"
                   "api.fabric.microsoft.com/v1/workspaces/" +
                   QByteArray::number(i) + "\",\"status\":" + (refused ? "429" : "200") +
                   ",\"durationMs\":40}\n";
        }
        if (withMalformedLine && i == 3)
            log += "{\"ts\": not json\n";
    }
    return log;
}

QString write(const QTemporaryDir &dir, const QString &name, const QByteArray &bytes)
{
    QFile file(dir.filePath(name));
    if (!file.open(QIODevice::WriteOnly))
        return {};
    file.write(bytes);
    return file.fileName();
}

QJsonObject jsonOf(const QByteArray &bytes)
{
    return QJsonDocument::fromJson(bytes).object();
}

} // namespace

class TestWhatIfCommand : public QObject
{
    Q_OBJECT

private slots:
    void usageErrors_data();
    void usageErrors();
    void missingFileExitsOne();
    void malformedLineIsNamedAndTheRestSimulated();
    void textHasTwoLinesPerIdentity();
    void outIsALogReportAndWhatIfRead();
    void sweepPrintsEachStepAndTheFastestPace();
};

void TestWhatIfCommand::usageErrors_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("message");
    QTest::newRow("no file") << QStringList{} << u"give at least one FILE"_qs;
    QTest::newRow("pace") << QStringList{u"--pace"_qs, u"fast"_qs, u"x"_qs} << u"--pace takes"_qs;
    QTest::newRow("pace unit") << QStringList{u"--pace"_qs, u"3/week"_qs, u"x"_qs}
                               << u"--pace takes"_qs;
    QTest::newRow("backoff") << QStringList{u"--backoff"_qs, u"linear:2"_qs, u"x"_qs}
                             << u"--backoff takes"_qs;
    QTest::newRow("breaker") << QStringList{u"--breaker"_qs, u"hystrix"_qs, u"x"_qs}
                             << u"--breaker takes"_qs;
    QTest::newRow("retries") << QStringList{u"--retries"_qs, u"-1"_qs, u"x"_qs}
                             << u"--retries takes"_qs;
    QTest::newRow("concurrency") << QStringList{u"--concurrency"_qs, u"0"_qs, u"x"_qs}
                                 << u"--concurrency takes"_qs;
    QTest::newRow("cap") << QStringList{u"--background-cap"_qs, u"150"_qs, u"x"_qs}
                         << u"--background-cap takes"_qs;
    QTest::newRow("value missing")
        << QStringList{u"x"_qs, u"--pace"_qs} << u"--pace needs a value"_qs;
    QTest::newRow("unknown option")
        << QStringList{u"--speed"_qs, u"x"_qs} << u"unknown option --speed"_qs;
    QTest::newRow("policy") << QStringList{u"--policy"_qs, u"no-such-policy"_qs, u"x"_qs}
                            << u"--policy no-such-policy"_qs;
    QTest::newRow("sweep what") << QStringList{u"--sweep"_qs, u"speed"_qs, u"x"_qs}
                                << u"--sweep takes pace"_qs;
    QTest::newRow("sweep with a pace")
        << QStringList{u"--sweep"_qs, u"pace"_qs, u"--pace"_qs, u"1/s"_qs, u"x"_qs}
        << u"give no --pace"_qs;
    QTest::newRow("sweep with --out")
        << QStringList{u"--sweep"_qs, u"pace"_qs, u"--out"_qs, u"o.ndjson"_qs, u"x"_qs}
        << u"--out writes one"_qs;
    QTest::newRow("max-429") << QStringList{u"--max-429"_qs, u"100"_qs, u"x"_qs}
                             << u"--max-429 takes a percentage"_qs;
}

void TestWhatIfCommand::usageErrors()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, message);
    const AppRun run = runApp(QStringList{u"whatif"_qs} + arguments);
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(QString::fromUtf8(run.err).contains(message), run.err.constData());
}

void TestWhatIfCommand::missingFileExitsOne()
{
    const AppRun run = runApp({u"whatif"_qs, u"/no/such/log.ndjson"_qs});
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains("/no/such/log.ndjson"), run.err.constData());
}

void TestWhatIfCommand::malformedLineIsNamedAndTheRestSimulated()
{
    QTemporaryDir dir;
    const QString log = write(dir, u"work.ndjson"_qs, fabricLog(true));
    const AppRun run = runApp({u"whatif"_qs, u"--json"_qs, log});
    QCOMPARE(run.exitCode, 0);
    QVERIFY2(run.err.contains(QByteArray(log.toUtf8() + ":9: ")), run.err.constData());
    QCOMPARE(jsonOf(run.out).value(u"actual"_qs).toObject().value(u"requests"_qs).toInteger(), 600);
}

void TestWhatIfCommand::textHasTwoLinesPerIdentity()
{
    QTemporaryDir dir;
    const QString log = write(dir, u"work.ndjson"_qs, fabricLog(false));
    const AppRun run =
        runApp({u"whatif"_qs, u"--pace"_qs, u"200/min"_qs, u"--obey-retry-after"_qs, log});
    QCOMPARE(run.exitCode, 0);
    const QString text = QString::fromUtf8(run.out);
    QVERIFY2(text.contains(u"sp-migrator (300 operations)\n  actual: 29 s, 100 429s, 0 retries, "
                           u"100 lost\n  paced at 200/min obeying Retry-After: 1 min 29 s, 0 429s, "
                           u"0 retries, 0 lost\n"_qs),
             qPrintable(text));
    QVERIFY2(text.contains(u"sp-loader (300 operations)\n  actual: 29 s, 0 429s"_qs),
             qPrintable(text));
    // Under the two lines, the pace the limits allow (Fabric: 200 a minute per identity).
    QVERIFY2(text.contains(u"0 lost\n  the limits allow max 200/min, platform limit binds\n"_qs),
             qPrintable(text));
}

void TestWhatIfCommand::outIsALogReportAndWhatIfRead()
{
    QTemporaryDir dir;
    const QString log = write(dir, u"work.ndjson"_qs, fabricLog(false));
    const QString out = dir.filePath(u"sends.ndjson"_qs);
    const AppRun whatif = runApp({u"whatif"_qs, u"--json"_qs, u"--pace"_qs, u"5/s"_qs,
                                  u"--retries"_qs, u"2"_qs, u"--out"_qs, out, log});
    QCOMPARE(whatif.exitCode, 0);
    const QJsonObject simulated = jsonOf(whatif.out).value(u"whatif"_qs).toObject();
    const qint64 throttles = simulated.value(u"throttles"_qs).toInteger();
    QVERIFY(throttles > 0); // 5 a second against 200 a minute

    const AppRun report = runApp({u"report"_qs, u"--json"_qs, out});
    QCOMPARE(report.exitCode, 0);
    const QJsonObject reportJson = jsonOf(report.out);
    QCOMPARE(reportJson.value(u"events"_qs).toInteger(),
             simulated.value(u"requests"_qs).toInteger());
    QCOMPARE(reportJson.value(u"throttles"_qs).toObject().value(u"total"_qs).toInteger(),
             throttles);
    QCOMPARE(reportJson.value(u"throttles"_qs)
                 .toObject()
                 .value(u"byCause"_qs)
                 .toObject()
                 .value(u"limit"_qs)
                 .toInteger(),
             throttles);

    const AppRun again = runApp({u"whatif"_qs, u"--json"_qs, out});
    QCOMPARE(again.exitCode, 0);
    const QJsonObject actual = jsonOf(again.out).value(u"actual"_qs).toObject();
    QCOMPARE(actual.value(u"operations"_qs).toInteger(), 600);
    QCOMPARE(actual.value(u"throttles"_qs).toInteger(), throttles);
    QCOMPARE(actual.value(u"retries"_qs).toInteger(), simulated.value(u"retries"_qs).toInteger());
    QCOMPARE(actual.value(u"lostOperations"_qs).toInteger(),
             simulated.value(u"lostOperations"_qs).toInteger());
    QCOMPARE(actual.value(u"finish"_qs).toString(), simulated.value(u"finish"_qs).toString());
}

void TestWhatIfCommand::sweepPrintsEachStepAndTheFastestPace()
{
    QTemporaryDir dir;
    const QString log = write(dir, u"work.ndjson"_qs, fabricLog(false));
    const AppRun text = runApp({u"whatif"_qs, u"--sweep"_qs, u"pace"_qs, log});
    QCOMPARE(text.exitCode, 0);
    const QString out = QString::fromUtf8(text.out);
    QVERIFY2(out.contains(u"\nstep 0: sp-migrator unpaced: "_qs), qPrintable(out));
    QVERIFY2(out.contains(u"\nstep 1: sp-migrator 200/min: 1 min 29 s, 0.0 % 429s"_qs),
             qPrintable(out));
    QVERIFY2(out.contains(u"\nsp-migrator: at most 200/min, finishes in 1 min 29 s (0.0 % 429s); "
                          u"the limits allow max 200/min, platform limit binds\n"_qs),
             qPrintable(out));

    const AppRun json = runApp(
        {u"whatif"_qs, u"--json"_qs, u"--sweep"_qs, u"pace"_qs, u"--max-429"_qs, u"5"_qs, log});
    QCOMPARE(json.exitCode, 0);
    const QJsonObject document = jsonOf(json.out);
    const QJsonObject sweep = document.value(u"sweep"_qs).toObject();
    QCOMPARE(sweep.value(u"max429Percent"_qs).toDouble(), 5.0);
    QVERIFY(sweep.value(u"steps"_qs).toArray().size() >= 3);
    const QJsonObject migrator =
        sweep.value(u"byIdentity"_qs).toObject().value(u"sp-migrator"_qs).toObject();
    QVERIFY(migrator.value(u"found"_qs).toBool());
    QVERIFY(migrator.value(u"pacePerSecond"_qs).toDouble() > 200.0 / 60); // 5 % allowed: faster
    QVERIFY(migrator.value(u"refusedPercent"_qs).toDouble() <= 5.0);
    QCOMPARE(document.value(u"advice"_qs).toArray().size(), 2);
}

QTEST_GUILESS_MAIN(TestWhatIfCommand)
#include "tst_whatifcommand.moc"
