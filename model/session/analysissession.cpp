#include "session/analysissession.h"

#include "engine/analysis.h"
#include "engine/reportformat.h"
#include "session/scratchworkspace.h"
#include "session/storedreplay.h"
#include "store/importjob.h"
#include "store/workspace.h"
#include "store/workspacefollower.h"
#include "store/workspacereader.h"
#include "store/workspacewriter.h"

#include "ingest/formatdetect.h"
#include "ingest/redaction.h"
#include "ingest/timemerge.h"

#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QThread>
#include <QTimer>
#include <QSysInfo>
#include <QUuid>

#include <cerrno>
#include <csignal>

#include <algorithm>

namespace ts {

QString thisPollerOwner()
{
    return QSysInfo::machineHostName() + u' ' + QString::number(QCoreApplication::applicationPid());
}

bool pollerOwnerIsGone(const QString &owner)
{
    const QStringList parts = owner.split(u' ');
    if (parts.size() != 2 || parts.at(0) != QSysInfo::machineHostName())
        return false; // another machine's, or nobody said: only the time can tell
    bool ok = false;
    const qint64 pid = parts.at(1).toLongLong(&ok);
    if (!ok || pid <= 0)
        return false;
    if (pid == QCoreApplication::applicationPid())
        return true; // this very process: an earlier session of it, stopped with that session
    return ::kill(pid_t(pid), 0) != 0 && errno == ESRCH;
}

namespace {
// The dashboard refreshes at most this often, however fast events arrive.
constexpr int kPublishIntervalMs = 100;
// How often a saved session catches its workspace up with its files and live feeds (30.11).
constexpr int kSessionCatchUpMs = 1000;
// While a file is read, the views get a snapshot at most this often, and never more often than
// kReadPublishCostFactor times what building the last one took (the GUI's redraw costs about as
// much again, on the other core): a few percent of the read, even on a loaded host. The
// progress bar moves with every chunk regardless.
constexpr qint64 kReadPublishMinIntervalMs = 2000;
constexpr qint64 kReadPublishCostFactor = 40;
constexpr qint64 kReadPublishMaxIntervalMs = 10000; // a long read still moves on screen
// Records per batch copied into the scratch workspace while a file is read.
constexpr qsizetype kScratchBatchRecords = 4096;
// Records waiting for the scratch writer before a file read waits for it: the events stay in
// memory until committed, and on a busy host the writer is the slower side, so this is what the
// queue holds most of the time (~1 KB an event). A quarter of the default of an import: on the
// 1M-line benchmark 8192 instead of 16384 took ~8 MB off the peak RSS (290-294 MB against
// 294-303, 4 runs each) for at most ~2 % of the wall time (2026-12-03, calm host).
constexpr qsizetype kScratchQueuedRecords = 8192;
// The scratch writer's page cache: rows are appended (to the table, the time index and a few
// block summaries), so the pages it needs are the last few; 4 MiB instead of an import's 32.
constexpr int kScratchCacheKiB = 4096;
// The ingest panel lists this many recent malformed records (all are counted).
constexpr int kMalformedShown = 200;
// Arrival rates are measured over windows of this length.
constexpr qint64 kRateWindowMs = 2000;
// How often a workspace opened in the dashboard is asked whether another process committed
// to it (one PRAGMA data_version while nothing happens): new events show within ~0.35 s.
constexpr int kWorkspacePollMs = 250;
} // namespace

AnalysisSession::AnalysisSession(QObject *parent)
    : QObject(parent), m_policies(PolicySet::builtin()),
      m_analysis(std::make_unique<Analysis>(m_policies))
{
    qRegisterMetaType<std::shared_ptr<const ts::DashboardSnapshot>>();
    qRegisterMetaType<QList<ts::RequestEvent>>();
    qRegisterMetaType<ts::SourceOptions>();
    qRegisterMetaType<ts::IngestStatus>();
    qRegisterMetaType<QList<ts::MalformedRecord>>();
    qRegisterMetaType<QList<ts::StoredPollSource>>();
}

AnalysisSession::~AnalysisSession()
{
    // The writer thread first (it commits what is queued), then the scratch file goes.
    if (m_scratchWriter)
        m_scratchWriter->finish();
    m_scratchWriter.reset();
    m_scratch.reset();
    removeScratchWorkspace(m_scratchPath);
}

bool AnalysisSession::ensureScratchWorkspace()
{
    if (m_scratchWriter)
        return true;
    if (m_scratchFailed)
        return false;
    // A new name per session of this object (New Session), the file private to the user before
    // SQLite opens it: it holds the user's request logs (SQLite gives -wal/-shm the same mode).
    m_scratchPath = newScratchWorkspacePath(quintptr(this) + ++m_scratchCount);
    QString privateError;
    if (!createPrivateFile(m_scratchPath, &privateError)) {
        Q_EMIT operationFinished(
            false, QStringLiteral("no scratch workspace for the Events page: ") + privateError);
        m_scratchPath.clear();
        m_scratchFailed = true;
        return false;
    }
    m_scratch = std::make_unique<Workspace>();
    m_scratchWriter = std::make_unique<WorkspaceWriter>();
    // Acknowledged feeds learn from onSettled when their batch is committed; a failed
    // transaction (one of theirs past its deadline) must not stop the writer for the session.
    WorkspaceWriter::Options writerOptions;
    writerOptions.continueAfterFailedTransaction = true;
    writerOptions.maxQueuedRecords = kScratchQueuedRecords;
    writerOptions.cacheKiB = kScratchCacheKiB;
    writerOptions.throwaway = true; // removed when the session ends: nothing to make durable
    writerOptions.onSettled = [this](const std::deque<WriteBatch> &batches, const QString &error) {
        onScratchSettled(batches, error);
    };
    if (!m_scratch->open(m_scratchPath) || !m_scratchWriter->start(m_scratchPath, writerOptions)) {
        Q_EMIT operationFinished(false,
                                 QStringLiteral("no scratch workspace for the Events page: ") +
                                     m_scratch->errorString() + m_scratchWriter->errorString());
        m_scratchWriter.reset();
        m_scratch.reset();
        m_scratchFailed = true;
        return false;
    }
    Q_EMIT workspaceReady(m_scratchPath);
    return true;
}

void AnalysisSession::recordLiveBatch(const QList<RequestEvent> &events)
{
    if (events.isEmpty() || !ensureScratchWorkspace())
        return;
    WriteBatch batch;
    for (const RequestEvent &event : events) {
        const QString source = event.source.isEmpty() ? QStringLiteral("live") : event.source;
        // A followed file's lines join the file's own source (Save As imports the file itself).
        const qint64 sourceId = addLiveScratchSource(source);
        if (sourceId <= 0)
            continue; // the Events page misses them; the analysis has them
        if (batch.sourceId != sourceId && !batch.events.isEmpty()) {
            m_scratchWriter->submit(std::move(batch));
            batch = WriteBatch{};
        }
        batch.sourceId = sourceId;
        batch.events.append(event);
    }
    if (!batch.events.isEmpty())
        m_scratchWriter->submit(std::move(batch));
}

qint64 AnalysisSession::addLiveScratchSource(const QString &name)
{
    auto it = m_scratchSources.constFind(name);
    if (it != m_scratchSources.cend())
        return *it;
    const qint64 id =
        m_scratch->addSource(name, QStringLiteral("live"), 0, 0, "live:" + name.toUtf8());
    if (id > 0)
        m_scratchSources.insert(name, id);
    return id;
}

void AnalysisSession::ensureTimer()
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_publishTimer)
        return;
    // Created lazily so that it lives on the session's thread, not the constructing one.
    m_publishTimer = new QTimer(this);
    m_publishTimer->setInterval(kPublishIntervalMs);
    connect(m_publishTimer, &QTimer::timeout, this, &AnalysisSession::publishIfDirty);
    m_publishTimer->start();
}

IngestSourceStatus &AnalysisSession::sourceStatus(const QString &path)
{
    auto it = m_sourceIndex.constFind(path);
    if (it == m_sourceIndex.cend()) {
        IngestSourceStatus status;
        status.path = path;
        m_ingest.sources.append(status);
        it = m_sourceIndex.insert(path, m_ingest.sources.size() - 1);
    }
    return m_ingest.sources[*it];
}

