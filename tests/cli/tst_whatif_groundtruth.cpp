// Ground truth for `whatif` (issue 33): the sends `whatif --out` writes are fed to real rate-limit
// libraries from npm (rate-limiter-flexible's RateLimiterMemory, limiter's TokenBucket and
// RateLimiter) on a virtual clock, and each library must refuse exactly the sends whatif
// predicted, identity by identity, with the Retry-After whatif wrote: at paces that overrun the
// limits and at paces that do not. The same sends replayed by `report` under the same policy
// must predict the same throttles. The npm packages are installed into a temporary copy of
// tests/cli/whatif-groundtruth (as tests/live/tst_oteljs.cpp does); when that fails the test
// fails: it must not pass without the real libraries.
#include "testcli.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using ts::test::AppRun;
using ts::test::runApp;

namespace {

// The limits each library keeps, as a policy (see replay-sends.js for the libraries' side).
QByteArray policyFor(const QString &library)
{
    if (library == u"flexible") {
        return R"({"name": "gt-flexible", "match": {"service": "^gtapi$"}, "limits": [
            {"name": "points", "key": "identity", "algorithm": "fixed-window", "capacity": 20,
             "windowSeconds": 10, "align": "first-request", "chargeThrottled": true,
             "cost": [{"match": {"method": "^POST$"}, "credits": 3}], "defaultCost": 1}]})";
    }
    if (library == u"tokenbucket") {
        return R"({"name": "gt-tokenbucket", "match": {"service": "^gtapi$"}, "limits": [
            {"name": "tokens", "key": "identity", "algorithm": "token-bucket", "capacity": 8,
             "refillPerSecond": 15.625, "initialFill": 1, "chargeThrottled": false}]})";
    }
    return R"({"name": "gt-ratelimiter", "match": {"service": "^gtapi$"}, "limits": [
        {"name": "interval", "key": "identity", "algorithm": "fixed-window", "capacity": 10,
         "windowSeconds": 0.64, "align": "first-request", "chargeThrottled": false},
        {"name": "bucket", "key": "identity", "algorithm": "token-bucket", "capacity": 10,
         "refillPerSecond": 15.625, "chargeThrottled": false}]})";
}

// A log of three clients' work: GETs and POSTs, service times, a few 429s retried by
// operationId (retries are not new work), the clients starting at different instants.
QByteArray workLog()
{
    QByteArray log;
    const qint64 base = Q_INT64_C(1771454640000); // 2026-02-18T22:44:00Z
    struct Client
    {
        const char *identity;
        int operations;
        qint64 startMs;
        qint64 gapMs;
    };
    const Client clients[] = {
        {"alpha", 90, 0, 90}, {"bravo", 60, 1300, 150}, {"charlie", 45, 2700, 70}};
    for (const Client &client : clients) {
        for (int k = 0; k < client.operations; ++k) {
            const qint64 ts = base + client.startMs + k * client.gapMs;
            const bool post = k % 4 == 1;
            const bool refused = k % 9 == 4;
            const QByteArray common =
                QStringLiteral("\"service\":\"gtapi\",\"identity\":\"%1\",\"method\":\"%2\","
                               "\"url\":\"https://gt.example/items/%3\",\"operationId\":\"%1-%3\",")
                    .arg(QString::fromLatin1(client.identity), post ? u"POST"_qs : u"GET"_qs)
                    .arg(k)
                    .toUtf8();
            const auto line = [&](qint64 at, int status, int attempt) {
                log += "{\"ts\":" + QByteArray::number(at) + "," + common +
                       "\"status\":" + QByteArray::number(status) +
                       ",\"attempt\":" + QByteArray::number(attempt) +
                       ",\"durationMs\":" + QByteArray::number(40 + (k * 37) % 90) + "}\n";
            };
            line(ts, refused ? 429 : (post ? 201 : 200), 0);
            if (refused)
                line(ts + 35, 200, 1);
        }
    }
    return log;
}

