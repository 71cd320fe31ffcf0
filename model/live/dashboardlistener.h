#pragma once
// File > Listen… in the dashboard: the same loopback listener as `serve` (POST /ingest,
// POST /v1/traces, GET /health, bearer token), feeding the dashboard's AnalysisSession. A POST is
// answered 200 only once its records are committed to the session's workspace, exactly as
// `serve` answers once they are committed to its own: the session counts what was
// acknowledged, no more, no less (AnalysisSession::ingestAcknowledged).
//
// Threads: the listener and its connections run on a thread of their own ("listener"), so
// neither a long file read on the analysis thread nor the GUI holds up clients; each request's
// records are handed to the session's thread, and the answer follows from the writer's commit.
// The methods of this class are called on the thread that created it (the GUI's).

#include "ingestlistener.h"

#include <QObject>
#include <QString>
#include <QThread>

#include <memory>

namespace ts {
class AnalysisSession;
}

namespace ts::live {

// The bearer token on a file's first line; refused when the file is readable by other users
// (the rule `serve --token-file` applies).
bool readTokenFile(const QString &path, QString *token, QString *error);

class DashboardListener : public QObject
{
    Q_OBJECT
public:
    // `session` lives on another thread (or this one) and must outlive the listener.
    explicit DashboardListener(AnalysisSession *session, QObject *parent = nullptr);
    ~DashboardListener() override; // stops

    // Binds and starts serving; the feed appears on the Ingest page at once. False with a
    // message (address in use, a non-loopback address without a token, already listening).
    bool start(const ListenerOptions &options, QString *error);
    // Stops accepting, answers the requests already received once their records are settled
    // (bounded wait), and marks the feed finished.
    void stop();
    [[nodiscard]] bool isListening() const { return m_listener != nullptr; }
    [[nodiscard]] quint16 port() const { return m_port; }
    // "http://127.0.0.1:4318": the feed's name on the Ingest page and in the workspace.
    [[nodiscard]] QString feedName() const { return m_feed; }
    [[nodiscard]] ListenerHealth health() const;
    // Shows the feed again in a new session (the old one's status went with it).
    void announceFeed();

Q_SIGNALS:
    void listeningChanged(bool listening);

private:
    class Sink;
    // On the listener's thread, every second: refused requests and the feed's rate.
    static void pollHealth(const IngestListener &listener, AnalysisSession *session,
                           const QString &feed, qint64 *reportedRejections);

    AnalysisSession *m_session;
    QThread m_thread;
    std::unique_ptr<Sink> m_sink;
    IngestListener *m_listener = nullptr; // lives on m_thread while listening
    quint16 m_port = 0;
    QString m_feed;
    int m_commitTimeoutMs = 5000;
};

} // namespace ts::live