void AnalysisSession::openFiles(const QStringList &paths, const SourceOptions &options)
{
    Q_ASSERT(QThread::currentThread() == thread());
    for (const QString &path : paths)
        m_openedFiles.append({path, options});
    // One read feeds the analysis and the scratch workspace the Events page browses.
    readFiles(paths, options, true);
    if (m_scratchWriter) {
        // The analysis is on screen already (filesFinished); the Events page gets the rows
        // once they are committed, with the query indexes its filters want.
        m_scratchWriter->flush();
        m_scratch->createQueryIndexes();
        Q_EMIT workspaceReady(m_scratchPath);
    }
}

void AnalysisSession::readFiles(const QStringList &paths, const SourceOptions &options,
                                bool recordToScratch, IngestSink *through)
{
    ensureTimer();
    m_cancel.store(false);

    // Counts per source and keeps the latest malformed records for the ingest panel while the
    // Analysis aggregates; with a writer, also copies what it reads into the scratch workspace
    // (one read feeds both: issue 17.5). It sees each file in that file's order, before the
    // files are merged by time into the Analysis (issue 19.5, ingest/timemerge.h).
    class FileObserver final : public MergeInputObserver
    {
    public:
        struct File
        {
            QString path;
            WriteBatch batch; // batch.sourceId: the file's scratch source, 0 = not copied
        };
        FileObserver(AnalysisSession &session, QList<File> files, WorkspaceWriter *writer)
            : m_session(session), m_files(std::move(files)), m_writer(writer)
        {
        }
        // The events reach the scratch workspace another way (ScratchTee): this copies only
        // the malformed records.
        void shareEvents() { m_eventsShared = true; }
        void inputEvents(int input, const std::vector<RequestEvent> &events) override
        {
            File &file = m_files[input];
            IngestSourceStatus &status = m_session.sourceStatus(file.path);
            status.rows += qint64(events.size());
            status.events += countedRequests(events);
            status.lastEventTsMs = events.back().tsMs;
            if (m_writer && file.batch.sourceId > 0 && !m_eventsShared) {
                file.batch.events.append(QList<RequestEvent>(events.cbegin(), events.cend()));
                if (file.batch.recordCount() >= kScratchBatchRecords)
                    flush(file);
            }
        }
        void inputMalformed(int input, const MalformedRecord &record) override
        {
            File &file = m_files[input];
            ++m_session.sourceStatus(file.path).errors;
            IngestStatus &ingest = m_session.m_ingest;
            ++ingest.malformedTotal;
            if (ingest.malformed.size() >= kMalformedShown)
                ingest.malformed.removeFirst();
            ingest.malformed.append(record);
            if (m_writer && file.batch.sourceId > 0)
                file.batch.malformed.append(record);
        }
        void inputFinished(int input, const SourceOutcome &outcome) override
        {
            File &file = m_files[input];
            flush(file);
            IngestSourceStatus &done = m_session.sourceStatus(file.path);
            done.format = outcome.format;
            done.finished = true;
            done.lastEventReceivedMs = QDateTime::currentMSecsSinceEpoch();
            if (!outcome.result.fatalError.isEmpty()) {
                ++done.errors;
                ++m_session.m_ingest.malformedTotal;
                m_session.m_ingest.malformed.append(
                    redact::malformedRecord(file.path, 0, outcome.result.fatalError));
            }
            m_session.m_dirty = true;
            if (!outcome.result.cancelled && file.path != u"-")
                Q_EMIT m_session.sourceRead(
                    file.path, outcome.readable() ? outcome.format : QString(),
                    outcome.result.endOffset, outcome.result.endLine, done.rows, done.errors);
        }

    private:
        // Hands what is batched to the writer (blocks while its queue is full).
        void flush(File &file)
        {
            if (!m_writer || file.batch.recordCount() == 0)
                return;
            const qint64 sourceId = file.batch.sourceId;
            if (!m_writer->submit(std::move(file.batch)))
                m_writer = nullptr; // the Events page misses the rest; the analysis goes on
            file.batch = WriteBatch{};
            file.batch.sourceId = sourceId;
        }

        AnalysisSession &m_session;
        QList<File> m_files;
        WorkspaceWriter *m_writer;
        bool m_eventsShared = false;
    };

    // One file: the merge hands on the reader's chunks as they are, in the file's order, so
    // the analysis and the scratch writer can read the very same vectors, masked once here.
    // Copying each event for the writer cost ~15 % of the dashboard's CPU (a million events'
    // strings referenced and released again, fresh pages for the copies). Several files are
    // merged event by event and their sources interleave: FileObserver copies them per file.
    class ScratchTee final : public IngestSink
    {
    public:
        // Without a writer, what is read goes to through (when given) instead of the analysis.
        ScratchTee(Analysis &analysis, WorkspaceWriter *writer, qint64 sourceId,
                   IngestSink *through)
            : m_analysis(analysis), m_writer(writer), m_sourceId(sourceId),
              m_through(through ? *through : analysis)
        {
        }
        void onEvent(RequestEvent &&event) override
        {
            std::vector<RequestEvent> one;
            one.push_back(std::move(event));
            onEvents(std::move(one));
        }
        void onEvents(std::vector<RequestEvent> &&events) override
        {
            if (events.empty())
                return;
            if (!m_writer) {
                m_through.onEvents(std::move(events));
                return;
            }
            for (RequestEvent &event : events)
                redact::ensureMasked(event);
            auto shared = std::make_shared<const std::vector<RequestEvent>>(std::move(events));
            WriteBatch batch;
            batch.sourceId = m_sourceId;
            batch.sharedEvents.push_back(shared);
            m_analysis.onSharedEvents(std::move(shared));
            // After the hand-over: the analysis works while this waits for the writer.
            if (!m_writer->submit(std::move(batch)))
                m_writer = nullptr; // the Events page misses the rest; the analysis goes on
        }
        void onMalformed(MalformedRecord &&record) override
        {
            m_through.onMalformed(std::move(record));
        }

    private:
        Analysis &m_analysis;
        WorkspaceWriter *m_writer;
        const qint64 m_sourceId;
        IngestSink &m_through;
    };

    QList<FileObserver::File> files;
    for (const QString &path : paths) {
        IngestSourceStatus &status = sourceStatus(path);
        status.events = 0;
        status.rows = 0;
        status.errors = 0;
        status.finished = false;
        qint64 scratchSource = 0;
        if (recordToScratch && path != u"-" && ensureScratchWorkspace()) {
            const QFileInfo info(path);
            scratchSource = m_scratch->addSource(
                // A pipe cannot be peeked at twice: its format is the reader's business.
                info.absoluteFilePath(),
                info.isFile() ? detectFileFormat(path, nullptr) : QStringLiteral("auto"),
                info.lastModified().toMSecsSinceEpoch(), 0,
                QByteArrayLiteral("session:") + QByteArray::number(++m_scratchFiles) + ':' +
                    QFile::encodeName(info.absoluteFilePath()));
            if (scratchSource > 0)
                m_scratchSources.insert(path, scratchSource); // followed lines join it
        }
        FileObserver::File file;
        file.path = path;
        file.batch.sourceId = qMax<qint64>(0, scratchSource);
        files.append(std::move(file));
    }
    const qint64 sharedSource = files.size() == 1 ? files.front().batch.sourceId : 0;
    FileObserver observer(*this, std::move(files), m_scratchWriter.get());
    ScratchTee tee(*m_analysis, sharedSource > 0 ? m_scratchWriter.get() : nullptr, sharedSource,
                   through);
    if (sharedSource > 0 && m_scratchWriter)
        observer.shareEvents();
    MergeOptions merge;
    merge.cancel = &m_cancel;
    // The files may still be written to: a last line without its newline is left for the
    // follower to take whole, as `tail` does (live/followedsources.h).
    merge.holdUnterminatedTail = true;
    QElapsedTimer sincePublish;
    sincePublish.start();
    QElapsedTimer sinceStart;
    sinceStart.start();
    qint64 publishEveryMs = kReadPublishMinIntervalMs;
    merge.progress = [this, &sincePublish, &sinceStart, &publishEveryMs](qint64 done,
                                                                         qint64 total) {
        Q_EMIT progress(done, total); // the progress bar: cheap, every chunk
        m_dirty = true;
        // Long reads show their analysis in the views too, not only at the end, but rarely:
        // a snapshot (series for every bucket) and the views redrawing it cost as much as
        // reading tens of thousands of lines, and a busy host makes both slower.
        if (sincePublish.elapsed() < publishEveryMs)
            return;
        // Not when the read's end, and with it the complete picture, comes sooner than half an
        // interval at the pace so far: that snapshot would be on screen for a moment, and
        // alive while the final one is built (tens of MB of series on a million-line file).
        const qint64 elapsedMs = sinceStart.elapsed();
        const bool endingSoon =
            total > 0 && done > 0 && elapsedMs > 0 &&
            double(total - done) * double(elapsedMs) / double(done) < double(publishEveryMs) / 2;
        if (!endingSoon) {
            QElapsedTimer cost;
            cost.start();
            publishIfDirty();
            publishEveryMs =
                qBound(kReadPublishMinIntervalMs, cost.elapsed() * kReadPublishCostFactor,
                       kReadPublishMaxIntervalMs);
            sincePublish.restart();
        }
    };
    const MergeResult merged = readSourcesMerged(paths, tee, options, merge, &observer);
    if (merged.cancelled) {
        // The files a cancel stopped before their end: their reading is over all the same.
        for (const QString &path : paths)
            sourceStatus(path).finished = true;
    }
    m_dirty = true;
    Q_EMIT progress(1, 1);
    // The rows committed and the events they held freed before the final snapshot is built:
    // the two would otherwise peak together (a queue's worth of events, and the series of every
    // bucket). The writer is through them within a queue's time of the reader.
    if (recordToScratch && m_scratchWriter)
        m_scratchWriter->flush();
    publishIfDirty();
    Q_EMIT filesFinished();
}

