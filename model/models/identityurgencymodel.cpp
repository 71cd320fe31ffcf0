#include "identityurgencymodel.h"

#include "core/timeparse.h"
#include "displaynames.h"
#include "engine/paceadvice.h"
#include "fillexplanation.h"
#include "snapshotmath.h"

#include <QLocale>

#include <algorithm>
#include <cmath>

namespace ts::models {

namespace {

// A fill at or above this is "at the limit" even while a request still fits (the next burst
// will not); the same threshold as a near-limit alert is "rising".
constexpr double kAtLimitFill = 0.9;
constexpr double kRisingFill = 0.8;
// Rising: at least this full and this much fuller than a minute ago.
constexpr double kRisingFrom = 0.5;
constexpr double kRisingStep = 0.1;

int breakerRank(const QString &state)
{
    if (state == u"open")
        return 3;
    if (state == u"half-open")
        return 2;
    if (state == u"soft-open")
        return 1;
    return 0;
}

// The identity a breaker's scope names: "user:alice@contoso.com" -> "alice@contoso.com".
QString breakerId(const QString &scope)
{
    const qsizetype colon = scope.indexOf(u':');
    return colon < 0 ? scope : scope.mid(colon + 1);
}

} // namespace

IdentityUrgencyModel::IdentityUrgencyModel(QObject *parent) : QAbstractTableModel(parent) {}

QString IdentityUrgencyModel::urgencyName(Urgency urgency)
{
    switch (urgency) {
    case Urgency::Blocked:
        return tr("blocked now");
    case Urgency::AtLimit:
        return tr("at limit");
    case Urgency::Rising:
        return tr("rising");
    case Urgency::Calm:
        break;
    }
    return tr("calm");
}

void IdentityUrgencyModel::setSnapshot(std::shared_ptr<const DashboardSnapshot> snapshot)
{
    m_snapshot = std::move(snapshot);
    m_activityOf.clear();
    m_breakersOf.clear();
    m_callersOf.clear();
    m_transitionsOf.clear();
    if (m_snapshot) {
        for (const ScopeSummary &scope : m_snapshot->report.scopes) {
            QStringList &callers = m_callersOf[scope.key];
            for (const QString &caller : scope.callers) {
                if (!callers.contains(caller))
                    callers.append(caller);
            }
        }
        const auto &activity = m_snapshot->keyActivity;
        for (int i = 0; i < int(activity.size()); ++i)
            m_activityOf.insert(activity[size_t(i)].key, i);
        const auto &breakers = m_snapshot->report.breakers;
        for (int i = 0; i < breakers.size(); ++i)
            m_breakersOf[breakerId(breakers.at(i).scope)].append(i);
        if (m_instant)
            buildTransitions();
    }
    recompute();
}

void IdentityUrgencyModel::buildTransitions()
{
    m_transitionsOf.clear();
    for (const BreakerTransition &t : m_snapshot->report.breakerTransitions)
        m_transitionsOf[t.scope + u'\n' + t.source].emplace_back(t.tsMs, t.to);
    for (auto &list : m_transitionsOf)
        std::stable_sort(list.begin(), list.end(),
                         [](const auto &a, const auto &b) { return a.first < b.first; });
}

void IdentityUrgencyModel::setInstant(std::optional<qint64> instantMs)
{
    if (instantMs == m_instant)
        return;
    const bool needTransitions = instantMs && !m_instant;
    m_instant = instantMs;
    if (needTransitions && m_snapshot)
        buildTransitions();
    recompute();
}

int IdentityUrgencyModel::rowOfKey(const QString &key) const
{
    for (size_t i = 0; i < m_rows.size(); ++i) {
        if (m_rows[i].key == key)
            return int(i);
    }
    return -1;
}

// The fastest steady pace the key's limits allow (the tightest advice that names it).
void IdentityUrgencyModel::notePace(Row &row) const
{
    row.pace.clear();
    row.paceDetail.clear();
    row.pacePerSecond = 0;
    for (const PaceAdvice &advice : m_snapshot->report.advice) {
        if (advice.key == row.key &&
            (row.pace.isEmpty() || advice.maxRatePerSecond < row.pacePerSecond)) {
            row.pacePerSecond = advice.maxRatePerSecond;
            // Short for the cell; the tooltip says it in full (describeAdvice).
            row.pace =
                u"max "_qs + formatPace(advice.maxRatePerSecond) + u" · "_qs + advice.bindingLimit;
            row.paceDetail = describeAdvice(advice);
        }
    }
}

void IdentityUrgencyModel::computeRow(Row &row) const
{
    const DashboardSnapshot &snap = *m_snapshot;
    const qint64 now = *m_referenceMs;

    // Fill now, and the worst scope, over every layer.
    row.fill = 0;
    row.accepted = 0;
    row.worstScope = -1;
    SafeSend safe;
    for (int scope : row.scopes) {
        const double fill = displayedFill(snap, scope, m_instant);
        if (row.worstScope < 0 || fill > row.fill) {
            row.fill = fill;
            row.worstScope = scope;
            const ScopeSummary &summary = snap.report.scopes.at(scope);
            const double accepted = m_instant && size_t(scope) < snap.series.size()
                                        ? acceptedUsageAt(snap.series[size_t(scope)], *m_instant)
                                        : summary.currentAcceptedUsage;
            row.accepted = summary.capacity > 0 ? accepted / summary.capacity : 0;
        }
        safe = laterOf(safe, m_instant ? scopeSafeSendAt(snap, scope, *m_instant)
                                       : models::safeSend(snap, scope, std::nullopt));
    }
    row.safeAtMs = safe.atMs && *safe.atMs > now ? safe.atMs : std::nullopt;
    row.safeInMs = row.safeAtMs ? *row.safeAtMs - now : 0;
    row.safeReason = row.safeAtMs ? safeSendReason(safe) : QString();

    // The sparkline: the worst fill in each slice of the last minutes, oldest first.
    row.sparkline.assign(size_t(kSparklineSamples), 0.0);
    const qint64 slice = kSparklineMs / kSparklineSamples;
    const qint64 start = now - kSparklineMs;
    for (int scope : row.scopes) {
        const double capacity = snap.report.scopes.at(scope).capacity;
        if (capacity <= 0 || size_t(scope) >= snap.series.size())
            continue;
        const ScopeSeries &series = snap.series[size_t(scope)];
        for (int i = 0; i < kSparklineSamples; ++i) {
            const qint64 from = start + i * slice;
            // Read as the Bucket chart draws it: a token or leaky bucket's line is not held.
            const double fill = usagePeakOver(series, from, from + slice) / capacity;
            row.sparkline[size_t(i)] = std::max(row.sparkline[size_t(i)], fill);
        }
    }
    // The last sample is "now" exactly (the peak of the last slice may be a moment ago).
    if (!row.sparkline.empty())
        row.sparkline.back() = std::max(row.sparkline.back(), row.fill);

    // 429s per second now and the lane share, from the key's recent activity.
    row.throttleRates.clear();
    row.throttlesPerSecond = -1;
    row.backgroundShare = -1;
    const bool retained =
        snap.report.lastMs &&
        now >= *snap.report.lastMs - DashboardSnapshot::kActivityRetentionMs + kLaneWindowMs;
    if (retained) {
        row.throttlesPerSecond = 0;
        const auto it = m_activityOf.constFind(row.key);
        if (it != m_activityOf.cend()) {
            const KeyActivity &activity = snap.keyActivity[size_t(*it)];
            qint64 throttles = 0;
            qint64 background = 0;
            qint64 tagged = 0;
            QMap<QString, qint64> byCode;
            for (auto bin = activity.bins.rbegin(); bin != activity.bins.rend(); ++bin) {
                if (bin->startMs > now)
                    continue;
                if (bin->startMs <= now - kLaneWindowMs)
                    break;
                background += bin->background;
                tagged += bin->laneTagged;
                if (bin->startMs > now - kRateWindowMs) {
                    throttles += bin->throttles;
                    for (auto code = bin->byErrorCode.cbegin(); code != bin->byErrorCode.cend();
                         ++code)
                        byCode[code.key()] += code.value();
                }
            }
            const double seconds = double(kRateWindowMs) / 1000.0;
            row.throttlesPerSecond = double(throttles) / seconds;
            for (auto code = byCode.cbegin(); code != byCode.cend(); ++code)
                row.throttleRates.insert(code.key(), double(code.value()) / seconds);
            if (tagged > 0)
                row.backgroundShare = double(background) / double(tagged);
        }
    }

    // The breaker: the worst state of those that apply (the identity's own, its app's).
    row.breakerState = QStringLiteral("closed");
    row.breakerScope.clear();
    QStringList ids = row.key.split(u'+');
    if (ids.size() > 1)
        ids.prepend(row.key);
    ids += m_callersOf.value(row.key); // a key without the identity: its callers' breakers
    int worstRank = -1;
    for (const QString &id : std::as_const(ids)) {
        const auto found = m_breakersOf.constFind(id);
        if (found == m_breakersOf.cend())
            continue;
        for (int b : *found) {
            const BreakerSummary &breaker = snap.report.breakers.at(b);
            QString state =
                breaker.finalState.isEmpty() ? QStringLiteral("closed") : breaker.finalState;
            if (m_instant) {
                state = QStringLiteral("closed");
                const auto transitions =
                    m_transitionsOf.constFind(breaker.scope + u'\n' + breaker.source);
                if (transitions != m_transitionsOf.cend()) {
                    const auto &list = *transitions;
                    const auto after = std::upper_bound(
                        list.begin(), list.end(), *m_instant,
                        [](qint64 t, const std::pair<qint64, QString> &p) { return t < p.first; });
                    if (after != list.begin())
                        state = std::prev(after)->second;
                }
            }
            if (breakerRank(state) > worstRank) {
                worstRank = breakerRank(state);
                row.breakerState = state;
                row.breakerScope = breaker.scope + QStringLiteral(" (") + breaker.source + u')';
            }
        }
    }

    notePace(row);

    // Urgency.
    if (row.safeAtMs || row.throttlesPerSecond > 0 || worstRank == 3)
        row.urgency = Urgency::Blocked;
    else if (row.fill >= kAtLimitFill)
        row.urgency = Urgency::AtLimit;
    else if (row.fill >= kRisingFill ||
             (row.fill >= kRisingFrom && row.sparkline.size() >= 13 &&
              row.fill - row.sparkline[row.sparkline.size() - 13] >= kRisingStep))
        row.urgency = Urgency::Rising;
    else
        row.urgency = Urgency::Calm;
}

void IdentityUrgencyModel::recompute()
{
    std::vector<Row> rows;
    m_referenceMs = m_snapshot ? referenceInstant(*m_snapshot, m_instant) : std::nullopt;
    if (m_snapshot && m_referenceMs) {
        const auto &scopes = m_snapshot->report.scopes;
        QHash<QString, int> rowOf;
        rows.reserve(size_t(scopes.size()));
        for (int i = 0; i < scopes.size(); ++i) {
            const QString &key = scopes.at(i).key;
            auto it = rowOf.constFind(key);
            if (it == rowOf.cend()) {
                it = rowOf.insert(key, int(rows.size()));
                rows.emplace_back().key = key;
            }
            rows[size_t(*it)].scopes.push_back(i);
        }
        // Layers: a key that is a '+'-prefix of another ("note-bridge" of
        // "note-bridge+alice@contoso.com") holds that one back too.
        std::vector<size_t> own(rows.size());
        for (size_t r = 0; r < rows.size(); ++r)
            own[r] = rows[r].scopes.size();
        for (Row &row : rows) {
            for (qsizetype plus = row.key.indexOf(u'+'); plus > 0;
                 plus = row.key.indexOf(u'+', plus + 1)) {
                const auto prefix = rowOf.constFind(row.key.left(plus));
                if (prefix == rowOf.cend())
                    continue;
                // Only the prefix's own scopes: its shorter prefixes are found here too.
                const auto &layer = rows[size_t(*prefix)].scopes;
                row.scopes.insert(row.scopes.end(), layer.begin(),
                                  layer.begin() + qsizetype(own[size_t(*prefix)]));
            }
        }
        for (Row &row : rows)
            computeRow(row);
        // Urgency first; then fill in 5 % steps, 429 rate, time to safe, name: an order that
        // moves only when something changed by a visible amount.
        std::sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) {
            if (a.urgency != b.urgency)
                return a.urgency < b.urgency;
            const int fa = int(std::floor(a.fill * 20.0));
            const int fb = int(std::floor(b.fill * 20.0));
            if (fa != fb)
                return fa > fb;
            const qint64 ra = qint64(std::floor(a.throttlesPerSecond));
            const qint64 rb = qint64(std::floor(b.throttlesPerSecond));
            if (ra != rb)
                return ra > rb;
            if ((a.safeInMs / 10'000) != (b.safeInMs / 10'000))
                return a.safeInMs > b.safeInMs;
            return a.key < b.key;
        });
    }

    bool sameKeys = rows.size() == m_rows.size();
    bool sameOrder = sameKeys;
    if (sameKeys) {
        QHash<QString, int> old;
        for (size_t i = 0; i < m_rows.size(); ++i)
            old.insert(m_rows[i].key, int(i));
        for (size_t i = 0; i < rows.size() && sameKeys; ++i) {
            const auto it = old.constFind(rows[i].key);
            sameKeys = it != old.cend();
            sameOrder = sameOrder && sameKeys && *it == int(i);
        }
    }
    if (!sameKeys) {
        beginResetModel();
        m_rows = std::move(rows);
        endResetModel();
        return;
    }
    if (!sameOrder) {
        // Only the order moved: a layout change keeps the selection on its identity.
        Q_EMIT layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
        QHash<QString, int> newRow;
        for (size_t i = 0; i < rows.size(); ++i)
            newRow.insert(rows[i].key, int(i));
        const QModelIndexList before = persistentIndexList();
        QModelIndexList after;
        after.reserve(before.size());
        for (const QModelIndex &index : before) {
            const int row = newRow.value(m_rows[size_t(index.row())].key, -1);
            after.append(row < 0 ? QModelIndex() : createIndex(row, index.column()));
        }
        m_rows = std::move(rows);
        changePersistentIndexList(before, after);
        Q_EMIT layoutChanged({}, QAbstractItemModel::VerticalSortHint);
        return;
    }
    m_rows = std::move(rows);
    if (!m_rows.empty())
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

int IdentityUrgencyModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int IdentityUrgencyModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant IdentityUrgencyModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || (role != Qt::DisplayRole && role != Qt::ToolTipRole))
        return QAbstractTableModel::headerData(section, orientation, role);
    const bool tip = role == Qt::ToolTipRole;
    switch (section) {
    case IdentityColumn:
        return tr("Identity");
    case StatusColumn:
        return tip ? tr("Blocked now, at limit, rising or calm") : tr("Status");
    case FillColumn:
        return tip ? tr("The worst fill of the identity's limits now, as the limiter counts it "
                        "(throttled requests included where they count)")
                   : tr("Worst fill");
    case SparklineColumn:
        return tip ? tr("Worst fill over the last 5 minutes") : tr("Last 5 min");
    case ThrottleRateColumn:
        return tip ? tr("429s per second over the last 10 s, by errorCode") : tr("429/s");
    case BreakerColumn:
        return tr("Breaker");
    case LaneColumn:
        return tip ? tr("Share of the last minute's requests sent on the background lane")
                   : tr("Background");
    case SafeSendColumn:
        return tip ? tr("When every limit holding the identity back has room again (the "
                        "maximum over all layers), and why")
                   : tr("Safe to send");
    case PaceColumn:
        return tip ? tr("The fastest steady pace the identity's limits allow for this log's mix "
                        "of costs, and the limit that binds (the report's pace advice)")
                   : tr("Pace");
    default:
        return {};
    }
}

