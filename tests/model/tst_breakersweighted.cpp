// Breakers and weighted events (RequestEvent::weight, issue 21.4): one event of weight n and n
// identical single events at the same instant, for several n, answers and breaker thresholds,
// on the inline path and the workers' batch path of Analysis. The breakers replay a weighted
// event as n samples (Analysis::feedBreakers).
//
// The Breakers page's timeline is the same, every breaker in the same state after every
// instant, and the same summaries; the requests, failures, trips, open time and blocked
// requests are exact.
//
// And, since issue 30.8, every transition with its reason too: each of the n samples carries the
// engine's fill after its own request (ThrottleEngine::Verdict::unitFills), where it used to
// carry the fill after all n (the soft-open a crossing causes happened at the group's first
// sample and named the fill after the group).
#include "engine/analysis.h"
#include "models/breakertransitionsmodel.h"
#include "policy/policy.h"

#include <QAbstractItemModelTester>
#include <QMap>
#include <QTest>

using namespace ts;

namespace {

constexpr qint64 kBase = 1771454640000; // 2026-02-18T22:44:00Z, a whole minute

RequestEvent request(qint64 tsMs, const QString &identity, int status)
{
    RequestEvent e;
    e.service = QStringLiteral("wt");
    e.identity = identity;
    e.app = QStringLiteral("migrator");
    e.method = QStringLiteral("GET");
    e.url = QStringLiteral("https://wt.example/v1/items");
    e.tsMs = tsMs;
    e.status = status;
    return e;
}

PolicySet policyWith(int capacity, const QByteArray &breaker)
{
    const QByteArray json =
        R"({"name":"wt","match":{"service":"^wt$"},"breaker":)" + breaker +
        R"(,"limits":[{"name":"w","key":"identity","algorithm":"fixed-window","capacity":)" +
        QByteArray::number(capacity) + R"(,"windowSeconds":60,"align":"clock"}]})";
    QString error;
    const auto policy = Policy::fromJsonBytes(json, QStringLiteral("wt"), &error);
    if (!policy)
        qFatal("policy: %s", qPrintable(error));
    PolicySet set;
    set.add(*policy);
    return set;
}

QString describe(const BreakerTransition &t)
{
    return QStringLiteral("+%1 ms %2 (%3) %4 -> %5: %6")
        .arg(t.tsMs - kBase)
        .arg(t.scope, t.source, t.from, t.to, t.reason);
}

QStringList describe(const QList<BreakerTransition> &transitions)
{
    QStringList lines;
    for (const BreakerTransition &t : transitions)
        lines.append(describe(t));
    return lines;
}

QStringList describe(const QList<BreakerSummary> &breakers)
{
    QStringList lines;
    for (const BreakerSummary &b : breakers)
        lines.append(QStringLiteral("%1 (%2): %3, %4 transitions, %5 trips, open %6 s, %7 "
                                    "requests, %8 failures, %9 blocked")
                         .arg(b.scope, b.source, b.finalState)
                         .arg(b.transitions)
                         .arg(b.trips)
                         .arg(b.openSeconds)
                         .arg(b.requests)
                         .arg(b.failures)
                         .arg(b.blockedRequests));
    return lines;
}

// What the Breakers page's transition table shows, cell by cell.
QStringList shown(const QList<BreakerTransition> &transitions)
{
    models::BreakerTransitionsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setTransitions(transitions);
    QStringList cells;
    for (int row = 0; row < model.rowCount(); ++row)
        for (int column = 0; column < model.columnCount(); ++column)
            cells.append(model.index(row, column).data(Qt::DisplayRole).toString());
    return cells;
}

// The timeline: per breaker, each instant its state changed across (the state after the
// instant's last transition, when it differs from the state before the instant's first).
QStringList timeline(const QList<BreakerTransition> &transitions)
{
    QMap<QString, QList<BreakerTransition>> byBreaker;
    for (const BreakerTransition &t : transitions)
        byBreaker[t.scope + u' ' + t.source].append(t);
    QStringList lines;
    for (auto it = byBreaker.cbegin(); it != byBreaker.cend(); ++it) {
        const QList<BreakerTransition> &list = it.value();
        for (qsizetype i = 0; i < list.size();) {
            qsizetype last = i;
            while (last + 1 < list.size() && list.at(last + 1).tsMs == list.at(i).tsMs)
                ++last;
            if (list.at(last).to != list.at(i).from)
                lines.append(QStringLiteral("%1 +%2 ms: %3")
                                 .arg(it.key())
                                 .arg(list.at(i).tsMs - kBase)
                                 .arg(list.at(last).to));
            i = last + 1;
        }
    }
    return lines;
}

QStringList describe(const QList<BreakerSummary> &breakers, bool withTransitions)
{
    QList<BreakerSummary> copy = breakers;
    if (!withTransitions)
        for (BreakerSummary &b : copy)
            b.transitions = 0;
    return describe(copy);
}

} // namespace

class TestBreakersWeighted : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void weightedIsNSingles_data();
    void weightedIsNSingles();
};

