// Append-to-sink latency of live tailing: a writer thread appends canonical NDJSON lines to a
// file at a steady rate (default 5,000 lines/s); the FileTailer on its own worker thread reads
// them, TailIngest parses each with the NDJSON reader and hands the event to a sink, which
// measures how long ago the line was appended (the append instant travels in the line).
//
//   bench_tail_latency [--rate LINES_PER_S] [--seconds S] [--poll-ms MS] [--watcher on|off]
//
// --watcher off measures pure polling (file systems where inotify sees nothing).
//
// Prints p50 / p90 / p99 / max and checks that every line arrived exactly once.
#include "live/filetailer.h"
#include "live/tailingest.h"

#include <QCoreApplication>
#include <QFile>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fcntl.h>
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

class LatencySink final : public ts::IngestSink
{
public:
    void onEvent(ts::RequestEvent &&event) override
    {
        // requestId = "<sequence>:<append ns>"
        const qsizetype colon = event.requestId.indexOf(u':');
        const qint64 sequence = event.requestId.left(colon).toLongLong();
        const qint64 appendedNs = event.requestId.mid(colon + 1).toLongLong();
        latenciesNs.push_back(nowNs() - appendedNs);
        if (sequence != expectedSequence)
            ++outOfOrder;
        expectedSequence = sequence + 1;
    }
    void onMalformed(ts::MalformedRecord &&) override { ++malformed; }

    std::vector<qint64> latenciesNs; // only touched on the tailer's thread until it is stopped
    qint64 expectedSequence = 0;
    qint64 outOfOrder = 0;
    qint64 malformed = 0;
};

double percentileMs(std::vector<qint64> &sorted, double p)
{
    if (sorted.empty())
        return 0;
    const size_t index = std::min(sorted.size() - 1, size_t(p * double(sorted.size() - 1) + 0.5));
    return double(sorted[index]) / 1e6;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    int rate = 5000;
    double seconds = 10;
    int pollMs = 100;
    bool watcher = true;
    const QStringList args = app.arguments();
    for (qsizetype i = 1; i + 1 < args.size(); i += 2) {
        if (args.at(i) == u"--rate")
            rate = args.at(i + 1).toInt();
        else if (args.at(i) == u"--seconds")
            seconds = args.at(i + 1).toDouble();
        else if (args.at(i) == u"--poll-ms")
            pollMs = args.at(i + 1).toInt();
        else if (args.at(i) == u"--watcher")
            watcher = args.at(i + 1) != u"off";
    }

    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("live.ndjson"));
    QFile(path).open(QIODevice::WriteOnly); // exists from the start

    LatencySink sink;
    ts::live::TailIngest ingest;
    QThread worker;
    auto *tailer = new ts::live::FileTailer;
    tailer->setPollInterval(pollMs);
    tailer->setFileSystemWatcherEnabled(watcher);
    tailer->addFile(path);
    tailer->setBatchCallback([&](const ts::live::TailBatch &batch) { ingest.feed(batch, sink); });
    tailer->moveToThread(&worker);
    QObject::connect(&worker, &QThread::finished, tailer, &QObject::deleteLater);
    worker.start();
    QMetaObject::invokeMethod(tailer, &ts::live::FileTailer::start, Qt::BlockingQueuedConnection);

    // Writer: appends in 1 ms steps (rate / 1000 lines each), one write() per step, as a busy
    // service's logger would.
    const qint64 total = qint64(double(rate) * seconds);
    std::thread writer([&] {
        const int fd = ::open(QFile::encodeName(path).constData(), O_WRONLY | O_APPEND | O_CLOEXEC);
        const auto start = Clock::now();
        qint64 written = 0;
        std::string buffer;
        for (qint64 step = 0; written < total; ++step) {
            std::this_thread::sleep_until(start + std::chrono::microseconds(step * 1000));
            const qint64 due = std::min(total, qint64(double(step + 1) * rate / 1000.0));
            buffer.clear();
            for (; written < due; ++written) {
                buffer += "{\"ts\":\"2026-02-18T22:44:09.512Z\",\"identity\":\"bench\","
                          "\"service\":\"graph\",\"method\":\"GET\",\"url\":\"https://"
                          "graph.microsoft.com/v1.0/me/onenote/pages\",\"status\":200,"
                          "\"requestId\":\"";
                buffer += std::to_string(written) + ':' + std::to_string(nowNs()) + "\"}\n";
            }
            if (!buffer.empty() && ::write(fd, buffer.data(), buffer.size()) < 0)
                std::perror("write");
        }
        ::close(fd);
    });
    writer.join();
    // Let the tailer catch up with the last lines, then stop it on its thread.
    QThread::msleep(quint64(pollMs) * 3 + 200);
    QMetaObject::invokeMethod(tailer, &ts::live::FileTailer::stop, Qt::BlockingQueuedConnection);
    worker.quit();
    worker.wait();

    std::vector<qint64> sorted = sink.latenciesNs;
    std::sort(sorted.begin(), sorted.end());
    std::printf("bench_tail_latency: %lld lines at %d lines/s for %.1f s, poll %d ms, watcher %s\n",
                static_cast<long long>(total), rate, seconds, pollMs, watcher ? "on" : "off");
    std::printf("  received %zu (lost %lld, out of order %lld, malformed %lld)\n", sorted.size(),
                static_cast<long long>(total - qint64(sorted.size())),
                static_cast<long long>(sink.outOfOrder), static_cast<long long>(sink.malformed));
    std::printf("  append-to-sink latency: p50 %.1f ms  p90 %.1f ms  p99 %.1f ms  max %.1f ms\n",
                percentileMs(sorted, 0.50), percentileMs(sorted, 0.90), percentileMs(sorted, 0.99),
                sorted.empty() ? 0.0 : double(sorted.back()) / 1e6);
    const bool ok = qint64(sorted.size()) == total && sink.outOfOrder == 0 && sink.malformed == 0 &&
                    percentileMs(sorted, 0.99) <= 250.0;
    std::printf("  %s (target: every line once, p99 <= 250 ms)\n", ok ? "OK" : "MISSED");
    return ok ? 0 : 1;
}
