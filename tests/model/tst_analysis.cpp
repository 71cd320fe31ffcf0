// The Analysis sink and the dashboard's worker session: the parallel batch path gives exactly
// the inline result, and the session publishes snapshots, ingest status, policy re-runs and a
// browsable workspace from its own thread.
#include "engine/analysis.h"
#include "engine/reportformat.h"
#include "session/analysissession.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

using namespace ts;

namespace {

QString dataFile(const QString &relative)
{
    return QStringLiteral(TS_TEST_DATA_DIR) + u'/' + relative;
}

// A throttled Fabric client and a OneNote client, with retries: every stage has work to do.
std::vector<RequestEvent> syntheticTraffic(int count)
{
    std::vector<RequestEvent> events;
    const qint64 t0 = 1771454649000;
    for (int i = 0; i < count; ++i) {
        RequestEvent e;
        e.tsMs = t0 + i * 20;
        if (i % 2 == 0) {
            e.identity = QStringLiteral("sp-%1").arg(i % 7);
            e.service = QStringLiteral("fabric");
            e.method = QStringLiteral("GET");
            e.url = QStringLiteral("https://api.fabric.microsoft.com/v1/workspaces/%1/items")
                        .arg(i % 50);
            e.status = (i / 2) % 300 < 200 ? 200 : 429;
            if (e.status == 429) {
                e.errorCode = QStringLiteral("RequestBlocked");
                e.retryAfter = QStringLiteral("20");
            }
        } else {
            e.identity = QStringLiteral("user%1@contoso.com").arg(i % 3);
            e.app = QStringLiteral("note-bridge");
            e.service = QStringLiteral("graph");
            e.method = QStringLiteral("GET");
            e.url = QStringLiteral("https://graph.microsoft.com/v1.0/me/onenote/pages/%1/content")
                        .arg(i % 400);
            e.status = i % 11 == 0 ? 429 : 200;
            e.operationId = QStringLiteral("page-%1").arg(i % 400);
            e.attempt = i % 11 == 0 ? 1 : 0;
            e.lane = i % 4 == 1 ? QStringLiteral("background") : QStringLiteral("foreground");
            e.durationMs = 120;
        }
        events.push_back(e);
    }
    return events;
}

} // namespace

class TestAnalysis : public QObject
{
    Q_OBJECT
private slots:
    void parallelBatchesEqualInline_data()
    {
        QTest::addColumn<int>("events");
        QTest::addColumn<int>("batch");
        QTest::newRow("small-batches-inline") << 5000 << 100;
        QTest::newRow("large-batches-threaded") << 20000 << 4096;
        QTest::newRow("one-huge-batch") << 20000 << 20000;
    }
    // A Fabric client passes 80 % of its 200-per-minute window and the service has not said a
    // word (no percentage headers): the engine's reconstructed fill soft-opens the client's
    // breaker, the same on the inline and the threaded path.
    void reconstructedFillSoftensBreakers_data()
    {
        QTest::addColumn<int>("batch");
        QTest::newRow("inline") << 100;
        QTest::newRow("threaded") << 4096;
    }
    void reconstructedFillSoftensBreakers()
    {
        QFETCH(int, batch);
        std::vector<RequestEvent> traffic;
        const qint64 t0 = 1771454640000; // a minute boundary
        for (int i = 0; i < 3000; ++i) {
            RequestEvent e;
            e.tsMs = t0 + i * 20;
            e.service = QStringLiteral("fabric");
            e.method = QStringLiteral("GET");
            e.url = QStringLiteral("https://api.fabric.microsoft.com/v1/workspaces/w/items");
            e.status = 200;
            // Every 10th request is the busy client's (170 in its first minute); the rest come
            // from 90 quiet ones.
            e.identity = i % 10 == 0 && i < 1700 ? QStringLiteral("sp-busy")
                                                 : QStringLiteral("sp-quiet-%1").arg(i % 90);
            traffic.push_back(e);
        }
        Analysis analysis;
        for (size_t start = 0; start < traffic.size(); start += size_t(batch)) {
            const size_t end = std::min(traffic.size(), start + size_t(batch));
            analysis.onEvents(std::vector<RequestEvent>(traffic.begin() + qsizetype(start),
                                                        traffic.begin() + qsizetype(end)));
        }
        const ReportData report = analysis.report();
        QList<BreakerTransition> softened;
        for (const BreakerTransition &t : report.breakerTransitions) {
            if (t.to == u"soft-open")
                softened.append(t);
        }
        QCOMPARE(softened.size(), 1);
        QCOMPARE(softened.first().scope, QStringLiteral("fabric:sp-busy"));
        QVERIFY2(softened.first().reason.startsWith(u"reconstructed fill 0.8"),
                 qPrintable(softened.first().reason));
        QCOMPARE(softened.first().tsMs, t0 + 1590 * 20); // its 160th request: 160 / 200
    }

