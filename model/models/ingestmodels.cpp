#include "ingestmodels.h"

#include "core/timeparse.h"
#include "snapshotmath.h"

#include <QDateTime>

namespace ts::models {

IngestSourcesModel::IngestSourcesModel(QObject *parent)
    : QAbstractTableModel(parent), m_nowMs(QDateTime::currentMSecsSinceEpoch())
{
}

void IngestSourcesModel::setSources(const QList<IngestSourceStatus> &sources)
{
    bool sameShape = sources.size() == m_sources.size();
    for (qsizetype i = 0; sameShape && i < sources.size(); ++i)
        sameShape = sources.at(i).path == m_sources.at(i).path;
    if (!sameShape) {
        beginResetModel();
        m_sources = sources;
        endResetModel();
        return;
    }
    m_sources = sources;
    if (!m_sources.isEmpty())
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

void IngestSourcesModel::setNow(qint64 nowMs)
{
    m_nowMs = nowMs;
    if (!m_sources.isEmpty())
        Q_EMIT dataChanged(index(0, LastEventColumn), index(rowCount() - 1, LastEventColumn));
}

QString IngestSourcesModel::silenceText(const IngestSourceStatus &source, qint64 nowMs)
{
    if (!source.lastEventReceivedMs)
        return tr("never");
    return tr("%1 ago").arg(formatDuration(nowMs - *source.lastEventReceivedMs));
}

int IngestSourcesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_sources.size());
}

int IngestSourcesModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant IngestSourcesModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const IngestSourceStatus &source = m_sources.at(index.row());
    if (role == SilenceSecondsRole) {
        if (!source.lastEventReceivedMs)
            return {};
        return (m_nowMs - *source.lastEventReceivedMs) / 1000;
    }
    if (role == Qt::ToolTipRole && index.column() == LastEventColumn && source.lastEventTsMs)
        return tr("Last event's own timestamp: %1").arg(formatIsoMs(*source.lastEventTsMs));
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    switch (index.column()) {
    case PathColumn:
        return source.path;
    case FormatColumn:
        return source.format;
    case EventsColumn:
        return source.events;
    case RateColumn:
        return tr("%1/s").arg(QString::number(source.eventsPerSecond, 'f', 1));
    case LastEventColumn:
        return silenceText(source, m_nowMs);
    case ErrorsColumn:
        return source.errors;
    case StateColumn:
        if (source.finished)
            return tr("finished");
        if (source.lastPollMs) {
            // A polled store: its own requests, like any other feed's health.
            const QString polled = tr("polled %1 ago, %n request(s)", nullptr, int(source.requests))
                                       .arg(formatDuration(m_nowMs - *source.lastPollMs));
            return source.lastError.isEmpty() ? polled : polled + u" — "_qs + source.lastError;
        }
        return source.live ? tr("live") : tr("reading");
    default:
        return {};
    }
}

QVariant IngestSourcesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case PathColumn:
        return tr("Source");
    case FormatColumn:
        return tr("Format");
    case EventsColumn:
        return tr("Events");
    case RateColumn:
        return tr("Rate");
    case LastEventColumn:
        return tr("Last event");
    case ErrorsColumn:
        return tr("Malformed");
    case StateColumn:
        return tr("State");
    default:
        return {};
    }
}

MalformedRecordsModel::MalformedRecordsModel(QObject *parent) : QAbstractTableModel(parent) {}

void MalformedRecordsModel::setRecords(const QList<MalformedRecord> &records)
{
    beginResetModel();
    m_records = records;
    endResetModel();
}

int MalformedRecordsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_records.size());
}

int MalformedRecordsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant MalformedRecordsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    const MalformedRecord &record = m_records.at(index.row());
    if (index.column() == LocationColumn)
        return QString(record.source + u':' + QString::number(record.line));
    return record.reason;
}

QVariant MalformedRecordsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    return section == LocationColumn ? tr("File:line") : tr("Reason");
}

} // namespace ts::models
