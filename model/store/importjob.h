#pragma once
// Importing one file (or stdin) into a workspace, exactly once. A file is recognised by its
// content, whatever its name: the hash of its head (the first 64 KiB, or all of a smaller
// file, compared over the length known) finds the source it continues, and that source's
// import ledger decides:
//   complete and unchanged       -> nothing is added ("already imported");
//   partly imported or appended  -> the reader seeks to the committed offset and continues
//                                   (also for a renamed, rotated or copied file);
//   new content                  -> read from the start as a new source; when the same path
//                                   held other content before (truncated and rewritten,
//                                   replaced), the result says so;
//   same head, but shorter than what was committed
//                                -> at the same path: truncated (copytruncate), read from the
//                                   start as new content; elsewhere: an earlier copy of content
//                                   imported further, nothing is added.
// Each batch carries its ledger checkpoint into the writer's transaction, so a cancelled or
// killed import resumes where it stopped, without duplicates.
//
// Two imports of the same content at once (two processes, or two threads with their own
// Workspace and writer) never both store it: the source is chosen and claimed in one write
// transaction (Workspace::claimLedger), and the writer stores a run's batches only while the
// run still owns the source. A later import takes an unfinished source over from where its
// ledger stands (the earlier run may have been killed: nothing tells a live one from a dead
// one); the earlier run then stops, status Superseded, and the later one imports the rest.
//
// Typical use (CLI `import --workspace WS FILE...`, or a GUI worker thread):
//     Workspace workspace;            workspace.open(wsPath);
//     WorkspaceWriter writer;         writer.start(wsPath);
//     for (file : files) { NdjsonReader reader; auto r = importFile(workspace, writer, file,
//                                                                     reader, options); }
//     writer.finish();                // commits, then builds the query indexes

#include "ingest/ingest.h"

#include <QString>

#include <atomic>
#include <functional>

namespace ts {

class Workspace;
class WorkspaceWriter;

struct ImportOptions
{
    // Set from any thread to stop; what was read so far is committed and resumable.
    const std::atomic<bool> *cancel = nullptr;
    // Bytes of the file consumed and its size (-1 for stdin), from the reading thread.
    std::function<void(qint64 done, qint64 total)> progress;
    // Records per batch handed to the writer (one ledger checkpoint each).
    qsizetype batchRecords = 8192;
};

struct ImportResult
{
    enum class Status {
        Imported,        // read to the end (from the start, or resumed)
        AlreadyImported, // complete and unchanged: nothing added
        Cancelled,       // stopped by ImportOptions::cancel; resumable
        Failed,          // error says why; what was committed stays and is resumable
        Superseded,      // another import took this source over and imports the rest
    };

    Status status = Status::Failed;
    QString path;              // as given
    qint64 sourceId = 0;       // row in the sources table
    qint64 eventsAdded = 0;    // committed by this run
    qint64 malformedAdded = 0; // committed by this run
    // The source this file continues was imported under another name (renamed, rotated,
    // copied): that name. Empty when it is the same path or new content.
    QString continuesPath;
    // AlreadyImported because the file is an earlier copy of content imported further.
    bool earlierCopy = false;
    // The content imported from this path before is gone (truncated and rewritten, or
    // replaced): what of it had been committed, -1 when nothing was. The file is read from
    // the start as new content.
    qint64 replacedCommittedBytes = -1;
    bool resumed = false; // continued a partial (or appended-to) import
    qint64 resumedFromOffset = 0;
    qint64 resumedFromLine = 0;
    bool restarted = false; // a partial import of a format that cannot resume was discarded
    qint64 endOffset = 0;   // ledger offset after this import
    qint64 endLine = 0;
    qint64 totalBytes = -1;
    // An unterminated last line that did not parse, left for the next import (the log is
    // probably still being written): bytes held back.
    qint64 heldBytes = 0;
    QString error;

    // Everything of the file is (or, for Superseded, is being) stored exactly once.
    [[nodiscard]] bool ok() const
    {
        return status == Status::Imported || status == Status::AlreadyImported ||
               status == Status::Superseded;
    }
    [[nodiscard]] bool contentReplaced() const { return replacedCommittedBytes >= 0; }
};

// Imports `path` ("-" = stdin: always a new source, no resume) with `reader`. `workspace` must
// be open on the calling thread and `writer` started on the same workspace file. Returns after
// everything read is committed (the writer is flushed).
ImportResult importFile(Workspace &workspace, WorkspaceWriter &writer, const QString &path,
                        LogReader &reader, const ImportOptions &options = {});

QString importStatusName(ImportResult::Status status);

} // namespace ts
