// Launch -> complete dashboard for a 1M-line canonical file, against `report` on the same file
// in the same run (issue 17.5). The dashboard runs as a child process (this binary with
// --child: the real window, controller and session, offscreen) that exits the moment the
// dashboard is complete: every event on the Overview (all views share the snapshot) and the
// Events page's workspace committed. The parent times each child from spawn to exit and reads
// its peak RSS; `report` and the dashboard alternate ROUNDS times and the medians are printed,
// with their ratio.
//
//   bench_read_once [N=1000000] [--rounds ROUNDS=3] [--keep FILE]
#include "benchprocess.h"
#include "canonicalgenerator.h"
#include "dashboard.h"
#include "dashboardcontroller.h"
#include "engine/analysissession.h"
#include "mainwindow.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

using ts::bench::median;
using ts::bench::runMeasured;
using ts::bench::RunResult;

// CPU seconds (user + system) of this process's threads so far, by thread name: where the
// dashboard's time goes (the scratch workspace's writer, the analysis pipeline, the GUI).
// Threads started with std::thread carry the name of the thread that started them.
std::map<std::string, double> cpuByThreadName()
{
    std::map<std::string, double> byName;
    const double ticks = double(sysconf(_SC_CLK_TCK));
    const QDir tasks(QStringLiteral("/proc/self/task"));
    for (const QString &tid : tasks.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        QFile stat(tasks.filePath(tid + QStringLiteral("/stat")));
        if (!stat.open(QIODevice::ReadOnly))
            continue;
        const QByteArray line = stat.readAll();
        // "pid (comm) state ..." where comm may hold spaces: the fields follow the last ')'.
        const qsizetype open = line.indexOf('(');
        const qsizetype close = line.lastIndexOf(')');
        if (open < 0 || close < open)
            continue;
        const QList<QByteArray> fields = line.mid(close + 2).split(' ');
        if (fields.size() < 13)
            continue;
        // After the comm: state is field 3, utime field 14, stime field 15 (proc(5)).
        const double seconds = (fields[11].toDouble() + fields[12].toDouble()) / ticks;
        QByteArray name = line.mid(open + 1, close - open - 1);
        name.replace(' ', '_'); // one word each in the line the parent reads
        byName[name.toStdString()] += seconds;
    }
    return byName;
}

// The dashboard on FILE; exits 0 once complete, printing when the analysis was on screen and
// when the Events page's rows were committed.
int runChild(int argc, char *argv[], const QString &file, qint64 expected)
{
    QElapsedTimer clock;
    clock.start();
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QStandardPaths::setTestModeEnabled(true);
    ts::app::DashboardOptions options;
    options.files = {file};
    ts::app::DashboardController controller(options);
    ts::AnalysisSession *session = controller.session();
    bool filesFinished = false;
    bool eventsPageReady = false;
    QString scratch;
    qint64 shownMs = -1;
    auto check = [&] {
        const auto &snapshot = controller.window()->dashboard()->snapshot();
        if (shownMs < 0 && snapshot && snapshot->report.events == expected && filesFinished)
            shownMs = clock.elapsed();
        if (shownMs >= 0 && eventsPageReady) {
            std::printf("shown_ms %lld complete_ms %lld", static_cast<long long>(shownMs),
                        static_cast<long long>(clock.elapsed()));
            for (const auto &[name, seconds] : cpuByThreadName())
                std::printf(" cpu[%s] %.3f", name.c_str(), seconds);
            std::printf("\n");
            std::fflush(stdout);
            for (const char *suffix : {"", "-wal", "-shm"})
                QFile::remove(scratch + QString::fromLatin1(suffix));
            std::_Exit(0); // the picture is complete: tearing down is not part of it
        }
    };
    QObject::connect(session, &ts::AnalysisSession::filesFinished, &app, [&] {
        filesFinished = true;
        check();
    });
    QObject::connect(session, &ts::AnalysisSession::workspaceReady, &app, [&](const QString &path) {
        scratch = path;
        eventsPageReady = filesFinished; // the one after the files: rows committed
        check();
    });
    QObject::connect(controller.window()->dashboard(), &ts::widgets::Dashboard::snapshotApplied,
                     &app, check);
    controller.start();
    QTimer::singleShot(600'000, &app, [] { std::_Exit(3); });
    return QApplication::exec();
}

} // namespace

