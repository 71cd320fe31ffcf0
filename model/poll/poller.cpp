#include "poller.h"

#include "core/timeparse.h"
#include "ingest/ndjsonreader.h"
#include "ingest/redaction.h"
#include "poll/pollanswer.h"
#include "signals/throttlesignals.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QThread>
#include <QUrlQuery>

#include <algorithm>
#include <cmath>

namespace ts::poll {

namespace {

// Rows parsed and handed on at a time: each chunk is one commit with the cursor after it, so
// memory holds a page's raw rows and one chunk of events, never a page of events.
constexpr qsizetype kDeliverChunk = 8192;
constexpr int kMaxPageRows = 1 << 24;

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

qint64 floorDiv(qint64 a, qint64 b)
{
    return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
}

// A ClickHouse identifier, quoted.
QString quoted(const QString &name)
{
    QString escaped = name;
    escaped.replace(u'`', u"\\`"_qs);
    return u'`' + escaped + u'`';
}

QString baseType(QString type)
{
    if (type.startsWith(u"Nullable(") && type.endsWith(u')'))
        type = type.mid(9, type.size() - 10);
    if (type.startsWith(u"LowCardinality(") && type.endsWith(u')'))
        type = type.mid(15, type.size() - 16);
    return type;
}

bool isNumericType(const QString &type)
{
    return type.startsWith(u"UInt") || type.startsWith(u"Int") || type.startsWith(u"Float") ||
           type.startsWith(u"Decimal");
}

QString whoAnswers(SourceKind kind)
{
    switch (kind) {
    case SourceKind::ClickHouse:
        return QStringLiteral("ClickHouse");
    case SourceKind::Kql:
        return QStringLiteral("the query API");
    case SourceKind::NdjsonHttp:
        return QStringLiteral("the endpoint");
    }
    return {};
}

QString secondsText(qint64 ms)
{
    return QString::number(double(ms) / 1000.0, 'f', ms % 1000 == 0 ? 0 : 1);
}

} // namespace

QString aheadNote(const PollHealth &health)
{
    if (health.rowsAhead <= 0)
        return {};
    return QStringLiteral("%1 rows stamped ahead of the store's clock (up to %2 s)")
        .arg(health.rowsAhead)
        .arg(secondsText(health.aheadMaxMs));
}

IngestSourceStatus toIngestStatus(const PollSource &source, const PollHealth &health)
{
    IngestSourceStatus status;
    status.path = source.url;
    status.format = sourceKindName(source.kind);
    status.events = health.rows - health.malformed;
    if (health.lastEventReceivedMs >= 0)
        status.lastEventReceivedMs = health.lastEventReceivedMs;
    if (health.lastEventTsMs >= 0)
        status.lastEventTsMs = health.lastEventTsMs;
    // How far behind real time the store's newest row reaches the dashboard.
    if (health.lastEventReceivedMs >= 0 && health.lastEventTsMs >= 0)
        status.lagMs = health.lastEventReceivedMs - health.lastEventTsMs;
    status.errors = health.malformed + health.errors;
    status.live = true;
    if (health.lastPollMs >= 0)
        status.lastPollMs = health.lastPollMs;
    status.requests = health.requests;
    status.lastError = health.lastError;
    // Rows from a skewed clock are data, not an error, but they must not pass unnoticed.
    if (const QString note = aheadNote(health); !note.isEmpty())
        status.lastError = status.lastError.isEmpty() ? note : status.lastError + u"; " + note;
    return status;
}

struct Poller::Page
{
    PageRows rows;
    bool full = false;    // the page hit its row limit: the last key's group may be cut
    bool partial = false; // KQL PartialError: the store could not answer all of it
    QString partialMessage;
    bool tooLarge = false; // over the answer cap
    QString tooLargeMessage;
};

// Where an answer's body goes as it arrives; reset before each attempt.
class Poller::BodyCollector
{
public:
    virtual ~BodyCollector() = default;
    virtual void reset() = 0;
    virtual void feed(QByteArrayView piece) = 0;
    // The answer is over: false and *error when what arrived cannot be its whole.
    virtual bool finish(bool framedByClose, QString *error) = 0;
};

// Rows (NDJSON, ClickHouse's JSONEachRow) split as they arrive.
class Poller::RowCollector final : public Poller::BodyCollector
{
public:
    explicit RowCollector(PageRows &rows) : m_rows(rows) {}
    void reset() override
    {
        m_rows = PageRows();
        m_splitter.emplace(m_rows);
    }
    void feed(QByteArrayView piece) override { m_splitter->feed(piece); }
    bool finish(bool framedByClose, QString *error) override
    {
        return m_splitter->finish(framedByClose, error);
    }

private:
    PageRows &m_rows;
    std::optional<RowSplitter> m_splitter;
};

// A whole JSON document (KQL's answer, ClickHouse's small metadata answers), with the spare
// bytes the JSON parser reads past its end.
class Poller::WholeBody final : public Poller::BodyCollector
{
public:
    QByteArray body;
    void reset() override { body = QByteArray(); }
    void feed(QByteArrayView piece) override
    {
        if (body.capacity() < body.size() + piece.size() + kJsonPadding)
            body.reserve(std::max(body.capacity() * 2, body.size() + piece.size() + kJsonPadding));
        body.append(piece);
    }
    bool finish(bool framedByClose, QString *error) override
    {
        // Ended by the connection closing: a document cut there does not end as one does.
        const QByteArray end = body.right(16).trimmed();
        if (framedByClose && !body.trimmed().isEmpty() && !end.endsWith('}') &&
            !end.endsWith(']') && !body.endsWith('\n')) {
            *error = QStringLiteral("the answer ended when the connection closed (no "
                                    "Content-Length) in the middle of its document");
            return false;
        }
        body.reserve(body.size() + kJsonPadding);
        return true;
    }
};

Poller::Poller(PollSource source, Options options)
    : m_source(std::move(source)), m_options(options), m_cursor(m_source.overlapMs),
      m_sourceName(m_source.url), m_fetcher(std::make_unique<StoreFetcher>(options.cancel)),
      m_reader(std::make_unique<NdjsonReader>())
{
}

Poller::~Poller() = default;

bool Poller::waitMs(qint64 ms)
{
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < ms) {
        if (m_options.cancel && m_options.cancel->load())
            return false;
        QThread::msleep(quint64(std::min<qint64>(50, ms - clock.elapsed() + 1)));
    }
    return !(m_options.cancel && m_options.cancel->load());
}

