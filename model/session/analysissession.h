#pragma once
// The dashboard's worker: owns one Analysis on its own thread, reads files and accepts live
// batches there, and hands the GUI immutable snapshots at most ~10 times a second. The GUI
// thread never parses or aggregates (the hotspot PerfParser pattern: work on a worker, plain
// value snapshots back through queued signals, stale results dropped by generation).

#include "engine/reportdata.h"
#include "ingest/feedhealth.h"
#include "ingest/ingeststatus.h"
#include "ingest/livereorder.h"
#include "ingest/sourcereader.h"
#include "policy/policy.h"
#include "store/workspace.h"

#include <QDeadlineTimer>
#include <QHash>
#include <QList>
#include <QMutex>
#include <QObject>
#include <QSet>
#include <QStringList>
#include <QVariantMap>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>

class QTimer;

namespace ts {

class Analysis;
class IngestSink;
class StoredReplayMerge;
class Workspace;
class WorkspaceFollower;
class WorkspaceReader;
class WorkspaceWriter;
struct PolledSourceRecord;
struct SourceRecord;
struct WriteBatch;

// A polled store's source stored in a workspace, with what a poller needs to resume it.
struct StoredPollSource
{
    QString url;            // as the user gave it (no secret in it)
    QByteArray cursorState; // PollCursor::save(); empty when no row was stored yet
    qint64 rows = 0;        // rows stored so far (a resumed poller numbers on from them)
    qint64 updatedMs = 0;   // when rows and cursor were last stored (another poller running?)
    // Who stored them: "HOST PID" of the dashboard that polled into the workspace (empty when
    // unknown: `throttlescope poll`, an older version). A process of this machine that is gone
    // is no other poller (issue 30.11).
    QString owner;
};

// "HOST PID" of this process, as StoredPollSource::owner says it.
QString thisPollerOwner();
// Whether an owner names a process of this machine that no longer runs (or this very one).
bool pollerOwnerIsGone(const QString &owner);

class AnalysisSession : public QObject
{
    Q_OBJECT
public:
    explicit AnalysisSession(QObject *parent = nullptr);
    ~AnalysisSession() override;

    // Thread-safe: may be called from any thread to stop a long file read.
    void requestCancel() { m_cancel.store(true); }