void AnalysisSession::ingestBatch(const QList<RequestEvent> &events)
{
    Q_ASSERT(QThread::currentThread() == thread());
    ensureTimer();
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    QString lastSource;
    IngestSourceStatus *status = nullptr;
    for (const RequestEvent &event : events) {
        if (!status || event.source != lastSource) {
            lastSource = event.source;
            status = &sourceStatus(event.source.isEmpty() ? QStringLiteral("live") : event.source);
            status->live = true;
            status->finished = false;
            if (status->format.isEmpty())
                status->format = QStringLiteral("ndjson");
        }
        ++status->rows;
        status->events += event.countedRequests();
        status->lastEventTsMs = event.tsMs;
        status->lastEventReceivedMs = now;
        RateWindow &rate = m_rates[status->path];
        if (now - rate.windowStartMs >= kRateWindowMs) {
            if (rate.windowStartMs > 0)
                status->eventsPerSecond =
                    double(rate.events) * 1000.0 / double(now - rate.windowStartMs);
            rate.windowStartMs = now;
            rate.events = 0;
        }
        rate.events += event.countedRequests();
    }
    analyseLive(std::vector<RequestEvent>(events.cbegin(), events.cend()));
    m_dirty = !events.isEmpty() || m_dirty;
    recordLiveBatch(events);
}

void AnalysisSession::ingestFollowed(const QString &source, const QList<RequestEvent> &events,
                                     const QList<MalformedRecord> &malformed)
{
    Q_ASSERT(QThread::currentThread() == thread());
    ensureTimer();
    // The Events page gets every line the follower read; a policy re-read may have counted the
    // first of them already (setPolicies): those are not counted again.
    recordLiveBatch(events);
    qsizetype skipEvents = 0;
    qsizetype skipMalformed = 0;
    if (auto covered = m_followedCovered.find(source); covered != m_followedCovered.end()) {
        skipEvents = qsizetype(qMin<qint64>(covered->events, events.size()));
        skipMalformed = qsizetype(qMin<qint64>(covered->malformed, malformed.size()));
        covered->events -= skipEvents;
        covered->malformed -= skipMalformed;
        if (covered->events == 0 && covered->malformed == 0)
            m_followedCovered.erase(covered);
    }
    const QList<RequestEvent> fresh = events.mid(skipEvents);
    const QList<MalformedRecord> freshMalformed = malformed.mid(skipMalformed);
    countFollowed(source, fresh, freshMalformed);
}

void AnalysisSession::countFollowed(const QString &source, const QList<RequestEvent> &events,
                                    const QList<MalformedRecord> &malformed)
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    IngestSourceStatus &status = sourceStatus(source);
    status.live = true;
    if (!events.isEmpty()) {
        const qint64 requests = countedRequests(events);
        status.rows += events.size();
        status.events += requests;
        status.lastEventTsMs = events.constLast().tsMs;
        status.lastEventReceivedMs = now;
        RateWindow &rate = m_rates[status.path];
        if (now - rate.windowStartMs >= kRateWindowMs) {
            if (rate.windowStartMs > 0)
                status.eventsPerSecond =
                    double(rate.events) * 1000.0 / double(now - rate.windowStartMs);
            rate.windowStartMs = now;
            rate.events = 0;
        }
        rate.events += requests;
        analyseLive(std::vector<RequestEvent>(events.cbegin(), events.cend()));
    }
    for (const MalformedRecord &record : malformed) {
        ++status.errors;
        ++m_ingest.malformedTotal;
        if (m_ingest.malformed.size() >= kMalformedShown)
            m_ingest.malformed.removeFirst();
        m_ingest.malformed.append(record);
        m_analysis->onMalformed(MalformedRecord(record));
    }
    m_dirty = true;
}

void AnalysisSession::finishLiveSource(const QString &source)
{
    sourceStatus(source).finished = true;
    m_dirty = true;
}

// ---- the live reorder window (issue 30.4) ---------------------------------------------------

void AnalysisSession::setReorderWindow(qint64 windowMs)
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_reorder.setFixedWindow(windowMs >= 0 ? std::optional<qint64>(windowMs) : std::nullopt);
    releaseHeldLiveEvents();
    noteReorderWindow();
}

void AnalysisSession::analyseLive(std::vector<RequestEvent> &&events)
{
    if (events.empty())
        return;
    std::vector<RequestEvent> ready;
    m_reorder.add(std::move(events), QDateTime::currentMSecsSinceEpoch(), ready);
    if (!ready.empty())
        m_analysis->onEvents(std::move(ready));
    noteReorderWindow();
}

void AnalysisSession::releaseHeldLiveEvents()
{
    if (m_reorder.isEmpty())
        return;
    std::vector<RequestEvent> ready;
    m_reorder.release(QDateTime::currentMSecsSinceEpoch(), ready);
    if (ready.empty())
        return;
    m_analysis->onEvents(std::move(ready));
    m_dirty = true;
}

void AnalysisSession::noteReorderWindow()
{
    const qint64 window = m_reorder.windowMs();
    if (window != m_ingest.reorderWindowMs || m_reorder.lateEvents() != m_ingest.lateEvents) {
        m_ingest.reorderWindowMs = window;
        m_ingest.reorderWindowAuto = !m_reorder.fixedWindow();
        m_ingest.lateEvents = m_reorder.lateEvents();
        for (IngestSourceStatus &status : m_ingest.sources)
            status.lateEvents = m_reorder.lateEvents(status.path);
        m_dirty = true;
    }
}

void AnalysisSession::setFollowedFiles(const QStringList &files)
{
    for (const QString &path : files)
        (void)sourceStatus(path); // a file appeared in a watched folder: a row of its own
    for (IngestSourceStatus &status : m_ingest.sources) {
        const bool followed = files.contains(status.path);
        m_dirty = m_dirty || status.followed != followed;
        status.followed = followed;
    }
}

void AnalysisSession::updatePolledSource(const IngestSourceStatus &poller)
{
    IngestSourceStatus &status = sourceStatus(poller.path);
    status.format = poller.format;
    status.live = true;
    status.lastPollMs = poller.lastPollMs;
    status.lagMs = poller.lagMs;
    status.requests = poller.requests;
    status.lastError = poller.lastError;
    status.errors = poller.errors;
    m_dirty = true;
}

