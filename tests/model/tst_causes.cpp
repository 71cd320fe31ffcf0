// Why each 429 (issue 19.2) and effective limits from the right 429s only (19.3): one scenario
// file per cause (tests/data/causes, built from the seed documents), replayed against the
// built-in policies. Checks the report-wide counts by cause, the scope's own counts, the
// effective limit (learned only from 429s whose cause is that limit), the corrections, the
// JSON and text reports, and each event's cause (the Events page's column).

#include "engine/reportformat.h"
#include "engine/throttleengine.h"
#include "importertestutil.h"
#include "ingest/sourcereader.h"
#include "signals/throttlesignals.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <algorithm>

using namespace ts;

namespace {

QString counts(const QMap<QString, qint64> &map)
{
    QStringList parts;
    for (auto it = map.cbegin(); it != map.cend(); ++it)
        parts << it.key() + u':' + QString::number(it.value());
    return parts.join(u' ');
}

} // namespace

class TestCauses : public QObject
{
    Q_OBJECT

private slots:
    void causeOfEachThrottle_data();
    void causeOfEachThrottle();
    void headerCorrections_data();
    void headerCorrections();
    void newestCausesAreKept();
};

void TestCauses::causeOfEachThrottle_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("limit");           // the scope checked
    QTest::addColumn<QString>("byCause");         // report-wide, "cause:count ..."
    QTest::addColumn<QString>("observedByCause"); // that scope's
    QTest::addColumn<qint64>("predicted");
    QTest::addColumn<qint64>("corrections");
    QTest::addColumn<double>("effective"); // -1: none learned

    QTest::newRow("limit") << u"cause-limit.ndjson"_qs << u"platform"_qs << u"limit:20"_qs
                           << u"limit:20"_qs << qint64(20) << qint64(0) << 200.0;
    // The penalty's 429s come while the new window has room: not the limit's, and the
    // effective limit stays what the one real exhaustion taught (200), not 0.
    QTest::newRow("retry-after") << u"cause-retry-after.ndjson"_qs << u"platform"_qs
                                 << u"limit:1 retry-after:3"_qs << u"limit:1 retry-after:3"_qs
                                 << qint64(1) << qint64(0) << 200.0;
    // Capacity throttling teaches nothing about the rate limit ("usage 0 of 200" before).
    QTest::newRow("capacity") << u"cause-capacity.ndjson"_qs << u"platform"_qs << u"capacity:5"_qs
                              << u"capacity:5"_qs << qint64(0) << qint64(0) << -1.0;
    QTest::newRow("concurrency") << u"cause-concurrency.ndjson"_qs << u"onenote-concurrent"_qs
                                 << u"concurrency:1"_qs << u"concurrency:1"_qs << qint64(1)
                                 << qint64(0) << 5.0;
    // Three OneNote limits, none exhausted: nothing to pin it on, and no limit learns from it
    // (the per-hour limit showed "effective 10 (3 %)" before).
    QTest::newRow("unexplained") << u"cause-unexplained.ndjson"_qs << u"onenote-per-hour"_qs
                                 << u"unexplained:1"_qs << u"unexplained:1"_qs << qint64(0)
                                 << qint64(0) << -1.0;
    // A retry storm on OneNote: the per-minute limit refuses first, the refused requests are
    // charged (Graph), so the per-hour limit runs out at 400 counted requests of which only 120
    // were accepted. It learns 400 ("throttled at a usage of only 120 of 400" before).
    QTest::newRow("storm") << u"cause-storm.ndjson"_qs << u"onenote-per-hour"_qs << u"limit:480"_qs
                           << u"limit:200"_qs << qint64(200) << qint64(0) << 400.0;
    // The log starts while the minute's quota is used up: the first 429 corrects the bucket
    // (and teaches no effective limit), the next 9 are predicted.
    QTest::newRow("mid-saturation")
        << u"cause-mid-saturation.ndjson"_qs << u"platform"_qs << u"limit:10"_qs << u"limit:10"_qs
        << qint64(9) << qint64(1) << -1.0;
}

