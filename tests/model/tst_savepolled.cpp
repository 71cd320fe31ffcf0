// File > Save As of a session that opened a workspace holding a polled store (issue 21.2: a
// restart resumes from the stored cursor): the saved workspace holds the store as a polled store,
// with its rows and its cursor, so reopening it resumes polling after the rows it has. Copied as
// plain rows under "workspace:PATH#ID", the cursor was lost and a resumed poll read them again.
#include "session/analysissession.h"
#include "store/workspace.h"
#include "store/workspacereader.h"
#include "store/workspacewriter.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace ts;
using namespace Qt::StringLiterals;

namespace {

const QString kUrl = u"https://clickhouse.example:8443/?table=requests"_s;

// A workspace that a poller wrote: a polled source, its rows and the cursor after them.
bool writePolledWorkspace(const QString &path, int rows, const QByteArray &cursor)
{
    Workspace workspace;
    if (!workspace.open(path))
        return false;
    const qint64 sourceId = workspace.ensurePolledSource(kUrl, u"clickhouse"_s);
    WorkspaceWriter writer;
    if (sourceId == 0 || !writer.start(path))
        return false;
    WriteBatch batch;
    batch.sourceId = sourceId;
    for (int i = 0; i < rows; ++i) {
        RequestEvent event;
        event.tsMs = 1771454400000 + i * 1000;
        event.identity = u"sp-%1"_s.arg(i % 3);
        event.service = u"fabric"_s;
        event.status = i % 5 == 0 ? 429 : 200;
        event.secretsMasked = true;
        batch.events.append(event);
    }
    batch.pollCursor = cursor;
    return writer.submit(std::move(batch)) && writer.finish();
}

struct Polled
{
    qint64 rows = -1;
    QByteArray cursor;
    int sources = 0;
};

Polled polledIn(const QString &path)
{
    Polled polled;
    Workspace workspace;
    if (!workspace.open(path))
        return polled;
    const auto records = workspace.polledSources();
    if (!records)
        return polled;
    polled.sources = int(records->size());
    WorkspaceReader reader;
    if (!reader.open(path))
        return polled;
    for (const PolledSourceRecord &record : *records) {
        if (record.source.path != kUrl)
            continue;
        polled.cursor = record.cursorState;
        EventFilter filter;
        filter.sourceId = record.source.id;
        polled.rows = reader.countEvents(filter);
    }
    return polled;
}

} // namespace

class TestSavePolled : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void saveAsKeepsPolledStore_data()
    {
        QTest::addColumn<int>("saves");
        QTest::newRow("saved once") << 1;
        QTest::newRow("saved twice to the same file") << 2; // replaced, not added again
    }

    void saveAsKeepsPolledStore()
    {
        QFETCH(int, saves);
        QTemporaryDir dir;
        const QString opened = dir.filePath(u"polled.tsws"_s);
        const QString saved = dir.filePath(u"saved.tsws"_s);
        QVERIFY(writePolledWorkspace(opened, 40, "cursor-after-40"));

        AnalysisSession session;
        QSignalSpy finished(&session, &AnalysisSession::operationFinished);
        session.openWorkspace(opened);
        for (int i = 0; i < saves; ++i) {
            finished.clear();
            session.saveWorkspace(saved);
            QCOMPARE(finished.size(), 1);
            QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(finished.at(0).at(1).toString()));
        }
        const Polled polled = polledIn(saved);
        QCOMPARE(polled.sources, 1);
        QCOMPARE(polled.rows, 40);
        QCOMPARE(polled.cursor, QByteArray("cursor-after-40"));
        WorkspaceReader reader;
        QVERIFY(reader.open(saved));
        QCOMPARE(reader.countEvents(), 40);
    }
};

QTEST_GUILESS_MAIN(TestSavePolled)
#include "tst_savepolled.moc"
