#include "engine/analysis.h"

#include "engine/alertdetector.h"
#include "engine/breakertracker.h"
#include "engine/paceadvice.h"
#include "engine/throttleengine.h"
#include "ingest/redaction.h"
#include "signals/throttlesignals.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace ts {

namespace {
// Batches smaller than this are processed inline: a thread hand-off costs more than it saves.
constexpr size_t kMinParallelBatch = 1024;
// Batches queued per worker before the producer waits: bounds memory on a fast reader.
constexpr size_t kMaxQueuedBatches = 2;
// Large batches (~1 MiB of log each) between two returns of freed memory to the system
// (releaseFreedMemory()). Measured on 2M bench lines: every 16 batches keeps peak RSS ~25 MB
// lower for ~2 % more CPU (system time); every 8 saves little more and costs twice as much.
constexpr int kBatchesPerTrim = 16;
} // namespace

// A batch of events as both workers read it. The throttle signals are extracted once, on the
// thread that hands the batch over, instead of once by the engine (for its throttles and
// limit-percentage headers) and again by the detectors.
struct Analysis::Batch
{
    explicit Batch(Analysis::SharedEvents shared) : owner(std::move(shared)), events(*owner) {}

    // Shared with whoever else reads the events (the scratch workspace's writer), never changed.
    const Analysis::SharedEvents owner;
    const std::vector<RequestEvent> &events;
    // (index into events, extract() of it) for every request event that hasSignalsToRead(),
    // in index order. For the others extract() is trivial and each consumer does it itself.
    std::vector<std::pair<size_t, throttle::ThrottleSignals>> extracted;
    // (index into events, the engine's fill) for every event whose reconstructed fill reaches
    // the breakers' soft-open threshold. Written by the engine's worker alone, before it hands
    // the batch to the detectors' worker (the hand-over through the worker's mutex orders it).
    mutable std::vector<std::pair<size_t, ThrottleEngine::Verdict>> fills;
    // (index into events, the category the engine's policy rules gave it: a name owned by the
    // engine, which lives as long as this Analysis), written the same way: the detectors'
    // quota groups without classifying the event a second time.
    mutable std::vector<std::pair<size_t, const QString *>> categories;
};

// One consumer thread applying a function to shared, read-only batches in arrival order.
class Analysis::Worker
{
public:
    using SharedBatch = std::shared_ptr<const Batch>;
    explicit Worker(std::function<void(const SharedBatch &)> apply)
        : m_apply(std::move(apply)), m_thread([this] { run(); })
    {
    }
    ~Worker()
    {
        {
            std::lock_guard lock(m_mutex);
            m_stopping = true;
        }
        m_changed.notify_all();
        m_thread.join();
    }
    void push(SharedBatch batch)
    {
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [this] { return m_queue.size() < kMaxQueuedBatches; });
        m_queue.push_back(std::move(batch));
        lock.unlock();
        m_changed.notify_all();
    }
    void waitIdle()
    {
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [this] { return m_queue.empty() && !m_busy; });
    }

private:
    void run()
    {
        for (;;) {
            SharedBatch batch;
            {
                std::unique_lock lock(m_mutex);
                m_changed.wait(lock, [this] { return m_stopping || !m_queue.empty(); });
                if (m_queue.empty())
                    return;
                batch = std::move(m_queue.front());
                m_queue.pop_front();
                m_busy = true;
            }
            m_changed.notify_all();
            m_apply(batch);
            {
                std::lock_guard lock(m_mutex);
                m_busy = false;
            }
            m_changed.notify_all();
        }
    }

    std::function<void(const SharedBatch &)> m_apply;
    // Protects m_queue, m_busy and m_stopping; m_changed signals any change of them.
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::deque<SharedBatch> m_queue;
    bool m_busy = false;
    bool m_stopping = false;
    std::thread m_thread; // last: starts after the members it uses exist
};

namespace {

ThrottleEngine::Options engineOptions(Analysis::Purpose purpose)
{
    ThrottleEngine::Options options;
    // The series and throttle bins feed plots only; no report field is computed from them.
    // A report never shows them, so a report-only analysis keeps none (a bin update per charge
    // and a mark per throttle saved, and tens of MB across hundreds of scopes).
    if (purpose == Analysis::Purpose::ReportOnly) {
        options.maxSeriesPoints = 64;
        options.recordPlotData = false;
    }
    return options;
}

} // namespace

Analysis::Analysis(PolicySet policies, Purpose purpose)
    : m_breakers(std::make_unique<BreakerTracker>(BreakerParameters{}, policies)),
      m_alerts(std::make_unique<AlertDetector>(AlertParameters{}, CategoryClassifier(policies)))
{
    m_engine = std::make_unique<ThrottleEngine>(std::move(policies), engineOptions(purpose));
}

