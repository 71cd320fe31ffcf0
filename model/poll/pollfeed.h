#pragma once
// A polled store as a live feed of the dashboard: a Poller run every few seconds on the
// thread this object is moved to, its new rows handed on as batches (like the demo simulator's
// and the tailer's) and its health as the Ingest page's row for the source.

#include "models/ingeststatus.h"
#include "poll/pollsource.h"

#include "core/requestevent.h"

#include <QList>
#include <QObject>

#include <atomic>
#include <memory>

class QTimer;

namespace ts::poll {

class Poller;

class PollFeed : public QObject
{
    Q_OBJECT
public:
    explicit PollFeed(PollSource source, int everySeconds = 5, QObject *parent = nullptr);
    ~PollFeed() override;

    // Thread-safe: stops a poll in progress at its next check.
    void requestStop() { m_stop.store(true); }

public Q_SLOTS:
    // On the feed's thread: polls now, then every `everySeconds`.
    void start();
    void pollNow();

Q_SIGNALS:
    void eventsReady(const QList<ts::RequestEvent> &events);
    void statusChanged(const ts::IngestSourceStatus &status);

private:
    PollSource m_source;
    int m_everySeconds;
    std::atomic<bool> m_stop{false};
    std::unique_ptr<Poller> m_poller; // made on the feed's thread (it owns network objects)
    QTimer *m_timer = nullptr;
};

} // namespace ts::poll
