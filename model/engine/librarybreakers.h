#pragma once
// What the breakers of two Node libraries remember of their calls, and when that opens them,
// exactly as their sources have it (policy/breakermodel.h names the options; the rules are in
// docs/throttle-models.md). BreakerTracker runs the states around them (open, half-open, the
// probe); these hold the closed state's memory. Checked transition for transition against the
// libraries themselves on a fake clock (tests/model/tst_breakers_groundtruth.cpp).
//
// Not thread-safe; one per reconstructed breaker, on the tracker's thread.

#include "policy/breakermodel.h"

#include <QString>

#include <vector>

namespace ts {

// cockatiel 4.0.0's ConsecutiveBreaker, CountBreaker and SamplingBreaker (dist/breaker/*.js).
class CockatielWindow
{
public:
    // breaker.success(Closed): the call succeeded.
    void success(const BreakerModel::Cockatiel &options, qint64 nowMs);
    // breaker.failure(Closed): the call failed; true when that opens the breaker. The ratio is
    // weighed here only, never at a success.
    bool failure(const BreakerModel::Cockatiel &options, qint64 nowMs);
    // The probe succeeded and the breaker closes: breaker.success(HalfOpen), which empties a
    // Count / Sampling window and records the probe's success in it (a ConsecutiveBreaker
    // starts counting again).
    void restartWithSuccess(const BreakerModel::Cockatiel &options, qint64 nowMs);

    // What the window holds: calls and failures (ConsecutiveBreaker: failures in a row).
    [[nodiscard]] qint64 calls() const { return m_successes + m_failures; }
    [[nodiscard]] qint64 failures() const { return m_failures; }
    // Whether the window holds enough calls for its ratio to count (always, in a row).
    [[nodiscard]] bool hasVolume(const BreakerModel::Cockatiel &options) const;
    // Why it opened, for the transition's reason.
    [[nodiscard]] QString openReason(const BreakerModel::Cockatiel &options) const;

private:
    // SamplingBreaker: max(5, ceil(duration / 1 s)) slots of round(duration / slots) ms. A call
    // opens a new slot only when the current one is at least a slot old, one slot per call:
    // after a pause the older slots stay in the window until calls rotate past them.
    struct Slot
    {
        qint64 startedAtMs = 0; // 0 = never used, as the library starts them
        qint64 failures = 0;
        qint64 successes = 0;
    };
    void push(const BreakerModel::Cockatiel &options, qint64 nowMs, bool success);
    void sample(const BreakerModel::Cockatiel &options, bool success);
    void reset();

    std::vector<Slot> m_slots;
    int m_currentSlot = 0;
    // CountBreaker: the last `size` calls (-1 none yet, 0 failure, 1 success), a ring.
    std::vector<qint8> m_samples;
    int m_currentSample = 0;
    qint64 m_failures = 0;
    qint64 m_successes = 0;
};

// opossum 10.0.0's rolling statistics (lib/status.js) and its opening rule (lib/circuit.js
// fail()). Every call is a fire, refused ones too; the buckets rotate on a timer started when
// the breaker was created, never emptied by opening or closing.
class OpossumWindow
{
public:
    enum class Call : quint8 { Refused, Succeeded, Failed };

    // The breaker was created (the first call of its key): the buckets' timer starts here.
    void start(qint64 createdMs) { m_createdMs = createdMs; }
    void record(const BreakerModel::Opossum &options, qint64 nowMs, Call call);
    // fail() in the closed state, right after a failure was recorded: the volume is reached
    // and failures / fires * 100 exceeds errorThresholdPercentage.
    [[nodiscard]] bool opens(const BreakerModel::Opossum &options) const;
    [[nodiscard]] bool hasVolume(const BreakerModel::Opossum &options) const
    {
        return m_fires >= options.volumeThreshold;
    }
    [[nodiscard]] qint64 fires() const { return m_fires; }
    [[nodiscard]] qint64 failures() const { return m_failures; }
    [[nodiscard]] qint64 refused() const { return m_refused; }
    [[nodiscard]] QString openReason(const BreakerModel::Opossum &options) const;

private:
    struct Bucket
    {
        qint64 index = -1; // floor((t - created) / interval) of its calls; -1 = empty
        qint64 fires = 0;
        qint64 failures = 0;
        qint64 refused = 0;
    };
    // Drops the buckets the timer has rotated out by nowMs.
    void rotate(const BreakerModel::Opossum &options, qint64 nowMs);

    qint64 m_createdMs = 0;
    qint64 m_currentIndex = -1;    // the newest bucket's index
    std::vector<Bucket> m_buckets; // a ring by index % rollingCountBuckets
    qint64 m_fires = 0;
    qint64 m_failures = 0;
    qint64 m_refused = 0;
};

} // namespace ts
