#pragma once
// The dashboard's polled stores, each feed on a thread of its own (issue 29.10). A poll waits
// for its store in a nested event loop (storefetch.h): feeds sharing a thread nest in each
// other's loops, and a feed whose answer has come in cannot go on until every poll started
// above it in the same thread ends, so one store that sends a byte every few seconds held every
// other feed back until its deadline. On their own threads they never wait for each other.

#include "poll/pollsource.h"

#include <QList>
#include <QObject>
#include <QString>

#include <memory>
#include <vector>

class QThread;

namespace ts::poll {

class PollFeed;

class PollFeeds : public QObject
{
    Q_OBJECT
public:
    explicit PollFeeds(QObject *parent = nullptr);
    ~PollFeeds() override; // stops every feed and waits for its thread

    // A feed for `source` on a new thread, not started yet (connect its signals, then
    // start()), resumed from a stored cursor when `resumeState` is not empty. nullptr and
    // *error when the URL is polled already or the cursor is unreadable.
    PollFeed *add(const PollSource &source, int everySeconds, const QByteArray &resumeState,
                  qint64 rowsBefore, QString *error);
    void start(PollFeed *feed);
    // Stops every feed: a poll in progress ends at its next check, then its thread and the
    // feed go. Does not wait for them.
    void stopAll();
    [[nodiscard]] const QList<PollFeed *> &feeds() const { return m_feeds; }

private:
    QList<PollFeed *> m_feeds; // each lives on its thread in m_threads
    // Threads of the feeds, running or stopping; pruned once finished, waited for at the end.
    std::vector<std::unique_ptr<QThread>> m_threads;
};

} // namespace ts::poll
