#include "librarybreakers.h"

#include <algorithm>
#include <cmath>

namespace ts {

namespace {

using Breaker = BreakerModel::Cockatiel::Breaker;

// SamplingBreaker's constructor: windowCount = max(5, ceil(duration / 1000)) slots of
// windowSize = round(duration / windowCount) ms (Math.round: positive values only here).
int samplingSlots(const BreakerModel::Cockatiel &options)
{
    return std::max(5, int(std::ceil(double(options.durationMs) / 1000.0)));
}

qint64 samplingSlotMs(const BreakerModel::Cockatiel &options)
{
    return qint64(std::round(double(options.durationMs) / double(samplingSlots(options))));
}

// minimumRpms: minimumRps / 1000, or (none given) 5 / (threshold * 1000), in the library's
// floating-point steps so a comparison at the boundary goes the same way.
double samplingMinimumRpms(const BreakerModel::Cockatiel &options)
{
    if (options.minimumRps)
        return *options.minimumRps / 1000.0;
    return 5.0 / (options.threshold * 1000.0);
}

QString ratioText(qint64 failures, qint64 calls)
{
    return QString::number(calls > 0 ? double(failures) / double(calls) : 0.0, 'g', 3);
}

} // namespace

void CockatielWindow::push(const BreakerModel::Cockatiel &options, qint64 nowMs, bool success)
{
    if (m_slots.empty())
        m_slots.resize(size_t(samplingSlots(options)));
    Slot *slot = &m_slots[size_t(m_currentSlot)];
    if (nowMs - slot->startedAtMs >= samplingSlotMs(options)) {
        // rotateWindow(): the next slot, whatever its age, is the one emptied.
        const int next = (m_currentSlot + 1) % int(m_slots.size());
        m_failures -= m_slots[size_t(next)].failures;
        m_successes -= m_slots[size_t(next)].successes;
        m_slots[size_t(next)] = Slot{nowMs, 0, 0};
        m_currentSlot = next;
        slot = &m_slots[size_t(next)];
    }
    if (success) {
        ++slot->successes;
        ++m_successes;
    } else {
        ++slot->failures;
        ++m_failures;
    }
}

void CockatielWindow::sample(const BreakerModel::Cockatiel &options, bool success)
{
    if (m_samples.empty())
        m_samples.assign(size_t(options.size), qint8(-1));
    qint8 &current = m_samples[size_t(m_currentSample)];
    if (current == 1)
        --m_successes;
    else if (current == 0)
        --m_failures;
    current = qint8(success ? 1 : 0);
    if (success)
        ++m_successes;
    else
        ++m_failures;
    m_currentSample = (m_currentSample + 1) % int(m_samples.size());
}

void CockatielWindow::reset()
{
    // CountBreaker.reset() and SamplingBreaker.resetWindows(): counts and contents cleared, the
    // position in the ring kept.
    std::fill(m_samples.begin(), m_samples.end(), qint8(-1));
    std::fill(m_slots.begin(), m_slots.end(), Slot{});
    m_failures = 0;
    m_successes = 0;
}

void CockatielWindow::success(const BreakerModel::Cockatiel &options, qint64 nowMs)
{
    switch (options.breaker) {
    case Breaker::Consecutive:
        m_failures = 0; // this.state = 0
        return;
    case Breaker::Count:
        sample(options, true);
        return;
    case Breaker::Sampling:
        push(options, nowMs, true);
        return;
    }
}

bool CockatielWindow::failure(const BreakerModel::Cockatiel &options, qint64 nowMs)
{
    switch (options.breaker) {
    case Breaker::Consecutive:
        return double(++m_failures) >= options.threshold;
    case Breaker::Count:
        sample(options, false);
        break;
    case Breaker::Sampling:
        push(options, nowMs, false);
        break;
    }
    if (!hasVolume(options))
        return false;
    // `failures > threshold * total`: strictly above the threshold.
    return double(m_failures) > options.threshold * double(calls());
}

bool CockatielWindow::hasVolume(const BreakerModel::Cockatiel &options) const
{
    switch (options.breaker) {
    case Breaker::Consecutive:
        return true;
    case Breaker::Count:
        return calls() >= options.minimumNumberOfCalls;
    case Breaker::Sampling: {
        // `total < duration * minimumRpms` with the duration the slots really cover.
        const double covered = double(samplingSlotMs(options) * samplingSlots(options));
        return !(double(calls()) < covered * samplingMinimumRpms(options));
    }
    }
    return true;
}

void CockatielWindow::restartWithSuccess(const BreakerModel::Cockatiel &options, qint64 nowMs)
{
    if (options.breaker != Breaker::Consecutive)
        reset();
    success(options, nowMs);
}

QString CockatielWindow::openReason(const BreakerModel::Cockatiel &options) const
{
    switch (options.breaker) {
    case Breaker::Consecutive:
        return QStringLiteral("%1 failures in a row (>= %2)")
            .arg(m_failures)
            .arg(options.threshold, 0, 'g', 6);
    case Breaker::Count:
        return QStringLiteral("%1 of the last %2 calls failed (%3 > %4)")
            .arg(m_failures)
            .arg(calls())
            .arg(ratioText(m_failures, calls()))
            .arg(options.threshold, 0, 'g', 6);
    case Breaker::Sampling:
        break;
    }
    const qint64 coveredMs = samplingSlotMs(options) * samplingSlots(options);
    return QStringLiteral("%1 of %2 calls in the sampled %3 s failed (%4 > %5)")
        .arg(m_failures)
        .arg(calls())
        .arg(double(coveredMs) / 1000.0, 0, 'g', 6)
        .arg(ratioText(m_failures, calls()))
        .arg(options.threshold, 0, 'g', 6);
}

void OpossumWindow::rotate(const BreakerModel::Opossum &options, qint64 nowMs)
{
    const int count = options.rollingCountBuckets;
    if (m_buckets.empty())
        m_buckets.resize(size_t(count));
    // setInterval(rotateBucket, floor(rollingCountTimeout / rollingCountBuckets)) from the
    // breaker's creation: a call at a rotation's instant lands in the new bucket.
    const qint64 intervalMs = std::max<qint64>(1, options.rollingCountTimeoutMs / count);
    const qint64 index = std::max<qint64>(0, nowMs - m_createdMs) / intervalMs;
    if (index <= m_currentIndex)
        return; // (an event out of time order joins the current bucket)
    // The buckets now older than the window's `count` were popped by the timer.
    const qint64 firstStale = std::max<qint64>(0, m_currentIndex - count + 1);
    const qint64 lastStale = std::min(index - count, m_currentIndex);
    for (qint64 stale = firstStale; stale <= lastStale; ++stale) {
        Bucket &bucket = m_buckets[size_t(stale % count)];
        if (bucket.index != stale)
            continue;
        m_fires -= bucket.fires;
        m_failures -= bucket.failures;
        m_refused -= bucket.refused;
        bucket = Bucket{};
    }
    m_currentIndex = index;
}

void OpossumWindow::record(const BreakerModel::Opossum &options, qint64 nowMs, Call call)
{
    rotate(options, nowMs);
    const int count = options.rollingCountBuckets;
    Bucket &bucket = m_buckets[size_t(m_currentIndex % count)];
    if (bucket.index != m_currentIndex)
        bucket = Bucket{m_currentIndex, 0, 0, 0};
    // 'fire' for every call; 'failure' for a failed one; 'reject' for a refused one (a fire
    // that is neither a success nor a failure).
    ++bucket.fires;
    ++m_fires;
    if (call == Call::Failed) {
        ++bucket.failures;
        ++m_failures;
    } else if (call == Call::Refused) {
        ++bucket.refused;
        ++m_refused;
    }
}

bool OpossumWindow::opens(const BreakerModel::Opossum &options) const
{
    if (!hasVolume(options))
        return false;
    // `stats.failures / stats.fires * 100 > errorThresholdPercentage`, in the same steps.
    const double errorRate = double(m_failures) / double(m_fires) * 100.0;
    return errorRate > options.errorThresholdPercentage;
}

QString OpossumWindow::openReason(const BreakerModel::Opossum &options) const
{
    return QStringLiteral("%1 of %2 calls in the last %3 s failed (%4 % > %5 %; %6 of the calls "
                          "refused while open)")
        .arg(m_failures)
        .arg(m_fires)
        .arg(double(options.rollingCountTimeoutMs) / 1000.0, 0, 'g', 6)
        .arg(m_fires > 0 ? double(m_failures) / double(m_fires) * 100.0 : 0.0, 0, 'g', 4)
        .arg(options.errorThresholdPercentage, 0, 'g', 6)
        .arg(m_refused);
}

} // namespace ts
