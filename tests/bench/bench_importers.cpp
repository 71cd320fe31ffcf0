// Importer throughput, per format, in MB/s of input and events/s, with the canonical NDJSON
// reader as the yardstick in the same run. Generates realistic files of about the same size in a
// temporary directory (HAR with base64 bodies and JWT bearer headers, App Insights CSV, OTLP
// collector lines, Combined access log, NDJSON), reads each twice and reports the faster run.
//
//   bench_importers [MB per file, default 64] [only this format]
#include "ingest/accesslogreader.h"
#include "ingest/csvreader.h"
#include "ingest/harreader.h"
#include "ingest/ndjsonreader.h"
#include "ingest/otlpreader.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTextStream>

#include <cstdio>
#include <ctime>
#include <functional>
#include <memory>

using namespace ts;

namespace {

struct CountingSink final : IngestSink
{
    qint64 events = 0;
    qint64 malformed = 0;
    void onEvent(RequestEvent &&) override { ++events; }
    void onMalformed(MalformedRecord &&) override { ++malformed; }
};

// Writes records produced by makeRecord(i) until the file holds targetBytes.
qint64 writeFile(const QString &path, qint64 targetBytes, const QByteArray &head,
                 const std::function<QByteArray(qint64)> &makeRecord, const QByteArray &separator,
                 const QByteArray &tail)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return 0;
    file.write(head);
    qint64 written = head.size();
    qint64 records = 0;
    QByteArray chunk;
    while (written < targetBytes) {
        if (records > 0)
            chunk += separator;
        chunk += makeRecord(records++);
        if (chunk.size() > (1 << 20)) {
            written += file.write(chunk);
            chunk.clear();
        }
    }
    chunk += tail;
    file.write(chunk);
    return records;
}

QByteArray isoAt(qint64 i)
{
    const qint64 ms = 1771454649000 + i * 37;
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC)
        .toString(QStringLiteral("yyyy-MM-ddTHH:mm:ss.zzzZ"))
        .toLatin1();
}

const QByteArray kJwt =
    "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9." +
    QByteArray(R"({"upn":"alice@contoso.com","oid":"1b2c","appid":"app-1","tid":"t-1"})")
        .toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals) +
    ".c2lnbmF0dXJl";

QByteArray harEntry(qint64 i)
{
    const bool throttled = i % 50 == 0;
    const QByteArray body = QByteArray(R"({"value":[{"id":")") + QByteArray::number(i) +
                            R"(","displayName":"Page","content":")" + QByteArray(600, 'x') +
                            R"("}]})";
    return R"({"startedDateTime":")" + isoAt(i) +
           R"(","time":84.5,"request":{"method":"GET","url":"https://graph.microsoft.com/v1.0/me/onenote/pages/)" +
           QByteArray::number(i) +
           R"(/content?$select=id","httpVersion":"HTTP/2","cookies":[],"headers":[{"name":"Accept","value":"application/json"},{"name":"Authorization","value":"Bearer )" +
           kJwt +
           R"("},{"name":"User-Agent","value":"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36"}],"queryString":[],"headersSize":-1,"bodySize":0},"response":{"status":)" +
           (throttled ? "429" : "200") +
           R"(,"statusText":"","httpVersion":"HTTP/2","cookies":[],"headers":[{"name":"Content-Type","value":"application/json"},{"name":"request-id","value":"9f1c-)" +
           QByteArray::number(i) +
           R"("},{"name":"x-ms-resource-unit","value":"1"},{"name":"Cache-Control","value":"no-cache"})" +
           (throttled ? R"(,{"name":"Retry-After","value":"30"})" : "") +
           R"(],"content":{"size":700,"mimeType":"application/json","encoding":"base64","text":")" +
           body.toBase64() +
           R"("},"redirectURL":"","headersSize":-1,"bodySize":700},"cache":{},"timings":{"send":0.1,"wait":80.2,"receive":4.2}})";
}

QByteArray csvRow(qint64 i)
{
    return isoAt(i) + ",req-" + QByteArray::number(i) +
           ",GET /v1.0/me/messages,https://graph.microsoft.com/v1.0/me/messages?$top=10," +
           (i % 50 == 0 ? "False,429" : "True,200") +
           ",84.5,\"{\"\"Retry-After\"\":\"\"30\"\",\"\"identity\"\":\"\"alice@contoso.com\"\"}\","
           "op-" +
           QByteArray::number(i) + ",note-bridge,,1";
}

