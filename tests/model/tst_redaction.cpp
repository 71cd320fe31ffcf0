// Redaction: seeded secrets must never survive, text around them must stay byte-identical, and
// clean input must come back untouched (and shared: no copy on the hot path).

#include "alloccounter.h"
#include "ingest/redaction.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QTest>

using namespace ts;
using namespace ts::redact;

namespace {

QString b64url(const QByteArray &bytes)
{
    return QString::fromLatin1(
        bytes.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
}

// A syntactically real JWT (RS256 header, the given claims, a 256-byte fake signature).
QString makeJwt(const QJsonObject &claims)
{
    QByteArray signature(256, '\0');
    for (qsizetype i = 0; i < signature.size(); ++i)
        signature[i] = char((i * 37 + 11) & 0xff);
    return b64url(R"({"typ":"JWT","alg":"RS256","kid":"abc123"})") + u'.' +
           b64url(QJsonDocument(claims).toJson(QJsonDocument::Compact)) + u'.' + b64url(signature);
}

QString aliceJwt()
{
    return makeJwt(QJsonObject{{u"aud"_qs, u"https://graph.microsoft.com"_qs},
                               {u"upn"_qs, u"alice@contoso.com"_qs},
                               {u"unique_name"_qs, u"alice.u@contoso.com"_qs},
                               {u"oid"_qs, u"11111111-2222-3333-4444-555555555555"_qs},
                               {u"appid"_qs, u"note-bridge-app"_qs},
                               {u"tid"_qs, u"72f988bf-86f1-41af-91ab-2d7cd011db47"_qs}});
}

// A random secret that cannot be mistaken for surrounding text.
QString randomSecret(QRandomGenerator &rng, int length, bool base64Symbols)
{
    static const QString alnum =
        u"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"_qs;
    static const QString withSymbols = alnum + u"+/"_qs;
    const QString &alphabet = base64Symbols ? withSymbols : alnum;
    QString s;
    for (int i = 0; i < length; ++i)
        s.append(alphabet[rng.bounded(int(alphabet.size()))]);
    return s;
}

} // namespace

class TestRedaction : public QObject
{
    Q_OBJECT
private slots:
    void secretHeaders_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("secret");
        for (const char *name : {"authorization",
                                 "proxy-authorization",
                                 "cookie",
                                 "set-cookie",
                                 "ocp-apim-subscription-key",
                                 "api-key",
                                 "x-api-key",
                                 "x-functions-key",
                                 "x-ms-client-secret",
                                 "x-auth-token",
                                 "x-ms-token-aad-access-token",
                                 "x-ms-token-aad-refresh-token",
                                 "x-csrf-token",
                                 "x-xsrf-token",
                                 "x-goog-api-key",
                                 "servicebusauthorization",
                                 "x-amz-security-token",
                                 "x-ms-copy-source-authorization",
                                 "x-client-password",
                                 "x-ms-encryption-key"})
            QTest::newRow(name) << QString::fromLatin1(name) << true;
        for (const char *name :
             {"retry-after", "x-ms-throttle-scope", "x-ms-throttle-limit-percentage",
              "x-ms-ratelimit-remaining-subscription-reads", "content-type",
              "x-ms-public-api-error-code", "requestid", "date", "location", "x-ms-resource-unit",
              "ratelimit-policy", "www-authenticate", "x-ms-request-id", "keep-alive"})
            QTest::newRow(name) << QString::fromLatin1(name) << false;
    }
    void secretHeaders()
    {
        QFETCH(QString, name);
        QTEST(isSecretHeader(name), "secret");
    }