    // A report-only analysis keeps no usage series: every report field must come out the
    // same as in the dashboard's analysis, which keeps them.
    void reportOnlyReportsTheSame()
    {
        const std::vector<RequestEvent> traffic = syntheticTraffic(20000);
        Analysis dashboard(PolicySet::builtin(), Analysis::Purpose::Dashboard);
        Analysis reportOnly(PolicySet::builtin(), Analysis::Purpose::ReportOnly);
        for (size_t start = 0; start < traffic.size(); start += 4096) {
            const size_t end = std::min(traffic.size(), start + 4096);
            const std::vector<RequestEvent> batch(traffic.begin() + qsizetype(start),
                                                  traffic.begin() + qsizetype(end));
            dashboard.onEvents(std::vector<RequestEvent>(batch));
            reportOnly.onEvents(std::vector<RequestEvent>(batch));
        }
        const QByteArray expected = reportToJson(dashboard.report());
        QVERIFY(expected.contains("\"scopes\""));
        QCOMPARE(reportToJson(reportOnly.report()), expected);
        // ... while the dashboard's plots do have their series.
        const DashboardSnapshot snapshot = dashboard.snapshot();
        QVERIFY(std::any_of(snapshot.series.cbegin(), snapshot.series.cend(),
                            [](const auto &series) { return !series.usage.empty(); }));
    }

    void parallelBatchesEqualInline()
    {
        QFETCH(int, events);
        QFETCH(int, batch);
        const std::vector<RequestEvent> traffic = syntheticTraffic(events);
        Analysis inlineAnalysis;
        for (const RequestEvent &event : traffic)
            inlineAnalysis.add(event);
        Analysis batched;
        for (size_t start = 0; start < traffic.size(); start += size_t(batch)) {
            const size_t end = std::min(traffic.size(), start + size_t(batch));
            batched.onEvents(std::vector<RequestEvent>(traffic.begin() + qsizetype(start),
                                                       traffic.begin() + qsizetype(end)));
        }
        const QByteArray expected = reportToJson(inlineAnalysis.report());
        QCOMPARE(reportToJson(batched.report()), expected);
        // The workload is not trivial: throttles, scopes, breakers and alerts all present.
        const ReportData report = inlineAnalysis.report();
        QCOMPARE(report.events, events);
        QVERIFY(report.throttles.total > 0);
        QVERIFY(report.scopes.size() >= 4);
        QVERIFY(!report.breakers.isEmpty());
        QVERIFY(!report.alerts.isEmpty());
        const auto softened = std::count_if(
            report.breakerTransitions.cbegin(), report.breakerTransitions.cend(),
            [](const BreakerTransition &t) {
                return t.to == u"soft-open" && t.reason.startsWith(u"reconstructed fill");
            });
        // A few throttles no longer open a breaker (a failure ratio decides, issue 19.4), so the
        // engine's fill softens the closed ones as buckets fill; the same on every path.
        QVERIFY(softened > 0);
    }

