#pragma once
// Ingest panel: every source with its format, events, rate and how long ago its last event
// arrived (ticking every second, so a dead feed is visible), and the malformed records with
// their file:line.

#include "ingest/ingeststatus.h"

#include <QWidget>

class QLabel;
class QTableView;
class QTimer;

namespace ts::models {
class IngestSourcesModel;
class MalformedRecordsModel;
} // namespace ts::models

namespace ts::widgets {

class IngestPage : public QWidget
{
    Q_OBJECT
public:
    explicit IngestPage(QWidget *parent = nullptr);

    void setStatus(const IngestStatus &status);
    [[nodiscard]] models::IngestSourcesModel *sourcesModel() const { return m_sources; }
    [[nodiscard]] models::MalformedRecordsModel *malformedModel() const { return m_malformed; }
    [[nodiscard]] QString summaryText() const;
    // A live feed silent this long is marked stale (row, State column, summary, and
    // staleFeedsChanged for the status bar); ingest/feedhealth.h has the default.
    void setStaleAfterSeconds(int seconds);
    [[nodiscard]] QStringList staleFeeds() const { return m_stale; }

Q_SIGNALS:
    // "feed (last event 2 min 5 s ago)" for each stale feed; empty when none is. Emitted on change.
    void staleFeedsChanged(const QStringList &staleFeeds);

private:
    void tick();

    models::IngestSourcesModel *m_sources;
    models::MalformedRecordsModel *m_malformed;
    QTableView *m_sourcesView;
    QTableView *m_malformedView;
    QLabel *m_summary;
    QLabel *m_malformedTitle;
    QTimer *m_clock;
    IngestStatus m_status;
    QStringList m_stale;
};

} // namespace ts::widgets
