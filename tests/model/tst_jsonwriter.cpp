// JsonWriter must print what QJsonDocument::toJson(Indented) prints, byte for byte: Qt itself
// is the oracle here, for single values, nesting, and random documents.
#include "core/jsonwriter.h"
#include "engine/reportformat.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <cmath>
#include <limits>
#include <random>

using namespace ts;

namespace {

// Writes a Qt JSON value through JsonWriter, member by member in QJsonObject's own order.
void writeValue(JsonWriter &json, const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Null:
        json.null();
        break;
    case QJsonValue::Bool:
        json.boolean(value.toBool());
        break;
    case QJsonValue::Double:
        // QJsonValue keeps integers apart from doubles; the variant says which this is.
        if (value.toVariant().typeId() == QMetaType::LongLong)
            json.integer(value.toInteger());
        else
            json.number(value.toDouble());
        break;
    case QJsonValue::String:
        json.string(value.toString());
        break;
    case QJsonValue::Array:
        json.beginArray();
        for (const QJsonValue &element : value.toArray())
            writeValue(json, element);
        json.endArray();
        break;
    case QJsonValue::Object: {
        json.beginObject();
        const QJsonObject object = value.toObject();
        for (auto it = object.begin(); it != object.end(); ++it) {
            json.key(it.key());
            writeValue(json, it.value());
        }
        json.endObject();
        break;
    }
    case QJsonValue::Undefined:
        break;
    }
}

QByteArray viaWriter(const QJsonObject &root)
{
    QByteArray out;
    JsonWriter json(out);
    writeValue(json, root);
    return out;
}

QByteArray viaQt(const QJsonObject &root)
{
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

QString randomText(std::mt19937 &random)
{
    // Mostly ASCII, with the characters that need care: escapes, controls, multi-byte UTF-8,
    // surrogate pairs and unpaired surrogates.
    static const char16_t kSpecial[] = {u'"',   u'\\',  u'\n',  u'\t',  u'\b',  u'\f',
                                        u'\r',  0x01,   0x1f,   0x7f,   0xe9,   0x20ac,
                                        0xd83d, 0xde00, 0xfffe, 0xffff, 0xe000, u'/'};
    std::uniform_int_distribution<int> length(0, 12);
    std::uniform_int_distribution<int> pick(0, 9);
    std::uniform_int_distribution<int> ascii(0x20, 0x7e);
    std::uniform_int_distribution<size_t> special(0, std::size(kSpecial) - 1);
    QString text;
    for (int i = length(random); i > 0; --i)
        text.append(QChar(pick(random) < 7 ? char16_t(ascii(random)) : kSpecial[special(random)]));
    return text;
}

QJsonValue randomValue(std::mt19937 &random, int depth)
{
    std::uniform_int_distribution<int> kind(0, depth > 3 ? 5 : 7);
    switch (kind(random)) {
    case 0:
        return QJsonValue();
    case 1:
        return QJsonValue(bool(random() & 1));
    case 2: {
        std::uniform_int_distribution<qint64> any(std::numeric_limits<qint64>::min(),
                                                  std::numeric_limits<qint64>::max());
        return QJsonValue(random() % 2 ? any(random) : qint64(random() % 2000) - 1000);
    }
    case 3: {
        std::uniform_real_distribution<double> unit(-1.0, 1.0);
        std::uniform_int_distribution<int> exponent(-30, 30);
        return QJsonValue(unit(random) * std::pow(10.0, exponent(random)));
    }
    case 4:
    case 5:
        return QJsonValue(randomText(random));
    case 6: {
        QJsonArray array;
        for (int i = int(random() % 4); i > 0; --i)
            array.append(randomValue(random, depth + 1));
        return array;
    }
    default: {
        QJsonObject object;
        for (int i = int(random() % 5); i > 0; --i)
            object.insert(randomText(random), randomValue(random, depth + 1));
        return object;
    }
    }
}

} // namespace