void Poller::noteFailure(const QString &message)
{
    ++m_health.errors;
    m_health.lastError = message;
    ++m_failures;
    const qint64 delayMs =
        std::min<qint64>(m_options.maxBackoffMs, 1000LL << std::min(m_failures - 1, 16));
    m_health.backoffUntilMs = nowMs() + delayMs;
}

QString Poller::describeFailure(const FetchResult &answer, const QString &who) const
{
    if (!answer.ok())
        return answer.error;
    return QStringLiteral("%1 answered %2: %3")
        .arg(who)
        .arg(answer.status)
        .arg(redact::quoteMasked(QString::fromUtf8(answer.errorBody).trimmed(), 300));
}

void Poller::backOff(const FetchResult &answer, bool throttled)
{
    // The store's own Retry-After wins; without one, exponential backoff from 1 s.
    qint64 delayMs =
        std::min<qint64>(m_options.maxBackoffMs, 1000LL << std::min(m_failures - 1, 16));
    if (throttled && !answer.retryAfter.isEmpty()) {
        if (const auto told =
                throttle::parseRetryAfterDelayMs(QString::fromLatin1(answer.retryAfter), nowMs())) {
            delayMs = std::clamp<qint64>(*told, 0, m_options.maxBackoffMs);
        }
    }
    const QString asking = QStringLiteral("asking again in %1 s").arg(double(delayMs) / 1000.0);
    if (throttled) {
        m_health.lastError =
            QStringLiteral("the store answered %1 (busy): %2").arg(answer.status).arg(asking);
    } else {
        m_health.lastError = describeFailure(answer, whoAnswers(m_source.kind)) + u": " + asking;
    }
    m_health.backoffUntilMs = nowMs() + delayMs;
}

std::optional<FetchResult> Poller::requestWithRetries(const QByteArray &method, const QUrl &url,
                                                      const QByteArray &body,
                                                      const QByteArray &contentType,
                                                      BodyCollector &collector)
{
    QString secretError;
    const QString secret = m_source.secret(&secretError);
    if (!secretError.isEmpty()) {
        noteFailure(secretError);
        return std::nullopt;
    }
    StoreFetcher::Headers headers{{"User-Agent", "throttlescope-poll/" THROTTLESCOPE_VERSION}};
    if (!contentType.isEmpty())
        headers.append({"Content-Type", contentType});
    if (m_source.kind == SourceKind::ClickHouse) {
        if (!m_source.user.isEmpty())
            headers.append({"X-ClickHouse-User", m_source.user.toUtf8()});
        if (!secret.isEmpty())
            headers.append({"X-ClickHouse-Key", secret.toUtf8()});
    } else if (!secret.isEmpty()) {
        headers.append({"Authorization", "Bearer " + secret.toUtf8()});
    }
    FetchLimits limits;
    limits.maxAnswerBytes = m_source.maxAnswerBytes;
    limits.deadlineMs = m_source.timeoutMs;
    limits.idleTimeoutMs = std::min(m_options.idleTimeoutMs, m_source.timeoutMs);
    const int attempts = m_options.maxRetries > 0 ? m_options.maxRetries : m_source.retries;
    for (int attempt = 1;; ++attempt) {
        if (m_health.backoffUntilMs > nowMs() && !waitMs(m_health.backoffUntilMs - nowMs()))
            return std::nullopt;
        m_health.backoffUntilMs = -1;
        m_health.lastPollMs = nowMs();
        ++m_health.requests;
        collector.reset();
        FetchResult answer = m_fetcher->fetch(method, url, body, headers, limits,
                                              [&collector](QByteArrayView piece) {
                                                  collector.feed(piece);
                                                  return true;
                                              });
        if (answer.problem == FetchProblem::Cancelled)
            return std::nullopt;
        const bool success = answer.status >= 200 && answer.status < 300;
        QString incomplete;
        if (answer.ok() && success && !collector.finish(answer.framedByClose, &incomplete)) {
            answer.problem = FetchProblem::CutOff;
            answer.error = incomplete;
        }
        if (answer.storeDateMs)
            m_storeNowMs = answer.storeDateMs;
        const bool throttled = answer.ok() && (answer.status == 429 || answer.status == 503);
        const bool transient =
            throttled || (answer.ok() && (answer.status == 502 || answer.status == 504)) ||
            answer.problem == FetchProblem::Network || answer.problem == FetchProblem::CutOff ||
            answer.problem == FetchProblem::Deadline;
        if (!transient) {
            if (answer.problem == FetchProblem::TooLarge)
                return answer; // the caller asks a smaller page, or gives up
            if (!answer.ok()) {
                noteFailure(answer.error); // another origin: not retried
                return std::nullopt;
            }
            if (success) {
                m_failures = 0;
                return answer;
            }
            // An error the store will answer again (400, 404, ...): counted once; the caller
            // may describe it better.
            noteFailure(describeFailure(answer, whoAnswers(m_source.kind)));
            return answer;
        }
        // Every failed attempt counts once, the last one too (and only here).
        ++m_failures;
        ++m_health.errors;
        if (throttled)
            ++m_health.storeThrottles;
        backOff(answer, throttled);
        if (attempt >= attempts) {
            m_health.lastError = QStringLiteral("gave up after %1 attempts: %2")
                                     .arg(attempts)
                                     .arg(m_health.lastError);
            return std::nullopt;
        }
    }
}