QVariant IdentityUrgencyModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const Row &row = m_rows[size_t(index.row())];
    switch (role) {
    case UrgencyRole:
        return int(row.urgency);
    case FillRole:
        return row.fill;
    case SparklineRole: {
        QVariantList list;
        list.reserve(qsizetype(row.sparkline.size()));
        for (double v : row.sparkline)
            list.append(v);
        return list;
    }
    case ThrottleRatesRole: {
        QVariantMap map;
        for (auto it = row.throttleRates.cbegin(); it != row.throttleRates.cend(); ++it)
            map.insert(it.key(), it.value());
        return map;
    }
    case ThrottleRateRole:
        return row.throttlesPerSecond;
    case BreakerStateRole:
        return row.breakerState;
    case LaneShareRole:
        return row.backgroundShare;
    case SafeInMsRole:
        return row.safeInMs;
    case SafeReasonRole:
        return row.safeReason;
    case KeyRole:
    case FullTextRole: // exports and tooltips carry the full key; the cell shows it short
        return row.key;
    case ScopeIndexRole:
        return row.worstScope;
    case PaceRole:
        return row.pacePerSecond;
    case Qt::ToolTipRole:
        return tooltip(row);
    case Qt::TextAlignmentRole:
        return index.column() == IdentityColumn || index.column() == SafeSendColumn ||
                       index.column() == PaceColumn
                   ? int(Qt::AlignLeft | Qt::AlignVCenter)
                   : int(Qt::AlignCenter);
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }
    switch (index.column()) {
    case IdentityColumn:
        return shortName(row.key);
    case StatusColumn:
        return urgencyName(row.urgency);
    case FillColumn:
        return QString(QString::number(row.fill * 100.0, 'f', 0) + QStringLiteral(" %"));
    case SparklineColumn:
        return QString();
    case ThrottleRateColumn:
        if (row.throttlesPerSecond < 0)
            return QStringLiteral("–");
        return QString(
            QString::number(row.throttlesPerSecond, 'f',
                            row.throttlesPerSecond >= 10 || row.throttlesPerSecond == 0 ? 0 : 1) +
            QStringLiteral("/s"));
    case BreakerColumn:
        return row.breakerState;
    case LaneColumn:
        return row.backgroundShare < 0
                   ? QStringLiteral("–")
                   : QString(QString::number(row.backgroundShare * 100.0, 'f', 0) +
                             QStringLiteral(" %"));
    case SafeSendColumn:
        return row.safeAtMs ? tr("in %1 · %2").arg(formatCountdown(row.safeInMs), row.safeReason)
                            : tr("now");
    case PaceColumn:
        return row.pace.isEmpty() ? QStringLiteral("–") : row.pace;
    default:
        return {};
    }
}

