// The headless live commands end to end through the built binary: simulate, tail (directory,
// rotation, SIGTERM flush, resume from the workspace ledger, --out after kill -9) and serve
// (loopback HTTP, SIGTERM flush, refusal to listen off loopback without a token, acknowledged
// events surviving kill -9 with a held lock or a full disk, a connection flood at a low
// descriptor limit, token sources, browser origins).
#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <arpa/inet.h>
#include <csignal>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

namespace {

QString binary()
{
    const QString fromEnvironment = qEnvironmentVariable("TS_APP_BINARY");
    return fromEnvironment.isEmpty() ? QStringLiteral(TS_APP_BINARY) : fromEnvironment;
}

QByteArray line(int i)
{
    return QByteArrayLiteral("{\"ts\":\"2026-02-18T22:44:09.512Z\",\"identity\":\"cli-") +
           QByteArray::number(i) + QByteArrayLiteral("\",\"service\":\"graph\",\"status\":200}\n");
}

void appendTo(const QString &path, const QByteArray &data)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Append));
    QCOMPARE(file.write(data), data.size());
}

QList<QByteArray> readLines(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    QList<QByteArray> lines = file.readAll().split('\n');
    if (!lines.isEmpty() && lines.constLast().isEmpty())
        lines.removeLast();
    return lines;
}

// The identities ("cli-N") in an NDJSON file, sorted.
QStringList identities(const QString &path)
{
    static const QRegularExpression identity(QStringLiteral("\"identity\":\"(cli-\\d+)\""));
    QStringList out;
    for (const QByteArray &text : readLines(path)) {
        const auto match = identity.match(QString::fromUtf8(text));
        if (match.hasMatch())
            out.append(match.captured(1));
    }
    out.sort();
    return out;
}

QStringList expectedIdentities(int from, int to)
{
    QStringList out;
    for (int i = from; i < to; ++i)
        out.append(QStringLiteral("cli-%1").arg(i));
    out.sort();
    return out;
}

sockaddr_in loopback(quint16 port)
{
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return address;
}

// A minimal HTTP/1.1 client on a plain socket (this test links no Qt Network), loopback only.
// `headers`: extra header lines, each ending in "\r\n". Empty when no answer came.
QByteArray httpPost(quint16 port, const QByteArray &path, const QByteArray &body,
                    const QByteArray &headers = {})
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    // Bounds connect() too: a server that stopped accepting must not hang the test.
    timeval timeout{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    const sockaddr_in address = loopback(port);
    if (::connect(fd, reinterpret_cast<const sockaddr *>(&address), sizeof address) != 0) {
        ::close(fd);
        return {};
    }
    const QByteArray request =
        "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + QByteArray::number(port) +
        "\r\nContent-Type: application/x-ndjson\r\nContent-Length: " +
        QByteArray::number(body.size()) + "\r\nConnection: close\r\n" + headers + "\r\n" + body;
    qsizetype sent = 0;
    while (sent < request.size()) {
        const ssize_t n =
            ::send(fd, request.constData() + sent, size_t(request.size() - sent), MSG_NOSIGNAL);
        if (n <= 0)
            break;
        sent += n;
    }
    // Read the head, then Content-Length bytes.
    QByteArray response;
    char buffer[4096];
    qsizetype expected = -1;
    while (expected < 0 || response.size() < expected) {
        const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n <= 0)
            break;
        response.append(buffer, n);
        const qsizetype headEnd = response.indexOf("\r\n\r\n");
        if (expected < 0 && headEnd >= 0) {
            static const QRegularExpression length(QStringLiteral("(?i)content-length:\\s*(\\d+)"));
            const auto match = length.match(QString::fromLatin1(response.left(headEnd)));
            expected = headEnd + 4 + (match.hasMatch() ? match.captured(1).toLongLong() : 0);
        }
    }
    ::close(fd);
    return response;
}

int statusOf(const QByteArray &response)
{
    return response.startsWith("HTTP/1.1 ") ? response.mid(9, 3).toInt() : 0;
}

// Lines cli-<first> .. cli-<first + count - 1>.
QByteArray lines(int first, int count)
{
    QByteArray out;
    for (int i = first; i < first + count; ++i)
        out += line(i);
    return out;
}

