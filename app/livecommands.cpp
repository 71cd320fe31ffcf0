#include "livecommands.h"

#include "core/timeparse.h"
#include "ingest/redaction.h"
#include "live/dashboardlistener.h"
#include "live/filetailer.h"
#include "live/ingestlistener.h"
#include "live/livesimulator.h"
#include "live/ndjsonformat.h"
#include "live/simulator.h"
#include "live/tailingest.h"
#include "store/workspace.h"
#include "store/workspacewriter.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDateTime>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QMutex>
#include <QMutexLocker>
#include <QSocketNotifier>
#include <QTextStream>
#include <QTimer>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <sys/socket.h>
#include <unistd.h>

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

// ---- SIGINT / SIGTERM -> quit the event loop (self-pipe: the handler only writes a byte) ----

int g_signalPipe[2] = {-1, -1};

void onSignal(int)
{
    const char byte = 1;
    // Nothing else is async-signal-safe enough to do here.
    [[maybe_unused]] const ssize_t ignored = ::write(g_signalPipe[0], &byte, 1);
}

class QuitOnSignal
{
public:
    QuitOnSignal()
    {
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, g_signalPipe) != 0)
            return;
        m_notifier = std::make_unique<QSocketNotifier>(g_signalPipe[1], QSocketNotifier::Read);
        QObject::connect(
            m_notifier.get(), &QSocketNotifier::activated, QCoreApplication::instance(), [this] {
                char byte = 0;
                [[maybe_unused]] const ssize_t ignored = ::read(g_signalPipe[1], &byte, 1);
                m_received = true;
                QCoreApplication::quit();
            });
        struct sigaction action = {};
        action.sa_handler = onSignal;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESTART;
        ::sigaction(SIGINT, &action, &m_oldInt);
        ::sigaction(SIGTERM, &action, &m_oldTerm);
    }
    ~QuitOnSignal()
    {
        ::sigaction(SIGINT, &m_oldInt, nullptr);
        ::sigaction(SIGTERM, &m_oldTerm, nullptr);
        m_notifier.reset();
        for (int &fd : g_signalPipe) {
            if (fd >= 0)
                ::close(fd);
            fd = -1;
        }
    }
    [[nodiscard]] bool received() const { return m_received; }

private:
    std::unique_ptr<QSocketNotifier> m_notifier;
    struct sigaction m_oldInt = {};
    struct sigaction m_oldTerm = {};
    bool m_received = false;
};

// ---- where events end up: a workspace and/or a canonical NDJSON file -------------------------
//
// With a workspace, --out follows what the workspace committed, in commit order (it is written
// from the writer's onSettled, after each COMMIT): a kill can leave --out short of the last
// transaction, never holding lines the workspace does not have, so a restarted tail (which
// resumes from the workspace's ledger) appends no duplicates. Without a workspace --out is the
// store itself.

class LiveOutput
{
public:
    struct Settings
    {
        QString workspacePath;
        QString outPath;
        // tail and serve add to an existing file (a restart continues it); the simulator
        // writes a whole session and replaces it.
        bool appendToOut = true;
        // serve: clients are told their records are stored. A failed transaction is answered
        // 503 and the writer goes on; without a workspace each write to --out reaches the
        // disk (fdatasync) before it is acknowledged.
        bool acknowledged = false;
    };

    LiveOutput() = default;
    LiveOutput(const LiveOutput &) = delete;
    LiveOutput &operator=(const LiveOutput &) = delete;
    ~LiveOutput()
    {
        // Its last onSettled calls use the members below.
        if (m_writer)
            m_writer->finish();
    }

    bool open(const Settings &settings, QString *error)
    {
        if (settings.workspacePath.isEmpty() && settings.outPath.isEmpty()) {
            *error = QStringLiteral("nowhere to write: give --workspace WS and/or --out FILE");
            return false;
        }
        m_syncOut = settings.acknowledged && settings.workspacePath.isEmpty();
        // Opened before the writer starts: with a workspace, the writer's thread writes it.
        if (!settings.outPath.isEmpty()) {
            m_out.setFileName(settings.outPath);
            // Unbuffered: a failed write is known at once and can be cut off again.
            if (!m_out.open(QIODevice::WriteOnly | QIODevice::Unbuffered |
                            (settings.appendToOut ? QIODevice::Append : QIODevice::Truncate))) {
                *error = QStringLiteral("%1: %2").arg(settings.outPath, m_out.errorString());
                return false;
            }
        }
        if (!settings.workspacePath.isEmpty()) {
            if (!m_workspace.open(settings.workspacePath)) {
                *error = m_workspace.errorString();
                return false;
            }
            m_writer = std::make_unique<WorkspaceWriter>();
            WorkspaceWriter::Options options;
            // Live data trickles in: small transactions often, and the query indexes stay
            // maintained (the dashboard may read the workspace meanwhile).
            options.maxQueuedRecords = 8192;
            options.continueAfterFailedTransaction = settings.acknowledged;
            options.onSettled = [this](const std::deque<WriteBatch> &batches,
                                       const QString &writeError) {
                onSettled(batches, writeError);
            };
            if (!m_writer->start(settings.workspacePath, options)) {
                *error = m_writer->errorString();
                return false;
            }
        }
        return true;
    }