int main(int argc, char *argv[])
{
    if (argc >= 4 && std::string(argv[1]) == "--child")
        return runChild(argc, argv, QString::fromLocal8Bit(argv[2]), std::atoll(argv[3]));

    qint64 lines = 1'000'000;
    int rounds = 3;
    QString keep;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--rounds" && i + 1 < argc)
            rounds = std::max(1, std::atoi(argv[++i]));
        else if (arg == "--keep" && i + 1 < argc)
            keep = QString::fromLocal8Bit(argv[++i]);
        else
            lines = std::atoll(argv[i]);
    }
    QTemporaryDir dir;
    const QString file = keep.isEmpty() ? dir.filePath(QStringLiteral("canonical.ndjson")) : keep;
    if (!QFile::exists(file)) {
        QElapsedTimer timer;
        timer.start();
        generateCanonicalLog(file, lines, 42);
        std::printf("generated %lld lines (%.0f MB) in %lld ms (not measured)\n",
                    static_cast<long long>(lines), double(QFileInfo(file).size()) / 1e6,
                    static_cast<long long>(timer.elapsed()));
    }
    // The number of events report counts is what the dashboard must show.
    const QString reportJson = dir.filePath(QStringLiteral("report.json"));
    const RunResult warm = runMeasured({TS_APP_BINARY, "report", "--json", file.toStdString()},
                                       reportJson.toLocal8Bit().constData());
    QFile json(reportJson);
    json.open(QIODevice::ReadOnly);
    const QByteArray text = json.readAll();
    const qsizetype at = text.indexOf("\"events\":");
    const qint64 expected =
        at < 0 ? -1 : text.mid(at + 9, 20).trimmed().split(',').value(0).toLongLong();
    if (warm.exitCode != 0 || expected <= 0) {
        std::fprintf(stderr, "report failed (exit %d)\n", warm.exitCode);
        return 1;
    }

    const std::string self =
        QFileInfo(QString::fromLocal8Bit(argv[0])).absoluteFilePath().toStdString();
    const QString childOut = dir.filePath(QStringLiteral("child.txt"));
    std::vector<double> report, dashboard, ratios, shown, reportCpu, dashboardCpu, cpuRatios,
        writerCpu, floorRatios;
    const long cores = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
    long reportRss = 0;
    long dashboardRss = 0;
    for (int round = 0; round < rounds; ++round) {
        const RunResult r =
            runMeasured({TS_APP_BINARY, "report", "--json", file.toStdString()}, "/dev/null");
        const RunResult d =
            runMeasured({self, "--child", file.toStdString(), std::to_string(expected)},
                        childOut.toLocal8Bit().constData());
        if (r.exitCode != 0 || d.exitCode != 0) {
            std::fprintf(stderr, "round %d failed: report exit %d, dashboard exit %d\n", round,
                         r.exitCode, d.exitCode);
            return 1;
        }
        QFile out(childOut);
        out.open(QIODevice::ReadOnly);
        const QList<QByteArray> words = out.readAll().simplified().split(' ');
        shown.push_back(words.value(1).toDouble() / 1000.0);
        // The child's CPU by thread: what the scratch workspace's writer alone took.
        QByteArrayList threads;
        double writer = 0;
        for (qsizetype i = 4; i + 1 < words.size(); i += 2) {
            threads << words[i].mid(4, words[i].size() - 5) + '=' + words[i + 1];
            if (words[i] == "cpu[WorkspaceWriter]")
                writer = words[i + 1].toDouble();
        }
        writerCpu.push_back(writer);
        // No dashboard that does the report's work and also stores every row can finish
        // sooner than both CPU totals spread over every core: the floor for the ratio here.
        floorRatios.push_back((r.cpuSeconds + writer) / double(cores) / r.seconds);
        report.push_back(r.seconds);
        dashboard.push_back(d.seconds);
        ratios.push_back(d.seconds / r.seconds);
        reportCpu.push_back(r.cpuSeconds);
        dashboardCpu.push_back(d.cpuSeconds);
        cpuRatios.push_back(d.cpuSeconds / r.cpuSeconds);
        reportRss = std::max(reportRss, r.peakRssKb);
        dashboardRss = std::max(dashboardRss, d.peakRssKb);
        std::printf("round %d: report %.2f s (cpu %.2f s), dashboard complete %.2f s (cpu %.2f s; "
                    "analysis shown at %.2f s), ratio %.2f (cpu %.2f)\n",
                    round + 1, r.seconds, r.cpuSeconds, d.seconds, d.cpuSeconds, shown.back(),
                    ratios.back(), cpuRatios.back());
        std::printf("  dashboard cpu by thread (s): %s\n", threads.join(' ').constData());
    }
    std::printf("read once, %lld lines (%lld events): report %.2f s (peak RSS %ld MB), dashboard "
                "launch -> complete %.2f s (analysis shown %.2f s; peak RSS %ld MB): ratio %.2fx "
                "(median of %d rounds)\n",
                static_cast<long long>(lines), static_cast<long long>(expected), median(report),
                reportRss / 1024, median(dashboard), median(shown), dashboardRss / 1024,
                median(ratios), rounds);
    std::printf("cpu (user + system): report %.2f s, dashboard %.2f s: ratio %.2fx\n",
                median(reportCpu), median(dashboardCpu), median(cpuRatios));
    std::printf("floor on %ld cores with this writer: (report cpu + scratch writer cpu %.2f s) / "
                "%ld = %.2fx the "
                "report's time (calm host), before any plot data or drawing\n",
                cores, median(writerCpu), cores, median(floorRatios));
    return 0;
}
