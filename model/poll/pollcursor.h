#pragma once
// Exactly-once reading of a store that only answers "rows with ts >= T, in ts order"
// (docs/throttlescope.1, POLLED SOURCES, and below).
//
// The cursor is the newest key read (a key is the row's time at the store's filter
// resolution: seconds for ClickHouse, milliseconds elsewhere) and, for the rows of the last
// `overlap` before it, a multiset of their content hashes. Each request asks again from
// newest - overlap, so:
//   - rows with the same timestamp at the boundary (some read, some not yet written, or cut by
//     the page size) are read again, and only the copies not yet counted are taken;
//   - a row that arrives late (written after newer rows were read) is taken if its time is
//     within the overlap of the newest row read; older than that it is missed (the bound);
//   - identical rows (same content, same time) count as many times as the store holds them:
//     a hash seen k times and answered m times yields m - k new rows;
//   - rows older than what was asked (newest - overlap) are never taken: a store that ignores
//     the filter and answers everything again doubles nothing.
// This needs one property of each answer: for every key below the answer's last key, the
// answer holds all the rows the store has with that key (an ORDER BY the key with a LIMIT
// guarantees it; only the last key's group may be cut). The next page then starts at that last
// key, not after it.
//
// Not thread-safe; plain value, copied to the workspace as text (save / restore).

#include <QByteArray>
#include <QHash>
#include <QList>

#include <optional>

namespace ts::poll {

// 64-bit FNV-1a of a row's bytes: stable across builds and Qt versions (a stored cursor is
// compared with hashes computed by a later run).
quint64 rowHash(const char *data, qsizetype size);

class PollCursor
{
public:
    explicit PollCursor(qint64 overlapMs = 30'000) : m_overlapMs(overlapMs) {}

    struct Row
    {
        qint64 key = 0;   // the row's time at the store's filter resolution (ms)
        quint64 hash = 0; // rowHash of its content
    };

    // Where the next request starts: newest - overlap, or `since` before anything was read.
    [[nodiscard]] qint64 lowBound(qint64 sinceMs) const;
    [[nodiscard]] std::optional<qint64> newestKey() const { return m_newest; }
    [[nodiscard]] qint64 overlapMs() const { return m_overlapMs; }
    // Rows remembered for the overlap window.
    [[nodiscard]] qsizetype rememberedRows() const { return m_seen.size(); }

    // One answer, in the store's order. Returns the indexes (ascending) of the rows not read
    // before; remembers them. Then forgets what fell out of the overlap window. moveNewest
    // false (an answer known to be incomplete): the rows are remembered but the next request
    // starts where this one did.
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
    qint64 m_overlapMs;
    std::optional<qint64> m_newest;
    // The newest key of any row remembered (an incomplete answer's too): a row newer than it
    // cannot have been read before.
    std::optional<qint64> m_highest;
    QHash<quint64, Seen> m_seen;
};

} // namespace ts::poll
