// Issue 29.12: a workspace on a read-only mount (a backup, a share mounted ro) is read: `report
// --workspace` reports its events and says it opened it read-only, and the window shows them
// (its screenshot counts them) instead of 0 events. The mount is a real one: a bind mount of
// the workspace's folder remounted read-only in a mount namespace of its own (unshare), so
// SQLite meets EROFS exactly as on a read-only file system.
#include "testcli.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

namespace {

// Runs the app with `args` where `folder` is mounted read-only (nothing else changes).
ts::test::AppRun runOnReadOnlyMount(const QString &folder, const QStringList &args)
{
    QProcess process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(u"QT_QPA_PLATFORM"_qs, u"offscreen"_qs);
    process.setProcessEnvironment(environment);
    const QString script = u"mount --bind \"$1\" \"$1\" && mount -o remount,ro,bind \"$1\" && "
                           u"shift && exec \"$@\""_qs;
    process.start(u"unshare"_qs, QStringList{u"-rm"_qs, u"sh"_qs, u"-c"_qs, script, u"sh"_qs,
                                             folder, ts::test::appBinary()} +
                                     args);
    if (!process.waitForStarted() || !process.waitForFinished(180'000))
        return {};
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            process.readAllStandardOutput(), process.readAllStandardError()};
}

} // namespace

class TestReadOnlyWorkspace : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_workspace;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(!QStandardPaths::findExecutable(u"unshare"_qs).isEmpty(),
                 "unshare (util-linux) is needed to mount a folder read-only");
        QVERIFY(m_dir.isValid());
        const QString log = m_dir.filePath(u"requests.ndjson"_qs);
        QFile file(log);
        QVERIFY(file.open(QIODevice::WriteOnly));
        for (int i = 0; i < 250; ++i) {
            file.write("{\"ts\":" + QByteArray::number(1771454400000 + i * 100) +
                       ",\"service\":\"graph\",\"identity\":\"sp-1\",\"method\":\"GET\","
                       "\"url\":\"https://graph.microsoft.com/v1.0/me\",\"status\":" +
                       (i % 10 == 0 ? "429" : "200") + "}\n");
        }
        file.close();
        QDir().mkpath(m_dir.filePath(u"ro"_qs));
        m_workspace = m_dir.filePath(u"ro/migration.tsws"_qs);
        const ts::test::AppRun import =
            ts::test::runApp({u"import"_qs, u"--workspace"_qs, m_workspace, log});
        QVERIFY2(import.exitCode == 0, import.err.constData());
        // Only the workspace file is left (closed cleanly: no -wal, no -shm).
        QVERIFY(!QFile::exists(m_workspace + u"-wal"_qs));
        QVERIFY(!QFile::exists(m_workspace + u"-shm"_qs));
    }

    void reportReadsIt()
    {
        const ts::test::AppRun run = runOnReadOnlyMount(
            m_dir.filePath(u"ro"_qs), {u"report"_qs, u"--workspace"_qs, m_workspace, u"--json"_qs});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        const QJsonObject report = QJsonDocument::fromJson(run.out).object();
        QCOMPARE(report.value(u"events"_qs).toInteger(), 250);
        QVERIFY2(run.err.contains("opened read-only"), run.err.constData());
        // Nothing was left beside it, not even an attempt.
        QVERIFY(!QFile::exists(m_workspace + u"-shm"_qs));
    }

    void windowShowsIt()
    {
        const QString picture = m_dir.filePath(u"window.png"_qs);
        const ts::test::AppRun run = runOnReadOnlyMount(
            m_dir.filePath(u"ro"_qs), {u"--screenshot"_qs, picture, m_workspace});
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QVERIFY2(run.err.contains("(250 events)"), run.err.constData());
        QVERIFY(QFile::exists(picture));
    }
};

QTEST_GUILESS_MAIN(TestReadOnlyWorkspace)
#include "tst_readonlyworkspace.moc"
