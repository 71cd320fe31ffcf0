#include "core/timeparse.h"

#include <QDateTime>
#include <QTest>

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
    void unixNumbers()
    {
        QCOMPARE(unixNumberToMs(1771454650100.0), Q_INT64_C(1771454650100));
        QCOMPARE(unixNumberToMs(1771454650.1), Q_INT64_C(1771454650100));
        QCOMPARE(unixNumberToMs(1771454650.123), Q_INT64_C(1771454650123));
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