// Starts the binary and reads the port from its "listening on" line.
bool startServe(QProcess &serve, const QStringList &arguments, quint16 *port)
{
    serve.start(binary(), QStringList{u"serve"_qs, u"--listen"_qs, u"127.0.0.1:0"_qs,
                                      u"--status-interval"_qs, u"0"_qs} +
                              arguments);
    if (!serve.waitForStarted() || !serve.waitForReadyRead(15000))
        return false;
    const QByteArray announced = serve.readLine();
    const auto match =
        QRegularExpression(QStringLiteral("listening on http://127\\.0\\.0\\.1:(\\d+)"))
            .match(QString::fromUtf8(announced));
    *port = quint16(match.captured(1).toUInt());
    return match.hasMatch();
}

// The identities of the events a workspace holds (a multiset: duplicates stay).
QStringList workspaceIdentities(const QString &path)
{
    static int connections = 0;
    const QString name = QStringLiteral("tst-livecommands-%1").arg(++connections);
    QStringList out;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(u"QSQLITE"_qs, name);
        db.setDatabaseName(path);
        db.setConnectOptions(u"QSQLITE_BUSY_TIMEOUT=10000"_qs);
        if (db.open()) {
            QSqlQuery query(db);
            query.exec(u"SELECT identity FROM events"_qs);
            while (query.next())
                out.append(query.value(0).toString());
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
    out.sort();
    return out;
}

int countDuplicates(const QStringList &sorted)
{
    int duplicates = 0;
    for (qsizetype i = 1; i < sorted.size(); ++i)
        duplicates += sorted.at(i) == sorted.at(i - 1) ? 1 : 0;
    return duplicates;
}

// Another process's transaction on the workspace: BEGIN IMMEDIATE takes its write lock.
class WriteLock
{
public:
    explicit WriteLock(const QString &path) : m_name(QStringLiteral("tst-lock-%1").arg(++s_count))
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(u"QSQLITE"_qs, m_name);
        db.setDatabaseName(path);
        db.setConnectOptions(u"QSQLITE_BUSY_TIMEOUT=10000"_qs);
        m_held = db.open() && QSqlQuery(db).exec(u"BEGIN IMMEDIATE"_qs);
    }
    ~WriteLock()
    {
        {
            QSqlDatabase db = QSqlDatabase::database(m_name, false);
            QSqlQuery(db).exec(u"ROLLBACK"_qs);
            db.close();
        }
        QSqlDatabase::removeDatabase(m_name);
    }
    [[nodiscard]] bool held() const { return m_held; }

private:
    static inline int s_count = 0;
    QString m_name;
    bool m_held = false;
};

// The child's file size limit, as a full disk looks to it (SIGXFSZ ignored: writes fail with
// EFBIG instead of killing it). Raised again with prlimit() to let the disk "free up".
constexpr rlim_t kFullDiskBytes = 1024 * 1024;

void limitFileSizeInChild()
{
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{kFullDiskBytes, RLIM_INFINITY};
    ::setrlimit(RLIMIT_FSIZE, &limit);
}

void limitDescriptorsInChild()
{
    const rlimit limit{128, 128};
    ::setrlimit(RLIMIT_NOFILE, &limit);
}

} // namespace

class TestLiveCommands : public QObject
{
    Q_OBJECT
private slots:
    void simulateWritesDeterministicNdjson()
    {
        QTemporaryDir dir;
        const QStringList arguments{u"simulate"_qs,   u"--scenario"_qs, u"servicebus-producers"_qs,
                                    u"--duration"_qs, u"60"_qs,         u"--seed"_qs,
                                    u"5"_qs,          u"--out"_qs};
        QCOMPARE(QProcess::execute(binary(), arguments + QStringList{dir.filePath(u"a.ndjson"_qs)}),
                 0);
        QCOMPARE(QProcess::execute(binary(), arguments + QStringList{dir.filePath(u"b.ndjson"_qs)}),
                 0);
        const QList<QByteArray> a = readLines(dir.filePath(u"a.ndjson"_qs));
        QVERIFY(a.size() > 200);
        QCOMPARE(a, readLines(dir.filePath(u"b.ndjson"_qs)));
        QVERIFY(a.constLast().contains("\"namespace\":\"sb-orders-prod\""));
    }

