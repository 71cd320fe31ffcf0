#pragma once
// The contract between readers (bytes -> RequestEvent) and whatever consumes their output
// (report aggregation, workspace writer, live engine). Readers never know about the engine or SQL.

#include "core/requestevent.h"

#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

class QIODevice;

namespace ts {

class IngestSink
{
public:
    virtual ~IngestSink() = default;
    virtual void onEvent(RequestEvent &&event) = 0;
    virtual void onMalformed(MalformedRecord &&record) = 0;
    // A run of consecutive events (readers that parse in chunks deliver them this way, so a sink
    // can hand a whole chunk to another thread). Default: one onEvent per event, in order.
    virtual void onEvents(std::vector<RequestEvent> &&events)
    {
        for (RequestEvent &event : events)
            onEvent(std::move(event));
    }
};

struct ReadControl
{
    // Set from another thread to stop a long read; readers poll it between records.
    const std::atomic<bool> *cancel = nullptr;
    // Called now and then (not per record) with bytes consumed and the total (-1 unknown).
    std::function<void(qint64 done, qint64 total)> progress;
    // Resume point: readers that support it seek here and number lines from startLine + 1.
    qint64 startOffset = 0;
    qint64 startLine = 0;
    // Called after every complete record with the offset just past it and its line number,
    // so a ledger can remember where to resume. May be null.
    std::function<void(qint64 offsetAfter, qint64 line)> checkpoint;
    // The source may still be being written (an import of a live log): a last line without its
    // newline that does not parse is a record cut mid-write, not a malformed one. It is left
    // unread (endOffset stops before it, ReadResult::heldBytes says how much) for the next read
    // to take whole. A last line that parses is complete, newline or not.
    bool holdUnterminatedTail = false;
};

struct ReadResult
{
    qint64 events = 0;
    qint64 malformed = 0;
    qint64 bytesRead = 0;
    qint64 endOffset = 0; // offset just past the last complete record
    qint64 endLine = 0;
    bool cancelled = false;
    QString fatalError;   // non-empty: the source could not be read at all ("FILE: reason")
    qint64 heldBytes = 0; // an unterminated last line left for the next read (see ReadControl)
};

class LogReader
{
public:
    virtual ~LogReader() = default;
    [[nodiscard]] virtual QString formatName() const = 0;
    // Whether startOffset in ReadControl is honoured (line-oriented formats).
    [[nodiscard]] virtual bool supportsResume() const { return false; }
    virtual ReadResult read(QIODevice &input, const QString &sourceName, IngestSink &sink,
                            const ReadControl &control) = 0;
};

} // namespace ts
