#pragma once
// Streams a Simulation in real time (or faster, with a speed-up factor) as batches of events
// through a queued signal: the dashboard's demo mode and `throttlescope simulate` without --out.

#include "simulator.h"

#include <QElapsedTimer>
#include <QList>
#include <QObject>

#include <memory>

class QTimer;

namespace ts::live {

class LiveSimulator : public QObject
{
    Q_OBJECT
public:
    // options.startMs 0 = start at the current wall-clock time, so the session looks live.
    explicit LiveSimulator(SimulationOptions options, QObject *parent = nullptr);

    // The dashboard's demo: the three scenarios interleaved, looping for as long as it runs,
    // at a speed where a person sees the fill rise, the 429s start, the breaker open and the
    // recovery (issue 32.5). --speed overrides the speed.
    static SimulationOptions demoOptions();
    static constexpr double kDemoSpeed = 10.0;
    ~LiveSimulator() override;

    void setSpeed(double factor); // simulated seconds per real second, >= 0.01
    [[nodiscard]] double speed() const { return m_speed; }
    void setIntervalMs(int milliseconds); // how often batches are emitted (default 100)
    // Empty when the options were valid.
    [[nodiscard]] QString error() const { return m_error; }
    [[nodiscard]] qint64 simulatedNowMs() const;

public slots:
    void start();
    void stop();

signals:
    void eventsReady(const QList<ts::RequestEvent> &events);
    void finished();

private:
    void pump();

    SimulationOptions m_options;
    std::unique_ptr<Simulation> m_simulation;
    QString m_error;
    QTimer *m_timer = nullptr;
    QElapsedTimer m_clock;
    double m_speed = 1.0;
    int m_intervalMs = 100;
    // Simulated time already accounted for when the speed changed mid-run.
    qint64 m_simulatedBaseMs = 0;
    qint64 m_realBaseMs = 0;
};

} // namespace ts::live
