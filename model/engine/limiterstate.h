#pragma once
// The state of one bucket under each throttling algorithm, with the exact arithmetic the engine
// replays. Kept apart from the engine's bookkeeping so the algorithms read on their own and the
// tests can drive them directly.
//
// Every limiter answers the same three questions at an instant t (ms since the epoch, never
// earlier than the last charge):
//   hasRoom(t, cost)  would a request of this cost be accepted now?
//   charge(t, cost, accepted)  the request consumed quota (accepted: the service took it)
//   roomAt(t)         the earliest instant >= t at which a unit request fits, with no traffic
// and reports usage (in requests / credits / tokens used) for the fill = usage / capacity.
// Usage is tracked twice: all charges (what decides, countedUsageAt: the usage the dashboard and
// the report show) and charges of accepted requests only (usageAt: the accepted layer drawn
// beside it), so a storm of counted 429s shows the bucket over its limit, as the limiter sees
// it, while the accepted layer shows what the service really served.

#include "policy/policy.h"

#include <QtGlobal>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <vector>

namespace ts::limiter {

constexpr qint64 kNoTime = std::numeric_limits<qint64>::min();

inline qint64 floorDiv(qint64 a, qint64 b)
{
    const qint64 q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

inline qint64 ceilDiv(qint64 a, qint64 b)
{
    return -floorDiv(-a, b);
}

// Sliding windows at least this long keep their charges in kSlotsPerWindow slots (Params::slotMs).
constexpr qint64 kSlottedWindowMs = 10 * 60 * 1000;
constexpr qint64 kSlotsPerWindow = 3600;
constexpr size_t kExactCharges = 3600;

// Parameters compiled from a PolicyLimit once (integer units where exactness matters).
struct Params
{
    Algorithm algorithm = Algorithm::Observed;
    double capacity = 0;
    qint64 windowMs = 0;
    WindowAlign align = WindowAlign::Clock;
    // token-bucket, in micro-tokens: exact integer refill for rates with up to 3 decimals.
    qint64 capacityMicro = 0;
    qint64 refillMicroPerMs = 0;
    // leaky-bucket, nginx units: milli-requests per second and milli-requests.
    qint64 milliRate = 0;
    qint64 burstMilli = 0;
    // sliding-window: past kExactCharges charges in the window, further charges are kept per slot
    // of this length (0 = always one entry per charge). A window of an hour (OneNote's per-hour
    // limit) would otherwise hold every charge of the last hour, and a log replayed at a few
    // thousand requests per second makes that tens of megabytes per key. Slots are window/3600
    // (1 s for an hour), so a bucket holds at most 3,600 exact entries plus 3,601 slots whatever
    // the traffic; a slotted charge leaves the window up to one slot late (at most 1 s of 3,600:
    // usage is never under-counted). Windows under 10 minutes, and any window with fewer than
    // kExactCharges charges in it (the documentation's examples), stay exact to the ms.
    qint64 slotMs = 0;

    static Params fromLimit(const PolicyLimit &limit)
    {
        Params p;
        p.algorithm = limit.algorithm;
        p.capacity = limit.effectiveCapacity();
        p.windowMs = qint64(std::llround(limit.windowSeconds * 1000.0));
        p.align = limit.align;
        p.capacityMicro = qint64(std::llround(limit.capacity * 1e6));
        p.refillMicroPerMs = qint64(std::llround(limit.refillPerSecond * 1000.0));
        p.milliRate = limit.nginxMilliRate();
        p.burstMilli = qint64(std::llround(limit.burst * 1000.0));
        if (p.algorithm == Algorithm::SlidingWindow && p.windowMs >= kSlottedWindowMs)
            p.slotMs = p.windowMs / kSlotsPerWindow;
        return p;
    }
};

// A small FIFO on a vector (amortised, no per-element allocation once warm).
template <typename T> class Fifo
{
public:
    [[nodiscard]] bool empty() const { return m_head == m_items.size(); }
    [[nodiscard]] size_t size() const { return m_items.size() - m_head; }
    [[nodiscard]] const T &front() const { return m_items[m_head]; }
    [[nodiscard]] T &front() { return m_items[m_head]; }
    [[nodiscard]] const T &at(size_t i) const { return m_items[m_head + i]; }
    [[nodiscard]] T &back() { return m_items.back(); }
    [[nodiscard]] const T &back() const { return m_items.back(); }
    // Items ever popped: at(i) is the (popped() + i)-th item ever pushed.
    [[nodiscard]] size_t popped() const { return m_popped; }
    // A new item at the back, filled in place by the caller: a temporary copied in was stored
    // in pieces and read back whole, which stalled store forwarding on every sliding-window
    // charge (perf). (Not emplace_back(fields...): clang 14 has no parenthesised aggregate
    // initialisation.)
    T &pushBack() { return m_items.emplace_back(); }
    void pop()
    {
        ++m_popped;
        ++m_head;
        if (m_head == m_items.size()) {
            m_items.clear();
            m_head = 0;
        } else if (m_head > 1024 && m_head * 2 > m_items.size()) {
            m_items.erase(m_items.begin(), m_items.begin() + qsizetype(m_head));
            m_head = 0;
        }
    }

private:
    std::vector<T> m_items;
    size_t m_head = 0;
    size_t m_popped = 0;
};

struct State
{
    // fixed-window / credits
    qint64 windowStart = kNoTime;
    qint64 phaseMs = 0; // clock alignment offset, learned from blocked-until instants
    double used = 0;
    double usedAccepted = 0;
    // sliding-window: charges inside the window (one entry per charge, or per slot of
    // Params::slotMs holding the charges of that slot, stamped with the slot's end)
    struct Charge
    {
        qint64 t;
        double cost;
        double acceptedCost; // the part of cost charged by requests the service accepted
        double cumulative;   // sum of costs of all charges pushed so far, this one included
    };
    Fifo<Charge> charges;
    // Where trackRoomAt() last found room, as a count of charges ever pushed (see roomAtFrom).
    size_t roomSearchHint = 0;
    double slidingSum = 0;
    double slidingAccepted = 0;
    double slidingPushed = 0; // cumulative cost of every charge ever pushed
    // token-bucket
    qint64 tokensMicro = 0;
    qint64 acceptedTokensMicro = 0;
    qint64 lastRefill = kNoTime;
    // leaky-bucket (nginx limit_req node)
    bool nodeExists = false;
    qint64 excess = 0;
    qint64 lastMs = 0;
    // concurrency: end instants of requests in flight (min-heap), and of the accepted ones
    std::vector<qint64> inFlight;
    std::vector<qint64> acceptedInFlight;
    // What the log may not show: the same bucket had it been drained at its first event (a
    // log that starts mid-saturation, a limiter that starts empty). Kept only until the two
    // agree (hiddenActive), so a 429 the replay did not expect can be told apart: state from
    // before the log (corrected to what the service said) or a limit lower than documented.
    bool hiddenActive = false;
    qint64 hiddenUntil = kNoTime; // windows: the drained start counts until then
    qint64 hiddenMicro = 0;       // token-bucket: tokens, had it started empty
    qint64 hiddenExcess = 0;      // leaky-bucket: excess, had it started at its burst
    qint64 hiddenLastMs = 0;
    // Set by a correction from a 429: the state is the service's word, only as exact as a 429
    // is (a token bucket that refused had less than a token, not necessarily none). Until the
    // bucket is back at rest (the window ends, the bucket refills), the next answer that
    // contradicts the replay corrects it again, either way. Cleared by advance().
    bool estimated = false;

    // ---- evolution without a request (expiry, refill) --------------------------------------

    void advance(const Params &p, qint64 t)
    {
        switch (p.algorithm) {
        case Algorithm::FixedWindow:
        case Algorithm::Credits:
            if (windowStart == kNoTime || t >= windowStart + p.windowMs) {
                windowStart = p.align == WindowAlign::Clock
                                  ? floorDiv(t - phaseMs, p.windowMs) * p.windowMs + phaseMs
                                  : t;
                used = 0;
                usedAccepted = 0;
                estimated = false;
            }
            if (hiddenActive && t >= hiddenUntil)
                hiddenActive = false;
            break;
        case Algorithm::SlidingWindow:
            // A charge at s counts for (s - W, s]: it has left the window at s + W.
            while (!charges.empty() && charges.front().t <= t - p.windowMs) {
                slidingSum -= charges.front().cost;
                slidingAccepted -= charges.front().acceptedCost;
                charges.pop();
            }
            if (charges.empty()) {
                slidingSum = 0; // no drift from repeated float subtraction
                slidingAccepted = 0;
                estimated = false;
            }
            if (hiddenActive && t >= hiddenUntil)
                hiddenActive = false;
            break;
        case Algorithm::TokenBucket:
            if (lastRefill == kNoTime) {
                tokensMicro = p.capacityMicro;
                acceptedTokensMicro = p.capacityMicro;
            } else if (t > lastRefill) {
                const qint64 refill = (t - lastRefill) * p.refillMicroPerMs;
                tokensMicro = std::min(p.capacityMicro, tokensMicro + refill);
                acceptedTokensMicro = std::min(p.capacityMicro, acceptedTokensMicro + refill);
                if (hiddenActive) {
                    hiddenMicro = std::min(p.capacityMicro, hiddenMicro + refill);
                    hiddenActive = hiddenMicro != tokensMicro;
                }
                estimated = estimated && tokensMicro < p.capacityMicro;
            }
            lastRefill = std::max(lastRefill, t);
            break;
        case Algorithm::Concurrency:
            for (std::vector<qint64> *heap : {&inFlight, &acceptedInFlight}) {
                while (!heap->empty() && heap->front() <= t) {
                    std::pop_heap(heap->begin(), heap->end(), std::greater<>());
                    heap->pop_back();
                }
            }
            break;
        case Algorithm::LeakyBucket: // evaluated lazily, exactly as nginx does
        case Algorithm::Observed:
            break;
        }
    }

    // nginx: excess = max(0, excess - rate * |ms| / 1000 + 1000) for an existing node.
    [[nodiscard]] qint64 leakyCandidate(const Params &p, qint64 t) const
    {
        if (!nodeExists)
            return 0;
        const qint64 ms = t >= lastMs ? t - lastMs : lastMs - t;
        return std::max<qint64>(0, excess - p.milliRate * ms / 1000 + 1000);
    }

    [[nodiscard]] qint64 hiddenLeakyCandidate(const Params &p, qint64 t) const
    {
        const qint64 ms = t >= hiddenLastMs ? t - hiddenLastMs : hiddenLastMs - t;
        return std::max<qint64>(0, hiddenExcess - p.milliRate * ms / 1000 + 1000);
    }

    // At the bucket's first event (after advance(t)): from now on, remember what the bucket
    // would be had it been drained then, until that makes no difference. A clock-aligned
    // window that opens with this very event hides nothing.
    void startHidden(const Params &p, qint64 t)
    {
        switch (p.algorithm) {
        case Algorithm::FixedWindow:
        case Algorithm::Credits:
            hiddenActive = !(p.align == WindowAlign::Clock && windowStart == t);
            hiddenUntil = windowStart + p.windowMs;
            break;
        case Algorithm::SlidingWindow:
            hiddenActive = true;
            hiddenUntil = t + p.windowMs;
            break;
        case Algorithm::TokenBucket:
            hiddenActive = p.capacityMicro > 0;
            hiddenMicro = 0;
            break;
        case Algorithm::LeakyBucket:
            hiddenActive = true;
            hiddenExcess = p.burstMilli;
            hiddenLastMs = t;
            break;
        case Algorithm::Concurrency:
        case Algorithm::Observed:
            hiddenActive = false;
            break;
        }
    }

    // Would the same bucket, drained at its first event, have refused a request of this cost
    // at t (after advance(t))? true = state the log does not show can explain a refusal.
    [[nodiscard]] bool hiddenRefuses(const Params &p, qint64 t, double cost) const
    {
        if (!hiddenActive)
            return false;
        switch (p.algorithm) {
        case Algorithm::FixedWindow:
        case Algorithm::Credits:
        case Algorithm::SlidingWindow:
            return t < hiddenUntil;
        case Algorithm::TokenBucket:
            return hiddenMicro < qint64(std::llround(cost * 1e6));
        case Algorithm::LeakyBucket:
            return hiddenLeakyCandidate(p, t) > p.burstMilli;
        case Algorithm::Concurrency:
        case Algorithm::Observed:
            break;
        }
        return false;
    }

    // ---- decisions (after advance(t)) ------------------------------------------------------

    [[nodiscard]] bool hasRoom(const Params &p, qint64 t, double cost) const
    {
        switch (p.algorithm) {
        case Algorithm::FixedWindow:
        case Algorithm::Credits:
            return used + cost <= p.capacity;
        case Algorithm::SlidingWindow:
            return slidingSum + cost <= p.capacity;
        case Algorithm::TokenBucket:
            return tokensMicro >= qint64(std::llround(cost * 1e6));
        case Algorithm::LeakyBucket:
            return leakyCandidate(p, t) <= p.burstMilli;
        case Algorithm::Concurrency:
            return double(inFlight.size()) + 1 <= p.capacity;
        case Algorithm::Observed:
            return true;
        }
        return true;
    }

    // How many of `units` requests of this cost, charged one after another at t, would each
    // find room (after advance(t)): the same arithmetic as that many hasRoom() / charge()
    // pairs, so a weighted event (RequestEvent::weight) charged in one step decides exactly
    // as its requests one by one would. Only for the limiters whose decisions at one instant
    // depend on nothing but the sum charged (fixed windows, credits, token buckets, sliding
    // windows kept exact per charge); the others answer at most 1, and the engine replays
    // their events one request at a time.
    [[nodiscard]] qint64 roomForUnits(const Params &p, qint64 t, double cost, qint64 units) const
    {
        auto bySum = [&](double sum) {
            // Summed as charge() would, so rounding decides as it would.
            qint64 fit = 0;
            while (fit < units && sum + cost <= p.capacity) {
                sum += cost;
                ++fit;
            }
            return fit;
        };
        switch (p.algorithm) {
        case Algorithm::FixedWindow:
        case Algorithm::Credits:
            return bySum(used);
        case Algorithm::SlidingWindow:
            // Slotted windows stamp a charge by how many the window holds: one by one only.
            return p.slotMs > 0 ? (hasRoom(p, t, cost) ? 1 : 0) : bySum(slidingSum);
        case Algorithm::TokenBucket: {
            const qint64 micro = qint64(std::llround(cost * 1e6));
            if (tokensMicro < micro)
                return 0;
            return micro <= 0 ? units : std::min(units, tokensMicro / micro);
        }
        case Algorithm::Observed:
            return units;
        case Algorithm::LeakyBucket:
        case Algorithm::Concurrency:
            break;
        }
        return hasRoom(p, t, cost) ? 1 : 0;
    }

    void charge(const Params &p, qint64 t, double cost, bool accepted, qint64 endMs)
    {
        switch (p.algorithm) {
        case Algorithm::FixedWindow:
        case Algorithm::Credits:
            used += cost;
            if (accepted)
                usedAccepted += cost;
            break;
        case Algorithm::SlidingWindow: {
            slidingPushed += cost;
            const double acceptedCost = accepted ? cost : 0;
            // Slotted once the window holds many charges: stamped with the end of its slot, so
            // it never leaves the window early. A charge at or before the last entry's stamp
            // (the same ms, or inside the slot being filled) joins that entry.
            const bool slotted = p.slotMs > 0 && charges.size() >= kExactCharges;
            const qint64 stamp = slotted ? ceilDiv(t, p.slotMs) * p.slotMs : t;
            if (!charges.empty() && charges.back().t >= stamp &&
                (p.slotMs > 0 || charges.back().t == stamp)) {
                Charge &last = charges.back();
                last.cost += cost;
                last.acceptedCost += acceptedCost;
                last.cumulative = slidingPushed;
            } else {
                Charge &charge = charges.pushBack();
                charge.t = stamp;
                charge.cost = cost;
                charge.acceptedCost = acceptedCost;
                charge.cumulative = slidingPushed;
            }
            slidingSum += cost;
            slidingAccepted += acceptedCost;
            break;
        }
        case Algorithm::TokenBucket: {
            const qint64 micro = qint64(std::llround(cost * 1e6));
            tokensMicro -= micro;
            if (accepted)
                acceptedTokensMicro -= micro;
            hiddenMicro -= hiddenActive ? micro : 0;
            break;
        }
        case Algorithm::LeakyBucket:
            if (hiddenActive) {
                hiddenExcess = hiddenLeakyCandidate(p, t);
                hiddenLastMs = t;
            }
            excess = leakyCandidate(p, t);
            lastMs = t;
            nodeExists = true;
            hiddenActive = hiddenActive && hiddenExcess != excess;
            break;
        case Algorithm::Concurrency:
            inFlight.push_back(std::max(endMs, t));
            std::push_heap(inFlight.begin(), inFlight.end(), std::greater<>());
            if (accepted) {
                acceptedInFlight.push_back(std::max(endMs, t));
                std::push_heap(acceptedInFlight.begin(), acceptedInFlight.end(), std::greater<>());
            }
            break;
        case Algorithm::Observed:
            break;
        }
    }

    // ---- read-outs (const: usable at any instant >= the last charge) -----------------------

    // Usage at t of accepted charges only (the accepted layer), without mutating the state.
    [[nodiscard]] double usageAt(const Params &p, qint64 t) const
    {
        switch (p.algorithm) {
        case Algorithm::FixedWindow:
        case Algorithm::Credits:
            if (windowStart == kNoTime || t >= windowStart + p.windowMs)
                return 0;
            return usedAccepted;
        case Algorithm::SlidingWindow: {
            double sum = slidingAccepted;
            for (size_t i = 0; i < charges.size() && charges.at(i).t <= t - p.windowMs; ++i)
                sum -= charges.at(i).acceptedCost;
            return std::max(0.0, sum);
        }
        case Algorithm::TokenBucket: {
            if (lastRefill == kNoTime)
                return 0;
            const qint64 refill = std::max<qint64>(0, t - lastRefill) * p.refillMicroPerMs;
            const qint64 tokens = std::min(p.capacityMicro, acceptedTokensMicro + refill);
            return double(p.capacityMicro - tokens) / 1e6;
        }
        case Algorithm::LeakyBucket: {
            if (!nodeExists)
                return 0;
            const qint64 ms = std::max<qint64>(0, t - lastMs);
            return double(std::max<qint64>(0, excess - p.milliRate * ms / 1000)) / 1000.0;
        }
        case Algorithm::Concurrency: {
            qint64 count = 0;
            for (qint64 end : acceptedInFlight)
                count += end > t ? 1 : 0;
            return double(count);
        }
        case Algorithm::Observed:
            return 0;
        }
        return 0;
    }

    // Usage at t as the limiter counts it: every charge, throttled requests included where the
    // limit charges them (chargeThrottled), i.e. the count hasRoom() decides with. What the
    // dashboard and the report show as a bucket's usage; usageAt() is the accepted layer.
    [[nodiscard]] double countedUsageAt(const Params &p, qint64 t) const
    {
        switch (p.algorithm) {
        case Algorithm::FixedWindow:
        case Algorithm::Credits:
            if (windowStart == kNoTime || t >= windowStart + p.windowMs)
                return 0;
            return used;
        case Algorithm::SlidingWindow: {
            double sum = slidingSum;
            for (size_t i = 0; i < charges.size() && charges.at(i).t <= t - p.windowMs; ++i)
                sum -= charges.at(i).cost;
            return std::max(0.0, sum);
        }
        case Algorithm::TokenBucket: {
            if (lastRefill == kNoTime)
                return 0;
            const qint64 refill = std::max<qint64>(0, t - lastRefill) * p.refillMicroPerMs;
            const qint64 tokens = std::min(p.capacityMicro, tokensMicro + refill);
            return double(p.capacityMicro - tokens) / 1e6;
        }
        case Algorithm::LeakyBucket:
            return usageAt(p, t); // nginx's excess counts every charge already
        case Algorithm::Concurrency: {
            qint64 count = 0;
            for (qint64 end : inFlight)
                count += end > t ? 1 : 0;
            return double(count);
        }
        case Algorithm::Observed:
            return 0;
        }
        return 0;
    }

    // The earliest instant >= t at which a unit request would be accepted, assuming no traffic.
    // Reads the state only (safe on a const state from any thread that may read it).
    [[nodiscard]] qint64 roomAt(const Params &p, qint64 t) const
    {
        return roomAtFrom(p, t, nullptr);
    }
    // The same for a request of this cost (a credits-heavy request waits longer than a unit
    // one): what the Retry-After of its refusal says.
    [[nodiscard]] qint64 roomAt(const Params &p, qint64 t, double cost) const
    {
        return roomAtFrom(p, t, nullptr, cost);
    }

    // roomAt() for the engine, which asks after every charge: a sliding window also remembers
    // where it found room, so the next search starts there.
    qint64 trackRoomAt(const Params &p, qint64 t) { return roomAtFrom(p, t, &roomSearchHint); }

private:
    // hint: where the last search found room (see roomSearchHint), updated when not null.
    [[nodiscard]] qint64 roomAtFrom(const Params &p, qint64 t, size_t *hintToUpdate,
                                    double cost = 1) const
    {
        switch (p.algorithm) {
        case Algorithm::FixedWindow:
        case Algorithm::Credits:
            if (windowStart == kNoTime || t >= windowStart + p.windowMs ||
                used + cost <= p.capacity)
                return t;
            return windowStart + p.windowMs;
        case Algorithm::SlidingWindow: {
            if (charges.empty() || slidingSum + cost <= p.capacity)
                return t;
            // Room comes back when the oldest charges whose costs add up to `need` have left the
            // window: the first charge whose cumulative cost reaches base + need. A storm of
            // counted 429s can hold hundreds of thousands of charges in an hour window, and a
            // bucket at its limit asks after every request, so the search starts from the last
            // answer: base + need only grows (a push adds to the sum, a pop moves the base and
            // the sum alike), so the answer only moves towards the back, usually by a step or
            // two. A plain binary search over the whole window missed the cache on every probe.
            const double need = slidingSum + cost - p.capacity;
            const double base = charges.front().cumulative - charges.front().cost;
            const auto reaches = [&](size_t i) { return charges.at(i).cumulative - base >= need; };
            const size_t last = charges.size() - 1;
            size_t lo = 0;
            size_t hi = last;
            const size_t hint = roomSearchHint > charges.popped()
                                    ? std::min(roomSearchHint - charges.popped(), last)
                                    : 0;
            if (hint > 0 && reaches(hint - 1)) {
                hi = hint - 1; // (rounding moved the answer back: search before the hint)
            } else {
                // Gallop from the hint, in doubling steps, until a charge reaches.
                lo = hint;
                for (size_t step = 1;; step *= 2) {
                    const size_t probe = std::min(lo + step - 1, last);
                    if (reaches(probe) || probe == last) {
                        hi = probe;
                        break;
                    }
                    lo = probe + 1;
                }
            }
            while (lo < hi) {
                const size_t mid = lo + (hi - lo) / 2;
                if (reaches(mid))
                    hi = mid;
                else
                    lo = mid + 1;
            }
            if (hintToUpdate)
                *hintToUpdate = charges.popped() + lo;
            return std::max(t, charges.at(lo).t + p.windowMs);
        }
        case Algorithm::TokenBucket: {
            if (lastRefill == kNoTime)
                return t;
            const qint64 refill = std::max<qint64>(0, t - lastRefill) * p.refillMicroPerMs;
            const qint64 tokens = std::min(p.capacityMicro, tokensMicro + refill);
            const qint64 costMicro = std::max<qint64>(1, qint64(std::llround(cost * 1e6)));
            if (tokens >= costMicro)
                return t;
            return t + ceilDiv(costMicro - tokens, std::max<qint64>(1, p.refillMicroPerMs));
        }
        case Algorithm::LeakyBucket: {
            if (leakyCandidate(p, t) <= p.burstMilli)
                return t;
            // Smallest ms with excess - rate*ms/1000 + 1000 <= burst (nginx integer division).
            const qint64 need = excess + 1000 - p.burstMilli;
            const qint64 ms = ceilDiv(need * 1000, std::max<qint64>(1, p.milliRate));
            return std::max(t, lastMs + ms);
        }
        case Algorithm::Concurrency: {
            if (double(inFlight.size()) + 1 <= p.capacity)
                return t;
            // Common case: right after advance(t) every entry ends after t and exactly one slot
            // is missing, so the earliest end frees it.
            if (inFlight.front() > t && double(inFlight.size()) == p.capacity)
                return inFlight.front();
            std::vector<qint64> ends;
            for (qint64 end : inFlight) {
                if (end > t)
                    ends.push_back(end);
            }
            if (double(ends.size()) + 1 <= p.capacity)
                return t;
            // The (n - capacity + 1)-th request to finish frees the slot.
            const size_t k = ends.size() - size_t(std::max(0.0, p.capacity));
            std::nth_element(ends.begin(), ends.begin() + qsizetype(k), ends.end());
            return ends[k];
        }
        case Algorithm::Observed:
            return t;
        }
        return t;
    }

public:
    // The instant the usage falls to where it stays with no further traffic (the window
    // ends, the last charge leaves, the bucket refills, the excess drains, the last request
    // in flight ends); kNoTime when it is there already or never moves (observed).
    [[nodiscard]] qint64 settlesAt(const Params &p) const
    {
        switch (p.algorithm) {
        case Algorithm::FixedWindow:
        case Algorithm::Credits:
            return windowStart == kNoTime || used <= 0 ? kNoTime : windowStart + p.windowMs;
        case Algorithm::SlidingWindow:
            return charges.empty() ? kNoTime : charges.back().t + p.windowMs;
        case Algorithm::TokenBucket: {
            const qint64 missing = p.capacityMicro - tokensMicro;
            if (lastRefill == kNoTime || missing <= 0 || p.refillMicroPerMs <= 0)
                return kNoTime;
            return lastRefill + ceilDiv(missing, p.refillMicroPerMs);
        }
        case Algorithm::LeakyBucket:
            if (!nodeExists || excess <= 0 || p.milliRate <= 0)
                return kNoTime;
            return lastMs + ceilDiv(excess * 1000, p.milliRate);
        case Algorithm::Concurrency: {
            qint64 last = kNoTime;
            for (qint64 end : inFlight)
                last = std::max(last, end);
            return last;
        }
        case Algorithm::Observed:
            break;
        }
        return kNoTime;
    }

    // Whether the usage changes linearly between events (a token bucket refills, a leaky
    // bucket drains, at a constant rate) rather than in steps (a window ends, a charge leaves
    // the window, a request in flight ends).
    [[nodiscard]] static bool changesLinearly(const Params &p)
    {
        return p.algorithm == Algorithm::TokenBucket || p.algorithm == Algorithm::LeakyBucket;
    }

    // Every instant x in (from, to] at which the usage changes with no traffic, in time order,
    // as visit(x, countedUsageAt(x), usageAt(x)): for step algorithms where a step falls (the
    // window ends, a charge leaves the sliding window, a request in flight ends), for linear
    // ones where the line bends (the ms before and the ms at which the counted or the accepted
    // usage reaches zero: the line through the usage at `from` and x-1 is then exact at every
    // whole ms). With these points, a step series (or a line series for changesLinearly) is
    // the usage at every instant between events: what the Bucket chart draws and every view
    // looks up. `from` must be at or after the last charge; reads the state only. visit must
    // not call forEachChange again (a concurrency state's ends are in per-thread scratch).
    template <typename Visit>
    void forEachChange(const Params &p, qint64 from, qint64 to, Visit &&visit) const
    {
        if (to <= from)
            return;
        switch (p.algorithm) {
        case Algorithm::FixedWindow:
        case Algorithm::Credits: {
            const qint64 end = windowEnd(p);
            if (end != kNoTime && (used != 0 || usedAccepted != 0) && from < end && end <= to)
                visit(end, 0.0, 0.0);
            break;
        }
        case Algorithm::SlidingWindow: {
            // Subtracted in the order countedUsageAt() subtracts, so the values are its own.
            double counted = slidingSum;
            double accepted = slidingAccepted;
            size_t i = 0;
            for (; i < charges.size() && charges.at(i).t + p.windowMs <= from; ++i) {
                counted -= charges.at(i).cost;
                accepted -= charges.at(i).acceptedCost;
            }
            while (i < charges.size() && charges.at(i).t + p.windowMs <= to) {
                const qint64 leaves = charges.at(i).t + p.windowMs;
                for (; i < charges.size() && charges.at(i).t + p.windowMs == leaves; ++i) {
                    counted -= charges.at(i).cost;
                    accepted -= charges.at(i).acceptedCost;
                }
                visit(leaves, std::max(0.0, counted), std::max(0.0, accepted));
            }
            break;
        }
        case Algorithm::Concurrency: {
            // Usually nothing ended since the last event: the heaps' fronts say so.
            if ((inFlight.empty() || inFlight.front() > to) &&
                (acceptedInFlight.empty() || acceptedInFlight.front() > to))
                break;
            // The ends at or before `to` of a min-heap, without visiting the rest of it. Into
            // scratch vectors reused by every call on this thread: the engine asks between
            // every two events of a concurrency bucket, and five fresh vectors a call were most
            // of its plot data's cost there. (Hence visit must not come back here.)
            thread_local std::vector<size_t> stack;
            const auto endsUpTo = [to](const std::vector<qint64> &heap, std::vector<qint64> &ends) {
                ends.clear();
                stack.clear();
                if (!heap.empty())
                    stack.push_back(0);
                while (!stack.empty()) {
                    const size_t node = stack.back();
                    stack.pop_back();
                    if (heap[node] > to)
                        continue;
                    ends.push_back(heap[node]);
                    for (size_t child : {2 * node + 1, 2 * node + 2}) {
                        if (child < heap.size())
                            stack.push_back(child);
                    }
                }
                std::sort(ends.begin(), ends.end());
            };
            thread_local std::vector<qint64> all;
            thread_local std::vector<qint64> ok;
            thread_local std::vector<qint64> instants;
            endsUpTo(inFlight, all);
            endsUpTo(acceptedInFlight, ok);
            instants.clear();
            std::merge(all.begin(), all.end(), ok.begin(), ok.end(), std::back_inserter(instants));
            instants.erase(std::unique(instants.begin(), instants.end()), instants.end());
            for (qint64 x : instants) {
                if (x <= from)
                    continue;
                const auto endedAll = std::upper_bound(all.begin(), all.end(), x) - all.begin();
                const auto endedOk = std::upper_bound(ok.begin(), ok.end(), x) - ok.begin();
                visit(x, double(qint64(inFlight.size()) - endedAll),
                      double(qint64(acceptedInFlight.size()) - endedOk));
            }
            break;
        }
        case Algorithm::TokenBucket:
        case Algorithm::LeakyBucket: {
            qint64 zeros[2] = {kNoTime, kNoTime};
            if (p.algorithm == Algorithm::TokenBucket) {
                if (lastRefill == kNoTime || p.refillMicroPerMs <= 0)
                    break;
                const qint64 tokens[2] = {tokensMicro, acceptedTokensMicro};
                for (int k = 0; k < 2; ++k) {
                    if (tokens[k] < p.capacityMicro)
                        zeros[k] =
                            lastRefill + ceilDiv(p.capacityMicro - tokens[k], p.refillMicroPerMs);
                }
            } else {
                if (!nodeExists || excess <= 0 || p.milliRate <= 0)
                    break;
                zeros[0] = lastMs + ceilDiv(excess * 1000, p.milliRate);
            }
            qint64 instants[4] = {kNoTime, kNoTime, kNoTime, kNoTime};
            int n = 0;
            for (qint64 zero : zeros) {
                if (zero == kNoTime)
                    continue;
                for (qint64 x : {zero - 1, zero}) {
                    if (x > from && x <= to)
                        instants[n++] = x;
                }
            }
            // At most four: an insertion sort (std::sort on the array trips GCC 12's bounds
            // warning).
            for (int k = 1; k < n; ++k) {
                for (int j = k; j > 0 && instants[j - 1] > instants[j]; --j)
                    std::swap(instants[j - 1], instants[j]);
            }
            for (int k = 0; k < n; ++k) {
                if (k > 0 && instants[k] == instants[k - 1])
                    continue;
                visit(instants[k], countedUsageAt(p, instants[k]), usageAt(p, instants[k]));
            }
            break;
        }
        case Algorithm::Observed:
            break;
        }
    }

    // Whether setUsage() can say anything for this algorithm: the in-flight requests of a
    // concurrency limit and an observed-only limit have no usage the service could restate.
    [[nodiscard]] static bool correctable(const Params &p)
    {
        return p.algorithm != Algorithm::Concurrency && p.algorithm != Algorithm::Observed;
    }

    // The service said the bucket's usage at t (after advance(t)) is `usage` (capacity =
    // "full": a 429 the replay did not expect): state the log did not show, or a limiter that
    // starts drained (initialFill). The counted usage takes the value (it decides); the
    // accepted layer stays what the log shows the service accepted. A sliding window gains (or
    // loses, oldest first) the difference as one charge at t, so the correction ages out of the
    // window like the traffic it stands for.
    void setUsage(const Params &p, qint64 t, double usage)
    {
        usage = std::max(0.0, usage);
        hiddenActive = false; // the service said it: nothing is hidden any more
        switch (p.algorithm) {
        case Algorithm::FixedWindow:
        case Algorithm::Credits:
            used = usage;
            usedAccepted = std::min(usedAccepted, usage);
            break;
        case Algorithm::SlidingWindow: {
            const double diff = usage - countedUsageAt(p, t);
            if (diff > 0) {
                slidingPushed += diff;
                const qint64 stamp = charges.empty() ? t : std::max(t, charges.back().t);
                Charge &charge = charges.pushBack();
                charge.t = stamp;
                charge.cost = diff;
                charge.acceptedCost = 0;
                charge.cumulative = slidingPushed;
                slidingSum += diff;
            } else {
                double remove = -diff;
                while (remove > 0 && !charges.empty()) {
                    const Charge &front = charges.front();
                    if (front.cost > remove)
                        break;
                    remove -= front.cost;
                    slidingSum -= front.cost;
                    slidingAccepted -= front.acceptedCost;
                    charges.pop();
                }
                if (charges.empty()) {
                    slidingSum = 0;
                    slidingAccepted = 0;
                } else if (remove > 0) {
                    // Part of the oldest entry: its cumulative stays, so the base of the room
                    // search (cumulative - cost) moves on by what left.
                    Charge &front = charges.front();
                    front.cost -= remove;
                    front.acceptedCost = std::max(0.0, front.acceptedCost - remove);
                    slidingSum -= remove;
                    slidingAccepted = std::max(0.0, slidingAccepted - remove);
                }
            }
            break;
        }
        case Algorithm::TokenBucket:
            tokensMicro = p.capacityMicro - qint64(std::llround(usage * 1e6));
            acceptedTokensMicro = std::max(acceptedTokensMicro, tokensMicro);
            lastRefill = std::max(lastRefill, t);
            break;
        case Algorithm::LeakyBucket:
            excess = qint64(std::llround(usage * 1000.0));
            lastMs = t;
            nodeExists = true;
            break;
        case Algorithm::Concurrency:
        case Algorithm::Observed:
            break;
        }
    }

    // The least usage at which a request of this cost is refused: what a 429 the replay did
    // not expect says (no less, so the correction is the smallest the answer allows: a token
    // bucket that refused had less than one token, not none).
    [[nodiscard]] static double refusingUsage(const Params &p, double cost)
    {
        switch (p.algorithm) {
        case Algorithm::TokenBucket: {
            const qint64 costMicro = qint64(std::llround(cost * 1e6));
            return double(p.capacityMicro - std::max<qint64>(0, costMicro - 1)) / 1e6;
        }
        case Algorithm::LeakyBucket:
            return double(std::max<qint64>(0, p.burstMilli - 999)) / 1000.0;
        case Algorithm::FixedWindow:
        case Algorithm::Credits:
        case Algorithm::SlidingWindow:
            return std::max(0.0, p.capacity - cost + std::min(cost, 1.0));
        case Algorithm::Concurrency:
        case Algorithm::Observed:
            break;
        }
        return p.capacity;
    }

    // For fixed windows: the end of the current window (kNoTime without one).
    [[nodiscard]] qint64 windowEnd(const Params &p) const
    {
        return windowStart == kNoTime ? kNoTime : windowStart + p.windowMs;
    }

    // The service said the bucket refills at `instant` (blocked-until / Retry-After): move the
    // current fixed window so it ends there, and keep clock-aligned windows on that phase.
    void learnWindowEnd(const Params &p, qint64 instant)
    {
        if (windowStart == kNoTime)
            return;
        windowStart = instant - p.windowMs;
        phaseMs = ((instant % p.windowMs) + p.windowMs) % p.windowMs;
    }
};

} // namespace ts::limiter
