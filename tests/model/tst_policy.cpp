// Policies as data: the built-in files load and carry the documented numbers, a policy survives
// a JSON round trip (the editor's save path), bad files are rejected with the file name and what
// is wrong, events find the right policy, and the fast matchers agree with PCRE.

#include "policy/eventfields.h"
#include "policy/policy.h"
#include "policy/textmatcher.h"

#include <QJsonDocument>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using namespace ts;

class TestPolicy : public QObject
{
    Q_OBJECT

private slots:
    void builtinNumbers_data();
    void builtinNumbers();
    void roundTrip_data();
    void roundTrip();
    void editedPolicyRoundTrip();
    void badPolicyFile_data();
    void badPolicyFile();
    void loadByNameOrFile();
    void policyFor_data();
    void policyFor();
    void eventFields_data();
    void eventFields();
    void textMatcherAgreesWithRegex_data();
    void textMatcherAgreesWithRegex();
    void textMatcherStrategy_data();
    void textMatcherStrategy();
    void textMatcherComplement_data();
    void textMatcherComplement();
};

void TestPolicy::builtinNumbers_data()
{
    QTest::addColumn<QString>("policy");
    QTest::addColumn<QString>("limit");
    QTest::addColumn<QString>("algorithm");
    QTest::addColumn<double>("capacity");
    QTest::addColumn<double>("windowSeconds");
    QTest::addColumn<QString>("key");

    QTest::newRow("fabric platform") << "fabric"
                                     << "platform"
                                     << "fixed-window" << 200.0 << 60.0 << "identity";
    QTest::newRow("fabric jobScheduler") << "fabric"
                                         << "jobScheduler"
                                         << "fixed-window" << 200.0 << 60.0 << "identity";
    QTest::newRow("fabric LRO") << "fabric"
                                << "longRunningOperations"
                                << "fixed-window" << 200.0 << 60.0 << "identity";
    QTest::newRow("onenote delegated minute")
        << "graph-onenote-delegated"
        << "onenote-per-minute"
        << "sliding-window" << 120.0 << 60.0 << "app+identity";
    QTest::newRow("onenote delegated hour")
        << "graph-onenote-delegated"
        << "onenote-per-hour"
        << "sliding-window" << 400.0 << 3600.0 << "app+identity";
    QTest::newRow("onenote delegated concurrent") << "graph-onenote-delegated"
                                                  << "onenote-concurrent"
                                                  << "concurrency" << 5.0 << 0.0 << "app+identity";
    QTest::newRow("onenote app minute") << "graph-onenote-app"
                                        << "onenote-per-minute"
                                        << "sliding-window" << 240.0 << 60.0 << "app";
    QTest::newRow("onenote app hour") << "graph-onenote-app"
                                      << "onenote-per-hour"
                                      << "sliding-window" << 800.0 << 3600.0 << "app";
    QTest::newRow("onenote app concurrent") << "graph-onenote-app"
                                            << "onenote-concurrent"
                                            << "concurrency" << 20.0 << 0.0 << "app";
    QTest::newRow("servicebus credits") << "servicebus-standard"
                                        << "namespace-credits"
                                        << "credits" << 1000.0 << 1.0 << "namespace";
    QTest::newRow("servicebus premium") << "servicebus-premium"
                                        << "namespace"
                                        << "observed" << 0.0 << 0.0 << "namespace";
    QTest::newRow("arm reads") << "arm"
                               << "subscription-reads"
                               << "token-bucket" << 250.0 << 0.0 << "subscription";
    QTest::newRow("arm writes") << "arm"
                                << "subscription-writes"
                                << "token-bucket" << 200.0 << 0.0 << "subscription";
    QTest::newRow("arm deletes") << "arm"
                                 << "subscription-deletes"
                                 << "token-bucket" << 200.0 << 0.0 << "subscription";
    QTest::newRow("nginx") << "nginx"
                           << "limit_req"
                           << "leaky-bucket" << 0.0 << 0.0 << "identity";
}

