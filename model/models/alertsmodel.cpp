#include "alertsmodel.h"

#include "core/timeparse.h"

namespace ts::models {

namespace {
bool sameAlert(const Alert &a, const Alert &b)
{
    return a.atMs == b.atMs && a.kind == b.kind && a.key == b.key && a.severity == b.severity &&
           a.detail == b.detail;
}
} // namespace

AlertsModel::AlertsModel(QObject *parent) : QAbstractTableModel(parent) {}

int AlertsModel::severityRank(const QString &severity)
{
    if (severity == u"critical")
        return 2;
    if (severity == u"warning")
        return 1;
    return 0;
}

void AlertsModel::setAlerts(const QList<Alert> &alerts)
{
    const qsizetype oldCount = m_alerts.size();
    bool extends = alerts.size() >= oldCount;
    // Comparing the last common alert is enough: lists are produced append-only; a differing
    // tail (a re-run, another policy) falls back to a reset.
    if (extends && oldCount > 0)
        extends = sameAlert(alerts.at(oldCount - 1), m_alerts.at(oldCount - 1)) &&
                  sameAlert(alerts.at(0), m_alerts.at(0));
    if (extends) {
        if (alerts.size() == oldCount)
            return;
        beginInsertRows({}, static_cast<int>(oldCount), static_cast<int>(alerts.size() - 1));
        m_alerts = alerts;
        endInsertRows();
        return;
    }
    beginResetModel();
    m_alerts = alerts;
    endResetModel();
}

int AlertsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_alerts.size());
}

int AlertsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AlertsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const Alert &alert = m_alerts.at(index.row());
    if (role == TimeMsRole)
        return alert.atMs;
    if (role == SeverityRankRole)
        return severityRank(alert.severity);
    if (role == Qt::DisplayRole || role == Qt::ToolTipRole || role == SortRole) {
        switch (index.column()) {
        case TimeColumn:
            if (role == SortRole)
                return alert.atMs;
            return formatIsoMs(alert.atMs);
        case SeverityColumn:
            if (role == SortRole)
                return severityRank(alert.severity);
            return alert.severity;
        case KindColumn:
            return alert.kind;
        case KeyColumn:
            return alert.key;
        case DetailColumn:
            return alert.detail;
        default:
            return {};
        }
    }
    return {};
}

QVariant AlertsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case TimeColumn:
        return tr("Time (UTC)");
    case SeverityColumn:
        return tr("Severity");
    case KindColumn:
        return tr("Kind");
    case KeyColumn:
        return tr("Key");
    case DetailColumn:
        return tr("Detail");
    default:
        return {};
    }
}

} // namespace ts::models