    // ---- acknowledged live feeds (the dashboard's listener, issue 17) ----------------------
    // Call these on the session's thread (QMetaObject::invokeMethod with a lambda).
    enum class StoreOutcome { Stored, Busy, Failed };
    // Called exactly once per batch, on the scratch writer's thread or the session's.
    using StoredCallback = std::function<void(StoreOutcome outcome, const QString &reason)>;
    // Shows a live feed on the Ingest page before its first event: from now on its silence is
    // measured (and it turns stale), never shown as "nothing to see".
    void startLiveFeed(const QString &feed, const QString &format);
    // A batch whose sender waits for "stored": written to the scratch workspace first; once the
    // transaction committed, `settled(Stored)` is called and the events are analysed (so what
    // the dashboard counts is exactly what was acknowledged). Otherwise `settled(Busy/Failed,
    // reason)` and nothing of it is counted: the client retries. Past `commitBy` it is not
    // written any more.
    void ingestAcknowledged(const QString &feed, const QList<ts::RequestEvent> &events,
                            const QList<ts::MalformedRecord> &malformed, QDeadlineTimer commitBy,
                            StoredCallback settled);
    // The listener's refused requests (4xx/5xx answers) and its newest error, for the feed row.
    void setFeedRejections(const QString &feed, qint64 rejectedRequests, const QString &lastError);
    // Recomputes live feeds' rates and republishes the ingest status (called every second while
    // a feed runs, so a feed that went silent shows its rate falling).
    void refreshLiveFeeds();

public Q_SLOTS:
    // All slots run on the session's thread (call them through queued connections or
    // QMetaObject::invokeMethod).
    void openFiles(const QStringList &paths, const ts::SourceOptions &options);
    // A live batch (demo, tail, listener); events carry their source name.
    void ingestBatch(const QList<ts::RequestEvent> &events);
    // New events and malformed records of a file being followed (live/followedsources.h), in
    // the file's order, named as the file was opened: they join the file's counts.
    void ingestFollowed(const QString &source, const QList<ts::RequestEvent> &events,
                        const QList<ts::MalformedRecord> &malformed);
    // Marks a live source as stopped (the ingest panel shows it as finished, not as silent).
    void finishLiveSource(const QString &source);
    // The files followed now (FollowedSources::followedFilesChanged): "following" on the Ingest
    // page, the others as they are.
    void setFollowedFiles(const QStringList &files);
    // The reorder window of live feeds (ingest/livereorder.h): a fixed number of ms, or -1 for
    // "auto" (sized from the lateness seen, the default).
    void setReorderWindow(qint64 windowMs);
    // The operator started (or stopped) the window's listener: a session saved (or opened) says
    // so in its workspace, and listens again when opened again (listenAgainRequested).
    void rememberListening(bool listening);
    // A polled store's own requests (model/poll: last poll, requests, errors, the store's
    // Retry-After) for its row on the Ingest page; its rows come through ingestPolled.
    void updatePolledSource(const ts::IngestSourceStatus &poller);
    // One answer of a polled store (File > Add Source, issue 21): its new rows and the cursor
    // state that covers them, stored together in one transaction wherever the session keeps
    // its data (the scratch workspace; the session's saved or opened workspace too), so that a
    // restart resumes exactly after the stored rows. Rows of a workspace the session follows
    // are analysed when the follower sees them committed, never twice.
    void ingestPolled(const QString &url, const QString &kind,
                      const QList<ts::RequestEvent> &events,
                      const QList<ts::MalformedRecord> &malformed, const QByteArray &cursorState);
    // A built-in policy name, a policy file path, or a policy JSON document. Files opened so far
    // are read again under the new policies (the reconstruction redoes); live feeds continue
    // under them from now on.
    void setPolicies(const QString &nameFileOrJson);
    // The Breakers page's reference breaker (a `breaker` object of docs/policy.md, e.g.
    // {"preset":"resilience4j"}): given to every policy, now and after later policy changes,
    // and the reconstruction redoes as for setPolicies. "" goes back to the policies' own.
    // A bad object: policyError.
    void setBreakerModel(const QString &breakerJson);
    // Replays a workspace's events (in time order) into the analysis.
    void openWorkspace(const QString &path);
    // Imports every file opened so far into a workspace (idempotent: the ledger skips what is
    // already there), so the session can be reopened later.
    void saveWorkspace(const QString &path);
    // Writes the JSON report (report-json.md) of everything analysed so far.
    void exportReport(const QString &path);
    void reset();
    // Emits a snapshot now if anything changed since the last one.
    void publishIfDirty();

