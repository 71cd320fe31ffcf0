#include "ingest/timemerge.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace ts {

namespace {

constexpr qint64 kNoTime = std::numeric_limits<qint64>::min();
constexpr qint64 kEndOfTime = std::numeric_limits<qint64>::max();
// Merged events are handed on in batches of about this size (the Analysis hands a batch of
// 1024 or more to its worker threads).
constexpr size_t kOutputBatch = 4096;
// A reader that delivers event by event is handed on in chunks of this size.
constexpr size_t kChunkEvents = 4096;
// Chunks queued per input when several are merged: the bound on what a reader runs ahead.
constexpr size_t kQueuedChunks = 4;
// How often the merge, waiting for a reader, looks at the cancel flag.
constexpr std::chrono::milliseconds kCancelPoll{50};

bool isSorted(const std::vector<RequestEvent> &events)
{
    for (size_t i = 1; i < events.size(); ++i) {
        if (events[i].tsMs < events[i - 1].tsMs)
            return false;
    }
    return true;
}

// The merge itself, without threads: inputs' events go in (each input's in its own order), the
// merged events come out into the sink.
class MergeCore
{
public:
    // stopOnLate: set at the first late event, which (and everything after it) is then dropped.
    MergeCore(int inputs, qint64 windowMs, IngestSink &out, std::atomic<bool> *stopOnLate = nullptr)
        : m_inputs(size_t(inputs)), m_windowMs(qMax<qint64>(0, windowMs)), m_out(out),
          m_stopOnLate(stopOnLate)
    {
    }

    void add(int index, std::vector<RequestEvent> &&events)
    {
        if (events.empty() || m_stopped)
            return;
        Input &input = m_inputs[size_t(index)];
        // The fast path of a single input in time order: keep the reader's chunk whole, to be
        // handed on whole. Several inputs interleave event by event, so they take the buffer.
        if (m_inputs.size() == 1 && isSorted(events) &&
            events.front().tsMs >= qMax(m_lastEmittedMs, newest(input))) {
            if (!input.buffer.empty()) {
                // Back in order after a disorder: what is buffered is one sorted run.
                input.runs.emplace_back(std::make_move_iterator(input.buffer.begin()),
                                        std::make_move_iterator(input.buffer.end()));
                input.buffer.clear();
            }
            input.maxSeenMs = qMax(input.maxSeenMs, events.back().tsMs);
            input.runs.push_back(std::move(events));
            return;
        }
        for (std::vector<RequestEvent> &run : input.runs) {
            for (RequestEvent &event : run)
                input.buffer.push_back(std::move(event));
        }
        input.runs.clear();
        // The runs were handed on a chunk at a time; from here on event by event, so that
        // whether a line is late depends on the window only, not on where a chunk ended.
        emitReady();
        for (RequestEvent &event : events) {
            const qint64 ts = event.tsMs;
            if (ts < m_lastEmittedMs) {
                if (m_stopOnLate) {
                    // The caller reads again in exact order: nothing more is of use.
                    m_stopped = true;
                    m_stopOnLate->store(true);
                    return;
                }
                // Later than the window: its place in time is gone. Handed on now, at the end
                // of what is already out.
                ++m_late;
                output(std::move(event));
                continue;
            }
            const bool isNewest = ts > input.maxSeenMs;
            if (input.buffer.empty() || ts >= input.buffer.back().tsMs) {
                input.buffer.push_back(std::move(event));
            } else {
                // After the buffered events of the same instant: they came first.
                const auto at = std::upper_bound(
                    input.buffer.begin(), input.buffer.end(), ts,
                    [](qint64 value, const RequestEvent &other) { return value < other.tsMs; });
                input.buffer.insert(at, std::move(event));
            }
            if (isNewest) {
                input.maxSeenMs = ts;
                emitReady();
            }
        }
    }

    void finishInput(int index) { m_inputs[size_t(index)].finished = true; }

    // Hands on every event older than the cut (see cut()).
    void emitReady() { emitBefore(cut()); }

    // Everything left, at the end of all inputs (or after a cancel).
    void drain()
    {
        emitBefore(kEndOfTime);
        flush();
    }