void TestPolicy::builtinNumbers()
{
    QFETCH(QString, policy);
    QFETCH(QString, limit);
    QFETCH(QString, algorithm);
    QFETCH(double, capacity);
    QFETCH(double, windowSeconds);
    QFETCH(QString, key);

    QString error;
    const auto loaded = PolicySet::builtinPolicy(policy, &error);
    QVERIFY2(loaded, qPrintable(error));
    QVERIFY2(loaded->validate(&error), qPrintable(error));
    const auto it = std::find_if(loaded->limits.cbegin(), loaded->limits.cend(),
                                 [&](const PolicyLimit &l) { return l.name == limit; });
    QVERIFY(it != loaded->limits.cend());
    QCOMPARE(algorithmName(it->algorithm), algorithm);
    QCOMPARE(it->capacity, capacity);
    QCOMPARE(it->windowSeconds, windowSeconds);
    QCOMPARE(it->key, key);
    if (policy == u"arm") {
        QCOMPARE(it->refillPerSecond, limit == u"subscription-reads" ? 25.0 : 10.0);
    }
    if (policy == u"nginx") {
        QCOMPARE(it->nginxMilliRate(), 20000);
        QCOMPARE(it->burst, 5.0);
        QVERIFY(!loaded->chargesThrottled(*it));
    }
}

void TestPolicy::roundTrip_data()
{
    QTest::addColumn<QString>("name");
    for (const QString &name : PolicySet::builtinNames())
        QTest::newRow(qPrintable(name)) << name;
}

void TestPolicy::roundTrip()
{
    QFETCH(QString, name);
    QString error;
    const auto policy = PolicySet::builtinPolicy(name, &error);
    QVERIFY2(policy, qPrintable(error));
    const auto again = Policy::fromJsonBytes(policy->toJsonBytes(), QStringLiteral("mem"), &error);
    QVERIFY2(again, qPrintable(error));
    QVERIFY(*again == *policy);
    QCOMPARE(again->toJson(), policy->toJson());
}

void TestPolicy::editedPolicyRoundTrip()
{
    auto policy = PolicySet::builtinPolicy(QStringLiteral("fabric"));
    QVERIFY(policy);
    policy->limits[0].capacity = 300;
    policy->limits[0].align = WindowAlign::Clock;
    policy->limits[1].chargeThrottled = false;
    policy->chargeThrottled = false;
    PolicyLimit endpoint;
    endpoint.name = QStringLiteral("create-item");
    endpoint.key = QStringLiteral("identity+tenant");
    endpoint.match = {{QStringLiteral("method"), QStringLiteral("^POST$")},
                      {QStringLiteral("path"), QStringLiteral("/items$")}};
    endpoint.algorithm = Algorithm::TokenBucket;
    endpoint.capacity = 10;
    endpoint.refillPerSecond = 0.5;
    endpoint.extra.insert(QStringLiteral("note"), QStringLiteral("kept"));
    policy->limits.append(endpoint);
    policy->extra.insert(QStringLiteral("owner"), QStringLiteral("ops"));

    QString error;
    QVERIFY2(policy->validate(&error), qPrintable(error));
    const auto again = Policy::fromJsonBytes(policy->toJsonBytes(), QStringLiteral("mem"), &error);
    QVERIFY2(again, qPrintable(error));
    QVERIFY(*again == *policy);
    QCOMPARE(again->limits[0].capacity, 300.0);
    QCOMPARE(again->limits.last().extra.value(u"note").toString(), QStringLiteral("kept"));
    QCOMPARE(again->extra.value(u"owner").toString(), QStringLiteral("ops"));
    QVERIFY(!again->chargesThrottled(again->limits[1]));
}

