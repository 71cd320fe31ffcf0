// The live time window (issue 17.6): while following, the shared TimeRange shows a trailing
// window like Grafana's time picker (last 5 min, 15 min, 1 h, all), as wide as the data when
// there is less of it: never a blank window, never stuck at the width of the first seconds.
#include "models/timerange.h"

#include <QSignalSpy>
#include <QTest>

using ts::models::TimeRange;

namespace {
constexpr qint64 kT0 = 1'771'454'649'000; // 2026-02-18T22:44:09Z
constexpr qint64 kMin = 60'000;
} // namespace

class TestTimeRange : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void followedSpan_data()
    {
        QTest::addColumn<qint64>("dataMs");   // bounds: [kT0, kT0 + dataMs]
        QTest::addColumn<qint64>("windowMs"); // 0 = all
        QTest::addColumn<qint64>("chosenMs"); // -1: no zoom width
        QTest::addColumn<qint64>("startOffset");
        QTest::addColumn<qint64>("endOffset");
        QTest::newRow("all, 3 s of data") << 3'000ll << 0ll << -1ll << 0ll << 3'000ll;
        QTest::newRow("all, 2 h") << 120 * kMin << 0ll << -1ll << 0ll << 120 * kMin;
        QTest::newRow("5 min, 3 s of data: all of it, not a blank 5 min")
            << 3'000ll << 5 * kMin << -1ll << 0ll << 3'000ll;
        QTest::newRow("5 min, 2 h of data") << 120 * kMin << 5 * kMin << -1ll << 115 * kMin
                                            << 120 * kMin;
        QTest::newRow("15 min, 14 min of data") << 14 * kMin << 15 * kMin << -1ll << 0ll
                                                << 14 * kMin;
        QTest::newRow("15 min, 16 min of data") << 16 * kMin << 15 * kMin << -1ll << kMin
                                                << 16 * kMin;
        QTest::newRow("1 h, 3 h of data") << 180 * kMin << 60 * kMin << -1ll << 120 * kMin
                                          << 180 * kMin;
        QTest::newRow("one instant: one second wide") << 0ll << 5 * kMin << -1ll << 0ll << 1'000ll;
        QTest::newRow("zoomed width wins") << 120 * kMin << 5 * kMin << 2 * kMin << 118 * kMin
                                           << 120 * kMin;
    }
    void followedSpan()
    {
        QFETCH(qint64, dataMs);
        QFETCH(qint64, windowMs);
        QFETCH(qint64, chosenMs);
        QFETCH(qint64, startOffset);
        QFETCH(qint64, endOffset);
        const TimeRange::Span span = TimeRange::followedSpan(
            kT0, kT0 + dataMs, windowMs, chosenMs < 0 ? std::nullopt : std::optional<qint64>(chosenMs));
        QCOMPARE(span.startMs - kT0, startOffset);
        QCOMPARE(span.endMs - kT0, endOffset);
    }

    // A live feed grows second by second: the view starts with what there is, widens with the
    // data up to the preset, then slides; it never keeps the width of its first few seconds.
    void liveFeedGrows_data()
    {
        QTest::addColumn<qint64>("windowMs");
        QTest::addColumn<QList<qint64>>("lastOffsets");   // successive bounds' ends
        QTest::addColumn<QList<qint64>>("expectedStarts"); // range starts (offsets) after each
        QTest::newRow("all") << 0ll << QList<qint64>{3'000, 60'000, 20 * kMin}
                             << QList<qint64>{0, 0, 0};
        QTest::newRow("5 min") << 5 * kMin << QList<qint64>{3'000, 60'000, 5 * kMin, 20 * kMin}
                               << QList<qint64>{0, 0, 0, 15 * kMin};
        QTest::newRow("1 h") << 60 * kMin << QList<qint64>{3'000, 20 * kMin, 90 * kMin}
                             << QList<qint64>{0, 0, 30 * kMin};
    }
    void liveFeedGrows()
    {
        QFETCH(qint64, windowMs);
        QFETCH(QList<qint64>, lastOffsets);
        QFETCH(QList<qint64>, expectedStarts);
        TimeRange range;
        range.setTrailingWindowMs(windowMs);
        for (qsizetype i = 0; i < lastOffsets.size(); ++i) {
            range.setBounds(kT0, kT0 + lastOffsets.at(i));
            QVERIFY(range.isFollowing());
            QCOMPARE(range.endMs(), kT0 + lastOffsets.at(i));
            QCOMPARE(range.startMs() - kT0, expectedStarts.at(i));
        }
    }

    void choosingAPresetFollows()
    {
        TimeRange range;
        QSignalSpy window(&range, &TimeRange::trailingWindowChanged);
        range.setBounds(kT0, kT0 + 120 * kMin);
        range.setRange(kT0 + 10 * kMin, kT0 + 20 * kMin); // looking back
        QVERIFY(!range.isFollowing());
        range.setTrailingWindowMs(15 * kMin);
        QVERIFY(range.isFollowing());
        QCOMPARE(range.startMs(), kT0 + 105 * kMin);
        QCOMPARE(range.endMs(), kT0 + 120 * kMin);
        QCOMPARE(window.count(), 1);
        QCOMPARE(window.at(0).at(0).toLongLong(), 15 * kMin);
        // A zoom that keeps the newest data keeps following with its width...
        range.setRange(kT0 + 118 * kMin, kT0 + 120 * kMin);
        range.setBounds(kT0, kT0 + 121 * kMin);
        QCOMPARE(range.startMs(), kT0 + 119 * kMin);
        // ...until the preset is chosen again.
        range.setTrailingWindowMs(15 * kMin);
        QCOMPARE(range.startMs(), kT0 + 106 * kMin);
        QCOMPARE(window.count(), 1); // unchanged preset: no signal
        // Going back to live after looking back returns to the preset, not the zoom.
        range.setRange(kT0, kT0 + kMin);
        range.setFollowing(true);
        QCOMPARE(range.startMs(), kT0 + 106 * kMin);
    }

    void settingText_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("windowMs"); // -1: not a window
        QTest::newRow("all") << u"all"_qs << 0ll;
        QTest::newRow("5m") << u"5m"_qs << 5 * kMin;
        QTest::newRow("15m") << u"15m"_qs << 15 * kMin;
        QTest::newRow("1h") << u"1h"_qs << 60 * kMin;
        QTest::newRow("30s") << u"30s"_qs << 30'000ll;
        QTest::newRow("garbage") << u"soon"_qs << -1ll;
        QTest::newRow("negative") << u"-5m"_qs << -1ll;
        QTest::newRow("empty") << QString() << -1ll;
    }
    void settingText()
    {
        QFETCH(QString, text);
        QFETCH(qint64, windowMs);
        const std::optional<qint64> parsed = TimeRange::windowFromSettingText(text);
        QCOMPARE(parsed, windowMs < 0 ? std::nullopt : std::optional<qint64>(windowMs));
        if (parsed)
            QCOMPARE(TimeRange::windowSettingText(*parsed), text);
    }

    void presets()
    {
        QCOMPARE(TimeRange::presetWindowsMs(), (QList<qint64>{5 * kMin, 15 * kMin, 60 * kMin, 0}));
    }
};

QTEST_GUILESS_MAIN(TestTimeRange)
#include "tst_timerange.moc"