    // ---- session hygiene (issue 17.7) ----
    // File > New Session / Close Session: forgets everything (analysis, files, workspaces,
    // policies, settings), removes the scratch workspace and starts an empty one on demand.
    void newSession();
    // A view setting the session's workspace remembers ("timeWindow"): written to it at once
    // when the session is saved or was opened from one, else when it is saved.
    void setSessionSetting(const QString &key, const QString &value);
    // What the policies were set from ("" = built-in), on the session's thread.
    [[nodiscard]] QString policySource() const { return m_policySource; }

Q_SIGNALS:
    void snapshotReady(std::shared_ptr<const ts::DashboardSnapshot> snapshot);
    void ingestStatusChanged(const ts::IngestStatus &status);
    void progress(qint64 done, qint64 total);
    void filesFinished();
    // A file was read from its start up to endOffset / endLine (its complete lines: an
    // unterminated last line is left for whoever follows the file) as `format` (empty: it could
    // not be read), giving `events` events and `malformed` malformed records.
    void sourceRead(const QString &path, const QString &format, qint64 endOffset, qint64 endLine,
                    qint64 events, qint64 malformed);
    void policyError(const QString &message);
    // The workspace the Events page can browse: the one opened, or the session's own scratch
    // workspace that every file read and every live batch is written to.
    void workspaceReady(const QString &path);
    // Outcome of openWorkspace / saveWorkspace / exportReport, for the status bar.
    void operationFinished(bool ok, const QString &message);
    // ---- session hygiene (issue 17.7) ----
    // The session was saved as `path` (Save As): the window's title follows.
    void workspaceSaved(const QString &path);
    // The settings a workspace just opened remembers (policy, timeWindow, ...).
    void sessionSettingsLoaded(const QVariantMap &settings);
    // The polled sources a workspace just opened stores, with their cursors: the controller
    // resumes polling them (issue 21.2: a restart resumes from the stored cursor).
    void pollSourcesStored(const QList<ts::StoredPollSource> &sources);
    // A workspace opened again whose session had a listener running: listen again.
    void listenAgainRequested();

private:
    void ensureTimer();
    // Live events to the analysis through the reorder window; what waited it out, on the timer.
    void analyseLive(std::vector<RequestEvent> &&events);
    void releaseHeldLiveEvents();
    void noteReorderWindow(); // the window and the late counts into the Ingest page's status
    IngestSourceStatus &sourceStatus(const QString &path);
    // recordToScratch: the same read also copies the events into the scratch workspace.
    // through: where the events go instead of the analysis (a policy change's replay merge);
    // only without recordToScratch.
    void readFiles(const QStringList &paths, const SourceOptions &options, bool recordToScratch,
                   IngestSink *through = nullptr);
    // Opens the scratch workspace on first use; false when it cannot be (the session goes on
    // without an Events page).
    bool ensureScratchWorkspace();
    // Live events (demo, followed lines, listener feeds) into the scratch workspace: a followed
    // file's lines join the file's source; anything else goes to a live source of its own.
    void recordLiveBatch(const QList<RequestEvent> &events);
    // ingestFollowed's counting, for what no policy re-read counted yet.
    void countFollowed(const QString &source, const QList<RequestEvent> &events,
                       const QList<MalformedRecord> &malformed);
    // The scratch source of a live feed `name` (path = name, fingerprint "live:NAME"), made on
    // first use: Save As finds what only the scratch workspace holds by that fingerprint.
    qint64 addLiveScratchSource(const QString &name);
    // Keeps reading what other processes commit to the workspace opened last.
    void followWorkspace(std::unique_ptr<WorkspaceFollower> follower);
    void pollWorkspace();
    // Acknowledged feeds: the scratch writer's onSettled (writer thread), and what follows a
    // commit on the session's thread.
    void onScratchSettled(const std::deque<WriteBatch> &batches, const QString &error);
    // analyse = false: the events are in the analysis already (a policy change replayed them);
    // only the feed's row counts them.
    void applyStoredBatch(const QString &feed, const QList<RequestEvent> &events,
                          const QList<MalformedRecord> &malformed, bool analyse);
    // setPolicies: the live feeds' and polled stores' events, which no file holds, read back
    // from the scratch workspace into the replay's merge. Returns their malformed records.
    qint64 addLiveSourcesReplay(StoredReplayMerge &merge);
    qint64 scratchSourceId(const QString &source);
    // Session hygiene: the session's own workspace (opened or saved) and what it remembers.
    void rememberPolicy(const QString &nameFileOrJson);
    void writeSessionSettings(const QStringList &keys);
    void adoptSavedWorkspace(Workspace &workspace, const QString &path);
    void restoreSessionSettings(WorkspaceReader &reader, const QString &path);
    // setPolicies: an opened workspace's events into the replay's merge (up to what its
    // follower handed over). Returns its malformed records.
    qint64 addWorkspaceReplay(StoredReplayMerge &merge, const QString &path);
    // Polled sources: rows + cursor into the session's workspace (its own writer), and the
    // copy of the scratch workspace's polled rows into a workspace the session is saved as.
    bool storePolledInSessionWorkspace(const QString &url, const QString &kind,
                                       const QList<RequestEvent> &events,
                                       const QList<MalformedRecord> &malformed,
                                       const QByteArray &cursorState);
    void closeSessionWriter();
    // The session's workspace writer, started on first use (false and an error shown when the
    // workspace cannot be written).
    bool ensureSessionWriter();
    // Issue 30.11: a saved (or opened) session goes on writing into its workspace. Files it
    // holds are caught up from their import ledger (importFile resumes where it stopped), live
    // feeds (the listener, the demo) copied on from the scratch workspace, every second.
    void keepFilesInSessionWorkspace(const QStringList &files);
    void catchUpSessionWorkspace();
    QString catchUpLiveSources(Workspace &workspace);
    // Opened again: the files its sources name, caught up and so followed through the
    // workspace's follower; the listener started again when one ran (listenAgainRequested).
    void resumeSessionSources(const QString &path);
    // Save As: the scratch workspace's polled stores, rows and cursors; *copied gets the
    // target's source id of each.
    QString copyPolledSources(Workspace &target, WorkspaceWriter &writer, QSet<qint64> *copied);
    // One polled store's rows from `reader` into target source targetId, then its cursor.
    QString copyPolledRows(WorkspaceReader &reader, const PolledSourceRecord &record,
                           qint64 targetId, WorkspaceWriter &writer);
    // Save As: the live sources' events and malformed records (demo, listener feeds), which no
    // file on disk holds, copied from the scratch workspace. Saving again to the same workspace
    // replaces this session's copy instead of adding a second one.
    QString copyLiveSources(Workspace &target, WorkspaceWriter &writer);
    // Save As: the events and malformed records of the workspaces opened in the session (not
    // the one saved onto), each source under "workspace:PATH#ID" so that saving again
    // replaces it. A polled store stays one, with its rows and cursor (replacing what the
    // target held for it, unless polledCopied says this save copied the session's polls there).
    QString copyOpenedWorkspaces(Workspace &target, const QString &targetPath,
                                 WorkspaceWriter &writer, const QSet<qint64> &polledCopied);
    // One source's rows from `reader` into `target` under `identity`, replacing what an earlier
    // copy under that identity stored; "" or what went wrong.
    QString copySourceRows(WorkspaceReader &reader, const SourceRecord &source, Workspace &target,
                           WorkspaceWriter &writer, const QByteArray &identity);
    void announceStoredPollSources(const QString &path);