    // Requests the client's own breaker refused ("refused": "breaker", issue 35.5) never
    // reached the service: no limit is charged, no alert counts them as traffic (not even as
    // retries sent against a Retry-After), byStatus leaves them out; `events` and
    // refusedByClientBreaker count them. The same inline and on the threaded path.
    void refusedRequestsAreNotTraffic_data()
    {
        QTest::addColumn<int>("batch");
        QTest::newRow("inline") << 1;
        QTest::newRow("threaded") << 4096;
    }
    void refusedRequestsAreNotTraffic()
    {
        QFETCH(int, batch);
        const std::vector<RequestEvent> traffic = syntheticTraffic(20000);
        std::vector<RequestEvent> withRefusals;
        qint64 refusals = 0;
        for (const RequestEvent &event : traffic) {
            withRefusals.push_back(event);
            // After each throttle, its client's breaker refuses the same call twice at once.
            if (event.status != 429)
                continue;
            for (int copy = 0; copy < 2; ++copy) {
                RequestEvent refused = event;
                refused.status = 0;
                refused.errorCode.clear();
                refused.retryAfter.clear();
                refused.attempt = event.attempt + 1;
                refused.refusedByClientBreaker = true;
                withRefusals.push_back(refused);
                ++refusals;
            }
        }
        auto run = [batch](const std::vector<RequestEvent> &events) {
            Analysis analysis(PolicySet::builtin(), Analysis::Purpose::ReportOnly);
            for (size_t start = 0; start < events.size(); start += size_t(batch)) {
                const size_t end = std::min(events.size(), start + size_t(batch));
                if (batch == 1)
                    analysis.add(events[start]);
                else
                    analysis.onEvents(std::vector<RequestEvent>(events.begin() + qsizetype(start),
                                                                events.begin() + qsizetype(end)));
            }
            return analysis.report();
        };
        const ReportData plain = run(traffic);
        const ReportData refused = run(withRefusals);
        QCOMPARE(refused.events, plain.events + refusals);
        QCOMPARE(refused.refusedByClientBreaker, refusals);
        QCOMPARE(plain.refusedByClientBreaker, 0);
        QCOMPARE(refused.byStatus, plain.byStatus);
        const QJsonObject plainJson = QJsonDocument::fromJson(reportToJson(plain)).object();
        const QJsonObject refusedJson = QJsonDocument::fromJson(reportToJson(refused)).object();
        for (const char *key : {"scopes", "throttles", "alerts"})
            QVERIFY2(refusedJson.value(QLatin1StringView(key)) ==
                         plainJson.value(QLatin1StringView(key)),
                     key);
        QVERIFY(!plain.alerts.isEmpty());
    }

    void sessionPublishesSnapshotsStatusAndWorkspace()
    {
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
        QSignalSpy finished(session, &AnalysisSession::filesFinished);
        QSignalSpy workspace(session, &AnalysisSession::workspaceReady);
        const QString file = dataFile(u"canonical/mixed-crlf-malformed.ndjson"_qs);
        QMetaObject::invokeMethod(session,
                                  [session, file] { session->openFiles({file}, SourceOptions{}); });
        // Not QSignalSpy::wait(): the worker thread may emit before wait() counts what is
        // already there, and then wait() misses it.
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 20000);
        QVERIFY(!snapshots.isEmpty());
        const auto snapshot =
            snapshots.last().at(0).value<std::shared_ptr<const DashboardSnapshot>>();
        QCOMPARE(snapshot->report.events, 6);
        QCOMPARE(snapshot->report.malformed, 2);
        QCOMPARE(snapshot->report.throttles.total, 4);
        const IngestStatus ingest = status.last().at(0).value<IngestStatus>();
        QCOMPARE(ingest.sources.size(), 1);
        QCOMPARE(ingest.sources[0].events, 6);
        QCOMPARE(ingest.sources[0].errors, 2);
        QCOMPARE(ingest.sources[0].format, u"ndjson"_qs);
        QVERIFY(ingest.sources[0].finished);
        QCOMPARE(ingest.malformedTotal, 2);
        QTRY_VERIFY_WITH_TIMEOUT(!workspace.isEmpty(), 20000);
        QVERIFY(QFile::exists(workspace.last().at(0).toString()));