bool runProcess(const QString &program, const QStringList &arguments, const QString &directory,
                int timeoutMs, QString *output)
{
    QProcess process;
    process.setWorkingDirectory(directory);
    process.start(program, arguments);
    if (!process.waitForStarted(10000)) {
        *output = program + u": "_qs + process.errorString();
        return false;
    }
    const bool finished = process.waitForFinished(timeoutMs);
    *output = QString::fromUtf8(process.readAllStandardOutput());
    const QString errors = QString::fromUtf8(process.readAllStandardError());
    if (!finished) {
        process.kill();
        process.waitForFinished(5000);
        *output += u"\n(timed out)"_qs;
        return false;
    }
    if (process.exitCode() != 0)
        *output += u"\n"_qs + errors;
    return process.exitStatus() == QProcess::NormalExit && process.exitCode() == 0;
}

QJsonObject jsonOf(const QByteArray &bytes)
{
    return QJsonDocument::fromJson(bytes).object();
}

} // namespace

class TestWhatIfGroundTruth : public QObject
{
    Q_OBJECT

    QTemporaryDir m_project;

private slots:
    void initTestCase();
    void libraryRefusesExactlyWhatWhatIfPredicted_data();
    void libraryRefusesExactlyWhatWhatIfPredicted();
};

void TestWhatIfGroundTruth::initTestCase()
{
    QVERIFY2(!QStandardPaths::findExecutable(u"node"_qs).isEmpty(), "node is not installed");
    QVERIFY2(!QStandardPaths::findExecutable(u"npm"_qs).isEmpty(), "npm is not installed");
    QVERIFY(m_project.isValid());
    const QDir source(QStringLiteral(TS_TEST_DATA_DIR "/../cli/whatif-groundtruth"));
    for (const QString &name : {u"package.json"_qs, u"replay-sends.js"_qs}) {
        QVERIFY2(QFile::copy(source.filePath(name), m_project.filePath(name)),
                 qPrintable(source.filePath(name)));
    }
    QString output;
    QVERIFY2(runProcess(u"npm"_qs,
                        {u"install"_qs, u"--no-audit"_qs, u"--no-fund"_qs, u"--loglevel=error"_qs},
                        m_project.path(), 300000, &output),
             qPrintable(u"npm install of limiter and rate-limiter-flexible failed (is the npm "
                        u"registry reachable?); this test needs the real libraries:\n"_qs +
                        output.right(3000)));
    QFile log(m_project.filePath(u"work.ndjson"_qs));
    QVERIFY(log.open(QIODevice::WriteOnly));
    log.write(workLog());
}

void TestWhatIfGroundTruth::libraryRefusesExactlyWhatWhatIfPredicted_data()
{
    QTest::addColumn<QString>("library");
    QTest::addColumn<QStringList>("behaviour");
    QTest::addColumn<int>("minimumRefusals"); // -1: a pace that does not overrun
    const auto row = [](const char *name, const QString &library, const QStringList &behaviour,
                        bool overruns) {
        // Obeying Retry-After, a client is refused about once per window; blind, far more.
        const bool obeys = behaviour.contains(u"--obey-retry-after"_qs);
        QTest::newRow(name) << library << behaviour << (overruns ? (obeys ? 10 : 20) : -1);
    };
    row("flexible, 5/s overruns", u"flexible"_qs, {u"--pace"_qs, u"5/s"_qs}, true);
    row("flexible, 4/s obeying Retry-After", u"flexible"_qs,
        {u"--pace"_qs, u"4/s"_qs, u"--obey-retry-after"_qs, u"--retries"_qs, u"6"_qs}, true);
    row("flexible, 3/s, exp backoff, jitter, resilience4j breaker", u"flexible"_qs,
        {u"--pace"_qs, u"3/s"_qs, u"--backoff"_qs, u"exp:0.5:8"_qs, u"--jitter"_qs, u"7"_qs,
         u"--breaker"_qs, u"resilience4j"_qs},
        true);
    row("flexible, 30/min does not overrun", u"flexible"_qs, {u"--pace"_qs, u"30/min"_qs}, false);
    row("tokenbucket, 40/s overruns", u"tokenbucket"_qs,
        {u"--pace"_qs, u"40/s"_qs, u"--concurrency"_qs, u"8"_qs}, true);
    row("tokenbucket, 12/s, 4 in flight", u"tokenbucket"_qs,
        {u"--pace"_qs, u"12/s"_qs, u"--concurrency"_qs, u"4"_qs, u"--obey-retry-after"_qs}, false);
    row("ratelimiter, 50/s overruns", u"ratelimiter"_qs,
        {u"--pace"_qs, u"50/s"_qs, u"--concurrency"_qs, u"3"_qs}, true);
    row("ratelimiter, 10/s does not overrun", u"ratelimiter"_qs, {u"--pace"_qs, u"10/s"_qs}, false);
}