Analysis::~Analysis()
{
    // Workers first: they use the engine and detectors. The engine's first, as it feeds the
    // other two (a worker finishes its queue before it stops).
    m_engineWorker.reset();
    m_breakerWorker.reset();
    m_alertWorker.reset();
}

void Analysis::drain() const
{
    if (m_engineWorker)
        m_engineWorker->waitIdle();
    if (m_breakerWorker)
        m_breakerWorker->waitIdle();
    if (m_alertWorker)
        m_alertWorker->waitIdle();
}

const PolicySet &Analysis::policies() const
{
    drain();
    return m_engine->policies();
}

void Analysis::onEvent(RequestEvent &&event)
{
    redact::ensureMasked(event);
    add(event);
}

void Analysis::onEvents(std::vector<RequestEvent> &&events)
{
    if (events.size() < kMinParallelBatch) {
        for (RequestEvent &event : events) {
            redact::ensureMasked(event);
            add(event);
        }
        return;
    }
    for (RequestEvent &event : events)
        redact::ensureMasked(event);
    pushBatch(std::make_shared<const std::vector<RequestEvent>>(std::move(events)));
}

void Analysis::onSharedEvents(SharedEvents events)
{
    if (!events)
        return;
    const bool masked = std::all_of(events->cbegin(), events->cend(),
                                    [](const RequestEvent &event) { return event.secretsMasked; });
    if (!masked || events->size() < kMinParallelBatch) {
        onEvents(std::vector<RequestEvent>(*events)); // masks its own copy
        return;
    }
    pushBatch(std::move(events));
}

void Analysis::pushBatch(SharedEvents events)
{
    if (!m_engineWorker) {
        // A pipeline, not independent readers: the breakers read the engine's fills and the
        // detectors its categories, so a batch reaches them once the engine is through it.
        m_breakerWorker =
            std::make_unique<Worker>([this](const Worker::SharedBatch &b) { feedBreakers(*b); });
        m_alertWorker =
            std::make_unique<Worker>([this](const Worker::SharedBatch &b) { feedAlerts(*b); });
        m_engineWorker =
            std::make_unique<Worker>([this](const Worker::SharedBatch &b) { feedEngine(b); });
    }
    auto batch = std::make_shared<Batch>(std::move(events));
    // Room for half the batch to carry signals, so the vector rarely grows: each growth moves
    // every ThrottleSignals (~200 bytes) so far (~0.8 % of report CPU on the benchmark's log,
    // where 45 % of the events carry headers).
    batch->extracted.reserve(batch->events.size() / 2);
    for (size_t i = 0; i < batch->events.size(); ++i) {
        const RequestEvent &event = batch->events[i];
        count(event);
        if (event.type == EventType::Request && throttle::hasSignalsToRead(event))
            batch->extracted.emplace_back(i, throttle::extract(event));
    }
    m_engineWorker->push(std::move(batch));
    releaseFreedMemory();
}

void Analysis::releaseFreedMemory()
{
#ifdef __GLIBC__
    // Batches are parsed on one thread and freed on another, so glibc's per-thread arenas
    // keep freed pages scattered between long-lived allocations, where they are never handed
    // back: the resident size grew ~50 MB past the live heap on 2M lines. malloc_trim() hands
    // the free pages inside the arenas back (a few milliseconds per call).
    if (++m_batchesSinceTrim >= kBatchesPerTrim) {
        m_batchesSinceTrim = 0;
        malloc_trim(0);
    }
#endif
}

namespace {

// Calls visit(fill) once for each request an event stands for (RequestEvent::weight), with the
// engine's fill after that request (verdict null: none, 0).
template <typename Visit>
void forEachUnitFill(const RequestEvent &event, const ThrottleEngine::Verdict *verdict,
                     Visit &&visit)
{
    if (verdict && verdict->unitFills) {
        for (const ThrottleEngine::Verdict::FillRun &run : *verdict->unitFills) {
            for (qint64 k = 1; k <= run.units; ++k)
                visit(run.fillAfter(k));
        }
        return;
    }
    const double fill = verdict ? verdict->fill : 0;
    for (qint64 unit = 0; unit < std::max<qint64>(1, event.weight); ++unit)
        visit(fill);
}

} // namespace

