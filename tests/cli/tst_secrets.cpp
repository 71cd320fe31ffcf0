// Secrets never leave: one seeded corpus (tests/data/secrets: canonical NDJSON, HAR, CSV, OTLP
// JSON, an access log and a vcr cassette, with 24 kinds of credential in every place a log can
// hold one, and malformed records whose reasons would quote them) goes through every command,
// and every output is searched for every secret: report text and JSON, stderr, the workspace
// file and its WAL (a killed writer leaves the WAL behind), tail's and serve's --out, serve's
// HTTP answers and /health. A hit is any 12-character piece of a secret, so a message that
// quotes the first 64 characters of a token is caught as well as a whole one.
#include "testhttp.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

namespace {

QString binary()
{
    const QString fromEnvironment = qEnvironmentVariable("TS_APP_BINARY");
    return fromEnvironment.isEmpty() ? QStringLiteral(TS_APP_BINARY) : fromEnvironment;
}

QString corpusPath(const QString &name)
{
    return QStringLiteral(TS_TEST_DATA_DIR "/secrets/") + name;
}

QByteArray readAll(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

struct Secret
{
    QString kind;
    QByteArray value;
};

// The pieces every output is searched for.
constexpr qsizetype kPiece = 12;

class SecretScanner
{
public:
    void load(const QString &path)
    {
        for (const QByteArray &line : readAll(path).split('\n')) {
            const qsizetype tab = line.indexOf('\t');
            if (tab > 0)
                m_secrets.append({QString::fromLatin1(line.left(tab)), line.mid(tab + 1)});
        }
    }
    [[nodiscard]] const QList<Secret> &secrets() const { return m_secrets; }

    // The kinds of secret a piece of which appears in `data`.
    [[nodiscard]] QStringList kindsIn(const QByteArray &data) const
    {
        QStringList kinds;
        for (const Secret &secret : m_secrets) {
            for (qsizetype i = 0; i + kPiece <= secret.value.size(); ++i) {
                if (data.contains(QByteArrayView(secret.value).sliced(i, kPiece))) {
                    kinds.append(secret.kind);
                    break;
                }
            }
        }
        return kinds;
    }

private:
    QList<Secret> m_secrets;
};

// Everything a command produced, by name, to be searched.
using Outputs = QList<QPair<QString, QByteArray>>;

struct Run
{
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

Run run(const QStringList &arguments)
{
    QProcess process;
    process.start(binary(), arguments);
    Run result;
    if (!process.waitForFinished(120000)) {
        process.kill();
        process.waitForFinished();
        return result;
    }
    result.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    result.out = process.readAllStandardOutput();
    result.err = process.readAllStandardError();
    return result;
}

// The workspace file and whatever SQLite keeps beside it.
void addWorkspaceFiles(Outputs &outputs, const QString &workspace, const QString &label)
{
    for (const QString &suffix : {QString(), u"-wal"_qs, u"-shm"_qs, u"-journal"_qs}) {
        if (QFile::exists(workspace + suffix))
            outputs.append({label + u" workspace" + suffix, readAll(workspace + suffix)});
    }
}

const QStringList kCorpus{u"corpus.ndjson"_qs,    u"corpus.har"_qs,        u"corpus.csv"_qs,
                          u"corpus.otlp.json"_qs, u"corpus.access.log"_qs, u"corpus.vcr.yaml"_qs};

// Waits until a live command's status line ("N events (...), M malformed") stops changing.
void waitForStatusToSettle(QProcess &process, QByteArray &stderrText, int timeoutMs)
{
    static const QRegularExpression status(
        QStringLiteral("(\\d+) events \\([^)]*\\), (\\d+) malformed"));
    QElapsedTimer clock;
    clock.start();
    qint64 last = -1;
    int unchanged = 0;
    while (clock.elapsed() < timeoutMs && unchanged < 2) {
        process.waitForReadyRead(1500);
        stderrText += process.readAllStandardError();
        const auto matches = status.globalMatch(QString::fromUtf8(stderrText));
        qint64 seen = -1;
        int lines = 0;
        for (auto it = matches; it.hasNext();) {
            const auto match = it.next();
            seen = match.captured(1).toLongLong() + match.captured(2).toLongLong();
            ++lines;
        }
        if (lines == 0)
            continue;
        unchanged = (seen == last && seen > 0) ? unchanged + 1 : 0;
        last = seen;
    }
}

} // namespace

class TestSecrets : public QObject
{
    Q_OBJECT

    SecretScanner m_scanner;

    // Fails naming every output that holds a piece of a secret, and which kinds.
    void verifyClean(const Outputs &outputs)
    {
        QStringList leaks;
        for (const auto &[name, data] : outputs) {
            const QStringList kinds = m_scanner.kindsIn(data);
            if (!kinds.isEmpty())
                leaks.append(name + u": " + kinds.join(u", "));
        }
        if (!leaks.isEmpty())
            QFAIL(qPrintable(u"secrets found in:\n  "_qs + leaks.join(u"\n  "_qs)));
    }

private slots:
    void initTestCase()
    {
        m_scanner.load(corpusPath(u"secrets.txt"_qs));
        QVERIFY2(m_scanner.secrets().size() >= 18, "the corpus seeds at least 18 kinds of secret");
    }

    // The search itself works: the corpus holds what it is said to hold, so a clean output
    // below means masked, not missed.
    void corpusHoldsEverySecret()
    {
        QByteArray everything;
        for (const QString &name : kCorpus) {
            const QByteArray bytes = readAll(corpusPath(name));
            QVERIFY2(!bytes.isEmpty(), qPrintable(name));
            QVERIFY2(m_scanner.kindsIn(bytes).size() >= 10,
                     qPrintable(name + u" seeds fewer than 10 kinds of secret"_qs));
            everything += bytes;
        }
        QCOMPARE(m_scanner.kindsIn(everything).size(), m_scanner.secrets().size());
    }

    void reportAndImport_data()
    {
        QTest::addColumn<QString>("file");
        for (const QString &name : kCorpus)
            QTest::newRow(qPrintable(name)) << name;
    }
    void reportAndImport()
    {
        QFETCH(QString, file);
        const QString input = corpusPath(file);
        QTemporaryDir dir;
        const QString workspace = dir.filePath(u"ws.tsdb"_qs);
        Outputs outputs;

        const Run text = run({u"report"_qs, input});
        QCOMPARE(text.exitCode, 0);
        outputs += {{u"report stdout"_qs, text.out}, {u"report stderr"_qs, text.err}};
        const Run json = run({u"report"_qs, u"--json"_qs, input});
        QCOMPARE(json.exitCode, 0);
        outputs += {{u"report --json stdout"_qs, json.out}, {u"report --json stderr"_qs, json.err}};

        const Run imported = run({u"import"_qs, u"--workspace"_qs, workspace, input});
        QCOMPARE(imported.exitCode, 0);
        outputs += {{u"import stdout"_qs, imported.out}, {u"import stderr"_qs, imported.err}};
        addWorkspaceFiles(outputs, workspace, u"import"_qs);
        QVERIFY(QFileInfo(workspace).size() > 0);

        for (const QStringList &format : {QStringList{}, QStringList{u"--json"_qs}}) {
            const Run fromWorkspace =
                run(QStringList{u"report"_qs, u"--workspace"_qs, workspace} + format);
            QCOMPARE(fromWorkspace.exitCode, 0);
            outputs += {{u"report --workspace stdout "_qs + format.join(u""), fromWorkspace.out},
                        {u"report --workspace stderr"_qs, fromWorkspace.err}};
        }
        verifyClean(outputs);
    }

    // whatif: its comparison (text, JSON) and the simulated sends it writes with --out.
    void whatifOutputs_data() { reportAndImport_data(); }
    void whatifOutputs()
    {
        QFETCH(QString, file);
        QTemporaryDir dir;
        const QString out = dir.filePath(u"sends.ndjson"_qs);
        Outputs outputs;
        const Run text = run({u"whatif"_qs, u"--pace"_qs, u"5/s"_qs, corpusPath(file)});
        QCOMPARE(text.exitCode, 0);
        const Run json = run({u"whatif"_qs, u"--json"_qs, u"--out"_qs, out, corpusPath(file)});
        QCOMPARE(json.exitCode, 0);
        QVERIFY2(readAll(out).count('\n') >= 3, "whatif wrote the corpus' sends");
        outputs += {{u"whatif stdout"_qs, text.out},
                    {u"whatif stderr"_qs, text.err},
                    {u"whatif --json stdout"_qs, json.out},
                    {u"whatif --json stderr"_qs, json.err},
                    {u"whatif --out"_qs, readAll(out)}};
        verifyClean(outputs);
    }

    // tail writes the workspace and --out as lines arrive; killed hard, it leaves the WAL.
    void tailOutputs_data() { reportAndImport_data(); }
    void tailOutputs()
    {
        QFETCH(QString, file);
        QTemporaryDir dir;
        const QString followed = dir.filePath(u"live.log"_qs);
        QVERIFY(QFile::copy(corpusPath(file), followed));
        const QString workspace = dir.filePath(u"tail.tsdb"_qs);
        const QString out = dir.filePath(u"out.ndjson"_qs);
        QProcess tail;
        tail.start(binary(), {u"tail"_qs, u"--workspace"_qs, workspace, u"--out"_qs, out,
                              u"--status-interval"_qs, u"1"_qs, followed});
        QVERIFY(tail.waitForStarted());
        QByteArray stderrText;
        waitForStatusToSettle(tail, stderrText, 20000);
        ::kill(pid_t(tail.processId()), SIGKILL);
        QVERIFY(tail.waitForFinished(10000));
        stderrText += tail.readAllStandardError();
        QVERIFY2(stderrText.contains("malformed"), stderrText.constData());

        Outputs outputs{{u"tail stderr"_qs, stderrText},
                        {u"tail stdout"_qs, tail.readAllStandardOutput()},
                        {u"tail --out"_qs, readAll(out)}};
        addWorkspaceFiles(outputs, workspace, u"tail (killed)"_qs);
        verifyClean(outputs);
    }

    // serve: every corpus posted to /ingest, the OTLP one to /v1/traces too, a request with a
    // wrong token (itself a secret), /health; killed after a clean stop of a first instance.
    void serveOutputs()
    {
        QTemporaryDir dir;
        const QString workspace = dir.filePath(u"serve.tsdb"_qs);
        const QString out = dir.filePath(u"serve.ndjson"_qs);
        QProcess serve;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(u"TS_INGEST_TOKEN"_qs, u"IngestToken25abcdefgh"_qs);
        serve.setProcessEnvironment(environment);
        serve.start(binary(), {u"serve"_qs, u"--listen"_qs, u"127.0.0.1:0"_qs, u"--workspace"_qs,
                               workspace, u"--out"_qs, out, u"--status-interval"_qs, u"0"_qs});
        QVERIFY(serve.waitForStarted());
        QVERIFY(serve.waitForReadyRead(20000));
        const QByteArray announced = serve.readLine();
        const auto match =
            QRegularExpression(QStringLiteral("listening on http://127\\.0\\.0\\.1:(\\d+)"))
                .match(QString::fromUtf8(announced));
        QVERIFY2(match.hasMatch(), announced.constData());
        const auto port = quint16(match.captured(1).toUInt());
        const QByteArray token = "Authorization: Bearer IngestToken25abcdefgh\r\n";

        Outputs outputs;
        for (const QString &name : kCorpus) {
            const QByteArray answer = ts::testhttp::post(port, "/ingest", readAll(corpusPath(name)),
                                                         "application/x-ndjson", token);
            QVERIFY2(answer.startsWith("HTTP/1.1 "), qPrintable(name));
            outputs.append({u"POST /ingest "_qs + name, answer});
        }
        const QByteArray traces =
            ts::testhttp::post(port, "/v1/traces", readAll(corpusPath(u"corpus.otlp.json"_qs)),
                               "application/json", token);
        QVERIFY2(traces.startsWith("HTTP/1.1 200"), traces.constData());
        outputs.append({u"POST /v1/traces"_qs, traces});
        const QByteArray wrongToken = ts::testhttp::post(
            port, "/ingest", readAll(corpusPath(u"corpus.ndjson"_qs)), "application/x-ndjson",
            "Authorization: Bearer " + m_scanner.secrets().constFirst().value + "\r\n");
        QVERIFY2(wrongToken.startsWith("HTTP/1.1 401"), wrongToken.constData());
        outputs.append({u"POST with a wrong token"_qs, wrongToken});
        const QByteArray health = ts::testhttp::get(port, "/health", token);
        QVERIFY2(health.contains("recentErrors"), health.constData());
        outputs.append({u"GET /health"_qs, health});

        serve.terminate();
        QVERIFY(serve.waitForFinished(20000));
        outputs += {{u"serve stdout"_qs, serve.readAllStandardOutput()},
                    {u"serve stderr"_qs, serve.readAllStandardError()},
                    {u"serve --out"_qs, readAll(out)}};
        addWorkspaceFiles(outputs, workspace, u"serve"_qs);
        QVERIFY2(readAll(out).count('\n') >= 10, "serve stored the corpus' events");
        verifyClean(outputs);
        // The listener's own token is never echoed either.
        for (const auto &[name, data] : std::as_const(outputs))
            QVERIFY2(!data.contains("IngestToken25"), qPrintable(name));
    }
};

QTEST_GUILESS_MAIN(TestSecrets)
#include "tst_secrets.moc"
