// libFuzzer harness for a stored poll cursor (poll/pollcursor.h: the state the workspace keeps,
// read back at the next start, so any bytes may be there). Invariants: a restored cursor saves
// to a state that restores to the same state, never remembers more than its cap, and accepts a
// chunk of rows with ascending indexes into it.
#include "poll/pollcursor.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray state(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    std::optional<ts::poll::PollCursor> cursor = ts::poll::PollCursor::restore(state, 30'000);
    if (!cursor)
        return 0;
    if (cursor->rememberedRows() > ts::poll::PollCursor::kMaxRememberedRows)
        std::abort();
    const QByteArray saved = cursor->save();
    const std::optional<ts::poll::PollCursor> again = ts::poll::PollCursor::restore(saved, 30'000);
    if (!again || again->save() != saved)
        std::abort();
    // A page around where it would ask next: duplicates, a row far ahead, one far behind.
    const qint64 low = cursor->lowBound(0);
    QList<ts::poll::PollCursor::Row> rows;
    for (int i = 0; i < 8; ++i)
        rows.append({low + (i / 2) * 10, quint64(i % 3)});
    rows.append({std::numeric_limits<qint64>::max() / 2, 7});
    rows.append({std::numeric_limits<qint64>::min() / 2, 8});
    cursor->beginAnswer(low + 100, low + 50);
    const QList<qsizetype> fresh = cursor->acceptChunk(rows);
    cursor->endAnswer();
    qsizetype previous = -1;
    for (const qsizetype index : fresh) {
        if (index <= previous || index >= rows.size())
            std::abort();
        previous = index;
    }
    const qint64 before = again->newestKey().value_or(std::numeric_limits<qint64>::min());
    if (cursor->newestKey() && *cursor->newestKey() > std::max(low + 100, before))
        std::abort(); // no row moves the cursor past the ceiling
    return 0;
}
