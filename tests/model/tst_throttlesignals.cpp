// Throttle-signal extraction: every dialect, nasty inputs, and the real third-party samples
// (Fabric vcrpy cassettes with live 429 RequestBlocked answers, the Graph docs' 429 and $batch
// responses). Expected values for the real samples are read from the files by this test's own
// small readers, never copied from what the implementation printed.

#include "alloccounter.h"
#include "signals/throttlesignals.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTest>

#include <cmath>
#include <limits>

using namespace ts;
using namespace ts::throttle;

namespace {

constexpr qint64 kAbsent = std::numeric_limits<qint64>::min();
constexpr double kNoDouble = -12345.0;

qint64 orAbsent(const std::optional<qint64> &v)
{
    return v ? *v : kAbsent;
}
double orNoDouble(const std::optional<double> &v)
{
    return v ? *v : kNoDouble;
}

// "name", "value", "name", "value", ... (names in any case: HttpHeaders lower-cases them)
HttpHeaders headersOf(const QStringList &pairs)
{
    HttpHeaders headers;
    for (qsizetype i = 0; i + 1 < pairs.size(); i += 2)
        headers.set(pairs[i], pairs[i + 1]);
    return headers;
}

constexpr qint64 kT = Q_INT64_C(1771454650000);          // 2026-02-18T22:44:10Z
constexpr qint64 kFabricDate = Q_INT64_C(1756833660000); // Tue, 02 Sep 2025 17:21:00 GMT

// ---- a deliberately small reader for the vcrpy cassettes (YAML subset they use) ----------

struct CassetteResponse
{
    int status = 0;
    QList<QPair<QString, QString>> headers; // as written in the file
    QString body;
    QString uri;
    [[nodiscard]] QString header(const QString &name) const
    {
        for (const auto &h : headers) {
            if (h.first.compare(name, Qt::CaseInsensitive) == 0)
                return h.second;
        }
        return {};
    }
};

QString unquoteYamlScalar(QString text)
{
    text = text.trimmed();
    if (text.startsWith(u'\'') && text.endsWith(u'\'') && text.size() >= 2)
        return text.mid(1, text.size() - 2).replace(u"''"_qs, u"'"_qs);
    return text;
}

QList<CassetteResponse> readCassette(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text))
        return {};
    const QStringList lines = QString::fromUtf8(file.readAll()).split(u'\n');
    QList<CassetteResponse> result;
    CassetteResponse current;
    bool inResponse = false;
    QString section;
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QString &line = lines[i];
        if (line.startsWith(u"- request:"_qs)) {
            if (inResponse)
                result.append(current);
            current = CassetteResponse();
            inResponse = false;
            section.clear();
            continue;
        }
        if (line.startsWith(u"    uri: "_qs))
            current.uri = line.mid(9).trimmed();
        if (line == u"  response:"_qs) {
            inResponse = true;
            continue;
        }
        if (!inResponse)
            continue;
        if (line.startsWith(u"    ") && !line.startsWith(u"     ")) {
            section = line.trimmed();
            if (section.startsWith(u"body:"_qs) || section == u"headers:"_qs ||
                section == u"status:"_qs)
                continue;
        }
        if (section == u"body:"_qs && line.startsWith(u"      string: "_qs)) {
            // A single-quoted flow scalar folded over several lines: continuation lines are
            // indented deeper and joined with one space.
            QString scalar = line.mid(14);
            while (i + 1 < lines.size() && lines[i + 1].startsWith(u"        ") &&
                   !(scalar.trimmed().endsWith(u'\'') && scalar.trimmed().size() > 1 &&
                     !scalar.trimmed().endsWith(u"''"_qs))) {
                scalar += u' ' + lines[++i].trimmed();
            }
            current.body = unquoteYamlScalar(scalar);
        } else if (section == u"headers:"_qs && line.startsWith(u"      ") &&
                   !line.startsWith(u"      -") && line.trimmed().endsWith(u':')) {
            const QString name = line.trimmed().chopped(1);
            if (i + 1 < lines.size() && lines[i + 1].startsWith(u"      - "_qs))
                current.headers.append({name, unquoteYamlScalar(lines[++i].mid(8))});
        } else if (section == u"status:"_qs && line.startsWith(u"      code: "_qs)) {
            current.status = line.mid(12).trimmed().toInt();
        }
    }
    if (inResponse)
        result.append(current);
    return result;
}

RequestEvent eventFromCassette(const CassetteResponse &response)
{
    RequestEvent event;
    event.status = response.status;
    event.url = response.uri;
    event.body = response.body;
    for (const auto &h : response.headers)
        event.headers.set(h.first, h.second);
    // "Tue, 02 Sep 2025 17:21:00 GMT"
    QDateTime date = QDateTime::fromString(response.header(u"Date"_qs).left(25),
                                           u"ddd, dd MMM yyyy hh:mm:ss"_qs);
    date.setTimeSpec(Qt::UTC);
    event.tsMs = date.isValid() ? date.toMSecsSinceEpoch() : 0;
    return event;
}

// Independent oracle for Fabric's "until: M/d/yyyy h:mm:ss AP (UTC)" using QDateTime.
std::optional<qint64> oracleBlockedUntil(const QString &message)
{
    const qsizetype at = message.indexOf(u"until:"_qs);
    if (at < 0)
        return std::nullopt;
    QString rest = message.mid(at + 6).trimmed();
    rest = rest.left(rest.indexOf(u" (UTC)"_qs));
    QDateTime dt = QDateTime::fromString(rest, u"M/d/yyyy h:mm:ss AP"_qs);
    if (!dt.isValid())
        return std::nullopt;
    dt.setTimeSpec(Qt::UTC);
    return dt.toMSecsSinceEpoch();
}

// ---- a small reader for the Graph docs' .http samples -------------------------------------

struct HttpMessage
{
    int status = 0;
    QList<QPair<QString, QString>> headers;
    QByteArray body;
};

HttpMessage readHttpMessage(const QString &path)
{
    HttpMessage message;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return message;
    const QByteArray all = file.readAll();
    qsizetype headerEnd = all.indexOf("\r\n\r\n");
    qsizetype bodyStart = headerEnd + 4;
    if (headerEnd < 0) {
        headerEnd = all.indexOf("\n\n");
        bodyStart = headerEnd + 2;
    }
    const QList<QByteArray> headLines = all.left(headerEnd).split('\n');
    const QList<QByteArray> statusLine = headLines.value(0).trimmed().split(' ');
    message.status = statusLine.value(1).toInt();
    for (qsizetype i = 1; i < headLines.size(); ++i) {
        const QByteArray line = headLines[i].trimmed();
        const qsizetype colon = line.indexOf(':');
        if (colon > 0)
            message.headers.append({QString::fromLatin1(line.left(colon)),
                                    QString::fromLatin1(line.mid(colon + 1).trimmed())});
    }
    message.body = all.mid(bodyStart);
    return message;
}

} // namespace