    void url_data()
    {
        QTest::addColumn<QString>("input");
        QTest::addColumn<QString>("expected");
        QTest::newRow("sas-blob")
            << u"https://acct.blob.core.windows.net/c/b.txt?sv=2021-08-06&se=2026-02-19T00%3A00%3A00Z&sr=b&sp=r&sig=AbC%2Bdef%2F123%3D"_qs
            << u"https://acct.blob.core.windows.net/c/b.txt?sv=2021-08-06&se=2026-02-19T00%3A00%3A00Z&sr=b&sp=r&sig=REDACTED"_qs;
        QTest::newRow("sig-first")
            << u"https://h/p?sig=abc&sv=1"_qs << u"https://h/p?sig=REDACTED&sv=1"_qs;
        QTest::newRow("oauth-code")
            << u"https://app/cb?code=0.AXoA-secret&state=xyz&session_state=s"_qs
            << u"https://app/cb?code=REDACTED&state=xyz&session_state=s"_qs;
        QTest::newRow("function-key") << u"https://fn.azurewebsites.net/api/run?code=abcdEF=="_qs
                                      << u"https://fn.azurewebsites.net/api/run?code=REDACTED"_qs;
        QTest::newRow("many")
            << u"/token?client_id=app&client_secret=s3cr3t&refresh_token=rt&access_token=at&id_token=it&grant_type=refresh_token"_qs
            << u"/token?client_id=app&client_secret=REDACTED&refresh_token=REDACTED&access_token=REDACTED&id_token=REDACTED&grant_type=refresh_token"_qs;
        QTest::newRow("keys")
            << u"https://api/x?subscription-key=a&api-key=b&apikey=c&key=d&token=e&password=f&api_key=g"_qs
            << u"https://api/x?subscription-key=REDACTED&api-key=REDACTED&apikey=REDACTED&key=REDACTED&token=REDACTED&password=REDACTED&api_key=REDACTED"_qs;
        QTest::newRow("case-insensitive-name")
            << u"https://h/?Access_Token=abc&SIG=def"_qs
            << u"https://h/?Access_Token=REDACTED&SIG=REDACTED"_qs;
        QTest::newRow("percent-encoded-name")
            << u"https://h/?client%5Fsecret=abc"_qs << u"https://h/?client%5Fsecret=REDACTED"_qs;
        QTest::newRow("fragment-implicit-flow")
            << u"https://app/#access_token=abc.def&token_type=Bearer&expires_in=3600"_qs
            << u"https://app/#access_token=REDACTED&token_type=Bearer&expires_in=3600"_qs;
        QTest::newRow("query-and-fragment")
            << u"https://h/p?sig=a#frag"_qs << u"https://h/p?sig=REDACTED#frag"_qs;
        QTest::newRow("userinfo") << u"https://user:hunter2@host.example/path?x=1"_qs
                                  << u"https://user:REDACTED@host.example/path?x=1"_qs;
        QTest::newRow("userinfo-no-password")
            << u"https://user@host/p"_qs << u"https://user@host/p"_qs;
        QTest::newRow("at-in-path-is-not-userinfo")
            << u"https://host/users/a@b.com:x"_qs << u"https://host/users/a@b.com:x"_qs;
        QTest::newRow("semicolon-separator")
            << u"https://h/?key=abc;sig=def"_qs << u"https://h/?key=REDACTED;sig=REDACTED"_qs;
        QTest::newRow("relative") << u"/v1/items?api-key=abc"_qs
                                  << u"/v1/items?api-key=REDACTED"_qs;
        QTest::newRow("flag-param")
            << u"https://h/?debug&token=abc"_qs << u"https://h/?debug&token=REDACTED"_qs;
        QTest::newRow("unicode") << u"https://h/\u00e4/\u00f6?sig=\u00e9\u00e8&q=\u65e5"_qs
                                 << u"https://h/\u00e4/\u00f6?sig=REDACTED&q=\u65e5"_qs;
        QTest::newRow("empty-value-kept")
            << u"https://h/?sig=&sv=1"_qs << u"https://h/?sig=&sv=1"_qs;
        QTest::newRow("already-redacted")
            << u"https://h/?sig=REDACTED"_qs << u"https://h/?sig=REDACTED"_qs;
        QTest::newRow("similar-names-kept")
            << u"https://h/?mykey=a&keyword=b&sigma=c&tokens=d&codec=e"_qs
            << u"https://h/?mykey=a&keyword=b&sigma=c&tokens=d&codec=e"_qs;
        QTest::newRow("sas-non-secret-fields-kept")
            << u"https://h/q?sv=2020&ss=b&srt=o&sp=rl&se=2026&st=2025&spr=https&skoid=x"_qs
            << u"https://h/q?sv=2020&ss=b&srt=o&sp=rl&se=2026&st=2025&spr=https&skoid=x"_qs;
        QTest::newRow("no-query") << u"https://api.fabric.microsoft.com/v1/workspaces"_qs
                                  << u"https://api.fabric.microsoft.com/v1/workspaces"_qs;
        QTest::newRow("fabric-query")
            << u"https://api.fabric.microsoft.com/v1/workspaces/1f2e/items/9a8b/jobs/instances?jobType=Pipeline"_qs
            << u"https://api.fabric.microsoft.com/v1/workspaces/1f2e/items/9a8b/jobs/instances?jobType=Pipeline"_qs;
        QTest::newRow("graph-skiptoken-is-not-token")
            << u"https://graph.microsoft.com/beta/me/memberOf?$top=1&$skiptoken=RFNwdAoAAQ"_qs
            << u"https://graph.microsoft.com/beta/me/memberOf?$top=1&$skiptoken=RFNwdAoAAQ"_qs;
        QTest::newRow("empty") << QString() << QString();
        QTest::newRow("lone-question-mark") << u"?"_qs << u"?"_qs;
        QTest::newRow("trailing-equals") << u"https://h/?sig="_qs << u"https://h/?sig="_qs;
    }
    void url()
    {
        QFETCH(QString, input);
        QFETCH(QString, expected);
        const QString out = redactUrl(input);
        QCOMPARE(out, expected);
        if (input == expected) // unchanged input is handed back without a copy
            QVERIFY(out.constData() == input.constData() || input.isEmpty());
        QCOMPARE(redactUrl(out), out); // idempotent
    }

    void parameterNames()
    {
        QVERIFY(isSecretParameterName(u"sig"));
        QVERIFY(isSecretParameterName(u"Client_Secret"));
        QVERIFY(isSecretParameterName(u"client%5Fsecret"));
        QVERIFY(!isSecretParameterName(u"sv"));
        QVERIFY(!isSecretParameterName(u"se"));
        QVERIFY(!isSecretParameterName(u"sp"));
        QVERIFY(!isSecretParameterName(u"jobType"));
    }