std::optional<QByteArray> Poller::clickHouseQuery(const QString &sql)
{
    QUrl url = m_source.endpoint;
    QUrlQuery query;
    query.addQueryItem(QStringLiteral("database"), m_source.database);
    // 64-bit integers as JSON numbers (ClickHouse quotes them by default).
    query.addQueryItem(QStringLiteral("output_format_json_quote_64bit_integers"), u"0"_qs);
    url.setQuery(query);
    WholeBody collector;
    const std::optional<FetchResult> answer =
        requestWithRetries("POST", url, sql.toUtf8(), "text/plain; charset=utf-8", collector);
    if (!answer)
        return std::nullopt;
    if (answer->problem == FetchProblem::TooLarge) {
        noteFailure(answer->error);
        return std::nullopt;
    }
    if (answer->status != 200)
        return std::nullopt; // counted and described by requestWithRetries
    return collector.body;
}

QString Poller::clickHouseTable() const
{
    return quoted(m_source.database) + u'.' + quoted(m_source.table);
}

bool Poller::discoverClickHouseColumns()
{
    if (!m_columns.isEmpty())
        return true;
    const QString sql =
        QStringLiteral("SELECT name, type FROM system.columns WHERE database = '%1' AND "
                       "table = '%2' FORMAT JSONEachRow")
            .arg(m_source.database, m_source.table); // plain identifiers (PollSource::parse)
    const std::optional<QByteArray> body = clickHouseQuery(sql);
    if (!body)
        return false;
    for (const QByteArray &line : body->split('\n')) {
        const QJsonObject object = QJsonDocument::fromJson(line).object();
        if (object.isEmpty())
            continue;
        m_columns.append({object.value(u"name").toString(), object.value(u"type").toString()});
        if (m_columns.constLast().first == u"ts")
            m_tsType = baseType(m_columns.constLast().second);
    }
    if (m_columns.isEmpty()) {
        noteFailure(
            QStringLiteral("ClickHouse: no table %1.%2").arg(m_source.database, m_source.table));
        return false;
    }
    if (m_tsType.isEmpty()) {
        noteFailure(QStringLiteral("ClickHouse: %1.%2 has no ts column (the columns carry the "
                                   "canonical log's field names)")
                        .arg(m_source.database, m_source.table));
        m_columns.clear();
        return false;
    }
    return true;
}

bool Poller::detectClickHouseTimeUnit()
{
    if (m_timeUnit != TimeUnit::Unknown)
        return true;
    if (m_tsType.startsWith(u"DateTime")) {
        m_timeUnit = TimeUnit::DateTime;
        return true;
    }
    if (!isNumericType(m_tsType)) {
        m_timeUnit = TimeUnit::Text;
        return true;
    }
    // Epoch seconds or milliseconds: one unit per table, told by its largest value (as the
    // canonical log tells a number below 10^11 from milliseconds).
    const std::optional<QByteArray> body = clickHouseQuery(
        QStringLiteral("SELECT toFloat64(max(`ts`)) AS m, count() AS n FROM %1 FORMAT JSONEachRow")
            .arg(clickHouseTable()));
    if (!body)
        return false;
    const QJsonObject object = QJsonDocument::fromJson(body->trimmed()).object();
    if (object.value(u"n").toDouble() <= 0)
        return true; // empty: Unknown until rows arrive (nothing to read meanwhile)
    m_timeUnit = object.value(u"m").toDouble() < 1e11 ? TimeUnit::Seconds : TimeUnit::Millis;
    return true;
}

// The row's time in whole seconds, as the store computes it: what it filters on.
QString Poller::clickHouseKeyExpression() const
{
    switch (m_timeUnit) {
    case TimeUnit::DateTime:
        return QStringLiteral("toUInt32(`ts`)");
    case TimeUnit::Seconds:
        return QStringLiteral("toUInt64(`ts`)");
    case TimeUnit::Millis:
        return QStringLiteral("intDiv(toUInt64(`ts`), 1000)");
    case TimeUnit::Unknown:
    case TimeUnit::Text:
        break;
    }
    return QStringLiteral("toUInt32(parseDateTimeBestEffort(`ts`))");
}

// The row's full time, what rows are ordered by within a second: a DateTime's milliseconds
// column (ms=) included, so polled rows replay in the order the same rows read from a file do.
QString Poller::clickHouseFullTimeExpression() const
{
    switch (m_timeUnit) {
    case TimeUnit::DateTime:
        return m_source.msColumn.isEmpty()
                   ? QStringLiteral("toUInt64(`ts`) * 1000")
                   : u"toUInt64(`ts`) * 1000 + toUInt64("_qs + quoted(m_source.msColumn) + u')';
    case TimeUnit::Seconds:
        return QStringLiteral("toUInt64(`ts`) * 1000");
    case TimeUnit::Millis:
        return QStringLiteral("toUInt64(`ts`)");
    case TimeUnit::Unknown:
    case TimeUnit::Text:
        break;
    }
    // RFC 3339 text of one zone and precision sorts as its time does.
    return QStringLiteral("`ts`");
}

// Conditions on the ts column itself where it can be, so the table's index on ts narrows the
// read (an expression of ts would scan the whole table at every request).
QString Poller::clickHouseFrom(qint64 lowSecond) const
{
    lowSecond = std::max<qint64>(0, lowSecond);
    switch (m_timeUnit) {
    case TimeUnit::DateTime:
        return QStringLiteral("`ts` >= toDateTime(%1)").arg(lowSecond);
    case TimeUnit::Seconds:
        return QStringLiteral("`ts` >= %1").arg(lowSecond);
    case TimeUnit::Millis:
        return QStringLiteral("`ts` >= %1").arg(lowSecond * 1000);
    case TimeUnit::Unknown:
    case TimeUnit::Text:
        break;
    }
    return QStringLiteral("%1 >= %2").arg(clickHouseKeyExpression()).arg(lowSecond);
}

