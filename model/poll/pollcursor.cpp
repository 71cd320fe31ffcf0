#include "pollcursor.h"

#include <QList>

#include <algorithm>
#include <optional>

namespace ts::poll {

quint64 rowHash(const char *data, qsizetype size)
{
    quint64 hash = 14695981039346656037ULL;
    for (qsizetype i = 0; i < size; ++i) {
        hash ^= quint8(data[i]);
        hash *= 1099511628211ULL;
    }
    return hash;
}

qint64 PollCursor::lowBound(qint64 sinceMs) const
{
    return m_newest ? std::max(sinceMs, *m_newest - m_overlapMs) : sinceMs;
}

QList<qsizetype> PollCursor::accept(const QList<Row> &rows, bool moveNewest)
{
    QList<qsizetype> fresh;
    if (rows.isEmpty())
        return fresh;
    std::optional<qint64> newest = m_newest;
    for (const Row &row : rows) {
        if (!newest || row.key > *newest)
            newest = row.key;
    }
    // What the cursor remembers after this answer: the rows of the overlap window before the
    // newest key.
    const qint64 windowStart =
        (moveNewest ? *newest : m_newest.value_or(*newest)) - m_overlapMs;
    // A row newer than everything read before cannot have been read: taken at once (the fast
    // path of a large backlog). The others are counted per content against what was read.
    // Rows older than what the request asked for (newest - overlap) were read before or fall
    // outside the bound: a store that ignores the filter (a static file served over HTTP)
    // sends them again, and they must not count twice.
    const std::optional<qint64> asked =
        m_newest ? std::optional<qint64>(*m_newest - m_overlapMs) : std::nullopt;
    QHash<quint64, QList<qsizetype>> where;
    for (qsizetype i = 0; i < rows.size(); ++i) {
        const Row &row = rows.at(i);
        if (asked && row.key < *asked)
            continue;
        if (m_highest && row.key <= *m_highest) {
            where[row.hash].append(i);
            continue;
        }
        fresh.append(i);
        if (row.key >= windowStart) {
            Seen &seen = m_seen[row.hash];
            seen.key = row.key;
            ++seen.count;
        }
    }
    for (auto it = where.cbegin(); it != where.cend(); ++it) {
        const qsizetype answered = it.value().size();
        Seen &seen = m_seen[it.key()];
        const qsizetype known = seen.count;
        // The first copies are the known ones: identical rows are interchangeable.
        for (qsizetype copy = known; copy < answered; ++copy)
            fresh.append(it.value().at(copy));
        seen.count = qint32(std::max<qsizetype>(known, answered));
        seen.key = rows.at(it.value().constFirst()).key;
    }
    std::sort(fresh.begin(), fresh.end());
    m_highest = m_highest ? std::max(*m_highest, *newest) : *newest;
    if (moveNewest)
        m_newest = newest;
    m_seen.removeIf([windowStart](const auto &item) { return item.value().key < windowStart; });
    return fresh;
}

QByteArray PollCursor::save() const
{
    // "1 NEWEST\n" then one "KEY HASH COUNT\n" per remembered content (hex hash).
    QByteArray out = "1 " + (m_newest ? QByteArray::number(*m_newest) : QByteArrayLiteral("-")) +
                     '\n';
    out.reserve(out.size() + m_seen.size() * 34);
    for (auto it = m_seen.cbegin(); it != m_seen.cend(); ++it) {
        out += QByteArray::number(it.value().key) + ' ' + QByteArray::number(it.key(), 16) + ' ' +
               QByteArray::number(it.value().count) + '\n';
    }
    return out;
}

std::optional<PollCursor> PollCursor::restore(const QByteArray &state, qint64 overlapMs)
{
    PollCursor cursor(overlapMs);
    const QList<QByteArray> lines = state.split('\n');
    if (lines.isEmpty() || !lines.first().startsWith("1 "))
        return std::nullopt;
    const QByteArray newest = lines.first().mid(2);
    if (newest != "-") {
        bool ok = false;
        cursor.m_newest = newest.toLongLong(&ok);
        if (!ok)
            return std::nullopt;
    }
    for (qsizetype i = 1; i < lines.size(); ++i) {
        if (lines.at(i).isEmpty())
            continue;
        const QList<QByteArray> fields = lines.at(i).split(' ');
        bool okKey = false, okHash = false, okCount = false;
        if (fields.size() != 3)
            return std::nullopt;
        Seen seen;
        seen.key = fields.at(0).toLongLong(&okKey);
        const quint64 hash = fields.at(1).toULongLong(&okHash, 16);
        seen.count = fields.at(2).toInt(&okCount);
        if (!okKey || !okHash || !okCount)
            return std::nullopt;
        cursor.m_seen.insert(hash, seen);
        cursor.m_highest = cursor.m_highest ? std::max(*cursor.m_highest, seen.key) : seen.key;
    }
    if (cursor.m_newest)
        cursor.m_highest = std::max(cursor.m_highest.value_or(*cursor.m_newest), *cursor.m_newest);
    return cursor;
}

} // namespace ts::poll