    void simulateRefusesUnknownScenario()
    {
        QProcess process;
        process.start(binary(),
                      {u"simulate"_qs, u"--scenario"_qs, u"nope"_qs, u"--out"_qs, u"/dev/null"_qs});
        QVERIFY(process.waitForFinished(30000));
        QCOMPARE(process.exitCode(), 2);
        QVERIFY(process.readAllStandardError().contains("onenote-migration"));
    }

    // Lines written before SIGTERM are all stored, once, across a rotation in the directory.
    void tailDirectoryFlushesOnSigterm()
    {
        QTemporaryDir dir;
        const QString logs = dir.filePath(u"logs"_qs);
        QVERIFY(QDir().mkpath(logs));
        const QString out = dir.filePath(u"out.ndjson"_qs);
        appendTo(logs + u"/app.ndjson"_qs, line(0) + line(1) + line(2));
        QProcess tail;
        tail.start(binary(),
                   {u"tail"_qs, u"--out"_qs, out, u"--status-interval"_qs, u"0"_qs, logs});
        QVERIFY(tail.waitForStarted());
        QTRY_COMPARE_WITH_TIMEOUT(identities(out).size(), 3, 10000);
        for (int i = 3; i < 40; ++i)
            appendTo(logs + u"/app.ndjson"_qs, line(i));
        QVERIFY(QFile::rename(logs + u"/app.ndjson"_qs, logs + u"/app-1.ndjson"_qs));
        appendTo(logs + u"/app.ndjson"_qs, line(40) + line(41));
        appendTo(logs + u"/other.ndjson"_qs, line(42) + "not json\n");
        tail.terminate(); // SIGTERM right away: the final poll must still pick everything up
        QVERIFY(tail.waitForFinished(10000));
        QCOMPARE(tail.exitStatus(), QProcess::NormalExit);
        QCOMPARE(tail.exitCode(), 0);
        const QByteArray errors = tail.readAllStandardError();
        QVERIFY2(errors.contains("other.ndjson:2:"), errors.constData());
        QCOMPARE(identities(out), expectedIdentities(0, 43));
    }

    // tail reads every line format report reads, told per file by its content: an Apache
    // access log (once "0 events, 100 malformed") and a CSV export in the same directory, each
    // appended while followed, give what report gives for the whole files.
    void tailReadsEveryLineFormat()
    {
        QTemporaryDir dir;
        const QString logs = dir.filePath(u"logs"_qs);
        QVERIFY(QDir().mkpath(logs));
        QFile apache(QStringLiteral(TS_THIRDPARTY_DIR "/oplogs/elastic-examples_apache_logs_combined.log"));
        QVERIFY(apache.open(QIODevice::ReadOnly));
        QList<QByteArray> apacheLines;
        for (int i = 0; i < 150; ++i)
            apacheLines.append(apache.readLine());
        const QString access = logs + u"/access.log"_qs;
        const QString csv = logs + u"/requests.csv"_qs;
        appendTo(access, apacheLines.mid(0, 100).join());
        appendTo(csv, "timestamp,name,url,resultCode,duration\n"
                      "2026-02-18T22:44:09.512Z,GET /me,https://graph.microsoft.com/v1.0/me,429,12\n");
        const QString out = dir.filePath(u"out.ndjson"_qs);
        QProcess tail;
        tail.start(binary(), {u"tail"_qs, u"--out"_qs, out, u"--status-interval"_qs, u"0"_qs,
                              u"--poll-ms"_qs, u"20"_qs, logs});
        QVERIFY(tail.waitForStarted());
        QTRY_COMPARE_WITH_TIMEOUT(readLines(out).size(), 101, 10000);
        appendTo(access, apacheLines.mid(100).join());
        appendTo(csv, "2026-02-18T22:44:10.512Z,GET /me,https://graph.microsoft.com/v1.0/me,200,9\n");
        QTRY_COMPARE_WITH_TIMEOUT(readLines(out).size(), 152, 10000);
        tail.terminate();
        QVERIFY(tail.waitForFinished(10000));
        QCOMPARE(tail.exitCode(), 0);
        const QByteArray errors = tail.readAllStandardError();
        QVERIFY2(errors.contains("152 events, 0 malformed"), errors.constData());

        QProcess report;
        report.start(binary(), {u"report"_qs, u"--json"_qs, access, csv});
        QVERIFY(report.waitForFinished(30000));
        const QJsonObject json = QJsonDocument::fromJson(report.readAllStandardOutput()).object();
        QCOMPARE(json.value(u"events"_qs).toInteger(), 152);
    }