    void text_data()
    {
        QTest::addColumn<QString>("input");
        QTest::addColumn<QString>("expected");
        const QString jwt = aliceJwt();
        QTest::newRow("authorization-line")
            << u"GET /v1.0/me HTTP/1.1\r\nAuthorization: Bearer "_qs + jwt +
                   u"\r\nAccept: */*\r\n"_qs
            << u"GET /v1.0/me HTTP/1.1\r\nAuthorization: REDACTED\r\nAccept: */*\r\n"_qs;
        QTest::newRow("authorization-basic")
            << u"authorization: Basic dXNlcjpwYXNz"_qs << u"authorization: REDACTED"_qs;
        QTest::newRow("bearer-in-prose") << u"sent with bearer abcdefghijklmnop1234 and failed"_qs
                                         << u"sent with bearer REDACTED and failed"_qs;
        QTest::newRow("bearer-in-json-string")
            << u"{\"header\":\"Bearer abcdefghijklmnop1234\",\"x\":1}"_qs
            << u"{\"header\":\"Bearer REDACTED\",\"x\":1}"_qs;
        QTest::newRow("bearer-padded-token-in-json")
            << u"{\"h\":\"Bearer QWxhZGRpbjpvcGVuIHNlc2FtZQ==\"}"_qs
            << u"{\"h\":\"Bearer REDACTED\"}"_qs;
        QTest::newRow("secret-key-array")
            << u"{\"set-cookie\": [\"a=1; Path=/\", \"b=2\"], \"x\": [\"keep\"]}"_qs
            << u"{\"set-cookie\": [\"REDACTED\", \"REDACTED\"], \"x\": [\"keep\"]}"_qs;
        QTest::newRow("secret-key-object")
            << u"{\"authorization\": {\"scheme\": \"Basic\", \"parameter\": \"dXNlcjpwYXNz\", \"n\": 5, \"ok\": true}, \"y\": \"keep\"}"_qs
            << u"{\"authorization\": {\"scheme\": \"REDACTED\", \"parameter\": \"REDACTED\", \"n\": \"REDACTED\", \"ok\": true}, \"y\": \"keep\"}"_qs;
        QTest::newRow("secret-key-truncated-array")
            << u"{\"cookie\": [\"abc"_qs << u"{\"cookie\": [\"REDACTED"_qs;
        // A form-encoded body (an OAuth token request) names its secrets as a URL does.
        QTest::newRow("form-code")
            << u"grant_type=authorization_code&code=0.AXoA-abc&client_id=app&redirect_uri=x"_qs
            << u"grant_type=authorization_code&code=REDACTED&client_id=app&redirect_uri=x"_qs;
        QTest::newRow("form-code-first")
            << u"code=0.AXoA-abc&state=1"_qs << u"code=REDACTED&state=1"_qs;
        // Keys that end like a credential's name.
        QTest::newRow("aad-token-key")
            << u"{\"x-ms-token-aad-access-token\":\"abc\",\"n\":1}"_qs
            << u"{\"x-ms-token-aad-access-token\":\"REDACTED\",\"n\":1}"_qs;
        QTest::newRow("camel-refresh-token")
            << u"{\"refreshToken\": \"abc\"}"_qs << u"{\"refreshToken\": \"REDACTED\"}"_qs;
        QTest::newRow("servicebus-authorization-key")
            << u"ServiceBusAuthorization: SharedAccessSignature sr=a&sig=b&se=1"_qs
            << u"ServiceBusAuthorization: REDACTED"_qs;
        QTest::newRow("admin-password-key")
            << u"adminPassword=hunter2; x=1"_qs << u"adminPassword=REDACTED; x=1"_qs;
        QTest::newRow("jwt-alone")
            << u"token was "_qs + jwt + u" (expired)"_qs << u"token was REDACTED (expired)"_qs;
        QTest::newRow("jwt-unsigned")
            << u"x eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0. y"_qs << u"x REDACTED y"_qs;
        QTest::newRow("service-bus-connection-string")
            << u"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=abc123+/xyz="_qs
            << u"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=REDACTED"_qs;
        QTest::newRow("storage-connection-string")
            << u"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFy+/==;EndpointSuffix=core.windows.net"_qs
            << u"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=REDACTED;EndpointSuffix=core.windows.net"_qs;
        QTest::newRow("sas-token")
            << u"token: SharedAccessSignature sr=https%3A%2F%2Fns.servicebus.windows.net%2Fq&sig=abc%3D&se=1771454650&skn=Root done"_qs
            << u"token: REDACTED done"_qs;
        QTest::newRow("sas-token-prose")
            << u"used SharedAccessSignature sr=x&sig=abc&se=1&skn=Root for send"_qs
            << u"used SharedAccessSignature REDACTED for send"_qs;
        QTest::newRow("sig-in-url-in-text")
            << u"GET https://a.blob.core.windows.net/c?sv=1&sig=xyz%3D&se=2 failed"_qs
            << u"GET https://a.blob.core.windows.net/c?sv=1&sig=REDACTED&se=2 failed"_qs;
        QTest::newRow("oauth-json")
            << u"{\"token_type\":\"Bearer\",\"expires_in\":3599,\"access_token\":\"abc.def-ghi\",\"refresh_token\": \"rt\" , \"id_token\":\"it\"}"_qs
            << u"{\"token_type\":\"Bearer\",\"expires_in\":3599,\"access_token\":\"REDACTED\",\"refresh_token\": \"REDACTED\" , \"id_token\":\"REDACTED\"}"_qs;
        QTest::newRow("client-secret-json")
            << u"{\"client_id\":\"app\",\"client_secret\" : \"s3\\\"cr3t\"}"_qs
            << u"{\"client_id\":\"app\",\"client_secret\" : \"REDACTED\"}"_qs;
        QTest::newRow("form-body")
            << u"grant_type=client_credentials&client_id=app&client_secret=abc~def&scope=x"_qs
            << u"grant_type=client_credentials&client_id=app&client_secret=REDACTED&scope=x"_qs;
        QTest::newRow("sql-password")
            << u"Server=tcp:x;User ID=sa;Password=hunter2;Encrypt=True"_qs
            << u"Server=tcp:x;User ID=sa;Password=REDACTED;Encrypt=True"_qs;
        QTest::newRow("pwd") << u"Pwd=p@ss;Uid=me"_qs << u"Pwd=REDACTED;Uid=me"_qs;
        QTest::newRow("escaped-json-in-json")
            << u"{\"raw\":\"{\\\"access_token\\\":\\\"abc\\\",\\\"x\\\":1}\"}"_qs
            << u"{\"raw\":\"{\\\"access_token\\\":\\\"REDACTED\\\",\\\"x\\\":1}\"}"_qs;
        QTest::newRow("dotted-key")
            << u"properties.password=abc"_qs << u"properties.password=REDACTED"_qs;
        QTest::newRow("cookie-line")
            << u"Cookie: session=abc; csrftoken=def\nNext: 1"_qs << u"Cookie: REDACTED\nNext: 1"_qs;
        QTest::newRow("numeric-password-stays-json")
            << u"{\"password\": 123456, \"n\":1}"_qs << u"{\"password\": \"REDACTED\", \"n\":1}"_qs;
        QTest::newRow("null-password-kept") << u"{\"password\":null,\"secret\": false}"_qs
                                            << u"{\"password\":null,\"secret\": false}"_qs;
        QTest::newRow("aws-signature") << u"X-Amz-Signature=abcdef0123&X-Amz-Date=20260218"_qs
                                       << u"X-Amz-Signature=REDACTED&X-Amz-Date=20260218"_qs;
        QTest::newRow("unicode-around")
            << u"\u041f\u0430\u0440\u043e\u043b\u044c password=\u0441\u0435\u043a\u0440\u0435\u0442 \u2713"_qs
            << u"\u041f\u0430\u0440\u043e\u043b\u044c password=REDACTED \u2713"_qs;
        QTest::newRow("truncated-json-string")
            << u"{\"access_token\":\"abcdef"_qs << u"{\"access_token\":\"REDACTED"_qs;

        // Non-secret text must come back unchanged.
        for (
            const auto &[name, text] : std::initializer_list<std::pair<const char *, QString>>{
                {"fabric-429",
                 u"{\"requestId\": \"44f7c278-3c6c-4d94-9649-60b40c7ef6c9\", \"errorCode\": \"RequestBlocked\", \"message\": \"Request is blocked by the upstream service until: 9/2/2025 5:21:55 PM (UTC)\"}"_qs},
                {"graph-429",
                 u"{\"error\":{\"code\":\"TooManyRequests\",\"innerError\":{\"code\":\"429\",\"date\":\"2020-08-18T12:51:51\",\"message\":\"Please retry after\"}}}"_qs},
                {"service-bus",
                 u"The request was terminated because the entity is being throttled. Error code: 50009. Please wait 2 seconds and try again."_qs},
                {"token-type",
                 u"{\"token_type\":\"Bearer\",\"continuationToken\":\"abc\",\"tokenCount\":5}"_qs},
                {"www-authenticate",
                 u"Bearer realm=\"\", authorization_uri=\"https://login.microsoftonline.com/common/oauth2/authorize\", error=\"invalid_token\""_qs},
                {"prose-token", u"The access token is missing or the password was wrong."_qs},
                {"key-words",
                 u"designation: x; signal=5; keyword=1; primaryKey=7; partitionKey=9"_qs},
                {"bearer-short", u"Bearer token required"_qs},
                {"eyj-not-jwt", u"eyJ is how base64 JSON starts"_qs},
                {"url-scheme", u"password://example"_qs},
                {"already-redacted", u"Authorization: REDACTED\nsig=REDACTED"_qs},
                {"unicode", u"\u65e5\u672c\u8a9e \u00fcber \U0001F600 code: 20166"_qs},
                {"code-in-prose", u"failed with error code=50009, retrying"_qs},
                {"token-counts",
                 u"{\"total_tokens\":12,\"tokenType\":\"x\",\"pageToken\":\"p2\"}"_qs},
                {"empty", QString()}}) {
            QTest::newRow(name) << text << text;
        }
    }
    void text()
    {
        QFETCH(QString, input);
        QFETCH(QString, expected);
        const QString out = redactText(input);
        QCOMPARE(out, expected);
        if (input == expected)
            QVERIFY(out.constData() == input.constData() || input.isEmpty());
        QCOMPARE(redactText(out), out);
        // The byte scanner agrees with the UTF-16 one.
        QCOMPARE(QString::fromUtf8(redactBytes(input.toUtf8())), expected);
    }

