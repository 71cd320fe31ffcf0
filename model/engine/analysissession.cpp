#include "engine/analysissession.h"

#include "engine/analysis.h"
#include "engine/reportformat.h"
#include "store/importjob.h"
#include "store/workspace.h"
#include "store/workspacereader.h"
#include "store/workspacewriter.h"

#include <QFile>
#include <QSaveFile>

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QThread>
#include <QTimer>

namespace ts {

namespace {
// The dashboard refreshes at most this often, however fast events arrive.
constexpr int kPublishIntervalMs = 100;
// The ingest panel lists this many recent malformed records (all are counted).
constexpr int kMalformedShown = 200;
// Arrival rates are measured over windows of this length.
constexpr qint64 kRateWindowMs = 2000;
} // namespace

AnalysisSession::AnalysisSession(QObject *parent)
    : QObject(parent), m_policies(PolicySet::builtin()),
      m_analysis(std::make_unique<Analysis>(m_policies))
{
    qRegisterMetaType<std::shared_ptr<const ts::DashboardSnapshot>>();
    qRegisterMetaType<QList<ts::RequestEvent>>();
    qRegisterMetaType<ts::SourceOptions>();
    qRegisterMetaType<ts::IngestStatus>();
}

AnalysisSession::~AnalysisSession()
{
    // The writer thread first (it commits what is queued), then the scratch file goes.
    if (m_scratchWriter)
        m_scratchWriter->finish();
    m_scratchWriter.reset();
    m_scratch.reset();
    if (!m_scratchPath.isEmpty()) {
        for (const QString &suffix : {QString(), QStringLiteral("-wal"), QStringLiteral("-shm")})
            QFile::remove(m_scratchPath + suffix);
    }
}

bool AnalysisSession::ensureScratchWorkspace()
{
    if (m_scratchWriter)
        return true;
    if (m_scratchFailed)
        return false;
    m_scratchPath = QDir::temp().filePath(QStringLiteral("throttlescope-session-%1-%2.db")
                                              .arg(QCoreApplication::applicationPid())
                                              .arg(quintptr(this), 0, 16));
    m_scratch = std::make_unique<Workspace>();
    m_scratchWriter = std::make_unique<WorkspaceWriter>();
    if (!m_scratch->open(m_scratchPath) || !m_scratchWriter->start(m_scratchPath)) {
        Q_EMIT operationFinished(false, QStringLiteral("no scratch workspace for the Events page: ")
                                            + m_scratch->errorString() + m_scratchWriter->errorString());
        m_scratchWriter.reset();
        m_scratch.reset();
        m_scratchFailed = true;
        return false;
    }
    Q_EMIT workspaceReady(m_scratchPath);
    return true;
}

void AnalysisSession::recordFiles(const QStringList &paths, const SourceOptions &options)
{
    if (!ensureScratchWorkspace())
        return;
    for (const QString &path : paths) {
        if (path == u"-")
            continue; // standard input cannot be read twice
        QFile probe(path);
        QString error;
        std::unique_ptr<LogReader> reader;
        if (probe.open(QIODevice::ReadOnly))
            reader = readerFor(probe, path, options, &error);
        probe.close();
        if (reader)
            importFile(*m_scratch, *m_scratchWriter, path, *reader); // the ledger skips repeats
    }
    // The Events page's filters want the query indexes.
    m_scratch->createQueryIndexes();
    Q_EMIT workspaceReady(m_scratchPath);
}

void AnalysisSession::recordLiveBatch(const QList<RequestEvent> &events)
{
    if (events.isEmpty() || !ensureScratchWorkspace())
        return;
    WriteBatch batch;
    for (const RequestEvent &event : events) {
        const QString source = event.source.isEmpty() ? QStringLiteral("live") : event.source;
        auto it = m_scratchSources.constFind(source);
        if (it == m_scratchSources.cend())
            it = m_scratchSources.insert(source, m_scratch->addSource(source, QStringLiteral("live"), 0, 0, {}));
        if (batch.sourceId != *it && !batch.events.isEmpty()) {
            m_scratchWriter->submit(std::move(batch));
            batch = WriteBatch{};
        }
        batch.sourceId = *it;
        batch.events.append(event);
    }
    m_scratchWriter->submit(std::move(batch));
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
    readFiles(paths, options);
    // The Events page browses rows, not the analysis: copy the files into the scratch workspace
    // once the analysis is on screen.
    recordFiles(paths, options);
}

void AnalysisSession::readFiles(const QStringList &paths, const SourceOptions &options)
{
    ensureTimer();
    m_cancel.store(false);

    // Counts per source and keeps the latest malformed records for the ingest panel while the
    // Analysis aggregates.
    class StatusSink final : public IngestSink
    {
    public:
        StatusSink(IngestStatus &ingest, IngestSourceStatus &source, Analysis &analysis)
            : m_ingest(ingest), m_source(source), m_analysis(analysis)
        {}
        void onEvent(RequestEvent &&event) override
        {
            ++m_source.events;
            m_source.lastEventTsMs = event.tsMs;
            m_analysis.onEvent(std::move(event));
        }
        void onEvents(std::vector<RequestEvent> &&events) override
        {
            if (events.empty())
                return;
            m_source.events += qint64(events.size());
            m_source.lastEventTsMs = events.back().tsMs;
            m_analysis.onEvents(std::move(events));
        }
        void onMalformed(MalformedRecord &&record) override
        {
            ++m_source.errors;
            ++m_ingest.malformedTotal;
            if (m_ingest.malformed.size() >= kMalformedShown)
                m_ingest.malformed.removeFirst();
            m_ingest.malformed.append(record);
            m_analysis.onMalformed(std::move(record));
        }

    private:
        IngestStatus &m_ingest;
        IngestSourceStatus &m_source;
        Analysis &m_analysis;
    };

    for (const QString &path : paths) {
        IngestSourceStatus &status = sourceStatus(path);
        status.events = 0;
        status.errors = 0;
        status.finished = false;
        StatusSink sink(m_ingest, status, *m_analysis);
        ReadControl control;
        control.cancel = &m_cancel;
        QElapsedTimer sincePublish;
        sincePublish.start();
        control.progress = [this, &sincePublish](qint64 done, qint64 total) {
            Q_EMIT progress(done, total);
            m_dirty = true;
            // Long imports show their progress in the views too, not only at the end.
            if (sincePublish.elapsed() >= kPublishIntervalMs * 5) {
                publishIfDirty();
                sincePublish.restart();
            }
        };
        const SourceOutcome outcome = readSource(path, sink, options, control);
        IngestSourceStatus &done = sourceStatus(path);
        done.format = outcome.format;
        done.finished = true;
        done.lastEventReceivedMs = QDateTime::currentMSecsSinceEpoch();
        if (!outcome.result.fatalError.isEmpty()) {
            ++done.errors;
            ++m_ingest.malformedTotal;
            m_ingest.malformed.append(MalformedRecord{path, 0, outcome.result.fatalError});
        }
        m_dirty = true;
        if (outcome.result.cancelled)
            break;
    }
    Q_EMIT progress(1, 1);
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
        ++status->events;
        status->lastEventTsMs = event.tsMs;
        status->lastEventReceivedMs = now;
        RateWindow &rate = m_rates[status->path];
        if (now - rate.windowStartMs >= kRateWindowMs) {
            if (rate.windowStartMs > 0)
                status->eventsPerSecond = double(rate.events) * 1000.0 / double(now - rate.windowStartMs);
            rate.windowStartMs = now;
            rate.events = 0;
        }
        ++rate.events;
        m_analysis->add(event);
    }
    m_dirty = !events.isEmpty() || m_dirty;
    recordLiveBatch(events);
}