    [[nodiscard]] bool hasWorkspace() const { return m_writer != nullptr; }
    Workspace &workspace() { return m_workspace; }

    // A source row for a live source; `identity` tells files of the same name apart.
    qint64 sourceId(const QString &path, const QString &identity)
    {
        if (!m_writer)
            return 0;
        const QString key = path + u'\n' + identity;
        if (const auto it = m_sourceIds.constFind(key); it != m_sourceIds.cend())
            return it.value();
        qint64 id = 0;
        const QByteArray fingerprint = identity.toUtf8();
        for (const SourceRecord &source : m_workspace.sources()) {
            if (source.path == path && source.fingerprint == fingerprint)
                id = source.id;
        }
        if (id == 0) {
            id = m_workspace.addSource(path, QStringLiteral("ndjson"),
                                       QDateTime::currentMSecsSinceEpoch(), 0, fingerprint);
        }
        if (id == 0)
            err() << "warning: cannot record source " << path << ": " << m_workspace.errorString()
                  << Qt::endl;
        m_sourceIds.insert(key, id);
        return id;
    }

    // tail and simulate: blocks while the workspace's queue is full. False once nothing more
    // can be stored.
    bool write(qint64 sourceId, QList<RequestEvent> &&events, QList<MalformedRecord> &&malformed,
               std::optional<LedgerCheckpoint> checkpoint)
    {
        if (m_writer) {
            WriteBatch batch;
            batch.sourceId = sourceId;
            batch.events = std::move(events);
            batch.malformed = std::move(malformed);
            batch.checkpoint = checkpoint;
            if (!m_writer->submit(std::move(batch))) {
                err() << "error: workspace: " << m_writer->errorString() << Qt::endl;
                return false;
            }
            return !m_outFailed;
        }
        QString error;
        if (!appendOut(ndjsonLines(events), &error)) {
            err() << "error: " << error << Qt::endl;
            return false;
        }
        noteStored(events.size(), malformed.size(), lastTime(events));
        return true;
    }

    // serve: never blocks. `done` is completed once the records are durable in every sink
    // (Stored), or with the reason they are not and never will be.
    void submit(qint64 sourceId, live::IngestBatch &&batch, const live::IngestCompletion &done)
    {
        if (!m_writer) {
            QString error;
            if (!appendOut(ndjsonLines(batch.events), &error)) {
                done.complete(live::IngestOutcome::Failed, error);
                return;
            }
            noteStored(batch.events.size(), batch.malformed.size(), lastTime(batch.events));
            done.complete(live::IngestOutcome::Stored);
            return;
        }
        WriteBatch write;
        write.sourceId = sourceId;
        write.events = std::move(batch.events);
        write.malformed = std::move(batch.malformed);
        write.commitBy = batch.deadline;
        quint64 sequence = 0;
        {
            // Held across trySubmit(): the batch may be committed (and onSettled look for its
            // completion) before trySubmit() returns.
            QMutexLocker locker(&m_waitingMutex);
            switch (m_writer->trySubmit(std::move(write), &sequence)) {
            case WorkspaceWriter::SubmitStatus::Queued:
                m_waiting.insert(sequence, done);
                break;
            case WorkspaceWriter::SubmitStatus::QueueFull:
                locker.unlock();
                done.complete(live::IngestOutcome::Busy,
                              QStringLiteral("the workspace writer is behind (queue full)"));
                return;
            case WorkspaceWriter::SubmitStatus::Stopped:
                locker.unlock();
                done.complete(live::IngestOutcome::Failed,
                              QStringLiteral("workspace: %1").arg(m_writer->errorString()));
                return;
            }
        }
        // At the deadline a batch still queued (the writer waits for another connection's
        // write lock) is withdrawn: never written, so the client's retry duplicates nothing.
        // One being written is answered by onSettled (the writer gives up on the lock by then).
        QTimer::singleShot(qMax<qint64>(0, batch.deadline.remainingTime()), &m_timerContext,
                           [this, sequence] {
                               if (!m_writer || !m_writer->cancel(sequence))
                                   return;
                               live::IngestCompletion withdrawn;
                               {
                                   QMutexLocker locker(&m_waitingMutex);
                                   withdrawn = m_waiting.take(sequence);
                               }
                               withdrawn.complete(live::IngestOutcome::Busy,
                                                  QStringLiteral("the workspace did not commit in "
                                                                 "time (another process holds its "
                                                                 "write lock?)"));
                           });
    }

