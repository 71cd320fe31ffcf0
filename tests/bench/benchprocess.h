#pragma once
// Runs a command as a child process and measures it (wall time, CPU time, peak RSS), for the
// benchmarks that compare the throttlescope binary with a reference run in the same run.

#include <QElapsedTimer>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace ts::bench {

struct RunResult
{
    double seconds = 0;
    double cpuSeconds = 0; // user + system: steadier than wall time on a busy host
    long peakRssKb = 0;
    int exitCode = -1;
};

// Runs argv with stdout to /dev/null (or a file) and returns wall time and the child's peak RSS.
inline RunResult runMeasured(const std::vector<std::string> &argv,
                             const char *stdoutPath = "/dev/null")
{
    std::vector<char *> args;
    for (const auto &a : argv)
        args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    QElapsedTimer timer;
    timer.start();
    pid_t pid = 0;
    RunResult result;
    if (posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ) != 0) {
        std::fprintf(stderr, "cannot start %s\n", args[0]);
        return result;
    }
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    result.seconds = double(timer.nsecsElapsed()) / 1e9;
    result.peakRssKb = usage.ru_maxrss;
    const auto toSeconds = [](const timeval &tv) { return double(tv.tv_sec) + tv.tv_usec / 1e6; };
    result.cpuSeconds = toSeconds(usage.ru_utime) + toSeconds(usage.ru_stime);
    result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    posix_spawn_file_actions_destroy(&actions);
    return result;
}

// The run with the median time (the upper one of an even count).
inline RunResult medianRun(std::vector<RunResult> runs)
{
    std::sort(runs.begin(), runs.end(),
              [](const RunResult &a, const RunResult &b) { return a.seconds < b.seconds; });
    return runs.empty() ? RunResult{} : runs[runs.size() / 2];
}

inline double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    return values.empty() ? 0 : values[values.size() / 2];
}

} // namespace ts::bench