void TestCauses::causeOfEachThrottle()
{
    QFETCH(QString, file);
    QFETCH(QString, limit);
    QFETCH(QString, byCause);
    QFETCH(QString, observedByCause);
    QFETCH(qint64, predicted);
    QFETCH(qint64, corrections);
    QFETCH(double, effective);

    testutil::CollectingSink sink;
    const SourceOutcome outcome =
        readSource(QStringLiteral(TS_TEST_DATA_DIR "/causes/") + file, sink);
    QVERIFY2(outcome.readable(), qPrintable(outcome.result.fatalError));
    QCOMPARE(sink.malformed.size(), size_t(0));

    ThrottleEngine engine;
    QList<ThrottleCause> eventCauses;
    for (const RequestEvent &event : sink.events) {
        const ThrottleEngine::Verdict verdict = engine.add(event);
        if (verdict.observedThrottled) {
            QVERIFY(verdict.cause != ThrottleCause::None);
            eventCauses.append(verdict.cause);
        }
    }
    DashboardSnapshot snapshot;
    engine.fillSnapshot(&snapshot);
    const ReportData &report = snapshot.report;
    QCOMPARE(counts(report.throttles.byCause), byCause);
    QCOMPARE(qint64(eventCauses.size()), report.throttles.total);

    const ScopeSummary *scope = nullptr;
    for (const ScopeSummary &s : report.scopes) {
        if (s.limit == limit)
            scope = &s;
    }
    QVERIFY(scope);
    QCOMPARE(counts(scope->observedByCause), observedByCause);
    QCOMPARE(scope->predictedThrottled, predicted);
    QCOMPARE(scope->predictedByCause.value(limit == u"onenote-concurrent" ? u"concurrency"_qs
                                                                          : u"limit"_qs),
             predicted);
    QCOMPARE(scope->corrections, corrections);
    QCOMPARE(qint64(scope->correctionLog.size()), corrections);
    QCOMPARE(scope->effectiveLimit.value_or(-1.0), effective);

    // The Events page's causes: one per throttled or predicted event, in time order.
    QVERIFY(snapshot.eventCauses);
    qint64 observedCauses = 0;
    for (const EventCause &cause : *snapshot.eventCauses)
        observedCauses += cause.observed ? 1 : 0;
    QCOMPARE(observedCauses, report.throttles.total);
    // The bar chart's bins by cause add up to the same counts.
    QMap<QString, qint64> binned;
    for (const ThrottleBin &bin : snapshot.throttleBins) {
        for (auto it = bin.byCause.cbegin(); it != bin.byCause.cend(); ++it)
            binned[it.key()] += it.value();
    }
    QCOMPARE(counts(binned), byCause);

    // The reports say the same.
    const QJsonObject json = QJsonDocument::fromJson(reportToJson(report)).object();
    const QJsonObject jsonCauses = json.value(u"throttles").toObject().value(u"byCause").toObject();
    QMap<QString, qint64> fromJson;
    for (auto it = jsonCauses.begin(); it != jsonCauses.end(); ++it)
        fromJson[it.key()] = it.value().toInteger();
    QCOMPARE(counts(fromJson), byCause);
    for (const QJsonValue &value : json.value(u"scopes").toArray()) {
        const QJsonObject s = value.toObject();
        if (s.value(u"limit").toString() != limit)
            continue;
        QCOMPARE(s.value(u"corrections").toInteger(), corrections);
        QCOMPARE(s.contains(u"correctionLog"), corrections > 0);
        QCOMPARE(s.value(u"observedByCause").toObject().size(), scope->observedByCause.size());
    }
    const QString text = reportToText(report);
    QVERIFY2(text.contains(u"by cause: "_qs), qPrintable(text));
    if (corrections > 0)
        QVERIFY2(text.contains(u"the service said full (429); the model had room for"_qs),
                 qPrintable(text));
}

void TestCauses::headerCorrections_data()
{
    // A success whose limit-percentage or remaining-quota header is far (more than 20 % of the
    // capacity) from the replay's fill, while the log may not show the bucket's whole state:
    // the bucket is corrected to what the service said. Near ones are the model's own noise.
    QTest::addColumn<QString>("header");
    QTest::addColumn<QString>("value");
    QTest::addColumn<bool>("extracted"); // add(event, signals) rather than add(event)
    QTest::addColumn<qint64>("corrections");
    QTest::addColumn<double>("usage"); // after the header's event

    QTest::newRow("limit-percentage far")
        << u"x-ms-throttle-limit-percentage"_qs << u"0.9"_qs << true << qint64(1) << 90.0;
    QTest::newRow("remaining far")
        << u"ratelimit-remaining"_qs << u"20"_qs << true << qint64(1) << 80.0;
    // add(event) extracts the remaining-quota header itself (it read only the percentage).
    QTest::newRow("remaining far, signals not given")
        << u"ratelimit-remaining"_qs << u"20"_qs << false << qint64(1) << 80.0;
    QTest::newRow("limit-percentage near")
        << u"x-ms-throttle-limit-percentage"_qs << u"0.1"_qs << false << qint64(0) << 3.0;
    QTest::newRow("remaining near")
        << u"ratelimit-remaining"_qs << u"96"_qs << true << qint64(0) << 3.0;
}

