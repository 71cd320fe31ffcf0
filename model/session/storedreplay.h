#pragma once
// One timeline when a policy change analyses the session again. The files are read again
// (merged by time among themselves, ingest/timemerge.h); what only a workspace holds (opened
// workspaces, the live feeds and polled stores in the scratch workspace) is read back from
// SQLite. Replayed one after the other, a live feed received while a followed file grew came
// entirely after the file: every one of its events older than the file's last line, so the
// engine charged them all at that instant (the clamp for late events) and the buckets' peaks
// after the change were not those before it.
//
// StoredReplayMerge sits between the files' merge and the Analysis and hands the stored events
// in between, in the order the first reads had: by time; at one instant the files first, then
// the stores in the order they were added. Chunks with no stored event inside go through as
// they are (the reader's vectors, no copy).

#include "ingest/ingest.h"
#include "store/workspacereader.h"

#include <atomic>
#include <memory>
#include <vector>

namespace ts {

class StoredReplayMerge final : public IngestSink
{
public:
    // Gets every event, in the merged order. cancel (may be null) is polled between chunks.
    explicit StoredReplayMerge(IngestSink &into, const std::atomic<bool> *cancel = nullptr);
    ~StoredReplayMerge() override;
    StoredReplayMerge(const StoredReplayMerge &) = delete;
    StoredReplayMerge &operator=(const StoredReplayMerge &) = delete;

    // A store's events, read in time order from the cursor (made by reader, which this keeps).
    void addStore(std::unique_ptr<WorkspaceReader> reader,
                  std::unique_ptr<WorkspaceReader::TimeOrderedCursor> cursor);

    // The files' events (in time order, but for late lines).
    void onEvent(RequestEvent &&event) override;
    void onEvents(std::vector<RequestEvent> &&events) override;
    void onMalformed(MalformedRecord &&record) override;

    // Hands on the stored events no file event came after. Call once the files are read.
    void finish();
    // Stored events handed on so far.
    [[nodiscard]] qint64 storedEvents() const { return m_storedEvents; }
    // The first store that failed to read, empty if none did.
    [[nodiscard]] QString errorString() const { return m_error; }

private:
    struct Store;
    // The store whose next event comes first; nullptr when none has one left.
    Store *nextStore();
    // Hands on every stored event older than limitMs (every one left when limitMs is null).
    void handOnStoredBefore(const qint64 *limitMs);

    IngestSink &m_into;
    const std::atomic<bool> *m_cancel;
    std::vector<std::unique_ptr<Store>> m_stores;
    qint64 m_storedEvents = 0;
    QString m_error;
};

} // namespace ts