    bool finish()
    {
        bool ok = true;
        if (m_writer) {
            ok = m_writer->finish() && ok;
            if (!ok)
                err() << "error: workspace: " << m_writer->errorString() << Qt::endl;
        }
        if (m_out.isOpen())
            m_out.close();
        return ok && !m_outFailed;
    }

    [[nodiscard]] qint64 events() const { return m_events; }
    [[nodiscard]] qint64 malformed() const { return m_malformed; }
    [[nodiscard]] qint64 lastEventMs() const { return m_lastEventMs; }

private:
    // On the writer thread, after each transaction (WorkspaceWriter::Options::onSettled).
    void onSettled(const std::deque<WriteBatch> &batches, const QString &error)
    {
        QString outError;
        if (error.isEmpty()) {
            QByteArray lines;
            qint64 events = 0;
            qint64 malformed = 0;
            qint64 lastEventMs = -1;
            for (const WriteBatch &batch : batches) {
                if (m_out.isOpen()) {
                    for (const RequestEvent &event : batch.events)
                        live::appendNdjsonLine(event, lines);
                }
                events += batch.events.size();
                malformed += batch.malformed.size();
                if (!batch.events.isEmpty())
                    lastEventMs = lastTime(batch.events);
            }
            if (!m_outFailed && !appendOut(lines, &outError)) {
                // --out no longer mirrors the workspace: stop (tail resumes from the ledger).
                m_outFailed = true;
                QMetaObject::invokeMethod(
                    QCoreApplication::instance(),
                    [outError] {
                        err() << "error: " << outError << Qt::endl;
                        QCoreApplication::exit(kExitFailure);
                    },
                    Qt::QueuedConnection);
            } else if (m_outFailed && m_out.isOpen()) {
                outError = QStringLiteral("%1: an earlier write failed").arg(m_out.fileName());
            }
            noteStored(events, malformed, lastEventMs);
        }
        QMutexLocker locker(&m_waitingMutex);
        for (const WriteBatch &batch : batches) {
            const auto it = m_waiting.find(batch.sequence);
            if (it == m_waiting.end())
                continue;
            const live::IngestCompletion done = it.value();
            m_waiting.erase(it);
            if (!error.isEmpty()) {
                // Past its deadline the writer gave up waiting for the lock: busy, not broken.
                done.complete(batch.commitBy.hasExpired() ? live::IngestOutcome::Busy
                                                          : live::IngestOutcome::Failed,
                              QStringLiteral("workspace: %1").arg(error));
            } else if (!outError.isEmpty()) {
                done.complete(live::IngestOutcome::Failed, outError);
            } else {
                done.complete(live::IngestOutcome::Stored);
            }
        }
    }

    // Appends the events to --out (if any) and makes them durable as configured. On failure
    // the file is cut back to where it was: no partial line is left behind.
    bool appendOut(const QByteArray &buffer, QString *error)
    {
        if (!m_out.isOpen() || buffer.isEmpty())
            return true;
        const qint64 before = m_out.size();
        bool ok = m_out.write(buffer) == buffer.size();
        if (ok && m_syncOut)
            ok = ::fdatasync(m_out.handle()) == 0;
        if (ok)
            return true;
        *error = QStringLiteral("%1: %2").arg(m_out.fileName(),
                                              m_out.error() != QFileDevice::NoError
                                                  ? m_out.errorString()
                                                  : QString::fromLocal8Bit(std::strerror(errno)));
        m_out.unsetError();
        if (::ftruncate(m_out.handle(), before) != 0)
            m_outFailed = true; // a partial line may remain: nothing more is appended
        return false;
    }

