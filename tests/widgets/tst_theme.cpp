// Shared look: one colour per errorCode that never changes between sessions (a pure function:
// the values are pinned here, so a seeded hash or an order-dependent palette fails), fill
// thresholds, the light/dark theme, integral ticks on count axes, the sidebar's icons.
#include "dashboard.h"
#include "plotstyle.h"
#include "qcp.h"
#include "snapshotfixture.h"
#include "theme.h"
#include "throttlespage.h"

#include <QApplication>
#include <QListWidget>
#include <QTest>

using namespace ts::widgets;

class TestTheme : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void errorCodeColourIsStable_data()
    {
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("colour");
        // The fixed table.
        QTest::newRow("TooManyRequests") << u"TooManyRequests"_qs << u"#e15759"_qs;
        QTest::newRow("activityLimitReached") << u"activityLimitReached"_qs << u"#f28e2b"_qs;
        QTest::newRow("20166") << u"20166"_qs << u"#edc948"_qs;
        QTest::newRow("RequestBlocked") << u"RequestBlocked"_qs << u"#4e79a7"_qs;
        QTest::newRow("50009") << u"50009"_qs << u"#b07aa1"_qs;
        QTest::newRow("none") << u"none"_qs << u"#bab0ac"_qs;
        // Codes nobody listed: the stable hash. Pinned values: a per-process seed (qHash) or
        // a colour by order of appearance would change them.
        QTest::newRow("SomethingNew") << u"SomethingNew"_qs << QString();
        QTest::newRow("E_QUOTA") << u"E_QUOTA"_qs << QString();
    }
    void errorCodeColourIsStable()
    {
        QFETCH(QString, code);
        QFETCH(QString, colour);
        const QColor first = errorCodeColor(code);
        QVERIFY(first.isValid());
        if (!colour.isEmpty())
            QCOMPARE(first.name(), colour);
        // Whatever was asked before, and however often.
        for (const QString &other : {u"x"_qs, u"TooManyRequests"_qs, u"zzz"_qs})
            errorCodeColor(other);
        QCOMPARE(errorCodeColor(code), first);
    }

    // The hashed colours, pinned across sessions: written down once from a run. A seeded hash
    // (qHash) or a different function would change them.
    void hashedColoursArePinned()
    {
        QCOMPARE(errorCodeColor(u"SomethingNew"_qs).name(), u"#e54b71"_qs);
        QCOMPARE(errorCodeColor(u"E_QUOTA"_qs).name(), u"#ee5439"_qs);
        QVERIFY(errorCodeColor(u"SomethingNew"_qs) != errorCodeColor(u"E_QUOTA"_qs));
    }

    void fillThresholds()
    {
        const QColor green = fillColor(0.1);
        const QColor amber = fillColor(0.85);
        const QColor red = fillColor(1.0);
        QVERIFY(green != amber && amber != red);
        setFillThresholds(0.5, 0.9);
        QCOMPARE(fillColor(0.6), amber);
        QCOMPARE(fillColor(0.95), red);
        QCOMPARE(fillColor(0.4), green);
        setFillThresholds(0.8, 1.0);
        QCOMPARE(fillColor(0.6), green);
    }

    void darkAndLightThemes()
    {
        const QPalette original = QApplication::palette();
        applyTheme(ThemeMode::Dark);
        QVERIFY(isDark(QApplication::palette()));
        QCOMPARE(currentThemeMode(), ThemeMode::Dark);
        applyTheme(ThemeMode::Light);
        QVERIFY(!isDark(QApplication::palette()));
        applyTheme(ThemeMode::System);
        QCOMPARE(QApplication::palette().color(QPalette::Window),
                 original.color(QPalette::Window));
        QCOMPARE(themeModeFromName(themeModeName(ThemeMode::Dark)), ThemeMode::Dark);
        QCOMPARE(themeModeFromName(u"bogus"_qs), ThemeMode::System);
    }

    // Counts have whole ticks: the throttles per bin axis never says 0.5.
    void integralTicksForCounts()
    {
        Dashboard dashboard;
        dashboard.resize(1000, 700);
        dashboard.show();
        auto snap = ts::fixture::smallSnapshot();
        dashboard.applySnapshot(snap);
        dashboard.showPage(u"throttles"_qs);
        dashboard.flushPendingSnapshot();
        QCustomPlot *plot = dashboard.currentPlot();
        QVERIFY(plot);
        for (double top : {1.2, 3.0, 7.5, 42.0}) {
            plot->yAxis->setRange(0, top);
            plot->replot(QCustomPlot::rpImmediateRefresh);
            const QVector<double> ticks = plot->yAxis->tickVector();
            QVERIFY(!ticks.isEmpty());
            for (double tick : ticks)
                QVERIFY2(tick == std::floor(tick), qPrintable(QString::number(tick)));
            for (const QString &label : plot->yAxis->tickVectorLabels())
                QVERIFY2(!label.contains(u'.'), qPrintable(label));
        }
    }

    // The sidebar: every page has an icon, redrawn for a dark palette.
    void sidebarIcons()
    {
        Dashboard dashboard;
        QListWidget *navigation = dashboard.navigation();
        QCOMPARE(navigation->count(), Dashboard::pageNames().size());
        const QImage before = navigation->item(0)->icon().pixmap(32, 32).toImage();
        for (int row = 0; row < navigation->count(); ++row)
            QVERIFY(!navigation->item(row)->icon().isNull());
        QPalette dark = darkPalette();
        dashboard.setPalette(dark);
        const QImage after = navigation->item(0)->icon().pixmap(32, 32).toImage();
        QVERIFY(before != after);
    }

};

QTEST_MAIN(TestTheme)
#include "tst_theme.moc"
