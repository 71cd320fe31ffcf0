// End to end: run the throttlescope binary as an operator or a script would, parse its output.
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include "policy/policy.h"
#include "store/workspace.h"

#include <tuple>

namespace {

QString appBinary()
{
    const QString fromEnv = qEnvironmentVariable("TS_APP_BINARY");
    return fromEnv.isEmpty() ? QStringLiteral(TS_APP_BINARY) : fromEnv;
}

QString dataFile(const QString &relative)
{
    return QStringLiteral(TS_TEST_DATA_DIR) + u'/' + relative;
}

struct Run
{
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

Run run(const QStringList &args, const QByteArray &stdinData = {})
{
    QProcess process;
    process.start(appBinary(), args);
    if (!process.waitForStarted())
        return {};
    if (!stdinData.isNull())
        process.write(stdinData);
    process.closeWriteChannel();
    process.waitForFinished(120000);
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            process.readAllStandardOutput(), process.readAllStandardError()};
}

QJsonObject parseJson(const QByteArray &bytes)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(bytes, &error);
    if (error.error != QJsonParseError::NoError)
        qWarning() << "bad JSON:" << error.errorString() << bytes.left(400);
    return doc.object();
}

} // namespace

class TestCli : public QObject
{
    Q_OBJECT
private slots:
    void version()
    {
        const Run r = run({u"--version"_qs});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.out.startsWith("throttlescope "));
        // The allocator named, and when it is mimalloc, actually serving malloc (a build that
        // links it but leaves glibc's malloc in charge would measure something else).
        QVERIFY2(r.out.contains("\nallocator: mimalloc ") ||
                     r.out.contains("\nallocator: system malloc"),
                 r.out.constData());
        QVERIFY2(!r.out.contains("not serving malloc"), r.out.constData());
        // How the binary was optimised (benchmark figures depend on it too): the build type,
        // and for a profile-guided build, that it is one.
        QVERIFY2(r.out.contains("\nbuild: " TS_EXPECTED_BUILD_FLAVOR "\n"), r.out.constData());
    }

    void reportJsonCounts_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("events");
        QTest::addColumn<int>("malformed");
        QTest::addColumn<QVariantMap>("byStatus");
        QTest::addColumn<int>("throttles");
        QTest::addColumn<QVariantMap>("byErrorCode");
        // Expected values written from reading the fixtures, not from the program's output.
        QTest::newRow("spec-examples")
            << u"canonical/spec-examples.ndjson"_qs << 4 << 0
            << QVariantMap{{u"200"_qs, 1}, {u"429"_qs, 3}} << 3
            << QVariantMap{{u"RequestBlocked"_qs, 1}, {u"50009"_qs, 1}, {u"none"_qs, 1}};
        QTest::newRow("mixed-crlf-malformed")
            << u"canonical/mixed-crlf-malformed.ndjson"_qs << 6 << 2
            << QVariantMap{{u"200"_qs, 1},
                           {u"503"_qs, 1},
                           {u"429"_qs, 2},
                           {u"430"_qs, 1},
                           {u"500"_qs, 1}}
            << 4
            << QVariantMap{{u"ServerBusy"_qs, 1},
                           {u"TooManyRequests"_qs, 1},
                           {u"TooManyRequestsForCapacity"_qs, 1},
                           {u"none"_qs, 1}};
    }
    void reportJsonCounts()
    {
        QFETCH(QString, file);
        QFETCH(int, events);
        QFETCH(int, malformed);
        QFETCH(QVariantMap, byStatus);
        QFETCH(int, throttles);
        QFETCH(QVariantMap, byErrorCode);
        const Run r = run({u"report"_qs, u"--json"_qs, dataFile(file)});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject report = parseJson(r.out);
        QCOMPARE(report.value(u"events").toInt(), events);
        QCOMPARE(report.value(u"malformed").toInt(), malformed);
        QCOMPARE(report.value(u"byStatus").toObject().toVariantMap(), byStatus);
        const QJsonObject throttleObject = report.value(u"throttles").toObject();
        QCOMPARE(throttleObject.value(u"total").toInt(), throttles);
        QCOMPARE(throttleObject.value(u"byErrorCode").toObject().toVariantMap(), byErrorCode);
        for (const char *key : {"scopes", "breakers", "alerts"})
            QVERIFY2(report.value(QLatin1StringView(key)).isArray(), key);
    }

    void malformedLinesNamedOnStderr()
    {
        const QString file = dataFile(u"canonical/mixed-crlf-malformed.ndjson"_qs);
        const Run r = run({u"report"_qs, u"--json"_qs, file});
        QCOMPARE(r.exitCode, 0);
        const QString err = QString::fromUtf8(r.err);
        QVERIFY2(err.contains(file + u":2: not JSON"), qPrintable(err));
        QVERIFY2(err.contains(file + u":5: missing \"ts\""), qPrintable(err));
    }

    void standardInput()
    {
        QFile file(dataFile(u"canonical/spec-examples.ndjson"_qs));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const Run r = run({u"report"_qs, u"--json"_qs, u"-"_qs}, file.readAll());
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(parseJson(r.out).value(u"events").toInt(), 4);
    }

    void severalFilesAddUp()
    {
        const Run r =
            run({u"report"_qs, u"--json"_qs, dataFile(u"canonical/spec-examples.ndjson"_qs),
                 dataFile(u"canonical/mixed-crlf-malformed.ndjson"_qs)});
        QCOMPARE(r.exitCode, 0);
        const QJsonObject report = parseJson(r.out);
        QCOMPARE(report.value(u"events").toInt(), 10);
        QCOMPARE(report.value(u"malformed").toInt(), 2);
        QCOMPARE(report.value(u"throttles").toObject().value(u"total").toInt(), 7);
    }

    void textReportReadsLikeEnglish()
    {
        const Run r = run({u"report"_qs, dataFile(u"canonical/spec-examples.ndjson"_qs)});
        QCOMPARE(r.exitCode, 0);
        const QString text = QString::fromUtf8(r.out);
        QVERIFY2(text.contains(u"4 requests read"), qPrintable(text));
        QVERIFY2(text.contains(u"Throttled: 3 responses"), qPrintable(text));
        QVERIFY2(text.contains(u"RequestBlocked"), qPrintable(text));
    }

    void exitCodes_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::newRow("no-files") << QStringList{u"report"_qs} << 2;
        QTest::newRow("unknown-option")
            << QStringList{u"report"_qs, u"--frobnicate"_qs, u"x"_qs} << 2;
        QTest::newRow("missing-file")
            << QStringList{u"report"_qs, u"/nonexistent/log.ndjson"_qs} << 1;
        QTest::newRow("import-without-workspace") << QStringList{u"import"_qs, u"x.ndjson"_qs} << 2;
    }
    void exitCodes()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        const Run r = run(args);
        QCOMPARE(r.exitCode, exitCode);
    }

    void importIsIdempotentAndReportsLikeTheFile()
    {
        QTemporaryDir dir;
        const QString ws = dir.filePath(u"ws.db"_qs);
        const QString log = dataFile(u"canonical/mixed-crlf-malformed.ndjson"_qs);
        const Run first = run({u"import"_qs, u"--workspace"_qs, ws, log});
        QCOMPARE(first.exitCode, 0);
        QVERIFY2(first.err.contains("6 events, 2 malformed records added"), first.err.constData());
        QVERIFY2(first.err.contains(":2: not JSON"), first.err.constData());
        const Run again = run({u"import"_qs, u"--workspace"_qs, ws, log});
        QCOMPARE(again.exitCode, 0);
        QVERIFY2(again.err.contains("already imported, nothing added"), again.err.constData());
        const QJsonObject fromWorkspace =
            parseJson(run({u"report"_qs, u"--json"_qs, u"--workspace"_qs, ws}).out);
        const QJsonObject fromFile = parseJson(run({u"report"_qs, u"--json"_qs, log}).out);
        QCOMPARE(fromWorkspace.value(u"events").toInt(), 6);
        for (const char *key :
             {"events", "malformed", "byStatus", "throttles", "scopes", "breakers"})
            QCOMPARE(fromWorkspace.value(QLatin1StringView(key)),
                     fromFile.value(QLatin1StringView(key)));
    }

    // Issue 30.3: the dashboard saves the policy it replays a workspace with in the workspace;
    // `report --workspace` replays with the same one unless --policy is given, and says which.
    void workspaceReportUsesTheSavedPolicy()
    {
        QTemporaryDir dir;
        const QString ws = dir.filePath(u"ws.tsws"_qs);
        const QString log = dataFile(u"causes/cause-limit.ndjson"_qs);
        QCOMPARE(run({u"import"_qs, u"--workspace"_qs, ws, log}).exitCode, 0);
        const auto capacityAndSource = [&ws](const QStringList &extra) {
            const QJsonObject report = parseJson(
                run(QStringList{u"report"_qs, u"--json"_qs, u"--workspace"_qs, ws} + extra).out);
            const QJsonObject source = report.value(u"policySource").toObject();
            return std::tuple(report.value(u"scopes").toArray().at(0)[u"capacity"].toDouble(),
                              source.value(u"from").toString(), source.value(u"policy").toString());
        };
        QCOMPARE(capacityAndSource({}), std::tuple(200.0, u"builtin"_qs, u"built-in"_qs));

        // What the policy editor saves: the fabric policy with its platform limit lowered.
        auto fabric = ts::PolicySet::builtinPolicy(u"fabric"_qs);
        QVERIFY(fabric);
        for (ts::PolicyLimit &limit : fabric->limits) {
            if (limit.name == u"platform")
                limit.capacity = 50;
        }
        {
            ts::Workspace workspace;
            QVERIFY(workspace.open(ws));
            QVERIFY(workspace.setSetting(QLatin1StringView(ts::Workspace::kPolicySetting),
                                         QString::fromUtf8(fabric->toJsonBytes())));
        }
        QCOMPARE(capacityAndSource({}),
                 std::tuple(50.0, u"workspace"_qs, u"edited fabric policy"_qs));
        QCOMPARE(capacityAndSource({u"--policy"_qs, u"fabric"_qs}),
                 std::tuple(200.0, u"option"_qs, u"fabric"_qs));
        const Run text = run({u"report"_qs, u"--workspace"_qs, ws});
        QVERIFY2(text.out.contains("Policy: edited fabric policy (saved in the workspace)"),
                 text.out.constData());
    }

    // Issue 30.4: a file read whole is replayed in exact time order, however far behind its
    // lines are (Apache writes a line when the request ends: up to 59 s behind); a malformed
    // line of a file read twice is named once.
    void fileReadWholeIsReplayedInTimeOrder()
    {
        const QString apache =
            dataFile(u"thirdparty/oplogs/elastic-examples_apache_logs_combined.log"_qs);
        const QJsonObject report = parseJson(run({u"report"_qs, u"--json"_qs, apache}).out);
        QCOMPARE(report.value(u"events").toInt(), 10000);
        QCOMPARE(report.value(u"lateEvents").toInt(), 0);

        QTemporaryDir dir;
        const QString log = dir.filePath(u"late.ndjson"_qs);
        QFile file(log);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(
            "{\"ts\":1771454650000,\"identity\":\"a\",\"service\":\"fabric\",\"status\":200}\n"
            "not json\n"
            "{\"ts\":1771454710000,\"identity\":\"a\",\"service\":\"fabric\",\"status\":200}\n"
            "{\"ts\":1771454640000,\"identity\":\"a\",\"service\":\"fabric\",\"status\":200}\n");
        file.close();
        const Run late = run({u"report"_qs, u"--json"_qs, log});
        QCOMPARE(parseJson(late.out).value(u"lateEvents").toInt(), 0);
        QCOMPARE(parseJson(late.out).value(u"malformed").toInt(), 1);
        QCOMPARE(late.err.count(":2: not JSON"), qsizetype(1));
    }

    void killedImportResumesExactly()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath(u"big.ndjson"_qs);
        const int lines = 600000;
        {
            QFile file(log);
            QVERIFY(file.open(QIODevice::WriteOnly));
            QByteArray chunk;
            for (int i = 0; i < lines; ++i) {
                chunk += "{\"ts\":" + QByteArray::number(1771454649000LL + i) +
                         ",\"identity\":\"u" + QByteArray::number(i % 50) +
                         "\",\"url\":\"https://api.fabric.microsoft.com/v1/workspaces/" +
                         QByteArray::number(i) + "\",\"status\":200}\n";
                if (chunk.size() > (1 << 20)) {
                    file.write(chunk);
                    chunk.clear();
                }
            }
            file.write(chunk);
        }
        const QString ws = dir.filePath(u"ws.db"_qs);
        QProcess killed;
        killed.start(appBinary(), {u"import"_qs, u"--workspace"_qs, ws, log});
        QVERIFY(killed.waitForStarted());
        // Kill it (SIGKILL: no chance to clean up) once some batches are committed.
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(ws + u"-wal"_qs).size() > 4 * 1024 * 1024 ||
                                     killed.state() == QProcess::NotRunning,
                                 60000);
        QVERIFY2(killed.state() == QProcess::Running,
                 "the import finished before it could be killed");
        killed.kill();
        killed.waitForFinished();

        // What the workspace holds now is part of the file, and the report says so.
        const Run partial = run({u"report"_qs, u"--json"_qs, u"--workspace"_qs, ws});
        QCOMPARE(partial.exitCode, 0);
        QVERIFY2(partial.err.contains("import incomplete"), partial.err.constData());
        const QJsonObject partialReport = parseJson(partial.out);
        const QJsonArray incomplete = partialReport.value(u"incompleteSources"_qs).toArray();
        QCOMPARE(incomplete.size(), 1);
        const QJsonObject source = incomplete.first().toObject();
        QCOMPARE(source.value(u"path"_qs).toString(), QFileInfo(log).canonicalFilePath());
        QCOMPARE(source.value(u"sizeBytes"_qs).toInteger(), QFileInfo(log).size());
        QVERIFY(source.value(u"committedBytes"_qs).toInteger() > 0);
        QVERIFY(source.value(u"committedBytes"_qs).toInteger() < QFileInfo(log).size());
        QVERIFY(partialReport.value(u"events"_qs).toInt() < lines);
        const Run partialText = run({u"report"_qs, u"--workspace"_qs, ws});
        QVERIFY2(partialText.out.contains("INCOMPLETE: 1 source(s) only partly imported"),
                 partialText.out.constData());
        QVERIFY2(partialText.out.contains(QFileInfo(log).canonicalFilePath().toUtf8()),
                 partialText.out.constData());

        const Run resumed = run({u"import"_qs, u"--workspace"_qs, ws, log});
        QCOMPARE(resumed.exitCode, 0);
        QVERIFY2(resumed.err.contains("resumed after line"), resumed.err.constData());
        const QJsonObject report =
            parseJson(run({u"report"_qs, u"--json"_qs, u"--workspace"_qs, ws}).out);
        QCOMPARE(report.value(u"events").toInt(), lines);
        QCOMPARE(report.value(u"malformed").toInt(), 0);
        QCOMPARE(report.value(u"incompleteSources").toArray().size(), 0);
    }

    // A missing input is an error of the import: the others are imported, the status says so.
    void importWithAMissingInputFails()
    {
        QTemporaryDir dir;
        const QString ws = dir.filePath(u"ws.db"_qs);
        const QString missing = dir.filePath(u"missing.ndjson"_qs);
        const Run r = run({u"import"_qs, u"--workspace"_qs, ws,
                           dataFile(u"canonical/spec-examples.ndjson"_qs), missing});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains((missing + u": cannot open: "_qs).toUtf8()), r.err.constData());
        QVERIFY2(r.err.contains("5 events, 0 malformed records added"), r.err.constData());
        const Run report = run({u"report"_qs, u"--json"_qs, u"--workspace"_qs, ws});
        QCOMPARE(report.exitCode, 0);
        QCOMPARE(parseJson(report.out).value(u"events").toInt(), 4);
        // Missing first, or alone: the same.
        QCOMPARE(run({u"import"_qs, u"--workspace"_qs, ws, missing,
                      dataFile(u"canonical/spec-examples.ndjson"_qs)})
                     .exitCode,
                 1);
        QCOMPARE(run({u"import"_qs, u"--workspace"_qs, ws, missing}).exitCode, 1);
        // Documented in the command's help.
        const Run help = run({u"import"_qs, u"--help"_qs});
        QCOMPARE(help.exitCode, 0);
        QVERIFY2(help.out.contains("missing, unreadable or could not be imported"),
                 help.out.constData());
    }

    void secretsNeverReachTheWorkspace()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath(u"secrets.ndjson"_qs);
        {
            QFile file(log);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(
                "{\"ts\":1771454649000,\"identity\":\"a\",\"url\":\"https://"
                "acct.blob.core.windows.net/c/b?sv=2022&sig=SeCrEtSiGnAtUrE123%3D\",\"status\":200,"
                "\"headers\":{\"Authorization\":\"Bearer "
                "eyJhbGciOiJIUzI1NiJ9.eyJ1cG4iOiJhQGIuYyJ9.SeCrEtJwTsIg\",\"Set-Cookie\":\"session="
                "SeCrEtCoOkIe\"},"
                "\"authorization\":\"Basic SeCrEtBaSiC\"}\n");
        }
        const QString ws = dir.filePath(u"ws.db"_qs);
        QCOMPARE(run({u"import"_qs, u"--workspace"_qs, ws, log}).exitCode, 0);
        QByteArray bytes;
        for (const QString &suffix : {QString(), u"-wal"_qs}) {
            QFile file(ws + suffix);
            if (file.open(QIODevice::ReadOnly))
                bytes += file.readAll();
        }
        QVERIFY(!bytes.isEmpty());
        for (const char *secret :
             {"SeCrEtSiGnAtUrE123", "SeCrEtJwTsIg", "SeCrEtCoOkIe", "SeCrEtBaSiC"})
            QVERIFY2(!bytes.contains(secret), secret);
        const Run report = run({u"report"_qs, u"--json"_qs, log});
        QVERIFY(!report.out.contains("SeCrEt"));
    }

    void screenshotOfTheDemoAndOfAFile_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("demo") << QStringList{u"--demo"_qs, u"--screenshot-delay"_qs, u"3000"_qs};
        QTest::newRow("file-throttles-page") << QStringList{
            dataFile(u"canonical/spec-examples.ndjson"_qs), u"--page"_qs, u"throttles"_qs};
    }
    void screenshotOfTheDemoAndOfAFile()
    {
        QFETCH(QStringList, args);
        QTemporaryDir dir;
        const QString png = dir.filePath(u"shot.png"_qs);
        QProcess process;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"QT_QPA_PLATFORM"_qs, u"offscreen"_qs);
        process.setProcessEnvironment(env);
        process.start(appBinary(),
                      args + QStringList{u"--screenshot"_qs, png, u"--size"_qs, u"1600x1000"_qs});
        QVERIFY(process.waitForFinished(60000));
        QCOMPARE(process.exitCode(), 0);
        QImage image(png);
        QCOMPARE(image.size(), QSize(1600, 1000));
        // Not a blank window: many distinct colours.
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 7)
            for (int x = 0; x < image.width(); x += 7)
                colours.insert(image.pixel(x, y));
        QVERIFY2(colours.size() > 20, qPrintable(QString::number(colours.size())));
    }

    // A small file is read before the window has finished starting: the screenshot must still be
    // taken (it once waited for a "files finished" that had already been emitted and hung). Run
    // several times, with no display and no platform set: the dashboard picks offscreen itself.
    void screenshotAlwaysFinishesWithoutADisplay()
    {
        QTemporaryDir dir;
        for (int attempt = 0; attempt < 6; ++attempt) {
            const QString png = dir.filePath(u"shot%1.png"_qs.arg(attempt));
            QProcess process;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.remove(u"QT_QPA_PLATFORM"_qs);
            env.remove(u"DISPLAY"_qs);
            env.remove(u"WAYLAND_DISPLAY"_qs);
            process.setProcessEnvironment(env);
            process.start(appBinary(), {dataFile(u"canonical/spec-examples.ndjson"_qs),
                                        u"--screenshot"_qs, png, u"--size"_qs, u"800x600"_qs});
            QVERIFY2(process.waitForFinished(60000), "the screenshot run did not finish");
            QVERIFY2(process.exitCode() == 0, process.readAllStandardError().constData());
            QCOMPARE(QImage(png).size(), QSize(800, 600));
        }
    }

    // --screenshot-delay keeps following the files: lines appended while it waits are in the
    // picture, and standard error says how many events the picture shows.
    void screenshotDelayKeepsFollowing()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath(u"growing.ndjson"_qs);
        auto lines = [](int from, int count) {
            QByteArray data;
            for (int i = from; i < from + count; ++i)
                data += "{\"ts\":\"2026-02-18T22:44:09.512Z\",\"identity\":\"u-" +
                        QByteArray::number(i) + "\",\"service\":\"graph\",\"status\":429}\n";
            return data;
        };
        {
            QFile file(log);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(lines(0, 40));
        }
        const QString png = dir.filePath(u"shot.png"_qs);
        QProcess process;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove(u"QT_QPA_PLATFORM"_qs);
        env.remove(u"DISPLAY"_qs);
        env.remove(u"WAYLAND_DISPLAY"_qs);
        process.setProcessEnvironment(env);
        process.start(appBinary(), {log, u"--screenshot"_qs, png, u"--size"_qs, u"800x600"_qs,
                                    u"--screenshot-delay"_qs, u"4000"_qs});
        QVERIFY(process.waitForStarted());
        QTest::qWait(1500);
        {
            QFile file(log);
            QVERIFY(file.open(QIODevice::Append));
            file.write(lines(40, 60));
        }
        QVERIFY2(process.waitForFinished(60000), "the screenshot run did not finish");
        const QByteArray err = process.readAllStandardError();
        QVERIFY2(process.exitCode() == 0, err.constData());
        QVERIFY2(err.contains("(100 events)"), err.constData());
        QCOMPARE(QImage(png).size(), QSize(800, 600));
    }

    // Headless commands load no GUI library; the dashboard comes from a module next to the
    // executable. Without it the headless commands still work and the dashboard says what is
    // missing and where it was looked for.
    void dashboardModuleMissing()
    {
        QTemporaryDir dir;
        const QString copy = dir.filePath(u"throttlescope"_qs);
        QVERIFY(QFile::copy(appBinary(), copy));
        QVERIFY(QFile::setPermissions(copy, QFile::permissions(appBinary())));
        QProcess headless;
        headless.start(
            copy, {u"report"_qs, u"--json"_qs, dataFile(u"canonical/spec-examples.ndjson"_qs)});
        QVERIFY(headless.waitForFinished(60000));
        QCOMPARE(headless.exitCode(), 0);
        QVERIFY(parseJson(headless.readAllStandardOutput()).value(u"events"_qs).toInt() > 0);

        QProcess dashboard;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(u"QT_QPA_PLATFORM"_qs, u"offscreen"_qs);
        dashboard.setProcessEnvironment(env);
        dashboard.start(copy, {u"--demo"_qs});
        QVERIFY(dashboard.waitForFinished(60000));
        QCOMPARE(dashboard.exitCode(), 1);
        const QString err = QString::fromUtf8(dashboard.readAllStandardError());
        QVERIFY2(
            err.contains(u"cannot start the dashboard: throttlescope-dashboard.so not found"_qs),
            qPrintable(err));
        // Where the package installs it: lib/<multiarch>/throttlescope (lib/throttlescope
        // where the platform has no multiarch triplet).
        QVERIFY2(err.contains(u"/throttlescope"_qs) && err.contains(u"../lib/"_qs),
                 qPrintable(err));
    }

    void missingFileNamedButOthersStillReported()
    {
        const Run r = run({u"report"_qs, u"--json"_qs, u"/nonexistent/log.ndjson"_qs,
                           dataFile(u"canonical/spec-examples.ndjson"_qs)});
        QCOMPARE(r.exitCode, 0);
        QVERIFY(r.err.contains("/nonexistent/log.ndjson: cannot open"));
        QCOMPARE(parseJson(r.out).value(u"events").toInt(), 4);
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