    void seededSecretsNeverSurvive_data()
    {
        QTest::addColumn<QString>("templ"); // %1 = the secret
        QTest::addColumn<bool>("symbols");
        const QStringList templates = {
            u"Authorization: Bearer %1"_qs,
            u"{\"access_token\":\"%1\",\"token_type\":\"Bearer\"}"_qs,
            u"{\"refresh_token\" : \"%1\"}"_qs,
            u"client_secret=%1&grant_type=client_credentials"_qs,
            u"{\"client_secret\":\"%1\"}"_qs,
            u"https://a.blob.core.windows.net/c?sv=1&sig=%1&se=2"_qs,
            u"Endpoint=sb://x/;SharedAccessKeyName=k;SharedAccessKey=%1"_qs,
            u"AccountName=a;AccountKey=%1;EndpointSuffix=core.windows.net"_qs,
            u"SharedAccessSignature sr=x&sig=%1&se=1&skn=k"_qs,
            u"Password=%1;User ID=sa"_qs,
            u"x-api-key: %1\r\n"_qs,
            u"ocp-apim-subscription-key=%1"_qs,
            u"{\"headers\":{\"Authorization\":\"Bearer %1\",\"Cookie\":\"a=%1\"}}"_qs,
            u"\t  bearer   %1\t"_qs,
            u"log: {\\\"client_secret\\\":\\\"%1\\\"}"_qs,
        };
        int row = 0;
        for (const QString &t : templates) {
            QTest::addRow("t%d-alnum", row) << t << false;
            QTest::addRow("t%d-b64", row) << t << true;
            ++row;
        }
    }
    void seededSecretsNeverSurvive()
    {
        QFETCH(QString, templ);
        QFETCH(bool, symbols);
        QRandomGenerator rng(0x5eed + quint32(templ.size()));
        for (int round = 0; round < 50; ++round) {
            const QString secret = randomSecret(rng, 16 + rng.bounded(48), symbols);
            const QString input = templ.arg(secret);
            const QString out = redactText(input);
            QVERIFY2(!out.contains(secret), qPrintable(out));
            QVERIFY2(out.contains(kRedacted), qPrintable(out));
            QVERIFY(!QString::fromUtf8(redactBytes(input.toUtf8())).contains(secret));
        }
    }

