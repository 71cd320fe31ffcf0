#pragma once
// Polls one store (PollSource) for rows it has not read yet, exactly once (PollCursor), and
// hands them on as canonical events: every row goes through the canonical NDJSON reader
// (docs/request-log.md), so secrets are masked where the event is made, like any other feed.
//
// Synchronous: pollOnce() makes its HTTP requests (QNetworkAccessManager) with a local event
// loop and returns when the store has nothing newer. Run it on a worker thread (the `poll`
// command's, the dashboard's poll thread); a Poller belongs to the thread that made it.
//
// Good citizen: a 429 or 503 from the store is obeyed (its Retry-After: delta-seconds or an
// HTTP-date; without one, exponential backoff from 1 s), other failures back off
// exponentially, and every request counts in health(), which becomes the Ingest page's row
// for the source (toIngestStatus).

#include "ingest/ingeststatus.h"
#include "poll/pollcursor.h"
#include "poll/pollsource.h"

#include "core/requestevent.h"

#include <QList>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

class QNetworkAccessManager;

namespace ts {
class NdjsonReader;
}

namespace ts::poll {

// What the poller knows of its own requests.
struct PollHealth
{
    qint64 lastPollMs = -1;    // wall clock of the last request
    qint64 lastSuccessMs = -1; // of the last answer taken
    qint64 rows = 0;           // new rows handed on (events + malformed)
    qint64 malformed = 0;
    qint64 requests = 0;
    qint64 errors = 0;          // failed or partial answers
    qint64 storeThrottles = 0;  // 429 / 503 answers obeyed
    qint64 lastEventTsMs = -1;  // time of the newest row read
    qint64 lastEventReceivedMs = -1;
    qint64 backoffUntilMs = -1; // not asking before then (Retry-After / backoff)
    QString lastError;          // empty once a poll succeeds again
};

// The Ingest page's row for a polled source: "clickhouse://..." with its format, rows, last
// poll, lag (lastEventTsMs) and errors, like every other feed.
IngestSourceStatus toIngestStatus(const PollSource &source, const PollHealth &health);

// One per-second aggregate of the push-down query (see Poller::pushDown).
struct AggregateRow
{
    qint64 secondMs = 0;
    QString service, identity, app, tenant, category, method, errorCode;
    QString url; // one URL of the group (any), for the policies' URL rules
    int status = 0;
    qint64 count = 0;
    double credits = -1; // sum of the rows' credits, < 0 when the store has no credits column
};

class Poller
{
public:
    struct Options
    {
        qint64 sinceMs = 0; // before anything is read: rows from this time on
        // Consecutive retries of one request (429/503/network) before pollOnce gives up;
        // each waits as the store says or backs off.
        int maxRetries = 6;
        qint64 maxBackoffMs = 300'000;
        int requestTimeoutMs = 120'000;
        const std::atomic<bool> *cancel = nullptr; // checked while waiting
    };

    // Takes what one answer brought: the new events and malformed rows and the cursor state
    // that covers them (store both in one transaction). False: stop polling.
    using Deliver = std::function<bool(QList<RequestEvent> &&events,
                                       QList<MalformedRecord> &&malformed,
                                       const QByteArray &cursorState)>;

    Poller(PollSource source, Options options);
    ~Poller();
    Poller(const Poller &) = delete;
    Poller &operator=(const Poller &) = delete;

    [[nodiscard]] const PollSource &source() const { return m_source; }
    [[nodiscard]] const PollCursor &cursor() const { return m_cursor; }
    void setCursor(const PollCursor &cursor) { m_cursor = cursor; }
    [[nodiscard]] const PollHealth &health() const { return m_health; }
    // The provenance events carry (RequestEvent::source).
    void setSourceName(const QString &name) { m_sourceName = name; }
    // Rows delivered before (a restart continues the row numbers).
    void setRowsBefore(qint64 rows) { m_rowNumber = rows; }

    enum class Outcome {
        CaughtUp,  // asked until the store had nothing newer
        Partial,   // the store answered with a partial error: rows taken, asked again next time
        Failed,    // gave up (health().lastError); the cursor is where the last answer left it
        Cancelled, // options.cancel, or deliver returned false
    };
    Outcome pollOnce(const Deliver &deliver);

    // Push-down (ClickHouse): instead of the rows of [fromMs, toMs), the store's per-second
    // counts per (service, identity, app, tenant, category, method, status, errorCode),
    // handed on page by page. nullopt and health().lastError on failure.
    std::optional<qint64>
    pushDown(qint64 fromMs, qint64 toMs,
             const std::function<bool(QList<AggregateRow> &&rows)> &deliver);
    // The time range the store holds, [first, last] in ms (ClickHouse); nullopt on failure.
    std::optional<std::pair<qint64, qint64>> timeRange();

private:
    struct Answer;
    struct Page;
    std::optional<Answer> request(const QByteArray &method, const QUrl &url,
                                  const QByteArray &body, const QByteArray &contentType);
    std::optional<Answer> requestWithRetries(const QByteArray &method, const QUrl &url,
                                             const QByteArray &body,
                                             const QByteArray &contentType);
    bool waitMs(qint64 ms);
    bool discoverClickHouseColumns();
    std::optional<Page> fetchPage(qint64 lowMs, int limit);
    bool detectClickHouseTimeUnit();
    QString clickHouseKeyExpression() const;
    QString clickHouseFrom(qint64 lowSecond) const;        // ts >= that second
    QString clickHouseThrough(qint64 highSecond) const;    // ts within or before that second
    QString clickHouseOrder() const;
    QString clickHouseTable() const;
    std::optional<QByteArray> clickHouseQuery(const QString &sql);
    bool parsePage(Page &page, const QByteArray &body);

    PollSource m_source;
    Options m_options;
    PollCursor m_cursor;
    PollHealth m_health;
    QString m_sourceName;
    qint64 m_rowNumber = 0;
    std::unique_ptr<QNetworkAccessManager> m_network;
    std::unique_ptr<NdjsonReader> m_reader;
    // ClickHouse: the table's columns (name, type), read once.
    QList<std::pair<QString, QString>> m_columns;
    QString m_tsType;
    // How ts is kept: a DateTime, epoch seconds, epoch milliseconds (a number column: told by
    // its largest value, once the table has rows), or text parsed by the store.
    enum class TimeUnit { Unknown, DateTime, Seconds, Millis, Text };
    TimeUnit m_timeUnit = TimeUnit::Unknown;
    int m_failures = 0; // consecutive, for the backoff
};

} // namespace ts::poll
