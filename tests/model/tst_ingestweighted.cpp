// The Ingest page counts what a source stands for as the report does (issue 21.4): an event of
// weight n (a push-down aggregate, a canonical record with "weight") is n requests, an
// annotation or a $batch envelope none (RequestEvent::countedRequests, Analysis::count). Every
// way the dashboard's session takes events in (a file read, a live batch, a followed file, a
// polled store, an opened workspace) feeds weighted events; the session's IngestStatus, the
// IngestSourcesModel (under QAbstractItemModelTester) and the report all say the same count,
// and a file's follower still starts after the records read (rows, not requests).
#include "models/ingestmodels.h"
#include "session/analysissession.h"
#include "store/workspace.h"
#include "store/workspacewriter.h"

#include <QAbstractItemModelTester>
#include <QFile>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

using namespace ts;

namespace {

constexpr qint64 kBase = 1771454640000; // 2026-02-18T22:44:00Z

// Weights of the request records; an annotation and (where the source can carry one) a $batch
// envelope are fed along with them and count as no request.
const QList<qint64> kWeights = {1, 7, 250, 1, 42};
constexpr qint64 kRequests = 1 + 7 + 250 + 1 + 42;

QList<RequestEvent> weightedEvents(const QString &source, bool envelope, qint64 shiftMs = 0)
{
    QList<RequestEvent> events;
    for (qsizetype i = 0; i < kWeights.size(); ++i) {
        RequestEvent e;
        e.tsMs = kBase + shiftMs + i * 1000;
        e.service = QStringLiteral("fabric");
        e.identity = QStringLiteral("sp-store");
        e.method = QStringLiteral("GET");
        e.url = QStringLiteral("https://api.fabric.microsoft.com/v1/workspaces");
        e.status = i == 2 ? 429 : 200;
        e.weight = kWeights.at(i);
        e.source = source;
        e.line = i + 1;
        events.append(e);
    }
    RequestEvent note;
    note.type = EventType::Annotation;
    note.tsMs = kBase + shiftMs + 500;
    note.extraJson = QByteArrayLiteral(R"({"text":"a note"})");
    note.source = source;
    events.insert(1, note);
    if (envelope) {
        RequestEvent batch = events.at(0);
        batch.batchEnvelope = true;
        batch.url = QStringLiteral("https://graph.microsoft.com/v1.0/$batch");
        batch.weight = 1;
        events.insert(2, batch);
    }
    return events;
}

QByteArray weightedNdjson(qint64 shiftMs = 0)
{
    QByteArray text;
    for (qsizetype i = 0; i < kWeights.size(); ++i) {
        text +=
            QStringLiteral(R"({"ts":%1,"service":"fabric","identity":"sp-store","method":"GET",)"
                           R"("url":"https://api.fabric.microsoft.com/v1/workspaces",)"
                           R"("status":%2,"weight":%3})")
                .arg(kBase + shiftMs + i * 1000)
                .arg(i == 2 ? 429 : 200)
                .arg(kWeights.at(i))
                .toUtf8() +
            '\n';
        if (i == 0)
            text += QStringLiteral(R"({"ts":%1,"type":"annotation","text":"a note"})")
                        .arg(kBase + shiftMs + 500)
                        .toUtf8() +
                    '\n';
    }
    return text;
}

} // namespace

