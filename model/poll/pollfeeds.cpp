#include "poll/pollfeeds.h"

#include "poll/pollfeed.h"

#include <QThread>

#include <algorithm>

namespace ts::poll {

PollFeeds::PollFeeds(QObject *parent) : QObject(parent) {}

PollFeeds::~PollFeeds()
{
    stopAll();
    for (const std::unique_ptr<QThread> &thread : m_threads)
        thread->wait();
}

PollFeed *PollFeeds::add(const PollSource &source, int everySeconds, const QByteArray &resumeState,
                         qint64 rowsBefore, QString *error)
{
    for (const PollFeed *running : std::as_const(m_feeds)) {
        if (running->source().url == source.url) {
            *error = tr("%1 is polled already").arg(source.url);
            return nullptr;
        }
    }
    auto feed = std::make_unique<PollFeed>(source, everySeconds);
    if (!resumeState.isEmpty() && !feed->resumeFrom(resumeState, rowsBefore)) {
        *error = tr("%1: the stored cursor is unreadable").arg(source.url);
        return nullptr;
    }
    std::erase_if(m_threads,
                  [](const std::unique_ptr<QThread> &thread) { return thread->isFinished(); });
    auto thread = std::make_unique<QThread>();
    thread->setObjectName(QStringLiteral("poll"));
    feed->moveToThread(thread.get());
    connect(thread.get(), &QThread::finished, feed.get(), &QObject::deleteLater);
    thread->start();
    m_threads.push_back(std::move(thread));
    m_feeds.append(feed.get());
    return feed.release();
}

void PollFeeds::start(PollFeed *feed)
{
    QMetaObject::invokeMethod(feed, &PollFeed::start);
}

void PollFeeds::stopAll()
{
    for (PollFeed *feed : std::as_const(m_feeds)) {
        feed->requestStop();
        feed->thread()->quit(); // after the poll in progress; the feed is deleted then
    }
    m_feeds.clear();
}

} // namespace ts::poll
