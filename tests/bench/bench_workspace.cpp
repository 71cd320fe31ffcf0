// Writes synthetic events through WorkspaceWriter into a fresh workspace and prints rows/s,
// the time to build the query indexes, query latencies over the result and peak RSS.
//   bench_workspace [EVENTS=1000000] [WORKSPACE=/tmp/bench_workspace.db] [early]
// End to end (NDJSON file -> NdjsonReader -> importFile -> writer), the `import` command's path:
//   bench_workspace import [LINES=1000000] [WORKSPACE=/tmp/bench_workspace.db]

#include "ingest/ndjsonreader.h"
#include "store/importjob.h"
#include "store/workspace.h"
#include "store/workspacereader.h"
#include "store/workspacewriter.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTextStream>

#include <cstdio>

#include <ctime>

#include <sys/resource.h>
#include <unistd.h>

namespace {

qint64 peakRssKiB()
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    const QList<QByteArray> lines = status.readAll().split('\n');
    for (const QByteArray &line : lines) {
        if (line.startsWith("VmHWM:"))
            return line.mid(6).trimmed().split(' ').value(0).toLongLong();
    }
    return -1;
}

// CPU seconds used by the whole process so far (user + system): on a shared machine the wall
// clock says more about the neighbours than about this code.
double processCpuSeconds()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// CPU seconds of the live threads called `name` (QThread::setObjectName sets the OS name).
double namedThreadCpuSeconds(const QByteArray &name)
{
    double seconds = 0;
    const QDir tasks(QStringLiteral("/proc/self/task"));
    const QStringList ids = tasks.entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &id : ids) {
        QFile comm(tasks.filePath(id + u"/comm"));
        if (!comm.open(QIODevice::ReadOnly) || comm.readAll().trimmed() != name)
            continue;
        QFile stat(tasks.filePath(id + u"/stat"));
        if (!stat.open(QIODevice::ReadOnly))
            continue;
        const QByteArray text = stat.readAll();
        // Fields after the parenthesised command: state is field 3, utime 14, stime 15.
        const QList<QByteArray> fields = text.mid(text.lastIndexOf(')') + 2).split(' ');
        seconds += double(fields.value(11).toLongLong() + fields.value(12).toLongLong()) /
                   double(sysconf(_SC_CLK_TCK));
    }
    return seconds;
}

double threadCpuSeconds()
{
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return double(now.tv_sec) + double(now.tv_nsec) / 1e9;
}

// A plausible Fabric / Graph mix: most fields empty, some headers on throttles.
ts::RequestEvent syntheticEvent(qint64 index, const QStringList &identities,
                                const QStringList &urls)
{
    ts::RequestEvent event;
    event.tsMs = 1771454650000 + index * 7;
    event.identity = identities.at(index % identities.size());
    event.service = index % 3 == 0 ? QStringLiteral("graph") : QStringLiteral("fabric");
    event.method = index % 4 == 0 ? QStringLiteral("POST") : QStringLiteral("GET");
    event.url = urls.at(index % urls.size()) + QString::number(index % 977);
    const bool throttled = index % 50 == 0;
    event.status = throttled ? 429 : 200;
    event.durationMs = double(40 + index % 300);
    event.requestId = QStringLiteral("req-") + QString::number(index);
    event.lane = index % 5 == 0 ? QStringLiteral("background") : QStringLiteral("foreground");
    if (throttled) {
        event.errorCode = QStringLiteral("RequestBlocked");
        event.retryAfter = QStringLiteral("55");
        event.headers.set(QStringLiteral("retry-after"), QStringLiteral("55"));
        event.headers.set(QStringLiteral("x-ms-throttle-scope"), QStringLiteral("Application"));
        event.body = QStringLiteral("{\"errorCode\":\"RequestBlocked\",\"message\":\"Request is "
                                    "blocked by the upstream service\"}");
    }
    event.source = QStringLiteral("bench.ndjson");
    event.line = index + 1;
    event.offset = index * 180;
    return event;
}

void removeWorkspace(const QString &path)
{
    for (const QString &suffix : {QString(), QStringLiteral("-wal"), QStringLiteral("-shm")})
        QFile::remove(path + suffix);
}

