// File > Listen… in the dashboard (issue 17.2): a real listener on a loopback port, started
// through the session API the window uses (DashboardListener on an AnalysisSession), POSTs from
// the test. A POST is answered 200 only once its events are committed to the session's
// workspace; the Ingest model shows the feed before its first event, then its events, rate,
// lag and errors; after a (short, test-set) silence it is stale, and fresh again on the next
// event.
#include "live/dashboardlistener.h"
#include "models/ingestmodels.h"
#include "session/analysissession.h"
#include "store/workspacereader.h"

#include <QAbstractItemModelTester>
#include <QDateTime>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace ts;
using namespace ts::live;
using models::IngestSourcesModel;

namespace {

QByteArray requestLine(int i, int status = 200)
{
    // Timestamped now, so the feed's lag is small and real.
    const QByteArray ts = QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs).toUtf8();
    return "{\"ts\":\"" + ts + "\",\"identity\":\"sp-" + QByteArray::number(i)
           + "\",\"service\":\"fabric\",\"method\":\"GET\",\"url\":\"https://"
             "api.fabric.microsoft.com/v1/workspaces\",\"status\":"
           + QByteArray::number(status) + "}";
}

int rowOf(const IngestSourcesModel &model, const QString &path)
{
    for (int row = 0; row < model.rowCount(); ++row) {
        if (model.sourceAt(row).path == path)
            return row;
    }
    return -1;
}

qint64 eventsIn(const QString &workspacePath)
{
    WorkspaceReader reader;
    if (!reader.open(workspacePath))
        return -1;
    qint64 events = 0;
    reader.forEachEventInTimeOrder(4096, [&](const QList<RequestEvent> &chunk) {
        events += chunk.size();
        return true;
    });
    return events;
}

} // namespace

class TestDashboardListener : public QObject
{
    Q_OBJECT

    QNetworkAccessManager m_network;

    int post(quint16 port, const QString &path, const QByteArray &body,
             const QByteArray &token = {})
    {
        QNetworkRequest request(QUrl(QStringLiteral("http://127.0.0.1:%1%2").arg(port).arg(path)));
        request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/x-ndjson"));
        if (!token.isEmpty())
            request.setRawHeader("Authorization", "Bearer " + token);
        QNetworkReply *reply = m_network.post(request, body);
        QSignalSpy finished(reply, &QNetworkReply::finished);
        if (!reply->isFinished() && !finished.wait(15000))
            return -1;
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        reply->deleteLater();
        return status;
    }

