#pragma once
// The alerts of the latest snapshot as a table (time, severity, kind, key, detail). Alerts only
// grow while the engine runs, so a snapshot whose list extends the current one inserts rows
// (the view keeps its selection and the dashboard can notify about exactly the new ones);
// anything else resets.

#include "engine/reportdata.h"

#include <QAbstractTableModel>

namespace ts::models {

class AlertsModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { TimeColumn, SeverityColumn, KindColumn, KeyColumn, DetailColumn, ColumnCount };
    enum Role {
        TimeMsRole = Qt::UserRole + 1, // qint64
        SeverityRankRole,              // 2 critical, 1 warning, 0 info
        SortRole,
    };

    explicit AlertsModel(QObject *parent = nullptr);

    void setAlerts(const QList<Alert> &alerts);
    [[nodiscard]] const Alert &alertAt(int row) const { return m_alerts.at(row); }
    [[nodiscard]] const QList<Alert> &alerts() const { return m_alerts; }

    [[nodiscard]] int rowCount(const QModelIndex &parent = {}) const override;
    [[nodiscard]] int columnCount(const QModelIndex &parent = {}) const override;
    [[nodiscard]] QVariant data(const QModelIndex &index, int role) const override;
    [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                      int role) const override;

    static int severityRank(const QString &severity);

private:
    QList<Alert> m_alerts;
};

} // namespace ts::models
