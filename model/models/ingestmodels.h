#pragma once
// The ingest panel's tables: one row per source (format, events as the report counts them, rate,
// "last event Ns ago", errors) and one row per malformed record (source:line, reason).

#include "ingest/ingeststatus.h"

#include <QAbstractTableModel>

namespace ts::models {

class IngestSourcesModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column {
        PathColumn,
        FormatColumn,
        EventsColumn,
        RateColumn,
        LastEventColumn,
        ErrorsColumn,
        LagColumn,
        LateColumn, // events past the live reorder window (issue 30.4)
        StateColumn,
        ColumnCount
    };
    // Seconds since the last event arrived (qint64), or invalid when none arrived yet.
    // Seconds since the last event arrived (qint64), or invalid when none arrived yet.
    // StaleRole: bool, a running live feed silent past the stale threshold (feedhealth.h).
    enum Role { SilenceSecondsRole = Qt::UserRole + 1, StaleRole };

    explicit IngestSourcesModel(QObject *parent = nullptr);

    void setSources(const QList<IngestSourceStatus> &sources);
    // Wall clock used for "Ns ago"; the panel ticks it every second so a silent feed shows its
    // growing silence even when no status arrives at all.
    void setNow(qint64 nowMs);
    // How long a live feed may stay silent before it is marked stale (row colour, "stale" in
    // the State column); <= 0: never.
    void setStaleAfterMs(qint64 ms);
    [[nodiscard]] qint64 staleAfterMs() const { return m_staleAfterMs; }
    // "path (last event 2 min 5 s ago)" for every stale feed, at the model's clock.
    [[nodiscard]] QStringList staleFeeds() const;
    [[nodiscard]] const IngestSourceStatus &sourceAt(int row) const { return m_sources.at(row); }

    [[nodiscard]] int rowCount(const QModelIndex &parent = {}) const override;
    [[nodiscard]] int columnCount(const QModelIndex &parent = {}) const override;
    [[nodiscard]] QVariant data(const QModelIndex &index, int role) const override;
    [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                      int role) const override;

    // "never", "3 s ago", "2 min 5 s ago"
    static QString silenceText(const IngestSourceStatus &source, qint64 nowMs);

private:
    QList<IngestSourceStatus> m_sources;
    qint64 m_nowMs = 0;
    qint64 m_staleAfterMs;
};

class MalformedRecordsModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { LocationColumn, ReasonColumn, ColumnCount };

    explicit MalformedRecordsModel(QObject *parent = nullptr);

    void setRecords(const QList<MalformedRecord> &records);
    [[nodiscard]] const MalformedRecord &recordAt(int row) const { return m_records.at(row); }

    [[nodiscard]] int rowCount(const QModelIndex &parent = {}) const override;
    [[nodiscard]] int columnCount(const QModelIndex &parent = {}) const override;
    [[nodiscard]] QVariant data(const QModelIndex &index, int role) const override;
    [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                      int role) const override;

private:
    QList<MalformedRecord> m_records;
};

} // namespace ts::models