void TestPolicy::badPolicyFile_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("expected");

    const QByteArray okLimit =
        R"({"name":"a","algorithm":"fixed-window","capacity":1,"windowSeconds":1})";
    QTest::newRow("not json") << QByteArray("{\n\"name\": \"x\",\n  oops\n}")
                              << "bad.json:3: not valid JSON";
    QTest::newRow("array") << QByteArray("[1,2]") << "bad.json: a policy must be a JSON object";
    QTest::newRow("no name") << QByteArray(R"({"limits":[]})") << "bad.json: missing 'name'";
    QTest::newRow("name not string") << QByteArray(R"({"name":5,"limits":[]})")
                                     << "bad.json: 'name' must be a string, not a number";
    QTest::newRow("no limits") << QByteArray(R"({"name":"p"})")
                               << "bad.json: policy 'p': missing 'limits'";
    QTest::newRow("limits object")
        << QByteArray(R"({"name":"p","limits":{}})") << "'limits' must be an array, not an object";
    QTest::newRow("unknown algorithm")
        << QByteArray(R"({"name":"p","limits":[{"name":"l","algorithm":"fixed"}]})")
        << "bad.json: limit 'l': unknown algorithm 'fixed'";
    QTest::newRow("negative capacity")
        << QByteArray(
               R"({"name":"p","limits":[{"name":"l","algorithm":"fixed-window","capacity":-1,"windowSeconds":60}]})")
        << "bad.json: limit 'l': 'capacity' must be a positive number for fixed-window (got -1)";
    QTest::newRow("missing window")
        << QByteArray(
               R"({"name":"p","limits":[{"name":"l","algorithm":"sliding-window","capacity":5}]})")
        << "limit 'l': 'windowSeconds' must be a positive number";
    QTest::newRow("capacity string")
        << QByteArray(
               R"({"name":"p","limits":[{"name":"l","algorithm":"concurrency","capacity":"5"}]})")
        << "limit 'l': 'capacity' must be a number, not a string";
    QTest::newRow("bad regex")
        << QByteArray(R"({"name":"p","match":{"service":"(fabric"},"limits":[]})")
        << "policy 'p': match.service: invalid regular expression \"(fabric\"";
    QTest::newRow("unknown match field")
        << QByteArray(R"({"name":"p","match":{"colour":"red"},"limits":[]})")
        << "unknown field 'colour' in match";
    QTest::newRow("unknown key field")
        << QByteArray(
               R"({"name":"p","limits":[{"name":"l","key":"identity+shoe","algorithm":"concurrency","capacity":5}]})")
        << "limit 'l': unknown field 'shoe' in 'key'";
    QTest::newRow("duplicate limit")
        << QByteArray("{\"name\":\"p\",\"limits\":[" + okLimit + "," + okLimit + "]}")
        << "limit 'a': appears twice";
    QTest::newRow("bad align")
        << QByteArray(
               R"({"name":"p","limits":[{"name":"l","algorithm":"fixed-window","capacity":1,"windowSeconds":1,"align":"noon"}]})")
        << "'align' must be \"clock\" or \"first-request\", not 'noon'";
    QTest::newRow("bad nginx rate")
        << QByteArray(
               R"({"name":"p","limits":[{"name":"l","algorithm":"leaky-bucket","rate":"fast","burst":5}]})")
        << "'rate' must look like \"20r/s\"";
    QTest::newRow("leaky without rate")
        << QByteArray(
               R"({"name":"p","limits":[{"name":"l","algorithm":"leaky-bucket","burst":5}]})")
        << "leaky-bucket needs a positive 'rate'";
    QTest::newRow("bad category regex")
        << QByteArray(R"({"name":"p","categories":[{"name":"c","urlPattern":"[a-"}],"limits":[]})")
        << "category 'c': urlPattern: invalid regular expression";
    QTest::newRow("cost not array")
        << QByteArray(
               R"({"name":"p","limits":[{"name":"l","algorithm":"credits","capacity":5,"windowSeconds":1,"cost":5}]})")
        << "limit 'l': 'cost' must be an array, not a number";
}

void TestPolicy::badPolicyFile()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, expected);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("bad.json"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(json);
    file.close();

    QString error;
    QVERIFY(!Policy::fromFile(path, &error));
    // The message names the file first, then what is wrong.
    QVERIFY2(error.startsWith(dir.path()), qPrintable(error));
    QVERIFY2(error.contains(expected), qPrintable(error));

    PolicySet set;
    QString loadError;
    QVERIFY(!set.load(path, &loadError));
    QCOMPARE(loadError, error);
    QVERIFY(set.isEmpty());
}

