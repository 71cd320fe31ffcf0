#pragma once

// A bucket's usage series (plot data of ThrottleEngine, see Options::recordPlotData): its own
// header so that tst_usageseries can hold it against a plain reference implementation.

#include "engine/limiterstate.h"

#include <QtGlobal>

#include <algorithm>
#include <vector>

namespace ts {

// Points reserved when a series starts: a bucket that sees traffic for a minute records this
// many points soon, and growing from one point by doubling copies every point ~8 times.
constexpr size_t kInitialSeriesPoints = 64;

// A bucket's usage over time, exact from its first exact point on (issue 19.6, one truth per
// instant): a point at every event (the usage after it) and at every instant the usage changes
// between events (limiter::State::forEachChange: a window ends, a charge leaves the sliding
// window, a request in flight ends, a token or leaky bucket's line reaches zero). Step
// algorithms hold a point's value until the next point; for token and leaky buckets the usage
// is the line between two points (changesLinearly), and an event's jump is two points at its
// instant (the line's end before it, the usage after it). So the chart draws, and every view
// looks up (models::usageAt), the value the report gives at any instant.
//
// Bounded: past the budget (Options::usageSeriesPoints) the oldest exact points are folded into
// peak bins (the bin's highest usage, at the bin's start) so that at least half the budget
// stays exact, the newest part; the bins double in width when they fill the other half.
//
// Kept for speed (issue 17.5: the series were most of the dashboard's extra engine time): the
// exact points are a ring, so a fold moves no point (it was a memmove of half the budget per
// fold), a point is written field by field straight into its slot (no braced temporary on the
// stack, whose wide reloads stalled behind the slot's cache miss), and the slot of the next
// point is prefetched for writing, so the bucket's next event finds it in cache.
struct UsageSeries
{
    // One point: the usage (as the limiter counts it), the accepted usage, the reconstructed
    // percentage and the "no room until" at t (0: it had room); in the bins, the peaks of the
    // bin starting at t. One array of points, not parallel arrays: appending then touches one
    // tail in memory instead of several.
    struct Point
    {
        qint64 t;
        double usage;
        double accepted;
        double pct;
        qint64 blockedUntil;
    };

    // Width of the peak bins the oldest points are folded into (doubles as they fill).
    qint64 resolutionMs = 1000;
    bool linear = false; // limiter::State::changesLinearly
    // Whether the last point is an event's (the usage after it): a later event at the same
    // instant replaces it, where a breakpoint at that instant is the line's end before it.
    bool lastIsEvent = false;
    qint64 lastPointT = limiter::kNoTime;
    // The peak bins, oldest first: the series' points before the exact ones.
    std::vector<Point> bins;

    // The exact points, oldest first: exact(0) .. exact(exactCount() - 1).
    [[nodiscard]] size_t exactCount() const { return m_count; }
    [[nodiscard]] const Point &exact(size_t k) const { return m_ring[slot(k)]; }
    [[nodiscard]] size_t size() const { return bins.size() + m_count; }

    // Point i of the whole series (bins, then exact points).
    [[nodiscard]] const Point &at(size_t i) const
    {
        return i < bins.size() ? bins[i] : exact(i - bins.size());
    }

    // An instant where the usage changed (or, for a line, bent) without an event.
    void recordChange(qint64 t, double usage, double accepted, double pct, qint64 blockedUntil,
                      size_t cap)
    {
        if (lastPointT == t) // (never earlier than the last point)
            write(back(), t, usage, accepted, pct, blockedUntil);
        else
            push(t, usage, accepted, pct, blockedUntil, cap);
        lastIsEvent = false;
    }

    // The usage after an event at t.
    void recordEvent(qint64 t, double usage, double accepted, double pct, qint64 blockedUntil,
                     size_t cap)
    {
        // A step holds one value per instant; a line keeps the breakpoint at this instant (the
        // value before the event) and one point after it, replaced by later events of the ms.
        if (lastPointT == t && (!linear || lastIsEvent))
            write(back(), t, usage, accepted, pct, blockedUntil);
        else
            push(t, usage, accepted, pct, blockedUntil, cap);
        lastIsEvent = true;
    }

    // The start of the bin t falls in. The bins are whole multiples of the resolution, in time
    // order, and a point usually falls in the last bin or the one after it: no division then
    // (a 64-bit division per bin test was most of a fold's time).
    static qint64 binStartOf(const std::vector<Point> &to, qint64 t, qint64 resolution)
    {
        if (!to.empty() && t >= to.back().t) {
            const qint64 since = t - to.back().t;
            if (since < resolution)
                return to.back().t;
            if (since < 2 * resolution)
                return to.back().t + resolution;
        }
        return limiter::floorDiv(t, resolution) * resolution;
    }

    static void appendPeak(std::vector<Point> &to, Point point, qint64 resolution)
    {
        point.t = binStartOf(to, point.t, resolution);
        if (!to.empty() && to.back().t == point.t) {
            Point &back = to.back();
            back.usage = std::max(back.usage, point.usage);
            back.accepted = std::max(back.accepted, point.accepted);
            back.pct = std::max(back.pct, point.pct);
            back.blockedUntil = std::max(back.blockedUntil, point.blockedUntil);
            return;
        }
        to.push_back(point);
    }