    // --out is a sink like the workspace: what reaches it is masked (the readers have done it;
    // the writer checks what it commits, this checks what goes straight to the file).
    QByteArray ndjsonLines(QList<RequestEvent> &events) const
    {
        QByteArray lines;
        if (m_out.isOpen()) {
            for (RequestEvent &event : events) {
                redact::ensureMasked(event);
                live::appendNdjsonLine(event, lines);
            }
        }
        return lines;
    }
    static qint64 lastTime(const QList<RequestEvent> &events)
    {
        return events.isEmpty() ? -1 : events.constLast().tsMs;
    }
    void noteStored(qint64 events, qint64 malformed, qint64 lastEventMs)
    {
        m_events += events;
        m_malformed += malformed;
        if (lastEventMs >= 0)
            m_lastEventMs = lastEventMs;
    }

    Workspace m_workspace;
    std::unique_ptr<WorkspaceWriter> m_writer;
    // Written by the writer thread (onSettled) when there is a workspace, else by the thread
    // that calls write() / submit().
    QFile m_out;
    bool m_syncOut = false;
    std::atomic<bool> m_outFailed{false};
    QHash<QString, qint64> m_sourceIds;
    // Updated where --out is written (see m_out), read by the status line.
    std::atomic<qint64> m_events{0};
    std::atomic<qint64> m_malformed{0};
    std::atomic<qint64> m_lastEventMs{-1};
    // Protects m_waiting: serve's completions by batch sequence, added on the listener's
    // thread, taken by onSettled on the writer thread or by the deadline timer.
    QMutex m_waitingMutex;
    QHash<quint64, live::IngestCompletion> m_waiting;
    QObject m_timerContext; // the deadline timers die with the output
};

// Prints "<what>: N events (+R/s), M malformed ..." on stderr every few seconds.
class StatusLine
{
public:
    StatusLine(int seconds, std::function<QString()> extra, const LiveOutput &output)
        : m_extra(std::move(extra)), m_output(output)
    {
        if (seconds <= 0)
            return;
        m_timer.setInterval(seconds * 1000);
        QObject::connect(&m_timer, &QTimer::timeout, QCoreApplication::instance(),
                         [this] { print(); });
        m_timer.start();
        m_clock.start();
    }
    void print()
    {
        const qint64 events = m_output.events();
        const double seconds = qMax<qint64>(1, m_clock.restart()) / 1000.0;
        err() << m_extra() << " | " << events << " events ("
              << qRound64((events - m_lastEvents) / seconds) << "/s), " << m_output.malformed()
              << " malformed, last event "
              << (m_output.lastEventMs() < 0 ? u"-"_qs : formatIsoMs(m_output.lastEventMs()))
              << Qt::endl;
        m_lastEvents = events;
    }

private:
    QTimer m_timer;
    QElapsedTimer m_clock;
    std::function<QString()> m_extra;
    const LiveOutput &m_output;
    qint64 m_lastEvents = 0;
};

bool parseArguments(QCommandLineParser &parser, const QString &command, const QStringList &args)
{
    parser.addHelpOption();
    if (!parser.parse(QStringList{u"throttlescope "_qs + command} + args)) {
        err() << "throttlescope " << command << ": " << parser.errorText() << Qt::endl;
        return false;
    }
    return true;
}

int usage(const QCommandLineParser &parser, const QString &message)
{
    if (!message.isEmpty())
        err() << "error: " << message << Qt::endl;
    err() << parser.helpText();
    return kExitUsage;
}

const QCommandLineOption kWorkspaceOption(u"workspace"_qs, u"Workspace file to write into."_qs,
                                          u"WS"_qs);
const QCommandLineOption kOutOption(
    u"out"_qs,
    u"Also append canonical NDJSON to FILE (with --workspace: what the workspace committed)."_qs,
    u"FILE"_qs);
const QCommandLineOption kStatusOption(u"status-interval"_qs,
                                       u"Seconds between status lines on stderr (0 = none)."_qs,
                                       u"S"_qs, u"5"_qs);

// Where the workspace's ledger says each tailed file's committed lines end.
QList<live::TailPosition> storedTailPositions(Workspace &workspace)
{
    QList<live::TailPosition> positions;
    for (const SourceRecord &source : workspace.sources()) {
        if (!source.fingerprint.startsWith("tail:"))
            continue;
        const QList<QByteArray> parts = source.fingerprint.split(':');
        const auto ledger = workspace.ledger(source.id);
        if (parts.size() != 3 || !ledger)
            continue;
        positions.append(live::TailPosition{
            source.path, ledger->committedOffset, ledger->committedLine, parts.at(1).toULongLong(),
            parts.at(2).toULongLong(), source.headLength, source.headHash});
    }
    return positions;
}

