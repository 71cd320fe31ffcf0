#include "pollfeed.h"

#include "poll/poller.h"

#include <QDateTime>
#include <QTimer>

namespace ts::poll {

PollFeed::PollFeed(PollSource source, int everySeconds, QObject *parent)
    : QObject(parent), m_source(std::move(source)), m_everySeconds(std::max(1, everySeconds))
{
}

PollFeed::~PollFeed() = default;

bool PollFeed::resumeFrom(const QByteArray &state, qint64 rowsBefore)
{
    Q_ASSERT(!m_poller);
    m_resumeCursor = PollCursor::restore(state, m_source.overlapMs);
    m_rowsBefore = rowsBefore;
    return m_resumeCursor.has_value();
}

void PollFeed::start()
{
    if (!m_timer) {
        m_timer = new QTimer(this);
        m_timer->setSingleShot(true);
        connect(m_timer, &QTimer::timeout, this, &PollFeed::pollNow);
    }
    pollNow();
}

void PollFeed::pollNow()
{
    if (m_stop.load())
        return;
    if (!m_poller) {
        Poller::Options options;
        options.cancel = &m_stop;
        options.maxRetries = 1; // the next poll is the retry: the feed never blocks for long
        m_poller = std::make_unique<Poller>(m_source, options);
        if (m_resumeCursor)
            m_poller->setCursor(*m_resumeCursor);
        m_poller->setRowsBefore(m_rowsBefore);
    }
    const QString kind = sourceKindName(m_source.kind);
    m_poller->pollOnce([this, &kind](QList<RequestEvent> &&events,
                                     QList<MalformedRecord> &&malformed,
                                     const QByteArray &cursorState) {
        // Stopped (New Session): nothing more reaches the session.
        if (m_stop.load())
            return false;
        // An answer with nothing new still moves the cursor (its overlap window): stored too.
        Q_EMIT rowsPolled(m_source.url, kind, events, malformed, cursorState);
        return !m_stop.load();
    });
    Q_EMIT statusChanged(toIngestStatus(m_source, m_poller->health()));
    if (m_stop.load())
        return;
    // A store that asked to wait (Retry-After) or failed is asked again only after its time.
    qint64 delayMs = qint64(m_everySeconds) * 1000;
    const qint64 backoff = m_poller->health().backoffUntilMs - QDateTime::currentMSecsSinceEpoch();
    delayMs = std::max(delayMs, backoff);
    m_timer->start(int(std::min<qint64>(delayMs, 3'600'000)));
}

} // namespace ts::poll
