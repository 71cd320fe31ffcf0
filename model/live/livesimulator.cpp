#include "livesimulator.h"

#include <QDateTime>
#include <QTimer>

namespace ts::live {

LiveSimulator::LiveSimulator(SimulationOptions options, QObject *parent)
    : QObject(parent), m_options(std::move(options))
{
    qRegisterMetaType<QList<ts::RequestEvent>>();
    if (m_options.startMs <= 0)
        m_options.startMs = QDateTime::currentMSecsSinceEpoch() / 1000 * 1000;
    m_simulation = Simulation::create(m_options, &m_error);
}

LiveSimulator::~LiveSimulator() = default;

SimulationOptions LiveSimulator::demoOptions()
{
    SimulationOptions options;
    options.scenario = QStringLiteral("demo");
    // One cycle: the OneNote spiral and its recovery, the Fabric deployment (from 45 min) and
    // the Service Bus producers (60-75 min). Past 75 min the migration only copies calm pages
    // for two more hours: the demo starts again instead (tst_demostory measures it).
    options.loopEveryMs = 75 * 60 * 1000;
    return options;
}

void LiveSimulator::setSpeed(double factor)
{
    const qint64 now = simulatedNowMs();
    m_speed = qMax(0.01, factor);
    if (m_clock.isValid()) {
        m_simulatedBaseMs = now;
        m_realBaseMs = m_clock.elapsed();
    }
}

void LiveSimulator::setIntervalMs(int milliseconds)
{
    m_intervalMs = qMax(10, milliseconds);
    if (m_timer)
        m_timer->setInterval(m_intervalMs);
}

qint64 LiveSimulator::simulatedNowMs() const
{
    if (!m_simulation)
        return 0;
    if (!m_clock.isValid())
        return m_simulation->startMs();
    return m_simulatedBaseMs + qint64(double(m_clock.elapsed() - m_realBaseMs) * m_speed);
}

void LiveSimulator::start()
{
    if (!m_simulation || m_timer)
        return;
    m_timer = new QTimer(this);
    m_timer->setInterval(m_intervalMs);
    connect(m_timer, &QTimer::timeout, this, &LiveSimulator::pump);
    m_simulatedBaseMs = m_simulation->startMs();
    m_realBaseMs = 0;
    m_clock.start();
    m_timer->start();
}

void LiveSimulator::stop()
{
    if (m_timer)
        m_timer->stop();
}

void LiveSimulator::pump()
{
    QList<RequestEvent> events;
    m_simulation->advanceTo(simulatedNowMs(), &events);
    if (!events.isEmpty())
        emit eventsReady(events);
    if (m_simulation->finished()) {
        m_timer->stop();
        emit finished();
    }
}

} // namespace ts::live
