#pragma once
// What the ingest side reports to the dashboard about its sources: plain values handed from the
// pipeline to the GUI (MainWindow::setIngestStatus). A silent feed must never look like a quiet
// system, so each source carries the wall-clock time its last event arrived.

#include "core/requestevent.h"

#include <QList>
#include <QMetaType>
#include <QString>

#include <optional>

namespace ts {

struct IngestSourceStatus
{
    QString path;   // file path, "-" (stdin), "http", "otlp", "demo", ...
    QString format; // ndjson | har | csv | otlp | access | ...
    // The requests the source's events stand for, as the report counts them
    // (RequestEvent::countedRequests: an event of weight n is n, an annotation or a $batch
    // envelope none), so the page's counts add up to the report's; eventsPerSecond likewise.
    qint64 events = 0;
    double eventsPerSecond = 0; // recent arrival rate
    // Records delivered, one per event whatever it stands for: where a file's follower and a
    // policy re-read stand (AnalysisSession). Not shown.
    qint64 rows = 0;
    // Wall-clock ms (since the epoch) when the last event of this source arrived; nullopt = none
    // yet. The panel shows "last event Ns ago" from it.
    std::optional<qint64> lastEventReceivedMs;
    // Timestamp carried by that last event (log time, may be far in the past for an import).
    std::optional<qint64> lastEventTsMs;
    qint64 errors = 0; // malformed records from this source
    bool live = false; // tailing / listening (true) or a finished import (false)
    bool finished = false;
    // A file read to its end and followed since (live/followedsources.h, or caught up into the
    // session's workspace): "following", not "finished", on the Ingest page.
    bool followed = false;
    // Events of this live source that came after a later one had been analysed: past the
    // reorder window (ingest/livereorder.h), charged at the latest instant.
    qint64 lateEvents = 0;
    // Live feeds (issue 17): the wall clock when the feed started (a listener opened), so a
    // feed that never sent anything is silent since then, not "never" forever.
    std::optional<qint64> liveSinceMs;
    // Arrival time minus the last event's own timestamp: how far behind real time the feed's
    // events reach the dashboard; nullopt when not measured (imports, the demo's simulated time).
    std::optional<qint64> lagMs;
    qint64 rejectedRequests = 0; // a listener's requests answered 4xx/5xx (not in `errors`)
    QString lastError;           // its newest refusal or malformed-line reason
    // Polled stores (model/poll): the poller's own requests. Wall-clock ms of the last request
    // (nullopt: not a polled source, or none yet), requests made, and why the last one failed
    // or was held back (the store's 429 / Retry-After), empty when it succeeded.
    std::optional<qint64> lastPollMs;
    qint64 requests = 0;
    // Its events reach the analysis through another row as well (a polled store writing into
    // the workspace the session follows): shown on its row, not added to the total twice.
    bool countedInWorkspace = false;
};

struct IngestStatus
{
    QList<IngestSourceStatus> sources;
    QList<MalformedRecord> malformed; // the most recent few, with their source:line
    qint64 malformedTotal = 0;        // may exceed malformed.size()
    // The live feeds' reorder window in force, whether it is sized from the lateness seen
    // ("auto") or fixed (--reorder-window, Preferences), and the late events over all feeds.
    qint64 reorderWindowMs = 0;
    bool reorderWindowAuto = true;
    qint64 lateEvents = 0;
};

} // namespace ts

// Handed from the pipeline's thread to MainWindow::setIngestStatus through queued connections.
Q_DECLARE_METATYPE(ts::IngestStatus)
// A polled store's row (model/poll, PollFeed) on its way to AnalysisSession::updatePolledSource.
Q_DECLARE_METATYPE(ts::IngestSourceStatus)