void TestPolicy::loadByNameOrFile()
{
    PolicySet set;
    QString error;
    QVERIFY2(set.load(QStringLiteral("fabric"), &error), qPrintable(error));
    QCOMPARE(set.size(), 1);

    QTemporaryDir dir;
    auto custom = *PolicySet::builtinPolicy(QStringLiteral("fabric"));
    custom.limits[0].capacity = 50;
    const QString path = dir.filePath(QStringLiteral("fabric-tight.json"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(custom.toJsonBytes());
    file.close();
    // Same name: the file replaces the built-in.
    QVERIFY2(set.load(path, &error), qPrintable(error));
    QCOMPARE(set.size(), 1);
    QCOMPARE(set.policies().first().limits[0].capacity, 50.0);
    QCOMPARE(set.policies().first().origin, path);

    QVERIFY(!set.load(QStringLiteral("no-such-policy"), &error));
    QVERIFY2(error.startsWith(QStringLiteral("no-such-policy: not a built-in policy")),
             qPrintable(error));
    QVERIFY(error.contains(QStringLiteral("graph-onenote-delegated")));

    const PolicySet all = PolicySet::builtin();
    QCOMPARE(all.policies().first().name, QStringLiteral("fabric"));
    for (const QString &name :
         {QStringLiteral("fabric"), QStringLiteral("servicebus-standard"),
          QStringLiteral("servicebus-premium"), QStringLiteral("graph-onenote-delegated"),
          QStringLiteral("graph-onenote-app"), QStringLiteral("arm"), QStringLiteral("nginx")}) {
        QVERIFY2(all.indexOf(name) >= 0, qPrintable(name));
    }
}

void TestPolicy::policyFor_data()
{
    QTest::addColumn<QString>("service");
    QTest::addColumn<QString>("url");
    QTest::addColumn<QString>("identity");
    QTest::addColumn<QString>("expected");

    QTest::newRow("fabric by field") << "fabric"
                                     << "/v1/workspaces"
                                     << "sp"
                                     << "fabric";
    QTest::newRow("fabric by host") << ""
                                    << "https://api.fabric.microsoft.com/v1/workspaces"
                                    << "sp"
                                    << "fabric";
    QTest::newRow("graph delegated") << ""
                                     << "https://graph.microsoft.com/v1.0/me/onenote/pages"
                                     << "alice@contoso.com"
                                     << "graph-onenote-delegated";
    QTest::newRow("graph app-only") << ""
                                    << "https://graph.microsoft.com/v1.0/users/x/onenote/pages"
                                    << ""
                                    << "graph-onenote-app";
    QTest::newRow("graph unknown identity") << "graph"
                                            << "/v1.0/users/x/onenote/pages"
                                            << "unknown"
                                            << "graph-onenote-app";
    QTest::newRow("servicebus host") << ""
                                     << "https://sb-prod.servicebus.windows.net/orders/messages"
                                     << "app"
                                     << "servicebus-standard";
    QTest::newRow("arm host") << ""
                              << "https://management.azure.com/subscriptions/1/resourcegroups"
                              << "sp"
                              << "arm";
    QTest::newRow("nginx") << "nginx"
                           << "/api"
                           << "10.0.0.1"
                           << "nginx";
    QTest::newRow("unknown host") << ""
                                  << "https://example.com/x"
                                  << "u"
                                  << "";
    QTest::newRow("other service") << "myapi"
                                   << "/x"
                                   << "u"
                                   << "";
}

void TestPolicy::policyFor()
{
    QFETCH(QString, service);
    QFETCH(QString, url);
    QFETCH(QString, identity);
    QFETCH(QString, expected);
    RequestEvent event;
    event.service = service;
    event.url = url;
    event.identity = identity;
    const PolicySet set = PolicySet::builtin();
    const Policy *policy = set.policyFor(event);
    QCOMPARE(policy ? policy->name : QString(), expected);
}

void TestPolicy::eventFields_data()
{
    QTest::addColumn<QString>("url");
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("expected");

    QTest::newRow("path") << "https://api.fabric.microsoft.com/v1/items?x=1#f"
                          << "path"
                          << "/v1/items";
    QTest::newRow("bare path") << "/v1/items?x=1"
                               << "path"
                               << "/v1/items";
    QTest::newRow("fragment before query") << "https://h.example/a/b#frag?q"
                                           << "path"
                                           << "/a/b";
    QTest::newRow("host only") << "https://graph.microsoft.com"
                               << "path"
                               << "";
    QTest::newRow("host and query, no path") << "https://h.example?x=/y"
                                             << "path"
                                             << "/y";
    QTest::newRow("schemeless host") << "graph.microsoft.com/v1.0/me?x"
                                     << "path"
                                     << "/v1.0/me";
    QTest::newRow("empty") << ""
                           << "path"
                           << "";
    QTest::newRow("host with port") << "http://127.0.0.1:8080/a"
                                    << "host"
                                    << "127.0.0.1";
    QTest::newRow("upper-case scheme") << "HTTPS://h.example/a?q"
                                       << "path"
                                       << "/a";
    QTest::newRow("http") << "http://h.example/a?q"
                          << "path"
                          << "/a";
    QTest::newRow("http host") << "http://h.example/a?q"
                               << "host"
                               << "h.example";
    QTest::newRow("one slash after the scheme") << "https:/h.example/a"
                                                << "path"
                                                << "/h.example/a";
    QTest::newRow("httpx scheme") << "httpx://h.example/a"
                                  << "host"
                                  << "h.example";
    QTest::newRow("other scheme") << "sb://ns.servicebus.windows.net/q"
                                  << "host"
                                  << "ns.servicebus.windows.net";
    QTest::newRow("host before query") << "https://h.example?x=1"
                                       << "host"
                                       << "h.example";
    QTest::newRow("host before fragment") << "https://h.example#top"
                                          << "host"
                                          << "h.example";
    QTest::newRow("long host") << "https://a-very-long-name.with.many.labels.example.com/p"
                               << "host"
                               << "a-very-long-name.with.many.labels.example.com";
    QTest::newRow("subscription")
        << "https://management.azure.com/subscriptions/abc-123/resourceGroups/rg?api-version=1"
        << "subscription"
        << "abc-123";
    QTest::newRow("no subscription") << "https://management.azure.com/providers"
                                     << "subscription"
                                     << "unknown";
    QTest::newRow("namespace from host") << "https://sb-prod.servicebus.windows.net/orders"
                                         << "namespace"
                                         << "sb-prod";
    QTest::newRow("identity unknown") << "/x"
                                      << "identity"
                                      << "unknown";
}

void TestPolicy::eventFields()
{
    QFETCH(QString, url);
    QFETCH(QString, field);
    QFETCH(QString, expected);
    RequestEvent event;
    event.url = url;
    const auto parsed = eventFieldFromName(field);
    QVERIFY(parsed);
    QString scratch;
    QCOMPARE(eventFieldValue(event, *parsed, {}, {}, &scratch).toString(), expected);
}

void TestPolicy::textMatcherAgreesWithRegex_data()
{
    QTest::addColumn<QString>("pattern");

    for (const char *pattern : {"",
                                "^fabric$",
                                "fabric",
                                "^fab",
                                "ric$",
                                "(?i)^get$",
                                "^(GET|HEAD)$",
                                "(?i)^(PUT|POST|PATCH)$",
                                "GET|PUT",
                                "/v1/workspaces/[^/]+/items/[^/]+/jobs/",
                                "^/v1/operations/[^/]+$",
                                "/onenote/",
                                "^(?!.*/onenote/)",
                                "^(?!unknown$).",
                                "^(Create|Update|Delete|Get|List)",
                                "a.c",
                                "^/v1/.*/result$",
                                "x[^/]*y",
                                "(?i)^receive",
                                "^$",
                                "\\.json$",
                                "^(?!.*/messages)",
                                "a+b",
                                "^[0-9]+$",
                                "^(a|b)c$",
                                "^.*/onenote/",
                                ".*json",
                                "^a.*",
                                "^.*$",
                                "^.*c$",
                                "(?i)^.*/ONENOTE/.*",
                                "(?i)^Get$",
                                "(?i)json$",
                                "/v1/workspaces/[^/]*/items/",
                                "x[^/]+c",
                                "^/v1/[^/]+/result$"}) {
        QTest::newRow(pattern[0] ? pattern : "(empty)") << QString::fromLatin1(pattern);
    }
}

void TestPolicy::textMatcherAgreesWithRegex()
{
    QFETCH(QString, pattern);
    TextMatcher matcher;
    QVERIFY(matcher.compile(pattern));
    const QRegularExpression regex(pattern);
    QVERIFY(regex.isValid());
    const QStringList texts{QString(),
                            QStringLiteral("fabric"),
                            QStringLiteral("myfabric"),
                            QStringLiteral("fabrics"),
                            QStringLiteral("GET"),
                            QStringLiteral("get"),
                            QStringLiteral("HEAD"),
                            QStringLiteral("GETS"),
                            QStringLiteral("PUT"),
                            QStringLiteral("patch"),
                            QStringLiteral("/v1/workspaces/1f2e/items/9a8b/jobs/instances"),
                            QStringLiteral("/v1/workspaces/1f2e/items/jobs/instances"),
                            QStringLiteral("/v1/workspaces//items/9a8b/jobs/"),
                            QStringLiteral("/v1/operations/abc"),
                            QStringLiteral("/v1/operations/abc/result"),
                            QStringLiteral("/v1.0/me/onenote/pages"),
                            QStringLiteral("/v1.0/me/messages"),
                            QStringLiteral("unknown"),
                            QStringLiteral("unknownx"),
                            QStringLiteral("alice"),
                            QStringLiteral("CreateQueue"),
                            QStringLiteral("Send"),
                            QStringLiteral("ReceiveAndDelete"),
                            QStringLiteral("abc"),
                            QStringLiteral("a/c"),
                            QStringLiteral("xy"),
                            QStringLiteral("x/y"),
                            QStringLiteral("xaaay"),
                            QStringLiteral("p.json"),
                            QStringLiteral("pjson"),
                            QStringLiteral("/orders/messages/head"),
                            QStringLiteral("/orders"),
                            QStringLiteral("aab"),
                            QStringLiteral("123"),
                            QStringLiteral("ac"),
                            QStringLiteral("bc"),
                            QStringLiteral("cc"),
                            QStringLiteral("/v1.0/me/OneNote/pages"),
                            QStringLiteral("P.JSON"),
                            QStringLiteral("gét"),
                            QStringLiteral("GÉT"),
                            QStringLiteral("Gét"),
                            QStringLiteral("xabc"),
                            QStringLiteral("/v1/abc/result"),
                            QStringLiteral("/v1/a/b/result")};
    for (const QString &text : texts) {
        QVERIFY2(matcher.matches(text) == regex.match(text).hasMatch(),
                 qPrintable(QStringLiteral("pattern %1 on \"%2\"").arg(pattern, text)));
        // Twice: the regex fallback answers the second time from its cache.
        QVERIFY(matcher.matches(text) == regex.match(text).hasMatch());
    }
}

void TestPolicy::textMatcherStrategy_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<int>("strategy");
    using S = TextMatcher::Strategy;
    QTest::newRow("literal") << "^fabric$" << int(S::Literal);
    QTest::newRow("alternatives") << "^(GET|HEAD)$" << int(S::Alternatives);
    QTest::newRow("url shape") << "/v1/workspaces/[^/]+/items/" << int(S::Tokens);
    QTest::newRow("lookahead") << "^(?!.*/onenote/)" << int(S::NegativeLookahead);
    QTest::newRow("leading .*") << "^.*/onenote/" << int(S::Literal);
    QTest::newRow("only .*") << "^.*" << int(S::Always);
    QTest::newRow("real regex") << "^[0-9]+$" << int(S::Regex);
}

void TestPolicy::textMatcherStrategy()
{
    // The hot-path patterns of the built-in policies must not fall back to PCRE.
    QFETCH(QString, pattern);
    QFETCH(int, strategy);
    TextMatcher matcher;
    QVERIFY(matcher.compile(pattern));
    QCOMPARE(int(matcher.strategy()), strategy);
}

void TestPolicy::textMatcherComplement_data()
{
    QTest::addColumn<QString>("pattern");
    QTest::addColumn<QString>("other");
    QTest::addColumn<bool>("complement");
    QTest::newRow("not onenote") << "^(?!.*/onenote/)"
                                 << "/onenote/" << true;
    QTest::newRow("other literal") << "^(?!.*/onenote/)"
                                   << "/drive/" << false;
    QTest::newRow("anchored inner") << "^(?!/onenote/)"
                                    << "/onenote/" << false;
    QTest::newRow("lookahead with rest") << "^(?!.*/onenote/)/v1"
                                         << "/onenote/" << false;
    QTest::newRow("case-insensitive other") << "^(?!.*/onenote/)"
                                            << "(?i)/onenote/" << false;
    QTest::newRow("not a lookahead") << "/onenote/"
                                     << "/onenote/" << false;
}

void TestPolicy::textMatcherComplement()
{
    // When the engine answers one condition by negating the other, the two must disagree on
    // every text.
    QFETCH(QString, pattern);
    QFETCH(QString, other);
    QFETCH(bool, complement);
    TextMatcher a;
    TextMatcher b;
    QVERIFY(a.compile(pattern));
    QVERIFY(b.compile(other));
    QCOMPARE(a.isComplementOf(b), complement);
    if (!complement)
        return;
    const QStringList texts{QStringLiteral("/v1.0/me/onenote/pages"),
                            QStringLiteral("/onenote/"),
                            QStringLiteral("/v1.0/users/u/drive"),
                            QStringLiteral(""),
                            QStringLiteral("/onenote"),
                            QStringLiteral("x/onenote/y/onenote/")};
    for (const QString &text : texts)
        QVERIFY2(a.matches(text) != b.matches(text), qPrintable(text));
}

QTEST_GUILESS_MAIN(TestPolicy)
#include "tst_policy.moc"
