#include "pollcommand.h"

#include "core/timeparse.h"
#include "ingest/ingest.h"
#include "poll/poller.h"
#include "poll/pushdown.h"
#include "store/workspace.h"
#include "store/workspacewriter.h"

#include <QCommandLineParser>
#include <QDateTime>
#include <QElapsedTimer>
#include <QMutex>
#include <QTextStream>
#include <QThread>

#include <atomic>
#include <csignal>
#include <limits>
#include <memory>

namespace ts::app {

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

QTextStream &err()
{
    static QTextStream stream(stderr);
    return stream;
}

// SIGINT / SIGTERM: the poller stops at its next check (between requests, while waiting) and
// what it delivered is committed. A lock-free atomic store is all the handler does.
std::atomic<bool> g_stop{false};
void onStopSignal(int)
{
    g_stop.store(true);
}

QString formatAgo(qint64 ms)
{
    if (ms < 0)
        return u"-"_qs;
    return QString::number(double(QDateTime::currentMSecsSinceEpoch() - ms) / 1000.0, 'f', 1) +
           u" s ago"_qs;
}

QString statusText(const poll::PollSource &source, const poll::PollHealth &health)
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    QString text =
        QStringLiteral("poll %1 | %2 rows, %3 requests, %4 errors, %5 store throttles, "
                       "last poll %6, lag %7")
            .arg(poll::sourceKindName(source.kind))
            .arg(health.rows)
            .arg(health.requests)
            .arg(health.errors)
            .arg(health.storeThrottles)
            .arg(formatAgo(health.lastPollMs))
            .arg(health.lastEventTsMs < 0
                     ? u"-"_qs
                     : QString::number(double(now - health.lastEventTsMs) / 1000.0, 'f', 1) +
                           u" s"_qs);
    if (health.repeatedRows > 0)
        text += QStringLiteral(", %1 repeated rows dropped").arg(health.repeatedRows);
    if (const QString note = poll::aheadNote(health); !note.isEmpty())
        text += u", " + note;
    if (!health.lastError.isEmpty())
        text += u" | " + health.lastError;
    return text;
}

} // namespace

bool parseSinceArgument(const QString &text, qint64 *ms)
{
    if (const auto parsed = parseRfc3339Ms(QStringView(text))) {
        *ms = *parsed;
        return true;
    }
    bool ok = false;
    const double number = text.toDouble(&ok);
    if (ok) {
        if (const auto parsed = unixNumberToMs(number)) {
            *ms = *parsed;
            return true;
        }
    }
    return false;
}

QString pollSourceHelp()
{
    return u"  --source URL            the store to read, one of\n"
           u"                            clickhouse://HOST:PORT/DATABASE/TABLE\n"
           u"                            kql+https://HOST/v1/workspaces/ID/query?table=T&map=...\n"
           u"                            https://HOST/PATH?after={cursor}  (NDJSON answers)\n"
           u"                          options as URL parameters: overlap=S page=N user=NAME\n"
           u"                          password-env=VAR password-file=F token-env=VAR\n"
           u"                          token-file=F ms=COLUMN table=T query=KQL\n"
           u"                          map=FIELD=COLUMN,... skew=S timeout=S retries=N\n"
           u"                          max-answer=MB (never a secret in the URL); an NDJSON\n"
           u"                          URL may hold {limit} (rows per answer)\n"
           u"  --since T               read rows from T on (RFC 3339 or Unix s/ms; default:\n"
           u"                          everything, or where the workspace's cursor stands)\n"_qs;
}