    // A second run resumes from the workspace ledger: nothing twice, nothing lost.
    void tailResumesFromWorkspace()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath(u"app.ndjson"_qs);
        const QString workspace = dir.filePath(u"live.tsw"_qs);
        appendTo(log, line(0) + line(1) + line(2) + "{\"ts\":\"2026-02-18T22:4");
        for (int run = 0; run < 2; ++run) {
            const QString out = dir.filePath(QStringLiteral("run%1.ndjson").arg(run));
            QProcess tail;
            tail.start(binary(), {u"tail"_qs, u"--workspace"_qs, workspace, u"--out"_qs, out,
                                  u"--status-interval"_qs, u"0"_qs, log});
            QVERIFY(tail.waitForStarted());
            QTRY_COMPARE_WITH_TIMEOUT(identities(out).size(), 3, 10000);
            tail.terminate();
            QVERIFY(tail.waitForFinished(10000));
            QCOMPARE(tail.exitCode(), 0);
            QCOMPARE(identities(out),
                     run == 0 ? expectedIdentities(0, 3) : expectedIdentities(3, 6));
            // Complete the partial line and add more for the second run.
            if (run == 0)
                appendTo(log,
                         QByteArray("4:09.512Z\",\"identity\":\"cli-3\"}\n") + line(4) + line(5));
        }
    }

    // Restarts meet files changed while tail was stopped. Files are recognised by content: a
    // renamed or copied file resumes where its content was read up to, a file truncated and
    // rewritten is read again from its start (with a warning). Each run's own output (--out)
    // must hold exactly the lines that are new to the workspace, once.
    void tailRestartRecognisesContent_data()
    {
        QTest::addColumn<QString>("change");
        QTest::newRow("renamed within the glob") << u"rename"_qs;
        QTest::newRow("truncated and rewritten") << u"rewrite"_qs;
        QTest::newRow("copied into the glob") << u"copy"_qs;
    }
    void tailRestartRecognisesContent()
    {
        QFETCH(QString, change);
        QTemporaryDir dir;
        const QString logs = dir.filePath(u"logs"_qs);
        QVERIFY(QDir().mkpath(logs));
        const QString workspace = dir.filePath(u"live.tsw"_qs);
        const QString original = logs + u"/app.log"_qs;
        auto lines = [](int from, int to) {
            QByteArray data;
            for (int i = from; i < to; ++i)
                data += line(i);
            return data;
        };
        int runs = 0;
        // Runs tail until `expected` lines are out (in file order: a line read twice would come
        // before them), then stops it; returns its stderr.
        auto runTail = [&](const QStringList &expected) -> QByteArray {
            const QString out = dir.filePath(QStringLiteral("run%1.ndjson").arg(++runs));
            QProcess tail;
            tail.start(binary(), {u"tail"_qs, u"--workspace"_qs, workspace, u"--out"_qs, out,
                                  u"--status-interval"_qs, u"0"_qs, logs});
            if (!tail.waitForStarted())
                return "did not start";
            // Not reaching the count is reported by the comparison below.
            [[maybe_unused]] const bool reached =
                QTest::qWaitFor([&] { return identities(out).size() >= expected.size(); }, 20000);
            tail.terminate();
            tail.waitForFinished(10000);
            const QByteArray errors = tail.readAllStandardError();
            [&] { QCOMPARE(identities(out), expected); }();
            return errors;
        };

        appendTo(original, lines(0, 2000));
        runTail(expectedIdentities(0, 2000));
        if (QTest::currentTestFailed())
            return;
        QString grown = original;
        if (change == u"rename") {
            grown = logs + u"/app-old.log"_qs;
            QVERIFY(QFile::rename(original, grown));
        } else if (change == u"copy") {
            grown = logs + u"/app-copy.log"_qs;
            QVERIFY(QFile::copy(original, grown));
        } else {
            // Longer than before, so the old offset lies inside the new content.
            QFile file(original);
            QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
            file.write(lines(10000, 13000));
        }
        appendTo(grown, lines(20000, 20500));
        QStringList expected = expectedIdentities(20000, 20500);
        if (change == u"rewrite")
            expected = (expectedIdentities(10000, 13000) + expected);
        expected.sort();
        const QByteArray errors = runTail(expected);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(errors.contains("truncated or rewritten"), change == u"rewrite");
        // And once more: only what was appended since.
        appendTo(grown, lines(30000, 30100));
        runTail(expectedIdentities(30000, 30100));
    }

    void serveStoresPostsAndFlushesOnSigterm()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(u"served.ndjson"_qs);
        QProcess serve;
        serve.start(binary(), {u"serve"_qs, u"--listen"_qs, u"127.0.0.1:0"_qs, u"--out"_qs, out,
                               u"--status-interval"_qs, u"0"_qs});
        QVERIFY(serve.waitForStarted());
        QVERIFY(serve.waitForReadyRead(10000));
        const QByteArray announced = serve.readLine();
        const auto match =
            QRegularExpression(QStringLiteral("listening on http://127\\.0\\.0\\.1:(\\d+)"))
                .match(QString::fromUtf8(announced));
        QVERIFY2(match.hasMatch(), announced.constData());
        const quint16 port = quint16(match.captured(1).toUInt());
        const QByteArray ok = httpPost(port, "/ingest", line(0) + line(1) + line(2));
        QVERIFY2(ok.startsWith("HTTP/1.1 200"), ok.constData());
        const QByteArray bad = httpPost(port, "/ingest", line(3) + "oops\n");
        QVERIFY2(bad.startsWith("HTTP/1.1 400"), bad.constData());
        QVERIFY(bad.contains("\"line\":2"));
        serve.terminate();
        QVERIFY(serve.waitForFinished(10000));
        QCOMPARE(serve.exitCode(), 0);
        QCOMPARE(identities(out), expectedIdentities(0, 4));
    }

    // A client that got 200 never loses its events: the answer waits for the commit (or for
    // write + fdatasync of --out without a workspace). The process is killed with SIGKILL while
    // the workspace's write lock is held by another connection, or after a full disk; then the
    // workspace (or --out) must hold every acknowledged event, and none answered 503.
    void serveAcknowledgedEventsSurviveKill_data()
    {
        QTest::addColumn<QString>("fault");
        QTest::newRow("kill") << u"kill"_qs;
        QTest::newRow("held-lock") << u"held-lock"_qs;
        QTest::newRow("full-disk") << u"full-disk"_qs;
        QTest::newRow("full-disk-out-only") << u"full-disk-out-only"_qs;
    }
    void serveAcknowledgedEventsSurviveKill()
    {
        QFETCH(QString, fault);
        QTemporaryDir dir;
        const QString workspace = dir.filePath(u"acked.tsw"_qs);
        const QString out = dir.filePath(u"acked.ndjson"_qs);
        const bool outOnly = fault == u"full-disk-out-only";
        const bool fullDisk = fault.startsWith(u"full-disk");
        QProcess serve;
        if (fullDisk)
            serve.setChildProcessModifier(limitFileSizeInChild);
        quint16 port = 0;
        QVERIFY(startServe(serve,
                           {outOnly ? u"--out"_qs : u"--workspace"_qs, outOnly ? out : workspace,
                            u"--commit-timeout"_qs, u"0.5"_qs},
                           &port));

        constexpr int kBatch = 100;
        int next = 0;
        int batches = 0;
        int busy = 0;    // 503
        int refused = 0; // no answer or another status
        QSet<QString> acknowledged;
        auto postBatch = [&] {
            const int first = next;
            next += kBatch;
            ++batches;
            const int status = statusOf(httpPost(port, "/ingest", lines(first, kBatch)));
            if (status == 200) {
                for (int i = first; i < first + kBatch; ++i)
                    acknowledged.insert(QStringLiteral("cli-%1").arg(i));
            } else if (status == 503) {
                ++busy;
            } else {
                ++refused;
            }
            return status;
        };

        for (int i = 0; i < 5; ++i)
            QCOMPARE(postBatch(), 200);
        if (fault == u"held-lock") {
            {
                WriteLock lock(workspace);
                QVERIFY(lock.held());
                for (int i = 0; i < 4; ++i)
                    postBatch();
            }
            for (int i = 0; i < 5; ++i)
                QCOMPARE(postBatch(), 200); // the lock is free again: the writer goes on
            WriteLock lock(workspace);
            QVERIFY(lock.held());
            for (int i = 0; i < 3; ++i)
                postBatch();
            serve.kill(); // while the lock is held
            QVERIFY(serve.waitForFinished(10000));
        } else if (fullDisk) {
            // Until the "disk" is full: three refusals in a row.
            int refusalsInARow = 0;
            while (refusalsInARow < 3 && batches < 400)
                refusalsInARow = postBatch() == 200 ? 0 : refusalsInARow + 1;
            QVERIFY2(refusalsInARow == 3, "the file size limit was never reached");
            // Room again: serve recovers without a restart.
            const rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
            QCOMPARE(::prlimit(pid_t(serve.processId()), RLIMIT_FSIZE, &unlimited, nullptr), 0);
            for (int i = 0; i < 3; ++i)
                QCOMPARE(postBatch(), 200);
            serve.kill();
            QVERIFY(serve.waitForFinished(10000));
        } else {
            for (int i = 0; i < 25; ++i)
                QCOMPARE(postBatch(), 200);
            serve.kill(); // right after the last 200
            QVERIFY(serve.waitForFinished(10000));
        }

        QStringList stored;
        if (outOnly) {
            const QList<QByteArray> written = readLines(out);
            stored = identities(out);
            // No partial line: a failed write was cut off again.
            QCOMPARE(stored.size(), written.size());
        } else {
            stored = workspaceIdentities(workspace);
        }
        const QSet<QString> storedSet(stored.cbegin(), stored.cend());
        const qsizetype lost = (acknowledged - storedSet).size();
        const qsizetype unacknowledged = (storedSet - acknowledged).size();
        qInfo("serve, %s: %d batches of %d events posted: %lld acknowledged (%lld events), %d "
              "answered 503, %d refused; after kill -9: %lld events stored, "
              "acknowledged-then-lost %lld, stored-but-refused %lld, duplicates %d",
              qPrintable(fault), batches, kBatch, qint64(acknowledged.size() / kBatch),
              qint64(acknowledged.size()), busy, refused, qint64(stored.size()), qint64(lost),
              qint64(unacknowledged), countDuplicates(stored));
        QCOMPARE(lost, 0);
        if (fault != u"kill")
            QVERIFY2(busy > 0, "the fault never showed");
        // A 503 is exact: what was refused was not stored (the client's retry duplicates
        // nothing), and nothing was stored twice.
        QCOMPARE(unacknowledged, 0);
        QCOMPARE(countDuplicates(stored), 0);
    }

    // 150 connections that never send a byte, at a limit of 128 descriptors (the workspace
    // takes some): a client still gets its answer (the oldest idle connections make room), and
    // the next one too.
    void serveKeepsServingThroughConnectionFlood()
    {
        QTemporaryDir dir;
        const QString workspace = dir.filePath(u"flood.tsw"_qs);
        QProcess serve;
        serve.setChildProcessModifier(limitDescriptorsInChild);
        quint16 port = 0;
        // Long timeouts: room must come from the cap, not from connections timing out.
        QVERIFY(startServe(serve,
                           {u"--workspace"_qs, workspace, u"--head-timeout"_qs, u"120"_qs,
                            u"--idle-timeout"_qs, u"120"_qs},
                           &port));
        std::vector<int> flood;
        const sockaddr_in address = loopback(port);
        for (int i = 0; i < 150; ++i) {
            const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            ::connect(fd, reinterpret_cast<const sockaddr *>(&address), sizeof address);
            flood.push_back(fd);
        }
        // Every one connected (accepted, or waiting in the kernel's backlog) before the client.
        std::vector<pollfd> pending;
        for (const int fd : flood)
            pending.push_back(pollfd{fd, POLLOUT, 0});
        QDeadlineTimer connected(15000);
        while (!pending.empty() && !connected.hasExpired()) {
            ::poll(pending.data(), nfds_t(pending.size()), 100);
            std::erase_if(pending, [](const pollfd &p) { return p.revents != 0; });
        }
        QVERIFY(pending.empty());
        // And taken in by the server as far as it goes: its descriptor count settles (a
        // connection the kernel's full backlog refused is retried a second or more later). A
        // server that stops accepting at its limit shows it now; room for the client must not
        // depend on this wait, the flood stays connected throughout.
        const QDir descriptors(QStringLiteral("/proc/%1/fd").arg(serve.processId()));
        qsizetype lastCount = -1;
        QDeadlineTimer unchanged(2000);
        for (QDeadlineTimer settle(10000); !settle.hasExpired() && !unchanged.hasExpired();) {
            const qsizetype count = descriptors.entryList(QDir::Files | QDir::System).size();
            if (count != lastCount)
                unchanged.setRemainingTime(2000);
            lastCount = count;
            QTest::qWait(100);
        }
        const QByteArray first = httpPost(port, "/ingest", line(0));
        const QByteArray second = httpPost(port, "/ingest", line(1));
        for (const int fd : flood)
            ::close(fd);
        qInfo("serve at RLIMIT_NOFILE 128 with 150 half-open connections (%lld descriptors "
              "open): answers %d, %d",
              qint64(lastCount), statusOf(first), statusOf(second));
        QCOMPARE(statusOf(first), 200);
        QCOMPARE(statusOf(second), 200);
        serve.terminate();
        QVERIFY(serve.waitForFinished(10000));
        QCOMPARE(serve.exitCode(), 0);
        QCOMPARE(workspaceIdentities(workspace), expectedIdentities(0, 2));
    }

    // The token need not be on the command line (where `ps` shows it): a private file or the
    // environment; "bearer" in any case; never echoed.
    void serveTokenSources_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<bool>("starts");
        QTest::newRow("token-file") << u"file"_qs << true;
        QTest::newRow("environment") << u"environment"_qs << true;
        QTest::newRow("world-readable-file") << u"world-readable"_qs << false;
    }
    void serveTokenSources()
    {
        QFETCH(QString, source);
        QFETCH(bool, starts);
        const QByteArray token = "tok-7f3a9c-secret";
        QTemporaryDir dir;
        const QString tokenFile = dir.filePath(u"token"_qs);
        {
            QFile file(tokenFile);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(token + "\n");
        }
        QFile::setPermissions(tokenFile, source == u"world-readable"
                                             ? QFile::ReadOwner | QFile::WriteOwner |
                                                   QFile::ReadGroup | QFile::ReadOther
                                             : QFile::ReadOwner | QFile::WriteOwner);
        const QString out = dir.filePath(u"token.ndjson"_qs);
        QStringList arguments{u"--out"_qs, out};
        QProcess serve;
        if (source == u"environment") {
            QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
            environment.insert(u"TS_INGEST_TOKEN"_qs, QString::fromLatin1(token));
            serve.setProcessEnvironment(environment);
        } else {
            arguments << u"--token-file"_qs << tokenFile;
        }
        if (!starts) {
            serve.start(binary(),
                        QStringList{u"serve"_qs, u"--listen"_qs, u"127.0.0.1:0"_qs} + arguments);
            QVERIFY(serve.waitForFinished(10000));
            QCOMPARE(serve.exitCode(), 1);
            const QByteArray errors = serve.readAllStandardError();
            QVERIFY2(errors.contains("chmod 600"), errors.constData());
            QVERIFY(!errors.contains(token));
            return;
        }
        quint16 port = 0;
        QVERIFY(startServe(serve, arguments, &port));
        QFile commandLine(QStringLiteral("/proc/%1/cmdline").arg(serve.processId()));
        QVERIFY(commandLine.open(QIODevice::ReadOnly));
        QVERIFY(!commandLine.readAll().contains(token));
        const QByteArray missing = httpPost(port, "/ingest", line(0));
        const QByteArray wrong =
            httpPost(port, "/ingest", line(0), "Authorization: Bearer tok-7f3a9c\r\n");
        const QByteArray lower =
            httpPost(port, "/ingest", line(1), "Authorization: bearer " + token + "\r\n");
        const QByteArray upper =
            httpPost(port, "/ingest", line(2), "Authorization: BEARER " + token + "\r\n");
        QCOMPARE(statusOf(missing), 401);
        QCOMPARE(statusOf(wrong), 401);
        QCOMPARE(statusOf(lower), 200);
        QCOMPARE(statusOf(upper), 200);
        serve.terminate();
        QVERIFY(serve.waitForFinished(10000));
        QCOMPARE(serve.exitCode(), 0);
        const QByteArray output = serve.readAll() + serve.readAllStandardError();
        for (const QByteArray &answer : {missing, wrong, lower, upper, output})
            QVERIFY2(!answer.contains("tok-7f3a9c"), answer.constData());
        QCOMPARE(identities(out), expectedIdentities(1, 3));
    }

    // A web page cannot make a browser write into the workspace: Origin not allowed, 403.
    void serveRefusesBrowserOrigins()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(u"origins.ndjson"_qs);
        QProcess serve;
        quint16 port = 0;
        QVERIFY(startServe(
            serve, {u"--out"_qs, out, u"--allow-origin"_qs, u"https://app.example"_qs}, &port));
        const QByteArray evil =
            httpPost(port, "/ingest", line(0), "Origin: https://evil.example\r\n");
        const QByteArray allowed =
            httpPost(port, "/ingest", line(1), "Origin: https://app.example\r\n");
        const QByteArray plain = httpPost(port, "/ingest", line(2));
        QCOMPARE(statusOf(evil), 403);
        QCOMPARE(statusOf(allowed), 200);
        QCOMPARE(statusOf(plain), 200);
        serve.terminate();
        QVERIFY(serve.waitForFinished(10000));
        QCOMPARE(identities(out), expectedIdentities(1, 3));
    }

    // --out follows what the workspace committed: killed mid-way and restarted, tail leaves no
    // line in --out twice and none the workspace does not have.
    void tailOutFollowsWorkspaceAcrossKill()
    {
        QTemporaryDir dir;
        const QString log = dir.filePath(u"big.ndjson"_qs);
        const QString workspace = dir.filePath(u"tail.tsw"_qs);
        const QString out = dir.filePath(u"tail-out.ndjson"_qs);
        constexpr int kLines = 200000;
        {
            QFile file(log);
            QVERIFY(file.open(QIODevice::WriteOnly));
            for (int first = 0; first < kLines; first += 10000)
                file.write(lines(first, 10000));
        }
        const QStringList arguments{u"tail"_qs, u"--workspace"_qs,       workspace, u"--out"_qs,
                                    out,        u"--status-interval"_qs, u"0"_qs,   log};
        QProcess first;
        first.start(binary(), arguments);
        QVERIFY(first.waitForStarted());
        // Killed while the file is being read (well before its end).
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(out).size() > 1024 * 1024, 60000);
        first.kill();
        QVERIFY(first.waitForFinished(10000));
        const qint64 outLinesAtKill = readLines(out).size();

        QProcess second;
        second.start(binary(), arguments);
        QVERIFY(second.waitForStarted());
        QTRY_COMPARE_WITH_TIMEOUT(workspaceIdentities(workspace).size(), kLines, 120000);
        second.terminate();
        // Stopping commits what is queued: slow under the sanitizers on a loaded machine.
        QVERIFY(second.waitForFinished(60000));
        QCOMPARE(second.exitCode(), 0);

        const QStringList written = identities(out);
        const QStringList stored = workspaceIdentities(workspace);
        const QSet<QString> storedSet(stored.cbegin(), stored.cend());
        const QSet<QString> writtenSet(written.cbegin(), written.cend());
        qInfo("tail of %d lines, killed with %lld lines in --out: --out %lld lines (%d "
              "duplicates, %lld not in the workspace), workspace %lld events (%d duplicates)",
              kLines, outLinesAtKill, qint64(written.size()), countDuplicates(written),
              qint64((writtenSet - storedSet).size()), qint64(stored.size()),
              countDuplicates(stored));
        QCOMPARE(countDuplicates(written), 0);
        QCOMPARE((writtenSet - storedSet).size(), 0);
        QCOMPARE(countDuplicates(stored), 0);
        QCOMPARE(stored.size(), kLines);
    }

    void serveRefusesOpenAddressWithoutToken()
    {
        QTemporaryDir dir;
        const QString workspace = dir.filePath(u"open.tsw"_qs);
        QProcess serve;
        serve.start(binary(),
                    {u"serve"_qs, u"--listen"_qs, u"0.0.0.0:0"_qs, u"--workspace"_qs, workspace});
        QVERIFY(serve.waitForFinished(10000));
        QCOMPARE(serve.exitCode(), 1);
        QVERIFY(serve.readAllStandardError().contains("without a bearer token"));
        QVERIFY(!QFile::exists(workspace));
    }
};

QTEST_GUILESS_MAIN(TestLiveCommands)
#include "tst_livecommands.moc"