QByteArray otlpLine(qint64 i)
{
    const QByteArray start = QByteArray::number(1771454649000000000LL + i * 37000000LL);
    const QByteArray end = QByteArray::number(1771454649084000000LL + i * 37000000LL);
    QByteArray spans;
    for (int s = 0; s < 10; ++s) {
        if (s)
            spans += ',';
        spans +=
            R"({"traceId":"5B8EFFF798038103D269B633813FC60C","spanId":"EEE19B7EC3C1B17)" +
            QByteArray::number(s) + R"(","name":"GET","kind":3,"startTimeUnixNano":")" + start +
            R"(","endTimeUnixNano":")" + end +
            R"(","attributes":[{"key":"http.request.method","value":{"stringValue":"GET"}},{"key":"url.full","value":{"stringValue":"https://graph.microsoft.com/v1.0/me"}},{"key":"http.response.status_code","value":{"intValue":")" +
            (s == 0 ? "429" : "200") +
            R"("}},{"key":"enduser.id","value":{"stringValue":"alice@contoso.com"}}]})";
    }
    return R"({"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"note-bridge"}}]},"scopeSpans":[{"scope":{"name":"lib"},"spans":[)" +
           spans + "]}]}]}";
}

QByteArray accessLine(qint64 i)
{
    const qint64 second = i / 20;
    const QByteArray time = QDateTime::fromSecsSinceEpoch(1431857103 + second, Qt::UTC)
                                .toString(QStringLiteral("dd/MMM/yyyy:HH:mm:ss +0000"))
                                .toLatin1();
    return "83.149.9." + QByteArray::number(i % 250) + " - - [" + time +
           "] \"GET /presentations/logstash-monitorama-2013/images/kibana-search.png HTTP/1.1\" " +
           (i % 50 == 0 ? "429" : "200") +
           " 203023 \"http://semicomplete.com/presentations/logstash-monitorama-2013/\" "
           "\"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_9_1) AppleWebKit/537.36 (KHTML, like "
           "Gecko) Chrome/32.0.1700.77 Safari/537.36\"";
}

QByteArray ndjsonLine(qint64 i)
{
    return R"({"ts":")" + isoAt(i) +
           R"(","identity":"alice@contoso.com","app":"note-bridge","service":"graph","method":"GET","url":"https://graph.microsoft.com/v1.0/me/onenote/pages/)" +
           QByteArray::number(i) + R"(/content","status":)" + (i % 50 == 0 ? "429" : "200") +
           R"(,"durationMs":84.5,"headers":{"x-ms-resource-unit":"1"}})";
}

QByteArray g_only;

double threadCpuSeconds()
{
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return double(now.tv_sec) + double(now.tv_nsec) / 1e9;
}

void run(const char *name, LogReader &reader, const QString &path)
{
    if (!g_only.isEmpty() && g_only != name)
        return;
    double bestSeconds = 1e9;
    double bestCpu = 1e9;
    CountingSink best;
    qint64 bytes = 0;
    for (int round = 0; round < 2; ++round) {
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            return;
        bytes = file.size();
        CountingSink sink;
        QElapsedTimer timer;
        timer.start();
        const double cpuStart = threadCpuSeconds();
        const ReadResult result = reader.read(file, path, sink, {});
        const double seconds = timer.nsecsElapsed() / 1e9;
        bestCpu = std::min(bestCpu, threadCpuSeconds() - cpuStart);
        if (!result.fatalError.isEmpty())
            std::printf("  %s: %s\n", name, qPrintable(result.fatalError));
        if (seconds < bestSeconds) {
            bestSeconds = seconds;
            best = sink;
        }
    }
    // Wall time suffers from other processes on a shared machine; the thread's CPU time is
    // what the reader itself costs.
    std::printf("%-8s %7.1f MB %9lld events | wall %6.3f s %7.1f MB/s | cpu %6.3f s %7.1f MB/s "
                "%10.0f events/s | %lld malformed\n",
                name, bytes / 1e6, static_cast<long long>(best.events), bestSeconds,
                bytes / 1e6 / bestSeconds, bestCpu, bytes / 1e6 / bestCpu, best.events / bestCpu,
                static_cast<long long>(best.malformed));
    std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const qint64 megabytes = argc > 1 ? QByteArray(argv[1]).toLongLong() : 64;
    const qint64 target = std::max<qint64>(1, megabytes) * 1000 * 1000;
    if (argc > 2)
        g_only = argv[2];
    QTemporaryDir dir;
    if (!dir.isValid())
        return 1;
    std::printf("generating ~%lld MB per format in %s\n", static_cast<long long>(megabytes),
                qPrintable(dir.path()));
    const QString har = dir.filePath(QStringLiteral("bench.har"));
    const QString csv = dir.filePath(QStringLiteral("bench.csv"));
    const QString otlp = dir.filePath(QStringLiteral("bench.otlp.jsonl"));
    const QString access = dir.filePath(QStringLiteral("bench.access.log"));
    const QString ndjson = dir.filePath(QStringLiteral("bench.ndjson"));
    const auto wanted = [](const char *name) { return g_only.isEmpty() || g_only == name; };
    if (wanted("har"))
        writeFile(har, target,
                  R"({"log":{"version":"1.2","creator":{"name":"bench","version":"1"},"entries":[)",
                  harEntry, ",\n", "]}}\n");
    if (wanted("csv"))
        writeFile(csv, target,
                  "timestamp [UTC],id,name,url,success,resultCode,duration,customDimensions,"
                  "operation_Id,cloud_RoleName,user_AuthenticatedId,itemCount\n",
                  csvRow, "\n", "\n");
    if (wanted("otlp"))
        writeFile(otlp, target, {}, otlpLine, "\n", "\n");
    if (wanted("access"))
        writeFile(access, target, {}, accessLine, "\n", "\n");
    if (wanted("ndjson"))
        writeFile(ndjson, target, {}, ndjsonLine, "\n", "\n");

    NdjsonReader ndjsonReader;
    HarReader harReader;
    CsvReader csvReader;
    OtlpReader otlpReader;
    AccessLogReader accessReader;
    run("ndjson", ndjsonReader, ndjson);
    run("har", harReader, har);
    run("csv", csvReader, csv);
    run("otlp", otlpReader, otlp);
    run("access", accessReader, access);
    return 0;
}
