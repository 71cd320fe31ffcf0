#include "bucketgridmodel.h"

#include "core/timeparse.h"
#include "displaynames.h"
#include "fillexplanation.h"
#include "snapshotmath.h"

#include <QHash>

#include <algorithm>

namespace ts::models {

BucketGridModel::BucketGridModel(QObject *parent) : QAbstractTableModel(parent) {}

void BucketGridModel::setSnapshot(std::shared_ptr<const DashboardSnapshot> snapshot)
{
    QStringList identities;
    QStringList limits;
    if (snapshot) {
        // Small sets (hundreds): a hash for membership, then a sort for a stable order.
        QHash<QString, bool> seenIdentity;
        QHash<QString, bool> seenLimit;
        for (const ScopeSummary &scope : snapshot->report.scopes) {
            if (!seenIdentity.contains(scope.key)) {
                seenIdentity.insert(scope.key, true);
                identities.append(scope.key);
            }
            const QString limit = limitLabel(scope);
            if (!seenLimit.contains(limit)) {
                seenLimit.insert(limit, true);
                limits.append(limit);
            }
        }
        identities.sort();
        limits.sort();
    }

    const bool shapeChanged = identities != m_identities || limits != m_limits;
    if (shapeChanged)
        beginResetModel();
    m_snapshot = std::move(snapshot);
    if (shapeChanged)
        m_identityNames = shortNames(identities);
    m_identities = identities;
    m_limits = limits;
    const size_t cells = static_cast<size_t>(m_identities.size()) * m_limits.size();
    m_cellScope.assign(cells, -1);
    if (m_snapshot) {
        QHash<QString, int> rowOf;
        QHash<QString, int> columnOf;
        for (int i = 0; i < m_identities.size(); ++i)
            rowOf.insert(m_identities.at(i), i);
        for (int i = 0; i < m_limits.size(); ++i)
            columnOf.insert(m_limits.at(i), i);
        const auto &scopes = m_snapshot->report.scopes;
        for (int i = 0; i < scopes.size(); ++i) {
            const int row = rowOf.value(scopes.at(i).key);
            const int column = columnOf.value(limitLabel(scopes.at(i)));
            m_cellScope[static_cast<size_t>(row) * m_limits.size() + column] = i;
        }
    }
    recomputeValues(!shapeChanged);
    if (shapeChanged)
        endResetModel();
}

void BucketGridModel::setInstant(std::optional<qint64> instantMs)
{
    if (instantMs == m_instant)
        return;
    m_instant = instantMs;
    recomputeValues(true);
}

void BucketGridModel::recomputeValues(bool notify)
{
    const size_t cells = m_cellScope.size();
    m_cellFill.assign(cells, 0);
    m_cellUsage.assign(cells, 0);
    if (!m_snapshot)
        return;
    for (size_t i = 0; i < cells; ++i) {
        const int scope = m_cellScope[i];
        if (scope < 0)
            continue;
        m_cellFill[i] = displayedFill(*m_snapshot, scope, m_instant);
        m_cellUsage[i] = displayedUsage(*m_snapshot, scope, m_instant);
    }
    // One batched notification for the whole value range: the view repaints visible cells only.
    if (notify && !m_identities.isEmpty() && !m_limits.isEmpty())
        Q_EMIT dataChanged(index(0, 1), index(rowCount() - 1, columnCount() - 1),
                           {Qt::DisplayRole, Qt::ToolTipRole, FillRole, UsageRole, SortRole});
}

int BucketGridModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_identities.size());
}

int BucketGridModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_limits.size()) + 1;
}

int BucketGridModel::scopeIndexAt(int row, int column) const
{
    if (row < 0 || row >= m_identities.size() || column < 1 || column > m_limits.size())
        return -1;
    return m_cellScope[static_cast<size_t>(row) * m_limits.size() + (column - 1)];
}

double BucketGridModel::fillAt(int row, int column) const
{
    if (scopeIndexAt(row, column) < 0)
        return 0;
    return m_cellFill[static_cast<size_t>(row) * m_limits.size() + (column - 1)];
}

