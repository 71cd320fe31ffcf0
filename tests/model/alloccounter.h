#pragma once
// Counts heap allocations made by the test process, so "no allocation on the hot path" is a
// checked property, not a comment. glibc only, and not under AddressSanitizer (which owns
// malloc): elsewhere TS_COUNTS_ALLOCATIONS stays undefined and the checks are skipped.
// Include from exactly one translation unit per test executable.

#include <atomic>
#include <cstdlib>

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#define TS_COUNTS_ALLOCATIONS 1

extern "C" {
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *pointer, size_t size);
void __libc_free(void *pointer);
}

namespace ts::testing {
// Every malloc/calloc/realloc of the process, any thread, since start.
inline std::atomic<long> allocationCount{0};
} // namespace ts::testing

extern "C" void *malloc(size_t size) noexcept
{
    ts::testing::allocationCount.fetch_add(1, std::memory_order_relaxed);
    return __libc_malloc(size);
}
extern "C" void *calloc(size_t count, size_t size) noexcept
{
    ts::testing::allocationCount.fetch_add(1, std::memory_order_relaxed);
    return __libc_calloc(count, size);
}
extern "C" void *realloc(void *pointer, size_t size) noexcept
{
    ts::testing::allocationCount.fetch_add(1, std::memory_order_relaxed);
    return __libc_realloc(pointer, size);
}
extern "C" void free(void *pointer) noexcept
{
    __libc_free(pointer);
}
#endif