    PolicySet m_policies;
    std::unique_ptr<Analysis> m_analysis;
    LiveReorderBuffer m_reorder; // live feeds' events not yet analysed (session thread only)
    QTimer *m_publishTimer = nullptr;
    quint64 m_generation = 0;
    bool m_dirty = false;
    std::atomic<bool> m_cancel{false};
    // Files read so far with their options, so a policy change can replay them.
    QList<QPair<QString, SourceOptions>> m_openedFiles;
    // A policy change reads the followed files again up to their end, which may be past what
    // their follower has handed over yet: per file, the events and malformed records the
    // follower will still deliver that the re-read counted already (ingestFollowed skips them).
    struct CoveredByReread
    {
        qint64 events = 0; // records (IngestSourceStatus::rows), not the requests they stand for
        qint64 malformed = 0;
    };
    QHash<QString, CoveredByReread> m_followedCovered;
    IngestStatus m_ingest;
    QHash<QString, qsizetype> m_sourceIndex;
    // Live sources' recent arrivals, for a rate: events counted since the window start.
    struct RateWindow
    {
        qint64 windowStartMs = 0;
        qint64 events = 0;
    };
    QHash<QString, RateWindow> m_rates;
    // The scratch workspace (a temporary file) and its writer thread; live sources get one
    // source row each.
    QString m_scratchPath;
    std::unique_ptr<Workspace> m_scratch;
    std::unique_ptr<WorkspaceWriter> m_scratchWriter;
    QHash<QString, qint64> m_scratchSources;
    bool m_scratchFailed = false;
    qint64 m_scratchFiles = 0; // files copied into it so far (their sources' fingerprints)
    // Names this session's live sources in the workspaces it is saved as ("live:NAME@ID"), so
    // that saving again replaces them; a new one per session (newSession).
    QByteArray m_liveSessionId;
    // The workspace opened last, followed for commits of other processes, and its poll timer.
    std::unique_ptr<WorkspaceFollower> m_workspaceFollower;
    QTimer *m_workspaceTimer = nullptr;