QVariant BucketGridModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const int row = index.row();
    const int column = index.column();
    if (column == 0) {
        switch (role) {
        case Qt::DisplayRole:
        case SortRole:
            return m_identityNames.at(row);
        case Qt::ToolTipRole:
            return nameTooltip(m_identities.at(row));
        case FullTextRole:
            return m_identities.at(row);
        case ScopeIndexRole:
            return -1;
        default:
            return {};
        }
    }
    const int scope = scopeIndexAt(row, column);
    const size_t cell = static_cast<size_t>(row) * m_limits.size() + (column - 1);
    switch (role) {
    case Qt::DisplayRole:
        if (scope < 0)
            return QString();
        return QString(QString::number(m_cellFill[cell] * 100.0, 'f', 0) + QStringLiteral(" %"));
    case Qt::ToolTipRole:
        return scope < 0 ? QVariant() : QVariant(tooltip(scope));
    case Qt::TextAlignmentRole:
        return int(Qt::AlignCenter);
    case FillRole:
        return scope < 0 ? QVariant() : QVariant(m_cellFill[cell]);
    case ScopeIndexRole:
        return scope;
    case UsageRole:
        return scope < 0 ? QVariant() : QVariant(m_cellUsage[cell]);
    case CapacityRole:
        return scope < 0 ? QVariant() : QVariant(m_snapshot->report.scopes.at(scope).capacity);
    case SortRole:
        return scope < 0 ? -1.0 : m_cellFill[cell];
    default:
        return {};
    }
}

QVariant BucketGridModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || (role != Qt::DisplayRole && role != Qt::ToolTipRole))
        return QAbstractTableModel::headerData(section, orientation, role);
    if (section == 0)
        return tr("Identity");
    return m_limits.value(section - 1);
}

QString BucketGridModel::tooltip(int scopeIndex) const
{
    const ScopeSummary &scope = m_snapshot->report.scopes.at(scopeIndex);
    const size_t cellCount = m_cellScope.size();
    double usage = scope.currentUsage;
    double fill = scope.currentFill;
    for (size_t i = 0; i < cellCount; ++i) {
        if (m_cellScope[i] == scopeIndex) {
            usage = m_cellUsage[i];
            fill = m_cellFill[i];
            break;
        }
    }
    QString text = nameTooltip(scope.key) + QStringLiteral(" · ") + limitLabel(scope) + u'\n';
    text += tr("Algorithm: %1 (policy %2)").arg(scope.algorithm, scope.policy) + u'\n';
    if (scope.windowSeconds > 0)
        text += tr("Capacity: %1 per %2 s").arg(scope.capacity).arg(scope.windowSeconds) + u'\n';
    else
        text += tr("Capacity: %1").arg(scope.capacity) + u'\n';
    const int index = scopeIndex;
    const double accepted =
        m_instant && static_cast<size_t>(index) < m_snapshot->series.size()
            ? acceptedUsageAt(m_snapshot->series[static_cast<size_t>(index)], *m_instant)
            : scope.currentAcceptedUsage;
    text += tr("Usage as the limiter counts%1: %2 (%3 %), accepted %4")
                .arg(m_instant ? tr(" at %1").arg(formatDisplayTime(*m_instant)) : QString())
                .arg(usage)
                .arg(QString::number(fill * 100.0, 'f', 1))
                .arg(accepted) +
            u'\n';
    if (const QString over = overCapacityExplanation(scope, usage, accepted); !over.isEmpty())
        text += over + u'\n';
    text += tr("Peak: %1 (%2 %), accepted %3 (%4 %)")
                .arg(scope.peakUsage)
                .arg(QString::number(scope.peakFill * 100.0, 'f', 1))
                .arg(scope.acceptedPeakUsage)
                .arg(QString::number(scope.acceptedPeakFill * 100.0, 'f', 1)) +
            u'\n';
    if (scope.effectiveLimit)
        text += tr("Effective limit (from observed 429s): %1").arg(*scope.effectiveLimit) + u'\n';
    text += tr("Throttled: %1 observed, %2 predicted")
                .arg(scope.observedThrottled)
                .arg(scope.predictedThrottled) +
            u'\n';
    const SafeSend safe = safeSend(*m_snapshot, index, m_instant);
    const auto from = referenceInstant(*m_snapshot, m_instant);
    if (safe.atMs && from && *safe.atMs > *from)
        text += tr("Next safe send: in %1 (%2), at %3")
                    .arg(formatCountdown(*safe.atMs - *from), safeSendReason(safe),
                         formatDisplayTime(*safe.atMs));
    else
        text += tr("Next safe send: now (not exhausted)");
    return text;
}

} // namespace ts::models