class TestThrottleSignals : public QObject
{
    Q_OBJECT
private slots:
    // ---- Retry-After --------------------------------------------------------------------
    void retryAfter_data()
    {
        QTest::addColumn<QString>("value");
        QTest::addColumn<qint64>("responseMs");
        QTest::addColumn<qint64>("expected"); // kAbsent = rejected

        const qint64 date = Q_INT64_C(1445412480000); // Wed, 21 Oct 2015 07:28:00 GMT
        QTest::newRow("delta") << u"55"_qs << kT << Q_INT64_C(55000);
        QTest::newRow("delta-spaces") << u"  55\t"_qs << kT << Q_INT64_C(55000);
        QTest::newRow("zero") << u"0"_qs << kT << Q_INT64_C(0);
        QTest::newRow("leading-zeros") << u"007"_qs << kT << Q_INT64_C(7000);
        QTest::newRow("graph-decimal") << u"2.128"_qs << kT << Q_INT64_C(2128);
        QTest::newRow("decimal-rounds-up") << u"0.0001"_qs << kT << Q_INT64_C(1);
        QTest::newRow("decimal-exact-no-float-error") << u"0.3"_qs << kT << Q_INT64_C(300);
        QTest::newRow("leading-dot") << u".5"_qs << kT << Q_INT64_C(500);
        QTest::newRow("trailing-dot") << u"5."_qs << kT << Q_INT64_C(5000);
        QTest::newRow("one-year-ok") << u"31622400"_qs << kT << Q_INT64_C(31622400000);
        QTest::newRow("beyond-a-year") << u"31622401"_qs << kT << kAbsent;
        QTest::newRow("huge") << u"99999999999999999999999"_qs << kT << kAbsent;
        QTest::newRow("negative") << u"-1"_qs << kT << kAbsent;
        QTest::newRow("plus-sign") << u"+5"_qs << kT << kAbsent;
        QTest::newRow("exponent") << u"1e3"_qs << kT << kAbsent;
        QTest::newRow("unit-suffix") << u"120s"_qs << kT << kAbsent;
        QTest::newRow("merged-duplicates") << u"55, 55"_qs << kT << Q_INT64_C(55000);
        QTest::newRow("merged-different-takes-longest") << u"5,30"_qs << kT << Q_INT64_C(30000);
        QTest::newRow("merged-with-garbage") << u"5, soon"_qs << kT << kAbsent;
        QTest::newRow("merged-empty-member") << u"5,"_qs << kT << kAbsent;
        QTest::newRow("two-numbers") << u"5 5"_qs << kT << kAbsent;
        QTest::newRow("just-dot") << u"."_qs << kT << kAbsent;
        QTest::newRow("empty") << QString() << kT << kAbsent;
        QTest::newRow("blank") << u"   "_qs << kT << kAbsent;
        QTest::newRow("garbage") << u"soon"_qs << kT << kAbsent;
        QTest::newRow("fullwidth-digits") << u"\uff15\uff15"_qs << kT << kAbsent;
        QTest::newRow("arabic-indic-digits") << u"\u0665\u0665"_qs << kT << kAbsent;
        QTest::newRow("nan") << u"NaN"_qs << kT << kAbsent;

        QTest::newRow("imf-fixdate")
            << u"Wed, 21 Oct 2015 07:28:00 GMT"_qs << date - 30000 << Q_INT64_C(30000);
        QTest::newRow("imf-lowercase")
            << u"wed, 21 oct 2015 07:28:00 gmt"_qs << date - 30000 << Q_INT64_C(30000);
        QTest::newRow("imf-utc-zone")
            << u"Wed, 21 Oct 2015 07:28:00 UTC"_qs << date - 1000 << Q_INT64_C(1000);
        QTest::newRow("imf-no-zone")
            << u"Wed, 21 Oct 2015 07:28:00"_qs << date - 1000 << Q_INT64_C(1000);
        QTest::newRow("imf-one-digit-day") << u"Wed, 1 Oct 2015 07:28:00 GMT"_qs
                                           << date - 20 * Q_INT64_C(86400000) << Q_INT64_C(0);
        QTest::newRow("rfc850") << u"Wednesday, 21-Oct-15 07:28:00 GMT"_qs << date - 5000
                                << Q_INT64_C(5000);
        QTest::newRow("rfc850-four-digit-year")
            << u"Wednesday, 21-Oct-2015 07:28:00 GMT"_qs << date - 5000 << Q_INT64_C(5000);
        QTest::newRow("asctime") << u"Wed Oct 21 07:28:00 2015"_qs << date - 60000
                                 << Q_INT64_C(60000);
        QTest::newRow("asctime-padded-day")
            << u"Sun Nov  6 08:49:37 1994"_qs << Q_INT64_C(784111777000) - 2000 << Q_INT64_C(2000);
        QTest::newRow("date-in-past-is-zero")
            << u"Wed, 21 Oct 2015 07:28:00 GMT"_qs << date + 99000 << Q_INT64_C(0);
        QTest::newRow("date-far-future") << u"Fri, 31 Dec 9999 23:59:59 GMT"_qs << kT << kAbsent;
        QTest::newRow("bad-day") << u"Wed, 32 Oct 2015 07:28:00 GMT"_qs << date << kAbsent;
        QTest::newRow("feb-29-non-leap") << u"Sun, 29 Feb 2015 07:28:00 GMT"_qs << date << kAbsent;
        QTest::newRow("bad-hour") << u"Wed, 21 Oct 2015 25:28:00 GMT"_qs << date << kAbsent;
        QTest::newRow("bad-month") << u"Wed, 21 Foo 2015 07:28:00 GMT"_qs << date << kAbsent;
        QTest::newRow("month-prefix-not-enough")
            << u"Wed, 21 Octopus 2015 07:28:00 GMT"_qs << date << kAbsent;
        QTest::newRow("foreign-zone") << u"Wed, 21 Oct 2015 07:28:00 PST"_qs << date << kAbsent;
        QTest::newRow("offset-zone") << u"Wed, 21 Oct 2015 07:28:00 +0200"_qs << date << kAbsent;
        QTest::newRow("truncated-date") << u"Wed, 21 Oct 2015 07:2"_qs << date << kAbsent;
        QTest::newRow("iso-date-is-not-http-date") << u"2015-10-21T07:28:00Z"_qs << date << kAbsent;
    }
    void retryAfter()
    {
        QFETCH(QString, value);
        QFETCH(qint64, responseMs);
        QFETCH(qint64, expected);
        QCOMPARE(orAbsent(parseRetryAfterDelayMs(value, responseMs)), expected);
    }

    void retryAfterMs_data()
    {
        QTest::addColumn<QString>("value");
        QTest::addColumn<qint64>("expected");
        QTest::newRow("integer") << u"1500"_qs << Q_INT64_C(1500);
        QTest::newRow("decimal-rounds-up") << u"1500.2"_qs << Q_INT64_C(1501);
        QTest::newRow("decimal-zero-fraction") << u"1500.000"_qs << Q_INT64_C(1500);
        QTest::newRow("spaces") << u" 20 "_qs << Q_INT64_C(20);
        QTest::newRow("zero") << u"0"_qs << Q_INT64_C(0);
        QTest::newRow("negative") << u"-5"_qs << kAbsent;
        QTest::newRow("garbage") << u"abc"_qs << kAbsent;
        QTest::newRow("empty") << QString() << kAbsent;
        QTest::newRow("huge") << u"123456789012345678"_qs << kAbsent;
        QTest::newRow("http-date-not-allowed") << u"Wed, 21 Oct 2015 07:28:00 GMT"_qs << kAbsent;
    }
    void retryAfterMs()
    {
        QFETCH(QString, value);
        QFETCH(qint64, expected);
        QCOMPARE(orAbsent(parseRetryAfterMsHeader(value)), expected);
    }