    // Random garbage built from the characters the scanner reacts to: no crash, the byte and
    // UTF-16 scanners agree, and a second pass changes nothing.
    void garbageIsHarmless()
    {
        static const QString alphabet =
            u"=:;&\"'\\ \t\r\n{}[]#?@/.-_%eyJBbearerSsigtokenpasswordcookie123\u00e9\u65e5"_qs;
        QRandomGenerator rng(4242);
        for (int round = 0; round < 5000; ++round) {
            QString text;
            const int length = rng.bounded(80);
            for (int i = 0; i < length; ++i)
                text.append(alphabet[rng.bounded(int(alphabet.size()))]);
            const QString once = redactText(text);
            QCOMPARE(redactText(once), once);
            QCOMPARE(QString::fromUtf8(redactBytes(text.toUtf8())), once);
            const QString url = redactUrl(text);
            QCOMPARE(redactUrl(url), url);
        }
    }

    // Every prefix of a secret-bearing text: no prefix leaks more than the part of the secret
    // already cut off by the truncation would show, i.e. none of it.
    void truncatedSecretsNeverLeak()
    {
        const QString secret = u"Zx9Qv7Lm3Np5Rt8Wk2Yh"_qs;
        const QStringList templates = {
            u"{\"access_token\":\"%1\",\"x\":1}"_qs, u"Authorization: Bearer %1\r\n"_qs,
            u"https://h/b?sv=1&sig=%1&se=2"_qs, u"AccountKey=%1;EndpointSuffix=x"_qs,
            u"SharedAccessSignature sr=a&sig=%1&skn=k"_qs};
        for (const QString &templ : templates) {
            const QString full = templ.arg(secret);
            const qsizetype at = full.indexOf(secret);
            for (qsizetype n = at + 4; n <= full.size(); ++n) {
                const qsizetype visible = std::min<qsizetype>(n - at, secret.size());
                const QString leaked = secret.left(visible);
                const QString out = redactText(full.left(n));
                QVERIFY2(!out.contains(leaked), qPrintable(out));
            }
        }
    }

    void jwtAnywhereIsMasked()
    {
        const QString jwt = aliceJwt();
        for (const QString &templ :
             {u"%1"_qs, u"x=%1"_qs, u"\"%1\""_qs, u"[%1]"_qs, u"id_token %1."_qs,
              u"https://h/cb#id_token=%1"_qs, u"foo\n%1\nbar"_qs}) {
            const QString out = redactText(templ.arg(jwt));
            QVERIFY2(!out.contains(jwt.section(u'.', 1, 1)), qPrintable(out));
        }
    }

    void extraJsonBytes()
    {
        const QString jwt = aliceJwt();
        const QByteArray extra =
            "{\"authorization\":\"Bearer " + jwt.toLatin1() +
            "\",\"cookie\":\"session=abc; other=def\",\"set-cookie\":\"x=y; Path=/\","
            "\"x-api-key\":\"k123\",\"foo\":\"bar\",\"n\":5,\"nested\":{\"password\":\"pw\"},"
            "\"pin\":{\"token\":98765}}";
        const QByteArray out = redactBytes(extra);
        const QJsonObject obj = QJsonDocument::fromJson(out).object();
        QVERIFY2(!obj.isEmpty(), out.constData()); // still valid JSON
        QCOMPARE(obj.value(u"authorization").toString(), u"REDACTED"_qs);
        QCOMPARE(obj.value(u"cookie").toString(), u"REDACTED"_qs);
        QCOMPARE(obj.value(u"set-cookie").toString(), u"REDACTED"_qs);
        QCOMPARE(obj.value(u"x-api-key").toString(), u"REDACTED"_qs);
        QCOMPARE(obj.value(u"nested").toObject().value(u"password").toString(), u"REDACTED"_qs);
        QCOMPARE(obj.value(u"foo").toString(), u"bar"_qs);
        QCOMPARE(obj.value(u"n").toInt(), 5);
        QCOMPARE(obj.value(u"pin").toObject().value(u"token").toString(), u"REDACTED"_qs);
        const QByteArray clean = "{\"foo\":\"bar\",\"lane\":\"background\"}";
        QVERIFY(redactBytes(clean).constData() == clean.constData());
    }

    void event()
    {
        const QString jwt = aliceJwt();
        RequestEvent e;
        e.status = 429;
        e.url = u"https://graph.microsoft.com/v1.0/me/onenote/pages?access_token=leaky&$top=5"_qs;
        e.retryAfter = u"2.128"_qs;
        e.errorCode = u"TooManyRequests"_qs;
        e.headers.set(u"Authorization"_qs, u"Bearer "_qs + jwt);
        e.headers.set(u"Cookie"_qs, u"session=cookie-secret"_qs);
        e.headers.set(u"Ocp-Apim-Subscription-Key"_qs, u"apim-secret"_qs);
        e.headers.set(u"x-ms-throttle-scope"_qs, u"Application/Read/app/tid"_qs);
        e.headers.set(u"Retry-After"_qs, u"2.128"_qs);
        e.headers.set(u"Location"_qs, u"https://app/cb?code=auth-code-secret&state=1"_qs);
        e.body =
            u"{\"error\":{\"code\":\"TooManyRequests\"},\"debug\":\"client_secret=body-secret\"}"_qs;
        e.text = u"retrying with Bearer text-secret-token-123"_qs;
        e.extraJson = "{\"cookie\":\"extra-secret\",\"lane2\":\"x\"}";

        redactEvent(e);

        // Identity read from the token before it was dropped.
        QCOMPARE(e.identity, u"alice@contoso.com"_qs);
        QCOMPARE(e.app, u"note-bridge-app"_qs);
        QCOMPARE(e.tenant, u"72f988bf-86f1-41af-91ab-2d7cd011db47"_qs);
        // Secret headers gone, the others kept (values intact, order kept).
        QVERIFY(!e.headers.contains(u"authorization"));
        QVERIFY(!e.headers.contains(u"cookie"));
        QVERIFY(!e.headers.contains(u"ocp-apim-subscription-key"));
        QCOMPARE(e.headers.value(u"x-ms-throttle-scope"), u"Application/Read/app/tid"_qs);
        QCOMPARE(e.headers.value(u"retry-after"), u"2.128"_qs);
        QCOMPARE(e.headers.value(u"location"), u"https://app/cb?code=REDACTED&state=1"_qs);
        QCOMPARE(e.headers.items().first().first, u"x-ms-throttle-scope"_qs);
        // Not secret, untouched.
        QCOMPARE(e.retryAfter, u"2.128"_qs);
        QCOMPARE(e.errorCode, u"TooManyRequests"_qs);
        QCOMPARE(
            e.url,
            u"https://graph.microsoft.com/v1.0/me/onenote/pages?access_token=REDACTED&$top=5"_qs);

        QString everything = e.url + e.body + e.text + QString::fromUtf8(e.extraJson);
        for (const auto &[name, value] : e.headers.items())
            everything += name + value;
        for (const QString &secret :
             {jwt, u"cookie-secret"_qs, u"apim-secret"_qs, u"leaky"_qs, u"auth-code-secret"_qs,
              u"body-secret"_qs, u"text-secret-token-123"_qs, u"extra-secret"_qs})
            QVERIFY2(!everything.contains(secret), qPrintable(secret));
        QCOMPARE(QJsonDocument::fromJson(e.extraJson).object().value(u"lane2").toString(), u"x"_qs);
    }

