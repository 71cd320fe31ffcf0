// report --fail-on: a pipeline gates on the exit status (3 when the report has the findings
// named), and the report itself, JSON or text, is exactly what it is without the option.
#include "testcli.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

using ts::test::AppRun;
using ts::test::runApp;

namespace {

constexpr int kExitFindings = 3;

QString dataFile(const QString &relative)
{
    return QStringLiteral(TS_TEST_DATA_DIR) + u'/' + relative;
}

// Logs with and without throttles and alerts of each severity.
QStringList sampleLogs()
{
    QStringList files;
    // (causes/: since issue 30.1 the canonical samples' unresolved operations are pending when
    // the log ends, not lost: the critical alerts are the causes' critical near-limit ones.)
    for (const QString &folder :
         {u"canonical"_qs, u"causes"_qs, u"thirdparty/fabric"_qs, u"thirdparty/har"_qs}) {
        const QDir dir(dataFile(folder));
        const QStringList names = dir.entryList(QDir::Files, QDir::Name);
        for (const QString &name : names) {
            if (name.endsWith(u".md"))
                continue;
            files << dir.filePath(name);
        }
    }
    return files;
}

// What --fail-on WHAT should find in a JSON report, decided from the report's own keys.
bool hasFindings(const QJsonObject &report, const QString &what)
{
    bool critical = false;
    bool warning = false;
    const QJsonArray alerts = report.value(u"alerts").toArray();
    for (const QJsonValue &alert : alerts) {
        const QString severity = alert.toObject().value(u"severity").toString();
        critical = critical || severity == u"critical";
        warning = warning || severity == u"warning";
    }
    const bool throttles = report.value(u"throttles").toObject().value(u"total").toInteger() > 0;
    bool found = false;
    for (const QString &name : what.split(u',')) {
        if (name == u"critical")
            found = found || critical;
        else if (name == u"warning")
            found = found || critical || warning;
        else if (name == u"throttles")
            found = found || throttles;
    }
    return found;
}

} // namespace

class TestFailOn : public QObject
{
    Q_OBJECT

    // (--fail-on value, exit status) pairs seen by exitStatusFollowsTheReport.
    QSet<QString> m_outcomes;

private slots:
    void exitStatusFollowsTheReport_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("failOn");
        QTest::addColumn<bool>("json");
        for (const QString &file : sampleLogs()) {
            for (const QString &failOn :
                 {u"critical"_qs, u"warning"_qs, u"throttles"_qs, u"critical,throttles"_qs}) {
                for (const bool json : {true, false}) {
                    const QString row = QFileInfo(file).fileName() + u" --fail-on " + failOn +
                                        (json ? u" --json" : u"");
                    QTest::newRow(qPrintable(row)) << file << failOn << json;
                }
            }
        }
    }

    void exitStatusFollowsTheReport()
    {
        QFETCH(QString, file);
        QFETCH(QString, failOn);
        QFETCH(bool, json);
        const AppRun reference = runApp({u"report"_qs, u"--json"_qs, file});
        QStringList plainArgs{u"report"_qs, file};
        if (json)
            plainArgs.insert(1, u"--json"_qs);
        QStringList gatedArgs = plainArgs;
        gatedArgs.insert(1, u"--fail-on"_qs);
        gatedArgs.insert(2, failOn);
        if (reference.exitCode == 1) { // not a request log: nothing read, whatever --fail-on says
            QCOMPARE(runApp(gatedArgs).exitCode, 1);
            return;
        }
        QCOMPARE(reference.exitCode, 0);
        const bool expected = hasFindings(QJsonDocument::fromJson(reference.out).object(), failOn);

        const AppRun plain = json ? reference : runApp(plainArgs);
        const AppRun gated = runApp(gatedArgs);

        QCOMPARE(gated.exitCode, expected ? kExitFindings : 0);
        // The report is unchanged, byte for byte: the option changes the exit status only.
        QCOMPARE(gated.out, plain.out);
        QCOMPARE(gated.err.contains("--fail-on:"), expected);
        m_outcomes.insert(failOn + u' ' + QString::number(gated.exitCode));
    }

    // The samples exercise every outcome, so the test above does not pass by finding nothing.
    void samplesCoverEveryOutcome()
    {
        for (const QString &failOn :
             {u"critical"_qs, u"warning"_qs, u"throttles"_qs, u"critical,throttles"_qs}) {
            QVERIFY2(m_outcomes.contains(failOn + u" 0"), qPrintable(failOn));
            QVERIFY2(m_outcomes.contains(failOn + u" 3"), qPrintable(failOn));
        }
    }

    void workspaceReportAndStandardInput()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString log = dataFile(u"canonical/spec-examples.ndjson"_qs);
        const QString workspace = dir.filePath(u"gate.tsws"_qs);
        QCOMPARE(runApp({u"import"_qs, u"--workspace"_qs, workspace, log}).exitCode, 0);

        const AppRun reference = runApp({u"report"_qs, u"--workspace"_qs, workspace, u"--json"_qs});
        QCOMPARE(reference.exitCode, 0);
        const QJsonObject report = QJsonDocument::fromJson(reference.out).object();
        QVERIFY(hasFindings(report, u"throttles"_qs));
        const AppRun gated = runApp({u"report"_qs, u"--workspace"_qs, workspace, u"--json"_qs,
                                     u"--fail-on"_qs, u"throttles"_qs});
        QCOMPARE(gated.exitCode, kExitFindings);
        QCOMPARE(gated.out, reference.out);

        QFile input(log);
        QVERIFY(input.open(QIODevice::ReadOnly));
        const AppRun fromStdin =
            runApp({u"report"_qs, u"--fail-on"_qs, u"throttles"_qs, u"-"_qs}, input.readAll());
        QCOMPARE(fromStdin.exitCode, kExitFindings);
    }

    // Exit statuses 1 and 2 keep their meaning: they win over findings that cannot exist.
    void otherStatusesKeepTheirMeaning_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        const QString log = dataFile(u"canonical/spec-examples.ndjson"_qs);
        QTest::newRow("unknown value")
            << QStringList{u"report"_qs, u"--fail-on"_qs, u"errors"_qs, log} << 2;
        QTest::newRow("empty value")
            << QStringList{u"report"_qs, u"--fail-on"_qs, u""_qs, log} << 2;
        QTest::newRow("no value") << QStringList{u"report"_qs, log, u"--fail-on"_qs} << 2;
        QTest::newRow("import")
            << QStringList{u"import"_qs,    u"--workspace"_qs, u"/nonexistent/x.tsws"_qs,
                           u"--fail-on"_qs, u"throttles"_qs,   log}
            << 2;
        QTest::newRow("nothing readable") << QStringList{u"report"_qs, u"--fail-on"_qs,
                                                         u"throttles"_qs, u"/nonexistent.ndjson"_qs}
                                          << 1;
    }

    void otherStatusesKeepTheirMeaning()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QCOMPARE(runApp(args).exitCode, exitCode);
    }
};

QTEST_GUILESS_MAIN(TestFailOn)
#include "tst_failon.moc"