void Analysis::add(const RequestEvent &event)
{
    if (!event.secretsMasked) {
        // Nothing unmasked reaches a report or a view; readers mask their events, so this
        // copy is for the odd event made elsewhere (the demo's simulator).
        RequestEvent masked = event;
        redact::redactEvent(masked);
        add(masked);
        return;
    }
    drain();
    count(event);
    // Breakers and detectors see every event (logged breaker transitions, $batch envelopes);
    // only request events carry throttle signals.
    const throttle::ThrottleSignals sig =
        event.type == EventType::Request ? throttle::extract(event) : throttle::ThrottleSignals{};
    const ThrottleEngine::Verdict verdict = m_engine->add(event, sig);
    // A weighted event (RequestEvent::weight) is that many requests to the breakers and the
    // detectors: they count and time requests one by one, each with the fill after it.
    forEachUnitFill(event, &verdict, [&](double fill) {
        noteFill(event, verdict, fill);
        feedDetectors(event, sig, verdict.category);
    });
}

void Analysis::noteFill(const RequestEvent &event, const ThrottleEngine::Verdict &verdict,
                        double fill)
{
    if (verdict.matched && fill >= m_breakers->parameters().softOpenAt)
        m_breakers->observeFill(event, fill, verdict.fillApplicationWide);
}

void Analysis::count(const RequestEvent &event)
{
    if (!m_firstMs || event.tsMs < *m_firstMs)
        m_firstMs = event.tsMs;
    // Older than an event already analysed: the engine charges it at each bucket's latest
    // instant. Counted once here for every pipeline (report-json.md, `lateEvents`).
    const qint64 requests = std::max<qint64>(1, event.weight);
    if (m_lastMs && event.tsMs < *m_lastMs)
        m_late += requests;
    if (!m_lastMs || event.tsMs > *m_lastMs)
        m_lastMs = event.tsMs;
    // A weighted event counts as the requests it stands for (RequestEvent::weight); a $batch
    // envelope is not a request of its own: its sub-responses are (report-json.md).
    const qint64 counted = event.countedRequests();
    if (counted == 0)
        return;
    m_events += counted;
    if (event.refusedByClientBreaker)
        m_refusedByClientBreaker += counted;
    else if (event.status >= 0 && event.status < int(m_byStatus.size()))
        m_byStatus[size_t(event.status)] += counted;
}

void Analysis::feedEngine(const std::shared_ptr<const Batch> &shared)
{
    const Batch &batch = *shared;
    const double softOpenAt = m_breakers->parameters().softOpenAt;
    auto next = batch.extracted.cbegin();
    const size_t n = batch.events.size();
    // Most events get a category, and in a busy log most reach the soft-open fill too: room
    // for all up front, instead of vectors that reallocate and move their entries as they grow
    // (with room for half, the fills' growth still showed in perf at ~0.5 % of a report).
    batch.categories.reserve(n);
    batch.fills.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        // The batch was parsed on another core: ask for the next events' hot lines now.
        if (i + 4 < n)
            prefetchEventFields(batch.events[i + 4]);
        if (i + 2 < n)
            prefetchEventText(batch.events[i + 2]);
        // The signals were extracted on yet another thread; one entry per event that carries
        // any, so the entry after the next one is a few events away.
        if (next != batch.extracted.cend() && next + 1 != batch.extracted.cend())
            throttle::prefetchSignals(&*(next + 1));
        ThrottleEngine::Verdict verdict;
        if (next != batch.extracted.cend() && next->first == i) {
            verdict = m_engine->add(batch.events[i], next->second);
            ++next;
        } else {
            // Nothing to read: the engine's own check is a status comparison.
            verdict = m_engine->add(batch.events[i]);
        }
        if (verdict.category)
            batch.categories.emplace_back(i, verdict.category);
        if (verdict.matched && verdict.fill >= softOpenAt)
            batch.fills.emplace_back(i, std::move(verdict));
    }
    // The breakers' and detectors' turn, while the engine takes the next batch.
    m_breakerWorker->push(shared);
    m_alertWorker->push(shared);
}

namespace {

// Calls visit(index, event, signals) for every event of a batch, in order. The signals were
// extracted once when the batch was handed over, or (nothing to read) are what extract()
// returns then: none but the event's own errorCode, so most events share one empty value
// instead of building a ~320-byte one each.
template <typename Batch, typename Visit> void forEachEventOf(const Batch &batch, Visit &&visit)
{
    static const throttle::ThrottleSignals kNoSignals;
    throttle::ThrottleSignals scratch;
    auto next = batch.extracted.cbegin();
    const size_t count = batch.events.size();
    for (size_t i = 0; i < count; ++i) {
        const RequestEvent &event = batch.events[i];
        // The events were written by a parser thread on another core and last read by the
        // engine's thread: ask for the next ones early, as feedEngine() does (the breakers and
        // detectors read the whole struct, and the text that keys callers and operations).
        if (i + 4 < count)
            prefetchEventStruct(batch.events[i + 4]);
        if (i + 2 < count)
            prefetchEventText(batch.events[i + 2]);
        if (next != batch.extracted.cend() && next + 1 != batch.extracted.cend())
            throttle::prefetchSignals(&*(next + 1));
        const throttle::ThrottleSignals *eventSignals = &kNoSignals;
        if (next != batch.extracted.cend() && next->first == i) {
            eventSignals = &next->second;
            ++next;
        } else if (event.type == EventType::Request && !event.errorCode.isEmpty()) {
            scratch = throttle::extract(event);
            eventSignals = &scratch;
        }
        visit(i, event, *eventSignals);
    }
}

} // namespace

