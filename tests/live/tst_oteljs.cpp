// A real OpenTelemetry JavaScript SDK exports HTTP client spans to the listener's /v1/traces:
// the npm packages are installed into a temporary copy of tests/live/otel-js and node runs the
// exporter against 127.0.0.1. No network access besides the npm registry for the install; when
// that fails the test fails (it must not pass without having talked to the real SDK).
#include "live/ingestlistener.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace ts;
using namespace ts::live;

namespace {

struct CollectingSink final : IngestSink
{
    QList<RequestEvent> events;
    QList<MalformedRecord> malformed;
    void onEvent(RequestEvent &&event) override { events.append(std::move(event)); }
    void onMalformed(MalformedRecord &&record) override { malformed.append(std::move(record)); }
};

// Runs a process while the event loop keeps serving (the listener lives on this thread).
bool runProcess(QProcess &process, const QString &program, const QStringList &arguments,
                int timeoutMs, QString *output)
{
    process.setProcessChannelMode(QProcess::MergedChannels);
    QSignalSpy finished(&process, &QProcess::finished);
    process.start(program, arguments);
    if (!process.waitForStarted(10000)) {
        *output = program + u": "_qs + process.errorString();
        return false;
    }
    const bool done = finished.wait(timeoutMs);
    *output = QString::fromLocal8Bit(process.readAll());
    if (!done) {
        process.kill();
        process.waitForFinished(5000);
        *output += QStringLiteral("\n(timed out after %1 s)").arg(timeoutMs / 1000);
        return false;
    }
    return process.exitStatus() == QProcess::NormalExit && process.exitCode() == 0;
}

} // namespace

class TestOtelJs : public QObject
{
    Q_OBJECT

    QTemporaryDir m_project;

private slots:
    void initTestCase()
    {
        QVERIFY2(!QStandardPaths::findExecutable(u"node"_qs).isEmpty(), "node is not installed");
        QVERIFY2(!QStandardPaths::findExecutable(u"npm"_qs).isEmpty(), "npm is not installed");
        QVERIFY(m_project.isValid());
        const QDir source(QStringLiteral(TS_TEST_DATA_DIR "/../live/otel-js"));
        for (const QString &name : {u"package.json"_qs, u"export-spans.js"_qs}) {
            QVERIFY2(QFile::copy(source.filePath(name), m_project.filePath(name)),
                     qPrintable(source.filePath(name)));
        }
        QProcess npm;
        npm.setWorkingDirectory(m_project.path());
        QString output;
        const bool installed =
            runProcess(npm, u"npm"_qs,
                       {u"install"_qs, u"--no-audit"_qs, u"--no-fund"_qs, u"--loglevel=error"_qs},
                       300000, &output);
        QVERIFY2(installed,
                 qPrintable(u"npm install of the OpenTelemetry JS SDK failed (is the npm registry "
                            u"reachable?); this test needs the real SDK:\n"_qs +
                            output.right(3000)));
    }

    void spansArriveWithTheirFields()
    {
        CollectingSink sink;
        IngestListener listener(sink);
        QString error;
        QVERIFY2(listener.start(ListenerOptions{}, &error), qPrintable(error));
        QVERIFY(listener.address().isLoopback());
        QProcess node;
        node.setWorkingDirectory(m_project.path());
        QString output;
        const QString endpoint =
            QStringLiteral("http://127.0.0.1:%1/v1/traces").arg(listener.port());
        QVERIFY2(runProcess(node, u"node"_qs, {u"export-spans.js"_qs, endpoint}, 60000, &output),
                 qPrintable(output));
        QVERIFY2(output.contains(u"exported 3 spans"), qPrintable(output));

        QCOMPARE(sink.malformed.size(), 0);
        QCOMPARE(sink.events.size(), 3);
        std::sort(sink.events.begin(), sink.events.end(),
                  [](const RequestEvent &a, const RequestEvent &b) { return a.tsMs < b.tsMs; });
        const qint64 base = Q_INT64_C(1771454649512); // 2026-02-18T22:44:09.512Z
        for (int i = 0; i < 3; ++i) {
            const RequestEvent &event = sink.events.at(i);
            QCOMPARE(event.tsMs, base + i * 250);
            QCOMPARE(event.durationMs, double(120 + i));
            QCOMPARE(event.method, u"GET"_qs);
            QCOMPARE(event.identity, u"alice@contoso.com"_qs);
            QCOMPARE(event.app, u"note-bridge"_qs);
            QVERIFY(event.url.startsWith(u"https://graph.microsoft.com/v1.0/me/onenote/pages"));
            QVERIFY(!event.operationId.isEmpty()); // the trace id
            QVERIFY(!event.requestId.isEmpty());   // the span id
            QCOMPARE(event.source, u"otlp"_qs);
        }
        QCOMPARE(sink.events.at(0).status, 200);
        QCOMPARE(sink.events.at(0).headers.value(u"x-ms-throttle-limit-percentage"), u"0.9"_qs);
        QCOMPARE(sink.events.at(1).status, 429);
        QCOMPARE(sink.events.at(1).retryAfter, u"2.128"_qs);
        QCOMPARE(sink.events.at(1).headers.value(u"x-ms-throttle-scope"), u"Application"_qs);
        QCOMPARE(sink.events.at(2).status, 200);
        QCOMPARE(sink.events.at(2).attempt, 1);
        QCOMPARE(listener.health().eventsReceived, 3);
    }
};

QTEST_GUILESS_MAIN(TestOtelJs)
#include "tst_oteljs.moc"