QString Poller::clickHouseThrough(qint64 highSecond) const
{
    switch (m_timeUnit) {
    case TimeUnit::DateTime:
        return QStringLiteral("`ts` < toDateTime(%1)").arg(highSecond + 1);
    case TimeUnit::Seconds:
        return QStringLiteral("`ts` < %1").arg(highSecond + 1);
    case TimeUnit::Millis:
        return QStringLiteral("`ts` < %1").arg((highSecond + 1) * 1000);
    case TimeUnit::Unknown:
    case TimeUnit::Text:
        break;
    }
    return QStringLiteral("%1 <= %2").arg(clickHouseKeyExpression()).arg(highSecond);
}

QString Poller::clickHouseOrder() const
{
    return m_timeUnit == TimeUnit::Text ? clickHouseKeyExpression() : QStringLiteral("`ts`");
}

std::optional<Poller::Page> Poller::fetchClickHousePage(qint64 lowMs, int limit)
{
    if (!discoverClickHouseColumns() || !detectClickHouseTimeUnit())
        return std::nullopt;
    Page page;
    if (m_timeUnit == TimeUnit::Unknown)
        return page; // an empty table
    const qint64 lowSecond = std::max<qint64>(0, floorDiv(lowMs, 1000));
    // Two steps, so a page never cuts a second and reads only its range: the second the
    // limit falls in (one column read), then every row up to the end of that second.
    const std::optional<QByteArray> boundary =
        clickHouseQuery(QStringLiteral("SELECT %1 AS k FROM %2 WHERE %3 ORDER BY %4 LIMIT %5, 1 "
                                       "FORMAT JSONEachRow")
                            .arg(clickHouseKeyExpression(), clickHouseTable(),
                                 clickHouseFrom(lowSecond), clickHouseOrder())
                            .arg(limit));
    if (!boundary)
        return std::nullopt;
    qint64 boundarySecond = -1;
    if (!boundary->trimmed().isEmpty()) {
        const QJsonValue key = QJsonDocument::fromJson(boundary->trimmed()).object().value(u"k");
        const double second = key.toDouble(-1);
        if (!key.isDouble() || second < double(lowSecond) || second > 1e12 ||
            second != std::floor(second)) {
            noteFailure(QStringLiteral("ClickHouse answered a page boundary that is not a second "
                                       "from %1 on: %2")
                            .arg(lowSecond)
                            .arg(redact::quoteMasked(QString::fromUtf8(boundary->trimmed()), 60)));
            return std::nullopt;
        }
        boundarySecond = qint64(second);
    }
    page.full = boundarySecond >= 0;
    QString where = clickHouseFrom(lowSecond);
    if (page.full)
        where += u" AND "_qs + clickHouseThrough(boundarySecond);
    // The inner query filters on the table's own columns; the outer one names what it
    // prints (an alias "ts" in the inner one would replace the column in its WHERE).
    QString inner = u"*, "_qs + clickHouseKeyExpression() + u" AS __tskey, "_qs +
                    clickHouseFullTimeExpression() + u" AS __tsorder"_qs;
    QStringList select{u"__tskey"_qs};
    for (const auto &[name, type] : std::as_const(m_columns)) {
        if (name == m_source.msColumn)
            continue;
        if (name == u"ts" && m_timeUnit == TimeUnit::DateTime) {
            // A DateTime is printed in the server's time zone: as epoch ms instead.
            inner += u", "_qs + clickHouseFullTimeExpression() + u" AS __tsms"_qs;
            select << u"__tsms AS `ts`"_qs;
        } else {
            select << quoted(name);
        }
    }
    const QString sql = QStringLiteral("SELECT %1 FROM (SELECT %2 FROM %3 WHERE %4) ORDER BY "
                                       "__tskey, __tsorder FORMAT JSONEachRow")
                            .arg(select.join(u", "), inner, clickHouseTable(), where);
    QUrl url = m_source.endpoint;
    url.setQuery(QUrlQuery{{u"database"_qs, m_source.database},
                           {u"output_format_json_quote_64bit_integers"_qs, u"0"_qs}});
    RowCollector collector(page.rows);
    const std::optional<FetchResult> answer =
        requestWithRetries("POST", url, sql.toUtf8(), "text/plain; charset=utf-8", collector);
    if (!answer || (answer->ok() && answer->status != 200))
        return std::nullopt;
    if (answer->problem == FetchProblem::TooLarge) {
        page.tooLarge = true;
        page.tooLargeMessage = answer->error;
        return page;
    }
    if (!checkClickHouseKeys(page, lowSecond, boundarySecond))
        return std::nullopt;
    return page;
}

// The rows' keys, checked against what was asked: every row in [lowSecond, boundarySecond],
// in order. A store that ignores the filter, sorts otherwise or sends a key that is not a
// number would otherwise make the pager loop on the same rows (or skip rows for good).
bool Poller::checkClickHouseKeys(Page &page, qint64 lowSecond, qint64 boundarySecond)
{
    PageRows &rows = page.rows;
    qint64 previous = lowSecond;
    qsizetype oversize = 0;
    for (qsizetype i = 0; i < rows.lines.size(); ++i) {
        if (oversize < rows.oversize.size() && rows.oversize.at(oversize) == i) {
            ++oversize;
            rows.keys[i] = previous * 1000; // unknown: kept where it stands in the order
            continue;
        }
        qint64 second = 0;
        QByteArray row;
        QString error;
        if (!splitClickHouseRow(rows.lines.at(i), &second, &row, &error)) {
            noteFailure(error);
            return false;
        }
        if (second < previous || (boundarySecond >= 0 && second > boundarySecond)) {
            noteFailure(
                QStringLiteral("ClickHouse answered rows the query did not ask for (a row "
                               "of second %1 where seconds %2 to %3 were asked, in time "
                               "order): the store ignores the filter or the order; "
                               "stopped rather than read the same rows again")
                    .arg(second)
                    .arg(previous)
                    .arg(boundarySecond >= 0 ? QString::number(boundarySecond) : u"now"_qs));
            return false;
        }
        previous = second;
        rows.keys[i] = second * 1000;
        rows.lines[i] = std::move(row);
    }
    return true;
}

