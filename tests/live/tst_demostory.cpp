// The demo keeps telling its story for as long as it runs (issue 32.5): the dashboard's demo
// (the three scenarios, looping) is played through one Analysis as the dashboard does, and at
// every instant after the first 10 s of wall-clock time at the demo's speed, the Overview's
// identity model shows at least one identity rising, at limit or blocked. Also: the loop goes
// on past the natural end of the scenarios, and each cycle repeats the story (429s start,
// breakers open, recovery) instead of ending in calm rows.
#include "engine/analysis.h"
#include "live/livesimulator.h"
#include "live/simulator.h"
#include "models/identityurgencymodel.h"

#include <QTest>

using namespace ts;
using namespace ts::models;
using Urgency = IdentityUrgencyModel::Urgency;

namespace {

constexpr qint64 kSecond = 1000;
constexpr qint64 kMinute = 60 * kSecond;

struct Sample
{
    qint64 atMs = 0;
    int troubled = 0; // identities rising, at limit or blocked
    qint64 throttles = 0;
};

// The demo as the dashboard plays it, sampled every `stepMs` of simulated time until `untilMs`
// after its start: at each sample, the Overview's rows at the end of the data.
std::vector<Sample> playDemo(qint64 untilMs, qint64 stepMs)
{
    live::SimulationOptions options = live::LiveSimulator::demoOptions();
    QString error;
    auto simulation = live::Simulation::create(options, &error);
    if (!simulation)
        qFatal("%s", qPrintable(error));
    Analysis analysis;
    IdentityUrgencyModel model;
    std::vector<Sample> samples;
    const qint64 start = simulation->startMs();
    for (qint64 t = start + stepMs; t <= start + untilMs; t += stepMs) {
        QList<RequestEvent> batch;
        simulation->advanceTo(t, &batch);
        analysis.onEvents(std::vector<RequestEvent>(batch.begin(), batch.end()));
        model.setSnapshot(std::make_shared<const DashboardSnapshot>(analysis.snapshot()));
        Sample sample;
        sample.atMs = t - start;
        for (int row = 0; row < model.rowCount(); ++row)
            sample.troubled += model.rowAt(row).urgency != Urgency::Calm ? 1 : 0;
        sample.throttles = analysis.report().throttles.total;
        samples.push_back(sample);
    }
    return samples;
}

} // namespace

class TestDemoStory : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Two full cycles of the loop and into the third, sampled every 10 simulated seconds: from
    // 10 s of wall-clock time on (at the demo's speed), no sample shows every identity calm.
    void somethingIsAlwaysHappening()
    {
        const double speed = live::LiveSimulator::kDemoSpeed;
        const qint64 cycle = live::LiveSimulator::demoOptions().loopEveryMs;
        QVERIFY(cycle > 0);
        const auto samples = playDemo(2 * cycle + 10 * kMinute, 10 * kSecond);
        const qint64 graceMs = qint64(10.0 * speed) * kSecond / 1000 * 1000;
        qint64 calmSince = -1;
        QStringList calmSpans;
        for (const Sample &sample : samples) {
            if (sample.atMs < graceMs)
                continue;
            if (sample.troubled == 0 && calmSince < 0)
                calmSince = sample.atMs;
            if (sample.troubled > 0 && calmSince >= 0) {
                calmSpans
                    << QStringLiteral("%1-%2 s").arg(calmSince / 1000).arg(sample.atMs / 1000);
                calmSince = -1;
            }
        }
        if (calmSince >= 0)
            calmSpans << QStringLiteral("%1 s-end").arg(calmSince / 1000);
        QVERIFY2(calmSpans.isEmpty(),
                 qPrintable(u"every identity calm (simulated time since the start): "_qs +
                            calmSpans.join(u", ")));
    }

    // The loop outlives the scenarios' natural length, and every cycle brings new 429s (the
    // story starts again; it does not end in calm rows).
    void eachCycleThrottlesAgain()
    {
        const qint64 cycle = live::LiveSimulator::demoOptions().loopEveryMs;
        const auto samples = playDemo(3 * cycle, kMinute);
        for (int c = 0; c < 3; ++c) {
            qint64 before = 0;
            qint64 after = 0;
            for (const Sample &sample : samples) {
                if (sample.atMs <= c * cycle)
                    before = sample.throttles;
                if (sample.atMs <= (c + 1) * cycle)
                    after = sample.throttles;
            }
            QVERIFY2(after > before, qPrintable(QStringLiteral("cycle %1 threw no 429").arg(c)));
        }
    }

    // The live simulator never finishes while looping: past three cycles it still streams.
    void liveDemoDoesNotFinish()
    {
        live::SimulationOptions options = live::LiveSimulator::demoOptions();
        options.startMs = live::Simulation::kDefaultStartMs;
        QString error;
        auto simulation = live::Simulation::create(options, &error);
        QVERIFY2(simulation, qPrintable(error));
        QList<RequestEvent> events;
        simulation->advanceTo(simulation->startMs() + 3 * options.loopEveryMs + kMinute, &events);
        QVERIFY(!simulation->finished());
        QVERIFY(!events.isEmpty());
        QVERIFY(events.back().tsMs > simulation->startMs() + 3 * options.loopEveryMs);
    }
};

QTEST_GUILESS_MAIN(TestDemoStory)
#include "tst_demostory.moc"