void AnalysisSession::finishLiveSource(const QString &source)
{
    sourceStatus(source).finished = true;
    m_dirty = true;
}

void AnalysisSession::updatePolledSource(const IngestSourceStatus &poller)
{
    IngestSourceStatus &status = sourceStatus(poller.path);
    status.format = poller.format;
    status.live = true;
    status.lastPollMs = poller.lastPollMs;
    status.requests = poller.requests;
    status.lastError = poller.lastError;
    status.errors = poller.errors;
    m_dirty = true;
}

void AnalysisSession::setPolicies(const QString &nameFileOrJson)
{
    Q_ASSERT(QThread::currentThread() == thread());
    PolicySet policies;
    QString error;
    const QString trimmed = nameFileOrJson.trimmed();
    if (trimmed.startsWith(u'{')) {
        const auto policy = Policy::fromJsonBytes(trimmed.toUtf8(), QStringLiteral("policy editor"), &error);
        if (!policy) {
            Q_EMIT policyError(error);
            return;
        }
        // The edited policy replaces the built-in of the same name; the others stay.
        policies = PolicySet::builtin();
        const int index = policies.indexOf(policy->name);
        if (index >= 0)
            policies.policies()[index] = *policy;
        else
            policies.policies().prepend(*policy);
    } else if (trimmed.isEmpty() || trimmed == u"builtin") {
        policies = PolicySet::builtin();
    } else if (!policies.load(trimmed, &error)) {
        Q_EMIT policyError(error);
        return;
    }
    m_policies = policies;
    m_analysis = std::make_unique<Analysis>(m_policies);
    m_ingest.malformed.clear();
    m_ingest.malformedTotal = 0;
    // Replay what can be replayed: the files, read again in their order.
    QHash<QString, bool> seen;
    for (const auto &[path, options] : std::as_const(m_openedFiles)) {
        if (!seen.contains(path)) {
            seen.insert(path, true);
            readFiles({path}, options);
        }
    }
    m_dirty = true;
    publishIfDirty();
}

