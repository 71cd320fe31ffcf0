#include "breakertransitionsmodel.h"

#include "core/timeparse.h"
#include "displaynames.h"

namespace ts::models {

BreakerTransitionsModel::BreakerTransitionsModel(QObject *parent) : QAbstractTableModel(parent) {}

void BreakerTransitionsModel::setTransitions(const QList<BreakerTransition> &transitions)
{
    const qsizetype oldCount = m_transitions.size();
    const bool extends =
        transitions.size() > oldCount &&
        (oldCount == 0 ||
         (transitions.at(oldCount - 1).tsMs == m_transitions.at(oldCount - 1).tsMs &&
          transitions.at(oldCount - 1).scope == m_transitions.at(oldCount - 1).scope));
    if (transitions.size() == oldCount && oldCount > 0 &&
        transitions.constLast().tsMs == m_transitions.constLast().tsMs)
        return;
    if (extends) {
        beginInsertRows({}, static_cast<int>(oldCount), static_cast<int>(transitions.size() - 1));
        m_transitions = transitions;
        endInsertRows();
        return;
    }
    beginResetModel();
    m_transitions = transitions;
    endResetModel();
}

int BreakerTransitionsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_transitions.size());
}

int BreakerTransitionsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant BreakerTransitionsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const BreakerTransition &transition = m_transitions.at(index.row());
    if (role == TimeMsRole)
        return transition.tsMs;
    if (role == Qt::ToolTipRole && index.column() == ScopeColumn)
        return transition.scope;
    if (role == FullTextRole && index.column() == ScopeColumn)
        return transition.scope;
    if (role != Qt::DisplayRole && role != SortRole)
        return {};
    switch (index.column()) {
    case TimeColumn:
        return role == SortRole ? QVariant(transition.tsMs)
                                : QVariant(formatDisplayTime(transition.tsMs));
    case ScopeColumn:
        return shortScope(transition.scope);
    case SourceColumn:
        return transition.source;
    case FromColumn:
        return transition.from;
    case ToColumn:
        return transition.to;
    case ReasonColumn:
        return transition.reason;
    default:
        return {};
    }
}

QVariant BreakerTransitionsModel::headerData(int section, Qt::Orientation orientation,
                                             int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case TimeColumn:
        return timeHeader(tr("Time"));
    case ScopeColumn:
        return tr("Scope");
    case SourceColumn:
        return tr("Source");
    case FromColumn:
        return tr("From");
    case ToColumn:
        return tr("To");
    case ReasonColumn:
        return tr("Why");
    default:
        return {};
    }
}

} // namespace ts::models
