#include "pollcursor.h"

#include <QList>

#include <algorithm>
#include <map>
#include <optional>

namespace ts::poll {

quint64 rowHash(const char *data, qsizetype size)
{
    return continueRowHash(14695981039346656037ULL, QByteArrayView(data, size));
}

quint64 continueRowHash(quint64 hash, QByteArrayView more)
{
    for (const char c : more) {
        hash ^= quint8(c);
        hash *= 1099511628211ULL;
    }
    return hash;
}

qint64 PollCursor::lowBound(qint64 sinceMs) const
{
    if (m_windowStart)
        return std::max(sinceMs, *m_windowStart);
    return m_newest ? std::max(sinceMs, *m_newest - m_overlapMs) : sinceMs;
}

void PollCursor::beginAnswer(qint64 ceilingMs, qint64 aheadAfterMs)
{
    m_ceiling = ceilingMs;
    m_aheadAfter = aheadAfterMs;
    m_askedFloor = m_windowStart;
    if (!m_askedFloor && m_newest)
        m_askedFloor = *m_newest - m_overlapMs;
    m_highestAtStart = m_highest;
    m_tally.clear();
}

QList<qsizetype> PollCursor::acceptChunk(const QList<Row> &rows, bool moveNewest)
{
    QList<qsizetype> fresh;
    std::optional<qint64> newest;
    for (qsizetype i = 0; i < rows.size(); ++i) {
        const Row &row = rows.at(i);
        // Rows older than what the request asked for were read before or fall outside the
        // bound: a store that ignores the filter (a static file served over HTTP) sends them
        // again, and they must not count twice.
        if (m_askedFloor && row.key < *m_askedFloor)
            continue;
        bool isFresh = true;
        Seen &seen = m_seen[row.hash];
        if (!m_highestAtStart || row.key > *m_highestAtStart) {
            // Newer than everything read before: cannot have been read (the fast path of a
            // large backlog).
            ++seen.count;
        } else {
            // Counted per content against what was read: the first copies are the known ones
            // (identical rows are interchangeable).
            auto tally = m_tally.find(row.hash);
            if (tally == m_tally.end())
                tally = m_tally.insert(row.hash, Tally{seen.count, 0});
            ++tally->answered;
            isFresh = tally->answered > tally->known;
            seen.count = std::max(seen.count, tally->answered);
        }
        seen.key = row.key;
        if (isFresh) {
            fresh.append(i);
            if (row.key > m_aheadAfter)
                ++m_rowsAhead;
        }
        if (row.key <= m_ceiling && (!newest || row.key > *newest))
            newest = row.key;
        if (!m_highest || row.key > *m_highest)
            m_highest = row.key;
    }
    if (moveNewest && newest && (!m_newest || *newest > *m_newest))
        m_newest = newest;
    prune();
    return fresh;
}

void PollCursor::endAnswer()
{
    m_tally.clear();
    m_askedFloor.reset();
    m_highestAtStart.reset();
    m_ceiling = std::numeric_limits<qint64>::max();
    m_aheadAfter = std::numeric_limits<qint64>::max();
}

QList<qsizetype> PollCursor::accept(const QList<Row> &rows, bool moveNewest)
{
    beginAnswer();
    QList<qsizetype> fresh = acceptChunk(rows, moveNewest);
    endAnswer();
    return fresh;
}

void PollCursor::prune()
{
    // Before anything moved the newest key (a first answer known to be incomplete), the window
    // is measured from the newest row remembered.
    const std::optional<qint64> base = m_newest ? m_newest : m_highest;
    if (!base)
        return;
    qint64 start = *base - m_overlapMs;
    if (m_windowStart)
        start = std::max(start, *m_windowStart); // never moves back: what fell out is forgotten
    m_seen.removeIf([start](const auto &item) { return item.value().key < start; });
    if (m_seen.size() > kMaxRememberedRows) {
        // Too much within the overlap: the window starts at the oldest key whose rows, with
        // all newer ones, fit; the rows of the newest key (and any ahead of it) are kept
        // whatever their number, or its boundary would be read twice.
        std::map<qint64, qsizetype, std::greater<>> perKey;
        for (auto it = m_seen.cbegin(); it != m_seen.cend(); ++it)
            ++perKey[it.value().key];
        qsizetype kept = 0;
        qint64 cut = *base;
        for (const auto &[key, count] : perKey) {
            if (key >= *base) {
                kept += count;
                continue;
            }
            if (kept + count > kMaxRememberedRows)
                break;
            kept += count;
            cut = key;
        }
        start = std::max(start, cut);
        m_seen.removeIf([start](const auto &item) { return item.value().key < start; });
    }
    m_windowStart = start;
}

QByteArray PollCursor::save() const
{
    // "2 NEWEST WINDOWSTART AHEAD\n", then one line per key, ascending: "=KEY HASH HASH*COUNT
    // ...\n" for the first, "+DELTA HASH ..." (from the key before) for the others (hex hashes;
    // *COUNT when the content was read more than once).
    auto number = [](const std::optional<qint64> &value) {
        return value ? QByteArray::number(*value) : QByteArrayLiteral("-");
    };
    QByteArray out = "2 " + number(m_newest) + ' ' + number(m_windowStart) + ' ' +
                     QByteArray::number(m_rowsAhead) + '\n';
    std::map<qint64, QList<std::pair<quint64, qint32>>> byKey;
    for (auto it = m_seen.cbegin(); it != m_seen.cend(); ++it)
        byKey[it.value().key].append({it.key(), it.value().count});
    out.reserve(out.size() + m_seen.size() * 17 + qsizetype(byKey.size()) * 16);
    std::optional<qint64> previous;
    for (auto &[key, contents] : byKey) {
        std::sort(contents.begin(), contents.end()); // the same state, the same text
        out += previous ? '+' + QByteArray::number(key - *previous) : '=' + QByteArray::number(key);
        previous = key;
        for (const auto &[hash, count] : contents) {
            out += ' ' + QByteArray::number(hash, 16);
            if (count > 1)
                out += '*' + QByteArray::number(count);
        }
        out += '\n';
    }
    return out;
}

std::optional<PollCursor> PollCursor::restore(const QByteArray &state, qint64 overlapMs)
{
    const QList<QByteArray> lines = state.split('\n');
    if (lines.isEmpty())
        return std::nullopt;
    std::optional<PollCursor> cursor;
    if (lines.first().startsWith("1 "))
        cursor = restoreV1(lines, overlapMs);
    else if (lines.first().startsWith("2 "))
        cursor = restoreV2(lines, overlapMs);
    if (!cursor)
        return std::nullopt;
    for (auto it = cursor->m_seen.cbegin(); it != cursor->m_seen.cend(); ++it) {
        if (!cursor->m_highest || it.value().key > *cursor->m_highest)
            cursor->m_highest = it.value().key;
    }
    if (cursor->m_newest)
        cursor->m_highest =
            std::max(cursor->m_highest.value_or(*cursor->m_newest), *cursor->m_newest);
    return cursor;
}

// "1 NEWEST\n" then one "KEY HASH COUNT\n" per remembered content: what workspaces stored
// before the window was bounded.
std::optional<PollCursor> PollCursor::restoreV1(const QList<QByteArray> &lines, qint64 overlapMs)
{
    PollCursor cursor(overlapMs);
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
        if (!okKey || !okHash || !okCount || seen.count < 1)
            return std::nullopt;
        cursor.m_seen.insert(hash, seen);
    }
    return cursor;
}