bool readPolledSource(const QString &url, qint64 sinceMs, bool pushDown, IngestSink &sink,
                      qint64 *rows, QString *error, QStringList *notes)
{
    const std::optional<poll::PollSource> source = poll::PollSource::parse(url, error);
    if (!source)
        return false;
    *rows = 0;
    // The requests run on a worker thread (a Poller belongs to the thread that made it); the
    // sink is fed there too, the caller waiting.
    bool ok = false;
    std::unique_ptr<QThread> worker(QThread::create([&] {
        poll::Poller::Options options;
        options.sinceMs = sinceMs;
        options.cancel = &g_stop;
        poll::Poller poller(*source, options);
        if (pushDown) {
            const auto range = poller.timeRange();
            if (!range) {
                *error = url + u": " + poller.health().lastError;
                return;
            }
            const auto total = poller.pushDown(
                std::max(sinceMs, range->first), range->second + 1000,
                [&](QList<poll::AggregateRow> &&aggregates) {
                    poll::chargesFromAggregates(aggregates, source->url,
                                                [&](std::vector<RequestEvent> &&charges) {
                                                    sink.onEvents(std::move(charges));
                                                });
                    return !g_stop.load();
                });
            if (!total) {
                *error = url + u": " + poller.health().lastError;
                return;
            }
            *rows = *total;
            ok = true;
            return;
        }
        const poll::Poller::Outcome outcome =
            poller.pollOnce([&](QList<RequestEvent> &&events, QList<MalformedRecord> &&malformed,
                                const QByteArray &) {
                *rows += events.size() + malformed.size();
                sink.onEvents(std::vector<RequestEvent>(std::make_move_iterator(events.begin()),
                                                        std::make_move_iterator(events.end())));
                for (MalformedRecord &record : malformed)
                    sink.onMalformed(std::move(record));
                return true;
            });
        if (outcome == poll::Poller::Outcome::Failed ||
            outcome == poll::Poller::Outcome::Cancelled) {
            *error = url + u": " +
                     (poller.health().lastError.isEmpty() ? u"interrupted"_qs
                                                          : poller.health().lastError);
            return;
        }
        if (outcome == poll::Poller::Outcome::Partial)
            err() << "warning: " << url << ": " << poller.health().lastError << Qt::endl;
        if (const QString note = poll::aheadNote(poller.health()); !note.isEmpty() && notes)
            notes->append(source->url + u": " + note);
        ok = true;
    }));
    worker->start();
    worker->wait();
    return ok;
}

