#include "livecommands.h"

#include "core/timeparse.h"
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
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QSocketNotifier>
#include <QTextStream>
#include <QTimer>

#include <csignal>
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

class LiveOutput
{
public:
    // `appendToOut`: tail and serve add to an existing file (a restart continues it); the
    // simulator writes a whole session and replaces it.
    bool open(const QString &workspacePath, const QString &outPath, QString *error,
              bool appendToOut = true)
    {
        if (workspacePath.isEmpty() && outPath.isEmpty()) {
            *error = QStringLiteral("nowhere to write: give --workspace WS and/or --out FILE");
            return false;
        }
        if (!workspacePath.isEmpty()) {
            if (!m_workspace.open(workspacePath)) {
                *error = m_workspace.errorString();
                return false;
            }
            m_writer = std::make_unique<WorkspaceWriter>();
            WorkspaceWriter::Options options;
            // Live data trickles in: small transactions often, and the query indexes stay
            // maintained (the dashboard may read the workspace meanwhile).
            options.maxQueuedRecords = 8192;
            if (!m_writer->start(workspacePath, options)) {
                *error = m_writer->errorString();
                return false;
            }
        }
        if (!outPath.isEmpty()) {
            m_out.setFileName(outPath);
            if (!m_out.open(QIODevice::WriteOnly |
                            (appendToOut ? QIODevice::Append : QIODevice::Truncate))) {
                *error = QStringLiteral("%1: %2").arg(outPath, m_out.errorString());
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

    bool write(qint64 sourceId, QList<RequestEvent> &&events, QList<MalformedRecord> &&malformed,
               std::optional<LedgerCheckpoint> checkpoint)
    {
        m_events += events.size();
        m_malformed += malformed.size();
        if (!events.isEmpty())
            m_lastEventMs = events.constLast().tsMs;
        if (m_out.isOpen() && !events.isEmpty()) {
            QByteArray buffer;
            for (const RequestEvent &event : std::as_const(events))
                live::appendNdjsonLine(event, buffer);
            if (m_out.write(buffer) != buffer.size() || !m_out.flush()) {
                err() << "error: " << m_out.fileName() << ": " << m_out.errorString() << Qt::endl;
                return false;
            }
        }
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
        }
        return true;
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
        return ok;
    }

    [[nodiscard]] qint64 events() const { return m_events; }
    [[nodiscard]] qint64 malformed() const { return m_malformed; }
    [[nodiscard]] qint64 lastEventMs() const { return m_lastEventMs; }

private:
    Workspace m_workspace;
    std::unique_ptr<WorkspaceWriter> m_writer;
    QFile m_out;
    QHash<QString, qint64> m_sourceIds;
    qint64 m_events = 0;
    qint64 m_malformed = 0;
    qint64 m_lastEventMs = -1;
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
const QCommandLineOption kOutOption(u"out"_qs, u"Also append canonical NDJSON to FILE."_qs,
                                    u"FILE"_qs);
const QCommandLineOption kStatusOption(u"status-interval"_qs,
                                       u"Seconds between status lines on stderr (0 = none)."_qs,
                                       u"S"_qs, u"5"_qs);

} // namespace

int runTail(const QStringList &args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        u"Follow NDJSON request logs as they grow (rotation, truncation and new files in "
        u"directories included) and store every line exactly once."_qs);
    parser.addOption(kWorkspaceOption);
    parser.addOption(kOutOption);
    parser.addOption(kStatusOption);
    const QCommandLineOption globOption(
        u"glob"_qs, u"File name patterns for directories (repeatable)."_qs, u"PATTERN"_qs);
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
    if (!output.open(parser.value(kWorkspaceOption), parser.value(kOutOption), &error)) {
        err() << "error: " << error << Qt::endl;
        return kExitFailure;
    }

    live::FileTailer tailer;
    tailer.setPollInterval(parser.value(pollOption).toInt());
    QStringList globs = parser.values(globOption);
    if (globs.isEmpty())
        globs = {u"*.ndjson"_qs, u"*.jsonl"_qs, u"*.log"_qs};
    for (const QString &path : paths) {
        if (QFileInfo(path).isDir())
            tailer.addDirectory(path, globs);
        else
            tailer.addFile(path);
    }
    // Resume where the workspace's ledger says each file's committed lines end.
    if (output.hasWorkspace()) {
        QList<live::TailPosition> positions;
        for (const SourceRecord &source : output.workspace().sources()) {
            if (!source.fingerprint.startsWith("tail:"))
                continue;
            const QList<QByteArray> parts = source.fingerprint.split(':');
            const auto ledger = output.workspace().ledger(source.id);
            if (parts.size() != 3 || !ledger)
                continue;
            positions.append(live::TailPosition{source.path, ledger->committedOffset,
                                                ledger->committedLine, parts.at(1).toULongLong(),
                                                parts.at(2).toULongLong(), source.headLength,
                                                source.headHash});
        }
        tailer.setStartPositions(positions);
    }

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
    QObject::connect(&tailer, &live::FileTailer::errorOccurred, QCoreApplication::instance(),
                     [](const QString &path, const QString &message) {
                         err() << "warning: " << path << ": " << message << Qt::endl;
                     });
    QObject::connect(&tailer, &live::FileTailer::fileTruncated, QCoreApplication::instance(),
                     [](const QString &path) {
                         err() << "warning: " << path
                               << ": truncated or rewritten since it was read: reading it again "
                                  "from the start"
                               << Qt::endl;
                     });
    QObject::connect(&tailer, &live::FileTailer::fileOpened, QCoreApplication::instance(),
                     [](const QString &path, qint64 offset) {
                         err() << "following " << path
                               << (offset > 0 ? QStringLiteral(" from byte %1").arg(offset)
                                              : QString())
                               << Qt::endl;
                     });

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

int runServe(const QStringList &args)
{
    QCommandLineParser parser;
    parser.setApplicationDescription(
        u"Receive request logs over HTTP: POST /ingest (NDJSON, gzip), POST /v1/traces "
        u"(OTLP/HTTP JSON), GET /health."_qs);
    parser.addOption(kWorkspaceOption);
    parser.addOption(kOutOption);
    parser.addOption(kStatusOption);
    const QCommandLineOption listenOption(u"listen"_qs,
                                          u"Address and port (loopback by default)."_qs,
                                          u"HOST:PORT"_qs, u"127.0.0.1:4318"_qs);
    const QCommandLineOption tokenOption(
        u"token"_qs,
        u"Bearer token clients must send (required off loopback; or TS_INGEST_TOKEN)."_qs,
        u"TOKEN"_qs);
    const QCommandLineOption limitOption(u"max-body-mb"_qs, u"Largest accepted body."_qs, u"MB"_qs,
                                         u"32"_qs);
    parser.addOption(listenOption);
    parser.addOption(tokenOption);
    parser.addOption(limitOption);
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
    options.bearerToken = parser.isSet(tokenOption) ? parser.value(tokenOption)
                                                    : qEnvironmentVariable("TS_INGEST_TOKEN");
    options.maxBodyBytes = qint64(qMax(1, parser.value(limitOption).toInt())) * 1024 * 1024;

    // The listener calls the sink on this (the main) thread; batches are handed to the writer
    // after each request and on a short timer.
    struct BufferingSink final : IngestSink
    {
        QList<RequestEvent> events;
        QList<MalformedRecord> malformed;
        void onEvent(RequestEvent &&event) override { events.append(std::move(event)); }
        void onMalformed(MalformedRecord &&record) override { malformed.append(std::move(record)); }
    } sink;
    live::IngestListener listener(sink);
    // Listening first: a refused address (no token off loopback, port in use) must not leave
    // a new, empty workspace behind.
    if (!listener.start(options, &error)) {
        err() << "error: " << error << Qt::endl;
        return kExitFailure;
    }
    LiveOutput output;
    if (!output.open(parser.value(kWorkspaceOption), parser.value(kOutOption), &error)) {
        err() << "error: " << error << Qt::endl;
        return kExitFailure;
    }
    const QString sourceName =
        QStringLiteral("http://%1:%2").arg(options.address.toString()).arg(listener.port());
    const qint64 sourceId = output.sourceId(sourceName, QStringLiteral("http"));
    bool writeFailed = false;
    auto flush = [&] {
        if (sink.events.isEmpty() && sink.malformed.isEmpty())
            return;
        if (!output.write(sourceId, std::exchange(sink.events, {}),
                          std::exchange(sink.malformed, {}), std::nullopt)) {
            writeFailed = true;
            QCoreApplication::exit(kExitFailure);
        }
    };
    QObject::connect(&listener, &live::IngestListener::eventsIngested, QCoreApplication::instance(),
                     flush);
    QTimer flushTimer;
    flushTimer.setInterval(200);
    QObject::connect(&flushTimer, &QTimer::timeout, QCoreApplication::instance(), flush);
    flushTimer.start();

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
    flush();
    const bool finished = output.finish();
    err() << "serve: stopped" << (quitOnSignal.received() ? " on signal" : "") << ", "
          << output.events() << " events, " << output.malformed() << " malformed" << Qt::endl;
    if (writeFailed || !finished)
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
    if (!output.open(parser.value(kWorkspaceOption), parser.value(kOutOption), &error, false)) {
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
