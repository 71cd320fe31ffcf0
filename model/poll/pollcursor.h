#pragma once
// Exactly-once reading of a store that only answers "rows with ts >= T, in ts order"
// (docs/throttlescope.1, POLLED SOURCES, and below).
//
// The cursor is the newest key read (a key is the row's time at the store's filter
// resolution: seconds for ClickHouse, milliseconds elsewhere) and, for the rows of the window
// before it, a multiset of their content hashes. Each request asks again from the window's
// start, so:
//   - rows with the same timestamp at the boundary (some read, some not yet written, or cut by
//     the page size) are read again, and only the copies not yet counted are taken;
//   - a row that arrives late (written after newer rows were read) is taken if its time is
//     within the window; older than that it is missed (the bound);
//   - identical rows (same content, same time) count as many times as the store holds them:
//     a hash seen k times and answered m times yields m - k new rows;
//   - rows older than what was asked (the window's start) are never taken: a store that
//     ignores the filter and answers everything again doubles nothing.
// The window is `overlap` long, but holds at most kMaxRememberedRows contents: a store writing
// more than that within the overlap gets a shorter window (the rows of the newest key are kept
// whatever their number), so the cursor, stored with every commit, stays small.
// No row moves the cursor past the store's present (beginAnswer's ceiling): a row stamped in
// the future (a client with a skewed clock) is taken, counted (rowsAhead) and remembered
// until the store's clock passes it, and the rows after it are still read.
// This needs one property of each answer: for every key below the answer's last key, the
// answer holds all the rows the store has with that key (an ORDER BY the key with a LIMIT
// guarantees it; only the last key's group may be cut). The next page then starts at that last
// key, not after it. An answer may be accepted a chunk at a time (each chunk stored with the
// state after it): a restart after any chunk continues exactly.
//
// Not thread-safe; plain value, copied to the workspace as text (save / restore).

#include <QByteArray>
#include <QByteArrayView>
#include <QHash>
#include <QList>

#include <limits>
#include <optional>

namespace ts::poll {

// 64-bit FNV-1a of a row's bytes: stable across builds and Qt versions (a stored cursor is
// compared with hashes computed by a later run).
quint64 rowHash(const char *data, qsizetype size);
// The hash of `hash`'s bytes followed by `more`: rowHash over a row that arrives in pieces.
quint64 continueRowHash(quint64 hash, QByteArrayView more);

class PollCursor
{
public:
    // The most contents the window remembers (see above): ~17 bytes each in the stored state.
    static constexpr qsizetype kMaxRememberedRows = 20'000;

    explicit PollCursor(qint64 overlapMs = 30'000) : m_overlapMs(overlapMs) {}

    struct Row
    {
        qint64 key = 0;   // the row's time at the store's filter resolution (ms)
        quint64 hash = 0; // rowHash of its content
    };

    // Where the next request starts: the window's start, or `since` before anything was read.
    [[nodiscard]] qint64 lowBound(qint64 sinceMs) const;
    [[nodiscard]] std::optional<qint64> newestKey() const { return m_newest; }
    [[nodiscard]] qint64 overlapMs() const { return m_overlapMs; }
    // Contents remembered for the window.
    [[nodiscard]] qsizetype rememberedRows() const { return m_seen.size(); }
    // Rows taken that were stamped more than the skew ahead of the store's clock.
    [[nodiscard]] qint64 rowsAhead() const { return m_rowsAhead; }

    // One answer, in the store's order, a chunk at a time. ceilingMs: the store's present (no
    // row moves the newest key past it); a fresh row later than aheadAfterMs counts in
    // rowsAhead(). acceptChunk returns the indexes (ascending, into `rows`) of the rows not
    // read before and remembers them. moveNewest false (an answer known to be incomplete): the
    // rows are remembered but the next request starts where this one did.
    void beginAnswer(qint64 ceilingMs = std::numeric_limits<qint64>::max(),
                     qint64 aheadAfterMs = std::numeric_limits<qint64>::max());
    QList<qsizetype> acceptChunk(const QList<Row> &rows, bool moveNewest = true);
    void endAnswer();
    // A whole answer at once (begin, one chunk, end) without a ceiling.
    QList<qsizetype> accept(const QList<Row> &rows, bool moveNewest = true);

    [[nodiscard]] QByteArray save() const;
    // nullopt when `state` is not a saved cursor.
    static std::optional<PollCursor> restore(const QByteArray &state, qint64 overlapMs);

private:
    struct Seen
    {
        qint64 key = 0;
        qint32 count = 0;
    };
    // Per answer, for a content that may have been read before: how often it was known when
    // the answer began and how often the answer has held it so far.
    struct Tally
    {
        qint32 known = 0;
        qint32 answered = 0;
    };
    void prune();
    static std::optional<PollCursor> restoreV1(const QList<QByteArray> &lines, qint64 overlapMs);
    static std::optional<PollCursor> restoreV2(const QList<QByteArray> &lines, qint64 overlapMs);

    qint64 m_overlapMs;
    std::optional<qint64> m_newest;
    // The start of the window: newest - overlap, or later when that would remember too much.
    std::optional<qint64> m_windowStart;
    // The newest key of any row remembered (an incomplete answer's and a future row's too): a
    // row newer than it cannot have been read before.
    std::optional<qint64> m_highest;
    QHash<quint64, Seen> m_seen;
    qint64 m_rowsAhead = 0;
    // The answer being accepted.
    qint64 m_ceiling = std::numeric_limits<qint64>::max();
    qint64 m_aheadAfter = std::numeric_limits<qint64>::max();
    std::optional<qint64> m_askedFloor;     // rows below it were not asked for
    std::optional<qint64> m_highestAtStart; // rows above it cannot have been read before
    QHash<quint64, Tally> m_tally;
};

} // namespace ts::poll
