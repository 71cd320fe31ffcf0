#include "pollcursor.h"

#include <QList>

#include <algorithm>

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
    // How many copies of each content this answer holds, and where.
    QHash<quint64, QList<qsizetype>> where;
    where.reserve(rows.size());
    for (qsizetype i = 0; i < rows.size(); ++i)
        where[rows.at(i).hash].append(i);
    QList<qsizetype> fresh;
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
    for (const Row &row : rows) {
        if (!moveNewest)
            break;
        if (!m_newest || row.key > *m_newest)
            m_newest = row.key;
    }
    if (m_newest) {
        const qint64 oldest = *m_newest - m_overlapMs;
        m_seen.removeIf([oldest](const auto &item) { return item.value().key < oldest; });
    }
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
    }
    return cursor;
}

} // namespace ts::poll
