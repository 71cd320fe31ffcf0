#pragma once
// The dashboard's worker: owns one Analysis on its own thread, reads files and accepts live
// batches there, and hands the GUI immutable snapshots at most ~10 times a second. The GUI
// thread never parses or aggregates (the hotspot PerfParser pattern: work on a worker, plain
// value snapshots back through queued signals, stale results dropped by generation).

#include "engine/reportdata.h"
#include "ingest/sourcereader.h"
#include "models/ingeststatus.h"
#include "policy/policy.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QStringList>

#include <atomic>
#include <memory>

class QTimer;

namespace ts {

class Analysis;
class Workspace;
class WorkspaceWriter;

class AnalysisSession : public QObject
{
    Q_OBJECT
public:
    explicit AnalysisSession(QObject *parent = nullptr);
    ~AnalysisSession() override;

    // Thread-safe: may be called from any thread to stop a long file read.
    void requestCancel() { m_cancel.store(true); }

public Q_SLOTS:
    // All slots run on the session's thread (call them through queued connections or
    // QMetaObject::invokeMethod).
    void openFiles(const QStringList &paths, const ts::SourceOptions &options);
    // A live batch (demo, tail, listener); events carry their source name.
    void ingestBatch(const QList<ts::RequestEvent> &events);
    // Marks a live source as stopped (the ingest panel shows it as finished, not as silent).
    void finishLiveSource(const QString &source);
    // A polled store's own requests (model/poll: last poll, requests, errors, the store's
    // Retry-After) for its row on the Ingest page; its rows come through ingestBatch.
    void updatePolledSource(const ts::IngestSourceStatus &poller);
    // A built-in policy name, a policy file path, or a policy JSON document. Files opened so far
    // are read again under the new policies (the reconstruction redoes); live feeds continue
    // under them from now on.
    void setPolicies(const QString &nameFileOrJson);
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

Q_SIGNALS:
    void snapshotReady(std::shared_ptr<const ts::DashboardSnapshot> snapshot);
    void ingestStatusChanged(const ts::IngestStatus &status);
    void progress(qint64 done, qint64 total);
    void filesFinished();
    void policyError(const QString &message);
    // The workspace the Events page can browse: the one opened, or the session's own scratch
    // workspace that every file read and every live batch is written to.
    void workspaceReady(const QString &path);
    // Outcome of openWorkspace / saveWorkspace / exportReport, for the status bar.
    void operationFinished(bool ok, const QString &message);

private:
    void ensureTimer();
    IngestSourceStatus &sourceStatus(const QString &path);
    void readFiles(const QStringList &paths, const SourceOptions &options);
    // Opens the scratch workspace on first use; false when it cannot be (the session goes on
    // without an Events page).
    bool ensureScratchWorkspace();
    void recordFiles(const QStringList &paths, const SourceOptions &options);
    void recordLiveBatch(const QList<RequestEvent> &events);

    PolicySet m_policies;
    std::unique_ptr<Analysis> m_analysis;
    QTimer *m_publishTimer = nullptr;
    quint64 m_generation = 0;
    bool m_dirty = false;
    std::atomic<bool> m_cancel{false};
    // Files read so far with their options, so a policy change can replay them.
    QList<QPair<QString, SourceOptions>> m_openedFiles;
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
};

} // namespace ts

Q_DECLARE_METATYPE(std::shared_ptr<const ts::DashboardSnapshot>)
Q_DECLARE_METATYPE(ts::SourceOptions)