std::optional<Poller::Page> Poller::fetchKqlPage(qint64 lowMs, int limit)
{
    const QString tsColumn = m_source.kqlTimeColumn();
    const QString base = m_source.kqlQuery.isEmpty() ? m_source.table : m_source.kqlQuery;
    const QString kql = QStringLiteral("%1\n| where %2 >= datetime(%3)\n| order by %2 asc\n"
                                       "| take %4")
                            .arg(base, tsColumn, formatIsoMs(lowMs))
                            .arg(limit);
    QJsonObject request;
    request.insert(u"query"_qs, kql);
    WholeBody collector;
    const std::optional<FetchResult> answer = requestWithRetries(
        "POST", m_source.endpoint, QJsonDocument(request).toJson(QJsonDocument::Compact),
        "application/json", collector);
    if (!answer)
        return std::nullopt;
    Page page;
    if (answer->problem == FetchProblem::TooLarge) {
        page.tooLarge = true;
        page.tooLargeMessage = answer->error;
        return page;
    }
    QHash<QString, QString> fieldOfColumn;
    for (auto it = m_source.mapping.cbegin(); it != m_source.mapping.cend(); ++it)
        fieldOfColumn.insert(it.value(), it.key());
    KqlAnswer parsed;
    QString error;
    if (answer->status != 200) {
        // Counted by requestWithRetries; the API's error object says more than its status.
        if (parseKqlAnswer(answer->errorBody, {}, {}, &parsed, &error) && !parsed.error.isEmpty())
            m_health.lastError = QStringLiteral("the query API answered %1: %2")
                                     .arg(answer->status)
                                     .arg(parsed.error);
        return std::nullopt;
    }
    if (!parseKqlAnswer(collector.body, fieldOfColumn, tsColumn, &parsed, &error)) {
        noteFailure(error);
        return std::nullopt;
    }
    collector.body = QByteArray();
    if (!parsed.error.isEmpty()) {
        // A non-fatal error: 200 with the results and an error object (PartialError).
        page.partial = true;
        page.partialMessage = parsed.error;
    }
    if (!parsed.hasTables && !page.partial) {
        noteFailure(QStringLiteral("the query API answered without tables[]"));
        return std::nullopt;
    }
    page.rows.lines = std::move(parsed.rows);
    page.rows.keys = QList<qint64>(page.rows.lines.size(), -1);
    page.full = page.rows.lines.size() >= limit;
    return page;
}

std::optional<Poller::Page> Poller::fetchNdjsonPage(qint64 lowMs, int limit)
{
    QString url = m_source.endpoint.toString(QUrl::FullyEncoded);
    const QString ms = QString::number(lowMs);
    const QString iso = QString::fromLatin1(QUrl::toPercentEncoding(formatIsoMs(lowMs)));
    const QString rows = QString::number(limit);
    url.replace(u"%7Bcursor%7D"_qs, ms).replace(u"{cursor}"_qs, ms);
    url.replace(u"%7Bcursor_iso%7D"_qs, iso).replace(u"{cursor_iso}"_qs, iso);
    url.replace(u"%7Blimit%7D"_qs, rows).replace(u"{limit}"_qs, rows);
    Page page;
    RowCollector collector(page.rows);
    const std::optional<FetchResult> answer =
        requestWithRetries("GET", QUrl(url, QUrl::StrictMode), {}, {}, collector);
    if (!answer || (answer->ok() && answer->status != 200))
        return std::nullopt;
    if (answer->problem == FetchProblem::TooLarge) {
        page.tooLarge = true;
        page.tooLargeMessage = answer->error;
        return page;
    }
    // With {limit} the page is the poller's: full when it holds that many. Without, the
    // endpoint's page size is its own: asked again while answers bring newer rows (nextPage).
    page.full =
        m_source.takesPageSize() ? page.rows.lines.size() >= limit : !page.rows.lines.isEmpty();
    return page;
}

std::optional<Poller::Page> Poller::fetchPage(qint64 lowMs, int limit)
{
    switch (m_source.kind) {
    case SourceKind::ClickHouse:
        return fetchClickHousePage(lowMs, limit);
    case SourceKind::Kql:
        return fetchKqlPage(lowMs, limit);
    case SourceKind::NdjsonHttp:
        return fetchNdjsonPage(lowMs, limit);
    }
    return std::nullopt;
}

std::optional<Poller::Page> Poller::fetchFittingPage(qint64 lowMs, int *limit)
{
    const bool shrinks = m_source.kind != SourceKind::NdjsonHttp || m_source.takesPageSize();
    for (;;) {
        std::optional<Page> page = fetchPage(lowMs, *limit);
        if (!page || (!page->tooLarge && !page->partial))
            return page;
        m_unfit =
            Unfit{lowMs, *limit, page->tooLarge ? page->tooLargeMessage : page->partialMessage};
        if (shrinks && *limit > 1) {
            // Half the rows until the store can answer them whole (KQL's 64 MB / 500,000-row
            // result limit, the answer cap); the page grows back once past them (nextPage).
            *limit = std::max(1, *limit / 2);
            continue;
        }
        if (page->partial && !page->rows.lines.isEmpty())
            return page; // one row, answered with an error even alone: taken as answered
        if (!shrinks) {
            noteFailure(QStringLiteral("%1, and the endpoint takes no page size: put {limit} in "
                                       "its URL (the rows per answer) or raise max-answer=")
                            .arg(page->tooLargeMessage));
        } else {
            noteFailure(describeUnfit(lowMs, /*inclusive=*/true));
        }
        return std::nullopt;
    }
}

// One chunk of a page, parsed: the rows the cursor is asked about (keys) and where they are.
struct Poller::Chunk
{
    qsizetype start = 0;
    QList<RequestEvent> parsed;
    QList<QString> reasons;
    QList<bool> ok;
    QList<PollCursor::Row> keys;
    QList<qsizetype> where; // keys[k] is the row start + where[k]
};

