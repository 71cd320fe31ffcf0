#include "poller.h"

#include "core/timeparse.h"
#include "ingest/ndjsonreader.h"
#include "ingest/redaction.h"
#include "signals/throttlesignals.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QSet>
#include <QThread>
#include <QTimer>
#include <QUrlQuery>

#include <algorithm>

namespace ts::poll {

namespace {

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

// Canonical fields that are numbers (a KQL column may carry them as text: App Insights'
// resultCode is a string).
bool isNumericField(const QString &field)
{
    return field == u"status" || field == u"durationMs" || field == u"attempt" ||
           field == u"batchIndex" || field == u"credits";
}

} // namespace

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
    return status;
}

struct Poller::Answer
{
    int status = 0; // HTTP status, 0 = no answer (network error)
    QByteArray body;
    QByteArray retryAfter;
    QString networkError;
};

struct Poller::Page
{
    QList<QByteArray> lines;
    QList<qint64> keys; // per line, -1 = from the parsed row's ts
    bool full = false;  // the page hit its row limit: the last key's group may be cut
    bool partial = false;
    QString partialMessage;
};

Poller::Poller(PollSource source, Options options)
    : m_source(std::move(source)), m_options(options), m_cursor(m_source.overlapMs),
      m_sourceName(m_source.url), m_network(std::make_unique<QNetworkAccessManager>()),
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

std::optional<Poller::Answer> Poller::request(const QByteArray &method, const QUrl &url,
                                              const QByteArray &body, const QByteArray &contentType)
{
    QNetworkRequest request(url);
    request.setTransferTimeout(m_options.requestTimeoutMs);
    request.setRawHeader("User-Agent", "throttlescope-poll/" THROTTLESCOPE_VERSION);
    if (!contentType.isEmpty())
        request.setHeader(QNetworkRequest::ContentTypeHeader, contentType);
    QString secretError;
    const QString secret = m_source.secret(&secretError);
    if (!secretError.isEmpty()) {
        Answer answer;
        answer.networkError = secretError;
        answer.status = -1; // not retryable
        return answer;
    }
    if (m_source.kind == SourceKind::ClickHouse) {
        if (!m_source.user.isEmpty())
            request.setRawHeader("X-ClickHouse-User", m_source.user.toUtf8());
        if (!secret.isEmpty())
            request.setRawHeader("X-ClickHouse-Key", secret.toUtf8());
    } else if (!secret.isEmpty()) {
        request.setRawHeader("Authorization", "Bearer " + secret.toUtf8());
    }
    QNetworkReply *reply =
        method == "POST" ? m_network->post(request, body) : m_network->get(request);
    QEventLoop loop;
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    QTimer cancelCheck;
    QObject::connect(&cancelCheck, &QTimer::timeout, &loop, [this, reply] {
        if (m_options.cancel && m_options.cancel->load())
            reply->abort();
    });
    cancelCheck.start(100);
    if (!reply->isFinished())
        loop.exec();
    Answer answer;
    answer.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    answer.body = reply->readAll();
    answer.retryAfter = reply->rawHeader("Retry-After");
    if (reply->error() != QNetworkReply::NoError && answer.status == 0)
        answer.networkError = reply->errorString();
    reply->deleteLater();
    if (m_options.cancel && m_options.cancel->load())
        return std::nullopt;
    return answer;
}

