// Dashboard responsiveness with a big dashboard: 100 identities x 3 limits (series of a few
// thousand points each) and a workspace of 1,000,000 events behind the events table. Prints
// the GUI-thread cost of what an operator does: a snapshot landing (model update), replots,
// page switches, zooming, scrubbing the replay slider, filtering the events table.
//
//   QT_QPA_PLATFORM=offscreen build/dev/tests/bench/bench_dashboard [--events N]
//       [--identities N] [--limits N] [--points N]
#include "../widgets/snapshotfixture.h"
#include "bucketpage.h"
#include "dashboard.h"
#include "eventspage.h"
#include "models/eventsmodel.h"
#include "models/identityurgencymodel.h"
#include "models/timerange.h"
#include "overviewpage.h"
#include "qcp.h"
#include "replaybar.h"
#include "store/workspace.h"
#include "store/workspacewriter.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QSlider>
#include <QTableView>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <vector>

namespace {

struct Stats
{
    double medianMs = 0;
    double maxMs = 0;
    // CPU time of the GUI thread (median): what the work costs on a machine shared with other
    // jobs, where the wall-clock figures include waiting for a core.
    double cpuMedianMs = 0;
};

double threadCpuMs()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

// Runs `work` `runs` times; each run ends with the event loop drained so queued work counts.
Stats measure(int runs, const std::function<void(int)> &work)
{
    std::vector<double> times;
    std::vector<double> cpu;
    for (int i = 0; i < runs; ++i) {
        QElapsedTimer timer;
        const double cpuStart = threadCpuMs();
        timer.start();
        work(i);
        QCoreApplication::processEvents();
        times.push_back(static_cast<double>(timer.nsecsElapsed()) / 1e6);
        cpu.push_back(threadCpuMs() - cpuStart);
    }
    std::sort(times.begin(), times.end());
    std::sort(cpu.begin(), cpu.end());
    return {times[times.size() / 2], times.back(), cpu[cpu.size() / 2]};
}

void print(const char *what, const Stats &stats)
{
    std::printf("%-46s median %8.2f ms   max %8.2f ms   cpu median %8.2f ms%s\n", what,
                stats.medianMs, stats.maxMs, stats.cpuMedianMs,
                stats.maxMs > 100.0 ? "   (over 100 ms)" : "");
}

// Views queue their replots (rpQueuedReplot); this runs what is queued, as the event loop
// would, so a measurement contains exactly the replots the application does.
void replotNow(ts::widgets::Dashboard &)
{
    QCoreApplication::processEvents();
}

void forceReplot(ts::widgets::Dashboard &dashboard)
{
    if (QCustomPlot *plot = dashboard.currentPlot())
        plot->replot(QCustomPlot::rpImmediateRefresh);
}

int argValue(const QStringList &args, const QString &name, int fallback)
{
    const auto index = args.indexOf(name);
    return index >= 0 && index + 1 < args.size() ? args.at(index + 1).toInt() : fallback;
}

// A workspace with `count` events (20 identities, every 10th a 429), written through the real
// writer so the reader's indexes are the ones the GUI gets.
bool buildWorkspace(const QString &path, int count)
{
    ts::Workspace workspace;
    if (!workspace.open(path)) {
        std::fprintf(stderr, "workspace: %s\n", qPrintable(workspace.errorString()));
        return false;
    }
    const qint64 sourceId = workspace.addSource(
        QStringLiteral("bench.ndjson"), QStringLiteral("ndjson"), 0, 0, QByteArray("bench"));
    ts::WorkspaceWriter writer;
    if (!writer.start(path)) {
        std::fprintf(stderr, "writer: %s\n", qPrintable(writer.errorString()));
        return false;
    }
    const int batchSize = 8192;
    for (int start = 0; start < count; start += batchSize) {
        ts::WriteBatch batch;
        batch.sourceId = sourceId;
        const int end = std::min(count, start + batchSize);
        batch.events.reserve(end - start);
        for (int i = start; i < end; ++i) {
            ts::RequestEvent event;
            event.tsMs = ts::fixture::t0() + i * 3;
            event.identity = QStringLiteral("identity-%1").arg(i % 20);
            event.method = QStringLiteral("GET");
            event.url =
                QStringLiteral("https://api.fabric.microsoft.com/v1/workspaces/%1").arg(i % 500);
            event.status = i % 10 == 0 ? 429 : 200;
            event.errorCode = i % 10 == 0 ? QStringLiteral("RequestBlocked") : QString();
            event.lane = i % 3 == 0 ? QStringLiteral("background") : QStringLiteral("foreground");
            event.source = QStringLiteral("bench.ndjson");
            event.line = i + 1;
            batch.events.append(std::move(event));
        }
        if (!writer.submit(std::move(batch)))
            return false;
    }
    return writer.finish();
}

} // namespace

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    const QStringList args = app.arguments();
    const int identities = argValue(args, QStringLiteral("--identities"), 100);
    const int limits = argValue(args, QStringLiteral("--limits"), 3);
    const int points = argValue(args, QStringLiteral("--points"), 3000);
    const int events = argValue(args, QStringLiteral("--events"), 1'000'000);

    QElapsedTimer setup;
    setup.start();
    auto snapshot = ts::fixture::largeSnapshot(identities, limits, points);
    std::printf("snapshot: %d identities x %d limits, %d points per series, %zu throttle bins, "
                "%lld breaker transitions, %lld alerts (built in %lld ms, not measured)\n",
                identities, limits, points, snapshot->throttleBins.size(),
                static_cast<long long>(snapshot->report.breakerTransitions.size()),
                static_cast<long long>(snapshot->report.alerts.size()),
                static_cast<long long>(setup.elapsed()));

    ts::widgets::Dashboard dashboard;
    dashboard.resize(1400, 900);
    dashboard.show();
    QCoreApplication::processEvents();

    print("first snapshot (grid reset, overview drawn)", measure(1, [&](int) {
              dashboard.applySnapshot(snapshot);
              dashboard.flushPendingSnapshot();
              dashboard.overviewPage()->gridView()->viewport()->repaint();
          }));
    print("live snapshot (values only, overview)", measure(30, [&](int run) {
              auto next = std::make_shared<ts::DashboardSnapshot>(*snapshot);
              next->generation = snapshot->generation + 1 + static_cast<quint64>(run);
              next->report.scopes[run % next->report.scopes.size()].currentFill = 0.5;
              dashboard.applySnapshot(next);
              dashboard.flushPendingSnapshot();
              dashboard.overviewPage()->gridView()->viewport()->repaint();
          }));
    // The Overview's identities view (the default one): a live snapshot whose values changed
    // everywhere lands, the model recomputes (urgency, sparkline, 429 rates, breakers, safe
    // send) and the visible rows repaint. The budget: 50 ms on the GUI thread. The
    // snapshots are made before the clock starts (the worker thread makes them in the app).
    QTableView *identityTable = dashboard.overviewPage()->identityView();
    std::vector<std::shared_ptr<ts::DashboardSnapshot>> variants;
    for (int v = 0; v < 2; ++v) {
        auto next = std::make_shared<ts::DashboardSnapshot>(*snapshot);
        for (ts::ScopeSummary &scope : next->report.scopes)
            scope.currentFill = std::fmod(scope.currentFill + 0.37 * (v + 1), 1.2);
        variants.push_back(std::move(next));
    }
    quint64 generation = snapshot->generation + 100;
    print("overview identities refresh (live snapshot)", measure(30, [&](int run) {
              variants[size_t(run % 2)]->generation = ++generation; // (a field, no copy)
              dashboard.applySnapshot(variants[size_t(run % 2)]);
              dashboard.flushPendingSnapshot();
              identityTable->viewport()->repaint();
          }));
    ts::models::IdentityUrgencyModel *identityModel = dashboard.overviewPage()->identityModel();
    print("overview identities: model recompute only", measure(30, [&](int run) {
              identityModel->setSnapshot(variants[size_t(run % 2)]);
          }));
    print("overview identities: replay instant (model + repaint)", measure(30, [&](int run) {
              dashboard.timeRange()->setReplayInstant(*snapshot->report.lastMs -
                                                      (run % 10) * 30'000);
              identityTable->viewport()->repaint();
          }));
    variants.clear();
    dashboard.timeRange()->setFollowing(true);

    snapshot->generation = 1000;
    dashboard.applySnapshot(snapshot);
    dashboard.flushPendingSnapshot();

    const QStringList pages = ts::widgets::Dashboard::pageNames();
    for (const QString &page : pages) {
        const QByteArray label = "switch to page " + page.toUtf8() + " (incl. replot)";
        print(label.constData(), measure(10, [&](int run) {
                  // Alternate with the overview so every run is a real switch.
                  dashboard.showPage(run % 2 == 0 ? page : QStringLiteral("overview"));
                  dashboard.flushPendingSnapshot();
                  replotNow(dashboard);
                  QCoreApplication::processEvents();
              }));
    }

    dashboard.showPage(QStringLiteral("bucket"));
    print("bucket view: choose another bucket", measure(20, [&](int run) {
              dashboard.bucketPage()->setScopeIndex((run * 37) % snapshot->report.scopes.size());
              replotNow(dashboard);
          }));
    print("bucket view: full replot", measure(20, [&](int) { forceReplot(dashboard); }));
    ts::models::TimeRange *range = dashboard.timeRange();
    const qint64 first = *snapshot->report.firstMs;
    const qint64 span = *snapshot->report.lastMs - first;
    print("bucket view: zoom/pan (shared range + replot)", measure(20, [&](int run) {
              const qint64 width = span / (2 + run % 10);
              const qint64 start = first + (span - width) * (run % 7) / 7;
              range->setRange(start, start + width);
              replotNow(dashboard);
          }));
    dashboard.showPage(QStringLiteral("throttles"));
    print("throttles view: zoom/pan (shared range + replot)", measure(20, [&](int run) {
              const qint64 width = span / (2 + run % 10);
              range->setRange(first + width / 3, first + width / 3 + width);
              replotNow(dashboard);
          }));
    range->showAll();

    dashboard.showPage(QStringLiteral("overview"));
    QSlider *slider = dashboard.replayBar()->slider();
    print("scrub replay slider (overview grid repaint)", measure(50, [&](int run) {
              slider->setValue((run * 197) % ts::widgets::ReplayBar::kSteps);
              dashboard.overviewPage()->gridView()->viewport()->repaint();
          }));
    dashboard.showPage(QStringLiteral("bucket"));
    print("scrub replay slider (bucket view cursor)", measure(50, [&](int run) {
              slider->setValue((run * 197) % ts::widgets::ReplayBar::kSteps);
              replotNow(dashboard);
          }));
    range->setFollowing(true);

    if (events > 0) {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("bench.db"));
        setup.restart();
        if (!buildWorkspace(path, events))
            return 1;
        std::printf("workspace: %d events written in %lld ms (not measured)\n", events,
                    static_cast<long long>(setup.elapsed()));
        ts::widgets::EventsPage *page = dashboard.eventsPage();
        dashboard.showPage(QStringLiteral("events"));
        print("events: open workspace + count + first page", measure(1, [&](int) {
                  page->setWorkspacePath(path);
                  page->view()->viewport()->repaint();
              }));
        print("events: scroll (fetch next page + repaint)", measure(20, [&](int) {
                  page->model()->fetchMore({});
                  page->view()->scrollToBottom();
                  page->view()->viewport()->repaint();
              }));
        const char *filterNames[] = {"identity", "status 429", "errorCode", "text in URL",
                                     "time window"};
        for (int f = 0; f < 5; ++f) {
            const QByteArray label = QByteArray("events: filter by ") + filterNames[f];
            print(label.constData(), measure(5, [&](int run) {
                      ts::models::EventQuery query;
                      switch (f) {
                      case 0:
                          query.identity = QStringLiteral("identity-%1").arg(run + 3);
                          break;
                      case 1:
                          query.status = run % 2 == 0 ? 429 : 200;
                          break;
                      case 2:
                          query.errorCode = QStringLiteral("RequestBlocked");
                          query.lane = run % 2 == 0 ? QStringLiteral("background") : QString();
                          break;
                      case 3:
                          query.text = QStringLiteral("workspaces/%1").arg(100 + run);
                          break;
                      default:
                          query.fromMs = ts::fixture::t0() + run * 60'000;
                          query.toMs = *query.fromMs + 60'000;
                          break;
                      }
                      page->setFilter(query);
                      page->view()->viewport()->repaint();
                  }));
        }
        // A substring search blocks the GUI thread only to start: its first page is fetched on
        // a worker. How long until the rows are on screen (the GUI stays responsive meanwhile):
        print("events: text search, rows shown after (worker)", measure(5, [&](int run) {
                  ts::models::EventQuery query;
                  query.text = QStringLiteral("workspaces/%1").arg(200 + run);
                  page->setFilter(query);
                  while (page->model()->isFetching())
                      QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 5);
                  page->view()->viewport()->repaint();
              }));
        std::printf("events loaded in the model after the runs: %d of %lld matching\n",
                    page->model()->rowCount(),
                    static_cast<long long>(page->model()->matchingCount()));
    }
    return 0;
}
