#pragma once
// Throttles per identity (rows) and error code (columns), with a total column, from
// ThrottleSummary::byIdentityAndErrorCode. Value updates keep the shape; new identities or codes
// reset.

#include "engine/reportdata.h"

#include <QAbstractTableModel>
#include <QStringList>

#include <vector>

namespace ts::models {

class ThrottleTableModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Role { SortRole = Qt::UserRole + 1, CountRole };

    explicit ThrottleTableModel(QObject *parent = nullptr);

    void setThrottles(const ThrottleSummary &throttles);
    // Column 0 is the identity, then one column per code, then the total.
    [[nodiscard]] QString errorCodeAt(int column) const { return m_codes.value(column - 1); }
    [[nodiscard]] QString identityAt(int row) const { return m_identities.value(row); }
    [[nodiscard]] qint64 countAt(int row, int column) const;

    [[nodiscard]] int rowCount(const QModelIndex &parent = {}) const override;
    [[nodiscard]] int columnCount(const QModelIndex &parent = {}) const override;
    [[nodiscard]] QVariant data(const QModelIndex &index, int role) const override;
    [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                      int role) const override;

private:
    QStringList m_identities;
    QStringList m_identityNames; // as shown (models/displaynames.h); m_identities in full
    QStringList m_codes;
    std::vector<qint64> m_counts; // rows x (codes + 1 total)
};

} // namespace ts::models