std::optional<PollCursor> PollCursor::restoreV2(const QList<QByteArray> &lines, qint64 overlapMs)
{
    PollCursor cursor(overlapMs);
    const QList<QByteArray> head = lines.first().split(' ');
    if (head.size() != 4)
        return std::nullopt;
    auto optionalNumber = [](const QByteArray &text, std::optional<qint64> *value) {
        if (text == "-")
            return true;
        bool ok = false;
        *value = text.toLongLong(&ok);
        return ok;
    };
    bool aheadOk = false;
    cursor.m_rowsAhead = head.at(3).toLongLong(&aheadOk);
    if (!optionalNumber(head.at(1), &cursor.m_newest) ||
        !optionalNumber(head.at(2), &cursor.m_windowStart) || !aheadOk || cursor.m_rowsAhead < 0)
        return std::nullopt;
    std::optional<qint64> previous;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray &line = lines.at(i);
        if (line.isEmpty())
            continue;
        const QList<QByteArray> fields = line.split(' ');
        const QByteArray &first = fields.first();
        bool ok = first.startsWith('=') || (first.startsWith('+') && previous);
        const qint64 number = ok ? first.mid(1).toLongLong(&ok) : 0;
        ok = ok && (first.startsWith('=') || (number > 0 && number < (qint64(1) << 50)));
        if (!ok || fields.size() < 2 || (first.startsWith('=') && previous))
            return std::nullopt;
        const qint64 key = first.startsWith('=') ? number : *previous + number;
        previous = key;
        for (qsizetype f = 1; f < fields.size(); ++f) {
            const QByteArray &field = fields.at(f);
            const qsizetype star = field.indexOf('*');
            bool okHash = false;
            bool okCount = true;
            const quint64 hash =
                field.left(star < 0 ? field.size() : star).toULongLong(&okHash, 16);
            const int count = star < 0 ? 1 : field.mid(star + 1).toInt(&okCount);
            if (!okHash || !okCount || count < 1 || cursor.m_seen.contains(hash))
                return std::nullopt;
            cursor.m_seen.insert(hash, Seen{key, count});
        }
    }
    return cursor;
}

} // namespace ts::poll