namespace {

// What `poll`'s command line asks for.
struct PollArguments
{
    QString workspacePath;
    poll::PollSource source;
    double everySeconds = 5;
    int statusSeconds = 5;
    qint64 sinceMs = 0;
    bool once = false;
};

// Parses the command line; an exit code when there is nothing more to do (help, bad usage).
std::optional<int> parsePollArguments(const QStringList &args, PollArguments *parsed)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        u"Poll a log store (ClickHouse, Azure Monitor Logs / Application Insights, an NDJSON "
        u"endpoint) into a workspace, every row exactly once; a restart resumes from the "
        u"cursor stored in the workspace."_qs);
    parser.addHelpOption();
    const QCommandLineOption workspaceOption(u"workspace"_qs, u"Workspace file to write into."_qs,
                                             u"WS"_qs);
    const QCommandLineOption sourceOption(
        u"source"_qs,
        u"The store: clickhouse://HOST:PORT/DB/TABLE, kql+https://HOST/v1/workspaces/ID/"
        u"query?table=T&map=..., or an NDJSON URL with {cursor} (and {limit}). Options as URL "
        u"parameters (overlap=S page=N user=NAME password-env=VAR password-file=F "
        u"token-env=VAR token-file=F ms=COLUMN table=T query=KQL map=FIELD=COLUMN,... skew=S "
        u"timeout=S retries=N max-answer=MB)."_qs,
        u"URL"_qs);
    const QCommandLineOption everyOption(u"every"_qs, u"Seconds between polls."_qs, u"S"_qs,
                                         u"5"_qs);
    const QCommandLineOption onceOption(u"once"_qs, u"Poll until caught up once, then exit."_qs);
    const QCommandLineOption sinceOption(
        u"since"_qs,
        u"Read rows from T on (RFC 3339 or Unix s/ms) when the workspace has no cursor for "
        u"the source yet."_qs,
        u"T"_qs);
    const QCommandLineOption statusOption(u"status-interval"_qs,
                                          u"Seconds between status lines on stderr (0 = none)."_qs,
                                          u"S"_qs, u"5"_qs);
    parser.addOptions(
        {workspaceOption, sourceOption, everyOption, onceOption, sinceOption, statusOption});
    if (!parser.parse(QStringList{u"throttlescope poll"_qs} + args)) {
        err() << "throttlescope poll: " << parser.errorText() << Qt::endl;
        return kExitUsage;
    }
    auto usage = [&](const QString &message) {
        if (!message.isEmpty())
            err() << "error: " << message << Qt::endl;
        err() << parser.helpText();
        return kExitUsage;
    };
    if (parser.isSet(u"help"_qs)) {
        QTextStream(stdout) << parser.helpText();
        return kExitOk;
    }
    if (!parser.positionalArguments().isEmpty())
        return usage(u"poll: unexpected argument " + parser.positionalArguments().constFirst());
    parsed->workspacePath = parser.value(workspaceOption);
    const QString url = parser.value(sourceOption);
    if (parsed->workspacePath.isEmpty() || url.isEmpty())
        return usage(u"poll: give --workspace WS and --source URL"_qs);
    bool ok = false;
    parsed->everySeconds = parser.value(everyOption).toDouble(&ok);
    if (!ok || parsed->everySeconds < 0)
        return usage(u"poll: --every takes seconds"_qs);
    parsed->statusSeconds = parser.value(statusOption).toInt(&ok);
    if (!ok || parsed->statusSeconds < 0)
        return usage(u"poll: --status-interval takes seconds"_qs);
    if (parser.isSet(sinceOption) &&
        !parseSinceArgument(parser.value(sinceOption), &parsed->sinceMs))
        return usage(u"poll: --since takes an RFC 3339 time or Unix seconds / milliseconds"_qs);
    parsed->once = parser.isSet(onceOption);
    QString error;
    const std::optional<poll::PollSource> source = poll::PollSource::parse(url, &error);
    if (!source)
        return usage(error);
    parsed->source = *source;
    return std::nullopt;
}

// The source's row in the workspace (the URL, which carries no secret) and its stored cursor.
bool openPolledSource(const PollArguments &parsed, qint64 *sourceId,
                      std::optional<poll::PollCursor> *cursor)
{
    Workspace workspace;
    if (!workspace.open(parsed.workspacePath)) {
        err() << parsed.workspacePath << ": " << workspace.errorString() << Qt::endl;
        return false;
    }
    *sourceId =
        workspace.ensurePolledSource(parsed.source.url, poll::sourceKindName(parsed.source.kind));
    if (*sourceId == 0) {
        err() << parsed.workspacePath << ": " << workspace.errorString() << Qt::endl;
        return false;
    }
    if (const std::optional<QByteArray> state = workspace.pollCursor(*sourceId)) {
        *cursor = poll::PollCursor::restore(*state, parsed.source.overlapMs);
        if (!*cursor) {
            err() << parsed.workspacePath << ": the stored cursor of " << parsed.source.url
                  << " is unreadable" << Qt::endl;
            return false;
        }
    } else if (!workspace.errorString().isEmpty()) {
        err() << parsed.workspacePath << ": " << workspace.errorString() << Qt::endl;
        return false;
    }
    return true;
}

