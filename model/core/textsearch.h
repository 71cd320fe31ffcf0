#pragma once
// Searches over UTF-16 text for the per-event hot path (URL paths, policy literals). Qt's
// general QStringView::indexOf pays for case folding options and a library call per search;
// these handle the one case the engine needs (exact UTF-16 units) eight units at a time with
// SSE2, which every x86-64 CPU has, and fall back to plain loops elsewhere.

#include <QtGlobal>

#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ts::text {

// Index of the first unit equal to a or b in [0, size), or -1.
inline qsizetype findEither(const char16_t *units, qsizetype size, char16_t a, char16_t b)
{
    qsizetype i = 0;
#if defined(__SSE2__)
    const __m128i va = _mm_set1_epi16(short(a));
    const __m128i vb = _mm_set1_epi16(short(b));
    for (; i + 8 <= size; i += 8) {
        const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i *>(units + i));
        const __m128i hit = _mm_or_si128(_mm_cmpeq_epi16(chunk, va), _mm_cmpeq_epi16(chunk, vb));
        const int mask = _mm_movemask_epi8(hit);
        if (mask != 0)
            return i + qsizetype(__builtin_ctz(unsigned(mask)) / 2);
    }
#endif
    for (; i < size; ++i) {
        if (units[i] == a || units[i] == b)
            return i;
    }
    return -1;
}

// Index of the first unit equal to any of a, b, c, d in [0, size), or -1 (the end of a URL's
// host: '/', '?', '#' or ':').
inline qsizetype findAnyOf4(const char16_t *units, qsizetype size, char16_t a, char16_t b,
                            char16_t c, char16_t d)
{
    qsizetype i = 0;
#if defined(__SSE2__)
    const __m128i va = _mm_set1_epi16(short(a));
    const __m128i vb = _mm_set1_epi16(short(b));
    const __m128i vc = _mm_set1_epi16(short(c));
    const __m128i vd = _mm_set1_epi16(short(d));
    for (; i + 8 <= size; i += 8) {
        const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i *>(units + i));
        const __m128i hit =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi16(chunk, va), _mm_cmpeq_epi16(chunk, vb)),
                         _mm_or_si128(_mm_cmpeq_epi16(chunk, vc), _mm_cmpeq_epi16(chunk, vd)));
        const int mask = _mm_movemask_epi8(hit);
        if (mask != 0)
            return i + qsizetype(__builtin_ctz(unsigned(mask)) / 2);
    }
#endif
    for (; i < size; ++i) {
        if (units[i] == a || units[i] == b || units[i] == c || units[i] == d)
            return i;
    }
    return -1;
}

// Index of the first occurrence of needle (needleSize > 0) in haystack at or after from, or -1.
// Candidates are positions where both the first and the last unit of the needle match (eight
// positions per step), confirmed with memcmp: few false candidates on URL-like text.
inline qsizetype findSubstring(const char16_t *haystack, qsizetype size, const char16_t *needle,
                               qsizetype needleSize, qsizetype from = 0)
{
    if (needleSize <= 0)
        return from <= size ? from : -1;
    const qsizetype last = size - needleSize; // last possible start
    qsizetype i = from < 0 ? 0 : from;
    const char16_t first = needle[0];
    const char16_t final = needle[needleSize - 1];
    const size_t bytes = size_t(needleSize) * sizeof(char16_t);
#if defined(__SSE2__)
    const __m128i vfirst = _mm_set1_epi16(short(first));
    const __m128i vfinal = _mm_set1_epi16(short(final));
    for (; i + 8 <= last + 1; i += 8) {
        const __m128i head = _mm_loadu_si128(reinterpret_cast<const __m128i *>(haystack + i));
        const __m128i tail =
            _mm_loadu_si128(reinterpret_cast<const __m128i *>(haystack + i + needleSize - 1));
        unsigned mask = unsigned(_mm_movemask_epi8(
            _mm_and_si128(_mm_cmpeq_epi16(head, vfirst), _mm_cmpeq_epi16(tail, vfinal))));
        while (mask != 0) {
            const qsizetype at = i + qsizetype(__builtin_ctz(mask) / 2);
            if (std::memcmp(haystack + at, needle, bytes) == 0)
                return at;
            mask &= mask - 1; // the two bytes of one 16-bit lane
            mask &= mask - 1;
        }
    }
#endif
    for (; i <= last; ++i) {
        if (haystack[i] == first && haystack[i + needleSize - 1] == final &&
            std::memcmp(haystack + i, needle, bytes) == 0) {
            return i;
        }
    }
    return -1;
}

} // namespace ts::text
