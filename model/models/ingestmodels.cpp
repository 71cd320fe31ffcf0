#include "ingestmodels.h"

#include "core/timeparse.h"
#include "ingest/feedhealth.h"
#include "snapshotmath.h"

#include <QDateTime>

namespace ts::models {

IngestSourcesModel::IngestSourcesModel(QObject *parent)
    : QAbstractTableModel(parent), m_nowMs(QDateTime::currentMSecsSinceEpoch()),
      m_staleAfterMs(qint64(kDefaultStaleAfterSeconds) * 1000)
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
    // Silence, the decayed rate and staleness (the whole row's colour) all follow the clock.
    if (!m_sources.isEmpty())
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

void IngestSourcesModel::setStaleAfterMs(qint64 ms)
{
    if (ms == m_staleAfterMs)
        return;
    m_staleAfterMs = ms;
    if (!m_sources.isEmpty())
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

QStringList IngestSourcesModel::staleFeeds() const
{
    QStringList stale;
    for (const IngestSourceStatus &source : m_sources) {
        if (!isFeedStale(source, m_nowMs, m_staleAfterMs))
            continue;
        const QString silence = formatDuration(*feedSilenceMs(source, m_nowMs));
        stale.append(source.lastEventReceivedMs
                         ? tr("%1 (last event %2 ago)").arg(source.path, silence)
                         : tr("%1 (no event in %2)").arg(source.path, silence));
    }
    return stale;
}

QString IngestSourcesModel::silenceText(const IngestSourceStatus &source, qint64 nowMs)
{
    if (!source.lastEventReceivedMs) {
        if (const auto silence = feedSilenceMs(source, nowMs))
            return tr("never (listening for %1)").arg(formatDuration(*silence));
        return tr("never");
    }
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
    const bool stale = isFeedStale(source, m_nowMs, m_staleAfterMs);
    if (role == StaleRole)
        return stale;
    if (role == Qt::ToolTipRole && index.column() == ErrorsColumn)
        return tr("%1 malformed records, %2 refused requests%3")
            .arg(source.errors)
            .arg(source.rejectedRequests)
            .arg(source.lastError.isEmpty() ? QString() : QStringLiteral("\n") + source.lastError);
    if (role == Qt::ToolTipRole && index.column() == StateColumn && stale)
        return tr("No event for %1 (the stale threshold is %2). No events is not the same as no "
                  "traffic: check the sender.")
            .arg(formatDuration(*feedSilenceMs(source, m_nowMs)), formatDuration(m_staleAfterMs));
    if (role == SilenceSecondsRole) {
        if (!source.lastEventReceivedMs)
            return {};
        return (m_nowMs - *source.lastEventReceivedMs) / 1000;
    }
    if (role == Qt::ToolTipRole && index.column() == LagColumn)
        return tr("Arrival time minus the event's own timestamp");
    if (role == Qt::ToolTipRole && index.column() == LateColumn)
        return tr("Events that arrived after a later one had been analysed, past the reorder "
                  "window (View > Preferences, --reorder-window): charged at the latest instant");
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
        return tr("%1/s").arg(QString::number(feedRateNow(source, m_nowMs), 'f', 1));
    case LastEventColumn:
        return silenceText(source, m_nowMs);
    case ErrorsColumn:
        return source.errors + source.rejectedRequests;
    case LagColumn:
        return source.lagMs ? formatDuration(std::max<qint64>(0, *source.lagMs)) : QString();
    case LateColumn:
        return source.lateEvents;
    case StateColumn:
        if (stale)
            return tr("stale");
        if (source.followed)
            return tr("following");
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
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && section == EventsColumn)
        return tr("Requests, as the report counts them: an event of weight n (a store's count "
                  "per second) is n requests; annotations and $batch envelopes are none");
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
        return tr("Errors");
    case LagColumn:
        return tr("Lag");
    case LateColumn:
        return tr("Late");
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