void AnalysisSession::ingestPolled(const QString &url, const QString &kind,
                                   const QList<RequestEvent> &events,
                                   const QList<MalformedRecord> &malformed,
                                   const QByteArray &cursorState)
{
    Q_ASSERT(QThread::currentThread() == thread());
    ensureTimer();
    // A saved or opened session keeps the rows with their cursor. When the session follows
    // that workspace, the follower analyses them once committed: counting them here as well
    // would count them twice. Not stored there (a write error): analysed here, and a restart
    // re-reads them from the cursor stored before.
    const bool storedInSession =
        !m_sessionWorkspace.isEmpty() &&
        storePolledInSessionWorkspace(url, kind, events, malformed, cursorState);
    const bool followerAnalyses =
        storedInSession && m_workspaceFollower && m_workspaceFollower->path() == m_sessionWorkspace;
    IngestSourceStatus &status = sourceStatus(url);
    status.live = true;
    status.finished = false;
    status.countedInWorkspace = followerAnalyses;
    if (status.format.isEmpty())
        status.format = kind;
    if (!events.isEmpty()) {
        status.rows += events.size();
        status.events += countedRequests(events);
        status.lastEventTsMs = events.constLast().tsMs;
        status.lastEventReceivedMs = QDateTime::currentMSecsSinceEpoch();
    }
    m_dirty = m_dirty || !events.isEmpty() || !malformed.isEmpty();
    if (followerAnalyses)
        return;
    analyseLive(std::vector<RequestEvent>(events.cbegin(), events.cend()));
    for (const MalformedRecord &record : malformed) {
        ++m_ingest.malformedTotal;
        if (m_ingest.malformed.size() >= kMalformedShown)
            m_ingest.malformed.removeFirst();
        m_ingest.malformed.append(record);
        m_analysis->onMalformed(MalformedRecord(record));
    }
    if (!ensureScratchWorkspace())
        return;
    qint64 &sourceId = m_scratchPollSources[url];
    if (sourceId == 0)
        sourceId = m_scratch->ensurePolledSource(url, kind);
    if (sourceId == 0) {
        m_scratchPollSources.remove(url);
        return;
    }
    WriteBatch batch;
    batch.sourceId = sourceId;
    batch.events = events;
    batch.malformed = malformed;
    batch.pollCursor = cursorState; // Save As copies the rows with it (copyPolledSources)
    m_scratchWriter->submit(std::move(batch));
}

bool AnalysisSession::storePolledInSessionWorkspace(const QString &url, const QString &kind,
                                                    const QList<RequestEvent> &events,
                                                    const QList<MalformedRecord> &malformed,
                                                    const QByteArray &cursorState)
{
    if (!ensureSessionWriter())
        return false;
    qint64 sourceId = m_sessionPollSources.value(url);
    if (sourceId == 0) {
        Workspace workspace;
        if (workspace.open(m_sessionWorkspace)) {
            sourceId = workspace.ensurePolledSource(url, kind);
            // Who polls into it: a later session of this machine tells its own earlier poller,
            // gone with its process, from another one (issue 30.11).
            workspace.setSetting(QStringLiteral("poller:") + url, thisPollerOwner());
        }
        if (sourceId == 0) {
            Q_EMIT operationFinished(false, m_sessionWorkspace + QStringLiteral(": ") +
                                                workspace.errorString());
            return false;
        }
        m_sessionPollSources.insert(url, sourceId);
    }
    WriteBatch batch;
    batch.sourceId = sourceId;
    batch.events = events;
    batch.malformed = malformed;
    batch.pollCursor = cursorState; // committed with these rows, or not at all
    if (!m_sessionWriter->submit(std::move(batch))) {
        Q_EMIT operationFinished(false, m_sessionWorkspace + QStringLiteral(": ") +
                                            m_sessionWriter->errorString());
        closeSessionWriter();
        return false;
    }
    return true;
}

// ---- a saved session goes on writing into its workspace (issue 30.11) -----------------------

void AnalysisSession::keepFilesInSessionWorkspace(const QStringList &files)
{
    for (const QString &path : files) {
        if (path == u"-" || !QFileInfo(path).isFile())
            continue;
        SourceOptions options;
        for (const auto &[opened, openedOptions] : std::as_const(m_openedFiles)) {
            if (opened == path)
                options = openedOptions;
        }
        m_sessionFiles.insert(path, options);
    }
    if (!m_catchUpTimer) {
        m_catchUpTimer = new QTimer(this);
        m_catchUpTimer->setInterval(kSessionCatchUpMs);
        connect(m_catchUpTimer, &QTimer::timeout, this,
                &AnalysisSession::catchUpSessionWorkspace);
    }
    m_catchUpTimer->start();
}

void AnalysisSession::catchUpSessionWorkspace()
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_sessionWorkspace.isEmpty() || !ensureSessionWriter())
        return;
    Workspace workspace;
    if (!workspace.open(m_sessionWorkspace))
        return;
    QString problems;
    for (auto it = m_sessionFiles.cbegin(); it != m_sessionFiles.cend(); ++it) {
        // The import ledger says where this file's rows end: only what was written since is
        // read (nothing, most seconds), exactly once.
        QFile probe(it.key());
        QString error;
        std::unique_ptr<LogReader> reader;
        if (probe.open(QIODevice::ReadOnly))
            reader = readerFor(probe, it.key(), it.value(), &error);
        probe.close();
        if (!reader)
            continue; // gone for now (rotated, unmounted): tried again next time
        const ImportResult result = importFile(workspace, *m_sessionWriter, it.key(), *reader);
        if (!result.ok())
            problems += it.key() + QStringLiteral(": ") + result.error + u'\n';
    }
    problems += catchUpLiveSources(workspace);
    m_sessionWriter->flush(); // committed before the next look reads the ledger
    if (!problems.isEmpty())
        Q_EMIT operationFinished(false, problems.trimmed());
}

QString AnalysisSession::catchUpLiveSources(Workspace &workspace)
{
    if (!m_scratch || !m_scratchWriter)
        return {};
    QList<SourceRecord> live;
    for (const SourceRecord &source : m_scratch->sources()) {
        if (source.fingerprint.startsWith("live:"))
            live.append(source);
    }
    if (live.isEmpty())
        return {};
    if (m_liveSessionId.isEmpty())
        m_liveSessionId = QUuid::createUuid().toByteArray(QUuid::WithoutBraces);
    m_scratchWriter->flush();
    WorkspaceReader reader;
    if (!reader.open(m_scratchPath))
        return m_scratchPath + QStringLiteral(": ") + reader.errorString() + u'\n';
    for (const SourceRecord &source : std::as_const(live)) {
        // The copy Save As made of this feed (its fingerprint, this session's id) is added to;
        // a feed started since gets one.
        const auto copied = m_liveCopiedUpTo.insert(source.id, m_liveCopiedUpTo.value(source.id));
        const QByteArray identity = source.fingerprint + '@' + m_liveSessionId;
        qint64 targetId = 0;
        for (const SourceRecord &existing : workspace.sources())
            targetId = existing.fingerprint == identity ? existing.id : targetId;
        if (targetId == 0) {
            targetId = workspace.addSource(source.path, source.format,
                                           QDateTime::currentMSecsSinceEpoch(), 0, identity);
        }
        if (targetId == 0)
            return workspace.errorString() + u'\n';
        if (m_workspaceFollower && m_workspaceFollower->path() == m_sessionWorkspace)
            m_workspaceFollower->skipSource(targetId); // analysed here already
        EventFilter filter;
        filter.sourceId = source.id;
        for (;;) {
            const QList<StoredEvent> page = reader.fetchPage(filter, *copied, 8192);
            if (page.isEmpty())
                break;
            WriteBatch batch;
            batch.sourceId = targetId;
            for (const StoredEvent &stored : page)
                batch.events.append(stored.event);
            *copied = page.constLast().rowId;
            if (!m_sessionWriter->submit(std::move(batch)))
                return m_sessionWriter->errorString() + u'\n';
        }
    }
    return {};
}

void AnalysisSession::resumeSessionSources(const QString &path)
{
    WorkspaceReader reader;
    if (!reader.open(path))
        return;
    // The files its rows came from: caught up from where the workspace stopped reading them,
    // and so followed (the workspace's follower hands their new rows to the analysis).
    QStringList files;
    for (const SourceRecord &source : reader.sources()) {
        if (source.fingerprint.startsWith("live:") || source.fingerprint.startsWith("poll:") ||
            source.fingerprint.startsWith("session:") || !QFileInfo(source.path).isFile())
            continue;
        files.append(source.path);
        IngestSourceStatus &status = sourceStatus(source.path);
        status.format = source.format;
        status.followed = true;
        status.countedInWorkspace = true; // its events are the workspace's row's
    }
    if (!files.isEmpty())
        keepFilesInSessionWorkspace(files);
    if (m_sessionSettings.contains(QLatin1StringView(kListenSetting)))
        Q_EMIT listenAgainRequested();
    m_dirty = true;
}

