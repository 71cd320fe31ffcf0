// Following a workspace that another process writes: `throttlescope tail --workspace` runs as a
// real second process while the test appends to the log it follows. The follower's replay plus
// what it polls afterwards is every committed event exactly once, and the dashboard's session
// (AnalysisSession::openWorkspace) shows the new events without being asked.
#include "session/analysissession.h"
#include "store/workspacefollower.h"
#include "store/workspacereader.h"

#include <QFile>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

using namespace ts;

namespace {

QString binary()
{
    const QString fromEnvironment = qEnvironmentVariable("TS_APP_BINARY");
    return fromEnvironment.isEmpty() ? QStringLiteral(TS_APP_BINARY) : fromEnvironment;
}

QByteArray lines(int from, int count)
{
    QByteArray data;
    for (int i = from; i < from + count; ++i)
        data += "{\"ts\":\"2026-02-18T22:44:09.512Z\",\"identity\":\"u-" + QByteArray::number(i) +
                "\",\"service\":\"graph\",\"status\":429}\n";
    return data;
}

void appendTo(const QString &path, const QByteArray &data)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Append));
    QCOMPARE(file.write(data), data.size());
}

qint64 committed(const QString &workspace)
{
    WorkspaceReader reader;
    return reader.open(workspace) ? reader.countEvents() : -1;
}

// `tail --workspace WS LOG` in its own process.
struct TailProcess
{
    QProcess process;
    bool start(const QString &workspace, const QString &log)
    {
        process.start(binary(), {QStringLiteral("tail"), QStringLiteral("--workspace"), workspace,
                                 QStringLiteral("--status-interval"), QStringLiteral("0"),
                                 QStringLiteral("--poll-ms"), QStringLiteral("20"), log});
        return process.waitForStarted();
    }
    ~TailProcess()
    {
        process.terminate();
        process.waitForFinished(30000);
    }
};

} // namespace

class TestWorkspaceFollower : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void followsAnotherProcess()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath(QStringLiteral("app.ndjson"));
        const QString workspace = dir.filePath(QStringLiteral("live.tsws"));
        appendTo(log, lines(0, 300));
        TailProcess tail;
        QVERIFY(tail.start(workspace, log));
        QTRY_COMPARE_WITH_TIMEOUT(committed(workspace), 300, 30000);

        WorkspaceFollower follower;
        QVERIFY(follower.open(workspace));
        QStringList seen;
        // Appended while the replay runs: either the replay or the first polls take them.
        appendTo(log, lines(300, 200));
        QVERIFY(follower.replay(64, [&](const QList<RequestEvent> &chunk) {
            for (const RequestEvent &event : chunk)
                seen.append(event.identity);
            return true;
        }));
        QCOMPARE(follower.replayedEvents, qint64(seen.size()));
        QVERIFY(seen.size() >= 300);
        for (int step = 0; step < 5; ++step) {
            appendTo(log, lines(500 + step * 100, 100));
            QTest::qWait(50);
            for (const RequestEvent &event : follower.poll(70).events)
                seen.append(event.identity);
        }
        QTRY_COMPARE_WITH_TIMEOUT(committed(workspace), 1000, 30000);
        // Nothing new committed: a poll is one PRAGMA and brings nothing.
        for (int i = 0; i < 40 && seen.size() < 1000; ++i) {
            for (const RequestEvent &event : follower.poll(70).events)
                seen.append(event.identity);
        }
        QVERIFY(follower.poll().events.isEmpty());
        QCOMPARE(seen.size(), 1000);
        QCOMPARE(QSet<QString>(seen.cbegin(), seen.cend()).size(), 1000);
    }

    // The dashboard's session shows what another process commits, by itself.
    void sessionShowsNewCommits()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath(QStringLiteral("app.ndjson"));
        const QString workspace = dir.filePath(QStringLiteral("live.tsws"));
        appendTo(log, lines(0, 100));
        TailProcess tail;
        QVERIFY(tail.start(workspace, log));
        QTRY_COMPARE_WITH_TIMEOUT(committed(workspace), 100, 30000);

        AnalysisSession session;
        qint64 shown = -1;
        connect(&session, &AnalysisSession::snapshotReady, this,
                [&](std::shared_ptr<const DashboardSnapshot> snapshot) {
                    shown = snapshot->report.events;
                });
        session.openWorkspace(workspace);
        QCOMPARE(shown, 100);
        appendTo(log, lines(100, 250));
        QTRY_COMPARE_WITH_TIMEOUT(shown, 350, 20000);
        appendTo(log, lines(350, 50) + "not json\n");
        QTRY_COMPARE_WITH_TIMEOUT(shown, 400, 20000);
    }
};

QTEST_GUILESS_MAIN(TestWorkspaceFollower)
#include "tst_workspacefollower.moc"