// What happens to the followed files, on stderr (and a truncated file's format told again).
void reportTailEvents(live::FileTailer &tailer, live::TailIngest &ingest)
{
    QObject::connect(&tailer, &live::FileTailer::errorOccurred, QCoreApplication::instance(),
                     [](const QString &path, const QString &message) {
                         err() << "warning: " << path << ": " << message << Qt::endl;
                     });
    QObject::connect(&tailer, &live::FileTailer::fileTruncated, QCoreApplication::instance(),
                     [&tailer, &ingest](const QString &path) {
                         // Its format is told again from the new content.
                         for (const live::TailPosition &position : tailer.positions()) {
                             if (position.path == path)
                                 ingest.forget(position.device, position.inode);
                         }
                         err() << "warning: " << path
                               << ": truncated or rewritten since it was read: reading it again "
                                  "from the start"
                               << Qt::endl;
                     });
    QObject::connect(&tailer, &live::FileTailer::linesUnrecoverable, QCoreApplication::instance(),
                     [](const QString &path, qint64, const QString &detail) {
                         err() << "warning: " << path << ": " << detail << Qt::endl;
                     });
    QObject::connect(&tailer, &live::FileTailer::fileOpened, QCoreApplication::instance(),
                     [](const QString &path, qint64 offset) {
                         err() << "following " << path
                               << (offset > 0 ? QStringLiteral(" from byte %1").arg(offset)
                                              : QString())
                               << Qt::endl;
                     });
}

} // namespace

int runTail(const QStringList &args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        u"Follow request logs as they grow (rotation, truncation and new files in directories "
        u"included) and store every line exactly once. Every line format report reads is "
        u"followed, told by each file's content: canonical NDJSON, access logs, CSV, "
        u"resilience/SDK logs, Azure records one per line."_qs);
    parser.addOption(kWorkspaceOption);
    parser.addOption(kOutOption);
    parser.addOption(kStatusOption);
    const QCommandLineOption globOption(
        u"glob"_qs, u"File name patterns for directories (repeatable; default *.ndjson *.jsonl *.log *.csv "
                  u"*.txt)."_qs,
        u"PATTERN"_qs);
    const QCommandLineOption pollOption(u"poll-ms"_qs, u"Polling interval."_qs, u"MS"_qs,
                                        u"100"_qs);
    parser.addOption(globOption);
    parser.addOption(pollOption);
    parser.addPositionalArgument(u"paths"_qs, u"Files or directories to follow."_qs,
                                 u"FILE|DIR..."_qs);
    if (!parseArguments(parser, u"tail"_qs, args))
        return kExitUsage;
    if (parser.isSet(u"help"_qs)) {
        usage(parser, {});
        return kExitOk;
    }
    const QStringList paths = parser.positionalArguments();
    if (paths.isEmpty())
        return usage(parser, u"tail: no FILE or DIR given"_qs);

    LiveOutput output;
    QString error;
    if (!output.open({parser.value(kWorkspaceOption), parser.value(kOutOption)}, &error)) {
        err() << "error: " << error << Qt::endl;
        return kExitFailure;
    }

    live::FileTailer tailer;
    tailer.setPollInterval(parser.value(pollOption).toInt());
    QStringList globs = parser.values(globOption);
    if (globs.isEmpty())
        globs = {u"*.ndjson"_qs, u"*.jsonl"_qs, u"*.log"_qs, u"*.csv"_qs, u"*.txt"_qs};
    for (const QString &path : paths) {
        if (QFileInfo(path).isDir())
            tailer.addDirectory(path, globs);
        else
            tailer.addFile(path);
    }
    // Resume where the workspace's ledger says each file's committed lines end.
    if (output.hasWorkspace())
        tailer.setStartPositions(storedTailPositions(output.workspace()));

    live::TailIngest ingest;
    bool writeFailed = false;
    tailer.setBatchCallback([&](const live::TailBatch &batch) {
        QList<RequestEvent> events;
        QList<MalformedRecord> malformed;
        ingest.parse(batch, &events, &malformed);
        const qint64 sourceId = output.sourceId(
            batch.path, QStringLiteral("tail:%1:%2").arg(batch.device).arg(batch.inode));
        for (const MalformedRecord &record : std::as_const(malformed))
            err() << record.toString() << Qt::endl;
        // The head travels with the offset: both are committed together, so a restart never
        // applies an offset to other content.
        if (!output.write(sourceId, std::move(events), std::move(malformed),
                          LedgerCheckpoint{batch.endOffset, batch.endLine, false, batch.headLength,
                                           batch.headHash})) {
            writeFailed = true;
            QCoreApplication::exit(kExitFailure);
        }
    });
    reportTailEvents(tailer, ingest);

    QuitOnSignal quitOnSignal;
    StatusLine status(
        parser.value(kStatusOption).toInt(),
        [&] { return QStringLiteral("tail: %1 file(s)").arg(tailer.positions().size()); }, output);
    tailer.start();
    const int loopResult = QCoreApplication::exec();
    tailer.stop(); // one last poll: whatever was written before the signal is kept
    const bool finished = output.finish();
    err() << "tail: stopped" << (quitOnSignal.received() ? " on signal" : "") << ", "
          << output.events() << " events, " << output.malformed() << " malformed" << Qt::endl;
    if (writeFailed || !finished)
        return kExitFailure;
    return loopResult == 0 ? kExitOk : kExitFailure;
}