void AnalysisSession::rememberListening(bool listening)
{
    if (listening)
        m_sessionSettings.insert(QLatin1StringView(kListenSetting), QStringLiteral("1"));
    else
        m_sessionSettings.remove(QLatin1StringView(kListenSetting));
    writeSessionSettings({QLatin1StringView(kListenSetting)});
}

bool AnalysisSession::ensureSessionWriter()
{
    if (m_sessionWriterPath != m_sessionWorkspace)
        closeSessionWriter();
    if (m_sessionWriter)
        return true;
    auto writer = std::make_unique<WorkspaceWriter>();
    if (!writer->start(m_sessionWorkspace)) {
        Q_EMIT operationFinished(false, m_sessionWorkspace + QStringLiteral(": ")
                                            + writer->errorString());
        return false;
    }
    m_sessionWriter = std::move(writer);
    m_sessionWriterPath = m_sessionWorkspace;
    return true;
}

void AnalysisSession::closeSessionWriter()
{
    if (m_sessionWriter && !m_sessionWriter->finish())
        Q_EMIT operationFinished(false, m_sessionWriterPath + QStringLiteral(": ") +
                                            m_sessionWriter->errorString());
    m_sessionWriter.reset();
    m_sessionWriterPath.clear();
    m_sessionPollSources.clear();
}

QString AnalysisSession::copyPolledSources(Workspace &target, WorkspaceWriter &writer,
                                           QSet<qint64> *copied)
{
    if (!m_scratch || !m_scratchWriter || m_scratchPollSources.isEmpty())
        return {};
    // Everything polled so far is committed to the scratch workspace before it is copied.
    m_scratchWriter->flush();
    const std::optional<QList<PolledSourceRecord>> polled = m_scratch->polledSources();
    if (!polled)
        return m_scratchPath + QStringLiteral(": ") + m_scratch->errorString() + u'\n';
    WorkspaceReader reader;
    if (!reader.open(m_scratchPath))
        return m_scratchPath + QStringLiteral(": ") + reader.errorString() + u'\n';
    QString problems;
    for (const PolledSourceRecord &record : *polled) {
        const qint64 targetId = target.ensurePolledSource(record.source.path, record.source.format);
        if (targetId == 0) {
            problems += target.errorString() + u'\n';
            continue;
        }
        copied->insert(targetId);
        problems += copyPolledRows(reader, record, targetId, writer);
    }
    return problems;
}

QString AnalysisSession::copyPolledRows(WorkspaceReader &reader, const PolledSourceRecord &record,
                                        qint64 targetId, WorkspaceWriter &writer)
{
    // The rows first, the cursor with the last batch: a saved workspace never holds a cursor
    // past rows it does not have (a restart would skip them).
    EventFilter filter;
    filter.sourceId = record.source.id;
    QList<RequestEvent> held;
    bool submitted = reader.forEachEventInTimeOrder(
        8192,
        [&](const QList<RequestEvent> &chunk) {
            if (!held.isEmpty()) {
                WriteBatch batch;
                batch.sourceId = targetId;
                batch.events = std::move(held);
                if (!writer.submit(std::move(batch)))
                    return false;
            }
            held = chunk;
            return true;
        },
        filter);
    WriteBatch last;
    last.sourceId = targetId;
    last.events = std::move(held);
    if (!record.cursorState.isEmpty())
        last.pollCursor = record.cursorState;
    submitted = submitted && writer.submit(std::move(last));
    if (!submitted)
        return record.source.path + QStringLiteral(": ") + reader.errorString() +
               writer.errorString() + u'\n';
    return {};
}

QString AnalysisSession::copyLiveSources(Workspace &target, WorkspaceWriter &writer)
{
    if (!m_scratch || !m_scratchWriter)
        return {};
    // Everything received so far is committed to the scratch workspace before it is copied.
    m_scratchWriter->flush();
    QList<SourceRecord> live;
    for (const SourceRecord &source : m_scratch->sources()) {
        if (source.fingerprint.startsWith("live:"))
            live.append(source);
    }
    if (live.isEmpty())
        return {};
    if (m_liveSessionId.isEmpty())
        m_liveSessionId = QUuid::createUuid().toByteArray(QUuid::WithoutBraces);
    WorkspaceReader reader;
    if (!reader.open(m_scratchPath))
        return m_scratchPath + QStringLiteral(": ") + reader.errorString() + u'\n';
    QString problems;
    for (const SourceRecord &source : std::as_const(live)) {
        // This session saved to this workspace before: its copy is replaced by the whole feed.
        problems += copySourceRows(reader, source, target, writer,
                                   source.fingerprint + '@' + m_liveSessionId);
        // What comes later is copied on into the same source (catchUpLiveSources).
        m_liveCopiedUpTo.insert(source.id, reader.lastEventRowId());
    }
    return problems;
}

QString AnalysisSession::copyOpenedWorkspaces(Workspace &target, const QString &targetPath,
                                              WorkspaceWriter &writer,
                                              const QSet<qint64> &polledCopied)
{
    QString problems;
    const QString targetFile = QFileInfo(targetPath).canonicalFilePath();
    for (const QString &opened : std::as_const(m_openedWorkspaces)) {
        const QString openedFile = QFileInfo(opened).canonicalFilePath();
        if (openedFile.isEmpty() || openedFile == targetFile)
            continue; // saved onto itself: its rows are there already
        WorkspaceReader reader;
        if (!reader.open(opened)) {
            problems += opened + QStringLiteral(": ") + reader.errorString() + u'\n';
            continue;
        }
        // Its polled stores stay polled stores, with their cursors: the saved session resumes
        // polling after the rows it holds, as the opened one would have.
        QHash<qint64, PolledSourceRecord> polled;
        {
            Workspace openedWorkspace;
            if (openedWorkspace.open(openedFile)) {
                if (const auto records = openedWorkspace.polledSources()) {
                    for (const PolledSourceRecord &record : *records)
                        polled.insert(record.source.id, record);
                }
            }
        }
        const QList<SourceRecord> sources = reader.sources();
        for (const SourceRecord &source : sources) {
            const auto poll = polled.constFind(source.id);
            if (poll != polled.cend()) {
                const qint64 targetId = target.ensurePolledSource(source.path, source.format);
                if (targetId == 0) {
                    problems += target.errorString() + u'\n';
                    continue;
                }
                // Saved again: replaced by what the workspace holds now, unless this save has
                // just copied the session's own polls of the store there.
                if (!polledCopied.contains(targetId) && !target.discardSourceData(targetId)) {
                    problems += target.errorString() + u'\n';
                    continue;
                }
                problems += copyPolledRows(reader, *poll, targetId, writer);
                continue;
            }
            // Named by where it came from: saving again (from this session or another that
            // opened the same workspace) replaces the copy with what the workspace holds now.
            const QByteArray identity =
                "workspace:" + QFile::encodeName(openedFile) + '#' + QByteArray::number(source.id);
            problems += copySourceRows(reader, source, target, writer, identity);
        }
    }
    return problems;
}

QString AnalysisSession::copySourceRows(WorkspaceReader &reader, const SourceRecord &source,
                                        Workspace &target, WorkspaceWriter &writer,
                                        const QByteArray &identity)
{
    qint64 targetId = 0;
    for (const SourceRecord &existing : target.sources()) {
        if (existing.fingerprint == identity)
            targetId = existing.id;
    }
    if (targetId > 0 && !target.discardSourceData(targetId))
        return target.errorString() + u'\n';
    if (targetId == 0)
        targetId = target.addSource(source.path, source.format, QDateTime::currentMSecsSinceEpoch(),
                                    0, identity);
    if (targetId == 0)
        return target.errorString() + u'\n';
    EventFilter filter;
    filter.sourceId = source.id;
    bool submitted = reader.forEachEventInTimeOrder(
        8192,
        [&](const QList<RequestEvent> &chunk) {
            WriteBatch batch;
            batch.sourceId = targetId;
            batch.events = chunk;
            return writer.submit(std::move(batch));
        },
        filter);
    qint64 afterRowId = 0;
    while (submitted) {
        const QList<StoredMalformed> page = reader.malformed(source.id, afterRowId, 1000);
        if (page.isEmpty())
            break;
        WriteBatch batch;
        batch.sourceId = targetId;
        for (const StoredMalformed &record : page)
            batch.malformed.append(record.record);
        afterRowId = page.constLast().rowId;
        submitted = writer.submit(std::move(batch));
    }
    if (!submitted)
        return source.path + QStringLiteral(": ") + reader.errorString() + writer.errorString() +
               u'\n';
    return {};
}