int benchImport(qint64 lines, const QString &workspacePath)
{
    const QString logPath = QStringLiteral("/tmp/bench_workspace_import_%1.ndjson").arg(lines);
    if (!QFile::exists(logPath)) {
        QFile file(logPath);
        if (!file.open(QIODevice::WriteOnly))
            return 1;
        QByteArray chunk;
        for (qint64 i = 0; i < lines; ++i) {
            const bool throttled = i % 50 == 0;
            chunk +=
                "{\"ts\":" + QByteArray::number(1771454650000 + i * 7) +
                ",\"identity\":\"sp-migrator-" + QByteArray::number(i % 40) +
                "@contoso.com\",\"service\":\"fabric\",\"method\":\"GET\",\"url\":"
                "\"https://api.fabric.microsoft.com/v1/workspaces/1f2e/items/" +
                QByteArray::number(i % 977) + "\",\"status\":" +
                (throttled ? "429,\"errorCode\":\"RequestBlocked\",\"retryAfter\":\"55\"" : "200") +
                ",\"durationMs\":" + QByteArray::number(40 + i % 300) + ",\"requestId\":\"req-" +
                QByteArray::number(i) + "\"}\n";
            if (chunk.size() > (1 << 22)) {
                file.write(chunk);
                chunk.clear();
            }
        }
        file.write(chunk);
    }
    removeWorkspace(workspacePath);

    QElapsedTimer timer;
    timer.start();
    const double cpuAtStart = processCpuSeconds();
    ts::Workspace workspace;
    ts::WorkspaceWriter writer;
    if (!workspace.open(workspacePath) || !writer.start(workspacePath)) {
        std::fprintf(stderr, "cannot open %s\n", qPrintable(workspacePath));
        return 1;
    }
    ts::NdjsonReader reader;
    const ts::ImportResult result = ts::importFile(workspace, writer, logPath, reader);
    const double importSeconds = double(timer.nsecsElapsed()) / 1e9;
    const double importCpu = processCpuSeconds() - cpuAtStart;
    const qint64 importPeakRss = peakRssKiB();
    timer.restart();
    const bool finished = writer.finish();
    const double finishSeconds = double(timer.nsecsElapsed()) / 1e9;
    if (!result.ok() || !finished) {
        std::fprintf(stderr, "import failed: %s %s\n", qPrintable(result.error),
                     qPrintable(writer.errorString()));
        return 1;
    }
    std::printf("import %lld lines (%lld events, %lld malformed): %.2f s = %.0f lines/s "
                "(CPU %.2f s, all threads)\n",
                static_cast<long long>(lines), static_cast<long long>(result.eventsAdded),
                static_cast<long long>(result.malformedAdded), importSeconds,
                double(lines) / importSeconds, importCpu);
    std::printf("peak RSS during the import (before finish): %lld KiB\n",
                static_cast<long long>(importPeakRss));
    std::printf("query indexes at finish(): %.2f s; end to end %.0f lines/s\n", finishSeconds,
                double(lines) / (importSeconds + finishSeconds));
    timer.restart();
    ts::WorkspaceWriter again;
    again.start(workspacePath);
    const ts::ImportResult second = ts::importFile(workspace, again, logPath, reader);
    again.finish();
    std::printf("re-import: %s, %lld added, %.3f s\n",
                qPrintable(ts::importStatusName(second.status)),
                static_cast<long long>(second.eventsAdded), double(timer.nsecsElapsed()) / 1e9);
    std::printf("peak RSS (VmHWM): %lld KiB\n", static_cast<long long>(peakRssKiB()));
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    if (args.size() > 1 && args.at(1) == u"import") {
        return benchImport(args.size() > 2 ? args.at(2).toLongLong() : 1000000,
                           args.size() > 3 ? args.at(3)
                                           : QStringLiteral("/tmp/bench_workspace.db"));
    }
    const qint64 total = args.size() > 1 ? args.at(1).toLongLong() : 1000000;
    const QString path = args.size() > 2 ? args.at(2) : QStringLiteral("/tmp/bench_workspace.db");
    removeWorkspace(path);

    QStringList identities;
    for (int i = 0; i < 40; ++i)
        identities << QStringLiteral("sp-migrator-%1@contoso.com").arg(i);
    const QStringList urls = {
        QStringLiteral("https://api.fabric.microsoft.com/v1/workspaces/1f2e/items/"),
        QStringLiteral("https://graph.microsoft.com/v1.0/me/onenote/pages/1-"),
        QStringLiteral("https://api.fabric.microsoft.com/v1/workspaces/1f2e/items/9a8b/jobs/"
                       "instances?jobType=Pipeline&n="),
    };

    ts::Workspace workspace;
    if (!workspace.open(path)) {
        std::fprintf(stderr, "%s\n", qPrintable(workspace.errorString()));
        return 1;
    }
    // "early": build the query indexes before inserting (maintained per row) instead of once
    // after the bulk insert, to compare the two strategies.
    const bool indexesFirst = args.size() > 3 && args.at(3) == u"early";
    if (indexesFirst && !workspace.createQueryIndexes()) {
        std::fprintf(stderr, "%s\n", qPrintable(workspace.errorString()));
        return 1;
    }
    const qint64 sourceId = workspace.addSource(QStringLiteral("bench.ndjson"),
                                                QStringLiteral("ndjson"), 0, 0, "bench");
    ts::WorkspaceWriter writer;
    if (!writer.start(path)) {
        std::fprintf(stderr, "%s\n", qPrintable(writer.errorString()));
        return 1;
    }

    // Events are built on this thread while the writer inserts on its own, as in an import.
    QElapsedTimer timer;
    timer.start();
    const double cpuAtStart = processCpuSeconds();
    const double producerCpuAtStart = threadCpuSeconds();
    constexpr qsizetype kBatch = 8192;
    for (qint64 done = 0; done < total;) {
        ts::WriteBatch batch;
        batch.sourceId = sourceId;
        const qint64 n = qMin<qint64>(kBatch, total - done);
        batch.events.reserve(n);
        for (qint64 i = 0; i < n; ++i)
            batch.events.append(syntheticEvent(done + i, identities, urls));
        done += n;
        batch.checkpoint = ts::LedgerCheckpoint{done * 180, done, done == total};
        if (!writer.submit(std::move(batch))) {
            std::fprintf(stderr, "%s\n", qPrintable(writer.errorString()));
            return 1;
        }
    }
    if (!writer.flush()) {
        std::fprintf(stderr, "%s\n", qPrintable(writer.errorString()));
        return 1;
    }
    const qint64 insertPeakRss = peakRssKiB();
    const double writerThreadCpu = namedThreadCpuSeconds("WorkspaceWriter");
    const double checkpointerThreadCpu = namedThreadCpuSeconds("WorkspaceCheckp");
    const double insertSeconds = double(timer.nsecsElapsed()) / 1e9;
    const double insertCpuSeconds = processCpuSeconds() - cpuAtStart;
    const double producerCpuSeconds = threadCpuSeconds() - producerCpuAtStart;
    timer.restart();
    const double cpuBeforeFinish = processCpuSeconds();
    if (!writer.finish()) {
        std::fprintf(stderr, "%s\n", qPrintable(writer.errorString()));
        return 1;
    }
    const double indexSeconds = double(timer.nsecsElapsed()) / 1e9;
    const double indexCpuSeconds = processCpuSeconds() - cpuBeforeFinish;

    std::printf("events: %lld\n", static_cast<long long>(total));
    std::printf("insert: %.2f s, %.0f rows/s (generation on the producer thread included)\n",
                insertSeconds, double(total) / insertSeconds);
    // The writer thread is the import's bottleneck: rows per second of its CPU is what a quiet
    // machine would show as throughput (producer and checkpointer run on the other core).
    std::printf("insert CPU: producer (generation + redaction) %.2f s, writer thread %.2f s "
                "= %.0f rows per writer CPU-second, checkpointer thread %.2f s, total %.2f s\n",
                producerCpuSeconds, writerThreadCpu, double(total) / writerThreadCpu,
                checkpointerThreadCpu, insertCpuSeconds);
    std::printf("peak RSS after the insert (before finish): %lld KiB\n",
                static_cast<long long>(insertPeakRss));
    std::printf("query indexes at finish(): %.2f s (CPU %.2f s)%s\n", indexSeconds, indexCpuSeconds,
                indexesFirst ? " [indexes existed before the insert]" : "");
    std::printf("file: %.1f MiB\n", double(QFile(path).size()) / (1024.0 * 1024.0));

    ts::WorkspaceReader reader;
    if (!reader.open(path)) {
        std::fprintf(stderr, "%s\n", qPrintable(reader.errorString()));
        return 1;
    }
    auto timeQuery = [&](const char *label, const ts::EventFilter &filter) {
        QElapsedTimer queryTimer;
        queryTimer.start();
        const qint64 count = reader.countEvents(filter);
        const double countMs = double(queryTimer.nsecsElapsed()) / 1e6;
        queryTimer.restart();
        const auto page = reader.fetchPage(filter, total / 2, 100);
        const double pageMs = double(queryTimer.nsecsElapsed()) / 1e6;
        std::printf("%-22s count %8lld in %7.2f ms, page of %3lld in %6.2f ms\n", label,
                    static_cast<long long>(count), countMs, static_cast<long long>(page.size()),
                    pageMs);
    };
    timeQuery("no filter", {});
    ts::EventFilter byIdentity;
    byIdentity.identity = identities.at(7);
    timeQuery("identity", byIdentity);
    ts::EventFilter byStatus;
    byStatus.status = 429;
    timeQuery("status 429", byStatus);
    ts::EventFilter byError;
    byError.errorCode = QStringLiteral("RequestBlocked");
    timeQuery("errorCode", byError);
    ts::EventFilter byTime;
    byTime.fromMs = 1771454650000 + total * 3;
    byTime.toMs = 1771454650000 + total * 4;
    timeQuery("time range", byTime);
    ts::EventFilter byText;
    byText.text = QStringLiteral("jobType=Pipeline&n=12");
    timeQuery("free text", byText);

    timer.restart();
    const double replayCpuAtStart = threadCpuSeconds();
    qint64 replayed = 0;
    reader.forEachEventInTimeOrder(8192, [&](const QList<ts::RequestEvent> &chunk) {
        replayed += chunk.size();
        return true;
    });
    const double replaySeconds = double(timer.nsecsElapsed()) / 1e9;
    const double replayCpu = threadCpuSeconds() - replayCpuAtStart;
    std::printf("replay in time order: %lld events, %.0f events/s (%.0f per CPU-second)\n",
                static_cast<long long>(replayed), double(replayed) / replaySeconds,
                double(replayed) / replayCpu);
    std::printf("peak RSS (VmHWM): %lld KiB\n", static_cast<long long>(peakRssKiB()));
    return 0;
}
