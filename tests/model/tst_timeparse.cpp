#include "core/timeparse.h"

#include <QDateTime>
#include <QTest>

#include <limits>
#include <random>

using namespace ts;

class TestTimeParse : public QObject
{
    Q_OBJECT
private slots:
    void rfc3339_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<qint64>("ms");
        QTest::newRow("zulu-millis")
            << u"2026-02-18T22:44:09.512Z"_qs << true << Q_INT64_C(1771454649512);
        QTest::newRow("no-fraction")
            << u"2026-02-18T22:44:11Z"_qs << true << Q_INT64_C(1771454651000);
        QTest::newRow("offset") << u"2026-02-18T23:44:09.512+01:00"_qs << true
                                << Q_INT64_C(1771454649512);
        QTest::newRow("negative-offset")
            << u"2026-02-18T17:44:09.512-05:00"_qs << true << Q_INT64_C(1771454649512);
        QTest::newRow("micros") << u"2026-02-18T22:44:09.512345Z"_qs << true
                                << Q_INT64_C(1771454649512);
        QTest::newRow("space") << u"2026-02-18 22:44:09.512Z"_qs << true
                               << Q_INT64_C(1771454649512);
        QTest::newRow("no-zone-is-utc")
            << u"2026-02-18T22:44:09"_qs << true << Q_INT64_C(1771454649000);
        QTest::newRow("epoch") << u"1970-01-01T00:00:00Z"_qs << true << Q_INT64_C(0);
        QTest::newRow("leap-day") << u"2024-02-29T00:00:00Z"_qs << true << Q_INT64_C(1709164800000);
        QTest::newRow("garbage") << u"yesterday"_qs << false << Q_INT64_C(0);
        QTest::newRow("bad-month") << u"2026-13-18T22:44:09Z"_qs << false << Q_INT64_C(0);
        QTest::newRow("trailing") << u"2026-02-18T22:44:09Zjunk"_qs << false << Q_INT64_C(0);
        QTest::newRow("empty-fraction") << u"2026-02-18T22:44:09.Z"_qs << false << Q_INT64_C(0);
        // Days that do not exist are not rolled over into the next month.
        QTest::newRow("30 February") << u"2026-02-30T10:00:00Z"_qs << false << Q_INT64_C(0);
        QTest::newRow("29 February 2025") << u"2025-02-29T10:00:00Z"_qs << false << Q_INT64_C(0);
        QTest::newRow("29 February 2100") << u"2100-02-29T10:00:00Z"_qs << false << Q_INT64_C(0);
        QTest::newRow("29 February 2000")
            << u"2000-02-29T00:00:00Z"_qs << true << Q_INT64_C(951782400000);
        QTest::newRow("31 April") << u"2026-04-31T10:00:00Z"_qs << false << Q_INT64_C(0);
        QTest::newRow("31 June") << u"2026-06-31T10:00:00Z"_qs << false << Q_INT64_C(0);
        QTest::newRow("day 0") << u"2026-02-00T10:00:00Z"_qs << false << Q_INT64_C(0);
        QTest::newRow("hour 24") << u"2026-02-18T24:00:00Z"_qs << false << Q_INT64_C(0);
        QTest::newRow("minute 60") << u"2026-02-18T22:60:00Z"_qs << false << Q_INT64_C(0);
        QTest::newRow("second 61") << u"2026-02-18T22:44:61Z"_qs << false << Q_INT64_C(0);
        QTest::newRow("leap second")
            << u"2016-12-31T23:59:60Z"_qs << true << Q_INT64_C(1483228800000);
        QTest::newRow("offset hour 24") << u"2026-02-18T22:44:09+24:00"_qs << false << Q_INT64_C(0);
        QTest::newRow("offset minute 60")
            << u"2026-02-18T22:44:09-05:60"_qs << false << Q_INT64_C(0);
        // The accepted range: 1970-01-01 to 9999-12-31 (UTC), whatever the offset.
        QTest::newRow("before the epoch") << u"1969-12-31T23:59:59Z"_qs << false << Q_INT64_C(0);
        QTest::newRow("epoch by offset") << u"1970-01-01T01:00:00+01:00"_qs << true << Q_INT64_C(0);
        QTest::newRow("before the epoch by offset")
            << u"1970-01-01T00:30:00+01:00"_qs << false << Q_INT64_C(0);
        QTest::newRow("last instant")
            << u"9999-12-31T23:59:59.999Z"_qs << true << Q_INT64_C(253402300799999);
        QTest::newRow("past year 9999 by offset")
            << u"9999-12-31T23:59:59-01:00"_qs << false << Q_INT64_C(0);
    }
    void rfc3339()
    {
        QFETCH(QString, text);
        QFETCH(bool, valid);
        QFETCH(qint64, ms);
        const auto parsed = parseRfc3339Ms(QStringView(text));
        QCOMPARE(parsed.has_value(), valid);
        if (valid)
            QCOMPARE(*parsed, ms);
    }
    void unixNumbers_data()
    {
        QTest::addColumn<double>("number");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<qint64>("ms");
        QTest::newRow("ms") << 1771454650100.0 << true << Q_INT64_C(1771454650100);
        QTest::newRow("seconds") << 1771454650.1 << true << Q_INT64_C(1771454650100);
        QTest::newRow("seconds, ms fraction") << 1771454650.123 << true << Q_INT64_C(1771454650123);
        QTest::newRow("zero") << 0.0 << true << Q_INT64_C(0);
        QTest::newRow("last ms") << 253402300799999.0 << true << Q_INT64_C(253402300799999);
        QTest::newRow("past 9999") << 253402300800000.0 << false << Q_INT64_C(0);
        QTest::newRow("1e300") << 1e300 << false << Q_INT64_C(0);
        QTest::newRow("-1e300") << -1e300 << false << Q_INT64_C(0);
        QTest::newRow("negative") << -1.0 << false << Q_INT64_C(0);
        QTest::newRow("infinity") << std::numeric_limits<double>::infinity() << false
                                  << Q_INT64_C(0);
        QTest::newRow("NaN") << std::numeric_limits<double>::quiet_NaN() << false << Q_INT64_C(0);
    }
    void unixNumbers()
    {
        QFETCH(double, number);
        QFETCH(bool, valid);
        QFETCH(qint64, ms);
        const auto parsed = unixNumberToMs(number);
        QCOMPARE(parsed.has_value(), valid);
        if (valid)
            QCOMPARE(*parsed, ms);
    }

    // The one calendar check every time parser composes its fields through.
    void civilDates_data()
    {
        QTest::addColumn<int>("year");
        QTest::addColumn<int>("month");
        QTest::addColumn<int>("day");
        QTest::addColumn<int>("hour");
        QTest::addColumn<int>("minute");
        QTest::addColumn<int>("second");
        QTest::addColumn<int>("offset");
        QTest::addColumn<bool>("valid");
        QTest::newRow("fine") << 2026 << 2 << 18 << 22 << 44 << 9 << 0 << true;
        QTest::newRow("30 February") << 2026 << 2 << 30 << 0 << 0 << 0 << 0 << false;
        QTest::newRow("29 February 2024") << 2024 << 2 << 29 << 0 << 0 << 0 << 0 << true;
        QTest::newRow("29 February 1900") << 1900 << 2 << 29 << 0 << 0 << 0 << 0 << false;
        QTest::newRow("31 September") << 2026 << 9 << 31 << 0 << 0 << 0 << 0 << false;
        QTest::newRow("month 0") << 2026 << 0 << 1 << 0 << 0 << 0 << 0 << false;
        QTest::newRow("month 13") << 2026 << 13 << 1 << 0 << 0 << 0 << 0 << false;
        QTest::newRow("negative hour") << 2026 << 1 << 1 << -1 << 0 << 0 << 0 << false;
        QTest::newRow("offset a day") << 2026 << 1 << 1 << 0 << 0 << 0 << 1440 << false;
        QTest::newRow("year 2^31-1") << 2147483647 << 1 << 1 << 0 << 0 << 0 << 0 << false;
        QTest::newRow("year -2^31") << (-2147483647 - 1) << 1 << 1 << 0 << 0 << 0 << 0 << false;
    }
    void civilDates()
    {
        QFETCH(int, year);
        QFETCH(int, month);
        QFETCH(int, day);
        QFETCH(int, hour);
        QFETCH(int, minute);
        QFETCH(int, second);
        QFETCH(int, offset);
        QFETCH(bool, valid);
        QCOMPARE(civilToMs(year, month, day, hour, minute, second, 0, offset).has_value(), valid);
    }
    void formatting_data()
    {
        QTest::addColumn<qint64>("ms");
        QTest::addColumn<QString>("expected");
        QTest::newRow("bench log") << Q_INT64_C(1771454649512) << u"2026-02-18T22:44:09.512Z"_qs;
        QTest::newRow("epoch") << Q_INT64_C(0) << u"1970-01-01T00:00:00.000Z"_qs;
        QTest::newRow("before the epoch") << Q_INT64_C(-1) << u"1969-12-31T23:59:59.999Z"_qs;
        QTest::newRow("leap day") << Q_INT64_C(951782400000) << u"2000-02-29T00:00:00.000Z"_qs;
        QTest::newRow("end of a leap year")
            << Q_INT64_C(1735689599999) << u"2024-12-31T23:59:59.999Z"_qs;
        QTest::newRow("year 1") << Q_INT64_C(-62135596800000) << u"0001-01-01T00:00:00.000Z"_qs;
        QTest::newRow("year 9999") << Q_INT64_C(253402300799999) << u"9999-12-31T23:59:59.999Z"_qs;
    }
    void formatting()
    {
        QFETCH(qint64, ms);
        QFETCH(QString, expected);
        QCOMPARE(formatIsoMs(ms), expected);
    }

    // The hand-written formatter spells every instant as QDateTime does, including the years
    // it hands back to QDateTime (before year 1, after 9999).
    void formattingMatchesQDateTime()
    {
        auto viaQDateTime = [](qint64 ms) {
            return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC)
                .toString(u"yyyy-MM-ddTHH:mm:ss.zzzZ"_qs);
        };
        std::mt19937_64 random(20261130);
        std::uniform_int_distribution<qint64> anyInstant(Q_INT64_C(-70000000000000),
                                                         Q_INT64_C(260000000000000));
        std::uniform_int_distribution<qint64> nearNow(Q_INT64_C(1600000000000),
                                                      Q_INT64_C(1900000000000));
        for (int i = 0; i < 20000; ++i) {
            const qint64 ms = i % 2 ? anyInstant(random) : nearNow(random);
            QCOMPARE(formatIsoMs(ms), viaQDateTime(ms));
        }
        for (const qint64 ms : {Q_INT64_C(-62135596800001), Q_INT64_C(253402300800000)})
            QCOMPARE(formatIsoMs(ms), viaQDateTime(ms));
    }
};

QTEST_GUILESS_MAIN(TestTimeParse)
#include "tst_timeparse.moc"
