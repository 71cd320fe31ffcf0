#pragma once
// The alerts of the latest snapshot as a table, grouped: repeats of the same kind and key (a
// bucket near its limit again and again) are one row with a count and the first and last time,
// the most severe severity and the latest detail. Columns: last time, severity, kind, key,
// count, first time, detail.
//
// Alerts only grow while the engine runs, but not strictly at the end (the detector sorts them by
// time, and a retry storm is dated from its start). So each snapshot's list is regrouped and
// compared with the rows shown: a new group is an inserted row, a grown group a dataChanged, and
// only a group that disappeared (a re-run with another policy) resets the model. Views keep
// their selection across refreshes. alertsAdded() names exactly the alerts that are new.

#include "engine/reportdata.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QSet>

#include <vector>

namespace ts::models {

struct AlertGroup
{
    QString kind;
    QString key;
    QString severity; // the most severe of its alerts
    qint64 firstMs = 0;
    qint64 lastMs = 0;
    int count = 0;
    QString detail; // the latest alert's
};

class AlertsModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column {
        TimeColumn, // the last occurrence
        SeverityColumn,
        KindColumn,
        KeyColumn,
        CountColumn,
        FirstColumn,
        DetailColumn,
        ColumnCount
    };
    enum Role {
        TimeMsRole = Qt::UserRole + 1, // qint64, the last occurrence
        SeverityRankRole,              // 2 critical, 1 warning, 0 info
        SortRole,
        FirstMsRole,   // qint64
        CountRole,     // int
        GroupKeyRole,  // QString: kind and key, stable across refreshes
    };

    explicit AlertsModel(QObject *parent = nullptr);

    void setAlerts(const QList<Alert> &alerts);
    [[nodiscard]] const AlertGroup &groupAt(int row) const { return m_groups.at(size_t(row)); }
    // Every alert, ungrouped, as the snapshot has them.
    [[nodiscard]] const QList<Alert> &alerts() const { return m_alerts; }
    // The row of this group (GroupKeyRole), -1 when there is none.
    [[nodiscard]] int rowOfGroup(const QString &groupKey) const;

    [[nodiscard]] int rowCount(const QModelIndex &parent = {}) const override;
    [[nodiscard]] int columnCount(const QModelIndex &parent = {}) const override;
    [[nodiscard]] QVariant data(const QModelIndex &index, int role) const override;
    [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                      int role) const override;

    static int severityRank(const QString &severity);
    // How much an alert of this kind matters within one severity: work lost outranks a storm,
    // a storm outranks advice (retry-after-ignored, capacity, lanes), near-limit comes last.
    static int kindRank(const QString &kind);
    // The alert to name when only one can be named (a tray balloon, the banner): the most
    // severe, then the most serious kind, then the newest. -1 for an empty list.
    static qsizetype mostSevere(const QList<Alert> &alerts);
    static QString groupKey(const QString &kind, const QString &key);

Q_SIGNALS:
    // The alerts of this update that were not in the previous list (all of them the first time).
    void alertsAdded(const QList<ts::Alert> &alerts);

private:
    // Short keys for the Key column, over all groups at once so that one user seen through an
    // application and without it reads differently (models/displaynames.h shortNames()).
    void updateKeyNames();

    QList<Alert> m_alerts;
    QStringList m_keyNames;           // per row
    std::vector<AlertGroup> m_groups; // row order: first seen
    QHash<QString, int> m_rowOf;      // groupKey -> row
};

} // namespace ts::models
