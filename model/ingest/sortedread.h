#pragma once
// Exact time order for files read whole (issue 30.4). Log writers put a line down when a request
// *ends* (Apache's combined log, most access logs) while its timestamp says when it began: the
// real Apache sample has 7,304 of 10,000 lines up to 59 s behind the line before them, far past
// the 5 s reorder window of readSourcesMerged. A file read whole has no reason to be replayed
// out of order, so when that read meets a line later than its window the caller reads the files
// again through readSourcesSorted, a sort in runs and a merge (an external merge sort):
// - each input is read in its own order into runs of kSortRunEvents events; each run is sorted
//   (stable: equal instants keep their line order), and every run but the last is written to a
//   temporary file (events whose secrets are already masked; 0600, removed at the end), so
//   memory holds one run whatever the file's size;
// - the runs of every input are merged by (time, input, run): equal instants in the inputs'
//   order, then each input's line order, as readSourcesMerged orders them. Past kSortFanIn runs,
//   runs are first merged into longer ones, so open files and read buffers stay bounded too.
// The result is the events in exact time order: lateEvents is 0 by construction. Malformed
// records go to the sink as they are read, in each input's order.
//
// Cost: a file in time order never comes here (its merged read met no late line), so `report`
// keeps reading and analysing side by side; a disordered one is read twice, the second time
// without analysis until its end.

#include "ingest/ingest.h"
#include "ingest/sourcereader.h"
#include "ingest/timemerge.h"

#include <QStringList>

namespace ts {

// Events per sorted run held in memory (~600 bytes each and their text: some 60 MB).
constexpr qsizetype kSortRunEvents = 65536;
// Runs merged at once; more are merged in passes.
constexpr int kSortFanIn = 64;

struct SortOptions
{
    qsizetype runEvents = kSortRunEvents; // tests make runs small to exercise the spill
    int fanIn = kSortFanIn;
};

// Reads `paths` into `sink` in exact time order (see above). merge.cancel and merge.progress
// are honoured; the reorder window is not used. Each input is read once, one after the other.
MergeResult readSourcesSorted(const QStringList &paths, IngestSink &sink,
                              const SourceOptions &options = {}, const MergeOptions &merge = {},
                              const SortOptions &sort = {});

// Whether every path can be read a second time from its start (a regular file, not "-" or a
// pipe): what a caller checks before it asks readSourcesMerged to stop at the first late line.
bool canReadAgain(const QStringList &paths);

} // namespace ts
