// Names people can read (models/displaynames.h): keys and identities short, the application GUID
// moved out of the name, GUID-only keys abbreviated, one spelling of "unknown", the full value
// kept for tooltips and exports.
#include "models/displaynames.h"

#include <QTest>

using namespace ts::models;

namespace {
const QString kGuid = QStringLiteral("0f8fad5b-d9cb-469f-a165-70867728950e");
const QString kOtherGuid = QStringLiteral("7c9e6679-7425-40de-944b-e07fc1f90ae7");
} // namespace

class TestDisplayNames : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void shortName_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("shown");
        QTest::addColumn<QString>("application");
        QTest::newRow("plain name") << u"sp-migrator"_qs << u"sp-migrator"_qs << QString();
        QTest::newRow("named app stays")
            << u"note-bridge+alice@contoso.com"_qs << u"note-bridge+alice@contoso.com"_qs
            << QString();
        QTest::newRow("app guid moves out")
            << kGuid + u"+alice@contoso.com"_qs << u"alice@contoso.com"_qs << kGuid;
        QTest::newRow("guid only") << kGuid << u"0f8fad5b…"_qs << QString();
        QTest::newRow("braced guid") << u'{' + kGuid + u'}' << u"0f8fad5b…"_qs << QString();
        QTest::newRow("two guids") << kGuid + u'+' + kOtherGuid << u"0f8fad5b…+7c9e6679…"_qs
                                   << QString();
        QTest::newRow("empty") << QString() << u"unknown"_qs << QString();
        QTest::newRow("none") << u"none"_qs << u"unknown"_qs << QString();
        QTest::newRow("Unknown") << u"Unknown"_qs << u"unknown"_qs << QString();
        QTest::newRow("guid and none")
            << kGuid + u"+none"_qs << u"unknown"_qs << kGuid;
        QTest::newRow("not quite a guid")
            << u"0f8fad5b-d9cb-469f-a165-70867728950"_qs << u"0f8fad5b-d9cb-469f-a165-70867728950"_qs
            << QString();
    }
    void shortName()
    {
        QFETCH(QString, key);
        QFETCH(QString, shown);
        QFETCH(QString, application);
        const ReadableName name = readableName(key);
        QCOMPARE(name.shortName, shown);
        QCOMPARE(name.application, application);
        QCOMPARE(name.full, key);
        QCOMPARE(ts::models::shortName(key), shown);
        // The full value is always in the tooltip.
        if (!key.isEmpty())
            QVERIFY(nameTooltip(key).contains(key));
    }

    // One user through two applications: the column tells them apart.
    void shortNamesDisambiguate()
    {
        const QStringList keys = {kGuid + u"+alice@contoso.com"_qs,
                                  kOtherGuid + u"+alice@contoso.com"_qs, u"bob"_qs};
        const QStringList names = shortNames(keys);
        QCOMPARE(names.at(0), u"alice@contoso.com (0f8fad5b…)"_qs);
        QCOMPARE(names.at(1), u"alice@contoso.com (7c9e6679…)"_qs);
        QCOMPARE(names.at(2), u"bob"_qs);
        QCOMPARE(shortNames({kGuid + u"+alice@contoso.com"_qs}),
                 QStringList{u"alice@contoso.com"_qs});
        // The same key twice (two alert kinds) is no ambiguity.
        QCOMPARE(shortNames({kGuid + u"+alice@contoso.com"_qs, kGuid + u"+alice@contoso.com"_qs}),
                 QStringList({u"alice@contoso.com"_qs, u"alice@contoso.com"_qs}));
    }

    void shortScope_data()
    {
        QTest::addColumn<QString>("scope");
        QTest::addColumn<QString>("shown");
        QTest::newRow("app") << u"app"_qs << u"app"_qs;
        QTest::newRow("user") << u"user:alice@contoso.com"_qs << u"user:alice@contoso.com"_qs;
        QTest::newRow("user guid") << u"user:"_qs + kGuid << u"user:0f8fad5b…"_qs;
        QTest::newRow("service unknown") << u"graph:unknown"_qs << u"graph:unknown"_qs;
        QTest::newRow("bare guid") << kGuid << u"0f8fad5b…"_qs;
    }
    void shortScope()
    {
        QFETCH(QString, scope);
        QFETCH(QString, shown);
        QCOMPARE(ts::models::shortScope(scope), shown);
    }

    void displayTime()
    {
        QVERIFY(displayTimeUtc());
        const qint64 ms = 1771454530000; // 2026-02-18T22:42:10Z
        QCOMPARE(formatDisplayTime(ms), u"2026-02-18T22:42:10.000Z"_qs);
        QCOMPARE(timeHeader(u"Time"_qs), u"Time (UTC)"_qs);
        setDisplayTimeUtc(false);
        QCOMPARE(timeHeader(u"Time"_qs), u"Time (local)"_qs);
        QVERIFY(!formatDisplayTime(ms).endsWith(u'Z'));
        setDisplayTimeUtc(true);
    }
};

QTEST_GUILESS_MAIN(TestDisplayNames)
#include "tst_displaynames.moc"
