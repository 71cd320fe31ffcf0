// Benchmark (not a test): generate N canonical log lines, then measure, in one run on this
// machine, `throttlescope report --json`, `throttlescope import` and the jq reference
//   jq -c 'select(.status==429)|.errorCode' FILE | sort | uniq -c
// printing lines/s, peak memory (RSS of the child) and the ratio to jq. A second file of 2N lines
// shows whether peak memory grows with file size. jq and `report` run alternately ROUNDS times:
// the host's speed drifts by tens of per cent within minutes, so the ratio is taken per round
// (each pair ran side by side) and the median of those is printed, with the medians of each.
//
//   bench_report_import [N=1000000] [--keep DIR] [--rounds ROUNDS=3]
#include "benchprocess.h"
#include "canonicalgenerator.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTextStream>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace {

using ts::bench::median;
using ts::bench::medianRun;
using ts::bench::runMeasured;
using ts::bench::RunResult;

// A realistic mix: Fabric, Graph OneNote, Service Bus, 100 identities (canonicalgenerator.h).
void generate(const QString &path, qint64 lines, unsigned seed)
{
    generateCanonicalLog(path, lines, seed);
}
void printRow(const char *what, qint64 lines, const RunResult &r, double mb)
{
    std::printf("  %-42s %8.3f s  %12.0f lines/s  %8.1f MB/s  cpu %6.2f s  peak RSS %7.1f MB  "
                "exit %d\n",
                what, r.seconds, double(lines) / r.seconds, mb / r.seconds, r.cpuSeconds,
                double(r.peakRssKb) / 1024.0, r.exitCode);
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    qint64 lines = 1000000;
    const QStringList args = app.arguments();
    if (args.size() > 1 && !args[1].startsWith(u"--"))
        lines = args[1].toLongLong();
    const std::string binary = qEnvironmentVariableIsSet("TS_APP_BINARY")
                                   ? qEnvironmentVariable("TS_APP_BINARY").toStdString()
                                   : std::string(TS_APP_BINARY);
    // --keep DIR: generate into a new directory under DIR and leave the files there (to profile
    // or compare builds on the same input).
    const qsizetype keepAt = args.indexOf(u"--keep"_qs);
    const QString keepDir = keepAt > 0 && keepAt + 1 < args.size() ? args[keepAt + 1] : QString();
    if (!keepDir.isEmpty())
        QDir().mkpath(keepDir);
    QTemporaryDir dir(keepDir.isEmpty() ? QDir::temp().filePath(u"bench_report_import-XXXXXX"_qs)
                                        : QDir(keepDir).absoluteFilePath(u"bench-XXXXXX"_qs));
    dir.setAutoRemove(keepDir.isEmpty());
    const QString small = dir.filePath(u"bench-1x.ndjson"_qs);
    const QString large = dir.filePath(u"bench-2x.ndjson"_qs);
    std::printf("Generating %lld and %lld canonical lines in %s ...\n", (long long)lines,
                (long long)lines * 2, qPrintable(dir.path()));
    generate(small, lines, 42);
    generate(large, lines * 2, 43);
    const double mbSmall = double(QFileInfo(small).size()) / 1e6;
    const double mbLarge = double(QFileInfo(large).size()) / 1e6;
    std::printf("  %.1f MB and %.1f MB\n\n", mbSmall, mbLarge);

    // Warm the page cache so every contender reads from memory.
    runMeasured({"/bin/cat", small.toStdString()});
    runMeasured({"/bin/cat", large.toStdString()});

    const qsizetype roundsAt = args.indexOf(u"--rounds"_qs);
    const int rounds =
        std::max(1, roundsAt > 0 && roundsAt + 1 < args.size() ? args[roundsAt + 1].toInt() : 3);
    std::vector<RunResult> jqRuns;
    std::vector<RunResult> reportRuns;
    std::vector<double> ratios;
    long reportPeakRssKb = 0;
    for (int round = 0; round < rounds; ++round) {
        jqRuns.push_back(runMeasured({"/bin/bash", "-c",
                                      "jq -c 'select(.status==429)|.errorCode' '" +
                                          small.toStdString() + "' | sort | uniq -c"}));
        reportRuns.push_back(runMeasured({binary, "report", "--json", small.toStdString()}));
        ratios.push_back(jqRuns.back().seconds / reportRuns.back().seconds);
        reportPeakRssKb = std::max(reportPeakRssKb, reportRuns.back().peakRssKb);
    }
    const RunResult jq = medianRun(jqRuns);
    RunResult report = medianRun(reportRuns);
    report.peakRssKb = reportPeakRssKb; // the highest of the rounds
    for (const RunResult &run : reportRuns) {
        if (run.exitCode != 0)
            report.exitCode = run.exitCode;
    }
    const RunResult report2 = runMeasured({binary, "report", "--json", large.toStdString()});
    const QString ws = dir.filePath(u"bench.db"_qs);
    const RunResult import =
        runMeasured({binary, "import", "--workspace", ws.toStdString(), small.toStdString()});
    const QString ws2 = dir.filePath(u"bench2.db"_qs);
    const RunResult import2 =
        runMeasured({binary, "import", "--workspace", ws2.toStdString(), large.toStdString()});

    std::printf("Results (%s):\n", binary.c_str());
    // How the measured binary was built (a profile-guided release build, or not) and which
    // allocator it runs on: the figures depend on both.
    const QString versionFile = dir.filePath(u"version.txt"_qs);
    runMeasured({binary, "--version"}, versionFile.toLocal8Bit().constData());
    if (QFile version(versionFile); version.open(QIODevice::ReadOnly)) {
        for (const QByteArray &line : version.readAll().split('\n')) {
            if (line.startsWith("build: ") || line.startsWith("allocator: "))
                std::printf("  %s\n", line.constData());
        }
    }
    printRow("jq reference (1x, median)", lines, jq, mbSmall);
    printRow("throttlescope report --json (1x, median)", lines, report, mbSmall);
    printRow("throttlescope report --json (2x)", lines * 2, report2, mbLarge);
    printRow("throttlescope import (1x)", lines, import, mbSmall);
    printRow("throttlescope import (2x)", lines * 2, import2, mbLarge);
    std::printf("\n");
    std::printf("  report speed-up over jq:       %.2fx   (goal >= 6x; median of %d rounds:",
                median(ratios), rounds);
    for (double ratio : ratios)
        std::printf(" %.2f", ratio);
    std::printf(")\n");
    std::printf("  report lines/s:                %.0f   (goal >= 1,000,000)\n",
                double(lines) / report.seconds);
    std::printf("  import lines/s:                %.0f   (goal >= 300,000)\n",
                double(lines) / import.seconds);
    std::printf("  peak RSS report 1x -> 2x:      %.1f MB -> %.1f MB   (goal < 200 MB, flat)\n",
                double(report.peakRssKb) / 1024.0, double(report2.peakRssKb) / 1024.0);
    std::printf("  peak RSS import 1x -> 2x:      %.1f MB -> %.1f MB   (goal < 200 MB, flat)\n",
                double(import.peakRssKb) / 1024.0, double(import2.peakRssKb) / 1024.0);
    return (report.exitCode == 0 && import.exitCode == 0) ? 0 : 1;
}