    // A log may put a credential in any field; every text field is masked, and the event says
    // it was (sinks then leave it alone).
    void everyFieldIsMasked()
    {
        const QString jwt = aliceJwt();
        RequestEvent e;
        e.identity = u"Bearer "_qs + jwt;
        e.operationId = u"https://a.blob.core.windows.net/c/b?sv=1&sig=op-secret"_qs;
        e.requestId = u"code=req-secret&x=1"_qs;
        e.url = u"Authorization: Bearer url-secret-token-123"_qs;
        e.app = jwt;
        e.breakerScope = u"user:alice; password=scope-secret"_qs;
        QVERIFY(!e.secretsMasked);
        redactEvent(e);
        QVERIFY(e.secretsMasked);
        const QString everything =
            e.identity + e.operationId + e.requestId + e.url + e.app + e.breakerScope;
        for (const QString &secret : {jwt, u"op-secret"_qs, u"req-secret"_qs,
                                      u"url-secret-token-123"_qs, u"scope-secret"_qs})
            QVERIFY2(!everything.contains(secret), qPrintable(secret));
        QCOMPARE(e.identity, u"Bearer REDACTED"_qs);
        QCOMPARE(e.operationId, u"https://a.blob.core.windows.net/c/b?sv=1&sig=REDACTED"_qs);
        // ensureMasked() leaves an event that is already masked alone.
        RequestEvent masked;
        masked.secretsMasked = true;
        masked.body = u"password=kept-because-already-masked"_qs;
        ensureMasked(masked);
        QCOMPARE(masked.body, u"password=kept-because-already-masked"_qs);
        RequestEvent unmasked;
        unmasked.body = u"password=masked-now"_qs;
        ensureMasked(unmasked);
        QCOMPARE(unmasked.body, u"password=REDACTED"_qs);
    }

    // What a malformed record's reason may quote: masked first, then long random-looking runs,
    // then cut.
    void quoteMasked_data()
    {
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("expected");
        QTest::newRow("date") << u"2026-02-30T22:44:09.512Z"_qs
                              << u"\"2026-02-30T22:44:09.512Z\""_qs;
        QTest::newRow("jwt") << aliceJwt() << u"\"REDACTED\""_qs;
        QTest::newRow("bearer-jwt") << u"Bearer "_qs + aliceJwt() << u"\"Bearer REDACTED\""_qs;
        QTest::newRow("bare-key") << u"ApiKeySecret05abcdef"_qs << u"\"REDACTED\""_qs;
        QTest::newRow("sig") << u"sig=abc&se=1"_qs << u"\"sig=REDACTED&se=1\""_qs;
        QTest::newRow("form-code") << u"code=FormCode21abcdef"_qs << u"\"code=REDACTED\""_qs;
        QTest::newRow("words") << u"internationalization state"_qs
                               << u"\"internationalization state\""_qs;
        QTest::newRow("guid") << u"1b9fe8ed-5ce1-40c3-aadc-9a63a29703c7"_qs << u"\"REDACTED\""_qs;
        QTest::newRow("cut-after-masking")
            << u"x-functions-key: abcdefghijklmnop0123456789 and a long tail of plain words"_qs
            << u"\"x-functions-key: REDACTED and a long tail of pla\u2026\""_qs;
    }
    void quoteMasked()
    {
        QFETCH(QString, value);
        QFETCH(QString, expected);
        QCOMPARE(ts::redact::quoteMasked(value, 48), expected);
    }

    void eventUrlWithJwtInPath()
    {
        const QString jwt = aliceJwt();
        RequestEvent e;
        e.url = u"https://h/api/session/"_qs + jwt + u"/pages?sig=abc&x=1"_qs;
        redactEvent(e);
        QCOMPARE(e.url, u"https://h/api/session/REDACTED/pages?sig=REDACTED&x=1"_qs);
        RequestEvent noQuery;
        noQuery.url = u"https://h/api/session/"_qs + jwt;
        redactEvent(noQuery);
        QCOMPARE(noQuery.url, u"https://h/api/session/REDACTED"_qs);
    }

    void cleanEventUntouched()
    {
        RequestEvent e;
        e.status = 200;
        e.url = u"https://api.fabric.microsoft.com/v1/workspaces?continuationToken=abc"_qs;
        e.headers.set(u"x-ms-throttle-limit-percentage"_qs, u"0.9"_qs);
        e.body = u"{\"value\":[]}"_qs;
        e.extraJson = "{\"lane2\":\"x\"}";
        const RequestEvent before = e;
        redactEvent(e);
        QCOMPARE(e.url, before.url);
        QVERIFY(e.url.constData() == before.url.constData());
        QVERIFY(e.body.constData() == before.body.constData());
        QVERIFY(e.extraJson.constData() == before.extraJson.constData());
        QVERIFY(e.headers == before.headers);
        QVERIFY(e.identity.isEmpty());
    }