// Parses rows [chunk.start, end) of the page. False when a row breaks what was asked
// (health().lastError says how).
bool Poller::readChunk(Page &page, qsizetype end, qint64 lowMs, AnswerScan &scan, Chunk &chunk)
{
    // KQL answers "ts >= low ORDER BY ts" (ClickHouse's keys were checked as they came): a row
    // outside that is a store not doing what was asked. An NDJSON endpoint may ignore the
    // filter (a static file) or its order; the cursor takes care of that.
    const bool strict = m_source.kind == SourceKind::Kql;
    PageRows &rows = page.rows;
    const qsizetype count = end - chunk.start;
    chunk.parsed = QList<RequestEvent>(count);
    chunk.reasons = QList<QString>(count);
    chunk.ok = QList<bool>(count, false);
    for (qsizetype i = chunk.start; i < end; ++i) {
        const qsizetype at = i - chunk.start;
        const QByteArray &line = rows.lines.at(i);
        quint64 hash = 0;
        if (scan.oversize < rows.oversize.size() && rows.oversize.at(scan.oversize) == i) {
            hash = rows.oversizeHashes.at(scan.oversize++);
            chunk.reasons[at] = QStringLiteral("row longer than %1 MiB: not read")
                                    .arg(kMaxRowBytes / (1024 * 1024));
        } else {
            chunk.ok[at] = m_reader->parseLine(line.constData(), line.size(), chunk.parsed[at],
                                               &chunk.reasons[at]);
            hash = rowHash(line.constData(), line.size());
        }
        qint64 key = rows.keys.at(i);
        if (key < 0) // the store's filter resolution is milliseconds
            key = chunk.ok[at] ? chunk.parsed[at].tsMs : scan.highest;
        rows.keys[i] = key;
        if (strict && (key < lowMs || key < scan.highest)) {
            noteFailure(QStringLiteral("%1 answered a row of %2 where rows from %3 on in time "
                                       "order were asked: it ignores the filter or the order; "
                                       "stopped rather than read them again")
                            .arg(whoAnswers(m_source.kind), formatIsoMs(key),
                                 formatIsoMs(std::max(lowMs, scan.highest))));
            return false;
        }
        // Identical rows sit together in a time-ordered answer (one run of their key): one
        // coming again after rows of another key is the store repeating itself, not another
        // request.
        if (scan.runs == 0 || key != scan.runKey) {
            ++scan.runs;
            scan.runKey = key;
        }
        const auto earlier = scan.runOf.constFind(hash);
        if (earlier != scan.runOf.cend() && *earlier != scan.runs) {
            ++m_health.repeatedRows;
            continue;
        }
        scan.runOf.insert(hash, scan.runs);
        scan.highest = std::max(scan.highest, key);
        chunk.keys.append({key, hash});
        chunk.where.append(at);
    }
    return true;
}

std::optional<Poller::Outcome> Poller::deliverPage(Page &page, qint64 lowMs, const Deliver &deliver,
                                                   qint64 *newestInPage, qsizetype *freshRows)
{
    const qint64 storeNow = m_storeNowMs.value_or(nowMs());
    const qint64 ceiling = storeNow + 999; // the Date header's resolution is a second
    m_cursor.beginAnswer(ceiling, ceiling + m_source.skewMs);
    AnswerScan scan;
    scan.highest = lowMs;
    const qsizetype total = page.rows.lines.size();
    for (qsizetype start = 0; start < total; start += kDeliverChunk) {
        Chunk chunk;
        chunk.start = start;
        if (!readChunk(page, std::min(total, start + kDeliverChunk), lowMs, scan, chunk)) {
            m_cursor.endAnswer();
            return Outcome::Failed;
        }
        QList<RequestEvent> events;
        QList<MalformedRecord> malformed;
        for (const qsizetype k : m_cursor.acceptChunk(chunk.keys)) {
            const qsizetype index = chunk.where.at(k);
            ++m_rowNumber;
            if (!chunk.ok.at(index)) {
                malformed.append(MalformedRecord(m_sourceName, m_rowNumber, chunk.reasons[index]));
                continue;
            }
            RequestEvent &event = chunk.parsed[index];
            event.source = m_sourceName;
            event.line = m_rowNumber;
            if (event.tsMs <= ceiling)
                m_health.lastEventTsMs = std::max(m_health.lastEventTsMs, event.tsMs);
            else if (event.tsMs > ceiling + m_source.skewMs)
                m_health.aheadMaxMs = std::max(m_health.aheadMaxMs, event.tsMs - storeNow);
            events.append(std::move(event));
        }
        *freshRows += events.size() + malformed.size();
        m_health.rows += events.size() + malformed.size();
        m_health.malformed += malformed.size();
        m_health.rowsAhead = m_cursor.rowsAhead();
        if (!events.isEmpty())
            m_health.lastEventReceivedMs = nowMs();
        // Nothing new: nothing to store (the cursor's window moves with the next new rows).
        if ((!events.isEmpty() || !malformed.isEmpty()) &&
            !deliver(std::move(events), std::move(malformed), m_cursor.save())) {
            m_cursor.endAnswer();
            return Outcome::Cancelled;
        }
    }
    m_cursor.endAnswer();
    *newestInPage = scan.highest;
    return std::nullopt;
}

Poller::Next Poller::nextPage(const Page &page, qint64 newestInPage, qsizetype freshRows,
                              qint64 *low, int *limit)
{
    const PageRows &rows = page.rows;
    if (!page.full || rows.lines.isEmpty())
        return Next::CaughtUp;
    const qint64 firstKey = rows.keys.constFirst();
    const qint64 lastKey = rows.keys.constLast();
    switch (m_source.kind) {
    case SourceKind::ClickHouse:
        // Pages end with a whole second (checked): the next starts at the one after.
        *low = lastKey + 1000;
        return Next::Again;
    case SourceKind::Kql:
        // The last key's group may be cut (take): the next page starts at it (its rows already
        // read are recognised by the cursor). A page of one key only: a larger page.
        if (lastKey <= *low || firstKey == lastKey) {
            *low = lastKey;
            return growPage(*low, limit);
        }
        // Back to the configured page, doubling from one shrunk to fit (fetchFittingPage).
        *limit = std::min(*limit * 2, m_source.pageRows);
        *low = lastKey;
        return Next::Again;
    case SourceKind::NdjsonHttp:
        return nextNdjsonPage(rows, newestInPage, freshRows, low, limit);
    }
    return Next::CaughtUp;
}

