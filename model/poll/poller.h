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
//
// Distrustful: an answer is taken only whole (storefetch.h: cut-off, slow and oversized answers
// are errors and are asked again), its rows are checked against what was asked (a ClickHouse
// or KQL store that ignores the filter, answers out of order or sends a key that is not a time
// stops the poll with an error instead of looping), a row repeated further on in the same
// answer is taken once, and a row stamped ahead of the store's clock never moves the cursor
// past it (pollcursor.h). A page too large for one answer (a KQL PartialError, the answer cap)
// is asked again smaller; a row that cannot fit even alone is named in the error.
// Memory is bounded by the page: an answer is held as its raw rows (at most the answer cap),
// parsed and handed on a chunk at a time, each chunk with the cursor state that covers it.

#include "models/ingeststatus.h"
#include "poll/pollanswer.h"
#include "poll/pollcursor.h"
#include "poll/pollsource.h"
#include "poll/storefetch.h"

#include "core/requestevent.h"

#include <QHash>
#include <QList>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

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
    qint64 errors = 0;         // failed answers, each counted once
    qint64 rowsAhead = 0;      // rows stamped more than the skew ahead of the store's clock
    qint64 aheadMaxMs = 0;     // how far ahead the furthest of them was
    qint64 repeatedRows = 0;   // rows an answer repeated after later ones (taken once)
    qint64 storeThrottles = 0; // 429 / 503 answers obeyed
    qint64 lastEventTsMs = -1; // time of the newest row read
    qint64 lastEventReceivedMs = -1;
    qint64 backoffUntilMs = -1; // not asking before then (Retry-After / backoff)
    QString lastError;          // empty once a poll succeeds again
};

