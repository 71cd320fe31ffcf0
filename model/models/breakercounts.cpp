#include "models/breakercounts.h"

#include <QCoreApplication>
#include <QHash>

namespace ts::models {

BreakerCounts countBreakers(const ReportData &report, std::optional<qint64> instant)
{
    // At a replay instant: each breaker's state then, from its transitions (in time order).
    QHash<QString, std::pair<qint64, QString>> stateAt;
    if (instant) {
        for (const BreakerTransition &t : report.breakerTransitions) {
            if (t.tsMs > *instant)
                continue;
            auto &latest = stateAt[t.scope + u'\n' + t.source];
            if (latest.second.isEmpty() || t.tsMs >= latest.first)
                latest = {t.tsMs, t.to};
        }
    }
    BreakerCounts counts;
    for (const BreakerSummary &breaker : report.breakers) {
        QString state = breaker.finalState;
        if (instant)
            state = stateAt.value(breaker.scope + u'\n' + breaker.source).second;
        if (state.isEmpty() || state == u"closed")
            continue;
        if (state == u"soft-open")
            ++counts.softOpen;
        else if (state == u"half-open")
            ++counts.halfOpen;
        else
            ++counts.open;
        counts.notClosed.append(breaker.scope + QStringLiteral(" (") + breaker.source +
                                QStringLiteral("): ") + state);
    }
    return counts;
}

QString breakerCountsText(const BreakerCounts &counts)
{
    const auto tr = [](const char *text) {
        return QCoreApplication::translate("BreakerCounts", text);
    };
    QStringList parts;
    if (counts.open > 0)
        parts << tr("%1 open").arg(counts.open);
    if (counts.halfOpen > 0)
        parts << tr("%1 half-open").arg(counts.halfOpen);
    if (counts.softOpen > 0)
        parts << tr("%1 soft-open").arg(counts.softOpen);
    return parts.isEmpty() ? tr("none open") : parts.join(QStringLiteral(", "));
}

} // namespace ts::models