        // Generations only grow, so the GUI can drop stale snapshots.
        quint64 previous = 0;
        for (const QList<QVariant> &args : std::as_const(snapshots)) {
            const auto s = args.at(0).value<std::shared_ptr<const DashboardSnapshot>>();
            QVERIFY(s->generation > previous);
            previous = s->generation;
        }

        // A policy change replays the files: same counts, reconstruction redone.
        const qsizetype before = snapshots.size();
        QMetaObject::invokeMethod(session, [session] { session->setPolicies(u"fabric"_qs); });
        QTRY_VERIFY_WITH_TIMEOUT(snapshots.size() > before, 20000);
        const auto replayed =
            snapshots.last().at(0).value<std::shared_ptr<const DashboardSnapshot>>();
        QCOMPARE(replayed->report.events, 6);

        // A bad policy is refused with a reason, and the analysis stays.
        QSignalSpy policyErrors(session, &AnalysisSession::policyError);
        QMetaObject::invokeMethod(session, [session] { session->setPolicies(u"{\"name\":"_qs); });
        QTRY_VERIFY_WITH_TIMEOUT(!policyErrors.isEmpty(), 30000);

        // The Breakers page's reference breaker (issue 19.4): the files replay under it, and it
        // stays through a later policy change until the page asks for the policies' own again.
        const auto newestModel = [&snapshots] {
            return snapshots.last()
                .at(0)
                .value<std::shared_ptr<const DashboardSnapshot>>()
                ->report.breakerModel;
        };
        const auto setBreaker = [session](const QString &json) {
            QMetaObject::invokeMethod(session, [session, json] { session->setBreakerModel(json); });
        };
        setBreaker(u"{\"preset\":\"resilience4j\"}"_qs);
        QTRY_VERIFY_WITH_TIMEOUT(newestModel() == BreakerModel::resilience4j(), 20000);
        const auto underR4j =
            snapshots.last().at(0).value<std::shared_ptr<const DashboardSnapshot>>();
        QCOMPARE(underR4j->report.events, 6);
        for (const BreakerSummary &breaker : underR4j->report.breakers) {
            if (breaker.source == u"reconstructed")
                QCOMPARE(breaker.model, BreakerModel::resilience4j());
        }
        // Counted before asking: the worker may publish before this thread reads the count.
        const qsizetype afterPolicy = snapshots.size();
        QMetaObject::invokeMethod(session, [session] { session->setPolicies(u"builtin"_qs); });
        QTRY_VERIFY_WITH_TIMEOUT(snapshots.size() > afterPolicy, 20000);
        QCOMPARE(newestModel(), BreakerModel::resilience4j());
        policyErrors.clear();
        setBreaker(u"{\"failureRatio\":2}"_qs);
        QTRY_VERIFY_WITH_TIMEOUT(!policyErrors.isEmpty(), 20000);
        QVERIFY2(policyErrors.last().at(0).toString().contains(u"failureRatio"),
                 qPrintable(policyErrors.last().at(0).toString()));
        setBreaker(QString());
        QTRY_VERIFY_WITH_TIMEOUT(newestModel() == BreakerModel::pollyV8(), 20000);

        // Live batches count per source and are published within the refresh interval.
        QList<RequestEvent> live;
        for (int i = 0; i < 10; ++i) {
            RequestEvent e;
            e.tsMs = 1771454700000 + i;
            e.identity = u"live-user"_qs;
            e.status = 200;
            e.source = u"demo"_qs;
            live.append(e);
        }
        QMetaObject::invokeMethod(session, [session, live] { session->ingestBatch(live); });
        QTRY_VERIFY_WITH_TIMEOUT(
            !status.isEmpty() &&
                [&] {
                    const IngestStatus s = status.last().at(0).value<IngestStatus>();
                    for (const IngestSourceStatus &source : s.sources)
                        if (source.path == u"demo" && source.events == 10 && source.live)
                            return true;
                    return false;
                }(),
            30000);
    }
};

QTEST_GUILESS_MAIN(TestAnalysis)
#include "tst_analysis.moc"
