// Engine throughput on one core with every built-in policy active, on a realistic mixed stream:
// Fabric (three API groups), Graph OneNote (delegated and app-only, with some non-OneNote Graph
// calls), Service Bus (sends, receives, management operations, explicit credits), ARM reads and
// writes; 100 identities; ~2 % throttled answers with error codes, Retry-After and bodies.
//
// Usage: bench_engine [events, default 5000000] [pool of distinct events, default 500000]
//                     [--no-plot-data] [--file LOG]
// Prints events/s and the ratio to the 2,000,000 events/s goal. --no-plot-data runs the engine
// as `report` does (ThrottleEngine::Options::recordPlotData off): the difference to a run with
// plot data is what the dashboard's series cost. --file LOG feeds the events of a log instead
// (read and parsed before the clock starts; e.g. the 1M-line canonical file of issue 17.5) and
// also times the snapshot the dashboard takes at the end (ThrottleEngine::fillSnapshot).

#include "engine/throttleengine.h"
#include "ingest/sourcereader.h"
#include "policy/policy.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QRandomGenerator>
#include <QStringList>

#include <cstdio>
#include <ctime>
#include <vector>

using namespace ts;

namespace {

// CPU time of this thread: the machine may be shared, and "events/s on one core" is about the
// engine's own work, not about who else is running.
qint64 threadCpuNs()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return qint64(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Keeps every event a reader delivers.
class Collect final : public IngestSink
{
public:
    std::vector<RequestEvent> events;
    void onEvent(RequestEvent &&event) override { events.push_back(std::move(event)); }
    void onMalformed(MalformedRecord &&) override {}
};

// Feeds a log's events once and prints the engine's and the final snapshot's CPU time.
int runFile(const QString &path, const ThrottleEngine::Options &options)
{
    Collect collect;
    const SourceOutcome outcome = readSource(path, collect);
    if (!outcome.readable()) {
        std::fprintf(stderr, "bench_engine: %s\n", qPrintable(outcome.result.fatalError));
        return 1;
    }
    ThrottleEngine engine(PolicySet::builtin(), options);
    qint64 cpuStart = threadCpuNs();
    engine.addBatch(std::span<const RequestEvent>(collect.events.data(), collect.events.size()));
    const double seconds = double(threadCpuNs() - cpuStart) / 1e9;
    cpuStart = threadCpuNs();
    DashboardSnapshot snapshot;
    engine.fillSnapshot(&snapshot);
    const double snapshotSeconds = double(threadCpuNs() - cpuStart) / 1e9;
    std::printf("bench_engine: %zu events of %s in %.3f s CPU = %.0f events/s, plot data %s; "
                "final snapshot %.3f s CPU (%d scopes)\n",
                collect.events.size(), qPrintable(path), seconds,
                double(collect.events.size()) / seconds, options.recordPlotData ? "on" : "off",
                snapshotSeconds, engine.scopeCount());
    return 0;
}

std::vector<RequestEvent> makeStream(int count, QRandomGenerator &rng)
{
    QStringList identities;
    for (int i = 0; i < 100; ++i) {
        identities.append(i % 4 == 0 ? QStringLiteral("sp-%1").arg(i)
                                     : QStringLiteral("user%1@contoso.com").arg(i));
    }
    // URL shapes repeat with different ids, as in a migration log.
    QStringList fabricUrls;
    QStringList graphUrls;
    for (int i = 0; i < 400; ++i) {
        const QString ws = QStringLiteral("%1").arg(rng.generate(), 8, 16, QLatin1Char('0'));
        const QString item = QStringLiteral("%1").arg(rng.generate(), 8, 16, QLatin1Char('0'));
        fabricUrls.append(
            QStringLiteral("https://api.fabric.microsoft.com/v1/workspaces/%1/items").arg(ws));
        fabricUrls.append(QStringLiteral("https://api.fabric.microsoft.com/v1/workspaces/%1/items/"
                                         "%2/jobs/instances?jobType=Pipeline")
                              .arg(ws, item));
        fabricUrls.append(
            QStringLiteral("https://api.fabric.microsoft.com/v1/operations/%1").arg(item));
        graphUrls.append(
            QStringLiteral("https://graph.microsoft.com/v1.0/me/onenote/pages/1-%1/content")
                .arg(item));
        graphUrls.append(
            QStringLiteral("https://graph.microsoft.com/v1.0/me/onenote/sections/1-%1/pages")
                .arg(ws));
        graphUrls.append(
            QStringLiteral("https://graph.microsoft.com/v1.0/users/%1/drive/root").arg(ws));
    }
    const QString fabric = QStringLiteral("fabric");
    const QString graph = QStringLiteral("graph");
    const QString servicebus = QStringLiteral("servicebus");
    const QString app = QStringLiteral("note-bridge");
    const QStringList sbMethods{QStringLiteral("Send"), QStringLiteral("Send"),
                                QStringLiteral("Receive"), QStringLiteral("Peek"),
                                QStringLiteral("CreateQueue")};
    const QStringList namespaces{QStringLiteral("sb-prod"), QStringLiteral("sb-dev"),
                                 QStringLiteral("sb-eu")};
    const QString get = QStringLiteral("GET");
    const QString post = QStringLiteral("POST");
    const QString retry = QStringLiteral("55");
    const QString blocked = QStringLiteral("RequestBlocked");
    const QString onenoteCode = QStringLiteral("20166");
    const QString sbBody =
        QStringLiteral("The request was terminated because the entity is being "
                       "throttled. Error code: 50009. Please wait 2 seconds and try again.");

    std::vector<RequestEvent> events;
    events.reserve(size_t(count));
    qint64 t = 1771454640000;
    for (int i = 0; i < count; ++i) {
        t += qint64(rng.bounded(4u)); // ~670 events per second of log time
        RequestEvent e;
        e.tsMs = t;
        e.identity = identities[int(rng.bounded(100u))];
        e.status = 200;
        e.durationMs = double(20 + rng.bounded(300u));
        const quint32 kind = rng.bounded(100u);
        const bool throttled = rng.bounded(50u) == 0;
        if (kind < 40) {
            e.service = fabric;
            e.url = fabricUrls[int(rng.bounded(quint32(fabricUrls.size())))];
            e.method = e.url.contains(u"jobs") ? post : get;
            if (throttled) {
                e.status = 429;
                e.errorCode = blocked;
                e.retryAfter = retry;
            }
        } else if (kind < 75) {
            e.service = kind < 45 ? QString() : graph; // some inferred from the host
            e.url = graphUrls[int(rng.bounded(quint32(graphUrls.size())))];
            e.method = get;
            e.app = app;
            if (kind == 40)
                e.identity.clear(); // app-only
            if (throttled) {
                e.status = 429;
                e.errorCode = onenoteCode;
            }
        } else if (kind < 95) {
            e.service = servicebus;
            e.serviceBusNamespace = namespaces[int(rng.bounded(3u))];
            e.entity = QStringLiteral("orders");
            e.method = sbMethods[int(rng.bounded(quint32(sbMethods.size())))];
            if (rng.bounded(10u) == 0)
                e.credits = 5;
            if (throttled) {
                e.status = 503;
                e.body = sbBody;
            }
        } else {
            e.url =
                QStringLiteral("https://management.azure.com/subscriptions/sub-%1/resourceGroups/"
                               "rg/providers/Microsoft.Web/sites?api-version=2022-03-01")
                    .arg(rng.bounded(5u));
            e.method = rng.bounded(4u) == 0 ? QStringLiteral("PUT") : get;
        }
        events.push_back(std::move(e));
    }
    return events;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication application(argc, argv);
    QStringList args = application.arguments().mid(1);
    ThrottleEngine::Options options;
    if (args.removeAll(QStringLiteral("--no-plot-data")) > 0)
        options.recordPlotData = false;
    if (const qsizetype file = args.indexOf(QStringLiteral("--file")); file >= 0) {
        if (file + 1 >= args.size()) {
            std::fprintf(stderr, "bench_engine: --file needs a path\n");
            return 2;
        }
        return runFile(args[file + 1], options);
    }
    const qint64 total = args.size() > 0 ? args[0].toLongLong() : 5'000'000;
    QRandomGenerator rng(42);
    const int poolSize = args.size() > 1 ? args[1].toInt() : 500'000;
    std::vector<RequestEvent> pool = makeStream(poolSize, rng);
    const qint64 span = pool.back().tsMs - pool.front().tsMs + 1;

    ThrottleEngine engine(PolicySet::builtin(), options);
    QElapsedTimer timer;
    qint64 elapsedNs = 0;
    qint64 cpuNs = 0;
    qint64 fed = 0;
    for (int pass = 0; fed < total; ++pass) {
        if (pass > 0) {
            for (RequestEvent &e : pool)
                e.tsMs += span; // the next stretch of the same traffic, later in time
        }
        const size_t n = size_t(std::min<qint64>(poolSize, total - fed));
        timer.start();
        const qint64 cpuStart = threadCpuNs();
        engine.addBatch(std::span<const RequestEvent>(pool.data(), n));
        cpuNs += threadCpuNs() - cpuStart;
        elapsedNs += timer.nsecsElapsed();
        fed += qint64(n);
    }
    const double seconds = double(cpuNs) / 1e9;
    const double wallSeconds = double(elapsedNs) / 1e9;
    const double rate = double(fed) / seconds;
    const auto scopes = engine.scopes();
    qint64 predicted = 0;
    qint64 observed = 0;
    for (const ScopeSummary &s : scopes) {
        predicted += s.predictedThrottled;
        observed += s.observedThrottled;
    }
    std::printf("bench_engine: %lld events in %.3f s CPU on one core = %.0f events/s "
                "(%.2fx the 2,000,000 events/s goal; wall %.3f s = %.0f events/s)\n",
                static_cast<long long>(fed), seconds, rate, rate / 2e6, wallSeconds,
                double(fed) / wallSeconds);
    std::printf("  plot data %s\n", options.recordPlotData ? "on" : "off");
    std::printf("  %d policies, %lld scopes, %lld throttles observed (%lld attributed), "
                "%lld predicted, %lld alerts, %lld unmatched\n",
                int(engine.policies().size()), static_cast<long long>(scopes.size()),
                static_cast<long long>(engine.throttleSummary().total),
                static_cast<long long>(observed), static_cast<long long>(predicted),
                static_cast<long long>(engine.alerts().size()),
                static_cast<long long>(engine.unmatchedEvents()));
    return 0;
}
