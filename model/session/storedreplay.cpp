#include "session/storedreplay.h"

#include <algorithm>

namespace ts {

namespace {
// Events read from a store at a time: a chunk of rows per SQLite step loop, as a replay reads.
constexpr int kStoredChunk = 8192;
} // namespace

struct StoredReplayMerge::Store
{
    std::unique_ptr<WorkspaceReader> reader;
    std::unique_ptr<WorkspaceReader::TimeOrderedCursor> cursor;
    QList<RequestEvent> chunk; // read ahead; chunk[next] is the store's next event
    qsizetype next = 0;
    bool ended = false;

    // The next event, reading the next chunk when this one is used up; nullptr at the end.
    RequestEvent *peek()
    {
        if (next < chunk.size())
            return &chunk[next];
        if (ended)
            return nullptr;
        chunk.clear();
        next = 0;
        if (!cursor->next(kStoredChunk, &chunk)) {
            ended = true;
            return nullptr;
        }
        return &chunk[next];
    }
};

StoredReplayMerge::StoredReplayMerge(IngestSink &into, const std::atomic<bool> *cancel)
    : m_into(into), m_cancel(cancel)
{
}

StoredReplayMerge::~StoredReplayMerge() = default;

void StoredReplayMerge::addStore(std::unique_ptr<WorkspaceReader> reader,
                                 std::unique_ptr<WorkspaceReader::TimeOrderedCursor> cursor)
{
    if (!reader || !cursor)
        return;
    auto store = std::make_unique<Store>();
    store->reader = std::move(reader);
    store->cursor = std::move(cursor);
    m_stores.push_back(std::move(store));
}

StoredReplayMerge::Store *StoredReplayMerge::nextStore()
{
    Store *first = nullptr;
    qint64 firstTs = 0;
    for (const auto &store : m_stores) {
        const RequestEvent *event = store->peek();
        if (!event) {
            if (store->cursor->failed() && m_error.isEmpty())
                m_error = store->cursor->errorString();
            continue;
        }
        // Strictly earlier only: at one instant the store added first goes first.
        if (!first || event->tsMs < firstTs) {
            first = store.get();
            firstTs = event->tsMs;
        }
    }
    return first;
}

void StoredReplayMerge::handOnStoredBefore(const qint64 *limitMs)
{
    std::vector<RequestEvent> run;
    while (Store *store = nextStore()) {
        if (limitMs && store->chunk[store->next].tsMs >= *limitMs)
            break;
        run.push_back(std::move(store->chunk[store->next]));
        ++store->next;
        if (run.size() >= size_t(kStoredChunk)) {
            m_storedEvents += qint64(run.size());
            m_into.onEvents(std::move(run));
            run = {};
            if (m_cancel && m_cancel->load())
                return;
        }
    }
    if (!run.empty()) {
        m_storedEvents += qint64(run.size());
        m_into.onEvents(std::move(run));
    }
}

void StoredReplayMerge::onEvent(RequestEvent &&event)
{
    std::vector<RequestEvent> one;
    one.push_back(std::move(event));
    onEvents(std::move(one));
}

void StoredReplayMerge::onEvents(std::vector<RequestEvent> &&events)
{
    if (events.empty())
        return;
    Store *store = nextStore();
    const auto newest = std::max_element(
        events.cbegin(), events.cend(),
        [](const RequestEvent &a, const RequestEvent &b) { return a.tsMs < b.tsMs; });
    // No stored event belongs before any of these: the chunk goes on whole (the usual case,
    // and the only one without stores).
    if (!store || store->chunk[store->next].tsMs >= newest->tsMs) {
        m_into.onEvents(std::move(events));
        return;
    }
    std::vector<RequestEvent> run;
    run.reserve(events.size());
    for (RequestEvent &event : events) {
        store = nextStore();
        if (store && store->chunk[store->next].tsMs < event.tsMs) {
            if (!run.empty()) {
                m_into.onEvents(std::move(run));
                run = {};
            }
            handOnStoredBefore(&event.tsMs);
        }
        run.push_back(std::move(event));
    }
    if (!run.empty())
        m_into.onEvents(std::move(run));
}

void StoredReplayMerge::onMalformed(MalformedRecord &&record)
{
    m_into.onMalformed(std::move(record));
}

void StoredReplayMerge::finish()
{
    handOnStoredBefore(nullptr);
}

} // namespace ts
