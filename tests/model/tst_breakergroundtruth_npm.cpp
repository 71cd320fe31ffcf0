// The breaker fixtures are the libraries' own output (issue 35.5): the packages are installed
// from npm into a temporary folder (cockatiel 4.0.0, opossum 10.0.0, @sinonjs/fake-timers
// 15.5.0, pinned), tests/tools/breaker_groundtruth.mjs runs them again, and every committed
// fixture under tests/data/groundtruth must come out byte for byte. No network access besides
// the npm registry for the install; when that fails the test fails (it must not pass without
// having run the real libraries), as tst_oteljs does.

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

namespace {

const QString kFixtures = QStringLiteral(TS_TEST_DATA_DIR "/groundtruth");
const QString kGenerator = QStringLiteral(TS_TEST_DATA_DIR "/../tools/breaker_groundtruth.mjs");

bool run(QProcess &process, const QString &program, const QStringList &arguments, int timeoutMs,
         QString *output)
{
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(program, arguments);
    if (!process.waitForStarted(10000)) {
        *output = program + u": "_qs + process.errorString();
        return false;
    }
    const bool done = process.waitForFinished(timeoutMs);
    *output = QString::fromLocal8Bit(process.readAll());
    if (!done) {
        process.kill();
        process.waitForFinished(5000);
        *output += QStringLiteral("\n(timed out after %1 s)").arg(timeoutMs / 1000);
        return false;
    }
    return process.exitStatus() == QProcess::NormalExit && process.exitCode() == 0;
}

QByteArray contentOf(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

} // namespace

class TestBreakerGroundTruthNpm : public QObject
{
    Q_OBJECT

    QTemporaryDir m_packages;
    QTemporaryDir m_output;

private slots:
    void initTestCase()
    {
        QVERIFY2(!QStandardPaths::findExecutable(u"node"_qs).isEmpty(), "node is not installed");
        QVERIFY2(!QStandardPaths::findExecutable(u"npm"_qs).isEmpty(), "npm is not installed");
        QVERIFY(m_packages.isValid() && m_output.isValid());
        // A package of its own, so npm installs here and not in a parent that has node_modules.
        QFile package(m_packages.filePath(u"package.json"_qs));
        QVERIFY(package.open(QIODevice::WriteOnly));
        package.write(R"({"name": "breaker-groundtruth", "private": true})");
        package.close();
        QProcess npm;
        npm.setWorkingDirectory(m_packages.path());
        QString output;
        const bool installed =
            run(npm, u"npm"_qs,
                {u"install"_qs, u"--no-audit"_qs, u"--no-fund"_qs, u"--loglevel=error"_qs,
                 u"cockatiel@4.0.0"_qs, u"opossum@10.0.0"_qs, u"@sinonjs/fake-timers@15.5.0"_qs},
                300000, &output);
        QVERIFY2(installed, qPrintable(u"npm install of the breaker libraries failed (is the npm "
                                       u"registry reachable?); this test needs them:\n"_qs +
                                       output.right(3000)));
    }

    void fixturesAreTheLibrariesOwn()
    {
        QProcess node;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(u"NODE_PATH"_qs, m_packages.filePath(u"node_modules"_qs));
        node.setProcessEnvironment(environment);
        QString output;
        QVERIFY2(run(node, u"node"_qs, {kGenerator, m_output.path()}, 120000, &output),
                 qPrintable(output));
        const QStringList generated = QDir(m_output.path()).entryList(QDir::Files, QDir::Name);
        const QStringList committed =
            QDir(kFixtures).entryList({u"breaker-*"_qs}, QDir::Files, QDir::Name);
        QCOMPARE(generated, committed);
        QVERIFY(generated.size() >= 12);
        for (const QString &name : generated) {
            const QByteArray fresh = contentOf(m_output.filePath(name));
            QVERIFY2(!fresh.isEmpty(), qPrintable(name));
            QVERIFY2(fresh == contentOf(QDir(kFixtures).filePath(name)),
                     qPrintable(name + u" differs from what the libraries give now"_qs));
        }
    }
};

QTEST_GUILESS_MAIN(TestBreakerGroundTruthNpm)
#include "tst_breakergroundtruth_npm.moc"