    // The unfinished input that holds the merge back (the oldest newest instant; the first of
    // equals), -1 when all are finished: the one to read next.
    [[nodiscard]] int laggard() const
    {
        int found = -1;
        for (size_t i = 0; i < m_inputs.size(); ++i) {
            if (!m_inputs[i].finished &&
                (found < 0 || m_inputs[i].maxSeenMs < m_inputs[size_t(found)].maxSeenMs))
                found = int(i);
        }
        return found;
    }

    [[nodiscard]] qint64 lateEvents() const { return m_late; }
    [[nodiscard]] bool stopped() const { return m_stopped; }

private:
    struct Input
    {
        // Events not handed on yet, sorted by time, equal times in arrival order.
        std::deque<RequestEvent> buffer;
        // Single input, fast path: chunks whose concatenation is sorted (buffer empty).
        std::deque<std::vector<RequestEvent>> runs;
        qint64 maxSeenMs = kNoTime;
        bool finished = false;
    };

    static qint64 newest(const Input &input)
    {
        if (!input.runs.empty())
            return input.runs.back().back().tsMs;
        if (!input.buffer.empty())
            return input.buffer.back().tsMs;
        return kNoTime;
    }

    // Events older than this can be handed on: every unfinished input's next events are at
    // least its newest instant minus the window (or they are late).
    [[nodiscard]] qint64 cut() const
    {
        qint64 cut = kEndOfTime;
        for (const Input &input : m_inputs) {
            if (input.finished)
                continue;
            if (input.maxSeenMs == kNoTime)
                return kNoTime; // nothing known of it yet: it may start anywhere
            cut = qMin(cut, input.maxSeenMs - m_windowMs);
        }
        return cut;
    }

    void emitBefore(qint64 cut)
    {
        if (m_inputs.size() == 1) {
            Input &input = m_inputs.front();
            // A run partly at or after the cut waits whole: later than needed, never too early.
            while (!input.runs.empty() && input.runs.front().back().tsMs < cut) {
                flush();
                m_lastEmittedMs = input.runs.front().back().tsMs;
                m_out.onEvents(std::move(input.runs.front()));
                input.runs.pop_front();
            }
        }
        for (;;) {
            Input *oldest = nullptr;
            for (Input &input : m_inputs) {
                // Strictly older: equal instants go in input order.
                if (!input.buffer.empty() &&
                    (!oldest || input.buffer.front().tsMs < oldest->buffer.front().tsMs))
                    oldest = &input;
            }
            if (!oldest || oldest->buffer.front().tsMs >= cut)
                break;
            m_lastEmittedMs = oldest->buffer.front().tsMs;
            output(std::move(oldest->buffer.front()));
            oldest->buffer.pop_front();
        }
        if (m_output.size() >= kOutputBatch)
            flush();
    }

    void output(RequestEvent &&event)
    {
        m_output.push_back(std::move(event));
        if (m_output.size() >= kOutputBatch)
            flush();
    }

    void flush()
    {
        if (m_output.empty())
            return;
        m_out.onEvents(std::move(m_output));
        m_output.clear(); // a moved-from vector is valid but unspecified
    }

    std::vector<Input> m_inputs;
    qint64 m_windowMs;
    IngestSink &m_out;
    qint64 m_lastEmittedMs = kNoTime;
    qint64 m_late = 0;
    std::vector<RequestEvent> m_output;
    std::atomic<bool> *m_stopOnLate;
    bool m_stopped = false;
};

// One input read on the calling thread: the reader pushes straight into the merge.
class InlineSink final : public IngestSink
{
public:
    InlineSink(MergeCore &core, IngestSink &out, MergeInputObserver *observer)
        : m_core(core), m_out(out), m_observer(observer)
    {
    }
    void onEvent(RequestEvent &&event) override
    {
        m_pending.push_back(std::move(event));
        if (m_pending.size() >= kChunkEvents)
            pass();
    }
    void onEvents(std::vector<RequestEvent> &&events) override
    {
        pass();
        deliver(std::move(events));
    }
    void onMalformed(MalformedRecord &&record) override
    {
        if (m_observer)
            m_observer->inputMalformed(0, record);
        m_out.onMalformed(std::move(record));
    }
    void pass()
    {
        if (m_pending.empty())
            return;
        deliver(std::move(m_pending));
        m_pending.clear();
    }

private:
    void deliver(std::vector<RequestEvent> &&events)
    {
        if (events.empty())
            return;
        if (m_observer)
            m_observer->inputEvents(0, events);
        m_core.add(0, std::move(events));
        m_core.emitReady();
    }