void Analysis::feedBreakers(const Batch &batch)
{
    auto nextFill = batch.fills.cbegin();
    forEachEventOf(batch,
                   [&](size_t i, const RequestEvent &event, const throttle::ThrottleSignals &sig) {
                       // The same order as add(): the engine's fill softens the breaker before the
                       // breaker sees the event's answer.
                       const ThrottleEngine::Verdict *fill = nullptr;
                       if (nextFill != batch.fills.cend() && nextFill->first == i) {
                           fill = &nextFill->second;
                           ++nextFill;
                       }
                       // A weighted event is that many samples (RequestEvent::weight), each
                       // with the fill after its request.
                       forEachUnitFill(event, fill, [&](double unitFill) {
                           if (fill)
                               noteFill(event, *fill, unitFill);
                           m_breakers->add(event, sig);
                       });
                   });
}

void Analysis::feedAlerts(const Batch &batch)
{
    auto nextCategory = batch.categories.cbegin();
    forEachEventOf(batch,
                   [&](size_t i, const RequestEvent &event, const throttle::ThrottleSignals &sig) {
                       const QString *category = nullptr;
                       if (nextCategory != batch.categories.cend() && nextCategory->first == i) {
                           category = nextCategory->second;
                           ++nextCategory;
                       }
                       // Refused by the client's own breaker: never sent, nothing to detect.
                       if (event.refusedByClientBreaker)
                           return;
                       // A weighted event is that many requests (RequestEvent::weight).
                       for (qint64 unit = 0; unit < std::max<qint64>(1, event.weight); ++unit)
                           m_alerts->add(event, sig, category);
                   });
}

void Analysis::feedDetectors(const RequestEvent &event, const throttle::ThrottleSignals &sig,
                             const QString *quotaGroup)
{
    m_breakers->add(event, sig);
    // Refused by the client's own breaker: never sent, nothing to detect.
    if (!event.refusedByClientBreaker)
        m_alerts->add(event, sig, quotaGroup);
}

void Analysis::onMalformed(MalformedRecord &&record)
{
    ++m_malformed;
    if (m_malformedSamples.size() < kMalformedSamples)
        m_malformedSamples.append(std::move(record));
}

void Analysis::fillOwnFields(ReportData &data) const
{
    data.events = m_events;
    data.malformed = m_malformed;
    data.lateEvents = m_late;
    data.refusedByClientBreaker = m_refusedByClientBreaker;
    for (size_t status = 0; status < m_byStatus.size(); ++status) {
        if (m_byStatus[status])
            data.byStatus.insert(int(status), m_byStatus[status]);
    }
    data.malformedSamples = m_malformedSamples;
    data.firstMs = m_firstMs;
    data.lastMs = m_lastMs;
    const qint64 endMs = m_lastMs.value_or(0);
    m_breakers->fillReport(&data, endMs);
    data.breakerModel = m_breakers->defaultModel();
    data.advice = paceAdvice(data.scopes);
    // The engine's near-limit alerts are already in data.alerts.
    data.alerts += m_alerts->alerts();
    std::stable_sort(data.alerts.begin(), data.alerts.end(),
                     [](const Alert &a, const Alert &b) { return a.atMs < b.atMs; });
}

ReportData Analysis::report() const
{
    drain();
    ReportData data;
    // The report part of ThrottleEngine::fillSnapshot (scopes, throttle taxonomy, near-limit
    // alerts), without copying every scope's plot series that a report does not show.
    data.scopes = m_engine->scopes();
    data.throttles = m_engine->throttleSummary();
    data.alerts = m_engine->alerts();
    fillOwnFields(data);
    return data;
}

DashboardSnapshot Analysis::snapshot() const
{
    drain();
    DashboardSnapshot snapshot;
    // Scopes, series, throttle bins, the throttle taxonomy and near-limit alerts.
    m_engine->fillSnapshot(&snapshot);
    fillOwnFields(snapshot.report);
    return snapshot;
}

} // namespace ts
