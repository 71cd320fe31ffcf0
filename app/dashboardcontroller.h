#pragma once
// Wires the dashboard together: the MainWindow on the GUI thread, the AnalysisSession on its
// worker thread, and the live sources (the demo simulator) feeding it. Owns their lifetimes and
// nothing else: every decision is made in the model or the window.

#include <QList>
#include <QObject>
#include <QSize>
#include <QString>
#include <QStringList>
#include <QThread>

#include "store/scratchrecovery.h"

#include <functional>
#include <memory>
#include <optional>

class MainWindow;
class QMessageBox;
class QWidget;

namespace ts {
class AnalysisSession;
struct StoredPollSource;
namespace live {
class LiveSimulator;
class FollowedSources;
class DashboardListener;
} // namespace live
namespace widgets {
struct ListenSettings;
}
namespace poll {
class PollFeeds;
}
} // namespace ts

namespace ts::app {

struct DashboardOptions
{
    QStringList files;
    bool demo = false;
    // Simulated seconds per real second (--speed); nullopt: the demo's own
    // (live::LiveSimulator::kDemoSpeed), or a fast one for a --screenshot.
    std::optional<double> demoSpeed;
    QString screenshotPath; // non-empty: render, save, quit
    QSize screenshotSize{1600, 1000};
    QString screenshotPage;
    int screenshotDelayMs = -1; // -1: after files are read (demo: a default run time)
    // --reorder-window S|auto: the live feeds' reorder window in ms (-1: auto); unset: the
    // Preferences' choice.
    std::optional<qint64> reorderWindowMs;
};

class DashboardController : public QObject
{
    Q_OBJECT
public:
    explicit DashboardController(DashboardOptions options, QObject *parent = nullptr);
    ~DashboardController() override;

    // Shows the window and starts what the options ask for.
    void start();
    // For benchmarks and tests that watch the pipeline itself.

    // ---- live sessions (issue 17) ----
    // File > Listen…: the loopback listener of `serve`, feeding this session. False with a
    // message (shown in the window too) when it cannot start.
    bool startListening(const ts::widgets::ListenSettings &settings, QString *error = nullptr);
    void stopListening();
    // The operator's choice, kept in the session's workspace (AnalysisSession::rememberListening).
    void rememberListening(bool listening);
    [[nodiscard]] ts::live::DashboardListener *listener() const { return m_listener.get(); }
    [[nodiscard]] MainWindow *window() const { return m_window.get(); }
    [[nodiscard]] ts::AnalysisSession *session() const { return m_session; }
    // File > New Session: the demo stops, the session empties (its scratch workspace goes); a
    // listener keeps listening into the new session. Close Session also stops the listener.
    void newSession();
    void closeSession();
    [[nodiscard]] bool isDemoSession() const { return m_simulator != nullptr; }

    // ---- a crashed session's events (issue 29.4) ----
    // A dashboard that was killed left events in its scratch workspace, and its listener had
    // answered 200 for them: they are the user's. Found when the controller is made (the empty
    // ones are removed then), offered by start() unless a screenshot is taken.
    enum class RecoveryAnswer {
        Recover, // into *destination, which is then opened as the session's workspace
        Delete,  // the user does not want them
        Later,   // kept for the next start
    };
    using RecoveryPrompt =
        std::function<RecoveryAnswer(const ts::OrphanedScratch &orphan, QString *destination)>;
    // Tests answer for the user; the default asks with a message box and a file dialog.
    void setRecoveryPrompt(RecoveryPrompt prompt) { m_recoveryPrompt = std::move(prompt); }
    [[nodiscard]] const QList<ts::OrphanedScratch> &orphanedSessions() const { return m_orphans; }
    void offerRecovery();
    // The question offerRecovery() asks by default (buttons recoverButton, deleteButton, Later).
    static std::unique_ptr<QMessageBox> recoveryBox(QWidget *parent,
                                                    const ts::OrphanedScratch &orphan);

private:
    void startDemo();
    // File > Add Source…: polls the store on a thread of its own into the session (model/poll).
    void addSource(const QString &url, int everySeconds);
    // The polled sources a workspace just opened stores: polled on from their cursors.
    void resumePollSources(const QList<ts::StoredPollSource> &sources);
    // Starts a feed (resumed from a stored cursor when `resume` is given); false and *error
    // when the URL is not a source.
    bool startPollFeed(const QString &url, int everySeconds, const ts::StoredPollSource *resume,
                       QString *error);
    void stopPollFeeds();
    void openFiles(const QStringList &paths);
    void scheduleScreenshot();
    void takeScreenshotAndQuit();

    DashboardOptions m_options;
    std::unique_ptr<MainWindow> m_window;
    QThread m_workerThread;
    ts::AnalysisSession *m_session = nullptr;        // lives on m_workerThread
    ts::live::LiveSimulator *m_simulator = nullptr;  // lives on m_workerThread
    ts::live::FollowedSources *m_followed = nullptr; // lives on m_workerThread
    // Polled stores wait on the network and back off as their stores ask: each on a thread of
    // its own, so neither the analysis, the window nor another store waits for them.
    std::unique_ptr<ts::poll::PollFeeds> m_feeds;
    bool m_screenshotTaken = false;
    QList<ts::OrphanedScratch> m_orphans; // not yet recovered, deleted or left for later
    RecoveryPrompt m_recoveryPrompt;
    // ---- live sessions (issue 17) ----
    std::unique_ptr<ts::live::DashboardListener> m_listener; // GUI thread; serves on its own
    void stopDemo();
    // Real data never mixes into the demo's: opening logs, a workspace or listening while the
    // demo runs first closes the demo's session.
    void leaveDemoSession();
    void openWorkspace(const QString &path);
};

} // namespace ts::app
