#pragma once
// How many breakers are open, counted the one way every view says it (issue 30.6): a breaker
// that soft-opened (it slows down near a limit, nothing is refused yet) is not an open one. The
// Overview's card, its tooltip and the tray's tooltip all read this.

#include "engine/reportdata.h"

#include <QString>
#include <QStringList>

#include <optional>

namespace ts::models {

struct BreakerCounts
{
    int open = 0;
    int halfOpen = 0;
    int softOpen = 0;
    QStringList notClosed; // "scope (source): state", one per breaker not closed
};

// Each breaker's state at `instant` (from its transitions, closed before the first), else its
// state at the end of the data.
BreakerCounts countBreakers(const ReportData &report, std::optional<qint64> instant);

// "2 open, 1 soft-open", "1 half-open", "none open".
QString breakerCountsText(const BreakerCounts &counts);

} // namespace ts::models
