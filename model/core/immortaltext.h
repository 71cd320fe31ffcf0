#pragma once
// Text that lives as long as the process, for the few values readers intern (identities, apps,
// services, methods, header names ...): a QString over it is raw data, with no reference count,
// so copying it into an event and freeing the event touch no shared memory. A reference-counted
// copy shared by every event would have its count written by the parser threads (each copy) and
// by the analysis threads (each free) at once: one contended cache line per value, on every
// event (~8 % of `report`'s time on a 1M-line log).
//
// Bounded: once the arena's budget is used, keep() returns ordinary QStrings, so a log whose
// "low-cardinality" fields are unique per line costs a fixed amount, not memory per line.

#include <QHash>
#include <QString>
#include <QStringView>

#include <cstddef>
#include <mutex>
#include <vector>

namespace ts {

class ImmortalTextArena
{
public:
    explicit ImmortalTextArena(size_t budgetChars);
    ImmortalTextArena(const ImmortalTextArena &) = delete;
    ImmortalTextArena &operator=(const ImmortalTextArena &) = delete;
    // Frees the blocks: only for arenas whose strings are known to be gone (tests).
    ~ImmortalTextArena();

    // `text` (UTF-16) copied into the arena as a raw-data QString, or `text` itself when the
    // budget is used up (or it is empty). Thread-safe. Equal text is kept once: every thread
    // that keeps it gets the same characters, so the readers' parser threads, each with its own
    // interner, hand out one address per value, and the engine's and detectors' comparisons and
    // hash caches find it by address instead of comparing text.
    [[nodiscard]] QString keep(const QString &text);
    [[nodiscard]] size_t charsUsed() const;

    // The process's arena, used by the readers. Never destroyed: strings into it may be held
    // by anything until exit.
    static ImmortalTextArena &process();

private:
    static constexpr size_t kBlockChars = 32 * 1024;

    const size_t m_budgetChars;
    // Protects the block list, the index and the fill counters below (keep() runs on parser
    // threads; it is called once per new interned value, not per event, so a mutex costs
    // nothing measurable).
    mutable std::mutex m_mutex;
    std::vector<char16_t *> m_blocks;
    QHash<QStringView, QString> m_kept; // text -> its copy in the blocks (keys view the copies)
    size_t m_usedInBlock = kBlockChars; // forces a first block
    size_t m_charsUsed = 0;
};

} // namespace ts