    // Acknowledged batches waiting for their transaction, by writer sequence number.
    struct AwaitingCommit
    {
        QString feed;
        StoredCallback settled;
        quint64 epoch = 0; // m_sessionEpoch when it was submitted
    };
    // Protects m_awaitingCommit: entries are added on the session's thread (held across
    // trySubmit, which may commit before it returns) and taken on the writer's (onSettled) or
    // the session's (deadline withdrawal).
    QMutex m_awaitingMutex;
    QHash<quint64, AwaitingCommit> m_awaitingCommit;
    // Arrival meters of the acknowledged feeds (session thread only).
    QHash<QString, RateMeter> m_feedRates;

    // Session hygiene (issue 17.7). The workspace settings keys the session restores.
    static constexpr const char *kPolicySetting = Workspace::kPolicySetting;
    // "listen": a listener ran in the saved session; opened again, it listens again.
    static constexpr const char *kListenSetting = "listen";
    static constexpr const char *kSessionSettingKeys[] = {"policy", "timeWindow", "listen"};
    // Bumped by newSession(): batches acknowledged for an older session are not counted.
    // Read on the writer's thread (onScratchSettled), hence atomic.
    std::atomic<quint64> m_sessionEpoch{0};
    // Bumped by addLiveSourcesReplay(): listener batches committed before it were replayed and are
    // not analysed again. Read on the writer's thread (onScratchSettled), hence atomic.
    std::atomic<quint64> m_liveReplays{0};
    quint64 m_scratchCount = 0;                 // scratch workspaces made, for unique names
    QStringList m_openedWorkspaces;             // replayed again under new policies
    QString m_sessionWorkspace;                 // opened or saved: where settings are written
    QString m_policySource;                     // what setPolicies was given last ("" = built-in)
    std::optional<BreakerModel> m_breakerModel; // setBreakerModel's, applied to every policy set
    QHash<QString, QString> m_sessionSettings;
    // Polled rows and cursors written to m_sessionWorkspace (opened or saved), on a writer of
    // its own; the source row of each URL there and in the scratch workspace.
    std::unique_ptr<WorkspaceWriter> m_sessionWriter;
    QString m_sessionWriterPath;
    QHash<QString, qint64> m_sessionPollSources;
    // Files caught up into m_sessionWorkspace (issue 30.11), the scratch workspace's live rows
    // copied there so far (scratch source id -> last row id), and the timer that does both.
    QHash<QString, SourceOptions> m_sessionFiles;
    QHash<qint64, qint64> m_liveCopiedUpTo;
    QTimer *m_catchUpTimer = nullptr;
    QHash<QString, qint64> m_scratchPollSources;
};

} // namespace ts

Q_DECLARE_METATYPE(std::shared_ptr<const ts::DashboardSnapshot>)
Q_DECLARE_METATYPE(ts::SourceOptions)
Q_DECLARE_METATYPE(ts::StoredPollSource)