// The Ingest page's row for a polled source: "clickhouse://..." with its format, rows, last
// poll, lag (lastEventTsMs) and errors, like every other feed.
IngestSourceStatus toIngestStatus(const PollSource &source, const PollHealth &health);
// "12 rows stamped ahead of the store's clock (up to 3600 s)", empty when there are none: how
// the poll status, the Ingest page and the report name them.
QString aheadNote(const PollHealth &health);

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
        // Attempts of one request (429/503/network/cut-off/timeout) before pollOnce gives
        // up; each waits as the store says or backs off. -1: the source's retries=.
        int maxRetries = -1;
        qint64 maxBackoffMs = 300'000;
        int idleTimeoutMs = 30'000; // no byte of an answer for this long (timeout= is the total)
        const std::atomic<bool> *cancel = nullptr; // checked while waiting
    };

    // Takes what one answer brought: the new events and malformed rows and the cursor state
    // that covers them (store both in one transaction). False: stop polling.
    using Deliver =
        std::function<bool(QList<RequestEvent> &&events, QList<MalformedRecord> &&malformed,
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
    std::optional<qint64> pushDown(qint64 fromMs, qint64 toMs,
                                   const std::function<bool(QList<AggregateRow> &&rows)> &deliver);
    // The time range the store holds, [first, last] in ms (ClickHouse); nullopt on failure.
    std::optional<std::pair<qint64, qint64>> timeRange();

private:
    struct Page;
    class BodyCollector;
    class RowCollector;
    class WholeBody;
    std::optional<FetchResult> requestWithRetries(const QByteArray &method, const QUrl &url,
                                                  const QByteArray &body,
                                                  const QByteArray &contentType,
                                                  BodyCollector &collector);
    bool waitMs(qint64 ms);
    void backOff(const FetchResult &answer, bool throttled);
    void noteFailure(const QString &message);
    QString describeFailure(const FetchResult &answer, const QString &who) const;
    // The page of rows from lowMs on, at most `limit` rows asked for, shrunk (*limit) while
    // the store cannot answer it whole. nullopt: failed (health().lastError) or cancelled.
    std::optional<Page> fetchFittingPage(qint64 lowMs, int *limit);
    std::optional<Page> fetchPage(qint64 lowMs, int limit);
    std::optional<Page> fetchClickHousePage(qint64 lowMs, int limit);
    std::optional<Page> fetchKqlPage(qint64 lowMs, int limit);
    std::optional<Page> fetchNdjsonPage(qint64 lowMs, int limit);
    bool checkClickHouseKeys(Page &page, qint64 lowSecond, qint64 boundarySecond);
    struct Chunk;
    struct AnswerScan
    {
        // The answer's contents so far, each with the run of equal keys it came in: a repeat
        // is told from an identical copy by coming in another run.
        QHash<quint64, qint64> runOf;
        qint64 runs = 0;
        qint64 runKey = 0;
        qint64 highest = 0;     // the newest key so far
        qsizetype oversize = 0; // the next of the page's oversize rows
    };
    bool readChunk(Page &page, qsizetype end, qint64 lowMs, AnswerScan &scan, Chunk &chunk);
    // Parses, checks and hands on a page a chunk at a time, each with the cursor after it. An
    // outcome when polling stops (cancelled, or a row that breaks what was asked:
    // health().lastError).
    std::optional<Outcome> deliverPage(Page &page, qint64 lowMs, const Deliver &deliver,
                                       qint64 *newestInPage, qsizetype *freshRows);
    enum class Next {
        Again,
        CaughtUp,
        Warned, // stopped with something to say (health().lastError): Outcome::Partial
        Failed, // noteFailure()d: Outcome::Failed
    };
    Next growPage(qint64 low, int *limit);
    QString describeUnfit(qint64 lowMs, bool inclusive);
    std::optional<qint64> kqlRowTime(qint64 lowMs, bool inclusive);
    Next nextPage(const Page &page, qint64 newestInPage, qsizetype freshRows, qint64 *low,
                  int *limit);
    Next nextNdjsonPage(const PageRows &rows, qint64 newestInPage, qsizetype freshRows, qint64 *low,
                        int *limit);
    bool discoverClickHouseColumns();
    bool detectClickHouseTimeUnit();
    QString clickHouseKeyExpression() const;
    QString clickHouseFullTimeExpression() const;
    QString clickHouseFrom(qint64 lowSecond) const;     // ts >= that second
    QString clickHouseThrough(qint64 highSecond) const; // ts within or before that second
    QString clickHouseOrder() const;
    QString clickHouseTable() const;
    std::optional<QByteArray> clickHouseQuery(const QString &sql);

    PollSource m_source;
    Options m_options;
    PollCursor m_cursor;
    PollHealth m_health;
    QString m_sourceName;
    qint64 m_rowNumber = 0;
    std::unique_ptr<StoreFetcher> m_fetcher;
    std::unique_ptr<NdjsonReader> m_reader;
    // ClickHouse: the table's columns (name, type), read once.
    QList<std::pair<QString, QString>> m_columns;
    QString m_tsType;
    // How ts is kept: a DateTime, epoch seconds, epoch milliseconds (a number column: told by
    // its largest value, once the table has rows), or text parsed by the store.
    enum class TimeUnit { Unknown, DateTime, Seconds, Millis, Text };
    TimeUnit m_timeUnit = TimeUnit::Unknown;
    int m_failures = 0;                 // consecutive, for the backoff
    std::optional<qint64> m_storeNowMs; // the store's clock at its last answer (Date header)
    int m_largestAnswerRows = 0;        // NDJSON: the most rows one answer has brought
    int m_lastAnswerRows = 0;           // NDJSON: rows of the answer before
    std::optional<qint64> m_grownAt;    // NDJSON: the cursor at which the page was grown
    // The last page the store could not answer whole (too large, PartialError): where, how
    // many rows were asked, and why. A page as large at that place will not fit either.
    struct Unfit
    {
        qint64 lowMs = 0;
        int limit = 0;
        QString message;
    };
    std::optional<Unfit> m_unfit;
};

} // namespace ts::poll