    MergeCore &m_core;
    IngestSink &m_out;
    MergeInputObserver *m_observer;
    std::vector<RequestEvent> m_pending;
};

// What a reader thread hands to the merge.
struct Chunk
{
    std::vector<RequestEvent> events;
    std::vector<MalformedRecord> malformed;
    qint64 done = -1; // progress, -1: none in this chunk
    qint64 total = -1;
    bool last = false;
    SourceOutcome outcome; // with the last chunk
};

class ChunkQueue
{
public:
    // Blocks while the queue is full; false once stopped (the merge wants nothing more).
    bool push(Chunk &&chunk)
    {
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [this] { return m_stopped || m_chunks.size() < kQueuedChunks; });
        if (m_stopped)
            return false;
        m_chunks.push_back(std::move(chunk));
        m_changed.notify_all();
        return true;
    }
    std::optional<Chunk> pop(std::chrono::milliseconds timeout)
    {
        std::unique_lock lock(m_mutex);
        if (!m_changed.wait_for(lock, timeout, [this] { return !m_chunks.empty(); }))
            return std::nullopt;
        Chunk chunk = std::move(m_chunks.front());
        m_chunks.pop_front();
        m_changed.notify_all();
        return chunk;
    }
    void stop()
    {
        const std::lock_guard lock(m_mutex);
        m_stopped = true;
        m_changed.notify_all();
    }

private:
    std::mutex m_mutex; // protects m_chunks and m_stopped (m_changed signals any change of them)
    std::condition_variable m_changed;
    std::deque<Chunk> m_chunks;
    bool m_stopped = false;
};

// The sink of a reader on its own thread: collects chunks and queues them.
class QueueSink final : public IngestSink
{
public:
    explicit QueueSink(ChunkQueue &queue) : m_queue(queue) {}
    void onEvent(RequestEvent &&event) override
    {
        m_chunk.events.push_back(std::move(event));
        if (m_chunk.events.size() >= kChunkEvents)
            send();
    }
    void onEvents(std::vector<RequestEvent> &&events) override
    {
        if (m_chunk.events.empty())
            m_chunk.events = std::move(events); // the reader's chunk as it is: no copy
        else
            m_chunk.events.insert(m_chunk.events.end(), std::make_move_iterator(events.begin()),
                                  std::make_move_iterator(events.end()));
        send();
    }
    void onMalformed(MalformedRecord &&record) override
    {
        m_chunk.malformed.push_back(std::move(record));
        if (m_chunk.malformed.size() >= kChunkEvents)
            send();
    }
    void noteProgress(qint64 done, qint64 total)
    {
        m_chunk.done = done;
        m_chunk.total = total;
    }
    void finish(SourceOutcome &&outcome)
    {
        m_chunk.last = true;
        m_chunk.outcome = std::move(outcome);
        send();
    }

private:
    void send()
    {
        m_queue.push(std::move(m_chunk)); // false: the merge stopped; the rest is dropped
        m_chunk = Chunk{};
    }

    ChunkQueue &m_queue;
    Chunk m_chunk;
};

MergeResult readOne(const QString &path, IngestSink &sink, const SourceOptions &options,
                    const MergeOptions &merge, MergeInputObserver *observer)
{
    MergeResult result;
    // Set at the first late line when the caller reads again in exact order: stops the reader.
    std::atomic<bool> stopped{false};
    MergeCore core(1, merge.reorderWindowMs, sink, merge.stopAtFirstLate ? &stopped : nullptr);
    InlineSink inlineSink(core, sink, observer);
    ReadControl control;
    control.cancel = merge.stopAtFirstLate ? &stopped : merge.cancel;
    control.progress = merge.progress;
    if (merge.stopAtFirstLate && merge.cancel) {
        control.progress = [&merge, &stopped](qint64 done, qint64 total) {
            if (merge.cancel->load())
                stopped.store(true);
            if (merge.progress)
                merge.progress(done, total);
        };
    }
    control.holdUnterminatedTail = merge.holdUnterminatedTail;
    SourceOutcome outcome = readSource(path, inlineSink, options, control);
    inlineSink.pass();
    core.finishInput(0);
    result.stoppedAtLate = core.stopped();
    if (observer)
        observer->inputFinished(0, outcome);
    result.cancelled = outcome.result.cancelled && !result.stoppedAtLate;
    result.outcomes.append(std::move(outcome));
    if (!result.stoppedAtLate)
        core.drain();
    result.lateEvents = core.lateEvents();
    return result;
}