void AnalysisSession::announceStoredPollSources(const QString &path)
{
    Workspace workspace;
    if (!workspace.open(path))
        return;
    const std::optional<QList<PolledSourceRecord>> polled = workspace.polledSources();
    if (!polled || polled->isEmpty())
        return;
    QList<StoredPollSource> sources;
    for (const PolledSourceRecord &record : *polled) {
        sources.append({record.source.path, record.cursorState, record.rows, record.updatedMs,
                         workspace.setting(QStringLiteral("poller:") + record.source.path)
                             .value_or(QString())});
    }
    Q_EMIT pollSourcesStored(sources);
}

void AnalysisSession::setPolicies(const QString &nameFileOrJson)
{
    Q_ASSERT(QThread::currentThread() == thread());
    const QString trimmed = nameFileOrJson.trimmed();
    QString error;
    std::optional<PolicySet> loaded = PolicySet::fromSetting(trimmed, &error);
    if (!loaded) {
        Q_EMIT policyError(error);
        return;
    }
    PolicySet policies = std::move(*loaded);
    if (m_breakerModel)
        policies.setBreaker(*m_breakerModel); // the Breakers page's choice
    m_policies = policies;
    m_analysis = std::make_unique<Analysis>(m_policies);
    // Held live events are replayed with the rest (the scratch workspace, the files, the
    // followed workspace up to what its follower handed over).
    m_reorder.clear();
    m_ingest.malformed.clear();
    m_ingest.malformedTotal = 0;
    rememberPolicy(trimmed);
    // Replay what can be replayed: the files, read again in their order, and the workspaces.
    // Files that share their options are read together, merged by time (ingest/timemerge.h),
    // as a single open of them reads them; the scratch workspace has them already.
    QHash<QString, bool> seen;
    QList<std::pair<QStringList, SourceOptions>> groups;
    for (const auto &opened : std::as_const(m_openedFiles)) {
        // Named, not a structured binding: clang 14 (the fuzz build) cannot capture those.
        const QString &path = opened.first;
        const SourceOptions &options = opened.second;
        if (seen.contains(path))
            continue;
        seen.insert(path, true);
        auto group = std::find_if(groups.begin(), groups.end(), [&options](const auto &g) {
            return g.second.format == options.format && g.second.csvMapping == options.csvMapping &&
                   g.second.accessLogFormat == options.accessLogFormat;
        });
        if (group == groups.end())
            groups.append({QStringList{path}, options});
        else
            group->first.append(path);
    }
    // What each file had given the session so far (its first read, then what its follower
    // handed over), less what an earlier re-read took ahead of the follower: where the
    // follower stands. The re-read reads to the file's end; anything past that point the
    // follower will deliver again.
    QHash<QString, CoveredByReread> delivered;
    for (const auto &opened : std::as_const(m_openedFiles)) {
        const IngestSourceStatus &status = sourceStatus(opened.first);
        const CoveredByReread pending = m_followedCovered.value(opened.first);
        delivered.insert(opened.first, CoveredByReread{status.rows - pending.events,
                                                       status.errors - pending.malformed});
    }
    // What only a workspace holds comes back merged by time into the files' re-read
    // (session/storedreplay.h): one timeline, as the first reads gave the analysis.
    StoredReplayMerge stored(*m_analysis, &m_cancel);
    qint64 storedMalformed = 0;
    for (const QString &workspace : std::as_const(m_openedWorkspaces))
        storedMalformed += addWorkspaceReplay(stored, workspace);
    const qint64 liveMalformed = addLiveSourcesReplay(stored);
    for (const auto &[paths, options] : std::as_const(groups))
        readFiles(paths, options, false, &stored);
    stored.finish();
    m_analysis->countMalformed(storedMalformed + liveMalformed);
    m_ingest.malformedTotal += liveMalformed;
    if (!stored.errorString().isEmpty())
        Q_EMIT operationFinished(false, stored.errorString());
    m_followedCovered.clear();
    for (auto it = delivered.cbegin(); it != delivered.cend(); ++it) {
        const IngestSourceStatus &status = sourceStatus(it.key());
        const CoveredByReread ahead{qMax<qint64>(0, status.rows - it->events),
                                    qMax<qint64>(0, status.errors - it->malformed)};
        if (ahead.events > 0 || ahead.malformed > 0)
            m_followedCovered.insert(it.key(), ahead);
    }
    m_dirty = true;
    publishIfDirty();
}

qint64 AnalysisSession::addLiveSourcesReplay(StoredReplayMerge &merge)
{
    if (!m_scratch || !m_scratchWriter)
        return 0;
    // Everything submitted is committed first (onScratchSettled has run for it): the listener's
    // batches committed so far are counted by this replay, and not again when their commit
    // reaches this thread (the generation moves on).
    m_scratchWriter->flush();
    ++m_liveReplays;
    auto reader = std::make_unique<WorkspaceReader>();
    if (!reader->open(m_scratchPath))
        return 0;
    // Every live feed and polled store in one read by time; a file's followed lines are not
    // among them (the files are read again).
    EventFilter filter;
    qint64 malformed = 0;
    for (const SourceRecord &source : m_scratch->sources()) {
        if (!source.fingerprint.startsWith("live:") && !source.fingerprint.startsWith("poll:"))
            continue;
        filter.sourceIds.append(source.id);
        malformed += reader->countMalformed(source.id);
    }
    if (filter.sourceIds.isEmpty())
        return 0;
    auto cursor = reader->timeOrdered(filter);
    merge.addStore(std::move(reader), std::move(cursor));
    return malformed;
}

void AnalysisSession::openWorkspace(const QString &path)
{
    Q_ASSERT(QThread::currentThread() == thread());
    ensureTimer();
    // Another process (tail, serve, import) may be writing it: replay what is committed, then
    // follow the commits (store/workspacefollower.h).
    auto follower = std::make_unique<WorkspaceFollower>();
    if (!follower->open(path)) {
        Q_EMIT operationFinished(false, path + QStringLiteral(": ") + follower->errorString());
        return;
    }
    {
        // The session's settings (policy, time window) saved in it come back with it.
        WorkspaceReader settings;
        if (settings.open(path))
            restoreSessionSettings(settings, path);
    }
    IngestSourceStatus &status = sourceStatus(path);
    status.format = QStringLiteral("workspace");
    qint64 requests = 0;
    const bool ok = follower->replay(8192, [&](const QList<RequestEvent> &chunk) {
        requests += countedRequests(chunk);
        for (const RequestEvent &event : chunk)
            m_analysis->add(event);
        return !m_cancel.load();
    });
    const qint64 events = follower->replayedEvents;
    m_analysis->countMalformed(follower->replayedMalformed);
    Q_EMIT workspaceReady(path);
    IngestSourceStatus &done = sourceStatus(path);
    done.rows = events;
    done.events = requests;
    done.finished = true;
    m_dirty = true;
    publishIfDirty();
    // A workspace on a read-only file system is read as it is, and the status bar says so.
    const QString readOnly = follower->isReadOnly()
                                 ? tr(" (opened read-only: its file system cannot be written)")
                                 : QString();
    Q_EMIT operationFinished(ok, ok ? QString(path + QStringLiteral(": %1 events").arg(requests) +
                                              readOnly)
                                    : QString(path + QStringLiteral(": ") + follower->errorString()));
    if (ok) {
        followWorkspace(std::move(follower));
        announceStoredPollSources(path);
        resumeSessionSources(path);
    }
}

