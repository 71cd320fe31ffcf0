// Benchmark of issue 21's push-down: N rows in a real ClickHouse server (started here on
// loopback ports, data in a temporary directory), then a complete report from them twice,
// `throttlescope report --json --source URL` pulled row by row and with --pushdown, each run
// as its own process: wall time and peak RSS (wait4's ru_maxrss) printed.
//
//   bench_poll [ROWS] [--only pushdown|rows]
//       ROWS default 10,000,000 (TS_BENCH_POLL_ROWS also sets it); --only runs one of the two
//       reports (the row-by-row one takes minutes at 10M rows).
//
// Not a test: it prints figures (docs/performance.md). Needs clickhouse-server installed.
#include "clickhouseserver.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonArray>
#include <QJsonObject>

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
    QByteArray out;
};

// fork + exec, stdout into a pipe, wait4 for this child's own rusage.
Run runChild(const QStringList &args)
{
    Run run;
    int pipeFds[2];
    if (::pipe(pipeFds) != 0)
        return run;
    QElapsedTimer clock;
    clock.start();
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(pipeFds[1], 1);
        ::close(pipeFds[0]);
        ::close(pipeFds[1]);
        std::vector<QByteArray> storage;
        std::vector<char *> argv;
        storage.push_back(QByteArray(TS_APP_BINARY));
        for (const QString &arg : args)
            storage.push_back(arg.toLocal8Bit());
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
        run.out.append(buffer, n);
    ::close(pipeFds[0]);
    int status = 0;
    rusage usage{};
    ::wait4(pid, &status, 0, &usage);
    run.seconds = double(clock.nsecsElapsed()) / 1e9;
    run.maxRssKb = usage.ru_maxrss;
    run.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return run;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    qint64 rows = 10'000'000;
    if (qEnvironmentVariableIsSet("TS_BENCH_POLL_ROWS"))
        rows = qEnvironmentVariable("TS_BENCH_POLL_ROWS").toLongLong();
    // Both by default; --only pushdown / --only rows: one of them.
    bool runPushDown = true;
    bool runRows = true;
    for (int i = 1; i < argc; ++i) {
        const QByteArray arg(argv[i]);
        if (arg == "--only" && i + 1 < argc) {
            const QByteArray which(argv[++i]);
            runPushDown = which == "pushdown";
            runRows = which == "rows";
            if (!runPushDown && !runRows) {
                std::fprintf(stderr, "bench_poll: --only pushdown|rows\n");
                return 2;
            }
        } else {
            rows = arg.toLongLong();
        }
    }
    ts::testch::Server server;
    QString error;
    if (!server.start(&error)) {
        std::fprintf(stderr, "bench_poll: %s\n", qPrintable(error));
        return 1;
    }
    // 2,000 rows a second (10M rows: 83 minutes), 40 identities (each with its app: 4 apps),
    // half Fabric (platform API group: fixed windows per identity) and half Graph (OneNote:
    // sliding windows per app), 1 in 37 throttled. Per second and identity ~50 requests: what
    // push-down folds into one count.
    if (server.query("CREATE TABLE bench (ts UInt64, identity String, app String, service "
                     "String, category String, method String, url String, status UInt16, "
                     "errorCode String, requestId String) ENGINE = MergeTree ORDER BY ts",
                     &error)
            .isNull()) {
        std::fprintf(stderr, "bench_poll: %s\n", qPrintable(error));
        return 1;
    }
    QElapsedTimer clock;
    clock.start();
    const QByteArray insert =
        "INSERT INTO bench SELECT 1771454400000 + intDiv(number, 2), "
        "concat('sp-', toString(number % 40)), concat('app-', toString(number % 4)), "
        "if(number % 2 = 0, 'fabric', 'graph'), if(number % 2 = 0, 'platform', ''), 'GET', "
        "if(number % 2 = 0, 'https://api.fabric.microsoft.com/v1/workspaces', "
        "'https://graph.microsoft.com/v1.0/me/onenote/pages'), "
        "if(number % 37 = 0, 429, 200), if(number % 37 = 0, 'TooManyRequests', ''), "
        "concat('r', toString(number)) FROM system.numbers LIMIT " +
        QByteArray::number(rows);
    if (server.query(insert, &error).isNull()) {
        std::fprintf(stderr, "bench_poll: insert: %s\n", qPrintable(error));
        return 1;
    }
    std::printf("bench_poll: %lld rows inserted into ClickHouse 18.16 in %.1f s\n",
                qlonglong(rows), double(clock.elapsed()) / 1000.0);
    std::fflush(stdout);
    const QString url =
        QStringLiteral("clickhouse://127.0.0.1:%1/default/bench?page=50000").arg(server.httpPort());
    QJsonObject reports[2];
    for (int pushDown = 1; pushDown >= 0; --pushDown) {
        if (!(pushDown ? runPushDown : runRows))
            continue;
        QStringList args{QStringLiteral("report"), QStringLiteral("--json"),
                         QStringLiteral("--source"), url};
        if (pushDown)
            args << QStringLiteral("--pushdown");
        const Run run = runChild(args);
        reports[pushDown] = QJsonDocument::fromJson(run.out).object();
        std::printf("%-12s exit %d, wall %.1f s, peak RSS %.0f MB, events %lld, throttles %lld, "
                    "scopes %lld\n",
                    pushDown ? "pushed down" : "row by row", run.exitCode, run.seconds,
                    double(run.maxRssKb) / 1024.0,
                    qlonglong(reports[pushDown].value(u"events").toDouble()),
                    qlonglong(reports[pushDown]
                                  .value(u"throttles")
                                  .toObject()
                                  .value(u"total")
                                  .toDouble()),
                    qlonglong(reports[pushDown].value(u"scopes").toArray().size()));
        std::fflush(stdout);
    }
    if (runPushDown && runRows)
        std::printf("same events and statuses: %s\n",
                    reports[0].value(u"events") == reports[1].value(u"events") &&
                            reports[0].value(u"byStatus") == reports[1].value(u"byStatus")
                        ? "yes"
                        : "NO");
    server.stop();
    return 0;
}
