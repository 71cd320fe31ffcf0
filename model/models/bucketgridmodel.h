#pragma once
// The bucket fill grid of the overview: identities (rows) x limits (columns), each cell the fill
// of one (limit, key) bucket. Column 0 names the identity. Updated in batches from snapshots:
// a reset only when the set of identities or limits changes, dataChanged for new values, so the
// view keeps its selection, sort and scroll position while live.
//
// No colours here (Qt Core only): the delegate in widgets/ paints FillRole with theme colours.

#include "engine/reportdata.h"

#include <QAbstractTableModel>
#include <QStringList>

#include <memory>
#include <optional>
#include <vector>

namespace ts::models {

class BucketGridModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Role {
        FillRole = Qt::UserRole + 1, // double, or invalid when the cell has no bucket
        ScopeIndexRole,              // int index into report.scopes, -1 = none
        UsageRole,                   // double
        CapacityRole,                // double
        SortRole,                    // identity (column 0) or fill (-1 for an empty cell)
    };

    explicit BucketGridModel(QObject *parent = nullptr);

    void setSnapshot(std::shared_ptr<const DashboardSnapshot> snapshot);
    // Replay: fills at this instant (usage step function / capacity); nullopt = latest.
    void setInstant(std::optional<qint64> instantMs);
    [[nodiscard]] std::optional<qint64> instant() const { return m_instant; }

    [[nodiscard]] int rowCount(const QModelIndex &parent = {}) const override;
    [[nodiscard]] int columnCount(const QModelIndex &parent = {}) const override;
    [[nodiscard]] QVariant data(const QModelIndex &index, int role) const override;
    [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                      int role) const override;

    [[nodiscard]] int scopeIndexAt(int row, int column) const;
    [[nodiscard]] QString identityAt(int row) const { return m_identities.value(row); }
    [[nodiscard]] QString limitAt(int column) const { return m_limits.value(column - 1); }
    [[nodiscard]] double fillAt(int row, int column) const;

private:
    void recomputeValues(bool notify);
    [[nodiscard]] QString tooltip(int scopeIndex) const;

    std::shared_ptr<const DashboardSnapshot> m_snapshot;
    std::optional<qint64> m_instant;
    QStringList m_identities;     // row order: the order the snapshot first names them, sorted
    QStringList m_identityNames;  // the same, as shown (models/displaynames.h)
    QStringList m_limits;         // "service/limit", sorted
    std::vector<int> m_cellScope; // rows x limits, scope index or -1
    std::vector<double> m_cellFill;
    std::vector<double> m_cellUsage;
};

} // namespace ts::models