// The poller's thread's work: poll, hand each answer's rows to the writer with the cursor that
// covers them, again every --every seconds until stopped (or once). Its health is copied to
// *health (under *healthMutex) after each poll, for the status line.
int pollIntoWriter(const PollArguments &parsed, qint64 sourceId,
                   const std::optional<poll::PollCursor> &cursor, WorkspaceWriter &writer,
                   QMutex *healthMutex, poll::PollHealth *health)
{
    int result = kExitOk;
    poll::Poller::Options options;
    options.sinceMs = parsed.sinceMs;
    options.cancel = &g_stop;
    poll::Poller poller(parsed.source, options);
    if (cursor)
        poller.setCursor(*cursor);
    auto deliver = [&](QList<RequestEvent> &&events, QList<MalformedRecord> &&malformed,
                       const QByteArray &state) {
        WriteBatch batch;
        batch.sourceId = sourceId;
        batch.events = std::move(events);
        batch.malformed = std::move(malformed);
        batch.pollCursor = state; // committed with these rows, or not at all
        if (!writer.submit(std::move(batch))) {
            err() << "error: " << parsed.workspacePath << ": " << writer.errorString() << Qt::endl;
            result = kExitFailure;
            return false;
        }
        return true;
    };
    const QString &url = parsed.source.url;
    while (!g_stop.load()) {
        const poll::Poller::Outcome outcome = poller.pollOnce(deliver);
        {
            QMutexLocker locker(healthMutex);
            *health = poller.health();
        }
        if (outcome == poll::Poller::Outcome::Cancelled)
            break;
        const bool failed = outcome == poll::Poller::Outcome::Failed;
        if (failed || outcome == poll::Poller::Outcome::Partial) {
            err() << (failed && parsed.once ? "error: " : "warning: ") << url << ": "
                  << poller.health().lastError << Qt::endl;
        }
        if (parsed.once) {
            if (failed)
                result = kExitFailure;
            break;
        }
        QElapsedTimer waited;
        waited.start();
        while (!g_stop.load() && waited.elapsed() < qint64(parsed.everySeconds * 1000))
            QThread::msleep(50);
    }
    return result;
}

} // namespace

int runPoll(const QStringList &args)
{
    PollArguments parsed;
    if (const std::optional<int> exit = parsePollArguments(args, &parsed))
        return *exit;
    qint64 sourceId = 0;
    std::optional<poll::PollCursor> cursor;
    if (!openPolledSource(parsed, &sourceId, &cursor))
        return kExitFailure;

    WorkspaceWriter writer;
    WorkspaceWriter::Options writerOptions;
    writerOptions.maxQueuedRecords = 65536;
    if (!writer.start(parsed.workspacePath, writerOptions)) {
        err() << parsed.workspacePath << ": " << writer.errorString() << Qt::endl;
        return kExitFailure;
    }

    g_stop.store(false);
    struct sigaction action = {};
    struct sigaction oldInt = {};
    struct sigaction oldTerm = {};
    action.sa_handler = onStopSignal;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &oldInt);
    ::sigaction(SIGTERM, &action, &oldTerm);

    // The poller's thread: requests, parsing, and handing batches to the writer.
    std::atomic<int> result{kExitOk};
    // Written by the poller's thread after each poll, read by this one for the status line.
    QMutex healthMutex; // protects `health`
    poll::PollHealth health;
    std::unique_ptr<QThread> worker(QThread::create(
        [&] { result = pollIntoWriter(parsed, sourceId, cursor, writer, &healthMutex, &health); }));
    worker->start();
    QElapsedTimer statusClock;
    statusClock.start();
    while (!worker->wait(100)) {
        if (parsed.statusSeconds > 0 && statusClock.elapsed() >= parsed.statusSeconds * 1000) {
            statusClock.restart();
            QMutexLocker locker(&healthMutex);
            err() << statusText(parsed.source, health) << Qt::endl;
        }
    }
    ::sigaction(SIGINT, &oldInt, nullptr);
    ::sigaction(SIGTERM, &oldTerm, nullptr);
    if (!writer.finish()) {
        err() << "error: " << parsed.workspacePath << ": " << writer.errorString() << Qt::endl;
        return kExitFailure;
    }
    if (parsed.statusSeconds > 0 || parsed.once)
        err() << statusText(parsed.source, health) << Qt::endl;
    return result.load();
}

} // namespace ts::app
