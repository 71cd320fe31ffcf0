// Append -> visible on the Overview for a file the dashboard follows (issue 17.8): the real
// window, controller, session and follower (as `throttlescope FILE` builds them); a writer
// thread appends canonical NDJSON lines to the file at a steady rate (default 5,000 lines/s);
// each time the window applies a snapshot (the Overview's events tile and bucket fill are set
// from it), every line that became visible is charged the time since it was appended.
//
//   QT_QPA_PLATFORM=offscreen build/dev/tests/bench/bench_follow_latency [--rate LINES_PER_S]
//       [--seconds S] [--initial LINES]
//
// Prints p50 / p90 / p99 / max and whether every line arrived exactly once (the events total
// ends at initial + appended).
#include "dashboard.h"
#include "dashboardcontroller.h"
#include "mainwindow.h"
#include "overviewpage.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <memory>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

qint64 nowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
        .count();
}

QByteArray line(qint64 sequence)
{
    // Ten identities, one of three a 429: the buckets fill and the throttles count.
    return "{\"ts\":\"2026-02-18T22:" + QByteArray::number(10 + (sequence / 6000) % 40) + ":" +
           QByteArray::number(10 + (sequence / 100) % 50) + ".000Z\",\"identity\":\"user-" +
           QByteArray::number(sequence % 10) +
           "\",\"service\":\"graph\",\"method\":\"GET\",\"url\":\"https://graph.microsoft.com/"
           "v1.0/me/messages\",\"status\":" +
           QByteArray(sequence % 3 == 0 ? "429" : "200") + ",\"requestId\":\"" +
           QByteArray::number(sequence) + "\"}\n";
}

int argValue(const QStringList &args, const QString &name, int fallback)
{
    const auto index = args.indexOf(name);
    return index >= 0 && index + 1 < args.size() ? args.at(index + 1).toInt() : fallback;
}

double percentile(std::vector<qint64> sorted, double p)
{
    if (sorted.empty())
        return 0;
    const size_t index = std::min(sorted.size() - 1, size_t(p * double(sorted.size() - 1) + 0.5));
    return double(sorted[index]) / 1e6;
}

MainWindow *shownWindow()
{
    const auto widgets = QApplication::topLevelWidgets();
    for (QWidget *widget : widgets) {
        if (auto *window = qobject_cast<MainWindow *>(widget))
            return window;
    }
    return nullptr;
}

} // namespace

int main(int argc, char *argv[])
{
    QApplication app(argc, argv);
    QStandardPaths::setTestModeEnabled(true);
    const QStringList args = app.arguments();
    const int rate = argValue(args, QStringLiteral("--rate"), 5000);
    const int seconds = argValue(args, QStringLiteral("--seconds"), 10);
    const int initial = argValue(args, QStringLiteral("--initial"), 1000);
    const qint64 total = qint64(rate) * seconds;

    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("live.ndjson"));
    {
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly))
            return 1;
        for (qint64 i = 0; i < initial; ++i)
            file.write(line(100'000'000 + i)); // other ids than the appended lines
    }

    ts::app::DashboardOptions options;
    options.files = {path};
    ts::app::DashboardController controller(options);
    controller.start();
    MainWindow *window = shownWindow();
    if (!window)
        return 1;
    window->resize(1400, 900);
    ts::widgets::Dashboard *dashboard = window->dashboard();
    dashboard->showPage(QStringLiteral("overview"));

    // appendedNs[i]: when line i was written (0 = not yet). Written by the writer thread before
    // the line; read by the GUI thread once the line is counted in a snapshot.
    auto appendedNs = std::make_unique<std::atomic<qint64>[]>(size_t(total));
    std::vector<qint64> latencies;
    latencies.reserve(size_t(total));
    qint64 visible = 0; // appended lines shown so far
    qint64 shownTotal = 0;
    QObject::connect(dashboard, &ts::widgets::Dashboard::snapshotApplied, dashboard, [&] {
        const qint64 now = nowNs();
        // The Overview is what the operator looks at: make it draw what it was given.
        if (QWidget *page = dashboard->overviewPage())
            page->repaint();
        shownTotal = dashboard->snapshot()->report.events;
        const qint64 appendedShown = shownTotal - initial;
        for (; visible < appendedShown && visible < total; ++visible) {
            const qint64 at = appendedNs[size_t(visible)].load(std::memory_order_acquire);
            if (at > 0)
                latencies.push_back(now - at);
        }
    });

    // Wait for the initial read, then start appending.
    QElapsedTimer wait;
    wait.start();
    while (shownTotal < initial && wait.elapsed() < 60000)
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 20);
    if (shownTotal < initial) {
        std::fprintf(stderr, "the initial %d lines were not shown\n", initial);
        return 1;
    }

    std::atomic<bool> writerDone{false};
    std::thread writer([&] {
        const int fd = ::open(QFile::encodeName(path).constData(), O_WRONLY | O_APPEND);
        const auto start = Clock::now();
        constexpr int kTickMs = 5;
        qint64 written = 0;
        for (int tick = 0; written < total; ++tick) {
            const qint64 due = std::min(total, qint64(rate) * (tick + 1) * kTickMs / 1000);
            QByteArray chunk;
            for (qint64 i = written; i < due; ++i)
                chunk += line(i);
            const qint64 at = nowNs();
            for (qint64 i = written; i < due; ++i)
                appendedNs[size_t(i)].store(at, std::memory_order_release);
            if (!chunk.isEmpty() && ::write(fd, chunk.constData(), size_t(chunk.size())) < 0)
                break;
            written = due;
            std::this_thread::sleep_until(start + std::chrono::milliseconds((tick + 1) * kTickMs));
        }
        ::close(fd);
        writerDone = true;
    });

    wait.restart();
    while ((!writerDone || visible < total) && wait.elapsed() < qint64(seconds) * 1000 + 30000)
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 20);
    writer.join();
    // Anything more would be a line counted twice.
    const qint64 settle = shownTotal;
    QElapsedTimer quiet;
    quiet.start();
    while (quiet.elapsed() < 1000)
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 20);

    std::sort(latencies.begin(), latencies.end());
    std::printf("follow latency: %d lines/s for %d s into a followed file (%d lines before)\n",
                rate, seconds, initial);
    std::printf("  append -> visible on the Overview: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, "
                "max %.1f ms (%zu lines measured)\n",
                percentile(latencies, 0.50), percentile(latencies, 0.90),
                percentile(latencies, 0.99), latencies.empty() ? 0.0 : double(latencies.back()) / 1e6,
                latencies.size());
    std::printf("  events shown %lld of %lld expected%s\n", static_cast<long long>(shownTotal),
                static_cast<long long>(initial + total),
                shownTotal == initial + total && settle == shownTotal ? " (every line once)"
                                                                       : " (MISMATCH)");
    return shownTotal == initial + total ? 0 : 1;
}