void TestWhatIfGroundTruth::libraryRefusesExactlyWhatWhatIfPredicted()
{
    QFETCH(QString, library);
    QFETCH(QStringList, behaviour);
    QFETCH(int, minimumRefusals);
    const QString policyPath = m_project.filePath(library + u".policy.json"_qs);
    {
        QFile policy(policyPath);
        QVERIFY(policy.open(QIODevice::WriteOnly));
        policy.write(policyFor(library));
    }
    const QString sends = m_project.filePath(u"sends.ndjson"_qs);
    const AppRun whatif = runApp(
        QStringList{u"whatif"_qs, u"--json"_qs, u"--policy"_qs, policyPath, u"--out"_qs, sends} +
        behaviour + QStringList{m_project.filePath(u"work.ndjson"_qs)});
    QVERIFY2(whatif.exitCode == 0, whatif.err.constData());
    const QJsonObject predicted =
        jsonOf(whatif.out).value(u"whatif"_qs).toObject().value(u"byIdentity"_qs).toObject();
    QCOMPARE(predicted.size(), 3);

    QString output;
    QVERIFY2(runProcess(u"node"_qs, {u"replay-sends.js"_qs, library, sends}, m_project.path(),
                        60000, &output),
             qPrintable(output));
    const QJsonObject answered = jsonOf(output.toUtf8());
    qint64 refusedInAll = 0;
    for (const QString &identity : predicted.keys()) {
        const QJsonObject real = answered.value(identity).toObject();
        const QJsonObject mine = predicted.value(identity).toObject();
        QVERIFY2(real.value(u"mismatches"_qs).toArray().isEmpty(),
                 qPrintable(identity + u": "_qs +
                            QString::fromUtf8(QJsonDocument(real).toJson(QJsonDocument::Compact))));
        QCOMPARE(real.value(u"sends"_qs).toInteger(), mine.value(u"requests"_qs).toInteger());
        QCOMPARE(real.value(u"refused"_qs).toInteger(), mine.value(u"throttles"_qs).toInteger());
        refusedInAll += real.value(u"refused"_qs).toInteger();
    }
    // A pace that overruns the limit is refused often; one that does not, never (the token
    // bucket that starts empty refuses each client's first request: 3 at most).
    if (minimumRefusals >= 0)
        QVERIFY2(refusedInAll >= minimumRefusals, qPrintable(QString::number(refusedInAll)));
    else
        QVERIFY2(refusedInAll <= 3, qPrintable(QString::number(refusedInAll)));

    // The same sends, replayed by report under the same policy: every 429 is one its replay
    // expected (cause "limit", never "unexplained"), and each single-limit bucket predicts
    // exactly the refusals whatif predicted.
    const AppRun report = runApp({u"report"_qs, u"--json"_qs, u"--policy"_qs, policyPath, sends});
    QVERIFY2(report.exitCode == 0, report.err.constData());
    const QJsonObject reportJson = jsonOf(report.out);
    const QJsonObject throttles = reportJson.value(u"throttles"_qs).toObject();
    QCOMPARE(throttles.value(u"total"_qs).toInteger(), refusedInAll);
    QCOMPARE(throttles.value(u"byCause"_qs).toObject().value(u"limit"_qs).toInteger(),
             refusedInAll);
    QMap<QString, qint64> predictedByKey;
    for (const QJsonValue scope : reportJson.value(u"scopes"_qs).toArray()) {
        const QJsonObject object = scope.toObject();
        predictedByKey[object.value(u"key"_qs).toString()] +=
            object.value(u"predictedThrottled"_qs).toInteger();
    }
    for (const QString &identity : predicted.keys()) {
        const qint64 throttled =
            predicted.value(identity).toObject().value(u"throttles"_qs).toInteger();
        if (library == u"ratelimiter")
            QVERIFY2(predictedByKey.value(identity) >= throttled, qPrintable(identity));
        else
            QCOMPARE(predictedByKey.value(identity), throttled);
    }
}

QTEST_GUILESS_MAIN(TestWhatIfGroundTruth)
#include "tst_whatif_groundtruth.moc"