    // Real captures (HAR files by Chrome, Firefox, Charles, mitmproxy, Insomnia, ...): request
    // and response headers as an importer would hand them over. Credentials go, everything else
    // stays byte-identical.
    void realHarCaptures_data()
    {
        QTest::addColumn<QString>("path");
        const QDir dir(QStringLiteral(TS_THIRDPARTY_DIR "/har"));
        for (const QString &file : dir.entryList({u"*.har"_qs}, QDir::Files, QDir::Name))
            QTest::newRow(qPrintable(file)) << dir.filePath(file);
    }
    void realHarCaptures()
    {
        QFETCH(QString, path);
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonArray entries = QJsonDocument::fromJson(file.readAll())
                                       .object()
                                       .value(u"log")
                                       .toObject()
                                       .value(u"entries")
                                       .toArray();
        const QStringList credentialHeaders = {u"authorization"_qs, u"proxy-authorization"_qs,
                                               u"cookie"_qs, u"set-cookie"_qs};
        int secretsSeen = 0;
        for (const QJsonValue &entryValue : entries) {
            const QJsonObject entry = entryValue.toObject();
            const QJsonObject request = entry.value(u"request").toObject();
            const QJsonObject response = entry.value(u"response").toObject();
            RequestEvent event;
            event.url = request.value(u"url").toString();
            event.status = response.value(u"status").toInt();
            QList<QPair<QString, QString>> original;
            for (const QJsonObject &message : {request, response}) {
                for (const QJsonValue &h : message.value(u"headers").toArray()) {
                    const QString name = h.toObject().value(u"name").toString().toLower();
                    const QString value = h.toObject().value(u"value").toString();
                    if (name.isEmpty() || event.headers.contains(name))
                        continue; // HttpHeaders keeps one value per name
                    event.headers.set(name, value);
                    original.append({name, value});
                }
            }
            const QString originalUrl = event.url;
            redactEvent(event);

            QString everything = event.url + event.body;
            for (const auto &[name, value] : event.headers.items())
                everything += name + u':' + value + u'\n';
            for (const auto &[name, value] : original) {
                if (credentialHeaders.contains(name)) {
                    QVERIFY2(!event.headers.contains(name), qPrintable(name));
                    ++secretsSeen;
                    if (value.size() >= 8 && !originalUrl.contains(value))
                        QVERIFY2(!everything.contains(value), qPrintable(name + u": "_qs + value));
                } else if (!isSecretHeader(name)) {
                    QVERIFY2(event.headers.contains(name), qPrintable(name));
                    QCOMPARE(event.headers.value(name), value);
                }
            }
            // Independent oracle for the URL: secret query parameters masked, nothing else.
            static const QRegularExpression secretParam(
                uR"(([?&](?:api_key|apikey|api-key|key|sig|code|token|access_token|id_token|refresh_token|client_secret|password)=)[^&#]+)"_qs,
                QRegularExpression::CaseInsensitiveOption);
            QString expectedUrl = originalUrl;
            expectedUrl.replace(secretParam, u"\\1REDACTED"_qs);
            QCOMPARE(event.url, expectedUrl);
            if (expectedUrl != originalUrl)
                ++secretsSeen;
        }
        if (path.contains(u"yahoo"_qs) || path.contains(u"websocket"_qs) || path.contains(u"k6"_qs))
            QVERIFY(secretsSeen > 0); // the captures known to carry credentials did
    }

    // Readers call redactEvent() on every event: a clean one (query string, harmless headers,
    // an error body without secrets) must not touch the heap.
    void cleanEventAllocatesNothing()
    {
#ifndef TS_COUNTS_ALLOCATIONS
        QSKIP("allocation counting needs glibc malloc (not available under ASan)");
#else
        RequestEvent e;
        e.status = 429;
        e.url =
            u"https://api.fabric.microsoft.com/v1/workspaces/1f2e/items?jobType=Pipeline&$top=5"_qs;
        e.headers.set(u"Retry-After"_qs, u"55"_qs);
        e.headers.set(u"x-ms-public-api-error-code"_qs, u"RequestBlocked"_qs);
        e.body =
            u"{\"errorCode\": \"RequestBlocked\", \"message\": \"Request is blocked by the upstream service until: 9/2/2025 5:21:55 PM (UTC)\"}"_qs;
        e.extraJson = "{\"lane2\":\"background\",\"n\":5}";
        { // the counter itself works: a fresh string does allocate
            const long start = ts::testing::allocationCount.load();
            const QString fresh = QString::number(1234567890123LL);
            QVERIFY(ts::testing::allocationCount.load() > start && !fresh.isEmpty());
        }
        redactEvent(e); // first call may detach literal-backed strings; measure the steady state
        const long before = ts::testing::allocationCount.load();
        for (int i = 0; i < 1000; ++i)
            redactEvent(e);
        QCOMPARE(ts::testing::allocationCount.load() - before, 0L);
#endif
    }

