#pragma once
// The canonical log the benchmarks read: a realistic mix of Fabric (all three groups,
// RequestBlocked 429s with bodies), Graph OneNote with throttle headers, Service Bus sends with
// 50009, 100 identities. Deterministic for a seed. Shared by bench_report_import and
// bench_read_once so that their figures are comparable.

#include <QFile>
#include <QString>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include <unistd.h>

inline void generateCanonicalLog(const QString &path, qint64 lines, unsigned seed)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
        std::fprintf(stderr, "cannot write %s\n", qPrintable(path));
        std::exit(1);
    }
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> pct(0, 99);
    std::string buffer;
    buffer.reserve(8 << 20);
    qint64 ts = 1771454649512;
    char line[1024];
    for (qint64 i = 0; i < lines; ++i) {
        ts += rng() % 3;
        const int who = int(rng() % 100);
        const int kind = pct(rng);
        const bool throttled = pct(rng) < 8;
        int n = 0;
        if (kind < 45) {
            // Fabric's three quota groups: platform, jobScheduler, longRunningOperations.
            char url[160];
            const int id = int(i % 5000);
            if (i % 3 == 0)
                std::snprintf(url, sizeof url, "/v1/workspaces/%d/items", id);
            else if (i % 3 == 1)
                std::snprintf(url, sizeof url,
                              "/v1/workspaces/%d/items/9a8b/jobs/instances?jobType=Pipeline", id);
            else
                std::snprintf(url, sizeof url, "/v1/operations/%d", id);
            if (throttled)
                n = std::snprintf(
                    line, sizeof line,
                    "{\"ts\":%lld,\"identity\":\"sp-%d\",\"service\":\"fabric\",\"method\":"
                    "\"POST\",\"url\":\"https://"
                    "api.fabric.microsoft.com%s\",\"status\":429,\"errorCode\":\"RequestBlocked\","
                    "\"retryAfter\":\"55\",\"body\":\"{\\\"errorCode\\\":\\\"RequestBlocked\\\","
                    "\\\"message\\\":\\\"Request is blocked by the upstream service until: "
                    "2/18/2026 10:45:04 PM (UTC)\\\"}\",\"durationMs\":31}\n",
                    (long long)ts, who, url);
            else
                n = std::snprintf(
                    line, sizeof line,
                    "{\"ts\":%lld,\"identity\":\"sp-%d\",\"service\":\"fabric\",\"method\":\"GET\","
                    "\"url\":\"https://"
                    "api.fabric.microsoft.com%s\",\"status\":200,\"durationMs\":%d}\n",
                    (long long)ts, who, url, int(20 + rng() % 300));
        } else if (kind < 85) {
            if (throttled)
                n = std::snprintf(
                    line, sizeof line,
                    "{\"ts\":%lld,\"identity\":\"user%d@contoso.com\",\"app\":\"note-bridge\","
                    "\"service\":\"graph\",\"method\":\"GET\",\"url\":\"https://"
                    "graph.microsoft.com/v1.0/users/u%d/onenote/pages/%lld/"
                    "content\",\"status\":429,\"headers\":{\"x-ms-throttle-scope\":\"Application\"}"
                    ",\"body\":\"{\\\"error\\\":{\\\"code\\\":\\\"20166\\\",\\\"message\\\":"
                    "\\\"The application or user has been "
                    "throttled.\\\"}}\",\"lane\":\"background\",\"attempt\":1,\"operationId\":"
                    "\"page-%lld\",\"durationMs\":40}\n",
                    (long long)ts, who, who, (long long)i, (long long)i);
            else
                n = std::snprintf(line, sizeof line,
                                  "{\"ts\":%lld,\"identity\":\"user%d@contoso.com\",\"app\":\"note-"
                                  "bridge\",\"service\":\"graph\",\"method\":\"GET\",\"url\":"
                                  "\"https://graph.microsoft.com/v1.0/users/u%d/onenote/pages/%lld/"
                                  "content\",\"status\":200,\"headers\":{\"x-ms-throttle-limit-"
                                  "percentage\":\"0.%d\"},\"lane\":\"%s\",\"attempt\":0,"
                                  "\"operationId\":\"page-%lld\",\"durationMs\":%d}\n",
                                  (long long)ts, who, who, (long long)i, 50 + int(rng() % 49),
                                  (i & 1) ? "background" : "foreground", (long long)i,
                                  int(50 + rng() % 400));
        } else {
            if (throttled)
                n = std::snprintf(
                    line, sizeof line,
                    "{\"ts\":%lld,\"identity\":\"orders-app\",\"service\":\"servicebus\","
                    "\"namespace\":\"sb-prod\",\"entity\":\"orders\",\"method\":\"Send\","
                    "\"status\":429,\"errorCode\":\"50009\",\"body\":\"The request was terminated "
                    "because the entity is being throttled. Error code: 50009. Please wait 2 "
                    "seconds and try again.\"}\n",
                    (long long)ts);
            else
                n = std::snprintf(
                    line, sizeof line,
                    "{\"ts\":%lld,\"identity\":\"orders-app\",\"service\":\"servicebus\","
                    "\"namespace\":\"sb-prod\",\"entity\":\"orders\",\"method\":\"Send\","
                    "\"credits\":%d,\"status\":200,\"durationMs\":%d}\n",
                    (long long)ts, int(1 + rng() % 5), int(2 + rng() % 20));
        }
        buffer.append(line, size_t(n));
        if (buffer.size() > (7 << 20)) {
            file.write(buffer.data(), qint64(buffer.size()));
            buffer.clear();
        }
    }
    file.write(buffer.data(), qint64(buffer.size()));
    // On disk before anything is timed: otherwise the kernel writes the new file back (750 MB
    // for both files) about 30 s later, in the middle of the rounds, on the cores and the
    // memory bandwidth the contenders are measured on.
    file.flush();
    ::fsync(file.handle());
}