void TestBreakersWeighted::weightedIsNSingles_data()
{
    QTest::addColumn<QByteArray>("breaker");
    QTest::addColumn<int>("capacity"); // of the fixed window (60 s, on the clock)
    QTest::addColumn<int>("before");   // successes in the 10 s before the group
    QTest::addColumn<int>("n");        // the group: n identical requests at one instant
    QTest::addColumn<int>("status");
    QTest::addColumn<bool>("batched"); // through the workers (>= 1024 events in one batch)

    const QByteArray polly = R"({"preset":"polly-v8"})";
    const QByteArray quick =
        R"({"preset":"polly-v8","minimumThroughput":5,"failureRatio":0.5,"breakDurationSeconds":5})";
    const QByteArray r4j =
        R"({"preset":"resilience4j","windowCalls":10,"minimumThroughput":10,"breakDurationSeconds":5,"halfOpenCalls":3})";
    for (bool batched : {false, true}) {
        const char *path = batched ? "batched" : "inline";
        QTest::addRow("%s: one request", path) << polly << 100 << 0 << 1 << 200 << batched;
        QTest::addRow("%s: successes, fill crosses 80 %% inside the group", path)
            << polly << 50 << 30 << 30 << 200 << batched;
        QTest::addRow("%s: successes, the group starts above 80 %%", path)
            << polly << 50 << 45 << 3 << 200 << batched;
        QTest::addRow("%s: failures open before the fill crosses", path)
            << quick << 20 << 0 << 20 << 500 << batched;
        QTest::addRow("%s: failures, fill crosses first", path)
            << quick << 20 << 14 << 10 << 503 << batched;
        QTest::addRow("%s: 429s, Polly defaults", path)
            << polly << 100 << 90 << 150 << 429 << batched;
        QTest::addRow("%s: 429s, count window", path) << r4j << 40 << 20 << 25 << 429 << batched;
        QTest::addRow("%s: 500s below the minimum throughput", path)
            << polly << 1000 << 10 << 50 << 500 << batched;
        QTest::addRow("%s: successes, count window, no fill", path)
            << r4j << 100000 << 5 << 40 << 200 << batched;
        QTest::addRow("%s: many successes over the limit", path)
            << polly << 500 << 100 << 2000 << 200 << batched;
    }
}

void TestBreakersWeighted::weightedIsNSingles()
{
    QFETCH(QByteArray, breaker);
    QFETCH(int, capacity);
    QFETCH(int, before);
    QFETCH(int, n);
    QFETCH(int, status);
    QFETCH(bool, batched);

    const PolicySet policies = policyWith(capacity, breaker);
    const qint64 at = kBase + 30'000; // the group's instant
    std::vector<RequestEvent> lead;
    // Traffic of other callers (no policy: no fill), so a batch takes the workers' path.
    if (batched)
        for (int i = 0; i < 1100; ++i)
            lead.push_back(request(kBase + i, QStringLiteral("filler-%1").arg(i % 7), 200));
    for (int i = 0; i < before; ++i)
        lead.push_back(request(at - 10'000 + qint64(i) * 10'000 / std::max(1, before),
                               QStringLiteral("alice"), 200));
    // After the group: a request every 2 s for two minutes (probes, the break's end, the
    // soft-open lapsing, the next window).
    std::vector<RequestEvent> tail;
    for (qint64 t = at + 2000; t < at + 120'000; t += 2000)
        tail.push_back(request(t, QStringLiteral("alice"), 200));
    for (RequestEvent &e : lead) {
        if (e.identity.startsWith(u"filler")) {
            e.service = QStringLiteral("other");
            e.app.clear();
        }
    }

    const auto run = [&](bool weighted) {
        std::vector<RequestEvent> events = lead;
        RequestEvent group = request(at, QStringLiteral("alice"), status);
        if (status == 429)
            group.errorCode = QStringLiteral("TooManyRequests");
        if (weighted) {
            group.weight = n;
            events.push_back(group);
        } else {
            for (int i = 0; i < n; ++i)
                events.push_back(group);
        }
        events.insert(events.end(), tail.begin(), tail.end());
        Analysis analysis(policies);
        analysis.onEvents(std::move(events));
        return analysis.report();
    };
    const ReportData weighted = run(true);
    const ReportData singles = run(false);
    QCOMPARE(weighted.events, singles.events);
    if (qEnvironmentVariableIsSet("TS_DUMP"))
        qInfo().noquote() << describe(weighted.breakerTransitions).join(u'\n') << "\n--\n"
                          << describe(singles.breakerTransitions).join(u'\n');
    // The guard: the same timeline and summaries (but for the transition count).
    QCOMPARE(timeline(weighted.breakerTransitions), timeline(singles.breakerTransitions));
    QCOMPARE(describe(weighted.breakers, false), describe(singles.breakers, false));

    // Every transition, its reason and every summary, as the single requests give them: each of
    // the n samples carries the fill after its own request (Verdict::unitFills, issue 30.8).
    QCOMPARE(describe(weighted.breakerTransitions), describe(singles.breakerTransitions));
    QCOMPARE(describe(weighted.breakers, true), describe(singles.breakers, true));
    QCOMPARE(shown(weighted.breakerTransitions), shown(singles.breakerTransitions));
}

QTEST_GUILESS_MAIN(TestBreakersWeighted)
#include "tst_breakersweighted.moc"
