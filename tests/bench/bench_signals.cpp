// Cost of throttle-signal extraction and redaction per event, for the report's 1M lines/s
// budget. Prints ns/event for the cases that dominate real logs.
//   build/dev/tests/bench/bench_signals [iterations] [name filter]

#include "ingest/redaction.h"
#include "signals/throttlesignals.h"

#include <QCoreApplication>
#include <QElapsedTimer>

#include <cstdio>
#include <ctime>

using namespace ts;

namespace {

volatile qint64 g_sink = 0; // keeps the optimiser from dropping the measured calls

qint64 threadCpuNs()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return qint64(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Wall time and this thread's CPU time: on a shared, loaded machine the CPU figure is the one
// that says what the code costs.
QByteArray g_filter; // optional second argument: only cases whose name contains it

template <typename Fn> void measure(const char *name, qint64 iterations, Fn &&fn)
{
    if (!g_filter.isEmpty() && !QByteArray(name).contains(g_filter))
        return;
    for (qint64 i = 0; i < iterations / 10; ++i) // warm-up
        fn();
    QElapsedTimer timer;
    timer.start();
    const qint64 cpuStart = threadCpuNs();
    for (qint64 i = 0; i < iterations; ++i)
        fn();
    const double cpu = double(threadCpuNs() - cpuStart) / double(iterations);
    const double wall = double(timer.nsecsElapsed()) / double(iterations);
    std::printf("%-44s %9.1f ns/event CPU (%6.2f M/s)  %9.1f ns wall\n", name, cpu, 1000.0 / cpu,
                wall);
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const qint64 iterations = argc > 1 ? QByteArray(argv[1]).toLongLong() : 2'000'000;
    g_filter = argc > 2 ? QByteArray(argv[2]) : QByteArray();

    RequestEvent plain;
    plain.tsMs = 1771454649512;
    plain.identity = QStringLiteral("sp-migrator");
    plain.service = QStringLiteral("fabric");
    plain.method = QStringLiteral("GET");
    plain.url = QStringLiteral("https://api.fabric.microsoft.com/v1/workspaces");
    plain.status = 200;
    plain.durationMs = 84;

    // The canonical log's Fabric 429 line plus the headers a HAR capture would add.
    RequestEvent fabric = plain;
    fabric.method = QStringLiteral("POST");
    fabric.url = QStringLiteral("https://api.fabric.microsoft.com/v1/workspaces/1f2e/items/9a8b/"
                                "jobs/instances?jobType=Pipeline");
    fabric.status = 429;
    fabric.retryAfter = QStringLiteral("55");
    fabric.headers.set(QStringLiteral("Retry-After"), QStringLiteral("55"));
    fabric.headers.set(QStringLiteral("x-ms-public-api-error-code"),
                       QStringLiteral("RequestBlocked"));
    fabric.body = QStringLiteral("{\"requestId\": \"44f7c278-3c6c-4d94-9649-60b40c7ef6c9\", "
                                 "\"errorCode\": \"RequestBlocked\", "
                                 "\"message\": \"Request is blocked by the upstream service until: "
                                 "9/2/2025 5:21:55 PM (UTC)\"}");

    // Same, as the canonical log usually has it: errorCode field, no headers.
    RequestEvent fabricLog = fabric;
    fabricLog.headers = HttpHeaders();
    fabricLog.errorCode = QStringLiteral("RequestBlocked");

    RequestEvent graph200 = plain;
    graph200.headers.set(QStringLiteral("x-ms-throttle-limit-percentage"), QStringLiteral("0.85"));
    graph200.headers.set(QStringLiteral("x-ms-resource-unit"), QStringLiteral("1"));

    measure("extract: plain 200", iterations, [&] {
        const auto s = throttle::extract(plain);
        g_sink = g_sink + (s.throttled ? 1 : 0);
    });
    measure("isThrottle: plain 200", iterations,
            [&] { g_sink = g_sink + throttle::isThrottle(plain); });
    measure("extract: Graph 200 with 2 throttle headers", iterations, [&] {
        const auto s = throttle::extract(graph200);
        g_sink = g_sink + (s.limitPercentage ? 1 : 0);
    });
    measure("extract: Fabric 429 (headers + JSON body)", iterations / 4, [&] {
        const auto s = throttle::extract(fabric);
        g_sink = g_sink + s.retryAtMs.value_or(0);
    });
    measure("extract: Fabric 429 (log fields + body)", iterations / 4, [&] {
        const auto s = throttle::extract(fabricLog);
        g_sink = g_sink + s.retryAtMs.value_or(0);
    });
    // redactEvent is idempotent and leaves clean events untouched, so running it again and
    // again on the same event measures exactly the per-event cost of a clean event.
    RequestEvent plainCopy = plain;
    measure("redactEvent: plain 200", iterations, [&] {
        redact::redactEvent(plainCopy);
        g_sink = g_sink + plainCopy.url.size();
    });
    RequestEvent fabricCopy = fabric;
    measure("redactEvent: Fabric 429 (nothing secret)", iterations / 4, [&] {
        redact::redactEvent(fabricCopy);
        g_sink = g_sink + fabricCopy.body.size();
    });
    RequestEvent sasCopy = plain;
    sasCopy.url = QStringLiteral("https://acct.blob.core.windows.net/c/"
                                 "b.txt?sv=2021-08-06&se=2026-02-19&sr=b&sp=r&sig=REDACTED");
    measure("redactEvent: already-redacted SAS URL", iterations, [&] {
        redact::redactEvent(sasCopy);
        g_sink = g_sink + sasCopy.url.size();
    });
    return 0;
}