void TestCauses::headerCorrections()
{
    QFETCH(QString, header);
    QFETCH(QString, value);
    QFETCH(bool, extracted);
    QFETCH(qint64, corrections);
    QFETCH(double, usage);

    QString error;
    const auto policy = Policy::fromJsonBytes(
        R"({"name":"sim","match":{"service":"^sim$"},"limits":[{"name":"l","key":"identity","algorithm":"fixed-window","capacity":100,"windowSeconds":60}]})",
        QStringLiteral("sim"), &error);
    QVERIFY2(policy, qPrintable(error));
    PolicySet set;
    set.add(*policy);
    ThrottleEngine engine(set);
    // 2026-02-18T22:44:05Z: the log starts 5 s into a clock-aligned minute, so the window may
    // hold what the log does not show.
    constexpr qint64 kStart = 1771454645000;
    for (int i = 0; i < 3; ++i) {
        RequestEvent e;
        e.service = QStringLiteral("sim");
        e.identity = QStringLiteral("alpha");
        e.url = QStringLiteral("https://sim.example/v1/items");
        e.method = QStringLiteral("GET");
        e.status = 200;
        e.tsMs = kStart + i * 1000;
        if (i == 2) {
            e.headers.set(header, value);
            if (header == u"ratelimit-remaining")
                e.headers.set(QStringLiteral("ratelimit-limit"), QStringLiteral("100"));
        }
        if (extracted)
            engine.add(e, throttle::extract(e));
        else
            engine.add(e);
    }
    const QList<ScopeSummary> scopes = engine.scopes();
    QCOMPARE(scopes.size(), 1);
    QCOMPARE(scopes.first().corrections, corrections);
    QCOMPARE(scopes.first().currentUsage, usage);
    if (corrections > 0)
        QCOMPARE(scopes.first().correctionLog.first().reason,
                 header == u"ratelimit-remaining" ? u"remaining"_qs : u"limit-percentage"_qs);
}

// A long storm records more causes than the Events page keeps: the newest stay (the rows a live
// operator reads), each with its log line, and a snapshot taken after the oldest were dropped
// still sees the change although the count is back where it was.
void TestCauses::newestCausesAreKept()
{
    ThrottleEngine engine;
    const qint64 start =
        QDateTime::fromString(u"2026-02-18T22:44:00Z"_qs, Qt::ISODate).toMSecsSinceEpoch();
    const qint64 total = qint64(DashboardSnapshot::kMaxEventCauses) + 30'000;
    RequestEvent event;
    event.identity = u"sp-migrator"_qs;
    event.service = u"fabric"_qs;
    event.method = u"GET"_qs;
    event.url = u"https://api.fabric.microsoft.com/v1/workspaces"_qs;
    event.status = 429;
    event.errorCode = u"RequestBlocked"_qs;
    std::shared_ptr<const std::vector<EventCause>> firstPublished;
    for (qint64 i = 0; i < total; ++i) {
        event.tsMs = start + i;
        event.line = i + 1;
        engine.add(event);
        if (i + 1 == qint64(DashboardSnapshot::kMaxEventCauses)) {
            DashboardSnapshot full;
            engine.fillSnapshot(&full);
            firstPublished = full.eventCauses;
        }
    }
    DashboardSnapshot snapshot;
    engine.fillSnapshot(&snapshot);
    QVERIFY(snapshot.eventCauses);
    QVERIFY(snapshot.eventCauses != firstPublished);
    const std::vector<EventCause> &causes = *snapshot.eventCauses;
    QVERIFY(causes.size() <= DashboardSnapshot::kMaxEventCauses);
    QVERIFY(causes.size() >= DashboardSnapshot::kMaxEventCauses * 3 / 4);
    QCOMPARE(causes.back().tsMs, start + total - 1);
    QCOMPARE(causes.back().line, total);
    QVERIFY(causes.front().line > 1); // the oldest went, not the newest
    QVERIFY(
        std::is_sorted(causes.begin(), causes.end(),
                       [](const EventCause &a, const EventCause &b) { return a.tsMs < b.tsMs; }));
}

QTEST_GUILESS_MAIN(TestCauses)
#include "tst_causes.moc"