namespace {

// The bearer token from a file only its owner can read: the rule the dashboard's File > Listen…
// applies too (live/dashboardlistener.h).
using live::readTokenFile;

// "2", "0.5": seconds as milliseconds; -1 when not a positive number.
int secondsOption(const QCommandLineParser &parser, const QCommandLineOption &option)
{
    bool ok = false;
    const double seconds = parser.value(option).toDouble(&ok);
    return ok && seconds > 0 && seconds < 86400 ? int(seconds * 1000) : -1;
}

} // namespace

int runServe(const QStringList &args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        u"Receive request logs over HTTP: POST /ingest (NDJSON, gzip), POST /v1/traces "
        u"(OTLP/HTTP JSON), GET /health. A POST is answered 200 once its events are stored "
        u"(committed to the workspace, or written and synced to --out without one), else 503 "
        u"with Retry-After."_qs);
    parser.addOption(kWorkspaceOption);
    parser.addOption(kOutOption);
    parser.addOption(kStatusOption);
    const QCommandLineOption listenOption(u"listen"_qs,
                                          u"Address and port (loopback by default)."_qs,
                                          u"HOST:PORT"_qs, u"127.0.0.1:4318"_qs);
    const QCommandLineOption tokenOption(
        u"token"_qs,
        u"Bearer token clients must send (required off loopback). Visible in ps: prefer "
        u"--token-file or the TS_INGEST_TOKEN environment variable."_qs,
        u"TOKEN"_qs);
    const QCommandLineOption tokenFileOption(
        u"token-file"_qs, u"Read the bearer token from FILE (not readable by other users)."_qs,
        u"FILE"_qs);
    const QCommandLineOption limitOption(u"max-body-mb"_qs, u"Largest accepted body."_qs, u"MB"_qs,
                                         u"32"_qs);
    const QCommandLineOption originOption(
        u"allow-origin"_qs,
        u"Accept browser requests from ORIGIN, e.g. https://app.example (repeatable; * = any). "
        u"Requests with any other Origin are refused."_qs,
        u"ORIGIN"_qs);
    const QCommandLineOption hostOption(
        u"allow-host"_qs,
        u"Accept this Host header besides the listening address (NAME or NAME:PORT, "
        u"repeatable; * = any)."_qs,
        u"HOST"_qs);
    const QCommandLineOption connectionsOption(u"max-connections"_qs,
                                               u"Open connections at most."_qs, u"N"_qs, u"64"_qs);
    const QCommandLineOption idleOption(
        u"idle-timeout"_qs, u"Close connections idle this long (seconds)."_qs, u"S"_qs, u"30"_qs);
    const QCommandLineOption headOption(u"head-timeout"_qs,
                                        u"Seconds a request's headers may take to arrive."_qs,
                                        u"S"_qs, u"10"_qs);
    const QCommandLineOption commitOption(
        u"commit-timeout"_qs,
        u"Seconds a POST waits for its events to be stored before it is answered 503 (below "
        u"clients' own timeouts: OpenTelemetry exporters give up after 10 s)."_qs,
        u"S"_qs, u"5"_qs);
    parser.addOption(listenOption);
    parser.addOption(tokenOption);
    parser.addOption(tokenFileOption);
    parser.addOption(limitOption);
    parser.addOption(originOption);
    parser.addOption(hostOption);
    parser.addOption(connectionsOption);
    parser.addOption(idleOption);
    parser.addOption(headOption);
    parser.addOption(commitOption);
    if (!parseArguments(parser, u"serve"_qs, args))
        return kExitUsage;
    if (parser.isSet(u"help"_qs)) {
        usage(parser, {});
        return kExitOk;
    }

    live::ListenerOptions options;
    QString error;
    if (!live::IngestListener::parseListenAddress(parser.value(listenOption), &options.address,
                                                  &options.port, &error))
        return usage(parser, error);
    if (parser.isSet(tokenOption) && parser.isSet(tokenFileOption))
        return usage(parser, u"give --token or --token-file, not both"_qs);
    if (parser.isSet(tokenOption)) {
        options.bearerToken = parser.value(tokenOption);
        err() << "warning: --token is visible to other users (ps); prefer --token-file FILE or "
                 "TS_INGEST_TOKEN"
              << Qt::endl;
    } else if (parser.isSet(tokenFileOption)) {
        if (!readTokenFile(parser.value(tokenFileOption), &options.bearerToken, &error)) {
            err() << "error: " << error << Qt::endl;
            return kExitFailure;
        }
    } else {
        options.bearerToken = qEnvironmentVariable("TS_INGEST_TOKEN");
    }
    options.maxBodyBytes = qint64(qMax(1, parser.value(limitOption).toInt())) * 1024 * 1024;
    options.allowedOrigins = parser.values(originOption);
    options.allowedHosts = parser.values(hostOption);
    options.maxConnections = parser.value(connectionsOption).toInt();
    options.idleTimeoutMs = secondsOption(parser, idleOption);
    options.headTimeoutMs = secondsOption(parser, headOption);
    options.commitTimeoutMs = secondsOption(parser, commitOption);
    if (options.maxConnections < 1)
        return usage(parser, u"--max-connections must be a positive number"_qs);
    if (options.idleTimeoutMs < 0 || options.headTimeoutMs < 0 || options.commitTimeoutMs < 0)
        return usage(parser, u"timeouts must be positive numbers of seconds"_qs);

    // Hands each request's records to the output (set once it is open, before the event loop
    // runs: no request is read before that).
    struct OutputSink final : live::IngestBatchSink
    {
        LiveOutput *output = nullptr;
        qint64 sourceId = 0;
        void submit(live::IngestBatch &&batch, live::IngestCompletion done) override
        {
            output->submit(sourceId, std::move(batch), done);
        }
    } sink;
    live::IngestListener listener(sink);
    // Listening first: a refused address (no token off loopback, port in use) must not leave
    // a new, empty workspace behind.
    if (!listener.start(options, &error)) {
        err() << "error: " << error << Qt::endl;
        return kExitFailure;
    }
    LiveOutput output;
    if (!output.open({parser.value(kWorkspaceOption), parser.value(kOutOption), true, true},
                     &error)) {
        err() << "error: " << error << Qt::endl;
        return kExitFailure;
    }
    const QString sourceName =
        QStringLiteral("http://%1:%2").arg(options.address.toString()).arg(listener.port());
    sink.output = &output;
    sink.sourceId = output.sourceId(sourceName, QStringLiteral("http"));
    if (listener.maxConnections() < options.maxConnections) {
        err() << "warning: at most " << listener.maxConnections()
              << " connections (the file descriptor limit allows no more)" << Qt::endl;
    }

    // Scripts wait for this line (and read the port from it when --listen asked for port 0).
    QTextStream(stdout) << "listening on " << sourceName << Qt::endl;
    QuitOnSignal quitOnSignal;
    StatusLine status(
        parser.value(kStatusOption).toInt(),
        [&] {
            const live::ListenerHealth health = listener.health();
            return QStringLiteral("serve %1: %2 requests, %3 rejected")
                .arg(sourceName)
                .arg(health.requests)
                .arg(health.rejectedRequests);
        },
        output);
    const int loopResult = QCoreApplication::exec();
    // Requests already received are answered once their records are stored (or not): their
    // clients must not be left guessing, or their retries duplicate what was stored.
    listener.stopListening();
    if (listener.pendingRequests() > 0) {
        QEventLoop drain;
        QObject::connect(&listener, &live::IngestListener::drained, &drain, &QEventLoop::quit);
        QTimer::singleShot(options.commitTimeoutMs + 5000, &drain, &QEventLoop::quit);
        drain.exec();
    }
    const bool finished = output.finish();
    err() << "serve: stopped" << (quitOnSignal.received() ? " on signal" : "") << ", "
          << output.events() << " events, " << output.malformed() << " malformed" << Qt::endl;
    if (!finished)
        return kExitFailure;
    return loopResult == 0 ? kExitOk : kExitFailure;
}

