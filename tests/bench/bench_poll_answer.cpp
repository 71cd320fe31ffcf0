// Benchmark of issue 29.9: the memory of `throttlescope poll` on one huge answer. A store on
// loopback (tests/poll/hostile_store.py) answers a poll with HUGE_MB megabytes of valid rows
// (or one row of that size), chunked, whatever page was asked; `poll --once` runs against it
// as its own process and its peak RSS (wait4's ru_maxrss) and wall time are printed, with a
// reference run on a 5 MB answer in the same run.
//
//   bench_poll_answer [HUGE_MB]     (default 500)
//
// Runs: the answer under the default answer cap (max-answer=64: refused, with its error),
// the cap raised above the answer (read whole: its rows are stored), and one row of HUGE_MB
// (longer than the row cap: a malformed row). Goal: peak RSS under 300 MB for any of them.
// Not a test: it prints figures (docs/performance.md). Needs python3.
#include "hostilestore.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QTemporaryDir>

#include <cstdio>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

struct Run
{
    int exitCode = -1;
    double seconds = 0;
    long maxRssKb = 0;
    QByteArray err;
};

// fork + exec of the app, stderr into a pipe, wait4 for this child's own rusage.
Run runApp(const QStringList &args)
{
    Run run;
    int pipeFds[2];
    if (::pipe(pipeFds) != 0)
        return run;
    QElapsedTimer clock;
    clock.start();
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(pipeFds[1], 2);
        ::close(pipeFds[0]);
        ::close(pipeFds[1]);
        std::vector<QByteArray> storage{QByteArray(TS_APP_BINARY)};
        for (const QString &arg : args)
            storage.push_back(arg.toLocal8Bit());
        std::vector<char *> argv;
        for (QByteArray &arg : storage)
            argv.push_back(arg.data());
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    ::close(pipeFds[1]);
    char buffer[65536];
    ssize_t n = 0;
    while ((n = ::read(pipeFds[0], buffer, sizeof buffer)) > 0)
        run.err.append(buffer, n);
    ::close(pipeFds[0]);
    int status = 0;
    rusage usage{};
    ::wait4(pid, &status, 0, &usage);
    run.seconds = double(clock.nsecsElapsed()) / 1e9;
    run.maxRssKb = usage.ru_maxrss;
    run.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return run;
}

// The last line the run printed on stderr that says something (its error or its summary).
QByteArray lastWords(const QByteArray &err)
{
    const QList<QByteArray> lines = err.trimmed().split('\n');
    for (auto it = lines.crbegin(); it != lines.crend(); ++it) {
        if (it->contains("error") || it->contains("warning") || it->contains("rows"))
            return it->left(160);
    }
    return lines.isEmpty() ? QByteArray() : lines.constLast().left(160);
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    const int hugeMb = argc > 1 ? QByteArray(argv[1]).toInt() : 500;
    ts::testhostile::Store store;
    QString error;
    if (!store.start(&error)) {
        std::fprintf(stderr, "bench_poll_answer: %s\n", qPrintable(error));
        return 1;
    }
    QTemporaryDir dir;
    struct Case
    {
        const char *name;
        const char *fault;
        int mb;
        const char *options;
    };
    const QList<Case> cases{
        {"reference: 5 MB of rows, cap raised", "huge", 5, "&max-answer=1024"},
        {"rows, default cap (64 MB)", "huge", hugeMb, ""},
        {"rows, cap raised above the answer", "huge", hugeMb, "&max-answer=1024"},
        {"one row of the whole answer", "huge_line", hugeMb, "&max-answer=1024"},
    };
    long referenceKb = 0;
    std::printf("bench_poll_answer: `poll --once` against one answer of %d MB (chunked)\n", hugeMb);
    int index = 0;
    for (const Case &c : cases) {
        store.configure({{u"fault"_qs, QString::fromLatin1(c.fault)},
                         {u"fault_count"_qs, 1},
                         {u"huge_mb"_qs, c.mb}});
        const QString workspace = dir.filePath(QStringLiteral("ws%1.tsws").arg(index++));
        const Run run = runApp({u"poll"_qs, u"--once"_qs, u"--status-interval"_qs, u"0"_qs,
                                u"--workspace"_qs, workspace, u"--source"_qs,
                                store.url(u"ndjson"_qs, u"&retries=1&timeout=600"_qs +
                                                            QString::fromLatin1(c.options))});
        if (referenceKb == 0)
            referenceKb = run.maxRssKb;
        std::printf("  %-40s %3d MB: exit %d, %6.1f s wall, peak RSS %5ld MB (%.2fx the "
                    "reference)\n      %s\n",
                    c.name, c.mb, run.exitCode, run.seconds, run.maxRssKb / 1024,
                    referenceKb > 0 ? double(run.maxRssKb) / double(referenceKb) : 0.0,
                    lastWords(run.err).constData());
        std::fflush(stdout);
    }
    return 0;
}
