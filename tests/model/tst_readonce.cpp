// Opening a file in the dashboard reads it once (issue 17.5): the same pass feeds the analysis
// and the scratch workspace the Events page browses, with progress and cancel. A named pipe can
// only be read once, so a second read would find nothing (or wait forever).
#include "session/analysissession.h"
#include "store/workspacereader.h"

#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>

#include <thread>

using namespace ts;

namespace {

QByteArray lines(int from, int count)
{
    QByteArray data;
    for (int i = from; i < from + count; ++i)
        data += "{\"ts\":\"2026-02-18T22:44:09.512Z\",\"identity\":\"u-" + QByteArray::number(i % 50) +
                "\",\"service\":\"graph\",\"status\":" + (i % 4 == 0 ? "429" : "200") + "}\n";
    return data;
}

qint64 committed(const QString &workspace)
{
    WorkspaceReader reader;
    return reader.open(workspace) ? reader.countEvents() : -1;
}

// The session's last snapshot and the workspace it says the Events page browses.
struct Watcher
{
    qint64 shown = -1;
    QString workspace;
    int progressCalls = 0;
    explicit Watcher(AnalysisSession &session, QObject *context)
    {
        QObject::connect(&session, &AnalysisSession::snapshotReady, context,
                         [this](std::shared_ptr<const DashboardSnapshot> snapshot) {
                             shown = snapshot->report.events;
                         });
        QObject::connect(&session, &AnalysisSession::workspaceReady, context,
                         [this](const QString &path) { workspace = path; });
        QObject::connect(&session, &AnalysisSession::progress, context,
                         [this](qint64, qint64) { ++progressCalls; });
    }
};

} // namespace

class TestReadOnce : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void pipeIsReadOnce()
    {
        QTemporaryDir dir;
        const QString fifo = dir.filePath(QStringLiteral("live.pipe"));
        QCOMPARE(::mkfifo(QFile::encodeName(fifo).constData(), 0600), 0);
        std::thread writer([&] {
            QFile out(fifo);
            if (out.open(QIODevice::WriteOnly))
                out.write(lines(0, 5000));
        });
        AnalysisSession session;
        Watcher watcher(session, this);
        session.openFiles({fifo}, SourceOptions{});
        writer.join();
        QCOMPARE(watcher.shown, 5000);
        QVERIFY(!watcher.workspace.isEmpty());
        QCOMPARE(committed(watcher.workspace), 5000);
    }

    void fileFeedsBothWithProgress()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("app.ndjson"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(lines(0, 3000) + "not json\n");
        file.close();
        AnalysisSession session;
        Watcher watcher(session, this);
        session.openFiles({path}, SourceOptions{});
        QCOMPARE(watcher.shown, 3000);
        QVERIFY(watcher.progressCalls > 0);
        WorkspaceReader reader;
        QVERIFY(reader.open(watcher.workspace));
        QCOMPARE(reader.countEvents(), 3000);
        QCOMPARE(reader.countMalformed(), 1);
        // The rows keep their file and line.
        const QList<StoredEvent> page = reader.fetchPage({}, 0, 2);
        QCOMPARE(page.size(), 2);
        QCOMPARE(page.at(1).event.line, 2);
        QVERIFY(page.at(1).event.source.endsWith(QStringLiteral("app.ndjson")));
    }

    // Cancel stops the one read: what the analysis took is exactly what the workspace holds.
    void cancelStopsBoth()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("big.ndjson"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        for (int i = 0; i < 40; ++i)
            file.write(lines(i * 10000, 10000));
        file.close();
        AnalysisSession session;
        Watcher watcher(session, this);
        connect(&session, &AnalysisSession::progress, this, [&](qint64 done, qint64 total) {
            if (done > 0 && done < total)
                session.requestCancel();
        });
        session.openFiles({path}, SourceOptions{});
        QVERIFY2(watcher.shown > 0 && watcher.shown < 400000, qPrintable(QString::number(watcher.shown)));
        QCOMPARE(committed(watcher.workspace), watcher.shown);
    }
};

QTEST_GUILESS_MAIN(TestReadOnce)
#include "tst_readonce.moc"