class TestJsonWriter : public QObject
{
    Q_OBJECT
private slots:
    void singleValues_data()
    {
        QTest::addColumn<QJsonValue>("value");
        const double inf = std::numeric_limits<double>::infinity();
        QTest::newRow("null") << QJsonValue();
        QTest::newRow("true") << QJsonValue(true);
        QTest::newRow("false") << QJsonValue(false);
        QTest::newRow("zero") << QJsonValue(qint64(0));
        QTest::newRow("negative") << QJsonValue(qint64(-1));
        QTest::newRow("int min") << QJsonValue(std::numeric_limits<qint64>::min());
        QTest::newRow("int max") << QJsonValue(std::numeric_limits<qint64>::max());
        QTest::newRow("int") << QJsonValue(int(429));
        QTest::newRow("double zero") << QJsonValue(0.0);
        QTest::newRow("double minus zero") << QJsonValue(-0.0);
        QTest::newRow("whole double") << QJsonValue(120.0);
        QTest::newRow("a million") << QJsonValue(1e6);
        QTest::newRow("1e15") << QJsonValue(1e15);
        QTest::newRow("1e16") << QJsonValue(1e16);
        QTest::newRow("1e21") << QJsonValue(1e21);
        QTest::newRow("tenth") << QJsonValue(0.1);
        QTest::newRow("third") << QJsonValue(1.0 / 3.0);
        QTest::newRow("fill") << QJsonValue(0.9166666666666666);
        QTest::newRow("small") << QJsonValue(1.5e-7);
        QTest::newRow("denormal") << QJsonValue(5e-324);
        QTest::newRow("largest") << QJsonValue(std::numeric_limits<double>::max());
        QTest::newRow("nan") << QJsonValue(std::nan(""));
        QTest::newRow("infinity") << QJsonValue(inf);
        QTest::newRow("minus infinity") << QJsonValue(-inf);
        QTest::newRow("empty string") << QJsonValue(QString());
        QTest::newRow("ascii") << QJsonValue(u"sp-migrator@contoso.com"_qs);
        QTest::newRow("escapes") << QJsonValue(u"a\"b\\c/d\n\r\t\b\f"_qs);
        QString controls;
        for (char16_t c = 0; c < 0x20; ++c)
            controls.append(QChar(c));
        controls.append(QChar(0x7f));
        QTest::newRow("control characters") << QJsonValue(controls);
        QTest::newRow("two-byte utf-8") << QJsonValue(u"caf\u00e9 \u00ff \u07ff"_qs);
        QTest::newRow("three-byte utf-8") << QJsonValue(u"\u20ac \u0800 \uffff \ue000"_qs);
        QTest::newRow("surrogate pair") << QJsonValue(u"\U0001F600 \U0010FFFF"_qs);
        QTest::newRow("lone high surrogate at the end")
            << QJsonValue(QStringView(u"ab\xd83d").toString());
        QTest::newRow("lone high surrogate mid-text")
            << QJsonValue(QStringView(u"a\xd83dz").toString());
        QTest::newRow("lone low surrogate") << QJsonValue(QStringView(u"a\xde00z").toString());
        QTest::newRow("high, high, low")
            << QJsonValue(QStringView(u"\xd83d\xd83d\xde00").toString());
        QTest::newRow("empty array") << QJsonValue(QJsonArray());
        QTest::newRow("empty object") << QJsonValue(QJsonObject());
        QTest::newRow("nested empties")
            << QJsonValue(QJsonArray{QJsonArray(), QJsonObject(), QJsonArray{QJsonObject()}});
        QTest::newRow("object in array")
            << QJsonValue(QJsonArray{QJsonObject{{u"b"_qs, 1}, {u"a"_qs, u"x"_qs}}, 2.5});
    }
    void singleValues()
    {
        QFETCH(QJsonValue, value);
        // Also as a member name when it is text: names are escaped the same way.
        QJsonObject root{{u"value"_qs, value}};
        if (value.isString())
            root.insert(value.toString(), 1);
        QCOMPARE(viaWriter(root), viaQt(root));
    }

    void emptyDocument() { QCOMPARE(viaWriter(QJsonObject()), viaQt(QJsonObject())); }

    void randomDocuments()
    {
        std::mt19937 random(1130);
        for (int i = 0; i < 2000; ++i) {
            QJsonObject root;
            for (int members = int(random() % 6); members > 0; --members)
                root.insert(randomText(random), randomValue(random, 0));
            const QByteArray written = viaWriter(root);
            const QByteArray expected = viaQt(root);
            if (written != expected)
                QCOMPARE(QString::fromUtf8(written), QString::fromUtf8(expected));
        }
    }