MergeResult readMany(const QStringList &paths, IngestSink &sink, const SourceOptions &options,
                     const MergeOptions &merge, MergeInputObserver *observer)
{
    const int n = int(paths.size());
    MergeResult result;
    for (const QString &path : paths) {
        SourceOutcome pending;
        pending.path = path;
        pending.result.cancelled = true; // until its reader says otherwise
        result.outcomes.append(pending);
    }
    // The readers poll this; set when the merge stops early.
    std::atomic<bool> abort{false};
    std::vector<std::unique_ptr<ChunkQueue>> queues;
    for (int i = 0; i < n; ++i)
        queues.push_back(std::make_unique<ChunkQueue>());
    std::vector<std::jthread> readers;
    readers.reserve(size_t(n));
    for (int i = 0; i < n; ++i) {
        readers.emplace_back([&, i] {
            QueueSink queueSink(*queues[size_t(i)]);
            ReadControl control;
            control.cancel = &abort;
            control.holdUnterminatedTail = merge.holdUnterminatedTail;
            control.progress = [&queueSink](qint64 done, qint64 total) {
                queueSink.noteProgress(done, total);
            };
            queueSink.finish(readSource(paths[i], queueSink, options, control));
        });
    }

    MergeCore core(n, merge.reorderWindowMs, sink, merge.stopAtFirstLate ? &abort : nullptr);
    std::vector<std::pair<qint64, qint64>> progress(size_t(n), {0, -1});
    for (int next = core.laggard(); next >= 0; next = core.laggard()) {
        if (merge.cancel && merge.cancel->load()) {
            result.cancelled = true;
            break;
        }
        if (core.stopped()) {
            result.stoppedAtLate = true;
            break;
        }
        std::optional<Chunk> chunk = queues[size_t(next)]->pop(kCancelPoll);
        if (!chunk)
            continue;
        for (MalformedRecord &record : chunk->malformed) {
            if (observer)
                observer->inputMalformed(next, record);
            sink.onMalformed(std::move(record));
        }
        if (observer && !chunk->events.empty())
            observer->inputEvents(next, chunk->events);
        if (chunk->done >= 0) {
            progress[size_t(next)] = {chunk->done, chunk->total};
            if (merge.progress) {
                qint64 done = 0;
                qint64 total = 0;
                for (const auto &[inputDone, inputTotal] : progress) {
                    done += inputDone;
                    total = (total < 0 || inputTotal < 0) ? -1 : total + inputTotal;
                }
                merge.progress(done, total);
            }
        }
        core.add(next, std::move(chunk->events));
        if (chunk->last) {
            core.finishInput(next);
            if (observer)
                observer->inputFinished(next, chunk->outcome);
            result.outcomes[next] = std::move(chunk->outcome);
        }
        core.emitReady();
    }
    abort.store(true);
    for (const auto &queue : queues)
        queue->stop();
    readers.clear(); // joins
    // What was read before a cancel is analysed, as a single file's read so far is.
    if (!result.stoppedAtLate)
        core.drain();
    result.lateEvents = core.lateEvents();
    return result;
}

} // namespace

MergeResult readSourcesMerged(const QStringList &paths, IngestSink &sink,
                              const SourceOptions &options, const MergeOptions &merge,
                              MergeInputObserver *observer)
{
    if (paths.isEmpty())
        return {};
    if (paths.size() == 1)
        return readOne(paths.front(), sink, options, merge, observer);
    return readMany(paths, sink, options, merge, observer);
}

} // namespace ts