void AnalysisSession::followWorkspace(std::unique_ptr<WorkspaceFollower> follower)
{
    m_workspaceFollower = std::move(follower);
    if (!m_workspaceTimer) {
        m_workspaceTimer = new QTimer(this);
        m_workspaceTimer->setInterval(kWorkspacePollMs);
        connect(m_workspaceTimer, &QTimer::timeout, this, &AnalysisSession::pollWorkspace);
    }
    m_workspaceTimer->start();
}

void AnalysisSession::pollWorkspace()
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (!m_workspaceFollower)
        return;
    WorkspaceFollower::News news = m_workspaceFollower->poll();
    if (news.events.isEmpty() && news.malformed == 0)
        return;
    IngestSourceStatus &status = sourceStatus(m_workspaceFollower->path());
    status.live = true;
    status.finished = false; // followed: what others commit keeps arriving
    status.rows += news.events.size();
    status.events += countedRequests(news.events);
    status.errors += news.malformed;
    if (!news.events.isEmpty()) {
        status.lastEventTsMs = news.events.constLast().tsMs;
        status.lastEventReceivedMs = QDateTime::currentMSecsSinceEpoch();
        analyseLive(std::vector<RequestEvent>(std::make_move_iterator(news.events.begin()),
                                              std::make_move_iterator(news.events.end())));
    }
    m_analysis->countMalformed(news.malformed);
    m_ingest.malformedTotal += news.malformed;
    m_dirty = true;
}

void AnalysisSession::saveWorkspace(const QString &path)
{
    Q_ASSERT(QThread::currentThread() == thread());
    Workspace workspace;
    WorkspaceWriter writer;
    if (!workspace.open(path) || !writer.start(path)) {
        Q_EMIT operationFinished(false, path + QStringLiteral(": ") + workspace.errorString() +
                                            writer.errorString());
        return;
    }
    QString problems;
    for (const auto &[file, options] : std::as_const(m_openedFiles)) {
        QFile probe(file);
        QString error;
        std::unique_ptr<LogReader> reader;
        if (probe.open(QIODevice::ReadOnly))
            reader = readerFor(probe, file, options, &error);
        probe.close();
        if (!reader) {
            problems += error + u'\n';
            continue;
        }
        const ImportResult result = importFile(workspace, writer, file, *reader);
        if (!result.ok())
            problems += file + QStringLiteral(": ") + result.error + u'\n';
    }
    // Polled stores' rows go with their cursors: the saved session resumes polling after them.
    QSet<qint64> polledCopied;
    problems += copyPolledSources(workspace, writer, &polledCopied);
    // What only the scratch workspace holds: the demo's and the listener's events.
    problems += copyLiveSources(workspace, writer);
    // The workspaces opened in the session (with what other processes committed to them).
    problems += copyOpenedWorkspaces(workspace, path, writer, polledCopied);
    const bool ok = writer.finish() && problems.isEmpty();
    if (ok)
        adoptSavedWorkspace(workspace, path);
    Q_EMIT operationFinished(ok, ok ? QString(QStringLiteral("saved ") + path)
                                    : QString(problems + writer.errorString()));
}

void AnalysisSession::exportReport(const QString &path)
{
    Q_ASSERT(QThread::currentThread() == thread());
    QSaveFile file(path);
    const bool ok = file.open(QIODevice::WriteOnly) &&
                    file.write(reportToJson(m_analysis->report())) >= 0 && file.commit();
    Q_EMIT operationFinished(ok, ok ? QString(QStringLiteral("report written to ") + path)
                                    : QString(path + QStringLiteral(": ") + file.errorString()));
}

void AnalysisSession::reset()
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_analysis = std::make_unique<Analysis>(m_policies);
    m_reorder.clear();
    m_openedFiles.clear();
    m_followedCovered.clear();
    m_workspaceFollower.reset();
    if (m_workspaceTimer)
        m_workspaceTimer->stop();
    m_ingest = {};
    m_sourceIndex.clear();
    m_rates.clear();
    m_feedRates.clear();
    m_dirty = true;
    publishIfDirty();
}

void AnalysisSession::publishIfDirty()
{
    Q_ASSERT(QThread::currentThread() == thread());
    releaseHeldLiveEvents();
    if (!m_dirty)
        return;
    m_dirty = false;
    auto snapshot = std::make_shared<DashboardSnapshot>(m_analysis->snapshot());
    snapshot->generation = ++m_generation;
    Q_EMIT snapshotReady(std::move(snapshot));
    Q_EMIT ingestStatusChanged(m_ingest);
}

// ---- acknowledged live feeds ----------------------------------------------------------------

void AnalysisSession::startLiveFeed(const QString &feed, const QString &format)
{
    Q_ASSERT(QThread::currentThread() == thread());
    ensureTimer();
    IngestSourceStatus &status = sourceStatus(feed);
    status.live = true;
    status.finished = false;
    status.format = format;
    status.liveSinceMs = QDateTime::currentMSecsSinceEpoch();
    m_dirty = true;
    publishIfDirty();
}

qint64 AnalysisSession::scratchSourceId(const QString &source)
{
    return addLiveScratchSource(source);
}

void AnalysisSession::ingestAcknowledged(const QString &feed, const QList<RequestEvent> &events,
                                         const QList<MalformedRecord> &malformed,
                                         QDeadlineTimer commitBy, StoredCallback settled)
{
    Q_ASSERT(QThread::currentThread() == thread());
    // The session may have been busy (a file read) past the client's deadline: the listener
    // has answered 503 or is about to; storing it now would duplicate the client's retry.
    if (commitBy.hasExpired()) {
        settled(StoreOutcome::Busy, QStringLiteral("the dashboard was busy"));
        return;
    }
    if (!ensureScratchWorkspace()) {
        settled(StoreOutcome::Failed,
                QStringLiteral("the dashboard has no workspace to store into"));
        return;
    }
    WriteBatch batch;
    batch.sourceId = scratchSourceId(feed);
    batch.events = events;
    batch.malformed = malformed;
    batch.commitBy = commitBy;
    quint64 sequence = 0;
    {
        QMutexLocker locker(&m_awaitingMutex);
        switch (m_scratchWriter->trySubmit(std::move(batch), &sequence)) {
        case WorkspaceWriter::SubmitStatus::Queued:
            m_awaitingCommit.insert(
                sequence, AwaitingCommit{feed, std::move(settled), m_sessionEpoch.load()});
            break;
        case WorkspaceWriter::SubmitStatus::QueueFull:
            locker.unlock();
            settled(StoreOutcome::Busy,
                    QStringLiteral("the dashboard's workspace writer is behind"));
            return;
        case WorkspaceWriter::SubmitStatus::Stopped:
            locker.unlock();
            settled(StoreOutcome::Failed, m_scratchWriter->errorString());
            return;
        }
    }
    // A batch still queued at its deadline (behind a large import's batches) is withdrawn:
    // never written, so the client's retry duplicates nothing.
    QTimer::singleShot(qMax<qint64>(0, commitBy.remainingTime()), this, [this, sequence] {
        if (!m_scratchWriter || !m_scratchWriter->cancel(sequence))
            return;
        AwaitingCommit withdrawn;
        {
            QMutexLocker locker(&m_awaitingMutex);
            withdrawn = m_awaitingCommit.take(sequence);
        }
        if (withdrawn.settled)
            withdrawn.settled(StoreOutcome::Busy, QStringLiteral("not stored in time"));
    });
}

void AnalysisSession::onScratchSettled(const std::deque<WriteBatch> &batches, const QString &error)
{
    // Writer thread. Only the listener's batches are waited for; imports and the demo are not.
    QMutexLocker locker(&m_awaitingMutex);
    if (m_awaitingCommit.isEmpty())
        return;
    for (const WriteBatch &batch : batches) {
        auto it = m_awaitingCommit.find(batch.sequence);
        if (it == m_awaitingCommit.end())
            continue;
        const AwaitingCommit waiting = std::move(it.value());
        m_awaitingCommit.erase(it);
        if (!error.isEmpty()) {
            waiting.settled(batch.commitBy.hasExpired() ? StoreOutcome::Busy : StoreOutcome::Failed,
                            error);
            continue;
        }
        // Counted on the session's thread, queued before the client is answered: whatever the
        // client does after its 200 (another POST, the operator stopping the listener) reaches
        // the session after this batch.
        QMetaObject::invokeMethod(this, [this, feed = waiting.feed, events = batch.events,
                                         malformed = batch.malformed, epoch = waiting.epoch,
                                         replay = m_liveReplays.load()] {
            if (epoch != m_sessionEpoch.load())
                return; // it belongs to a session since closed
            // A policy change since replayed it from the scratch workspace into the new
            // analysis: only the feed's row still has to count it.
            applyStoredBatch(feed, events, malformed, replay == m_liveReplays.load());
        });
        waiting.settled(StoreOutcome::Stored, {});
    }
}

