#include "core/timeparse.h"

#include <QTest>

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
        QTest::newRow("zulu-millis") << u"2026-02-18T22:44:09.512Z"_qs << true << Q_INT64_C(1771454649512);
        QTest::newRow("no-fraction") << u"2026-02-18T22:44:11Z"_qs << true << Q_INT64_C(1771454651000);
        QTest::newRow("offset") << u"2026-02-18T23:44:09.512+01:00"_qs << true << Q_INT64_C(1771454649512);
        QTest::newRow("negative-offset") << u"2026-02-18T17:44:09.512-05:00"_qs << true << Q_INT64_C(1771454649512);
        QTest::newRow("micros") << u"2026-02-18T22:44:09.512345Z"_qs << true << Q_INT64_C(1771454649512);
        QTest::newRow("space") << u"2026-02-18 22:44:09.512Z"_qs << true << Q_INT64_C(1771454649512);
        QTest::newRow("no-zone-is-utc") << u"2026-02-18T22:44:09"_qs << true << Q_INT64_C(1771454649000);
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
    void formatting() { QCOMPARE(formatIsoMs(1771454649512), u"2026-02-18T22:44:09.512Z"_qs); }
};

QTEST_GUILESS_MAIN(TestTimeParse)
#include "tst_timeparse.moc"