QString IdentityUrgencyModel::tooltip(const Row &row) const
{
    QString text = row.key + u'\n' + urgencyName(row.urgency);
    if (m_referenceMs)
        text += (m_instant ? tr(" as of %1 (replay)") : tr(" as of %1"))
                    .arg(formatIsoMs(*m_referenceMs));
    text += u'\n';
    if (row.worstScope >= 0) {
        const ScopeSummary &scope = m_snapshot->report.scopes.at(row.worstScope);
        text += tr("Worst: %1 at %2 % as the limiter counts it (%3 % accepted)")
                    .arg(scopeLabel(scope), QString::number(row.fill * 100.0, 'f', 0),
                         QString::number(row.accepted * 100.0, 'f', 0)) +
                u'\n';
        const QString over = overCapacityExplanation(scope, row.fill * scope.capacity,
                                                     row.accepted * scope.capacity);
        if (!over.isEmpty())
            text += over + u'\n';
    }
    if (row.throttlesPerSecond < 0) {
        text += tr("429s per second: not retained for this instant (the last %1 min of data "
                   "only)")
                    .arg(DashboardSnapshot::kActivityRetentionMs / 60000) +
                u'\n';
    } else {
        text += tr("429s per second now: %1").arg(row.throttlesPerSecond, 0, 'f', 1);
        for (auto it = row.throttleRates.cbegin(); it != row.throttleRates.cend(); ++it)
            text += QStringLiteral("\n  %1: %2/s").arg(it.key()).arg(it.value(), 0, 'f', 1);
        text += u'\n';
    }
    text += tr("Breaker: %1").arg(row.breakerState);
    if (!row.breakerScope.isEmpty())
        text += QStringLiteral(" · ") + row.breakerScope;
    text += u'\n';
    text += row.safeAtMs ? tr("Safe to send in %1 (at %2): %3")
                               .arg(formatCountdown(row.safeInMs), formatIsoMs(*row.safeAtMs),
                                    row.safeReason)
                         : tr("Safe to send now");
    if (!row.paceDetail.isEmpty())
        text += u'\n' + tr("Pace: %1").arg(row.paceDetail);
    return text;
}

} // namespace ts::models
