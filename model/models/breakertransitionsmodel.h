#pragma once
// Breaker transitions of the latest snapshot (logged and reconstructed), one row each.

#include "engine/reportdata.h"

#include <QAbstractTableModel>

namespace ts::models {

class BreakerTransitionsModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { TimeColumn, ScopeColumn, SourceColumn, FromColumn, ToColumn, ColumnCount };
    enum Role { TimeMsRole = Qt::UserRole + 1, SortRole };

    explicit BreakerTransitionsModel(QObject *parent = nullptr);

    void setTransitions(const QList<BreakerTransition> &transitions);
    [[nodiscard]] const BreakerTransition &transitionAt(int row) const
    {
        return m_transitions.at(row);
    }

    [[nodiscard]] int rowCount(const QModelIndex &parent = {}) const override;
    [[nodiscard]] int columnCount(const QModelIndex &parent = {}) const override;
    [[nodiscard]] QVariant data(const QModelIndex &index, int role) const override;
    [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                      int role) const override;

private:
    QList<BreakerTransition> m_transitions;
};

} // namespace ts::models
