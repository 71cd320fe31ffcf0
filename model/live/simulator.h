#pragma once
// The demo simulator: realistic live sessions, generated deterministically from a seed.
//
//   onenote-migration     a OneNote -> Notion migration of 1,300 pages by three users through
//                         Microsoft Graph: foreground page scans and a background lane whose
//                         naive retry loop (every waiting job sleeps the same 30 s) falls into
//                         the death spiral after the first 429 wave, then recovers once a shared
//                         circuit breaker per user and a 50 % background lane cap are switched on
//   fabric-deployment     a Fabric deployment (items, their long-running operations, pipeline
//                         jobs) by one service principal hitting all three quota groups
//                         (platform, jobScheduler, longRunningOperations), honouring Retry-After
//   servicebus-producers  four producers sharing a Standard namespace near 1000 credits/s,
//                         throttled with 50009 and backing off 10 s as the .NET client does
//   demo                  all three interleaved
//
// The service side answers through SimulatedService, i.e. the same PolicySet and limiter
// algorithms the engine replays; the clients are behaviours (naive fixed-delay retry, shared
// breaker, lanes with a cap, Retry-After honouring, server-busy back-off).
//
// Simulation is pull-driven and single-threaded: advanceTo(t) produces every event sent before t
// in time order. LiveSimulator (livesimulator.h) paces it against the wall clock.

#include "core/requestevent.h"
#include "policy/policy.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <memory>

class QIODevice;

namespace ts::live {

struct SimulationOptions
{
    QString scenario = QStringLiteral("demo");
    quint64 seed = 1;
    // Simulated start instant (ms since the epoch); 0 = 2026-02-18T22:00:00Z, so that files
    // written with the same seed are identical.
    qint64 startMs = 0;
    // Simulated length; 0 = the scenario's natural length (see scenarioDurationMs()).
    qint64 durationMs = 0;
    // Non-zero: the scenario starts again every loopEveryMs (the next cycle's seed is one more)
    // and never finishes: the dashboard's demo, which keeps telling its story while it runs.
    // The service's state carries over from one cycle to the next; durationMs is ignored.
    qint64 loopEveryMs = 0;
    PolicySet policies = PolicySet::builtin();
};

class Simulation
{
public:
    static QStringList scenarioNames();
    static qint64 scenarioDurationMs(const QString &scenario);
    static constexpr qint64 kDefaultStartMs = 1771452000000; // 2026-02-18T22:00:00Z

    // nullptr and *error for an unknown scenario.
    static std::unique_ptr<Simulation> create(const SimulationOptions &options, QString *error);
    ~Simulation();
    Simulation(const Simulation &) = delete;
    Simulation &operator=(const Simulation &) = delete;

    // Appends every event whose ts is before untilMs (and within the duration), in time order.
    void advanceTo(qint64 untilMs, QList<RequestEvent> *out);
    [[nodiscard]] qint64 startMs() const;
    [[nodiscard]] qint64 endMs() const;
    // Everything before this instant has been produced.
    [[nodiscard]] qint64 producedUntilMs() const;
    [[nodiscard]] bool finished() const;

private:
    Simulation();
    struct Impl;
    std::unique_ptr<Impl> d;
};

// Runs a whole simulation at full speed and writes it as canonical NDJSON.
bool writeSimulation(const SimulationOptions &options, QIODevice &out, QString *error,
                     qint64 *eventsWritten = nullptr);

} // namespace ts::live
