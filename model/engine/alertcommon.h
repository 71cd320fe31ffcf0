#pragma once
// Small helpers shared by the breaker tracker and the alert detector.

#include "signals/throttlesignals.h"

#include <QHashFunctions>
#include <QString>
#include <QStringView>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

namespace ts {

// The highest fraction of a limit the service said was used on this response:
// x-ms-throttle-limit-percentage, or 1 - remaining / limit of the RateLimit header family.
// NaN when the response said nothing about it (every comparison with it is false).
// A plain double, not std::optional<double>: GCC built the optional in two stores and copied it
// with one 16-byte load, which the CPU cannot forward from them; perf put ~20-30 % of the
// breakers' and detectors' per-event time on that stall.
inline double reportedLimitFraction(const throttle::ThrottleSignals &sig)
{
    const std::optional<double> &percentage = sig.limitPercentage;
    double fraction = percentage ? *percentage : std::numeric_limits<double>::quiet_NaN();
    const auto &rateLimit = sig.rateLimit;
    if (rateLimit.limit && rateLimit.remaining && *rateLimit.limit > 0) {
        const double used = 1.0 - *rateLimit.remaining / *rateLimit.limit;
        fraction = std::isnan(fraction) ? used : std::max(fraction, used);
    }
    return fraction;
}

// When the client learned the answer: sent time plus duration when known.
inline qint64 responseArrivalMs(const RequestEvent &event)
{
    return event.tsMs + (event.durationMs > 0 ? qint64(event.durationMs) : qint64(0));
}

// A fast, seeded, non-cryptographic hash of UTF-16 text, 8 bytes per step. Qt's own qHash of a
// QString (SipHash on CPUs without the AES path) costs several times more, and the detectors
// hash identities, apps and urls several times per event. Values live only in memory (hash
// tables of one process): they may change between versions.
inline size_t fastTextHash(QStringView text, size_t seed) noexcept
{
    constexpr quint64 kMultiplier = 0x9E3779B97F4A7C15ull;
    constexpr quint64 kSecondMultiplier = 0xD6E8FEB86659FD93ull;
    const auto *bytes = reinterpret_cast<const char *>(text.data());
    const size_t size = size_t(text.size()) * sizeof(char16_t);
    quint64 hash = quint64(seed) ^ (quint64(size) * kMultiplier);
    size_t at = 0;
    if (size >= 32) {
        // Long text (a URL is ~160 bytes): two independent lanes of 8 bytes, so the CPU works
        // on both multiplications at once instead of waiting on one chain of them.
        quint64 other = hash ^ kSecondMultiplier;
        for (; at + 16 <= size; at += 16) {
            quint64 first;
            quint64 second;
            std::memcpy(&first, bytes + at, 8);
            std::memcpy(&second, bytes + at + 8, 8);
            hash = (hash ^ first) * kMultiplier;
            hash ^= hash >> 29;
            other = (other ^ second) * kSecondMultiplier;
            other ^= other >> 29;
        }
        hash = (hash ^ ((other << 31) | (other >> 33))) * kMultiplier;
        hash ^= hash >> 29;
    }
    for (; at + 8 <= size; at += 8) {
        quint64 chunk;
        std::memcpy(&chunk, bytes + at, 8);
        hash = (hash ^ chunk) * kMultiplier;
        hash ^= hash >> 29;
    }
    if (at < size) {
        // The tail: the last 8 bytes (overlapping the previous step) when there are that many,
        // else the 2, 4 or 6 bytes one unit at a time. Not a memcpy of a variable size: the
        // 8-byte load after its narrower stores stalled on store forwarding.
        quint64 chunk = 0;
        if (size >= 8) {
            std::memcpy(&chunk, bytes + size - 8, 8);
        } else {
            for (size_t k = at; k < size; k += 2)
                chunk |= quint64(text[qsizetype(k / 2)].unicode()) << (8 * k);
        }
        hash = (hash ^ chunk) * kMultiplier;
        hash ^= hash >> 29;
    }
    // murmur3 finaliser: every input bit reaches every output bit
    hash ^= hash >> 33;
    hash *= 0xff51afd7ed558ccdull;
    hash ^= hash >> 33;
    hash *= 0xc4ceb9fe1a85ec53ull;
    hash ^= hash >> 33;
    return size_t(hash);
}

// fastTextHash of the strings events carry, remembered by the address of their characters.
// Readers intern identities, apps, services and namespaces, so the same few hundred strings
// come back on every event and the detectors hash each several times; a hit costs a few
// compares instead of a pass over the text. Sound because a slot holds (shares) the string it
// remembers: its characters stay alive and unchanged while the slot exists, so no other text
// can be found at that address. (Not for QString::fromRawData strings over memory that may be
// freed: the only raw strings events carry are over text that is never freed, the readers'
// interned values in core/immortaltext.h and literals.) One per detector, on its own thread.
class TextHashCache
{
public:
    size_t hash(const QString &text, size_t seed)
    {
        if (text.isEmpty())
            return fastTextHash(text, seed);
        const char16_t *characters = QStringView(text).utf16();
        // Multiplicative mixing: the low bits of heap addresses are mostly alignment.
        const quint64 mixed = (quint64(quintptr(characters)) ^ seed) * 0x9E3779B97F4A7C15ull;
        Slot &slot = m_slots[size_t(mixed >> 54)]; // the top 10 bits: kSlots == 1024
        if (slot.characters != characters || slot.size != text.size() || slot.seed != seed) {
            slot.text = text;
            slot.characters = characters;
            slot.size = text.size();
            slot.seed = seed;
            slot.hash = fastTextHash(text, seed);
        }
        return slot.hash;
    }

private:
    // Identities, apps and services of a few hundred callers, once per parser thread that
    // interned them.
    static constexpr size_t kSlots = 1024;
    static_assert(kSlots == size_t(1) << (64 - 54), "hash() takes the top 10 bits");
    struct Slot
    {
        const char16_t *characters = nullptr;
        qsizetype size = 0;
        size_t seed = 0;
        size_t hash = 0;
        QString text; // keeps `characters` alive
    };
    std::array<Slot, kSlots> m_slots;
};

// Combines two 64-bit hashes (order matters).
inline quint64 combineHashes(quint64 first, quint64 second) noexcept
{
    quint64 hash = (first ^ (second + 0x9E3779B97F4A7C15ull + (first << 6) + (first >> 2)));
    hash ^= hash >> 33;
    hash *= 0xff51afd7ed558ccdull;
    hash ^= hash >> 33;
    return hash;
}

// A QString used as a hash key with fastTextHash (wrapping keeps Qt's qHash(QString) for
// everyone else).
struct FastHashString
{
    QString text;
    bool operator==(const FastHashString &other) const = default;
    friend size_t qHash(const FastHashString &key, size_t seed = 0) noexcept
    {
        return fastTextHash(key.text, seed);
    }
};

} // namespace ts
