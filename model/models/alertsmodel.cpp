#include "alertsmodel.h"

#include "core/timeparse.h"
#include "displaynames.h"

#include <algorithm>
#include <tuple>

namespace ts::models {

namespace {
bool sameAlert(const Alert &a, const Alert &b)
{
    return a.atMs == b.atMs && a.kind == b.kind && a.key == b.key && a.severity == b.severity &&
           a.detail == b.detail;
}

QString alertId(const Alert &alert)
{
    return AlertsModel::groupKey(alert.kind, alert.key) + QChar(0x1f) + alert.severity +
           QChar(0x1f) + QString::number(alert.atMs) + QChar(0x1f) + alert.detail;
}

// Folds one alert into its group (the list is in time order, but ties and late-dated alerts
// make no assumption about it).
void fold(AlertGroup &group, const Alert &alert)
{
    if (group.count == 0) {
        group.kind = alert.kind;
        group.key = alert.key;
        group.severity = alert.severity;
        group.firstMs = alert.atMs;
        group.lastMs = alert.atMs;
        group.detail = alert.detail;
    } else {
        if (AlertsModel::severityRank(alert.severity) > AlertsModel::severityRank(group.severity))
            group.severity = alert.severity;
        group.firstMs = std::min(group.firstMs, alert.atMs);
        if (alert.atMs >= group.lastMs) {
            group.lastMs = alert.atMs;
            group.detail = alert.detail;
        }
    }
    ++group.count;
}

bool sameGroup(const AlertGroup &a, const AlertGroup &b)
{
    return a.count == b.count && a.firstMs == b.firstMs && a.lastMs == b.lastMs &&
           a.severity == b.severity && a.detail == b.detail;
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

int AlertsModel::kindRank(const QString &kind)
{
    if (kind == u"lost-work")
        return 5;
    if (kind == u"retry-storm")
        return 4;
    if (kind == u"retry-after-ignored")
        return 3;
    if (kind == u"capacity")
        return 2;
    if (kind == u"lane-starvation")
        return 1;
    return 0; // near-limit and kinds added later
}

qsizetype AlertsModel::mostSevere(const QList<Alert> &alerts)
{
    qsizetype best = -1;
    for (qsizetype i = 0; i < alerts.size(); ++i) {
        if (best < 0) {
            best = i;
            continue;
        }
        const Alert &a = alerts.at(i);
        const Alert &b = alerts.at(best);
        const auto rankA = std::tuple(severityRank(a.severity), kindRank(a.kind), a.atMs);
        const auto rankB = std::tuple(severityRank(b.severity), kindRank(b.kind), b.atMs);
        if (rankA > rankB)
            best = i;
    }
    return best;
}

QString AlertsModel::groupKey(const QString &kind, const QString &key)
{
    return kind + QChar(0x1f) + key;
}

int AlertsModel::rowOfGroup(const QString &groupKey) const
{
    return m_rowOf.value(groupKey, -1);
}

void AlertsModel::setAlerts(const QList<Alert> &alerts)
{
    if (alerts.size() == m_alerts.size()) {
        bool same = true;
        for (qsizetype i = alerts.size() - 1; same && i >= 0; --i)
            same = sameAlert(alerts.at(i), m_alerts.at(i));
        if (same)
            return;
    }

    // The alerts that are new: not in the previous list.
    QList<Alert> added;
    if (m_alerts.isEmpty()) {
        added = alerts;
    } else {
        QSet<QString> previous;
        previous.reserve(m_alerts.size());
        for (const Alert &alert : std::as_const(m_alerts))
            previous.insert(alertId(alert));
        for (const Alert &alert : alerts) {
            if (!previous.contains(alertId(alert)))
                added.append(alert);
        }
    }

    // Regroup the whole list: groups keep the row they have; new ones go at the end in the
    // order they first appear.
    std::vector<AlertGroup> groups(m_groups.size());
    QHash<QString, int> rowOf = m_rowOf;
    std::vector<AlertGroup> appended;
    for (const Alert &alert : alerts) {
        const QString key = groupKey(alert.kind, alert.key);
        auto it = rowOf.constFind(key);
        int row;
        if (it == rowOf.cend()) {
            row = static_cast<int>(groups.size() + appended.size());
            rowOf.insert(key, row);
            appended.emplace_back();
        } else {
            row = it.value();
        }
        fold(row < int(groups.size()) ? groups[size_t(row)]
                                       : appended[size_t(row) - groups.size()],
             alert);
    }
    const bool lostGroup = std::any_of(groups.begin(), groups.end(),
                                       [](const AlertGroup &group) { return group.count == 0; });
    if (lostGroup) {
        // A group vanished (another policy, a re-run): the rows mean something else now.
        beginResetModel();
        m_alerts = alerts;
        m_groups.clear();
        m_rowOf.clear();
        for (const Alert &alert : alerts) {
            const QString key = groupKey(alert.kind, alert.key);
            auto it = m_rowOf.constFind(key);
            if (it == m_rowOf.cend()) {
                m_rowOf.insert(key, static_cast<int>(m_groups.size()));
                m_groups.emplace_back();
                fold(m_groups.back(), alert);
            } else {
                fold(m_groups[size_t(it.value())], alert);
            }
        }
        m_keyNames.clear();
        updateKeyNames(); // all rows new: nothing to notify
        endResetModel();
        if (!added.isEmpty())
            Q_EMIT alertsAdded(added);
        return;
    }

    m_alerts = alerts;
    // Changed rows: one dataChanged over the span they cover (few rows change per update).
    int firstChanged = -1;
    int lastChanged = -1;
    for (size_t row = 0; row < groups.size(); ++row) {
        if (!sameGroup(groups[row], m_groups[row])) {
            if (firstChanged < 0)
                firstChanged = int(row);
            lastChanged = int(row);
        }
    }
    m_groups = std::move(groups);
    if (firstChanged >= 0)
        Q_EMIT dataChanged(index(firstChanged, 0), index(lastChanged, ColumnCount - 1));
    if (!appended.empty()) {
        const int first = static_cast<int>(m_groups.size());
        beginInsertRows({}, first, first + static_cast<int>(appended.size()) - 1);
        for (AlertGroup &group : appended)
            m_groups.push_back(std::move(group));
        m_rowOf = std::move(rowOf);
        // The new rows' names now; older rows whose name became ambiguous after the insert.
        QStringList keys;
        for (const AlertGroup &group : m_groups)
            keys.append(group.key);
        m_keyNames.append(shortNames(keys).mid(m_keyNames.size()));
        endInsertRows();
        updateKeyNames();
    }
    if (!added.isEmpty())
        Q_EMIT alertsAdded(added);
}

void AlertsModel::updateKeyNames()
{
    QStringList keys;
    keys.reserve(qsizetype(m_groups.size()));
    for (const AlertGroup &group : m_groups)
        keys.append(group.key);
    const QStringList names = shortNames(keys);
    // Rows that were there and now read differently (a new group made their name ambiguous).
    const int shared = static_cast<int>(std::min(names.size(), m_keyNames.size()));
    int first = -1;
    int last = -1;
    for (int row = 0; row < shared; ++row) {
        if (names.at(row) != m_keyNames.at(row)) {
            if (first < 0)
                first = row;
            last = row;
        }
    }
    m_keyNames = names; // also the rows past `shared`, which nobody has seen yet
    if (first >= 0)
        Q_EMIT dataChanged(index(first, KeyColumn), index(last, KeyColumn));
}

int AlertsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_groups.size());
}

int AlertsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AlertsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const AlertGroup &group = m_groups.at(size_t(index.row()));
    switch (role) {
    case TimeMsRole:
        return group.lastMs;
    case FirstMsRole:
        return group.firstMs;
    case CountRole:
        return group.count;
    case SeverityRankRole:
        return severityRank(group.severity);
    case GroupKeyRole:
        return groupKey(group.kind, group.key);
    case FullTextRole:
        if (index.column() == KeyColumn)
            return group.key;
        return {};
    case Qt::TextAlignmentRole:
        if (index.column() == CountColumn)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    default:
        break;
    }
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole && role != SortRole)
        return {};
    switch (index.column()) {
    case TimeColumn:
        if (role == SortRole)
            return group.lastMs;
        return formatDisplayTime(group.lastMs);
    case SeverityColumn:
        if (role == SortRole)
            return severityRank(group.severity);
        return group.severity;
    case KindColumn:
        return group.kind;
    case KeyColumn:
        if (role == Qt::ToolTipRole)
            return nameTooltip(group.key);
        return m_keyNames.value(index.row());
    case CountColumn:
        if (role == SortRole)
            return group.count;
        if (role == Qt::ToolTipRole)
            return tr("%n alert(s) of this kind for this key", nullptr, group.count);
        return QString::number(group.count);
    case FirstColumn:
        if (role == SortRole)
            return group.firstMs;
        return formatDisplayTime(group.firstMs);
    case DetailColumn:
        return group.detail;
    default:
        return {};
    }
}

QVariant AlertsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case TimeColumn:
        return timeHeader(tr("Last"));
    case SeverityColumn:
        return tr("Severity");
    case KindColumn:
        return tr("Kind");
    case KeyColumn:
        return tr("Key");
    case CountColumn:
        return tr("Count");
    case FirstColumn:
        return timeHeader(tr("First"));
    case DetailColumn:
        return tr("Detail");
    default:
        return {};
    }
}

} // namespace ts::models