    // The report contract as QJsonDocument would print it: the writer's output read back and
    // printed again by Qt is the same text (member order, escaping, numbers, indentation).
    void reportReadsBackTheSame()
    {
        ReportData report;
        report.events = 1000000;
        report.malformed = 3;
        report.byStatus = {{200, 900000}, {429, 99000}, {0, 10}, {1000, 1}, {503, 989}};
        report.throttles.total = 99989;
        report.throttles.byErrorCode = {{u"RequestBlocked"_qs, 7},
                                        {u"50009"_qs, 2},
                                        {u"none"_qs, 1},
                                        {u"\u00e9t\u00e9 \"q\""_qs, 4}};
        report.throttles.byScope = {{u"Application"_qs, 3}};
        ScopeSummary scope;
        scope.service = u"graph"_qs;
        scope.limit = u"per-minute"_qs;
        scope.key = u"note-bridge+alice@contoso.com\n\t\u0001"_qs;
        scope.algorithm = u"fixed-window"_qs;
        scope.policy = u"onenote"_qs;
        // (Not a whole number past 1e6 here: Qt prints the double 1e6 as "1e+06" but reads that
        // back as an integer, printed "1000000"; singleValues() covers those as written.)
        scope.capacity = 1234.5;
        scope.windowSeconds = 60;
        scope.requests = 123456789;
        scope.peakUsage = 1.0 / 3.0;
        scope.peakFill = 0.1;
        scope.acceptedPeakUsage = 0.25;
        scope.acceptedPeakFill = 0.075;
        scope.timeAtLimitSeconds = std::nan("");
        scope.predictedThrottled = 5;
        scope.observedThrottled = 6;
        scope.nextSafeSendMs = 1771454649512;
        scope.effectiveLimit = 0.25;
        scope.observedLimitPercentage = 0.7;
        report.scopes = {scope, ScopeSummary{}};
        BreakerSummary reconstructed;
        reconstructed.scope = u"user:alice"_qs;
        reconstructed.source = u"reconstructed"_qs;
        reconstructed.transitions = 4;
        reconstructed.openSeconds = 12.5;
        reconstructed.finalState = u"half-open"_qs;
        reconstructed.trips = 2;
        reconstructed.blockedRequests = 17;
        reconstructed.model = BreakerModel::resilience4j();
        reconstructed.requests = 300;
        reconstructed.failures = 160;
        reconstructed.peakFailureRatio = 0.53;
        BreakerSummary logged = reconstructed;
        logged.source = u"logged"_qs;
        logged.model.reset();
        report.breakers = {reconstructed, logged};
        report.alerts = {Alert{u"retry-storm"_qs, u"critical"_qs, -1, u"app \xd83d"_qs,
                               u"line\nbreak \U0001F600"_qs}};
        report.firstMs = 0;
        report.lastMs = 253402300799999;

        const QByteArray written = reportToJson(report);
        QJsonParseError error;
        const QJsonDocument document = QJsonDocument::fromJson(written, &error);
        QCOMPARE(error.error, QJsonParseError::NoError);
        QCOMPARE(QString::fromUtf8(document.toJson(QJsonDocument::Indented)),
                 QString::fromUtf8(written));
        const QJsonObject root = document.object();
        QCOMPARE(root.value(u"byStatus"_qs).toObject().keys(),
                 QStringList({u"0"_qs, u"1000"_qs, u"200"_qs, u"429"_qs, u"503"_qs}));
        QCOMPARE(root.value(u"scopes"_qs).toArray().at(0).toObject().value(u"key"_qs).toString(),
                 scope.key);
        const QJsonObject firstScope = root.value(u"scopes"_qs).toArray().at(0).toObject();
        QCOMPARE(firstScope.value(u"peakUsage"_qs).toDouble(), 1.0 / 3.0);
        QCOMPARE(firstScope.value(u"acceptedPeakUsage"_qs).toDouble(), 0.25);
        QCOMPARE(firstScope.value(u"acceptedPeakFill"_qs).toDouble(), 0.075);
        QCOMPARE(root.value(u"to"_qs).toString(), u"9999-12-31T23:59:59.999Z"_qs);
        const QJsonObject breaker = root.value(u"breakers"_qs).toArray().at(1).toObject();
        QVERIFY(!breaker.contains(u"trips"_qs)); // only reconstructed breakers count trips
    }

    // An empty report: empty arrays and objects, no from/to.
    void emptyReportReadsBackTheSame()
    {
        const QByteArray written = reportToJson(ReportData{});
        QCOMPARE(QJsonDocument::fromJson(written).toJson(QJsonDocument::Indented), written);
        QVERIFY(!written.contains("\"from\""));
    }
};

QTEST_GUILESS_MAIN(TestJsonWriter)
#include "tst_jsonwriter.moc"