int runSimulate(const QStringList &args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(u"Generate a realistic live session (scenarios: "_qs +
                                     live::Simulation::scenarioNames().join(u", ") + u")."_qs);
    parser.addOption(kWorkspaceOption);
    parser.addOption(kOutOption);
    const QCommandLineOption scenarioOption(u"scenario"_qs, u"Scenario name."_qs, u"NAME"_qs,
                                            u"demo"_qs);
    const QCommandLineOption seedOption(u"seed"_qs, u"Random seed (same seed, same log)."_qs,
                                        u"N"_qs, u"1"_qs);
    const QCommandLineOption durationOption(
        u"duration"_qs, u"Simulated seconds (default: the scenario's length)."_qs, u"S"_qs);
    const QCommandLineOption speedOption(
        u"speed"_qs,
        u"Stream in real time, X simulated seconds per second (default: full speed)."_qs, u"X"_qs);
    const QCommandLineOption startOption(
        u"start"_qs,
        u"Simulated start time, RFC 3339 (default 2026-02-18T22:00:00Z; now with --speed)."_qs,
        u"TIME"_qs);
    parser.addOption(scenarioOption);
    parser.addOption(seedOption);
    parser.addOption(durationOption);
    parser.addOption(speedOption);
    parser.addOption(startOption);
    if (!parseArguments(parser, u"simulate"_qs, args))
        return kExitUsage;
    if (parser.isSet(u"help"_qs)) {
        usage(parser, {});
        return kExitOk;
    }

    live::SimulationOptions options;
    options.scenario = parser.value(scenarioOption);
    if (!live::Simulation::scenarioNames().contains(options.scenario)) {
        return usage(parser,
                     QStringLiteral("unknown scenario \"%1\" (one of: %2)")
                         .arg(options.scenario, live::Simulation::scenarioNames().join(u", ")));
    }
    bool ok = true;
    options.seed = parser.value(seedOption).toULongLong(&ok);
    if (!ok)
        return usage(parser, u"--seed must be a non-negative integer"_qs);
    if (parser.isSet(durationOption)) {
        const double seconds = parser.value(durationOption).toDouble(&ok);
        if (!ok || seconds <= 0)
            return usage(parser, u"--duration must be a positive number of seconds"_qs);
        options.durationMs = qint64(seconds * 1000);
    }
    if (parser.isSet(startOption)) {
        const auto start = parseRfc3339Ms(QStringView(parser.value(startOption)));
        if (!start)
            return usage(parser, u"--start must be an RFC 3339 time"_qs);
        options.startMs = *start;
    }
    double speed = 0;
    if (parser.isSet(speedOption)) {
        speed = parser.value(speedOption).toDouble(&ok);
        if (!ok || speed <= 0)
            return usage(parser, u"--speed must be a positive number"_qs);
    }

    LiveOutput output;
    QString error;
    if (!output.open({parser.value(kWorkspaceOption), parser.value(kOutOption), false}, &error)) {
        err() << "error: " << error << Qt::endl;
        return kExitFailure;
    }
    const QString sourceName = QStringLiteral("demo:%1").arg(options.scenario);
    const qint64 sourceId =
        output.sourceId(sourceName, QStringLiteral("seed:%1").arg(options.seed));

    bool writeFailed = false;
    if (speed <= 0) {
        std::unique_ptr<live::Simulation> simulation = live::Simulation::create(options, &error);
        if (!simulation) {
            output.finish();
            return usage(parser, error);
        }
        while (!simulation->finished() && !writeFailed) {
            QList<RequestEvent> events;
            simulation->advanceTo(simulation->producedUntilMs() + 60 * 1000, &events);
            writeFailed = !output.write(sourceId, std::move(events), {}, std::nullopt);
        }
    } else {
        live::LiveSimulator simulator(options);
        if (!simulator.error().isEmpty()) {
            output.finish();
            return usage(parser, simulator.error());
        }
        simulator.setSpeed(speed);
        QObject::connect(
            &simulator, &live::LiveSimulator::eventsReady, QCoreApplication::instance(),
            [&](const QList<RequestEvent> &events) {
                if (!output.write(sourceId, QList<RequestEvent>(events), {}, std::nullopt)) {
                    writeFailed = true;
                    QCoreApplication::exit(kExitFailure);
                }
            });
        QObject::connect(&simulator, &live::LiveSimulator::finished, QCoreApplication::instance(),
                         [] { QCoreApplication::quit(); });
        QuitOnSignal quitOnSignal;
        StatusLine status(
            5, [&] { return QStringLiteral("simulate %1").arg(options.scenario); }, output);
        simulator.start();
        QCoreApplication::exec();
    }
    const bool finished = output.finish();
    err() << "simulate " << options.scenario << ": " << output.events() << " events written"
          << Qt::endl;
    return writeFailed || !finished ? kExitFailure : kExitOk;
}

} // namespace ts::app