    void claims_data()
    {
        QTest::addColumn<QString>("value");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<QString>("user");
        QTest::addColumn<QString>("objectId");
        QTest::addColumn<QString>("app");
        QTest::addColumn<QString>("tenant");

        QTest::newRow("full") << u"Bearer "_qs + aliceJwt() << true << u"alice@contoso.com"_qs
                              << u"11111111-2222-3333-4444-555555555555"_qs << u"note-bridge-app"_qs
                              << u"72f988bf-86f1-41af-91ab-2d7cd011db47"_qs;
        QTest::newRow("lowercase-scheme-and-spaces")
            << u"  bearer \t"_qs + aliceJwt() + u"  "_qs << true << u"alice@contoso.com"_qs
            << u"11111111-2222-3333-4444-555555555555"_qs << u"note-bridge-app"_qs
            << u"72f988bf-86f1-41af-91ab-2d7cd011db47"_qs;
        QTest::newRow("bare-token")
            << aliceJwt() << true << u"alice@contoso.com"_qs
            << u"11111111-2222-3333-4444-555555555555"_qs << u"note-bridge-app"_qs
            << u"72f988bf-86f1-41af-91ab-2d7cd011db47"_qs;
        QTest::newRow("unique-name")
            << makeJwt({{u"unique_name"_qs, u"bob@contoso.com"_qs},
                        {u"preferred_username"_qs, u"bob2"_qs}})
            << true << u"bob@contoso.com"_qs << QString() << QString() << QString();
        QTest::newRow("preferred-username-v2")
            << makeJwt({{u"preferred_username"_qs, u"carol@contoso.com"_qs},
                        {u"azp"_qs, u"v2-app"_qs},
                        {u"tid"_qs, u"t"_qs}})
            << true << u"carol@contoso.com"_qs << QString() << u"v2-app"_qs << u"t"_qs;
        QTest::newRow("app-only-token")
            << makeJwt({{u"oid"_qs, u"sp-object-id"_qs},
                        {u"appid"_qs, u"daemon"_qs},
                        {u"azp"_qs, u"other"_qs},
                        {u"tid"_qs, u"t"_qs}})
            << true << QString() << u"sp-object-id"_qs << u"daemon"_qs << u"t"_qs;
        QTest::newRow("unicode-upn")
            << makeJwt({{u"upn"_qs, u"j\u00f6rg@m\u00fcller.de"_qs}}) << true
            << u"j\u00f6rg@m\u00fcller.de"_qs << QString() << QString() << QString();
        QTest::newRow("non-string-claims-ignored")
            << makeJwt({{u"upn"_qs, 5}, {u"oid"_qs, u"o"_qs}}) << true << QString() << u"o"_qs
            << QString() << QString();
        QTest::newRow("standard-base64-alphabet")
            << u"eyJhbGciOiJub25lIn0."_qs +
                   QString::fromLatin1(QByteArray(R"({"upn":"d@x.y","pad":"???>>>"})").toBase64()) +
                   u".sig"_qs
            << true << u"d@x.y"_qs << QString() << QString() << QString();
        QTest::newRow("two-parts") << u"eyJhbGciOiJub25lIn0."_qs + b64url(R"({"tid":"t2"})") << true
                                   << QString() << QString() << QString() << u"t2"_qs;
        QTest::newRow("no-claims-of-interest") << makeJwt({{u"sub"_qs, u"x"_qs}}) << false
                                               << QString() << QString() << QString() << QString();
        QTest::newRow("basic-auth") << u"Basic dXNlcjpwYXNz"_qs << false << QString() << QString()
                                    << QString() << QString();
        QTest::newRow("opaque-token") << u"Bearer abcdef0123456789"_qs << false << QString()
                                      << QString() << QString() << QString();
        QTest::newRow("payload-not-json")
            << u"Bearer eyJhbGciOiJub25lIn0."_qs + b64url("not json") + u".x"_qs << false
            << QString() << QString() << QString() << QString();
        QTest::newRow("payload-array")
            << u"Bearer eyJhbGciOiJub25lIn0."_qs + b64url("[1,2]") + u".x"_qs << false << QString()
            << QString() << QString() << QString();
        QTest::newRow("payload-garbage-chars") << u"Bearer eyJhbGciOiJub25lIn0.!!!***.x"_qs << false
                                               << QString() << QString() << QString() << QString();
        QTest::newRow("payload-non-latin")
            << u"Bearer eyJhbGciOiJub25lIn0.\u65e5\u672c.x"_qs << false << QString() << QString()
            << QString() << QString();
        QTest::newRow("empty-payload")
            << u"Bearer a..b"_qs << false << QString() << QString() << QString() << QString();
        QTest::newRow("empty") << QString() << false << QString() << QString() << QString()
                               << QString();
    }
    void claims()
    {
        QFETCH(QString, value);
        QFETCH(bool, valid);
        const auto claims = claimsFromAuthorization(value);
        QCOMPARE(claims.has_value(), valid);
        if (!valid)
            return;
        QTEST(claims->user, "user");
        QTEST(claims->objectId, "objectId");
        QTEST(claims->app, "app");
        QTEST(claims->tenant, "tenant");
    }

    void applyIdentity()
    {
        RequestEvent e;
        applyIdentityFromAuthorization(e, QString(u"Bearer "_qs + aliceJwt()));
        QCOMPARE(e.identity, u"alice@contoso.com"_qs);
        QCOMPARE(e.app, u"note-bridge-app"_qs);

        RequestEvent logged;
        logged.identity = u"sp-migrator"_qs;
        logged.app = u"explicit-app"_qs;
        applyIdentityFromAuthorization(logged, QString(u"Bearer "_qs + aliceJwt()));
        QCOMPARE(logged.identity, u"sp-migrator"_qs); // what the log says wins
        QCOMPARE(logged.app, u"explicit-app"_qs);
        QCOMPARE(logged.tenant, u"72f988bf-86f1-41af-91ab-2d7cd011db47"_qs);

        RequestEvent appOnly;
        applyIdentityFromAuthorization(
            appOnly, makeJwt({{u"oid"_qs, u"sp-oid"_qs}, {u"appid"_qs, u"daemon"_qs}}));
        QCOMPARE(appOnly.identity, u"sp-oid"_qs);

        RequestEvent garbage;
        applyIdentityFromAuthorization(garbage, u"Bearer nonsense");
        QVERIFY(garbage.identity.isEmpty() && garbage.app.isEmpty() && garbage.tenant.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestRedaction)
#include "tst_redaction.moc"
