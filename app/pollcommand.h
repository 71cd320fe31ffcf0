#pragma once
// `throttlescope poll`: polls a log store (model/poll) into a workspace, exactly once, resuming
// from the cursor the workspace holds; and the part of `report --source URL` that reads a
// store (every row from --since on, or per-second aggregates with --pushdown) into a sink.
//
//   throttlescope poll --workspace WS --source URL [--every S] [--once] [--since T]
//
// Exit codes as for import: 0 done, 1 the store or the workspace could not be read or written,
// 2 usage.

#include <QString>
#include <QStringList>

namespace ts {
class IngestSink;
}

namespace ts::app {

int runPoll(const QStringList &args);

// The help lines of the source options report shares with poll.
QString pollSourceHelp();

// report --source: everything the store holds from sinceMs on, into `sink`. false and *error
// when the source cannot be read. *rows: the rows (or charges) read; *notes: what the report
// should say about them (rows stamped ahead of the store's clock).
bool readPolledSource(const QString &url, qint64 sinceMs, bool pushDown, IngestSink &sink,
                      qint64 *rows, QString *error, QStringList *notes = nullptr);

// "2026-02-18T22:00:00Z", or Unix seconds / milliseconds as the canonical log's ts.
bool parseSinceArgument(const QString &text, qint64 *ms);

} // namespace ts::app
