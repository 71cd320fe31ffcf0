// Benchmark (not a test): generate N canonical log lines (canonicalgenerator.h: Fabric, Graph
// OneNote, Service Bus, 100 identities), then run `throttlescope report --json FILE` and
// `throttlescope whatif --json FILE` under two behaviours side by side, ROUNDS times, and print
// each run's time, CPU and peak RSS and the ratio whatif / report per round (the host's speed
// drifts; each pair ran back to back) with the median. Issue 33's goal: whatif within 2x of
// report on the same file.
//
//   bench_whatif [N=1000000] [--rounds ROUNDS=3] [--keep DIR]
#include "benchprocess.h"
#include "canonicalgenerator.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>

#include <cstdio>
#include <string>
#include <vector>

using ts::bench::median;
using ts::bench::medianRun;
using ts::bench::runMeasured;
using ts::bench::RunResult;

namespace {

void printRow(const char *what, qint64 lines, const RunResult &r)
{
    std::printf("  %-48s %8.3f s  %11.0f lines/s  cpu %6.2f s  peak RSS %7.1f MB  exit %d\n", what,
                r.seconds, double(lines) / r.seconds, r.cpuSeconds, double(r.peakRssKb) / 1024.0,
                r.exitCode);
}

struct Contender
{
    const char *name;
    std::vector<std::string> extraArguments;
    std::vector<RunResult> runs;
    std::vector<double> ratios;
};

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    const qint64 lines =
        args.size() > 1 && !args[1].startsWith(u"--") ? args[1].toLongLong() : 1000000;
    const qsizetype roundsAt = args.indexOf(u"--rounds"_qs);
    const int rounds =
        std::max(1, roundsAt > 0 && roundsAt + 1 < args.size() ? args[roundsAt + 1].toInt() : 3);
    const qsizetype keepAt = args.indexOf(u"--keep"_qs);
    const QString keepDir = keepAt > 0 && keepAt + 1 < args.size() ? args[keepAt + 1] : QString();
    if (!keepDir.isEmpty())
        QDir().mkpath(keepDir);
    QTemporaryDir dir(keepDir.isEmpty() ? QDir::temp().filePath(u"bench_whatif-XXXXXX"_qs)
                                        : QDir(keepDir).absoluteFilePath(u"bench-XXXXXX"_qs));
    dir.setAutoRemove(keepDir.isEmpty());
    const std::string binary = qEnvironmentVariableIsSet("TS_APP_BINARY")
                                   ? qEnvironmentVariable("TS_APP_BINARY").toStdString()
                                   : std::string(TS_APP_BINARY);
    const QString log = dir.filePath(u"bench.ndjson"_qs);
    std::printf("Generating %lld canonical lines in %s ...\n", (long long)lines,
                qPrintable(dir.path()));
    generateCanonicalLog(log, lines, 42);
    std::printf("  %.1f MB\n\n", double(QFileInfo(log).size()) / 1e6);
    runMeasured({"/bin/cat", log.toStdString()}); // warm the page cache

    std::vector<RunResult> reportRuns;
    std::vector<Contender> contenders = {
        {"whatif --json (the log's own pace and concurrency)", {}, {}, {}},
        {"whatif --json --pace 2/s --obey-retry-after",
         {"--pace", "2/s", "--obey-retry-after"},
         {},
         {}},
    };
    for (int round = 0; round < rounds; ++round) {
        reportRuns.push_back(runMeasured({binary, "report", "--json", log.toStdString()}));
        for (Contender &contender : contenders) {
            std::vector<std::string> command = {binary, "whatif", "--json"};
            command.insert(command.end(), contender.extraArguments.begin(),
                           contender.extraArguments.end());
            command.push_back(log.toStdString());
            contender.runs.push_back(runMeasured(command));
            contender.ratios.push_back(contender.runs.back().seconds / reportRuns.back().seconds);
        }
    }
    std::printf("%lld lines, %d rounds (medians):\n", (long long)lines, rounds);
    printRow("report --json", lines, medianRun(reportRuns));
    for (const Contender &contender : contenders)
        printRow(contender.name, lines, medianRun(contender.runs));
    std::printf("\nwhatif / report (wall time, median of per-round ratios; goal <= 2.00):\n");
    for (const Contender &contender : contenders) {
        std::printf("  %-48s %5.2fx  (rounds:", contender.name, median(contender.ratios));
        for (double ratio : contender.ratios)
            std::printf(" %.2f", ratio);
        std::printf(")\n");
    }
    return 0;
}
