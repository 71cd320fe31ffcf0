// The dashboard's live session as the operator drives it (issue 17): the controller with its
// window, worker and listener. File > Listen… starts a real loopback listener; POSTs arrive
// and the Ingest page shows the feed; a silent feed turns stale on the page and in the status
// bar.
#include "dashboard.h"
#include "dashboardcontroller.h"
#include "dashboardlistener.h"
#include "ingestpage.h"
#include "listendialog.h"
#include "mainwindow.h"
#include "models/ingestmodels.h"
#include "testhttp.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDateTime>
#include <QLabel>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

using ts::models::IngestSourcesModel;

namespace {

QByteArray requestLine(int i, int status = 200)
{
    const QByteArray ts = QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs).toUtf8();
    return "{\"ts\":\"" + ts + "\",\"identity\":\"sp-" + QByteArray::number(i)
           + "\",\"service\":\"fabric\",\"method\":\"GET\",\"url\":\"https://"
             "api.fabric.microsoft.com/v1/workspaces\",\"status\":"
           + QByteArray::number(status) + "}";
}

int statusOf(const QByteArray &response)
{
    return response.mid(9, 3).toInt(); // "HTTP/1.1 200 OK"
}

int rowOf(const IngestSourcesModel &model, const QString &path)
{
    for (int row = 0; row < model.rowCount(); ++row) {
        if (model.sourceAt(row).path == path)
            return row;
    }
    return -1;
}

// Where a test that keeps its pictures puts them (TS_SCREENSHOT_DIR), else a temporary dir.
QString picturePath(const QTemporaryDir &dir, const QString &name)
{
    const QByteArray keep = qgetenv("TS_SCREENSHOT_DIR");
    return keep.isEmpty() ? dir.filePath(name) : QString::fromLocal8Bit(keep) + u'/' + name;
}

} // namespace

class TestLiveSession : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // QSettings in a throwaway location
        QCoreApplication::setOrganizationName(QStringLiteral("ThrottlescopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_livesession"));
    }

    void listenFromTheWindow()
    {
        ts::app::DashboardController controller({});
        controller.start();
        MainWindow *window = controller.window();
        ts::widgets::IngestPage *page = window->dashboard()->ingestPage();
        QAbstractItemModelTester tester(page->sourcesModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        window->showPage(QStringLiteral("ingest"));

        ts::widgets::ListenSettings settings;
        settings.port = 0; // any free port
        QString error;
        QVERIFY2(controller.startListening(settings, &error), qPrintable(error));
        const quint16 port = controller.listener()->port();
        const QString feed = controller.listener()->feedName();
        QVERIFY(window->findChild<QAction *>(QStringLiteral("stopListeningAction"))->isEnabled());
        QVERIFY(!window->findChild<QAction *>(QStringLiteral("listenAction"))->isEnabled());
        QTRY_VERIFY(rowOf(*page->sourcesModel(), feed) >= 0);

        QByteArray body;
        for (int i = 0; i < 40; ++i)
            body += requestLine(i, i % 4 == 0 ? 429 : 200) + '\n';
        QCOMPARE(statusOf(ts::testhttp::post(port, "/ingest", body)), 200);
        QCOMPARE(statusOf(ts::testhttp::post(port, "/ingest", requestLine(99) + "\n{oops\n")), 400);
        QTRY_COMPARE(page->sourcesModel()
                         ->index(rowOf(*page->sourcesModel(), feed), IngestSourcesModel::EventsColumn)
                         .data()
                         .toLongLong(),
                     41);
        QTRY_VERIFY(window->dashboard()->snapshot() && window->dashboard()->snapshot()->report.events == 41);
        QTemporaryDir dir;
        QVERIFY(window->saveScreenshot(picturePath(dir, u"listen-live.png"_qs), QSize(1280, 800)));

        // Silence: a short threshold, and the page and the status bar say "stale".
        auto *stale = window->statusBar()->findChild<QLabel *>(QStringLiteral("staleFeedsStatus"));
        QVERIFY(stale);
        QVERIFY(stale->isHidden());
        page->setStaleAfterSeconds(1);
        QTRY_VERIFY_WITH_TIMEOUT(!page->staleFeeds().isEmpty(), 10000);
        QVERIFY(!stale->isHidden());
        QVERIFY2(stale->text().contains(feed), qPrintable(stale->text()));
        QVERIFY(page->summaryText().contains(u"stale"));
        const int row = rowOf(*page->sourcesModel(), feed);
        QCOMPARE(page->sourcesModel()->index(row, IngestSourcesModel::StateColumn).data().toString(),
                 u"stale"_qs);
        QVERIFY(window->saveScreenshot(picturePath(dir, u"listen-stale.png"_qs), QSize(1280, 800)));
        // A new event: fresh again, the status bar clears.
        page->setStaleAfterSeconds(60);
        QCOMPARE(statusOf(ts::testhttp::post(port, "/ingest", requestLine(100))), 200);
        QTRY_VERIFY(page->staleFeeds().isEmpty());
        QTRY_VERIFY(stale->isHidden());

        controller.stopListening();
        QVERIFY(window->findChild<QAction *>(QStringLiteral("listenAction"))->isEnabled());
        QTRY_COMPARE(page->sourcesModel()
                         ->index(rowOf(*page->sourcesModel(), feed), IngestSourcesModel::StateColumn)
                         .data()
                         .toString(),
                     u"finished"_qs);
    }

    void listenRefusals_data()
    {
        QTest::addColumn<QString>("address");
        QTest::addColumn<QString>("token");
        QTest::addColumn<QString>("tokenFile");
        QTest::addColumn<QString>("message");
        QTest::newRow("not an address") << u"localhost.example"_qs << QString() << QString()
                                        << u"not an IP address"_qs;
        QTest::newRow("off loopback, no token") << u"0.0.0.0"_qs << QString() << QString()
                                                << u"bearer token"_qs;
        QTest::newRow("token and file") << u"127.0.0.1"_qs << u"a"_qs << u"/nonexistent"_qs
                                        << u"not both"_qs;
        QTest::newRow("missing token file") << u"127.0.0.1"_qs << QString() << u"/nonexistent/t"_qs
                                            << u"/nonexistent/t"_qs;
    }
    void listenRefusals()
    {
        QFETCH(QString, address);
        QFETCH(QString, token);
        QFETCH(QString, tokenFile);
        QFETCH(QString, message);
        ts::app::DashboardController controller({});
        controller.start();
        ts::widgets::ListenSettings settings;
        settings.address = address;
        settings.port = 0;
        settings.token = token;
        settings.tokenFile = tokenFile;
        QString error;
        QVERIFY(!controller.startListening(settings, &error));
        QVERIFY2(error.contains(message), qPrintable(error));
        QVERIFY(controller.window()->findChild<QAction *>(QStringLiteral("listenAction"))->isEnabled());
    }
};

QTEST_MAIN(TestLiveSession)
#include "tst_livesession.moc"
