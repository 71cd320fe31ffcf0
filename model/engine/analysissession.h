#pragma once
// The dashboard's worker: owns one Analysis on its own thread, reads files and accepts live
// batches there, and hands the GUI immutable snapshots at most ~10 times a second. The GUI
// thread never parses or aggregates (the hotspot PerfParser pattern: work on a worker, plain
// value snapshots back through queued signals, stale results dropped by generation).

#include "engine/reportdata.h"
#include "ingest/sourcereader.h"

#include <QObject>
#include <QStringList>
#include <QTimer>

#include <atomic>
#include <memory>
#include <vector>

namespace ts {

class Analysis;

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
    void ingestBatch(const std::vector<ts::RequestEvent> &events);
    void reset();
    // Emits a snapshot now if anything changed since the last one.
    void publishIfDirty();

Q_SIGNALS:
    void snapshotReady(std::shared_ptr<const ts::DashboardSnapshot> snapshot);
    void progress(qint64 done, qint64 total);
    void sourceFinished(const QString &path, const QString &format, qint64 events, qint64 malformed,
                        const QString &error);
    void malformedRecord(const ts::MalformedRecord &record);

private:
    void ensureTimer();
    std::unique_ptr<Analysis> m_analysis;
    QTimer *m_publishTimer = nullptr;
    quint64 m_generation = 0;
    bool m_dirty = false;
    std::atomic<bool> m_cancel{false};
};

} // namespace ts

Q_DECLARE_METATYPE(std::shared_ptr<const ts::DashboardSnapshot>)
Q_DECLARE_METATYPE(std::vector<ts::RequestEvent>)
Q_DECLARE_METATYPE(ts::SourceOptions)
Q_DECLARE_METATYPE(ts::MalformedRecord)
