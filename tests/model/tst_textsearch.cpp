// The SIMD searches of core/textsearch.h against QStringView::indexOf, on every alignment and
// length around the 8-unit vector width, and on text with near-miss candidates.

#include "core/textsearch.h"

#include <QRandomGenerator>
#include <QTest>

using namespace ts;

class TestTextSearch : public QObject
{
    Q_OBJECT

private slots:
    void findSubstringAgreesWithQt_data();
    void findSubstringAgreesWithQt();
    void findEitherAgreesWithQt_data();
    void findEitherAgreesWithQt();
    void findAnyOf4AgreesWithQt();
    void randomTextAgreesWithQt();
};

void TestTextSearch::findSubstringAgreesWithQt_data()
{
    QTest::addColumn<QString>("haystack");
    QTest::addColumn<QString>("needle");
    QTest::newRow("onenote in path") << "/v1.0/me/onenote/pages/1-abc/content"
                                     << "/onenote/";
    QTest::newRow("absent") << "/v1.0/users/abc/drive/root"
                            << "/onenote/";
    QTest::newRow("near misses") << "/onenot//onenote-/onenote//onenote/"
                                 << "/onenote/";
    QTest::newRow("at the very end") << "0123456789abcdef/x/"
                                     << "/x/";
    QTest::newRow("at the start") << "/x/0123456789abcdef"
                                  << "/x/";
    QTest::newRow("needle = haystack") << "/subscriptions/"
                                       << "/subscriptions/";
    QTest::newRow("needle longer") << "/sub"
                                   << "/subscriptions/";
    QTest::newRow("one unit") << "abcdefghijklmnopq"
                              << "q";
    QTest::newRow("empty haystack") << ""
                                    << "x";
    QTest::newRow("non-ASCII") << "/é/ü/日本/onenote/€"
                               << "日本/o";
    QTest::newRow("repeated first and last") << "aaaaaaaaaaaaaaaaaaaaaaab"
                                             << "aab";
}

void TestTextSearch::findSubstringAgreesWithQt()
{
    QFETCH(QString, haystack);
    QFETCH(QString, needle);
    // Every start offset, so each alignment of the vector loop and its scalar tail is covered.
    for (qsizetype from = 0; from <= haystack.size(); ++from) {
        const qsizetype expected = QStringView(haystack).indexOf(needle, from);
        const qsizetype actual =
            text::findSubstring(QStringView(haystack).utf16(), haystack.size(),
                                QStringView(needle).utf16(), needle.size(), from);
        QCOMPARE(actual, expected);
    }
}

void TestTextSearch::findEitherAgreesWithQt_data()
{
    QTest::addColumn<QString>("text");
    QTest::newRow("query") << "/v1/workspaces/abc/items?continuationToken=x#f";
    QTest::newRow("fragment first") << "/a/b/c/d/e/f/g#frag?q";
    QTest::newRow("neither") << "/v1.0/me/onenote/pages/1-abc/content";
    QTest::newRow("short") << "/a?";
    QTest::newRow("empty") << "";
}

void TestTextSearch::findEitherAgreesWithQt()
{
    QFETCH(QString, text);
    for (qsizetype from = 0; from <= text.size(); ++from) {
        const QStringView rest = QStringView(text).mid(from);
        const qsizetype q = rest.indexOf(u'?');
        const qsizetype h = rest.indexOf(u'#');
        const qsizetype expected = q < 0 ? h : (h < 0 ? q : std::min(q, h));
        QCOMPARE(text::findEither(rest.utf16(), rest.size(), u'?', u'#'), expected);
    }
}

void TestTextSearch::findAnyOf4AgreesWithQt()
{
    // Every start offset of URL-like texts longer and shorter than one 8-unit step.
    const QStringList texts{QStringLiteral("api.fabric.microsoft.com/v1/items?x=1#f"),
                            QStringLiteral("127.0.0.1:8080/a"),
                            QStringLiteral("a-very-long-host-name-without-any-stop"),
                            QStringLiteral("h#"), QString()};
    for (const QString &text : texts) {
        for (qsizetype from = 0; from <= text.size(); ++from) {
            const QStringView rest = QStringView(text).mid(from);
            qsizetype expected = -1;
            for (qsizetype i = 0; i < rest.size() && expected < 0; ++i) {
                if (QStringView(u"/?#:").contains(rest[i]))
                    expected = i;
            }
            QCOMPARE(text::findAnyOf4(rest.utf16(), rest.size(), u'/', u'?', u'#', u':'),
                     expected);
        }
    }
}

void TestTextSearch::randomTextAgreesWithQt()
{
    // A small alphabet makes candidates (first and last unit matching) frequent.
    QRandomGenerator rng(7);
    for (int round = 0; round < 20000; ++round) {
        QString haystack;
        const int size = int(rng.bounded(40u));
        for (int i = 0; i < size; ++i)
            haystack.append(QChar(u'a' + char16_t(rng.bounded(3u))));
        QString needle;
        const int needleSize = 1 + int(rng.bounded(5u));
        for (int i = 0; i < needleSize; ++i)
            needle.append(QChar(u'a' + char16_t(rng.bounded(3u))));
        const qsizetype from = qsizetype(rng.bounded(quint32(size + 1)));
        QCOMPARE(text::findSubstring(QStringView(haystack).utf16(), haystack.size(),
                                     QStringView(needle).utf16(), needle.size(), from),
                 QStringView(haystack).indexOf(needle, from));
    }
}

QTEST_GUILESS_MAIN(TestTextSearch)
#include "tst_textsearch.moc"
