#include "dashboardlistener.h"

#include "session/analysissession.h"

#include <QEventLoop>
#include <QFile>
#include <QMetaObject>
#include <QTimer>

namespace ts::live {

namespace {
// The feed's rate and refused-request count are refreshed this often, so a feed that went
// quiet shows its rate falling and its silence growing without any request arriving.
constexpr int kHealthPollMs = 1000;
} // namespace

bool readTokenFile(const QString &path, QString *token, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("%1: %2").arg(path, file.errorString());
        return false;
    }
    if (file.permissions() & (QFileDevice::ReadOther | QFileDevice::WriteOther)) {
        *error = QStringLiteral("%1 is accessible to other users; make it private (chmod 600 %1)")
                     .arg(path);
        return false;
    }
    *token = QString::fromUtf8(file.readLine()).trimmed();
    if (token->isEmpty()) {
        *error = QStringLiteral("%1: no token on its first line").arg(path);
        return false;
    }
    return true;
}

// On the listener's thread: hands each request's records to the session's thread; the
// completion travels with them and is settled by the session's commit.
class DashboardListener::Sink final : public IngestBatchSink
{
public:
    explicit Sink(AnalysisSession *session) : m_session(session) {}
    // Set once, on the listener's thread, before it accepts a connection.
    void setFeed(const QString &feed) { m_feed = feed; }
    [[nodiscard]] QString feed() const { return m_feed; }
    void submit(IngestBatch &&batch, IngestCompletion done) override
    {
        // If the session is gone before the call runs, the lambda (and `done` with it) is
        // destroyed unsettled, which answers 503: nothing is acknowledged that was not stored.
        QMetaObject::invokeMethod(
            m_session, [session = m_session, feed = m_feed, events = std::move(batch.events),
                        malformed = std::move(batch.malformed), deadline = batch.deadline, done] {
                session->ingestAcknowledged(
                    feed, events, malformed, deadline,
                    [done](AnalysisSession::StoreOutcome outcome, const QString &reason) {
                        switch (outcome) {
                        case AnalysisSession::StoreOutcome::Stored:
                            done.complete(IngestOutcome::Stored);
                            break;
                        case AnalysisSession::StoreOutcome::Busy:
                            done.complete(IngestOutcome::Busy, reason);
                            break;
                        case AnalysisSession::StoreOutcome::Failed:
                            done.complete(IngestOutcome::Failed, reason);
                            break;
                        }
                    });
            });
    }

private:
    AnalysisSession *m_session;
    QString m_feed;
};

DashboardListener::DashboardListener(AnalysisSession *session, QObject *parent)
    : QObject(parent), m_session(session)
{
    m_thread.setObjectName(QStringLiteral("listener"));
}

DashboardListener::~DashboardListener()
{
    stop();
}

bool DashboardListener::start(const ListenerOptions &options, QString *error)
{
    if (m_listener) {
        *error = tr("already listening on %1").arg(m_feed);
        return false;
    }
    if (!m_thread.isRunning())
        m_thread.start();
    const QString host = options.address.protocol() == QAbstractSocket::IPv6Protocol
                             ? u'[' + options.address.toString() + u']'
                             : options.address.toString();
    auto sink = std::make_unique<Sink>(m_session);
    Sink *const sinkOnThread = sink.get();
    IngestListener *listener = nullptr;
    QString startError;
    // The listener is made, bound and started on its own thread (its sockets belong there);
    // this thread waits for the outcome, which is quick: nothing but a bind.
    auto *context = new QObject;
    context->moveToThread(&m_thread);
    QMetaObject::invokeMethod(
        context,
        [&] {
            auto *candidate = new IngestListener(*sinkOnThread);
            if (!candidate->start(options, &startError)) {
                delete candidate;
                return;
            }
            // Port 0 asks for any free port: the feed is named once it is known, before the
            // event loop lets the first connection in.
            const QString feed = QStringLiteral("http://%1:%2").arg(host).arg(candidate->port());
            sinkOnThread->setFeed(feed);
            auto *poll = new QTimer(candidate);
            poll->setInterval(kHealthPollMs);
            connect(poll, &QTimer::timeout, candidate,
                    [candidate, session = m_session, feed, reported = qint64(-1)]() mutable {
                        pollHealth(*candidate, session, feed, &reported);
                    });
            poll->start();
            listener = candidate;
        },
        Qt::BlockingQueuedConnection);
    context->deleteLater();
    if (!listener) {
        *error = startError;
        return false;
    }
    m_sink = std::move(sink);
    m_listener = listener;
    m_port = listener->port();
    m_feed = sinkOnThread->feed();
    m_commitTimeoutMs = options.commitTimeoutMs;
    announceFeed();
    Q_EMIT listeningChanged(true);
    return true;
}

void DashboardListener::announceFeed()
{
    if (!m_listener)
        return;
    QMetaObject::invokeMethod(m_session, [session = m_session, feed = m_feed] {
        session->startLiveFeed(feed, QStringLiteral("http"));
    });
}

void DashboardListener::pollHealth(const IngestListener &listener, AnalysisSession *session,
                                   const QString &feed, qint64 *reportedRejections)
{
    // Listener thread.
    const ListenerHealth health = listener.health();
    const qint64 rejected = health.rejectedRequests;
    const QString lastError =
        health.recentErrors.isEmpty() ? QString() : health.recentErrors.constLast();
    const bool changed = rejected != *reportedRejections;
    *reportedRejections = rejected;
    QMetaObject::invokeMethod(session, [session, feed, rejected, lastError, changed] {
        if (changed)
            session->setFeedRejections(feed, rejected, lastError);
        session->refreshLiveFeeds();
    });
}

ListenerHealth DashboardListener::health() const
{
    return m_listener ? m_listener->health() : ListenerHealth{};
}

void DashboardListener::stop()
{
    if (!m_listener) {
        if (m_thread.isRunning()) {
            m_thread.quit();
            m_thread.wait();
        }
        return;
    }
    IngestListener *listener = std::exchange(m_listener, nullptr);
    const int drainMs = m_commitTimeoutMs + 5000;
    QMetaObject::invokeMethod(
        listener,
        [listener, drainMs] {
            // Requests already received are answered once their records are settled: their
            // clients must not be left guessing, or their retries duplicate what was stored.
            listener->stopListening();
            if (listener->pendingRequests() > 0) {
                QEventLoop drain;
                QObject::connect(listener, &IngestListener::drained, &drain, &QEventLoop::quit);
                QTimer::singleShot(drainMs, &drain, &QEventLoop::quit);
                drain.exec();
            }
            delete listener;
        },
        Qt::BlockingQueuedConnection);
    m_thread.quit();
    m_thread.wait();
    m_sink.reset();
    QMetaObject::invokeMethod(m_session, [session = m_session, feed = m_feed] {
        session->finishLiveSource(feed);
    });
    Q_EMIT listeningChanged(false);
}

} // namespace ts::live
