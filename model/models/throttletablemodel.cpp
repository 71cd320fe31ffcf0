#include "throttletablemodel.h"

#include "displaynames.h"

namespace ts::models {

ThrottleTableModel::ThrottleTableModel(QObject *parent) : QAbstractTableModel(parent) {}

void ThrottleTableModel::setThrottles(const ThrottleSummary &throttles)
{
    const QStringList identities = throttles.byIdentityAndErrorCode.keys(); // QMap: sorted
    QStringList codes;
    for (const auto &perCode : throttles.byIdentityAndErrorCode) {
        for (auto it = perCode.cbegin(); it != perCode.cend(); ++it) {
            if (!codes.contains(it.key()))
                codes.append(it.key());
        }
    }
    codes.sort();
    const qsizetype stride = codes.size() + 1;
    std::vector<qint64> counts(static_cast<size_t>(identities.size() * stride), 0);
    for (qsizetype row = 0; row < identities.size(); ++row) {
        const auto perCode = throttles.byIdentityAndErrorCode.value(identities.at(row));
        qint64 total = 0;
        for (qsizetype c = 0; c < codes.size(); ++c) {
            const qint64 count = perCode.value(codes.at(c));
            counts[static_cast<size_t>(row * stride + c)] = count;
            total += count;
        }
        counts[static_cast<size_t>(row * stride + codes.size())] = total;
    }

    if (identities != m_identities || codes != m_codes) {
        beginResetModel();
        m_identityNames = shortNames(identities);
        m_identities = identities;
        m_codes = codes;
        m_counts = std::move(counts);
        endResetModel();
        return;
    }
    if (counts == m_counts)
        return;
    m_counts = std::move(counts);
    Q_EMIT dataChanged(index(0, 1), index(rowCount() - 1, columnCount() - 1),
                       {Qt::DisplayRole, SortRole, CountRole});
}

qint64 ThrottleTableModel::countAt(int row, int column) const
{
    if (row < 0 || row >= m_identities.size() || column < 1 || column > m_codes.size() + 1)
        return 0;
    return m_counts[static_cast<size_t>(row * (m_codes.size() + 1) + column - 1)];
}

int ThrottleTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_identities.size());
}

int ThrottleTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_codes.size()) + 2;
}

QVariant ThrottleTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    if (index.column() == 0) {
        if (role == Qt::DisplayRole || role == SortRole)
            return m_identityNames.at(index.row());
        if (role == Qt::ToolTipRole)
            return nameTooltip(m_identities.at(index.row()));
        if (role == FullTextRole)
            return m_identities.at(index.row());
        return {};
    }
    const qint64 count = countAt(index.row(), index.column());
    switch (role) {
    case Qt::DisplayRole:
        return count == 0 ? QString() : QString::number(count);
    case SortRole:
    case CountRole:
        return count;
    case Qt::TextAlignmentRole:
        return int(Qt::AlignRight | Qt::AlignVCenter);
    default:
        return {};
    }
}

QVariant ThrottleTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (section == 0)
        return tr("Identity");
    if (section == m_codes.size() + 1)
        return tr("Total");
    return orUnknown(m_codes.value(section - 1)); // a 429 without a code: "unknown"
}

} // namespace ts::models