void AnalysisSession::openWorkspace(const QString &path)
{
    Q_ASSERT(QThread::currentThread() == thread());
    ensureTimer();
    WorkspaceReader reader;
    if (!reader.open(path)) {
        Q_EMIT operationFinished(false, path + QStringLiteral(": ") + reader.errorString());
        return;
    }
    IngestSourceStatus &status = sourceStatus(path);
    status.format = QStringLiteral("workspace");
    qint64 events = 0;
    const bool ok = reader.forEachEventInTimeOrder(8192, [&](const QList<RequestEvent> &chunk) {
        for (const RequestEvent &event : chunk)
            m_analysis->add(event);
        events += chunk.size();
        if (m_cancel.load())
            return false;
        return true;
    });
    m_analysis->countMalformed(reader.countMalformed());
    Q_EMIT workspaceReady(path);
    IngestSourceStatus &done = sourceStatus(path);
    done.events = events;
    done.finished = true;
    m_dirty = true;
    publishIfDirty();
    Q_EMIT operationFinished(ok, ok ? QString(path + QStringLiteral(": %1 events").arg(events))
                                    : QString(path + QStringLiteral(": ") + reader.errorString()));
}

void AnalysisSession::saveWorkspace(const QString &path)
{
    Q_ASSERT(QThread::currentThread() == thread());
    Workspace workspace;
    WorkspaceWriter writer;
    if (!workspace.open(path) || !writer.start(path)) {
        Q_EMIT operationFinished(false, path + QStringLiteral(": ") + workspace.errorString()
                                            + writer.errorString());
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
    const bool ok = writer.finish() && problems.isEmpty();
    Q_EMIT operationFinished(ok, ok ? QString(QStringLiteral("saved ") + path)
                                    : QString(problems + writer.errorString()));
}

void AnalysisSession::exportReport(const QString &path)
{
    Q_ASSERT(QThread::currentThread() == thread());
    QSaveFile file(path);
    const bool ok = file.open(QIODevice::WriteOnly) && file.write(reportToJson(m_analysis->report())) >= 0
                    && file.commit();
    Q_EMIT operationFinished(ok, ok ? QString(QStringLiteral("report written to ") + path)
                                    : QString(path + QStringLiteral(": ") + file.errorString()));
}

void AnalysisSession::reset()
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_analysis = std::make_unique<Analysis>(m_policies);
    m_openedFiles.clear();
    m_ingest = {};
    m_sourceIndex.clear();
    m_rates.clear();
    m_dirty = true;
    publishIfDirty();
}

void AnalysisSession::publishIfDirty()
{
    Q_ASSERT(QThread::currentThread() == thread());
    if (!m_dirty)
        return;
    m_dirty = false;
    auto snapshot = std::make_shared<DashboardSnapshot>(m_analysis->snapshot());
    snapshot->generation = ++m_generation;
    Q_EMIT snapshotReady(std::move(snapshot));
    Q_EMIT ingestStatusChanged(m_ingest);
}

} // namespace ts
