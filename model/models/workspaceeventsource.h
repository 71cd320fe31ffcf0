#pragma once
// The events table's source over a workspace file: a read-only WorkspaceReader (its own SQLite
// connection, WAL, so it reads while an import writes). Pages are keyset lookups on the reader's
// indexes, so the GUI thread only ever runs small queries.

#include "eventpagesource.h"

#include <memory>

namespace ts {
class WorkspaceReader;
}

namespace ts::models {

class WorkspaceEventSource : public EventPageSource
{
public:
    // Opens the reader on the calling thread (the thread that will fetch pages). nullptr and
    // *error when the workspace cannot be opened.
    static std::shared_ptr<WorkspaceEventSource> open(const QString &path, QString *error);
    ~WorkspaceEventSource() override;

    QList<EventRow> fetchPage(const EventQuery &query, qint64 afterRowId, int limit) override;
    qint64 count(const EventQuery &query) override;
    // Counts with its own read-only connection on the calling (worker) thread: a count over a
    // million rows takes hundreds of ms and must not block the GUI.
    [[nodiscard]] std::function<qint64()> backgroundCounter(const EventQuery &query) const override;
    // Substring searches fetch their pages with their own connection on a worker thread.
    [[nodiscard]] std::function<QList<EventRow>()>
    backgroundPageFetcher(const EventQuery &query, qint64 afterRowId, int limit) const override;
    [[nodiscard]] QString description() const override;
    [[nodiscard]] QString errorString() const override;

private:
    WorkspaceEventSource(QString path, std::unique_ptr<WorkspaceReader> reader);

    QString m_path;
    std::unique_ptr<WorkspaceReader> m_reader;
};

} // namespace ts::models