    // A point (or a finer bin) into its bin, and its value carried on, since it holds until
    // the next point (at nextT): into the next bin (a bin without a point holds the one before
    // it) and into the bin nextT falls in, when nextT is past their starts.
    static void appendCarried(std::vector<Point> &to, const Point &point, qint64 nextT,
                              qint64 resolution)
    {
        appendPeak(to, point, resolution);
        const qint64 b = to.back().t + resolution; // (the point's bin is the last one now)
        if (nextT <= b)
            return;
        Point carried = point;
        carried.t = b;
        appendPeak(to, carried, resolution);
        const qint64 last = binStartOf(to, nextT, resolution);
        if (last > b && nextT > last) {
            carried.t = last;
            appendPeak(to, carried, resolution);
        }
    }

private:
    // The exact points: m_ring[m_head] is the oldest, m_count of them, wrapping at the end.
    // Until the first fold the ring is a plain growing vector (m_head 0, full); from then on
    // its length (the budget + 1) bounds m_count, which a fold keeps within the budget.
    std::vector<Point> m_ring;
    size_t m_head = 0;
    size_t m_count = 0;

    [[nodiscard]] size_t slot(size_t k) const
    {
        const size_t i = m_head + k;
        return i < m_ring.size() ? i : i - m_ring.size();
    }
    Point &back() { return m_ring[slot(m_count - 1)]; }

    static void write(Point &p, qint64 t, double usage, double accepted, double pct,
                      qint64 blockedUntil)
    {
        p.t = t;
        p.usage = usage;
        p.accepted = accepted;
        p.pct = pct;
        p.blockedUntil = blockedUntil;
    }

    void push(qint64 t, double usage, double accepted, double pct, qint64 blockedUntil, size_t cap)
    {
        cap = std::max<size_t>(cap, 8);
        if (m_count == m_ring.size()) { // still growing (m_head is 0 until the first fold)
            if (m_ring.empty())
                m_ring.reserve(kInitialSeriesPoints);
            write(m_ring.emplace_back(), t, usage, accepted, pct, blockedUntil);
        } else {
            write(m_ring[slot(m_count)], t, usage, accepted, pct, blockedUntil);
        }
        ++m_count;
        lastPointT = t;
        if (bins.size() + m_count > cap)
            fold(cap);
        // The next point's slot, for writing: by the bucket's next event it is in cache.
        const Point *next = nullptr;
        if (m_count < m_ring.size())
            next = &m_ring[slot(m_count)];
        else if (m_ring.size() < m_ring.capacity())
            next = m_ring.data() + m_ring.size();
        if (next) {
            __builtin_prefetch(next, 1, 3);
            __builtin_prefetch(reinterpret_cast<const char *>(next + 1) - 1, 1, 3);
        }
    }

    // Exact point k into the peak bins, and what it holds after its bin: a bin's peak is the
    // highest usage in it, including what the point before it left (a bin without a point of
    // its own would otherwise repeat the previous bin's peak, and a drained token bucket stay
    // full in the chart until its next event). A line's value at each later bin start until
    // the next point (the line only falls, so that is the bin's peak), a step's value at the
    // next bin start when the next point is later.
    void foldPoint(size_t k)
    {
        const Point &point = exact(k);
        appendPeak(bins, point, resolutionMs);
        if (k + 1 >= m_count)
            return;
        const Point &next = exact(k + 1);
        qint64 b = bins.back().t + resolutionMs; // (the point's bin is the last one now)
        if (next.t <= b)
            return;
        const bool line = linear && (next.usage != point.usage || next.accepted != point.accepted);
        if (!line || (next.t - b) / resolutionMs > qint64(kInitialSeriesPoints)) {
            appendCarried(bins, point, next.t, resolutionMs);
            return;
        }
        const double span = double(next.t - point.t);
        for (; b < next.t; b += resolutionMs) {
            const double share = double(b - point.t) / span;
            Point at = point;
            at.t = b;
            at.usage = point.usage + (next.usage - point.usage) * share;
            at.accepted = point.accepted + (next.accepted - point.accepted) * share;
            at.pct = point.pct + (next.pct - point.pct) * share;
            appendPeak(bins, at, resolutionMs);
        }
    }

    // Folds the oldest exact points into the peak bins so that half the budget stays exact.
    // Runs once per half a budget of points: amortised O(1) per point, and no point moves (the
    // ring's head moves past the folded ones).
    void fold(size_t cap)
    {
        const size_t keepExact = cap / 2;
        const size_t folded = m_count - keepExact;
        for (size_t k = 0; k < folded; ++k)
            foldPoint(k);
        m_head = slot(folded);
        m_count = keepExact;
        // The bins are coarsened in a scratch vector reused by every fold on this thread.
        thread_local std::vector<Point> coarser;
        while (bins.size() > cap - keepExact) {
            resolutionMs *= 2;
            coarser.clear();
            for (size_t k = 0; k < bins.size(); ++k)
                appendCarried(coarser, bins[k], k + 1 < bins.size() ? bins[k + 1].t : exact(0).t,
                              resolutionMs);
            std::swap(bins, coarser);
        }
    }
};

} // namespace ts
