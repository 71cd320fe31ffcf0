#include "core/immortaltext.h"

#include <cstring>

namespace ts {

ImmortalTextArena::ImmortalTextArena(size_t budgetChars) : m_budgetChars(budgetChars) {}

ImmortalTextArena::~ImmortalTextArena()
{
    for (char16_t *block : m_blocks)
        delete[] block;
}

QString ImmortalTextArena::keep(const QString &text)
{
    const size_t size = size_t(text.size());
    if (size == 0 || size + 1 > kBlockChars) // (a value longer than a block is not "a value")
        return text;
    std::lock_guard lock(m_mutex);
    if (const auto kept = m_kept.constFind(QStringView(text)); kept != m_kept.constEnd())
        return kept.value();
    if (m_charsUsed + size + 1 > m_budgetChars)
        return text;
    if (m_usedInBlock + size + 1 > kBlockChars) {
        m_blocks.push_back(new char16_t[kBlockChars]);
        m_usedInBlock = 0;
    }
    char16_t *copy = m_blocks.back() + m_usedInBlock;
    m_usedInBlock += size + 1;
    m_charsUsed += size + 1;
    // Terminated like any QString's data, for code that reads through constData().
    std::memcpy(copy, text.constData(), size * sizeof(char16_t));
    copy[size] = u'\0';
    const QString kept =
        QString::fromRawData(reinterpret_cast<const QChar *>(copy), qsizetype(size));
    m_kept.insert(QStringView(copy, qsizetype(size)), kept);
    return kept;
}

size_t ImmortalTextArena::charsUsed() const
{
    std::lock_guard lock(m_mutex);
    return m_charsUsed;
}

ImmortalTextArena &ImmortalTextArena::process()
{
    // 4 M characters (8 MB): thousands of identities and header values for any real log.
    // Allocated once and never destroyed, so strings into it stay valid through static
    // destruction at exit (the blocks stay reachable from here, which leak checkers accept).
    static ImmortalTextArena *const arena = new ImmortalTextArena(4 * 1024 * 1024);
    return *arena;
}

} // namespace ts
