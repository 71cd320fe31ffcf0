// Throughput of the danger detectors: events per second through BreakerTracker::add and
// AlertDetector::add on a synthetic, time-ordered mixed workload (Graph app with 50 users and
// lanes, Fabric jobs with operationIds, $batch sub-responses, periodic 429 waves). Signal
// extraction is done beforehand and not timed: it is measured by the signals benchmarks.
//
// Times are thread CPU time.
//
//   bench_dangers [passes]              (default 5 passes over 400,000 events = 2,000,000 events)
//   bench_dangers [passes] --log FILE   the events of a real log instead (any format `report`
//                                       reads), held in memory: the detectors' cost on it alone

#include "engine/alertdetector.h"
#include "engine/breakertracker.h"
#include "ingest/sourcereader.h"
#include "signals/throttlesignals.h"

#include <QCoreApplication>
#include <QStringList>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

using namespace ts;

namespace {

constexpr qint64 kT0 = 1771454400000;
constexpr int kEventsPerPass = 400000;

struct Workload
{
    std::vector<RequestEvent> events;
    std::vector<throttle::ThrottleSignals> extracted;
};

Workload buildWorkload()
{
    QStringList users;
    for (int i = 0; i < 50; ++i)
        users.append(QStringLiteral("user%1@contoso.com").arg(i));
    QStringList pageUrls;
    for (int i = 0; i < 5000; ++i)
        pageUrls.append(
            QStringLiteral("https://graph.microsoft.com/v1.0/me/onenote/pages/1-%1/content")
                .arg(i));
    const QString app = QStringLiteral("note-bridge");
    const QString graph = QStringLiteral("graph");
    const QString fabric = QStringLiteral("fabric");
    const QString get = QStringLiteral("GET");
    const QString post = QStringLiteral("POST");
    const QString background = QStringLiteral("background");
    const QString foreground = QStringLiteral("foreground");
    const QString jobsUrl = QStringLiteral(
        "https://api.fabric.microsoft.com/v1/workspaces/1f2e/items/9a8b/jobs/instances");

    Workload workload;
    workload.events.reserve(kEventsPerPass);
    quint32 random = 12345;
    const auto next = [&random] {
        random = random * 1664525u + 1013904223u;
        return random >> 8;
    };
    for (int i = 0; i < kEventsPerPass; ++i) {
        RequestEvent event;
        event.tsMs = kT0 + qint64(i) * 5; // 200 requests per second
        // A 429 wave every 60 s, lasting 2 s.
        const bool inWave = (i % 12000) < 400;
        const quint32 roll = next() % 100;
        if (roll < 70) {
            event.service = graph;
            event.app = app;
            event.identity = users[int(next() % 50)];
            event.method = get;
            event.url = pageUrls[int(next() % 5000)];
            event.lane = (roll % 3 == 0) ? foreground : background;
            event.status = inWave && roll < 50 ? 429 : 200;
            if (event.status == 429) {
                event.headers.set(QStringLiteral("x-ms-throttle-scope"),
                                  roll < 10 ? QStringLiteral("Application")
                                            : QStringLiteral("User"));
                event.retryAfter = QStringLiteral("3");
            } else if (roll < 5) {
                event.headers.set(QStringLiteral("x-ms-throttle-limit-percentage"),
                                  QStringLiteral("0.86"));
            }
            if (roll >= 60) {
                event.batchId = QStringLiteral("b-%1").arg(i / 20);
                event.batchIndex = i % 20;
            }
        } else {
            event.service = fabric;
            event.identity = QStringLiteral("sp-migrator");
            event.method = post;
            event.url = jobsUrl;
            event.operationId = QStringLiteral("job-%1").arg(i / 3);
            event.attempt = i % 3;
            event.status = inWave ? 429 : (roll == 99 ? 503 : 200);
            if (event.status == 429) {
                event.errorCode = QStringLiteral("RequestBlocked");
                event.retryAfter = QStringLiteral("30");
            }
        }
        workload.events.push_back(std::move(event));
    }
    workload.extracted.reserve(workload.events.size());
    for (const RequestEvent &event : workload.events)
        workload.extracted.push_back(throttle::extract(event));
    return workload;
}

// Every request of a log, in file order, with its signals extracted.
class WorkloadSink : public IngestSink
{
public:
    explicit WorkloadSink(Workload &workload) : m_workload(workload) {}
    void onEvent(RequestEvent &&event) override
    {
        if (event.type == EventType::Request)
            m_workload.events.push_back(std::move(event));
    }
    void onMalformed(MalformedRecord &&) override {}

private:
    Workload &m_workload;
};

Workload loadWorkload(const QString &path)
{
    Workload workload;
    WorkloadSink sink(workload);
    const SourceOutcome outcome = readSource(path, sink);
    if (!outcome.readable() || workload.events.empty()) {
        std::fprintf(stderr, "bench_dangers: no events from %s %s\n", qPrintable(path),
                     qPrintable(outcome.result.fatalError));
        std::exit(2);
    }
    workload.extracted.reserve(workload.events.size());
    for (const RequestEvent &event : workload.events)
        workload.extracted.push_back(throttle::extract(event));
    return workload;
}

// CPU time of this thread: the build machine is shared, so wall-clock time would measure the
// neighbours as much as this code.
qint64 threadCpuNs()
{
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return qint64(now.tv_sec) * 1000000000 + now.tv_nsec;
}

// Accumulates thread CPU time over several timed sections.
class CpuStopwatch
{
public:
    void start() { m_startedNs = threadCpuNs(); }
    void stop() { m_totalNs += threadCpuNs() - m_startedNs; }
    [[nodiscard]] qint64 totalNs() const { return m_totalNs; }

private:
    qint64 m_startedNs = 0;
    qint64 m_totalNs = 0;
};

void shift(Workload &workload, qint64 byMs)
{
    for (RequestEvent &event : workload.events)
        event.tsMs += byMs;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication application(argc, argv);
    const QStringList arguments = QCoreApplication::arguments();
    const qsizetype logAt = arguments.indexOf(QStringLiteral("--log"));
    const QString logPath =
        logAt > 0 && logAt + 1 < arguments.size() ? arguments.at(logAt + 1) : QString();
    const int passes =
        arguments.size() > 1 && logAt != 1 ? std::max(1, arguments.at(1).toInt()) : 5;

    Workload workload = logPath.isEmpty() ? buildWorkload() : loadWorkload(logPath);
    const qint64 passSpanMs = workload.events.back().tsMs - workload.events.front().tsMs + 5;
    const double total = double(passes) * double(workload.events.size());

    // Memory floor: only touch what every detector reads first (events are cold in cache
    // here, unlike in a streaming pipeline where the reader just wrote them).
    qint64 checksum = 0;
    CpuStopwatch touch;
    {
        touch.start();
        for (int pass = 0; pass < passes; ++pass) {
            const size_t count = workload.events.size();
            for (size_t i = 0; i < count; ++i) {
                const RequestEvent &event = workload.events[i];
                checksum += event.tsMs + event.status + event.identity.size() +
                            int(workload.extracted[i].throttled);
            }
        }
        touch.stop();
    }
    const qint64 touchNs = touch.totalNs();

    BreakerTracker breakers;
    CpuStopwatch breakerTime;
    for (int pass = 0; pass < passes; ++pass) {
        breakerTime.start();
        const size_t count = workload.events.size();
        for (size_t i = 0; i < count; ++i)
            breakers.add(workload.events[i], workload.extracted[i]);
        breakerTime.stop();
        shift(workload, passSpanMs);
    }
    shift(workload, -passSpanMs * passes);

    AlertDetector alerts;
    CpuStopwatch alertTime;
    for (int pass = 0; pass < passes; ++pass) {
        alertTime.start();
        const size_t count = workload.events.size();
        for (size_t i = 0; i < count; ++i)
            alerts.add(workload.events[i], workload.extracted[i]);
        alertTime.stop();
        shift(workload, passSpanMs);
    }
    const qint64 endMs = workload.events.front().tsMs;
    CpuStopwatch reportTime;
    reportTime.start();
    alerts.finish(endMs);
    const QList<Alert> found = alerts.alerts();
    const QList<BreakerSummary> summaries = breakers.summaries(endMs);
    reportTime.stop();
    const qint64 breakerNs = breakerTime.totalNs();
    const qint64 alertNs = alertTime.totalNs();
    const qint64 reportNs = reportTime.totalNs();

    std::printf("events:           %.0f (%d passes of %zu)\n", total, passes,
                workload.events.size());
    std::printf("touch only:       %.1f ns/event (memory floor, checksum %lld)\n",
                double(touchNs) / total, checksum);
    std::printf(
        "BreakerTracker:   %.2f M events/s (%.1f ns/event), %lld breakers, %lld transitions\n",
        total / (double(breakerNs) / 1e9) / 1e6, double(breakerNs) / total,
        qint64(summaries.size()), qint64(breakers.transitions().size()));
    std::printf(
        "AlertDetector:    %.2f M events/s (%.1f ns/event), %lld alerts, %lld failed ops tracked\n",
        total / (double(alertNs) / 1e9) / 1e6, double(alertNs) / total, qint64(found.size()),
        qint64(alerts.trackedFailedOperations()));
    std::printf("both:             %.2f M events/s\n",
                total / (double(breakerNs + alertNs) / 1e9) / 1e6);
    std::printf("alerts()+summaries(): %.2f ms\n", double(reportNs) / 1e6);
    // One example per kind, so a reader of the output sees what an operator would.
    QStringList shownKinds;
    for (const Alert &alert : found) {
        if (shownKinds.contains(alert.kind))
            continue;
        shownKinds.append(alert.kind);
        std::printf("\n[%s %s] %s: %s\n", qPrintable(alert.severity), qPrintable(alert.kind),
                    qPrintable(alert.key), qPrintable(alert.detail));
    }
    return 0;
}