// A page holding nothing past `low` is asked again larger, unless that size could not be
// answered whole there before (the row after those of `low` does not fit: named) or the page
// cannot grow any more.
Poller::Next Poller::growPage(qint64 low, int *limit)
{
    const int grown = std::min(*limit * 2, kMaxPageRows);
    if (grown == *limit) {
        noteFailure(QStringLiteral("%1 keeps answering the same rows of %2 (%3 rows asked): no "
                                   "progress, stopped")
                        .arg(whoAnswers(m_source.kind), formatIsoMs(low))
                        .arg(*limit));
        return Next::Failed;
    }
    if (m_unfit && m_unfit->lowMs == low && grown >= m_unfit->limit) {
        noteFailure(describeUnfit(low, /*inclusive=*/false));
        return Next::Failed;
    }
    *limit = grown;
    return Next::Again;
}

QString Poller::describeUnfit(qint64 lowMs, bool inclusive)
{
    QString where = (inclusive ? u"at or after "_qs : u"after "_qs) + formatIsoMs(lowMs);
    if (m_source.kind == SourceKind::Kql) {
        if (const std::optional<qint64> at = kqlRowTime(lowMs, inclusive))
            where = u"at "_qs + formatIsoMs(*at);
    }
    const QString why = m_unfit ? m_unfit->message : QString();
    return QStringLiteral("the row %1 can never fit in one answer of %2 (%3): raise max-answer= "
                          "or read fewer columns (query=)")
        .arg(where, whoAnswers(m_source.kind), why);
}

// The time of the first row from lowMs on (after it when not inclusive), asked for alone:
// only its timestamp, so even a row too large to answer whole can be named.
std::optional<qint64> Poller::kqlRowTime(qint64 lowMs, bool inclusive)
{
    const QString tsColumn = m_source.kqlTimeColumn();
    const QString base = m_source.kqlQuery.isEmpty() ? m_source.table : m_source.kqlQuery;
    const QString kql =
        QStringLiteral("%1\n| where %2 %3 datetime(%4)\n| order by %2 asc\n"
                       "| take 1\n| project %2")
            .arg(base, tsColumn, inclusive ? u">="_qs : u">"_qs, formatIsoMs(lowMs));
    WholeBody collector;
    const std::optional<FetchResult> answer = requestWithRetries(
        "POST", m_source.endpoint,
        QJsonDocument(QJsonObject{{u"query"_qs, kql}}).toJson(QJsonDocument::Compact),
        "application/json", collector);
    KqlAnswer parsed;
    QString error;
    if (!answer || answer->status != 200 ||
        !parseKqlAnswer(collector.body, {}, tsColumn, &parsed, &error) || parsed.rows.isEmpty())
        return std::nullopt;
    const QString ts =
        QJsonDocument::fromJson(parsed.rows.constFirst()).object().value(u"ts").toString();
    return parseRfc3339Ms(QStringView(ts));
}

// The endpoint may limit its answers: asked again from the answer's newest row while that
// moves forward. An answer entirely of the cursor's instant is a page full of one instant:
// with {limit} it is asked again larger; without, or when the endpoint answers no more however
// many are asked, rows of that instant past its page cannot be reached, which is said rather
// than taken for "caught up".
Poller::Next Poller::nextNdjsonPage(const PageRows &rows, qint64 newestInPage, qsizetype freshRows,
                                    qint64 *low, int *limit)
{
    const int answerRows = int(rows.lines.size());
    const int previousRows = std::exchange(m_lastAnswerRows, answerRows);
    m_largestAnswerRows = std::max(m_largestAnswerRows, answerRows);
    if (newestInPage > *low) {
        *low = newestInPage;
        *limit = std::min(*limit * 2, m_source.pageRows); // back up from a page shrunk to fit
        m_grownAt.reset();
        return Next::Again;
    }
    const bool allAtLow = std::all_of(rows.keys.cbegin(), rows.keys.cend(),
                                      [low](qint64 key) { return key == *low; });
    if (!allAtLow)
        return Next::CaughtUp;
    if (freshRows > 0)
        return Next::Again; // the same page again: nothing new in it means it is all read
    if (m_source.takesPageSize()) {
        if (answerRows >= *limit) {
            m_grownAt = *low;
            return growPage(*low, limit);
        }
        if (m_grownAt != *low || answerRows != previousRows)
            return Next::CaughtUp;
        m_health.lastError = QStringLiteral("the endpoint answers %1 rows, all of %2, however many "
                                            "are asked ({limit}=%3): if it holds more of that "
                                            "instant they cannot be read past its page")
                                 .arg(answerRows)
                                 .arg(formatIsoMs(*low))
                                 .arg(*limit);
        return Next::Warned;
    }
    if (answerRows < 2 || answerRows != m_largestAnswerRows)
        return Next::CaughtUp;
    m_health.lastError = QStringLiteral("the endpoint answers %1 rows, all of %2, as many as its "
                                        "largest answer: if it holds more of that instant they "
                                        "cannot be read past its page; put {limit} in the URL "
                                        "(the rows per answer)")
                             .arg(answerRows)
                             .arg(formatIsoMs(*low));
    return Next::Warned;
}

