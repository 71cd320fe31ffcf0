// MainWindow as the integrator uses it: pages by name, coalesced snapshots, progress with
// Cancel, screenshots that render offscreen.
#include "alertbanner.h"
#include "dashboard.h"
#include "mainwindow.h"
#include "models/alertsmodel.h"
#include "models/displaynames.h"
#include "preferences.h"
#include "startpage.h"
#include "theme.h"
#include "models/timerange.h"
#include "qcp.h"
#include "snapshotfixture.h"

#include <QAction>
#include <QApplication>
#include <QCommandLinkButton>
#include <QDateTime>
#include <QSystemTrayIcon>

#include <QImage>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTimer>
#include <QDialog>
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

    // Without a tray host (the offscreen platform has none) a new critical alert shows in a
    // banner in the window, naming the most severe of the batch, not the last one.
    void bannerWithoutTray()
    {
        QVERIFY(!QSystemTrayIcon::isSystemTrayAvailable());
        MainWindow window;
        window.show();
        auto *banner = window.alertBanner();
        QVERIFY(banner);
        QVERIFY(!banner->isVisible());
        window.applySnapshot(ts::fixture::smallSnapshot()); // history: no banner
        window.dashboard()->flushPendingSnapshot();
        QVERIFY(!banner->isVisible());

        auto live = std::make_shared<ts::DashboardSnapshot>(*ts::fixture::smallSnapshot());
        live->generation = 2;
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        const QString app = QStringLiteral("0f8fad5b-d9cb-469f-a165-70867728950e");
        live->report.alerts.append({QStringLiteral("lost-work"), QStringLiteral("critical"),
                                    now - 1000, app + QStringLiteral("+alice@contoso.com"),
                                    QStringLiteral("page 3 never succeeded")});
        live->report.alerts.append({QStringLiteral("retry-storm"), QStringLiteral("critical"), now,
                                    QStringLiteral("bob"), QStringLiteral("12 retries")});
        window.applySnapshot(live);
        window.dashboard()->flushPendingSnapshot();
        QVERIFY(banner->isVisible());
        QVERIFY2(banner->text().contains(u"lost-work · alice@contoso.com"), qPrintable(banner->text()));
        QVERIFY(!banner->text().contains(app)); // the short name
        QVERIFY(banner->text().contains(u"+1"));
        // Its button leads to the Alerts page.
        auto *show = banner->findChild<QPushButton *>();
        QVERIFY(show);
        QTest::mouseClick(show, Qt::LeftButton);
        QCOMPARE(window.dashboard()->currentPageName(), QStringLiteral("alerts"));
        QVERIFY(!banner->isVisible());
    }

    // Issue 30.14: the toolbar's play icon (Start Demo) stands out from a dark toolbar: its
    // drawn pixels are far from the window colour, in the dark theme as in the light one.
    void playIconVisibleInBothThemes()
    {
        for (const auto mode : {ts::widgets::ThemeMode::Dark, ts::widgets::ThemeMode::Light}) {
            ts::widgets::applyTheme(mode);
            MainWindow window;
            window.show();
            auto *demo = window.findChild<QAction *>(QStringLiteral("startDemoAction"));
            QVERIFY(demo);
            const QImage image = demo->icon().pixmap(32, 32).toImage().convertToFormat(
                QImage::Format_ARGB32);
            const int background = qGray(window.palette().color(QPalette::Window).rgb());
            double ink = 0;
            int drawn = 0;
            for (int y = 0; y < image.height(); ++y) {
                for (int x = 0; x < image.width(); ++x) {
                    const QRgb pixel = image.pixel(x, y);
                    if (qAlpha(pixel) < 200)
                        continue;
                    ink += qGray(pixel);
                    ++drawn;
                }
            }
            QVERIFY(drawn > 50);
            QVERIFY2(std::abs(ink / drawn - background) > 100,
                     qPrintable(QStringLiteral("icon %1, window %2").arg(ink / drawn).arg(background)));
        }
        ts::widgets::applyTheme(ts::widgets::ThemeMode::System);
    }

    // Issue 30.1: an alert that is withdrawn (the operations were pending, not lost: their
    // retries came) leaves the banner, and the tray's tooltip names only what still stands.
    void withdrawnAlertLeavesTheBanner()
    {
        MainWindow window;
        window.show();
        auto *banner = window.alertBanner();
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        const ts::Alert lost{QStringLiteral("lost-work"), QStringLiteral("critical"), now - 1000,
                             QStringLiteral("alice@contoso.com"),
                             QStringLiteral("7 operation(s) never succeeded later")};
        const ts::Alert storm{QStringLiteral("retry-storm"), QStringLiteral("critical"), now,
                              QStringLiteral("bob"), QStringLiteral("12 retries")};
        auto live = std::make_shared<ts::DashboardSnapshot>(*ts::fixture::smallSnapshot());
        live->generation = 2;
        live->report.alerts = {lost, storm};
        window.applySnapshot(live);
        window.dashboard()->flushPendingSnapshot();
        QVERIFY(banner->isVisible());
        QVERIFY2(banner->text().contains(u"lost-work"), qPrintable(banner->text()));
        QCOMPARE(ts::widgets::criticalAlertsSummary(live->report.alerts),
                 QStringLiteral("Throttlescope: 2 critical alert(s): lost-work · "
                                "alice@contoso.com, retry-storm · bob"));

        // The next snapshot: the retries came, the lost-work alert is gone; the storm stays.
        auto later = std::make_shared<ts::DashboardSnapshot>(*live);
        later->generation = 3;
        later->report.alerts = {storm};
        window.applySnapshot(later);
        window.dashboard()->flushPendingSnapshot();
        QVERIFY(!banner->isVisible());
        QCOMPARE(ts::widgets::criticalAlertsSummary(later->report.alerts),
                 QStringLiteral("Throttlescope: 1 critical alert(s): retry-storm · bob"));
        QVERIFY2(window.trayToolTip().startsWith(
                     QStringLiteral("Throttlescope: 1 critical alert(s): retry-storm · bob\n"
                                    "Breakers: ")),
                 qPrintable(window.trayToolTip()));
        later = std::make_shared<ts::DashboardSnapshot>(*later);
        later->generation = 4;
        later->report.alerts.clear();
        QCOMPARE(ts::widgets::criticalAlertsSummary(later->report.alerts),
                 QStringLiteral("Throttlescope: no critical alert"));
    }

    // With no input the window opens on its start page: Open log, Listen, Demo. Each leads
    // somewhere; data (or a page asked for) shows the dashboard.
    void startPageWithoutInput()
    {
        MainWindow window;
        window.show();
        QVERIFY(window.isShowingStartPage());
        ts::widgets::StartPage *start = window.startPage();
        QVERIFY(start->isVisible());
        QVERIFY(start->openButton()->isVisible());
        QVERIFY(start->listenButton()->isVisible());
        QVERIFY(start->demoButton()->isVisible());

        // Listen opens File > Listen…'s dialog (modal): cancelled, the start page stays.
        QString dialogShown;
        QTimer closer;
        closer.setInterval(20);
        connect(&closer, &QTimer::timeout, &window, [&] {
            if (auto *dialog = qobject_cast<QDialog *>(QApplication::activeModalWidget())) {
                dialogShown = QString::fromLatin1(dialog->metaObject()->className());
                dialog->reject();
            }
        });
        closer.start();
        QTest::mouseClick(start->listenButton(), Qt::LeftButton);
        closer.stop();
        QCOMPARE(dialogShown, u"ts::widgets::ListenDialog"_qs);
        QVERIFY(window.isShowingStartPage());

        QSignalSpy demo(&window, &MainWindow::demoRequested);
        QTest::mouseClick(start->demoButton(), Qt::LeftButton);
        QCOMPARE(demo.count(), 1);
        QVERIFY(!window.isShowingStartPage());
        QVERIFY(window.dashboard()->isVisible());

        MainWindow second;
        QVERIFY(second.isShowingStartPage());
        second.applySnapshot(ts::fixture::smallSnapshot());
        QVERIFY(!second.isShowingStartPage());
        MainWindow third;
        third.showPage(QStringLiteral("alerts"));
        QVERIFY(!third.isShowingStartPage());
    }

    // Preferences persist (QSettings) and apply: thresholds colour the fills, local time
    // renames the time columns, the refresh interval reaches the dashboard.
    void preferencesPersistAndApply()
    {
        QSettings().remove(QStringLiteral("preferences"));
        QCOMPARE(ts::widgets::Preferences::load(), ts::widgets::Preferences{});
        ts::widgets::Preferences changed;
        changed.fillWarning = 0.5;
        changed.fillLimit = 0.9;
        changed.utc = false;
        changed.refreshMs = 400;
        changed.save();
        QCOMPARE(ts::widgets::Preferences::load(), changed);

        // Through the dialog: it shows the saved values and gives back what it shows.
        ts::widgets::PreferencesDialog dialog;
        QCOMPARE(dialog.preferences(), changed);
        dialog.setPreferences(ts::widgets::Preferences{});
        QCOMPARE(dialog.preferences(), ts::widgets::Preferences{});

        {
            MainWindow window; // applies the saved preferences
            QCOMPARE(window.dashboard()->refreshIntervalMs(), 400);
            QCOMPARE(ts::widgets::fillColor(0.6), ts::widgets::fillColor(0.85));
            QCOMPARE(ts::widgets::fillColor(0.95), ts::widgets::fillColor(1.0));
            window.applySnapshot(ts::fixture::smallSnapshot());
            window.dashboard()->flushPendingSnapshot();
            const auto *alerts = window.dashboard()->alertsModel();
            QVERIFY(alerts->headerData(0, Qt::Horizontal, Qt::DisplayRole)
                        .toString()
                        .contains(u"local"));
            QVERIFY(!alerts->index(0, 0).data().toString().endsWith(u'Z'));
        }
        ts::widgets::Preferences{}.save();
        ts::widgets::Preferences{}.apply(nullptr);
        QVERIFY(ts::models::displayTimeUtc());
        QSettings().remove(QStringLiteral("preferences"));
    }

    // View > Dark Theme switches the palette (and the plots with it), and back; the choice is
    // remembered.
    void darkThemeToggle()
    {
        QSettings().remove(QStringLiteral("preferences"));
        const QPalette original = QApplication::palette();
        QVERIFY(!ts::widgets::isDark(original));
        MainWindow window;
        window.applySnapshot(ts::fixture::smallSnapshot());
        window.showPage(QStringLiteral("throttles"));
        window.resize(1000, 700);
        window.show();
        window.dashboard()->flushPendingSnapshot();
        QAction *dark = window.darkThemeAction();
        QVERIFY(dark && dark->isCheckable() && !dark->isChecked());
        dark->trigger();
        QVERIFY(dark->isChecked());
        QVERIFY(ts::widgets::isDark(QApplication::palette()));
        QTRY_VERIFY(ts::widgets::isDark(window.palette()));
        QCOMPARE(ts::widgets::Preferences::load().theme, ts::widgets::ThemeMode::Dark);
        QCustomPlot *plot = window.dashboard()->currentPlot();
        QVERIFY(plot);
        // The palette arrives through posted events; the plot follows it.
        QTRY_VERIFY(plot->axisRect()->backgroundBrush().color().lightness() < 80);
        dark->trigger();
        QVERIFY(!dark->isChecked());
        QCOMPARE(QApplication::palette().color(QPalette::Window),
                 original.color(QPalette::Window));
        QSettings().remove(QStringLiteral("preferences"));
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