void AnalysisSession::applyStoredBatch(const QString &feed, const QList<RequestEvent> &events,
                                       const QList<MalformedRecord> &malformed, bool analyse)
{
    Q_ASSERT(QThread::currentThread() == thread());
    ensureTimer();
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    IngestSourceStatus &status = sourceStatus(feed);
    // Live, but not revived: a feed the operator stopped stays finished (startLiveFeed starts).
    status.live = true;
    status.errors += malformed.size();
    if (!events.isEmpty()) {
        const qint64 requests = countedRequests(events);
        status.rows += events.size();
        status.events += requests;
        status.lastEventReceivedMs = now;
        status.lastEventTsMs = events.constLast().tsMs;
        status.lagMs = now - events.constLast().tsMs;
        RateMeter &meter = m_feedRates[feed];
        meter.add(now, requests);
        status.eventsPerSecond = meter.perSecond(now);
    }
    if (!malformed.isEmpty())
        status.lastError = malformed.constLast().reason;
    m_dirty = true;
    if (!analyse)
        return;
    analyseLive(std::vector<RequestEvent>(events.cbegin(), events.cend()));
    for (MalformedRecord record : malformed) {
        ++m_ingest.malformedTotal;
        if (m_ingest.malformed.size() >= kMalformedShown)
            m_ingest.malformed.removeFirst();
        m_ingest.malformed.append(record);
        m_analysis->onMalformed(std::move(record));
    }
}

void AnalysisSession::setFeedRejections(const QString &feed, qint64 rejectedRequests,
                                        const QString &lastError)
{
    Q_ASSERT(QThread::currentThread() == thread());
    IngestSourceStatus &status = sourceStatus(feed);
    if (status.rejectedRequests == rejectedRequests)
        return;
    status.rejectedRequests = rejectedRequests;
    if (!lastError.isEmpty())
        status.lastError = lastError;
    m_dirty = true;
}

void AnalysisSession::refreshLiveFeeds()
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_feedRates.isEmpty())
        return;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    for (auto it = m_feedRates.cbegin(); it != m_feedRates.cend(); ++it)
        sourceStatus(it.key()).eventsPerSecond = it.value().perSecond(now);
    Q_EMIT ingestStatusChanged(m_ingest);
}

// ---- session hygiene (issue 17.7) -------------------------------------------------------------

void AnalysisSession::newSession()
{
    Q_ASSERT(QThread::currentThread() == thread());
    // Nothing of the old session may reach the new one: its acknowledged batches still being
    // committed are answered by the old writer, but no longer counted (the epoch moves on).
    ++m_sessionEpoch;
    if (m_scratchWriter)
        m_scratchWriter->finish();
    m_scratchWriter.reset();
    m_scratch.reset();
    removeScratchWorkspace(m_scratchPath);
    m_scratchPath.clear();
    m_scratchSources.clear();
    m_scratchPollSources.clear();
    m_liveSessionId.clear(); // a new session's feeds are new sources where it is saved
    closeSessionWriter();
    m_scratchFailed = false;
    m_openedWorkspaces.clear();
    m_sessionWorkspace.clear();
    m_sessionSettings.clear();
    m_policySource.clear();
    m_breakerModel.reset();
    m_policies = PolicySet::builtin();
    m_cancel.store(false);
    reset();
    Q_EMIT workspaceReady(QString());
}

void AnalysisSession::setSessionSetting(const QString &key, const QString &value)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (m_sessionSettings.value(key) == value && m_sessionSettings.contains(key))
        return;
    m_sessionSettings.insert(key, value);
    writeSessionSettings({key});
}

void AnalysisSession::rememberPolicy(const QString &nameFileOrJson)
{
    m_policySource = nameFileOrJson;
    if (nameFileOrJson.isEmpty() || nameFileOrJson == u"builtin")
        m_sessionSettings.remove(QLatin1StringView(kPolicySetting));
    else
        m_sessionSettings.insert(QLatin1StringView(kPolicySetting), nameFileOrJson);
    writeSessionSettings({QLatin1StringView(kPolicySetting)});
}

void AnalysisSession::writeSessionSettings(const QStringList &keys)
{
    if (m_sessionWorkspace.isEmpty())
        return; // an unsaved session: written when it is saved
    Workspace workspace;
    if (!workspace.open(m_sessionWorkspace)) {
        Q_EMIT operationFinished(false, m_sessionWorkspace + QStringLiteral(": ") +
                                            workspace.errorString());
        return;
    }
    for (const QString &key : keys) {
        const bool ok = m_sessionSettings.contains(key)
                            ? workspace.setSetting(key, m_sessionSettings.value(key))
                            : workspace.removeSetting(key);
        if (!ok)
            Q_EMIT operationFinished(false, m_sessionWorkspace + QStringLiteral(": ") +
                                                workspace.errorString());
    }
}

void AnalysisSession::adoptSavedWorkspace(Workspace &workspace, const QString &path)
{
    // What the session is saved as is its workspace from now on: later policy edits and view
    // settings are written there.
    m_sessionWorkspace = path;
    for (auto it = m_sessionSettings.cbegin(); it != m_sessionSettings.cend(); ++it)
        workspace.setSetting(it.key(), it.value());
    if (!m_sessionSettings.contains(QLatin1StringView(kPolicySetting)))
        workspace.removeSetting(QLatin1StringView(kPolicySetting));
    // And goes on writing there: the files it was saved with, as they grow (issue 30.11).
    QStringList files;
    for (const auto &[file, options] : std::as_const(m_openedFiles))
        files.append(file);
    keepFilesInSessionWorkspace(files);
    Q_EMIT workspaceSaved(path);
}

void AnalysisSession::restoreSessionSettings(WorkspaceReader &reader, const QString &path)
{
    QVariantMap loaded;
    for (const char *key : kSessionSettingKeys) {
        const QString name = QLatin1StringView(key);
        if (const std::optional<QString> value = reader.setting(name)) {
            loaded.insert(name, *value);
            m_sessionSettings.insert(name, *value);
        }
    }
    // The session's workspace from now on: a policy it brings is written back to it, never
    // to a workspace opened before.
    m_sessionWorkspace = path;
    // The workspace's policies, before its events are replayed (setPolicies replays what was
    // opened before it).
    const QString policy = loaded.value(QLatin1StringView(kPolicySetting)).toString();
    if (!policy.isEmpty() && policy != m_policySource)
        setPolicies(policy);
    if (!m_openedWorkspaces.contains(path))
        m_openedWorkspaces.append(path);
    Q_EMIT sessionSettingsLoaded(loaded);
}

qint64 AnalysisSession::addWorkspaceReplay(StoredReplayMerge &merge, const QString &path)
{
    auto reader = std::make_unique<WorkspaceReader>();
    if (!reader->open(path))
        return 0;
    const qint64 malformed = reader->countMalformed();
    // The workspace being followed: only the rows its follower has handed over. Those another
    // process committed since come with the follower's next poll, once.
    const bool followed = m_workspaceFollower && m_workspaceFollower->path() == path;
    const qint64 upToRowId = followed ? m_workspaceFollower->lastRowId() : 0;
    if (followed && upToRowId == 0)
        return malformed; // nothing handed over yet
    auto cursor = reader->timeOrdered({}, upToRowId);
    merge.addStore(std::move(reader), std::move(cursor));
    return malformed;
}

void AnalysisSession::setBreakerModel(const QString &breakerJson)
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (breakerJson.trimmed().isEmpty()) {
        m_breakerModel.reset();
    } else {
        QString error;
        const auto model = BreakerModel::fromJsonText(breakerJson, &error);
        if (!model) {
            Q_EMIT policyError(QStringLiteral("Breakers page: ") + error);
            return;
        }
        m_breakerModel = model;
    }
    // Replays everything under the same policies; setPolicies gives each this breaker.
    setPolicies(m_policySource);
}

} // namespace ts