Poller::Outcome Poller::pollOnce(const Deliver &deliver)
{
    qint64 low = m_cursor.lowBound(m_options.sinceMs);
    int limit = m_source.pageRows;
    for (;;) {
        if (m_options.cancel && m_options.cancel->load())
            return Outcome::Cancelled;
        std::optional<Page> page = fetchFittingPage(low, &limit);
        if (!page)
            return m_options.cancel && m_options.cancel->load() ? Outcome::Cancelled
                                                                : Outcome::Failed;
        qint64 newestInPage = low;
        qsizetype freshRows = 0;
        if (const auto stop = deliverPage(*page, low, deliver, &newestInPage, &freshRows))
            return *stop;
        m_health.lastSuccessMs = nowMs();
        m_health.lastError.clear();
        if (page->partial) {
            // A page of one row that came with a partial error: taken, named, and read past
            // (asked again it would come back the same, for ever).
            const qint64 key = page->rows.keys.value(0, low);
            ++m_health.errors;
            m_health.lastError = QStringLiteral("the row at %1 came with an error even alone "
                                                "(%2): stored as answered")
                                     .arg(formatIsoMs(key), page->partialMessage);
            low = std::max(low, key + 1);
            limit = std::min(2, m_source.pageRows); // grows back page by page (nextPage)
            continue;
        }
        switch (nextPage(*page, newestInPage, freshRows, &low, &limit)) {
        case Next::Again:
            continue;
        case Next::CaughtUp:
            return Outcome::CaughtUp;
        case Next::Warned:
            return Outcome::Partial;
        case Next::Failed:
            return Outcome::Failed;
        }
    }
}

std::optional<std::pair<qint64, qint64>> Poller::timeRange()
{
    if (m_source.kind != SourceKind::ClickHouse) {
        m_health.lastError = QStringLiteral("push-down needs a ClickHouse source");
        return std::nullopt;
    }
    if (!discoverClickHouseColumns() || !detectClickHouseTimeUnit())
        return std::nullopt;
    if (m_timeUnit == TimeUnit::Unknown)
        return std::pair<qint64, qint64>{0, -1};
    const QString key = clickHouseKeyExpression();
    const std::optional<QByteArray> body =
        clickHouseQuery(QStringLiteral("SELECT min(%1) AS lo, max(%1) AS hi, count() AS n FROM "
                                       "%2 FORMAT JSONEachRow")
                            .arg(key, clickHouseTable()));
    if (!body)
        return std::nullopt;
    const QJsonObject object = QJsonDocument::fromJson(body->trimmed()).object();
    if (object.value(u"n").toDouble() <= 0)
        return std::pair<qint64, qint64>{0, -1};
    return std::pair<qint64, qint64>{qint64(object.value(u"lo").toDouble()) * 1000,
                                     qint64(object.value(u"hi").toDouble()) * 1000};
}

std::optional<qint64>
Poller::pushDown(qint64 fromMs, qint64 toMs,
                 const std::function<bool(QList<AggregateRow> &&rows)> &deliver)
{
    if (m_source.kind != SourceKind::ClickHouse) {
        m_health.lastError = QStringLiteral("push-down needs a ClickHouse source");
        return std::nullopt;
    }
    if (!discoverClickHouseColumns() || !detectClickHouseTimeUnit())
        return std::nullopt;
    if (m_timeUnit == TimeUnit::Unknown)
        return 0;
    QSet<QString> present;
    for (const auto &[name, type] : std::as_const(m_columns))
        present.insert(name);
    // The grouping columns the table has; a missing one is the empty value.
    const QStringList textFields{u"service"_qs,  u"identity"_qs, u"app"_qs,      u"tenant"_qs,
                                 u"category"_qs, u"method"_qs,   u"errorCode"_qs};
    QStringList select{clickHouseKeyExpression() + u" AS sec"_qs};
    QStringList group{u"sec"_qs};
    for (const QString &field : textFields) {
        if (present.contains(field)) {
            select << quoted(field);
            group << quoted(field);
        }
    }
    if (present.contains(u"status"_qs)) {
        select << u"`status`"_qs;
        group << u"`status`"_qs;
    }
    select << u"count() AS n"_qs;
    // One URL of the group stands for all of it: policies classify requests by their URL
    // (Graph's OneNote limits, Fabric's API groups without a category column).
    if (present.contains(u"url"_qs))
        select << u"any(`url`) AS url"_qs;
    const bool credits = present.contains(u"credits"_qs);
    if (credits)
        select << u"sum(`credits`) AS c"_qs;
    qint64 total = 0;
    // A range per request: ten minutes at a time, so no answer is huge.
    constexpr qint64 kSliceSeconds = 600;
    const qint64 firstSecond = floorDiv(fromMs, 1000);
    const qint64 endSecond = floorDiv(toMs, 1000); // exclusive
    for (qint64 slice = firstSecond; slice < endSecond; slice += kSliceSeconds) {
        const qint64 sliceEnd = std::min(endSecond, slice + kSliceSeconds);
        const QString sql = QStringLiteral("SELECT %1 FROM %2 WHERE %3 AND %4 GROUP BY %5 "
                                           "ORDER BY sec FORMAT JSONEachRow")
                                .arg(select.join(u", "), clickHouseTable(), clickHouseFrom(slice),
                                     clickHouseThrough(sliceEnd - 1), group.join(u", "));
        const std::optional<QByteArray> body = clickHouseQuery(sql);
        if (!body)
            return std::nullopt;
        QList<AggregateRow> rows;
        for (const QByteArray &line : body->split('\n')) {
            if (line.isEmpty())
                continue;
            const QJsonObject object = QJsonDocument::fromJson(line).object();
            AggregateRow row;
            row.secondMs = qint64(object.value(u"sec").toDouble()) * 1000;
            row.service = object.value(u"service").toString();
            row.identity = object.value(u"identity").toString();
            row.app = object.value(u"app").toString();
            row.tenant = object.value(u"tenant").toString();
            row.category = object.value(u"category").toString();
            row.method = object.value(u"method").toString();
            row.errorCode = object.value(u"errorCode").toString();
            row.url = object.value(u"url").toString();
            row.status = object.value(u"status").toInt();
            row.count = qint64(object.value(u"n").toDouble());
            if (credits)
                row.credits = object.value(u"c").toDouble();
            total += row.count;
            rows.append(std::move(row));
        }
        ++m_health.requests;
        if (!rows.isEmpty() && !deliver(std::move(rows)))
            return total;
    }
    return total;
}

} // namespace ts::poll