    // The window's wiring: the session's ingest status into the Ingest page's model.
    struct Rig
    {
        AnalysisSession session;
        IngestSourcesModel model;
        QAbstractItemModelTester tester{&model, QAbstractItemModelTester::FailureReportingMode::QtTest};
        DashboardListener listener{&session};
        QString workspace;
        Rig()
        {
            QObject::connect(&session, &AnalysisSession::ingestStatusChanged, &model,
                             [this](const IngestStatus &status) { model.setSources(status.sources); });
            QObject::connect(&session, &AnalysisSession::workspaceReady, &model,
                             [this](const QString &path) { workspace = path; });
        }
        [[nodiscard]] QVariant cell(int column, int role = Qt::DisplayRole) const
        {
            const int row = rowOf(model, listener.feedName());
            return row < 0 ? QVariant() : model.index(row, column).data(role);
        }
    };

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void feedHealthFromRealPosts()
    {
        Rig rig;
        ListenerOptions options; // 127.0.0.1, any free port
        QString error;
        QVERIFY2(rig.listener.start(options, &error), qPrintable(error));
        QVERIFY(rig.listener.port() != 0);
        QCOMPARE(rig.listener.feedName(), QStringLiteral("http://127.0.0.1:%1").arg(rig.listener.port()));

        // Shown before its first event, silent since it started.
        QTRY_VERIFY(rowOf(rig.model, rig.listener.feedName()) >= 0);
        QCOMPARE(rig.cell(IngestSourcesModel::StateColumn).toString(), u"live"_qs);
        QVERIFY2(rig.cell(IngestSourcesModel::LastEventColumn).toString().startsWith(u"never (listening"),
                 qPrintable(rig.cell(IngestSourcesModel::LastEventColumn).toString()));

        // 200 means committed: the session's workspace holds the events when the answer comes.
        QCOMPARE(post(rig.listener.port(), u"/ingest"_qs,
                      requestLine(1) + '\n' + requestLine(2) + '\n' + requestLine(3, 429)),
                 200);
        QVERIFY(!rig.workspace.isEmpty());
        QCOMPARE(eventsIn(rig.workspace), 3);
        QTRY_COMPARE(rig.cell(IngestSourcesModel::EventsColumn).toLongLong(), 3);
        QCOMPARE(rig.cell(IngestSourcesModel::FormatColumn).toString(), u"http"_qs);
        QVERIFY(rig.model.sourceAt(rowOf(rig.model, rig.listener.feedName())).eventsPerSecond > 0);
        QVERIFY2(rig.cell(IngestSourcesModel::RateColumn).toString() != u"0.0/s",
                 qPrintable(rig.cell(IngestSourcesModel::RateColumn).toString()));
        QVERIFY(!rig.cell(IngestSourcesModel::LagColumn).toString().isEmpty());
        QVERIFY(rig.cell(IngestSourcesModel::LastEventColumn).toString().endsWith(u" ago"));

        // A malformed line: the valid one is stored (400 names the bad one), errors counted.
        QCOMPARE(post(rig.listener.port(), u"/ingest"_qs, requestLine(4) + "\nnot json\n"), 400);
        QTRY_COMPARE(rig.cell(IngestSourcesModel::EventsColumn).toLongLong(), 4);
        QTRY_VERIFY(rig.cell(IngestSourcesModel::ErrorsColumn).toLongLong() >= 1);
        QCOMPARE(eventsIn(rig.workspace), 4);

        // OTLP traces reach the same feed.
        const QByteArray otlp = R"({"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"svc"}}]},"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","name":"GET","kind":3,"startTimeUnixNano":"1771454649512000000","endTimeUnixNano":"1771454649612000000","attributes":[{"key":"http.request.method","value":{"stringValue":"GET"}},{"key":"url.full","value":{"stringValue":"https://graph.microsoft.com/v1.0/me"}},{"key":"http.response.status_code","value":{"intValue":"429"}}]}]}]}]})";
        QCOMPARE(post(rig.listener.port(), u"/v1/traces"_qs, otlp), 200);
        QTRY_COMPARE(rig.cell(IngestSourcesModel::EventsColumn).toLongLong(), 5);

        // Silence: with a short threshold the feed turns stale, visibly, and a new event
        // makes it fresh again.
        rig.model.setStaleAfterMs(300);
        QTRY_VERIFY_WITH_TIMEOUT(
            (rig.model.setNow(QDateTime::currentMSecsSinceEpoch()),
             rig.cell(0, IngestSourcesModel::StaleRole).toBool()),
            10000);
        QCOMPARE(rig.cell(IngestSourcesModel::StateColumn).toString(), u"stale"_qs);
        QCOMPARE(rig.model.staleFeeds().size(), 1);
        QVERIFY(rig.model.staleFeeds().constFirst().startsWith(rig.listener.feedName()));
        rig.model.setStaleAfterMs(60'000);
        QCOMPARE(post(rig.listener.port(), u"/ingest"_qs, requestLine(6)), 200);
        QTRY_COMPARE(rig.cell(IngestSourcesModel::EventsColumn).toLongLong(), 6);
        rig.model.setNow(QDateTime::currentMSecsSinceEpoch());
        QVERIFY(!rig.cell(0, IngestSourcesModel::StaleRole).toBool());

        // Stopped: finished, never stale.
        rig.listener.stop();
        QVERIFY(!rig.listener.isListening());
        QTRY_COMPARE(rig.cell(IngestSourcesModel::StateColumn).toString(), u"finished"_qs);
        rig.model.setStaleAfterMs(1);
        rig.model.setNow(QDateTime::currentMSecsSinceEpoch() + 60'000);
        QVERIFY(!rig.cell(0, IngestSourcesModel::StaleRole).toBool());
    }

    void silentFromTheStart()
    {
        Rig rig;
        rig.model.setStaleAfterMs(200);
        QString error;
        QVERIFY2(rig.listener.start({}, &error), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(
            (rig.model.setNow(QDateTime::currentMSecsSinceEpoch()),
             rig.cell(0, IngestSourcesModel::StaleRole).toBool()),
            10000);
        QVERIFY(rig.model.staleFeeds().constFirst().contains(u"no event in"));
    }

    void tokenRefusalsAreErrors()
    {
        Rig rig;
        ListenerOptions options;
        options.bearerToken = QStringLiteral("s3cret-token");
        QString error;
        QVERIFY2(rig.listener.start(options, &error), qPrintable(error));
        QCOMPARE(post(rig.listener.port(), u"/ingest"_qs, requestLine(1)), 401);
        QCOMPARE(post(rig.listener.port(), u"/ingest"_qs, requestLine(1), "wrong"), 401);
        QCOMPARE(post(rig.listener.port(), u"/ingest"_qs, requestLine(1), "s3cret-token"), 200);
        QTRY_COMPARE(rig.cell(IngestSourcesModel::EventsColumn).toLongLong(), 1);
        // Refusals are counted by the health poll (every second).
        QTRY_COMPARE_WITH_TIMEOUT(rig.cell(IngestSourcesModel::ErrorsColumn).toLongLong(), 2, 10000);
        QVERIFY(rig.cell(IngestSourcesModel::ErrorsColumn, Qt::ToolTipRole).toString().contains(u"2 refused"));
    }

    void refusedStarts_data()
    {
        QTest::addColumn<QString>("address");
        QTest::addColumn<QString>("token");
        QTest::addColumn<QString>("message");
        QTest::newRow("off loopback without a token") << u"0.0.0.0"_qs << QString() << u"token"_qs;
    }
    void refusedStarts()
    {
        QFETCH(QString, address);
        QFETCH(QString, token);
        QFETCH(QString, message);
        Rig rig;
        ListenerOptions options;
        options.address = QHostAddress(address);
        options.bearerToken = token;
        QString error;
        QVERIFY(!rig.listener.start(options, &error));
        QVERIFY2(error.contains(message), qPrintable(error));
        QVERIFY(!rig.listener.isListening());
        // The port in use: a second listener on the first one's port.
        Rig first;
        QVERIFY(first.listener.start({}, &error));
        ListenerOptions same;
        same.port = first.listener.port();
        QVERIFY(!rig.listener.start(same, &error));
        QVERIFY2(error.contains(QString::number(same.port)), qPrintable(error));
    }

    void tokenFileMustBePrivate()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"token"_qs);
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("abc\n");
        file.close();
        QString token;
        QString error;
        QVERIFY(file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadOther));
        QVERIFY(!readTokenFile(path, &token, &error));
        QVERIFY(error.contains(u"chmod 600"));
        QVERIFY(file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner));
        QVERIFY2(readTokenFile(path, &token, &error), qPrintable(error));
        QCOMPARE(token, u"abc"_qs);
    }
};

QTEST_GUILESS_MAIN(TestDashboardListener)
#include "tst_dashboardlistener.moc"