    void blockedUntil_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("expected");
        const QString prefix = u"Request is blocked by the upstream service until: "_qs;
        QTest::newRow("fabric-pm")
            << prefix + u"9/2/2025 5:21:55 PM (UTC)"_qs << Q_INT64_C(1756833715000);
        QTest::newRow("spec-example")
            << prefix + u"2/18/2026 10:45:04 PM (UTC)"_qs << Q_INT64_C(1771454704000);
        QTest::newRow("midnight-12am")
            << prefix + u"9/2/2025 12:30:00 AM (UTC)"_qs << Q_INT64_C(1756773000000);
        QTest::newRow("noon-12pm")
            << prefix + u"9/2/2025 12:30:00 PM (UTC)"_qs << Q_INT64_C(1756816200000);
        QTest::newRow("lowercase-pm")
            << prefix + u"9/2/2025 5:21:55 pm (utc)"_qs << Q_INT64_C(1756833715000);
        QTest::newRow("zero-padded")
            << prefix + u"09/02/2025 05:21:55 PM (UTC)"_qs << Q_INT64_C(1756833715000);
        QTest::newRow("24-hour-clock")
            << prefix + u"9/2/2025 17:21:55 (UTC)"_qs << Q_INT64_C(1756833715000);
        QTest::newRow("no-zone-means-utc")
            << prefix + u"9/2/2025 5:21:55 PM"_qs << Q_INT64_C(1756833715000);
        QTest::newRow("leap-day") << prefix + u"2/29/2024 11:59:59 PM (UTC)"_qs
                                  << Q_INT64_C(1709251199000);
        QTest::newRow("in-json-body")
            << u"{\"requestId\": \"44f7\", \"errorCode\": \"RequestBlocked\", \"message\": \""_qs +
                   prefix + u"9/2/2025 5:21:55 PM (UTC)\"}"_qs
            << Q_INT64_C(1756833715000);
        QTest::newRow("extra-spaces")
            << u"blocked until:   9/2/2025  5:21:55   PM  (UTC)"_qs << Q_INT64_C(1756833715000);
        QTest::newRow("first-until-is-prose")
            << u"Wait until later. Request is blocked by the upstream service until: 9/2/2025 5:21:55 PM (UTC)"_qs
            << Q_INT64_C(1756833715000);
        QTest::newRow("other-zone") << prefix + u"9/2/2025 5:21:55 PM (PST)"_qs << kAbsent;
        QTest::newRow("13-pm") << prefix + u"9/2/2025 13:21:55 PM (UTC)"_qs << kAbsent;
        QTest::newRow("0-am") << prefix + u"9/2/2025 0:21:55 AM (UTC)"_qs << kAbsent;
        QTest::newRow("bad-month") << prefix + u"13/2/2025 5:21:55 PM (UTC)"_qs << kAbsent;
        QTest::newRow("bad-day") << prefix + u"2/30/2025 5:21:55 PM (UTC)"_qs << kAbsent;
        QTest::newRow("two-digit-year") << prefix + u"9/2/25 5:21:55 PM (UTC)"_qs << kAbsent;
        QTest::newRow("truncated") << prefix + u"9/2/2025 5:2"_qs << kAbsent;
        QTest::newRow("truncated-before-pm") << prefix + u"9/2/2025 5:21:55"_qs << kAbsent;
        QTest::newRow("truncated-before-pm-space") << prefix + u"9/2/2025 5:21:55 "_qs << kAbsent;
        QTest::newRow("truncated-in-zone")
            << prefix + u"9/2/2025 5:21:55 PM (UT"_qs << Q_INT64_C(1756833715000);
        QTest::newRow("truncated-in-other-zone")
            << prefix + u"9/2/2025 5:21:55 PM (PS"_qs << kAbsent;
        QTest::newRow("truncated-24h-unambiguous")
            << prefix + u"9/2/2025 17:21:55"_qs << Q_INT64_C(1756833715000);
        QTest::newRow("no-until") << u"Request is blocked by the upstream service"_qs << kAbsent;
        QTest::newRow("empty") << QString() << kAbsent;
    }
    void blockedUntil()
    {
        QFETCH(QString, text);
        QFETCH(qint64, expected);
        QCOMPARE(orAbsent(parseBlockedUntilMs(text)), expected);
    }

    void pleaseWait_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("expected");
        QTest::newRow("service-bus")
            << u"The request was terminated because the entity is being throttled. Error code: 50009. Please wait 2 seconds and try again."_qs
            << Q_INT64_C(2000);
        QTest::newRow("singular") << u"Please wait 1 second and try again."_qs << Q_INT64_C(1000);
        QTest::newRow("case") << u"PLEASE WAIT 10 SECONDS"_qs << Q_INT64_C(10000);
        QTest::newRow("decimal") << u"Please wait 1.5 seconds"_qs << Q_INT64_C(1500);
        QTest::newRow("milliseconds") << u"Please wait 500 milliseconds"_qs << Q_INT64_C(500);
        QTest::newRow("minutes") << u"Please wait 2 minutes"_qs << Q_INT64_C(120000);
        QTest::newRow("sec-abbrev") << u"please wait 3 sec."_qs << Q_INT64_C(3000);
        QTest::newRow("second-mention-wins-if-first-is-prose")
            << u"Wait for it. Please wait 4 seconds."_qs << Q_INT64_C(4000);
        QTest::newRow("no-number") << u"Please wait a moment and try again."_qs << kAbsent;
        QTest::newRow("negative") << u"Please wait -2 seconds"_qs << kAbsent;
        QTest::newRow("await-is-not-wait") << u"await 5 seconds"_qs << kAbsent;
        QTest::newRow("no-unit") << u"Please wait 5 and try again"_qs << kAbsent;
        QTest::newRow("unknown-unit") << u"Please wait 5 fortnights"_qs << kAbsent;
        QTest::newRow("huge") << u"Please wait 99999999999999 seconds"_qs << kAbsent;
        QTest::newRow("empty") << QString() << kAbsent;
    }
    void pleaseWait()
    {
        QFETCH(QString, text);
        QFETCH(qint64, expected);
        QCOMPARE(orAbsent(parsePleaseWaitDelayMs(text)), expected);
    }

    // ---- error codes --------------------------------------------------------------------
    void errorCodes_data()
    {
        QTest::addColumn<QString>("body");
        QTest::addColumn<QString>("primary");
        QTest::addColumn<QStringList>("inner");

        QTest::newRow("fabric")
            << u"{\"requestId\": \"44f7c278\", \"errorCode\": \"RequestBlocked\", \"message\": \"Request is blocked by the upstream service until: 9/2/2025 5:21:55 PM (UTC)\"}"_qs
            << u"RequestBlocked"_qs << QStringList();
        QTest::newRow("fabric-capacity")
            << u"{\"errorCode\":\"CapacityLimitExceeded\",\"message\":\"Capacity overloaded\",\"isRetriable\":false}"_qs
            << u"CapacityLimitExceeded"_qs << QStringList();
        QTest::newRow("fabric-more-details")
            << u"{\"errorCode\":\"RequestBlocked\",\"moreDetails\":[{\"errorCode\":\"QuotaExceeded\",\"message\":\"m\"},{\"errorCode\":\"Other\"}]}"_qs
            << u"RequestBlocked"_qs << QStringList{u"QuotaExceeded"_qs, u"Other"_qs};
        QTest::newRow("fabric-truncated-after-code")
            << u"{\"requestId\": \"44f7c278\", \"errorCode\": \"RequestBlocked\", \"message\": \"Request is blo"_qs
            << u"RequestBlocked"_qs << QStringList();
        QTest::newRow("fabric-truncated-inside-code")
            << u"{\"requestId\": \"44f7c278\", \"errorCode\": \"RequestBl"_qs << QString()
            << QStringList();
        QTest::newRow("graph-429")
            << u"{\"error\":{\"code\":\"TooManyRequests\",\"innerError\":{\"code\":\"429\",\"message\":\"Please retry after\"},\"message\":\"Please retry again later.\"}}"_qs
            << u"TooManyRequests"_qs << QStringList{u"429"_qs};
        QTest::newRow("graph-onenote-inner")
            << u"{\"error\":{\"code\":\"TooManyRequests\",\"innerError\":{\"code\":\"20166\"}}}"_qs
            << u"20166"_qs << QStringList{u"20166"_qs};
        QTest::newRow("graph-innererror-lowercase-nested")
            << u"{\"error\":{\"code\":\"TooManyRequests\",\"innererror\":{\"code\":\"429\",\"innerError\":{\"code\":\"20166\"}}}}"_qs
            << u"20166"_qs << QStringList{u"429"_qs, u"20166"_qs};
        QTest::newRow("onenote-code-in-message")
            << u"{\"error\":{\"code\":\"TooManyRequests\",\"message\":\"The request has been throttled (20166). Retry later.\"}}"_qs
            << u"20166"_qs << QStringList{u"20166"_qs};
        QTest::newRow("onenote-direct")
            << u"{\"error\":{\"code\":\"20166\",\"message\":\"The request has been throttled.\",\"@api.url\":\"https://aka.ms/onenote-errors#C20166\"}}"_qs
            << u"20166"_qs << QStringList();
        QTest::newRow("onenote-numeric-code")
            << u"{\"error\":{\"code\":20166}}"_qs << u"20166"_qs << QStringList();
        QTest::newRow("sharepoint-graph")
            << u"{\"error\":{\"code\":\"activityLimitReached\",\"message\":\"The request has been throttled\",\"innerError\":{\"code\":\"throttledRequest\"}}}"_qs
            << u"activityLimitReached"_qs << QStringList{u"throttledRequest"_qs};
        QTest::newRow("sharepoint-details")
            << u"{\"error\":{\"code\":\"TooManyRequests\",\"details\":[{\"code\":\"activityLimitReached\"}]}}"_qs
            << u"activityLimitReached"_qs << QStringList{u"activityLimitReached"_qs};
        QTest::newRow("odata-error")
            << u"{\"odata.error\":{\"code\":\"-2147024860, Microsoft.SharePoint.SPQueryThrottledException\",\"message\":{\"lang\":\"en-US\",\"value\":\"x\"}}}"_qs
            << u"-2147024860, Microsoft.SharePoint.SPQueryThrottledException"_qs << QStringList();
        QTest::newRow("service-bus-text")
            << u"The request was terminated because the entity is being throttled. Error code: 50009. Please wait 2 seconds and try again."_qs
            << u"50009"_qs << QStringList();
        QTest::newRow("service-bus-spaced-colon")
            << u"The request was terminated because the entity is being throttled. Error code : 50009. Please wait 2 seconds and try again."_qs
            << u"50009"_qs << QStringList();
        QTest::newRow("service-bus-subcode")
            << u"Server busy. SubCode=50001. Reference:1234"_qs << u"50001"_qs << QStringList();
        QTest::newRow("service-bus-amqp")
            << u"com.microsoft:server-busy: The request was terminated because the namespace is being throttled. Error code : 50009."_qs
            << u"50009"_qs << QStringList{u"ServerBusy"_qs, u"com.microsoft:server-busy"_qs};
        QTest::newRow("service-bus-amqp-alone")
            << u"com.microsoft:server-busy"_qs << u"ServerBusy"_qs
            << QStringList{u"com.microsoft:server-busy"_qs};
        QTest::newRow("server-busy-word")
            << u"ServerBusy: too many requests"_qs << u"ServerBusy"_qs << QStringList();
        QTest::newRow("server-busy-json")
            << u"{\"error\":{\"code\":\"ServerBusy\",\"message\":\"ServerBusy\"}}"_qs
            << u"ServerBusy"_qs << QStringList();
        QTest::newRow("invalid-json-unquoted")
            << u"{errorCode: RequestBlocked}"_qs << u"RequestBlocked"_qs << QStringList();
        QTest::newRow("oauth-error")
            << u"{\"error\":\"temporarily_unavailable\",\"error_description\":\"AADSTS50196\"}"_qs
            << u"temporarily_unavailable"_qs << QStringList();
        QTest::newRow("top-level-code")
            << u"{\"code\":\"TooManyRequests\",\"message\":\"Rate limit is exceeded.\"}"_qs
            << u"TooManyRequests"_qs << QStringList();
        QTest::newRow("empty-graph-code")
            << u"{\"error\":{\"code\":\"\",\"message\":\"You do not have the required permissions\"}}"_qs
            << QString() << QStringList();
        QTest::newRow("unicode-escape") << u"{\"errorCode\":\"R\\u00e9quest\\\"Blocked\"}"_qs
                                        << u"R\u00e9quest\"Blocked"_qs << QStringList();
        QTest::newRow("unicode-around")
            << u"\u26a0 {\"errorCode\":\"RequestBlocked\",\"message\":\"\u00fcber \u65e5\u672c\"}"_qs
            << u"RequestBlocked"_qs << QStringList();
        QTest::newRow("pretty-printed")
            << u"{\n  \"error\": {\n    \"code\": \"TooManyRequests\",\n    \"innerError\": {\n      \"code\": \"429\"\n    }\n  }\n}"_qs
            << u"TooManyRequests"_qs << QStringList{u"429"_qs};
        QTest::newRow("code-key-elsewhere-ignored")
            << u"{\"value\":[{\"code\":\"NotAnError\"}],\"errorCode\":\"RequestBlocked\"}"_qs
            << u"RequestBlocked"_qs << QStringList();
        QTest::newRow("deep-nesting-survives")
            << QString(u"{\"a\":"_qs.repeated(200) + u"1"_qs + u"}"_qs.repeated(200)) << QString()
            << QStringList();
        QTest::newRow("html") << u"<html><body>429 Too Many Requests</body></html>"_qs << QString()
                              << QStringList();
        QTest::newRow("plain-prose")
            << u"Too many requests, slow down"_qs << QString() << QStringList();
        QTest::newRow("20166-inside-number-is-not-code")
            << u"{\"error\":{\"code\":\"TooManyRequests\",\"message\":\"id 1201667\"}}"_qs
            << u"TooManyRequests"_qs << QStringList();
        QTest::newRow("empty") << QString() << QString() << QStringList();
    }
    void errorCodes()
    {
        QFETCH(QString, body);
        QFETCH(QString, primary);
        QFETCH(QStringList, inner);
        const ErrorCodes codes = errorCodesFromBody(body);
        QCOMPARE(codes.primary, primary);
        QCOMPARE(codes.inner, inner);
    }

    void errorCodeOf_data()
    {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("header");
        QTest::addColumn<QString>("body");
        QTest::addColumn<QString>("expected");
        const QString fabricBody = u"{\"errorCode\":\"CapacityLimitExceeded\"}"_qs;
        const QString oneNoteBody =
            u"{\"error\":{\"code\":\"TooManyRequests\",\"innerError\":{\"code\":\"20166\"}}}"_qs;
        const QString graphBody =
            u"{\"error\":{\"code\":\"TooManyRequests\",\"innerError\":{\"code\":\"429\"}}}"_qs;
        QTest::newRow("field-wins")
            << u"RequestBlocked"_qs << u"Other"_qs << fabricBody << u"RequestBlocked"_qs;
        QTest::newRow("header-next")
            << QString() << u"RequestBlocked"_qs << fabricBody << u"RequestBlocked"_qs;
        QTest::newRow("body-last")
            << QString() << QString() << fabricBody << u"CapacityLimitExceeded"_qs;
        QTest::newRow("generic-field-yields-to-specific-body")
            << u"TooManyRequests"_qs << QString() << oneNoteBody << u"20166"_qs;
        QTest::newRow("generic-field-kept-when-body-generic")
            << u"TooManyRequests"_qs << QString() << graphBody << u"TooManyRequests"_qs;
        QTest::newRow("generic-body-when-nothing-else")
            << QString() << QString() << graphBody << u"TooManyRequests"_qs;
        QTest::newRow("service-bus-field")
            << u"50009"_qs << QString() << u"ServerBusy"_qs << u"50009"_qs;
        QTest::newRow("nothing") << QString() << QString() << QString() << QString();
    }
    void errorCodeOf()
    {
        QFETCH(QString, field);
        QFETCH(QString, header);
        QFETCH(QString, body);
        QFETCH(QString, expected);
        RequestEvent event;
        event.status = 429;
        event.errorCode = field;
        if (!header.isEmpty())
            event.headers.set(u"X-MS-Public-API-Error-Code"_qs, header);
        event.body = body;
        QCOMPARE(ts::throttle::errorCodeOf(event), expected);
    }

    // ---- Graph headers ------------------------------------------------------------------
    void throttleScope_data()
    {
        QTest::addColumn<QString>("value");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<QString>("scope");
        QTest::addColumn<QString>("limit");
        QTest::addColumn<QString>("appId");
        QTest::addColumn<QString>("id");
        QTest::addColumn<bool>("appWide");
        const QString app = u"9e5c9e5a-1d4b-4a1b-9e3b-5a7c2e1f0d3c"_qs;
        const QString tid = u"72f988bf-86f1-41af-91ab-2d7cd011db47"_qs;
        QTest::newRow("tenant-application")
            << u"Tenant_Application/ReadWrite/"_qs + app + u'/' + tid << true
            << u"Tenant_Application"_qs << u"ReadWrite"_qs << app << tid << true;
        QTest::newRow("application-read") << u"Application/Read/"_qs + app + u'/' + tid << true
                                          << u"Application"_qs << u"Read"_qs << app << tid << true;
        QTest::newRow("tenant-write") << u"Tenant/Write/"_qs + app + u'/' + tid << true
                                      << u"Tenant"_qs << u"Write"_qs << app << tid << true;
        QTest::newRow("short-user")
            << u"User"_qs << true << u"User"_qs << QString() << QString() << QString() << false;
        QTest::newRow("short-application") << u"Application"_qs << true << u"Application"_qs
                                           << QString() << QString() << QString() << true;
        QTest::newRow("case-and-spaces")
            << u"  tenant_application / readwrite / a / b  "_qs << true << u"Tenant_Application"_qs
            << u"ReadWrite"_qs << u"a"_qs << u"b"_qs << true;
        QTest::newRow("user-lowercase")
            << u"user"_qs << true << u"User"_qs << QString() << QString() << QString() << false;
        QTest::newRow("partial") << u"Application/Read"_qs << true << u"Application"_qs
                                 << u"Read"_qs << QString() << QString() << true;
        QTest::newRow("unknown-kept") << u"Weird/Foo"_qs << true << u"Weird"_qs << u"Foo"_qs
                                      << QString() << QString() << false;
        QTest::newRow("empty") << QString() << false << QString() << QString() << QString()
                               << QString() << false;
        QTest::newRow("blank") << u"  "_qs << false << QString() << QString() << QString()
                               << QString() << false;
        QTest::newRow("empty-scope") << u"/Read/a/b"_qs << false << QString() << QString()
                                     << QString() << QString() << false;
    }
    void throttleScope()
    {
        QFETCH(QString, value);
        QFETCH(bool, valid);
        const auto parsed = parseThrottleScope(value);
        QCOMPARE(parsed.has_value(), valid);
        if (!valid)
            return;
        QTEST(parsed->scope, "scope");
        QTEST(parsed->limit, "limit");
        QTEST(parsed->appId, "appId");
        QTEST(parsed->id, "id");
        QTEST(parsed->isApplicationWide(), "appWide");
    }

    void limitPercentage_data()
    {
        QTest::addColumn<QString>("value");
        QTest::addColumn<double>("expected");
        QTest::newRow("fraction") << u"0.85"_qs << 0.85;
        QTest::newRow("graph-above-one") << u"1.2"_qs << 1.2;
        QTest::newRow("percent") << u"85"_qs << 0.85;
        QTest::newRow("percent-sign") << u"85%"_qs << 0.85;
        QTest::newRow("percent-sign-spaced") << u" 85 % "_qs << 0.85;
        QTest::newRow("fraction-with-percent-sign") << u"0.5%"_qs << 0.005;
        QTest::newRow("two-is-fraction") << u"2"_qs << 2.0;
        QTest::newRow("150-is-percent") << u"150"_qs << 1.5;
        QTest::newRow("zero") << u"0"_qs << 0.0;
        QTest::newRow("negative") << u"-0.5"_qs << kNoDouble;
        QTest::newRow("garbage") << u"high"_qs << kNoDouble;
        QTest::newRow("empty") << QString() << kNoDouble;
        QTest::newRow("only-percent") << u"%"_qs << kNoDouble;
        QTest::newRow("exponent") << u"8e-1"_qs << kNoDouble;
    }
    void limitPercentage()
    {
        QFETCH(QString, value);
        QFETCH(double, expected);
        const double got = orNoDouble(parseLimitPercentage(value));
        QVERIFY2(std::abs(got - expected) < 1e-9, qPrintable(QString::number(got)));
    }

    // ---- generic rate-limit headers -----------------------------------------------------
    void rateLimit_data()
    {
        QTest::addColumn<QStringList>("headers");
        QTest::addColumn<double>("limit");
        QTest::addColumn<double>("remaining");
        QTest::addColumn<qint64>("resetAtMs");
        QTest::addColumn<double>("window");
        QTest::addColumn<QString>("policy");

        QTest::newRow("ietf-structured")
            << QStringList{u"RateLimit"_qs, u"\"default\";r=50;t=30"_qs, u"RateLimit-Policy"_qs,
                           u"\"default\";q=100;w=60"_qs}
            << 100.0 << 50.0 << kT + 30000 << 60.0 << u"default"_qs;
        QTest::newRow("ietf-most-restrictive-policy")
            << QStringList{u"RateLimit"_qs, u"\"day\";r=500;t=3600, \"burst\";r=5;t=1"_qs,
                           u"RateLimit-Policy"_qs, u"\"day\";q=1000;w=86400, \"burst\";q=10;w=1"_qs}
            << 10.0 << 5.0 << kT + 1000 << 1.0 << u"burst"_qs;
        QTest::newRow("ietf-policy-only")
            << QStringList{u"RateLimit-Policy"_qs, u"\"default\";q=100;w=60"_qs} << 100.0
            << kNoDouble << kAbsent << 60.0 << u"default"_qs;
        QTest::newRow("ietf-no-reset") << QStringList{u"RateLimit"_qs, u"\"default\";r=0"_qs}
                                       << kNoDouble << 0.0 << kAbsent << kNoDouble << u"default"_qs;
        QTest::newRow("draft-dictionary")
            << QStringList{u"RateLimit"_qs, u"limit=100, remaining=0, reset=30"_qs} << 100.0 << 0.0
            << kT + 30000 << kNoDouble << QString();
        QTest::newRow("draft-policy-bare-quota")
            << QStringList{u"RateLimit-Policy"_qs,    u"100;w=60"_qs,
                           u"RateLimit-Remaining"_qs, u"10"_qs,
                           u"RateLimit-Reset"_qs,     u"5"_qs}
            << 100.0 << 10.0 << kT + 5000 << 60.0 << QString();
        QTest::newRow("ratelimit-triplet")
            << QStringList{u"RateLimit-Limit"_qs,     u"100, 100;w=60"_qs,
                           u"RateLimit-Remaining"_qs, u"99"_qs,
                           u"RateLimit-Reset"_qs,     u"59"_qs}
            << 100.0 << 99.0 << kT + 59000 << 60.0 << QString();
        QTest::newRow("ratelimit-limit-window-draft-01")
            << QStringList{u"RateLimit-Limit"_qs, u"10, 10;window=1, 50;window=60"_qs} << 10.0
            << kNoDouble << kAbsent << 1.0 << QString();
        QTest::newRow("policy-window-draft-01")
            << QStringList{u"RateLimit-Policy"_qs, u"50;window=60"_qs} << 50.0 << kNoDouble
            << kAbsent << 60.0 << QString();
        QTest::newRow("x-ratelimit-epoch-seconds")
            << QStringList{u"X-RateLimit-Limit"_qs,     u"5000"_qs,
                           u"X-RateLimit-Remaining"_qs, u"0"_qs,
                           u"X-RateLimit-Reset"_qs,     u"1771454700"_qs}
            << 5000.0 << 0.0 << Q_INT64_C(1771454700000) << kNoDouble << QString();
        QTest::newRow("x-ratelimit-epoch-ms")
            << QStringList{u"x-ratelimit-reset"_qs, u"1771454700123"_qs} << kNoDouble << kNoDouble
            << Q_INT64_C(1771454700123) << kNoDouble << QString();
        QTest::newRow("x-ratelimit-delta")
            << QStringList{u"x-ratelimit-reset"_qs, u"30"_qs} << kNoDouble << kNoDouble
            << kT + 30000 << kNoDouble << QString();
        QTest::newRow("x-ratelimit-reset-after-decimal")
            << QStringList{u"X-RateLimit-Reset-After"_qs, u"1.5"_qs} << kNoDouble << kNoDouble
            << kT + 1500 << kNoDouble << QString();
        QTest::newRow("x-rate-limit-twitter") << QStringList{u"x-rate-limit-limit"_qs, u"15"_qs,
                                                             u"x-rate-limit-remaining"_qs, u"3"_qs}
                                              << 15.0 << 3.0 << kAbsent << kNoDouble << QString();
        QTest::newRow("ietf-beats-legacy")
            << QStringList{u"X-RateLimit-Remaining"_qs, u"7"_qs, u"RateLimit"_qs,
                           u"\"default\";r=50;t=30"_qs}
            << kNoDouble << 50.0 << kT + 30000 << kNoDouble << u"default"_qs;
        QTest::newRow("garbage")
            << QStringList{u"RateLimit"_qs, u"nonsense;;;=="_qs,     u"X-RateLimit-Remaining"_qs,
                           u"lots"_qs,      u"X-RateLimit-Reset"_qs, u"-5"_qs}
            << kNoDouble << kNoDouble << kAbsent << kNoDouble << QString();
        QTest::newRow("unterminated-quote")
            << QStringList{u"RateLimit"_qs, u"\"default;r=1"_qs} << kNoDouble << kNoDouble
            << kAbsent << kNoDouble << QString();
        QTest::newRow("none") << QStringList{u"Content-Type"_qs, u"application/json"_qs}
                              << kNoDouble << kNoDouble << kAbsent << kNoDouble << QString();
    }
    void rateLimit()
    {
        QFETCH(QStringList, headers);
        const RateLimitInfo info = parseRateLimit(headersOf(headers), kT);
        QTEST(orNoDouble(info.limit), "limit");
        QTEST(orNoDouble(info.remaining), "remaining");
        QTEST(orAbsent(info.resetAtMs), "resetAtMs");
        QTEST(orNoDouble(info.windowSeconds), "window");
        QTEST(info.policyName, "policy");
    }

    void armRemaining_data()
    {
        QTest::addColumn<QStringList>("headers");
        QTest::addColumn<QString>("expected"); // "name=count|name=count"
        QTest::newRow("reads-writes")
            << QStringList{u"x-ms-ratelimit-remaining-subscription-reads"_qs, u"11999"_qs,
                           u"x-ms-ratelimit-remaining-subscription-writes"_qs, u"1199"_qs}
            << u"subscription-reads=11999|subscription-writes=1199"_qs;
        QTest::newRow("global-reads-mixed-case")
            << QStringList{u"X-MS-RateLimit-Remaining-Subscription-Global-Reads"_qs, u" 249 "_qs}
            << u"subscription-global-reads=249"_qs;
        QTest::newRow("resource-list")
            << QStringList{u"x-ms-ratelimit-remaining-resource"_qs,
                           u"Microsoft.Compute/HighCostGet3Min;139,Microsoft.Compute/HighCostGet30Min;695"_qs}
            << u"Microsoft.Compute/HighCostGet3Min=139|Microsoft.Compute/HighCostGet30Min=695"_qs;
        QTest::newRow("resource-list-spaces-and-bad-entry")
            << QStringList{u"x-ms-ratelimit-remaining-resource"_qs,
                           u" Microsoft.Compute/GetVMScaleSet3Min;197 , broken, ;5, Microsoft.Compute/GetVMScaleSet30Min;x, Microsoft.Compute/X;0"_qs}
            << u"Microsoft.Compute/GetVMScaleSet3Min=197|Microsoft.Compute/X=0"_qs;
        QTest::newRow("garbage-skipped")
            << QStringList{u"x-ms-ratelimit-remaining-tenant-reads"_qs,
                           u"-1"_qs,
                           u"x-ms-ratelimit-remaining-tenant-writes"_qs,
                           u"many"_qs,
                           u"x-ms-ratelimit-remaining-"_qs,
                           u"5"_qs}
            << QString();
        QTest::newRow("other-headers-ignored")
            << QStringList{u"x-ms-request-id"_qs, u"1"_qs,
                           u"x-ms-ratelimit-remaining-tenant-deletes"_qs, u"0"_qs}
            << u"tenant-deletes=0"_qs;
    }
    void armRemaining()
    {
        QFETCH(QStringList, headers);
        QFETCH(QString, expected);
        QStringList got;
        for (const auto &entry : parseArmRemaining(headersOf(headers)))
            got.append(entry.name + u'=' + QString::number(entry.remaining));
        QCOMPARE(got.join(u'|'), expected);
    }

    // ---- classification -----------------------------------------------------------------
    void classify_data()
    {
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("errorCode");
        QTest::addColumn<QStringList>("headers");
        QTest::addColumn<QString>("body");
        QTest::addColumn<QString>("retryAfter");
        QTest::addColumn<bool>("throttled");
        QTest::addColumn<QString>("kind");
        QTest::addColumn<bool>("retryable");

        QTest::newRow("200") << 200 << QString() << QStringList() << QString() << QString() << false
                             << u"none"_qs << true;
        QTest::newRow("0-no-response") << 0 << QString() << QStringList() << QString() << QString()
                                       << false << u"none"_qs << true;
        QTest::newRow("404") << 404 << u"NotFound"_qs << QStringList() << QString() << QString()
                             << false << u"none"_qs << true;
        QTest::newRow("500-with-retry-after") << 500 << QString() << QStringList() << QString()
                                              << u"5"_qs << false << u"none"_qs << true;
        QTest::newRow("429-bare") << 429 << QString() << QStringList() << QString() << QString()
                                  << true << u"rate-limit"_qs << true;
        QTest::newRow("429-fabric") << 429 << u"RequestBlocked"_qs << QStringList() << QString()
                                    << u"55"_qs << true << u"rate-limit"_qs << true;
        QTest::newRow("429-capacity") << 429 << u"CapacityLimitExceeded"_qs << QStringList()
                                      << QString() << QString() << true << u"capacity"_qs << false;
        QTest::newRow("429-capacity-from-body")
            << 429 << QString() << QStringList() << u"{\"errorCode\":\"CapacityLimitExceeded\"}"_qs
            << QString() << true << u"capacity"_qs << false;
        QTest::newRow("430-spark") << 430 << QString() << QStringList() << QString() << QString()
                                   << true << u"capacity"_qs << false;
        QTest::newRow("430-spark-code")
            << 430 << u"TooManyRequestsForCapacity"_qs << QStringList() << QString() << QString()
            << true << u"capacity"_qs << false;
        QTest::newRow("429-service-bus")
            << 429 << u"50009"_qs << QStringList()
            << u"Error code: 50009. Please wait 2 seconds and try again."_qs << QString() << true
            << u"server-busy"_qs << true;
        QTest::newRow("503-plain") << 503 << QString() << QStringList() << u"Service Unavailable"_qs
                                   << QString() << false << u"none"_qs << true;
        QTest::newRow("503-retry-after-field") << 503 << QString() << QStringList() << QString()
                                               << u"10"_qs << true << u"server-busy"_qs << true;
        QTest::newRow("503-retry-after-header")
            << 503 << QString() << QStringList{u"Retry-After"_qs, u"10"_qs} << QString()
            << QString() << true << u"server-busy"_qs << true;
        QTest::newRow("503-retry-after-ms-header")
            << 503 << QString() << QStringList{u"x-ms-retry-after-ms"_qs, u"100"_qs} << QString()
            << QString() << true << u"server-busy"_qs << true;
        QTest::newRow("503-service-bus-text")
            << 503 << QString() << QStringList()
            << u"The request was terminated because the entity is being throttled. Error code: 50009."_qs
            << QString() << true << u"server-busy"_qs << true;
        QTest::newRow("503-serverbusy-code")
            << 503 << u"ServerBusy"_qs << QStringList() << QString() << QString() << true
            << u"server-busy"_qs << true;
        QTest::newRow("503-storage-xml")
            << 503 << QString() << QStringList()
            << u"<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>ServerBusy</Code><Message>Egress is over the account limit.</Message></Error>"_qs
            << QString() << true << u"server-busy"_qs << true;
        QTest::newRow("503-amqp") << 503 << QString() << QStringList()
                                  << u"com.microsoft:server-busy"_qs << QString() << true
                                  << u"server-busy"_qs << true;
        QTest::newRow("503-sharepoint") << 503 << QString() << QStringList()
                                        << u"{\"error\":{\"code\":\"activityLimitReached\"}}"_qs
                                        << QString() << true << u"server-busy"_qs << true;
        QTest::newRow("429-fabric-not-retriable")
            << 429 << QString() << QStringList()
            << u"{\"errorCode\":\"RequestBlocked\",\"isRetriable\":false}"_qs << u"55"_qs << true
            << u"rate-limit"_qs << false;
        QTest::newRow("429-fabric-retriable")
            << 429 << QString() << QStringList()
            << u"{\"errorCode\":\"RequestBlocked\",\"isRetriable\": true}"_qs << u"55"_qs << true
            << u"rate-limit"_qs << true;
        QTest::newRow("429-capacity-retriable-true-stays-false")
            << 429 << QString() << QStringList()
            << u"{\"errorCode\":\"CapacityLimitExceeded\",\"isRetriable\":true}"_qs << QString()
            << true << u"capacity"_qs << false;
        QTest::newRow("503-unrelated-code")
            << 503 << u"MaintenanceMode"_qs << QStringList() << QString() << QString() << false
            << u"none"_qs << true;
    }
    void classify()
    {
        QFETCH(int, status);
        QFETCH(QString, errorCode);
        QFETCH(QStringList, headers);
        QFETCH(QString, body);
        QFETCH(QString, retryAfter);
        QFETCH(bool, throttled);
        RequestEvent event;
        event.tsMs = kT;
        event.status = status;
        event.errorCode = errorCode;
        event.headers = headersOf(headers);
        event.body = body;
        event.retryAfter = retryAfter;
        QCOMPARE(isThrottle(event), throttled);
        const ThrottleSignals s = extract(event);
        QCOMPARE(s.throttled, throttled);
        QTEST(throttleKindName(s.kind), "kind");
        QTEST(s.retryable, "retryable");
    }

    void retryAt_data()
    {
        QTest::addColumn<int>("status");
        QTest::addColumn<double>("durationMs");
        QTest::addColumn<QString>("retryAfter");
        QTest::addColumn<QStringList>("headers");
        QTest::addColumn<QString>("body");
        QTest::addColumn<qint64>("expected");

        QTest::newRow("retry-after-field")
            << 429 << -1.0 << u"55"_qs << QStringList() << QString() << kT + 55000;
        QTest::newRow("relative-to-response")
            << 429 << 250.4 << u"55"_qs << QStringList() << QString() << kT + 250 + 55000;
        QTest::newRow("header-only")
            << 429 << -1.0 << QString() << QStringList{u"Retry-After"_qs, u"2.128"_qs} << QString()
            << kT + 2128;
        QTest::newRow("field-and-header-same")
            << 429 << -1.0 << u"3"_qs << QStringList{u"Retry-After"_qs, u"3"_qs} << QString()
            << kT + 3000;
        QTest::newRow("ms-header-later")
            << 429 << -1.0 << u"1"_qs << QStringList{u"retry-after-ms"_qs, u"1500"_qs} << QString()
            << kT + 1500;
        QTest::newRow("seconds-later-than-ms")
            << 429 << -1.0 << u"2"_qs << QStringList{u"x-ms-retry-after-ms"_qs, u"1500"_qs}
            << QString() << kT + 2000;
        QTest::newRow("blocked-until-later")
            << 429 << -1.0 << u"1"_qs << QStringList()
            << u"{\"errorCode\":\"RequestBlocked\",\"message\":\"Request is blocked by the upstream service until: 2/18/2026 10:45:04 PM (UTC)\"}"_qs
            << Q_INT64_C(1771454704000);
        QTest::newRow("retry-after-later-than-blocked-until")
            << 429 << -1.0 << u"120"_qs << QStringList()
            << u"{\"errorCode\":\"RequestBlocked\",\"message\":\"Request is blocked by the upstream service until: 2/18/2026 10:45:04 PM (UTC)\"}"_qs
            << kT + 120000;
        QTest::newRow("please-wait")
            << 429 << -1.0 << QString() << QStringList()
            << u"Error code: 50009. Please wait 2 seconds and try again."_qs << kT + 2000;
        QTest::newRow("http-date") << 503 << -1.0 << u"Wed, 18 Feb 2026 22:45:04 GMT"_qs
                                   << QStringList() << QString() << Q_INT64_C(1771454704000);
        QTest::newRow("http-date-in-past") << 503 << -1.0 << u"Wed, 21 Oct 2015 07:28:00 GMT"_qs
                                           << QStringList() << QString() << kT;
        QTest::newRow("garbage") << 429 << -1.0 << u"later"_qs << QStringList() << QString()
                                 << kAbsent;
        QTest::newRow("garbage-field-falls-back-to-header")
            << 429 << -1.0 << u"later"_qs << QStringList{u"Retry-After"_qs, u"9"_qs} << QString()
            << kT + 9000;
        QTest::newRow("blocked-until-in-past-means-now")
            << 429 << -1.0 << QString() << QStringList()
            << u"Request is blocked by the upstream service until: 9/2/2025 5:21:55 PM (UTC)"_qs
            << kT;
        QTest::newRow("blocked-until-centuries-away-ignored")
            << 429 << -1.0 << u"5"_qs << QStringList()
            << u"Request is blocked by the upstream service until: 9/2/2999 5:21:55 PM (UTC)"_qs
            << kT + 5000;
        QTest::newRow("reset-in-past-means-now")
            << 429 << -1.0 << QString()
            << QStringList{u"X-RateLimit-Remaining"_qs, u"0"_qs, u"X-RateLimit-Reset"_qs,
                           u"1700000000"_qs}
            << QString() << kT;
        QTest::newRow("none-onenote") << 429 << -1.0 << QString() << QStringList()
                                      << u"{\"error\":{\"code\":\"20166\"}}"_qs << kAbsent;
        QTest::newRow("exhausted-ratelimit")
            << 429 << -1.0 << QString()
            << QStringList{u"X-RateLimit-Remaining"_qs, u"0"_qs, u"X-RateLimit-Reset"_qs,
                           u"1771454700"_qs}
            << QString() << Q_INT64_C(1771454700000);
        QTest::newRow("ratelimit-with-room-is-not-advice")
            << 429 << -1.0 << QString()
            << QStringList{u"X-RateLimit-Remaining"_qs, u"10"_qs, u"X-RateLimit-Reset"_qs,
                           u"1771454700"_qs}
            << QString() << kAbsent;
        QTest::newRow("all-sources-latest-wins")
            << 429 << 1000.0 << u"1"_qs
            << QStringList{u"retry-after-ms"_qs, u"2500"_qs, u"RateLimit"_qs, u"\"d\";r=0;t=4"_qs}
            << u"Please wait 3 seconds"_qs << kT + 1000 + 4000;
    }
    void retryAt()
    {
        QFETCH(int, status);
        QFETCH(double, durationMs);
        QFETCH(QString, retryAfter);
        QFETCH(QStringList, headers);
        QFETCH(QString, body);
        QFETCH(qint64, expected);
        RequestEvent event;
        event.tsMs = kT;
        event.status = status;
        event.durationMs = durationMs;
        event.retryAfter = retryAfter;
        event.headers = headersOf(headers);
        event.body = body;
        QCOMPARE(orAbsent(extract(event).retryAtMs), expected);
    }

    void graphHeadersOnSuccess()
    {
        // A 200 from Graph still carries the soft-limit signals the breaker needs.
        RequestEvent event;
        event.tsMs = kT;
        event.status = 200;
        event.headers =
            headersOf({u"x-ms-throttle-limit-percentage"_qs, u"0.9"_qs, u"x-ms-resource-unit"_qs,
                       u"2"_qs, u"x-ms-throttle-information"_qs, u" CPULimitExceeded "_qs,
                       u"x-ms-throttle-scope"_qs, u"Application/Read/a/t"_qs,
                       u"x-ms-ratelimit-remaining-subscription-reads"_qs, u"42"_qs});
        const ThrottleSignals s = extract(event);
        QVERIFY(!s.throttled);
        QCOMPARE(s.kind, ThrottleKind::None);
        QCOMPARE(orNoDouble(s.limitPercentage), 0.9);
        QCOMPARE(orNoDouble(s.resourceUnits), 2.0);
        QCOMPARE(s.throttleInformation, u"CPULimitExceeded"_qs);
        QVERIFY(s.scope.has_value());
        QVERIFY(s.scope->isApplicationWide());
        QCOMPARE(s.armRemaining.size(), 1);
        QCOMPARE(s.armRemaining.first().remaining, 42);
        QVERIFY(!s.retryAtMs);
    }

    void plainSuccessIsEmpty()
    {
        RequestEvent event;
        event.tsMs = kT;
        event.status = 200;
        event.errorCode = u"kept"_qs;
        const ThrottleSignals s = extract(event);
        QVERIFY(!s.throttled);
        QCOMPARE(s.kind, ThrottleKind::None);
        QCOMPARE(s.errorCode, u"kept"_qs);
        QVERIFY(!s.retryAtMs && !s.limitPercentage && !s.scope && !s.resourceUnits);
        QVERIFY(s.rateLimit.isEmpty() && s.armRemaining.isEmpty() &&
                s.throttleInformation.isEmpty());
    }

    // The report calls extract() for every line: a plain success (or one carrying only the
    // Graph soft-limit header) must not touch the heap.
    void hotPathAllocatesNothing()
    {
#ifndef TS_COUNTS_ALLOCATIONS
        QSKIP("allocation counting needs glibc malloc (not available under ASan)");
#else
        RequestEvent plain;
        plain.tsMs = kT;
        plain.status = 200;
        plain.url = u"https://api.fabric.microsoft.com/v1/workspaces"_qs;
        plain.errorCode = u"x"_qs;
        RequestEvent soft = plain;
        soft.headers.set(u"x-ms-throttle-limit-percentage"_qs, u"0.85"_qs);
        soft.headers.set(u"x-ms-resource-unit"_qs, u"1"_qs);
        { // the counter itself works: a fresh string does allocate
            const long start = ts::testing::allocationCount.load();
            const QString fresh = QString::number(1234567890123LL);
            QVERIFY(ts::testing::allocationCount.load() > start && !fresh.isEmpty());
        }
        qint64 sink = 0;
        const long before = ts::testing::allocationCount.load();
        for (int i = 0; i < 1000; ++i) {
            const ThrottleSignals a = extract(plain);
            const ThrottleSignals b = extract(soft);
            sink += a.throttled + isThrottle(plain) + qint64(b.limitPercentage.value_or(0) * 100);
        }
        QCOMPARE(ts::testing::allocationCount.load() - before, 0L);
        QCOMPARE(sink, qint64(85) * 1000);
#endif
    }

    void responseTime()
    {
        RequestEvent event;
        event.tsMs = kT;
        QCOMPARE(responseTimeMs(event), kT);
        event.durationMs = 84.6;
        QCOMPARE(responseTimeMs(event), kT + 85);
        event.durationMs = std::nan("");
        QCOMPARE(responseTimeMs(event), kT);
        event.durationMs = 1e300;
        QCOMPARE(responseTimeMs(event), kT);
    }

    void kindNames()
    {
        QCOMPARE(throttleKindName(ThrottleKind::None), u"none"_qs);
        QCOMPARE(throttleKindName(ThrottleKind::RateLimit), u"rate-limit"_qs);
        QCOMPARE(throttleKindName(ThrottleKind::Capacity), u"capacity"_qs);
        QCOMPARE(throttleKindName(ThrottleKind::ServerBusy), u"server-busy"_qs);
    }

    void fabricIsRetriable()
    {
        QCOMPARE(
            errorCodesFromBody(u"{\"errorCode\":\"CapacityLimitExceeded\",\"isRetriable\":false}")
                .isRetriable,
            std::optional<bool>(false));
        QCOMPARE(errorCodesFromBody(u"{\"errorCode\":\"X\",\"isRetriable\":true}").isRetriable,
                 std::optional<bool>(true));
        QVERIFY(!errorCodesFromBody(u"{\"errorCode\":\"X\"}").isRetriable.has_value());
        // Only Fabric's top-level field counts, not a nested one.
        QVERIFY(!errorCodesFromBody(u"{\"a\":{\"isRetriable\":false}}").isRetriable.has_value());
    }

    // Every prefix of the real bodies (a logger truncating at any byte): never a crash, never a
    // wrong code or instant; the code is found as soon as it is complete.
    void truncatedRealBodies()
    {
        const QString fabric =
            u"{\"requestId\": \"44f7c278-3c6c-4d94-9649-60b40c7ef6c9\", \"errorCode\": \"RequestBlocked\", \"message\": \"Request is blocked by the upstream service until: 9/2/2025 5:21:55 PM (UTC)\"}"_qs;
        const qint64 until = Q_INT64_C(1756833715000);
        const qsizetype codeComplete = fabric.indexOf(u"RequestBlocked\""_qs) + 15;
        const qsizetype untilComplete = fabric.indexOf(u" PM"_qs) + 3;
        for (qsizetype n = 0; n <= fabric.size(); ++n) {
            const QStringView prefix = QStringView(fabric).first(n);
            const ErrorCodes codes = errorCodesFromBody(prefix);
            if (n >= codeComplete)
                QCOMPARE(codes.primary, u"RequestBlocked"_qs);
            else
                QVERIFY2(codes.primary.isEmpty(), qPrintable(codes.primary));
            const auto blocked = parseBlockedUntilMs(prefix);
            if (n >= untilComplete)
                QCOMPARE(orAbsent(blocked), until);
            else
                QVERIFY2(!blocked, qPrintable(prefix.toString()));
            RequestEvent event;
            event.tsMs = kFabricDate;
            event.status = 429;
            event.body = prefix.toString();
            const ThrottleSignals s = extract(event);
            QVERIFY(s.throttled);
            QVERIFY(!s.retryAtMs || *s.retryAtMs == until);
        }
        const QString graph =
            u"{\"error\":{\"code\":\"TooManyRequests\",\"innerError\":{\"code\":\"20166\",\"date\":\"2020-08-18T12:51:51\"},\"message\":\"Please retry again later.\"}}"_qs;
        for (qsizetype n = 0; n <= graph.size(); ++n) {
            const ErrorCodes codes = errorCodesFromBody(QStringView(graph).first(n));
            QVERIFY2(codes.primary.isEmpty() || codes.primary == u"TooManyRequests"_qs ||
                         codes.primary == u"20166"_qs,
                     qPrintable(codes.primary));
            if (n == graph.size())
                QCOMPARE(codes.primary, u"20166"_qs);
        }
    }

    // Random garbage through every parser: no crash, results inside their documented ranges.
    void garbageIsHarmless()
    {
        static const QString alphabet =
            u"0123456789.,;:=-+/ \t\"{}[]\\aAeEpPmMsTuUnNtilwW%()\u00e9\u65e5\U0001F600"_qs;
        QRandomGenerator rng(20260218);
        const qint64 maxMs = Q_INT64_C(366) * 24 * 3600 * 1000;
        for (int round = 0; round < 3000; ++round) {
            QString text;
            const int length = rng.bounded(60);
            for (int i = 0; i < length; ++i)
                text.append(alphabet[rng.bounded(int(alphabet.size()))]);
            if (const auto d = parseRetryAfterDelayMs(text, kT))
                QVERIFY(*d >= 0 && *d <= maxMs);
            if (const auto d = parseRetryAfterMsHeader(text))
                QVERIFY(*d >= 0 && *d <= maxMs);
            if (const auto d = parsePleaseWaitDelayMs(text))
                QVERIFY(*d >= 0 && *d <= maxMs);
            if (const auto p = parseLimitPercentage(text))
                QVERIFY(*p >= 0);
            (void)parseBlockedUntilMs(text);
            (void)parseThrottleScope(text);
            (void)errorCodesFromBody(text);
            RequestEvent event;
            event.tsMs = kT;
            event.status = int(rng.bounded(4)) == 0 ? 503 : 429;
            event.body = text;
            event.retryAfter = text;
            event.headers =
                headersOf({u"RateLimit"_qs, text, u"RateLimit-Policy"_qs, text,
                           u"x-ms-throttle-scope"_qs, text, u"x-ms-ratelimit-remaining-resource"_qs,
                           text, u"X-RateLimit-Reset"_qs, text});
            const ThrottleSignals s = extract(event);
            QVERIFY(!s.retryAtMs || *s.retryAtMs >= kT);
        }
    }

    // ---- real samples -------------------------------------------------------------------
    void fabricCassettes_data()
    {
        QTest::addColumn<QString>("path");
        const QDir dir(QStringLiteral(TS_THIRDPARTY_DIR "/fabric"));
        const QStringList files = dir.entryList({u"*.yaml"_qs}, QDir::Files, QDir::Name);
        QVERIFY(files.size() >= 4);
        for (const QString &file : files)
            QTest::newRow(qPrintable(file)) << dir.filePath(file);
    }
    void fabricCassettes()
    {
        QFETCH(QString, path);
        QFile raw(path);
        QVERIFY(raw.open(QIODevice::ReadOnly));
        const int throttlesInFile = int(raw.readAll().count("code: 429"));
        QVERIFY(throttlesInFile >= 1);

        const QList<CassetteResponse> responses = readCassette(path);
        QVERIFY(responses.size() > throttlesInFile);
        int throttlesSeen = 0;
        for (const CassetteResponse &response : responses) {
            QVERIFY(response.status >= 200);
            const RequestEvent event = eventFromCassette(response);
            const ThrottleSignals s = extract(event);
            QCOMPARE(isThrottle(event), response.status == 429);
            QCOMPARE(s.throttled, response.status == 429);
            if (response.status != 429) {
                QCOMPARE(s.kind, ThrottleKind::None);
                continue;
            }
            ++throttlesSeen;
            // What the file says, read by this test.
            const QString headerCode = response.header(u"x-ms-public-api-error-code"_qs);
            const QString retryAfter = response.header(u"Retry-After"_qs);
            const QJsonObject body = QJsonDocument::fromJson(response.body.toUtf8()).object();
            const QString bodyCode = body.value(u"errorCode").toString();
            const QString message = body.value(u"message").toString();
            QCOMPARE(headerCode, u"RequestBlocked"_qs);
            QCOMPARE(bodyCode, headerCode);
            bool ok = false;
            const int retrySeconds = retryAfter.toInt(&ok);
            QVERIFY2(ok && retrySeconds > 0, qPrintable(retryAfter));
            const auto blockedUntil = oracleBlockedUntil(message);
            QVERIFY2(blockedUntil.has_value(), qPrintable(message));
            QVERIFY(event.tsMs > 0);

            // What the implementation makes of it.
            QCOMPARE(s.errorCode, headerCode);
            QCOMPARE(errorCodesFromBody(response.body).primary, bodyCode);
            QCOMPARE(s.kind, ThrottleKind::RateLimit);
            QVERIFY(s.retryable);
            QCOMPARE(orAbsent(parseRetryAfterDelayMs(retryAfter, event.tsMs)),
                     qint64(retrySeconds) * 1000);
            QCOMPARE(orAbsent(parseBlockedUntilMs(message)), *blockedUntil);
            QCOMPARE(orAbsent(parseBlockedUntilMs(response.body)), *blockedUntil);
            const qint64 expectedRetryAt =
                std::max(event.tsMs + qint64(retrySeconds) * 1000, *blockedUntil);
            QCOMPARE(orAbsent(s.retryAtMs), expectedRetryAt);
        }
        QCOMPARE(throttlesSeen, throttlesInFile);
    }

    void fabricCassetteFirstThrottleExactly()
    {
        // The acls cassette's 429, pinned: Date 17:21:00 GMT, Retry-After 54, blocked until
        // 5:21:55 PM: the later of the two (17:21:55) is when sending again is safe.
        const auto responses = readCassette(QStringLiteral(
            TS_THIRDPARTY_DIR "/fabric/fabric-cli-vcr_test_acls_rm_connection_sp_success.yaml"));
        const auto it = std::find_if(responses.begin(), responses.end(),
                                     [](const CassetteResponse &r) { return r.status == 429; });
        QVERIFY(it != responses.end());
        const RequestEvent event = eventFromCassette(*it);
        QCOMPARE(event.tsMs, kFabricDate);
        QCOMPARE(it->header(u"Retry-After"_qs), u"54"_qs);
        const ThrottleSignals s = extract(event);
        QCOMPARE(s.errorCode, u"RequestBlocked"_qs);
        QCOMPARE(orAbsent(s.retryAtMs), Q_INT64_C(1756833715000));
    }

    void graph429Sample()
    {
        const HttpMessage message = readHttpMessage(QStringLiteral(
            TS_THIRDPARTY_DIR "/graph/graph-docs_throttling_sample-429-response.http"));
        QCOMPARE(message.status, 429);
        RequestEvent event;
        event.tsMs = kT;
        event.status = message.status;
        QString retryAfter;
        for (const auto &h : message.headers) {
            event.headers.set(h.first, h.second);
            if (h.first.compare(u"Retry-After"_qs, Qt::CaseInsensitive) == 0)
                retryAfter = h.second;
        }
        event.body = QString::fromUtf8(message.body);
        const QJsonObject error =
            QJsonDocument::fromJson(message.body).object().value(u"error").toObject();
        const QString code = error.value(u"code").toString();
        const QString innerCode = error.value(u"innerError").toObject().value(u"code").toString();
        QCOMPARE(code, u"TooManyRequests"_qs);
        QCOMPARE(retryAfter, u"2.128"_qs);

        const ThrottleSignals s = extract(event);
        QVERIFY(s.throttled);
        QCOMPARE(s.kind, ThrottleKind::RateLimit);
        QCOMPARE(s.errorCode, code);
        const ErrorCodes codes = errorCodesFromBody(event.body);
        QCOMPARE(codes.primary, code);
        QCOMPARE(codes.inner, QStringList{innerCode});
        // 2.128 s exactly: 2128 ms after the response.
        QCOMPARE(orAbsent(s.retryAtMs),
                 kT + qint64(std::ceil(retryAfter.toDouble() * 1000 - 1e-6)));
    }

    void graphBatchSample()
    {
        const HttpMessage message = readHttpMessage(QStringLiteral(
            TS_THIRDPARTY_DIR "/graph/graph-docs_json-batching_example-response.http"));
        QCOMPARE(message.status, 200);
        const QJsonArray responses =
            QJsonDocument::fromJson(message.body).object().value(u"responses").toArray();
        QVERIFY(responses.size() >= 5);
        for (const QJsonValue &value : responses) {
            const QJsonObject sub = value.toObject();
            RequestEvent event;
            event.tsMs = kT;
            event.batchId = u"batch-1"_qs;
            event.batchIndex = sub.value(u"id").toString().toInt();
            event.status = sub.value(u"status").toInt();
            const QJsonObject headers = sub.value(u"headers").toObject();
            for (auto it = headers.begin(); it != headers.end(); ++it)
                event.headers.set(it.key(), it.value().toString());
            event.body = QString::fromUtf8(QJsonDocument(sub.value(u"body").toObject()).toJson());

            const ThrottleSignals s = extract(event);
            QVERIFY2(!s.throttled, qPrintable(sub.value(u"id").toString()));
            QCOMPARE(s.kind, ThrottleKind::None);
            const QString fileCode =
                sub.value(u"body").toObject().value(u"error").toObject().value(u"code").toString();
            QCOMPARE(s.errorCode, fileCode);
            if (headers.contains(u"x-ms-resource-unit"))
                QCOMPARE(orNoDouble(s.resourceUnits),
                         headers.value(u"x-ms-resource-unit").toString().toDouble());
            else
                QVERIFY(!s.resourceUnits);
            QVERIFY(!s.retryAtMs);
        }
    }

    void graphBatchWithThrottledSubResponses()
    {
        // The docs' batch sample has no throttled member; this envelope (same shape, written
        // for this test) does: each sub-response carries its own Retry-After, and the 200
        // envelope itself is not a throttle.
        const QByteArray batch = R"({"responses":[
            {"id":"1","status":200,"headers":{"x-ms-throttle-limit-percentage":"0.95"},"body":{}},
            {"id":"2","status":429,"headers":{"Retry-After":"7","x-ms-throttle-scope":"User"},
             "body":{"error":{"code":"TooManyRequests","innerError":{"code":"20166"}}}},
            {"id":"3","status":429,"headers":{"Retry-After":"2.5"},
             "body":{"error":{"code":"TooManyRequests","innerError":{"code":"429"}}}},
            {"id":"4","status":503,"headers":{"Retry-After":"30"},"body":{"error":{"code":"serviceNotAvailable"}}}
        ]})";
        struct Expected
        {
            bool throttled;
            QString code;
            qint64 retryAt;
        };
        const QList<Expected> expected = {{false, QString(), kAbsent},
                                          {true, u"20166"_qs, kT + 7000},
                                          {true, u"TooManyRequests"_qs, kT + 2500},
                                          {true, u"serviceNotAvailable"_qs, kT + 30000}};
        RequestEvent envelope;
        envelope.tsMs = kT;
        envelope.status = 200;
        envelope.batchEnvelope = true;
        envelope.body = QString::fromUtf8(batch);
        QVERIFY(!isThrottle(envelope));

        const QJsonArray responses =
            QJsonDocument::fromJson(batch).object().value(u"responses").toArray();
        QCOMPARE(responses.size(), expected.size());
        for (qsizetype i = 0; i < responses.size(); ++i) {
            const QJsonObject sub = responses[i].toObject();
            RequestEvent event;
            event.tsMs = kT;
            event.status = sub.value(u"status").toInt();
            const QJsonObject headers = sub.value(u"headers").toObject();
            for (auto it = headers.begin(); it != headers.end(); ++it)
                event.headers.set(it.key(), it.value().toString());
            event.body = QString::fromUtf8(
                QJsonDocument(sub.value(u"body").toObject()).toJson(QJsonDocument::Compact));
            const ThrottleSignals s = extract(event);
            QCOMPARE(s.throttled, expected[i].throttled);
            QCOMPARE(s.errorCode, expected[i].code);
            QCOMPARE(orAbsent(s.retryAtMs), expected[i].retryAt);
        }
    }
};

QTEST_GUILESS_MAIN(TestThrottleSignals)
#include "tst_throttlesignals.moc"