class TestIngestWeighted : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sourcesCountRequests_data()
    {
        QTest::addColumn<QString>("how");
        QTest::newRow("file read") << u"file"_qs;
        QTest::newRow("live batch") << u"live"_qs;
        QTest::newRow("followed file") << u"followed"_qs;
        QTest::newRow("polled store") << u"polled"_qs;
        QTest::newRow("opened workspace") << u"workspace"_qs;
    }

    void sourcesCountRequests()
    {
        QFETCH(QString, how);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());

        QThread worker;
        auto *session = new AnalysisSession;
        session->moveToThread(&worker);
        connect(&worker, &QThread::finished, session, &QObject::deleteLater);
        worker.start();
        // However the test ends, the worker stops first (a running QThread must not be destroyed).
        const auto stopWorker = qScopeGuard([&worker] {
            worker.quit();
            worker.wait();
        });
        QSignalSpy snapshots(session, &AnalysisSession::snapshotReady);
        QSignalSpy status(session, &AnalysisSession::ingestStatusChanged);
        QSignalSpy read(session, &AnalysisSession::sourceRead);
        QSignalSpy finished(session, &AnalysisSession::filesFinished);
        QSignalSpy opened(session, &AnalysisSession::operationFinished);

        QString path;
        qint64 rows = 0; // records the source delivers (requests, the annotation, an envelope)
        if (how == u"file") {
            path = dir.filePath(u"weighted.ndjson"_qs);
            QFile file(path);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(weightedNdjson());
            file.close();
            rows = kWeights.size() + 1;
            QMetaObject::invokeMethod(
                session, [session, path] { session->openFiles({path}, SourceOptions{}); });
            QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 20000);
        } else if (how == u"live") {
            path = u"demo"_qs;
            const QList<RequestEvent> events = weightedEvents(path, true);
            rows = events.size();
            QMetaObject::invokeMethod(session, [session, events] { session->ingestBatch(events); });
        } else if (how == u"followed") {
            path = dir.filePath(u"followed.ndjson"_qs);
            const QList<RequestEvent> events = weightedEvents(path, true);
            rows = events.size();
            QMetaObject::invokeMethod(
                session, [session, path, events] { session->ingestFollowed(path, events, {}); });
        } else if (how == u"polled") {
            path = u"clickhouse://127.0.0.1:8123/logs/requests"_qs;
            const QList<RequestEvent> events = weightedEvents(path, false);
            rows = events.size();
            QMetaObject::invokeMethod(session, [session, path, events] {
                session->ingestPolled(path, u"clickhouse"_qs, events, {}, {});
            });
        } else {
            path = dir.filePath(u"weighted.tsws"_qs);
            QList<RequestEvent> events = weightedEvents(u"store"_qs, false);
            events.removeIf([](const RequestEvent &e) { return !e.isRequest(); });
            rows = events.size();
            {
                Workspace workspace;
                QVERIFY(workspace.open(path));
                const qint64 sourceId =
                    workspace.addSource(u"store"_qs, u"ndjson"_qs, 0, 0, QByteArray("weighted"));
                WorkspaceWriter writer;
                QVERIFY(writer.start(path));
                WriteBatch batch;
                batch.sourceId = sourceId;
                batch.events = events;
                QVERIFY(writer.submit(std::move(batch)));
                QVERIFY(writer.finish());
            }
            QMetaObject::invokeMethod(session, [session, path] { session->openWorkspace(path); });
            QTRY_VERIFY_WITH_TIMEOUT(!opened.isEmpty(), 20000);
            QVERIFY2(opened.last().at(0).toBool(), qPrintable(opened.last().at(1).toString()));
        }
        // The session publishes within its refresh interval.
        QMetaObject::invokeMethod(session, [session] { session->publishIfDirty(); });
        const auto ourSource = [&status, &path]() -> std::optional<IngestSourceStatus> {
            if (status.isEmpty())
                return std::nullopt;
            for (const IngestSourceStatus &s : status.last().at(0).value<IngestStatus>().sources)
                if (s.path == path && s.events > 0)
                    return s;
            return std::nullopt;
        };
        QTRY_VERIFY_WITH_TIMEOUT(ourSource().has_value(), 20000);
        QTRY_VERIFY_WITH_TIMEOUT(!snapshots.isEmpty(), 20000);
        const auto snapshot =
            snapshots.last().at(0).value<std::shared_ptr<const DashboardSnapshot>>();
        QCOMPARE(snapshot->report.events, kRequests);

        const IngestSourceStatus source = *ourSource();
        QCOMPARE(source.events, kRequests);

        models::IngestSourcesModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setSources(status.last().at(0).value<IngestStatus>().sources);
        int row = -1;
        for (int r = 0; r < model.rowCount(); ++r)
            if (model.sourceAt(r).path == path)
                row = r;
        QVERIFY(row >= 0);
        QCOMPARE(model.index(row, models::IngestSourcesModel::EventsColumn)
                     .data(Qt::DisplayRole)
                     .toLongLong(),
                 kRequests);
        QVERIFY(model
                    .headerData(models::IngestSourcesModel::EventsColumn, Qt::Horizontal,
                                Qt::ToolTipRole)
                    .toString()
                    .contains(u"weight"));

        if (how == u"file") {
            // The follower starts after the records read, not after as many as they stand for.
            QCOMPARE(read.size(), 1);
            QCOMPARE(read.last().at(4).toLongLong(), rows);
            // The file grows; a policy change reads it again, ahead of its follower: the same
            // count as the records read, not twice as much.
            QFile file(path);
            QVERIFY(file.open(QIODevice::Append));
            file.write(weightedNdjson(10'000));
            file.close();
            const qsizetype before = status.size();
            QMetaObject::invokeMethod(session, [session] { session->setPolicies(u"fabric"_qs); });
            QTRY_VERIFY_WITH_TIMEOUT(status.size() > before && ourSource() &&
                                         ourSource()->events == 2 * kRequests,
                                     20000);
            // The follower then delivers the records the re-read took ahead of it (skipped: the
            // re-read counted them) and new ones (counted, weighted).
            const QList<RequestEvent> taken = weightedEvents(path, false, 10'000);
            const QList<RequestEvent> fresh = weightedEvents(path, false, 20'000);
            QMetaObject::invokeMethod(session, [session, path, taken, fresh] {
                session->ingestFollowed(path, taken, {});
                session->ingestFollowed(path, fresh, {});
                session->publishIfDirty();
            });
            QTRY_VERIFY_WITH_TIMEOUT(ourSource() && ourSource()->events != 2 * kRequests, 20000);
            QCOMPARE(ourSource()->events, 3 * kRequests);
        }
    }
};

QTEST_GUILESS_MAIN(TestIngestWeighted)
#include "tst_ingestweighted.moc"
