#pragma once
// The reorder window of live feeds (issue 30.4): what the dashboard follows (files, workspaces
// written by tail or serve, the HTTP listener, polled stores) arrives in the order it was
// written, and access logs write a line when its request ends, stamped when it began (the
// Apache sample: lines up to 59 s behind). The analysis charges an event older than what it has
// seen at that later instant (time never runs backwards), so an event is held here until it can
// no longer be overtaken: until it is more than the window older than the newest event seen, or
// has waited the window in wall-clock time (a quiet feed still shows).
//
// The window is a setting (--reorder-window S, Preferences): a fixed number of seconds, or
// "auto" (the default), sized from the lateness seen: 0 while every event comes in time order
// (nothing is held: an ordered feed is analysed the moment it arrives, as before), then the
// largest lateness seen so far, at most kMaxAutoReorderWindowMs. An event that comes after a
// later one was already handed on is *late*: handed on at once and counted, per source (the
// Ingest page's Late column). Annotations are handed on at once and measure nothing.
//
// Not thread-safe: the session's thread owns it.

#include "core/requestevent.h"

#include <QHash>
#include <QString>

#include <limits>
#include <optional>
#include <vector>

namespace ts {

constexpr qint64 kMaxAutoReorderWindowMs = 120'000;

class LiveReorderBuffer
{
public:
    // nullopt: auto (sized from the lateness seen); else a fixed window (>= 0 ms).
    void setFixedWindow(std::optional<qint64> windowMs);
    [[nodiscard]] std::optional<qint64> fixedWindow() const { return m_fixed; }
    // The window in force now.
    [[nodiscard]] qint64 windowMs() const;

    // Takes events arriving at wall-clock `nowMs` (in the order they arrived); appends to
    // `ready` what can be analysed now, in time order.
    void add(std::vector<RequestEvent> &&events, qint64 nowMs, std::vector<RequestEvent> &ready);
    // What has waited the window in wall-clock time (a feed gone quiet).
    void release(qint64 nowMs, std::vector<RequestEvent> &ready);
    // Everything held (a policy change replays the feeds; a new session).
    void flush(std::vector<RequestEvent> &ready);
    void clear();

    [[nodiscard]] bool isEmpty() const { return m_held.empty(); }
    [[nodiscard]] qint64 lateEvents() const { return m_late; }
    [[nodiscard]] qint64 lateEvents(const QString &source) const
    {
        return m_lateBySource.value(source);
    }
    [[nodiscard]] qint64 largestLatenessMs() const { return m_largestLatenessMs; }

private:
    struct Held
    {
        RequestEvent event;
        qint64 arrivedMs = 0;
    };
    void releaseBefore(qint64 cutMs, qint64 nowMs, std::vector<RequestEvent> &ready);

    std::optional<qint64> m_fixed;
    std::vector<Held> m_held; // sorted by event time, equal instants in arrival order
    qint64 m_newestMs = std::numeric_limits<qint64>::min();
    qint64 m_lastReleasedMs = std::numeric_limits<qint64>::min();
    qint64 m_largestLatenessMs = 0;
    qint64 m_late = 0;
    QHash<QString, qint64> m_lateBySource;
};

} // namespace ts