std::optional<Poller::Answer> Poller::requestWithRetries(const QByteArray &method, const QUrl &url,
                                                         const QByteArray &body,
                                                         const QByteArray &contentType)
{
    for (int attempt = 0;; ++attempt) {
        if (m_health.backoffUntilMs > nowMs() && !waitMs(m_health.backoffUntilMs - nowMs()))
            return std::nullopt;
        m_health.backoffUntilMs = -1;
        m_health.lastPollMs = nowMs();
        ++m_health.requests;
        std::optional<Answer> answer = request(method, url, body, contentType);
        if (!answer)
            return std::nullopt;
        const int status = answer->status;
        const bool throttled = status == 429 || status == 503;
        const bool transient = throttled || status == 0 || status == 502 || status == 504;
        if (!transient) {
            if (status >= 200 && status < 300)
                m_failures = 0;
            return answer;
        }
        ++m_failures;
        ++m_health.errors;
        // The store's own Retry-After wins; without one, exponential backoff from 1 s.
        qint64 delayMs =
            std::min<qint64>(m_options.maxBackoffMs, 1000LL << std::min(m_failures - 1, 16));
        if (throttled) {
            ++m_health.storeThrottles;
            if (!answer->retryAfter.isEmpty()) {
                if (const auto told = throttle::parseRetryAfterDelayMs(
                        QString::fromLatin1(answer->retryAfter), nowMs())) {
                    delayMs = std::clamp<qint64>(*told, 0, m_options.maxBackoffMs);
                }
            }
            m_health.lastError = QStringLiteral("the store answered %1 (busy): asking again in "
                                                "%2 s")
                                     .arg(status)
                                     .arg(double(delayMs) / 1000.0);
        } else {
            m_health.lastError = status == 0
                                     ? answer->networkError
                                     : QStringLiteral("the store answered %1: asking again in %2 s")
                                           .arg(status)
                                           .arg(double(delayMs) / 1000.0);
        }
        m_health.backoffUntilMs = nowMs() + delayMs;
        if (attempt + 1 >= m_options.maxRetries)
            return answer; // the caller reports it
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
    const std::optional<Answer> answer =
        requestWithRetries("POST", url, sql.toUtf8(), "text/plain; charset=utf-8");
    if (!answer)
        return std::nullopt;
    if (answer->status != 200) {
        m_health.lastError =
            answer->status <= 0
                ? answer->networkError
                : QStringLiteral("ClickHouse answered %1: %2")
                      .arg(answer->status)
                      .arg(redact::quoteMasked(QString::fromUtf8(answer->body).trimmed(), 300));
        if (answer->status > 0 && answer->status != 429 && answer->status != 503)
            ++m_health.errors;
        return std::nullopt;
    }
    return answer->body;
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
        m_health.lastError =
            QStringLiteral("ClickHouse: no table %1.%2").arg(m_source.database, m_source.table);
        ++m_health.errors;
        return false;
    }
    if (m_tsType.isEmpty()) {
        m_health.lastError = QStringLiteral("ClickHouse: %1.%2 has no ts column (the columns "
                                            "carry the canonical log's field names)")
                                 .arg(m_source.database, m_source.table);
        ++m_health.errors;
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

std::optional<Poller::Page> Poller::fetchPage(qint64 lowMs, int limit)
{
    Page page;
    switch (m_source.kind) {
    case SourceKind::ClickHouse: {
        if (!discoverClickHouseColumns() || !detectClickHouseTimeUnit())
            return std::nullopt;
        if (m_timeUnit == TimeUnit::Unknown)
            return page; // an empty table
        const qint64 lowSecond = floorDiv(lowMs, 1000);
        // Two steps, so a page never cuts a second and reads only its range: the second the
        // limit falls in (one column read), then every row up to the end of that second.
        const std::optional<QByteArray> boundary = clickHouseQuery(
            QStringLiteral("SELECT %1 AS k FROM %2 WHERE %3 ORDER BY %4 LIMIT %5, 1 "
                           "FORMAT JSONEachRow")
                .arg(clickHouseKeyExpression(), clickHouseTable(), clickHouseFrom(lowSecond),
                     clickHouseOrder())
                .arg(limit));
        if (!boundary)
            return std::nullopt;
        const QJsonObject boundaryRow = QJsonDocument::fromJson(boundary->trimmed()).object();
        page.full = !boundaryRow.isEmpty();
        QString where = clickHouseFrom(lowSecond);
        if (page.full) {
            where += u" AND "_qs + clickHouseThrough(qint64(boundaryRow.value(u"k").toDouble()));
        }
        // The inner query filters on the table's own columns; the outer one names what it
        // prints (an alias "ts" in the inner one would replace the column in its WHERE).
        QString inner = u"*, "_qs + clickHouseKeyExpression() + u" AS __tskey"_qs;
        QStringList select{u"__tskey"_qs};
        for (const auto &[name, type] : std::as_const(m_columns)) {
            if (name == m_source.msColumn)
                continue;
            if (name == u"ts" && m_timeUnit == TimeUnit::DateTime) {
                // A DateTime is printed in the server's time zone: as epoch ms instead.
                inner += u", toUInt64(`ts`) * 1000"_qs +
                         (m_source.msColumn.isEmpty()
                              ? QString()
                              : u" + toUInt64(" + quoted(m_source.msColumn) + u')') +
                         u" AS __tsms"_qs;
                select << u"__tsms AS `ts`"_qs;
            } else {
                select << quoted(name);
            }
        }
        // Within a second, by the full time (issue 30.4): the milliseconds of a DateTime are
        // in their own column, those of an epoch in ts itself. Polled rows replay in exactly
        // the order the same rows read from a file do.
        QString order = u"__tskey"_qs;
        if (m_timeUnit == TimeUnit::DateTime && !m_source.msColumn.isEmpty())
            order += u", __tsms"_qs;
        else if (m_timeUnit == TimeUnit::Millis)
            order += u", `ts`"_qs;
        const QString sql =
            QStringLiteral("SELECT %1 FROM (SELECT %2 FROM %3 WHERE %4) ORDER BY %5 "
                           "FORMAT JSONEachRow")
                .arg(select.join(u", "), inner, clickHouseTable(), where, order);
        const std::optional<QByteArray> body = clickHouseQuery(sql);
        if (!body)
            return std::nullopt;
        static constexpr QByteArrayView kKeyPrefix = "{\"__tskey\":";
        qsizetype start = 0;
        while (start < body->size()) {
            qsizetype end = body->indexOf('\n', start);
            if (end < 0)
                end = body->size();
            QByteArrayView line(body->constData() + start, end - start);
            start = end + 1;
            if (line.isEmpty())
                continue;
            qint64 key = -1;
            if (line.startsWith(kKeyPrefix)) {
                const qsizetype comma = line.indexOf(',');
                const qsizetype close = comma < 0 ? line.size() - 1 : comma;
                key = line.sliced(kKeyPrefix.size(), close - kKeyPrefix.size()).toLongLong() * 1000;
                page.lines.append(comma < 0
                                      ? QByteArray("{}")
                                      : QByteArray("{") + line.sliced(comma + 1).toByteArray());
            } else {
                page.lines.append(line.toByteArray());
            }
            page.keys.append(key);
        }
        return page;
    }
    case SourceKind::Kql: {
        const QString tsColumn = m_source.kqlTimeColumn();
        const QString base = m_source.kqlQuery.isEmpty() ? m_source.table : m_source.kqlQuery;
        const QString kql = QStringLiteral("%1\n| where %2 >= datetime(%3)\n| order by %2 asc\n"
                                           "| take %4")
                                .arg(base, tsColumn, formatIsoMs(lowMs))
                                .arg(limit);
        QJsonObject request;
        request.insert(u"query"_qs, kql);
        const std::optional<Answer> answer = requestWithRetries(
            "POST", m_source.endpoint, QJsonDocument(request).toJson(QJsonDocument::Compact),
            "application/json");
        if (!answer)
            return std::nullopt;
        const QJsonObject document = QJsonDocument::fromJson(answer->body).object();
        const QJsonObject error = document.value(u"error").toObject();
        auto describe = [](const QJsonObject &oneApiError) {
            QString text = oneApiError.value(u"code").toString();
            const QString message = oneApiError.value(u"message").toString();
            if (!message.isEmpty())
                text += (text.isEmpty() ? QString() : u": "_qs) + message;
            const QJsonArray details = oneApiError.value(u"details").toArray();
            for (const QJsonValue &detail : details) {
                const QString more = detail.toObject().value(u"message").toString();
                if (!more.isEmpty())
                    text += u" (" + more + u')';
            }
            const QJsonObject inner = oneApiError.value(u"innererror").toObject();
            if (!inner.value(u"message").toString().isEmpty())
                text += u" (" + inner.value(u"message").toString() + u')';
            return redact::quoteMasked(text, 300);
        };
        if (answer->status != 200) {
            ++m_health.errors;
            m_health.lastError =
                answer->status <= 0
                    ? answer->networkError
                    : QStringLiteral("the query API answered %1: %2")
                          .arg(answer->status)
                          .arg(error.isEmpty()
                                   ? redact::quoteMasked(QString::fromUtf8(answer->body), 300)
                                   : describe(error));
            return std::nullopt;
        }
        if (!error.isEmpty()) {
            // A non-fatal error: 200 with the results and an error object (PartialError).
            page.partial = true;
            page.partialMessage = describe(error);
        }
        const QJsonArray tables = document.value(u"tables").toArray();
        if (tables.isEmpty()) {
            if (page.partial)
                return page;
            ++m_health.errors;
            m_health.lastError = QStringLiteral("the query API answered without tables[]");
            return std::nullopt;
        }
        const QJsonObject table = tables.at(0).toObject(); // PrimaryResult
        const QJsonArray columns = table.value(u"columns").toArray();
        QHash<QString, QString> fieldOfColumn;
        for (auto it = m_source.mapping.cbegin(); it != m_source.mapping.cend(); ++it)
            fieldOfColumn.insert(it.value(), it.key());
        QStringList fields;
        for (const QJsonValue &column : columns) {
            const QString name = column.toObject().value(u"name").toString();
            fields << fieldOfColumn.value(name, name == tsColumn ? u"ts"_qs : name);
        }
        const QJsonArray rows = table.value(u"rows").toArray();
        for (const QJsonValue &rowValue : rows) {
            const QJsonArray row = rowValue.toArray();
            QJsonObject object;
            for (qsizetype i = 0; i < row.size() && i < fields.size(); ++i) {
                QJsonValue value = row.at(i);
                if (value.isNull() || (value.isString() && value.toString().isEmpty()))
                    continue;
                if (isNumericField(fields.at(i)) && value.isString()) {
                    bool ok = false;
                    const double number = value.toString().toDouble(&ok);
                    if (ok)
                        value = number;
                }
                object.insert(fields.at(i), value);
            }
            page.lines.append(QJsonDocument(object).toJson(QJsonDocument::Compact));
            page.keys.append(-1);
        }
        page.full = page.lines.size() >= limit;
        return page;
    }
    case SourceKind::NdjsonHttp: {
        QString url = m_source.endpoint.toString(QUrl::FullyEncoded);
        const QString ms = QString::number(lowMs);
        const QString iso = QString::fromLatin1(QUrl::toPercentEncoding(formatIsoMs(lowMs)));
        url.replace(u"%7Bcursor%7D"_qs, ms).replace(u"{cursor}"_qs, ms);
        url.replace(u"%7Bcursor_iso%7D"_qs, iso).replace(u"{cursor_iso}"_qs, iso);
        const std::optional<Answer> answer =
            requestWithRetries("GET", QUrl(url, QUrl::StrictMode), {}, {});
        if (!answer)
            return std::nullopt;
        if (answer->status != 200) {
            ++m_health.errors;
            m_health.lastError =
                answer->status <= 0
                    ? answer->networkError
                    : QStringLiteral("the endpoint answered %1: %2")
                          .arg(answer->status)
                          .arg(redact::quoteMasked(QString::fromUtf8(answer->body).trimmed(), 300));
            return std::nullopt;
        }
        for (const QByteArray &line : answer->body.split('\n')) {
            if (line.trimmed().isEmpty())
                continue;
            page.lines.append(line.endsWith('\r') ? line.chopped(1) : line);
            page.keys.append(-1);
        }
        // The endpoint's page size is its own: another request is made while answers bring
        // new rows (pollOnce), so a limited answer is continued from its newest row.
        page.full = !page.lines.isEmpty();
        return page;
    }
    }
    return std::nullopt;
}

Poller::Outcome Poller::pollOnce(const Deliver &deliver)
{
    qint64 low = m_cursor.lowBound(m_options.sinceMs);
    int limit = m_source.pageRows;
    for (int pages = 0;; ++pages) {
        if (m_options.cancel && m_options.cancel->load())
            return Outcome::Cancelled;
        std::optional<Page> page = fetchPage(low, limit);
        if (!page)
            return m_options.cancel && m_options.cancel->load() ? Outcome::Cancelled
                                                                : Outcome::Failed;
        // Parse every row (the canonical reader: masking, malformed rows with their number),
        // then keep those the cursor has not seen.
        QList<PollCursor::Row> keys;
        keys.reserve(page->lines.size());
        QList<RequestEvent> parsed(page->lines.size());
        QList<QString> reasons(page->lines.size());
        QList<bool> ok(page->lines.size());
        for (qsizetype i = 0; i < page->lines.size(); ++i) {
            const QByteArray &line = page->lines.at(i);
            ok[i] = m_reader->parseLine(line.constData(), line.size(), parsed[i], &reasons[i]);
            qint64 key = page->keys.at(i);
            if (key < 0) // the store's filter resolution is milliseconds
                key = ok[i] ? parsed[i].tsMs : (keys.isEmpty() ? low : keys.constLast().key);
            keys.append({key, rowHash(line.constData(), line.size())});
        }
        if (page->partial) {
            // Rows are taken (the cursor remembers them) but the newest key does not move:
            // what the partial answer lacks is asked for again next time.
            const QList<qsizetype> fresh = m_cursor.accept(keys, /*moveNewest=*/false);
            QList<RequestEvent> events;
            QList<MalformedRecord> malformed;
            for (qsizetype index : fresh) {
                ++m_rowNumber;
                if (ok[index]) {
                    parsed[index].source = m_sourceName;
                    parsed[index].line = m_rowNumber;
                    events.append(std::move(parsed[index]));
                } else {
                    malformed.append(MalformedRecord(m_sourceName, m_rowNumber, reasons[index]));
                }
            }
            m_health.rows += events.size() + malformed.size();
            m_health.malformed += malformed.size();
            ++m_health.errors;
            m_health.lastError = QStringLiteral("partial answer (%1): asking again next poll")
                                     .arg(page->partialMessage);
            if (!deliver(std::move(events), std::move(malformed), m_cursor.save()))
                return Outcome::Cancelled;
            return Outcome::Partial;
        }
        const QList<qsizetype> fresh = m_cursor.accept(keys);
        QList<RequestEvent> events;
        QList<MalformedRecord> malformed;
        events.reserve(fresh.size());
        for (qsizetype index : fresh) {
            ++m_rowNumber;
            if (ok[index]) {
                parsed[index].source = m_sourceName;
                parsed[index].line = m_rowNumber;
                m_health.lastEventTsMs = std::max(m_health.lastEventTsMs, parsed[index].tsMs);
                events.append(std::move(parsed[index]));
            } else {
                malformed.append(MalformedRecord(m_sourceName, m_rowNumber, reasons[index]));
            }
        }
        m_health.rows += events.size() + malformed.size();
        m_health.malformed += malformed.size();
        m_health.lastSuccessMs = nowMs();
        m_health.lastError.clear();
        if (!events.isEmpty())
            m_health.lastEventReceivedMs = nowMs();
        const bool anyFresh = !fresh.isEmpty();
        // Nothing new: nothing to store (the cursor's window moves with the next new rows).
        if (anyFresh && !deliver(std::move(events), std::move(malformed), m_cursor.save())) {
            return Outcome::Cancelled;
        }
        if (!page->full || keys.isEmpty())
            return Outcome::CaughtUp;
        if (m_source.kind == SourceKind::NdjsonHttp) {
            // The endpoint may limit its answers: ask again from this answer's newest row
            // while that moves forward (it may hold only rows read before, from the overlap).
            qint64 newest = low;
            for (const PollCursor::Row &row : std::as_const(keys))
                newest = std::max(newest, row.key);
            if (newest <= low)
                return Outcome::CaughtUp;
            low = newest;
            continue;
        }
        // The last key's group may be cut (KQL's take): the next page starts at it (its rows
        // already read are recognised by the cursor). A page of one key only: a larger page.
        // (ClickHouse pages end with a whole second: the next starts at the one after.)
        const qint64 lastKey = keys.constLast().key;
        if (m_source.kind == SourceKind::ClickHouse) {
            low = lastKey + 1000;
            continue;
        }
        if (lastKey <= low || keys.constFirst().key == lastKey)
            limit = std::min(limit * 2, 1 << 24);
        else
            limit = m_source.pageRows;
        low = lastKey;
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
