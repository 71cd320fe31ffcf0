#pragma once
// A polled store as a live feed of the dashboard: a Poller run every few seconds on the
// thread this object is moved to, its new rows handed on as batches with the cursor state that
// covers them (the session stores both in one transaction, so a restart resumes exactly where
// the stored rows end) and its health as the Ingest page's row for the source.

#include "ingest/ingeststatus.h"
#include "poll/pollcursor.h"
#include "poll/pollsource.h"

#include "core/requestevent.h"

#include <QList>
#include <QObject>

#include <atomic>
#include <memory>
#include <optional>

class QTimer;

namespace ts::poll {

class Poller;

class PollFeed : public QObject
{
    Q_OBJECT
public:
    explicit PollFeed(PollSource source, int everySeconds = 5, QObject *parent = nullptr);
    ~PollFeed() override;

    // Before start(): continue from a cursor stored in a workspace (PollCursor::save), after
    // `rowsBefore` rows (the row numbers of malformed rows go on). False when `state` is not a
    // saved cursor (the feed then starts from the beginning of the store).
    bool resumeFrom(const QByteArray &state, qint64 rowsBefore);
    [[nodiscard]] const PollSource &source() const { return m_source; }

    // Thread-safe: stops a poll in progress at its next check.
    void requestStop() { m_stop.store(true); }

public Q_SLOTS:
    // On the feed's thread: polls now, then every `everySeconds`.
    void start();
    void pollNow();

Q_SIGNALS:
    // One answer's new rows, and the cursor state once they are stored. `kind`:
    // sourceKindName(source().kind), the workspace's format name for the source.
    void rowsPolled(const QString &url, const QString &kind, const QList<ts::RequestEvent> &events,
                    const QList<ts::MalformedRecord> &malformed, const QByteArray &cursorState);
    void statusChanged(const ts::IngestSourceStatus &status);

private:
    PollSource m_source;
    int m_everySeconds;
    std::atomic<bool> m_stop{false};
    std::unique_ptr<Poller> m_poller;         // made on the feed's thread (it owns network objects)
    std::optional<PollCursor> m_resumeCursor; // resumeFrom(), handed to the poller once made
    qint64 m_rowsBefore = 0;
    QTimer *m_timer = nullptr;
};

} // namespace ts::poll
