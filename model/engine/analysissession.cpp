#include "engine/analysissession.h"

#include "engine/analysis.h"

#include <QElapsedTimer>
#include <QThread>

namespace ts {

namespace {
// The dashboard refreshes at most this often, however fast events arrive.
constexpr int kPublishIntervalMs = 100;
// The ingest panel lists this many malformed records (all are counted).
constexpr int kForwardedMalformedLimit = 1000;
} // namespace

AnalysisSession::AnalysisSession(QObject *parent)
    : QObject(parent), m_analysis(std::make_unique<Analysis>())
{
    qRegisterMetaType<std::shared_ptr<const ts::DashboardSnapshot>>();
    qRegisterMetaType<std::vector<ts::RequestEvent>>();
    qRegisterMetaType<ts::SourceOptions>();
    qRegisterMetaType<ts::MalformedRecord>();
}

AnalysisSession::~AnalysisSession() = default;

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

void AnalysisSession::openFiles(const QStringList &paths, const SourceOptions &options)
{
    Q_ASSERT(QThread::currentThread() == thread());
    ensureTimer();
    m_cancel.store(false);

    // Forward malformed records to the GUI's ingest panel while the Analysis counts them.
    class ForwardingSink final : public IngestSink
    {
    public:
        ForwardingSink(AnalysisSession &session, Analysis &analysis)
            : m_session(session), m_analysis(analysis)
        {}
        void onEvent(RequestEvent &&event) override { m_analysis.onEvent(std::move(event)); }
        void onMalformed(MalformedRecord &&record) override
        {
            if (m_forwarded++ < kForwardedMalformedLimit)
                Q_EMIT m_session.malformedRecord(record);
            m_analysis.onMalformed(std::move(record));
        }

    private:
        AnalysisSession &m_session;
        Analysis &m_analysis;
        int m_forwarded = 0;
    } sink(*this, *m_analysis);

    for (const QString &path : paths) {
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
        m_dirty = true;
        Q_EMIT sourceFinished(path, outcome.format, outcome.result.events, outcome.result.malformed,
                              outcome.result.fatalError);
        if (outcome.result.cancelled)
            break;
    }
    publishIfDirty();
}

void AnalysisSession::ingestBatch(const std::vector<RequestEvent> &events)
{
    Q_ASSERT(QThread::currentThread() == thread());
    ensureTimer();
    for (const RequestEvent &event : events)
        m_analysis->add(event);
    m_dirty = !events.empty() || m_dirty;
}

void AnalysisSession::reset()
{
    Q_ASSERT(QThread::currentThread() == thread());
    m_analysis = std::make_unique<Analysis>();
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
}

} // namespace ts
