// MainWindow as the integrator uses it: pages by name, coalesced snapshots, progress with
// Cancel, screenshots that render offscreen.
#include "dashboard.h"
#include "mainwindow.h"
#include "models/timerange.h"
#include "qcp.h"
#include "snapshotfixture.h"

#include <QApplication>

#include <QImage>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

class TestMainWindow : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // QSettings in a throwaway location
        QCoreApplication::setOrganizationName(QStringLiteral("ThrottlescopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_mainwindow"));
    }

    void screenshot_data()
    {
        QTest::addColumn<QString>("page");
        for (const QString &page : ts::widgets::Dashboard::pageNames())
            QTest::newRow(page.toLatin1().constData()) << page;
    }

    // Every page renders a real picture at the requested size: not empty, not one colour.
    void screenshot()
    {
        QFETCH(QString, page);
        MainWindow window;
        window.applySnapshot(ts::fixture::smallSnapshot());
        window.showPage(page);
        if (page == u"bucket") {
            // The scope with every kind of mark: 429s, Retry-After, observed percentages.
            window.dashboard()->flushPendingSnapshot();
            window.dashboard()->showBucket(0);
            window.dashboard()->timeRange()->setReplayInstant(ts::fixture::at(150));
        }
        QCOMPARE(window.dashboard()->currentPageName(), page);
        QTemporaryDir dir;
        QString path = dir.filePath(page + QStringLiteral(".png"));
        const QByteArray keep = qgetenv("TS_SCREENSHOT_DIR");
        if (!keep.isEmpty())
            path = QString::fromLocal8Bit(keep) + u'/' + page + QStringLiteral(".png");
        QVERIFY(window.saveScreenshot(path, QSize(1280, 800)));
        QImage image(path);
        QVERIFY(!image.isNull());
        QCOMPARE(image.size(), QSize(1280, 800) * window.devicePixelRatio());
        QSet<QRgb> colours;
        for (int y = 0; y < image.height(); y += 7)
            for (int x = 0; x < image.width(); x += 7)
                colours.insert(image.pixel(x, y));
        QVERIFY2(colours.size() > 20, qPrintable(QString::number(colours.size())));
    }

    // A dark desktop palette gives dark plots: backgrounds come from the palette, never a
    // hard-coded white.
    void darkPalette()
    {
        const QPalette original = QApplication::palette();
        QPalette dark;
        dark.setColor(QPalette::Window, QColor(0x2b, 0x2b, 0x2b));
        dark.setColor(QPalette::Base, QColor(0x1e, 0x1e, 0x1e));
        dark.setColor(QPalette::AlternateBase, QColor(0x2b, 0x2b, 0x2b));
        dark.setColor(QPalette::Text, QColor(0xe0, 0xe0, 0xe0));
        dark.setColor(QPalette::WindowText, QColor(0xe0, 0xe0, 0xe0));
        dark.setColor(QPalette::Button, QColor(0x35, 0x35, 0x35));
        dark.setColor(QPalette::ButtonText, QColor(0xe0, 0xe0, 0xe0));
        dark.setColor(QPalette::Mid, QColor(0x60, 0x60, 0x60));
        QApplication::setPalette(dark);
        {
            MainWindow window;
            window.applySnapshot(ts::fixture::smallSnapshot());
            window.showPage(QStringLiteral("throttles"));
            QTemporaryDir dir;
            QString path = dir.filePath(QStringLiteral("dark.png"));
            const QByteArray keep = qgetenv("TS_SCREENSHOT_DIR");
            if (!keep.isEmpty())
                path = QString::fromLocal8Bit(keep) + QStringLiteral("/dark-throttles.png");
            QVERIFY(window.saveScreenshot(path, QSize(1000, 700)));
            QCustomPlot *plot = window.dashboard()->currentPlot();
            QVERIFY(plot);
            const QImage image = QImage(path).convertToFormat(QImage::Format_RGB32);
            // A point inside the plot's axis rect, above the bars: the plot background.
            const QRect rect = plot->axisRect()->rect();
            const QPoint inPlot = plot->mapTo(&window, QPoint(rect.left() + 5, rect.top() + 5)) *
                                  window.devicePixelRatio();
            QVERIFY2(QColor(image.pixel(inPlot)).lightness() < 80,
                     qPrintable(QColor(image.pixel(inPlot)).name()));
        }
        QApplication::setPalette(original);
    }

    // Snapshots arriving faster than the drain interval are coalesced: the dashboard applies
    // the latest one, once.
    void snapshotsAreCoalesced()
    {
        MainWindow window;
        QSignalSpy applied(window.dashboard(), &ts::widgets::Dashboard::snapshotApplied);
        for (quint64 generation = 1; generation <= 50; ++generation) {
            auto snap = ts::fixture::smallSnapshot();
            snap->generation = generation;
            window.applySnapshot(snap);
        }
        QVERIFY(applied.wait(2000));
        QTest::qWait(3 * ts::widgets::Dashboard::kDrainIntervalMs);
        QCOMPARE(applied.count(), 1);
        QCOMPARE(applied.first().first().toULongLong(), quint64(50));
        // An older generation arriving late is dropped.
        auto stale = ts::fixture::smallSnapshot();
        stale->generation = 3;
        window.applySnapshot(stale);
        QTest::qWait(3 * ts::widgets::Dashboard::kDrainIntervalMs);
        QCOMPARE(applied.count(), 1);
        QCOMPARE(window.dashboard()->snapshot()->generation, quint64(50));
    }

    void progressShowsCancel()
    {
        MainWindow window;
        window.show();
        auto *progress = window.findChild<QProgressBar *>();
        QVERIFY(progress);
        QPushButton *cancel = nullptr;
        for (QPushButton *button : window.findChildren<QPushButton *>())
            if (button->text() == MainWindow::tr("Cancel"))
                cancel = button;
        QVERIFY(cancel);
        window.setProgress(50, 200);
        QVERIFY(progress->isVisible());
        QCOMPARE(progress->value(), 250);
        QSignalSpy cancelled(&window, &MainWindow::cancelRequested);
        QTest::mouseClick(cancel, Qt::LeftButton);
        QCOMPARE(cancelled.count(), 1);
        window.setProgress(200, 200);
        QVERIFY(!progress->isVisible());
        QVERIFY(!cancel->isVisible());
    }

    void recentFilesAreRemembered()
    {
        MainWindow window;
        QSettings().remove(QStringLiteral("recentFiles"));
        // Recent lists files that exist (tst_livesession checks the others are left out).
        QTemporaryDir dir;
        const QString a = dir.filePath(QStringLiteral("a.ndjson"));
        const QString b = dir.filePath(QStringLiteral("b.har"));
        QVERIFY(QFile(a).open(QIODevice::WriteOnly));
        QVERIFY(QFile(b).open(QIODevice::WriteOnly));
        window.addRecentFile(a);
        window.addRecentFile(b);
        window.addRecentFile(a);
        QCOMPARE(window.recentFiles(), QStringList({a, b}));
    }

    void unknownPageIsIgnored()
    {
        MainWindow window;
        window.showPage(QStringLiteral("throttles"));
        window.showPage(QStringLiteral("no-such-page"));
        QCOMPARE(window.dashboard()->currentPageName(), QStringLiteral("throttles"));
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
