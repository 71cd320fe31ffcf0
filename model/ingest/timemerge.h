#pragma once
// Several sources, one timeline (issue 19.5). The engine replays events in the order it gets
// them and clamps an event older than a bucket's latest instant to that instant: two clients'
// logs of the same hour read one after the other charged the whole second file at the first
// file's last instant (a peak fill of 26.3 where the same events in time order give 2.71). So
// every pipeline that reads files (`report FILE...`, the dashboard) reads them through
// readSourcesMerged: a k-way merge by timestamp of its inputs, each read in its own order, with
// a bounded reorder buffer for lines that are slightly late.
//
// The rules, which make `report A B`, the report of the merged file and `import A B` followed by
// `report --workspace` the same report:
// - Order: by tsMs, then input (argument order), then the input's own order (line order). The
//   workspace replays `ORDER BY ts_ms, id`, and an import appends A's rows and then B's, in line
//   order: the same order.
// - Reorder window (kDefaultReorderWindowMs): an event is handed on once it is older than every
//   input's newest instant minus the window, so a line up to the window behind the newest line
//   of its input takes its place in time.
// - A line later than that (older than an event already handed on) is *late*: handed on at once,
//   with its own timestamp, and counted (MergeResult::lateEvents; the report's `lateEvents`,
//   counted by Analysis the same way, is the number the operator sees). The engine analyses it
//   at each bucket's latest instant, so time never runs backwards.
//   Until every input has shown its first instant nothing is handed on, so a line late by more
//   than the window in the first chunk (~1 MiB) of an input can still take its place.
// - Malformed records go straight through (with their file and line), in each input's order.
//
// Cost: one input is read on the calling thread, and an input in time order is handed on in the
// chunks its reader made (no per-event copy, no heap): only a check that the chunk is sorted.
// Several inputs are read each on a thread of its own into a bounded queue (a few chunks per
// input: backpressure, bounded memory) and merged on the calling thread, which always reads
// next from the input that holds the merge back.

#include "ingest/ingest.h"
#include "ingest/sourcereader.h"

#include <QList>
#include <QStringList>

#include <atomic>
#include <functional>
#include <vector>

namespace ts {

// Lines this much behind the newest line of their input still take their place in time: log
// writers that buffer per thread or per connection flush a few seconds apart.
constexpr qint64 kDefaultReorderWindowMs = 5000;

struct MergeOptions
{
    qint64 reorderWindowMs = kDefaultReorderWindowMs;
    // Set from another thread to stop; polled between chunks (and by the readers).
    const std::atomic<bool> *cancel = nullptr;
    // Bytes read over all inputs and their total (-1 unknown), now and then, on the calling
    // thread.
    std::function<void(qint64 done, qint64 total)> progress;
    // As ReadControl::holdUnterminatedTail, for every input.
    bool holdUnterminatedTail = false;
    // Stop reading at the first late line (MergeResult::stoppedAtLate) instead of handing it on:
    // the caller reads the files again in exact time order (ingest/sortedread.h), as `report`
    // does for files it reads whole. What was handed on before is to be thrown away.
    bool stopAtFirstLate = false;
};

// Sees each input's records in that input's own order, before the merge, on the calling thread:
// what the dashboard counts per file and copies into its scratch workspace.
class MergeInputObserver
{
public:
    virtual ~MergeInputObserver() = default;
    virtual void inputEvents(int input, const std::vector<RequestEvent> &events) = 0;
    virtual void inputMalformed(int input, const MalformedRecord &record) = 0;
    // The input is read to its end (its remaining events may still be in the reorder buffer).
    virtual void inputFinished(int input, const SourceOutcome &outcome) = 0;
};

struct MergeResult
{
    QList<SourceOutcome> outcomes; // one per input, in input order
    qint64 lateEvents = 0;         // handed on after a later event (see the header comment)
    bool cancelled = false;
    bool stoppedAtLate = false; // MergeOptions::stopAtFirstLate met a late line: read again
};

// Reads `paths` into `sink` in time order (see the header comment). `sink` gets the merged
// events through onEvents and every malformed record through onMalformed.
MergeResult readSourcesMerged(const QStringList &paths, IngestSink &sink,
                              const SourceOptions &options = {}, const MergeOptions &merge = {},
                              MergeInputObserver *observer = nullptr);

} // namespace ts
