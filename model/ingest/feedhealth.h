#pragma once
// The health of a live feed (a listener, a followed file, the demo) as the Ingest page and the
// status bar judge it: how long it has been silent, whether that silence is long enough to call
// it stale, and its recent arrival rate. A silent feed must never look like a quiet system, so
// "stale" is decided here, in one place, from the wall clock and a threshold the operator sets.

#include "ingest/ingeststatus.h"

#include <QtGlobal>

#include <deque>
#include <optional>

namespace ts {

// The Listen dialog's default; remembered in QSettings under kStaleAfterSettingsKey.
inline constexpr int kDefaultStaleAfterSeconds = 60;
inline constexpr char kStaleAfterSettingsKey[] = "ingest/staleAfterSeconds";

// Milliseconds since the feed's last event arrived, or since it started when none has yet;
// nullopt for a source that is not a running live feed (an import, a finished feed).
[[nodiscard]] std::optional<qint64> feedSilenceMs(const IngestSourceStatus &source, qint64 nowMs);
// A running live feed silent for longer than staleAfterMs (> 0; 0 or less: never stale).
[[nodiscard]] bool isFeedStale(const IngestSourceStatus &source, qint64 nowMs, qint64 staleAfterMs);
// The rate to show: the published one while the feed is fresh, 0 once it has been silent for
// longer than the window the rate was measured over (the published value is as old as the last
// event and would otherwise keep claiming traffic).
[[nodiscard]] double feedRateNow(const IngestSourceStatus &source, qint64 nowMs);

// Arrivals over a trailing window, in one-second slots: events per second over the last
// kWindowMs, or over the time since the first arrival while the feed is younger than that
// (at least one second, so a first burst does not read as thousands per second).
class RateMeter
{
public:
    static constexpr qint64 kWindowMs = 10'000;

    void add(qint64 nowMs, qint64 count);
    [[nodiscard]] double perSecond(qint64 nowMs) const;

private:
    void trim(qint64 nowMs) const;

    // (slot start, events in that slot), oldest first; mutable: reading trims expired slots.
    mutable std::deque<std::pair<qint64, qint64>> m_slots;
    std::optional<qint64> m_firstMs;
};

} // namespace ts
