// The per-format line parsers `tail` and the dashboard's followed files share: a real file of
// each line format, appended in pieces (a line cut in two across appends), rotated and
// copytruncated while a FileTailer follows it, gives exactly the events `report` reads from the
// whole file, with the file's own line numbers, and no malformed record.
#include "ingest/formatdetect.h"
#include "ingest/sourcereader.h"
#include "live/filetailer.h"
#include "live/linereaders.h"
#include "live/tailingest.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace ts;
using namespace ts::live;
using namespace Qt::StringLiterals;

namespace {

void appendTo(const QString &path, const QByteArray &data)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Append));
    QCOMPARE(file.write(data), data.size());
}

// Line i of a file in each format (i from 0); every line is one event.
QByteArray formatLine(const QString &format, int i)
{
    const QByteArray n = QByteArray::number(i);
    const QByteArray second = QByteArray::number(10 + i % 50).rightJustified(2, '0');
    if (format == u"ndjson")
        return "{\"ts\":\"2026-02-18T22:44:" + second + ".512Z\",\"identity\":\"u-" + n +
               "\",\"service\":\"graph\",\"status\":429}";
    if (format == u"access")
        return "10.0.0." + QByteArray::number(i % 200) + " - user" + n +
               " [18/Feb/2026:22:44:" + second +
               " +0000] \"GET /v1.0/me/messages?page=" + n +
               " HTTP/1.1\" 429 120 \"-\" \"migrator/1.0\"";
    if (format == u"csv")
        return "2026-02-18T22:44:" + second + ".512Z,GET /me,https://graph.microsoft.com/v1.0/me?p=" +
               n + ",429,12";
    if (format == u"resilience")
        return "2026-02-18T22:44:" + second +
               ".600Z WARN Execution attempt. Source: 'P/(null)/Retry', Operation Key: 'op-" + n +
               "', Result: '429', Handled: 'True', Attempt: '1', Execution Time: 12.5ms";
    if (format == u"azure-records")
        return "{\"time\":\"2026-02-18T22:44:" + second +
               ".000Z\",\"resourceId\":\"/SUBSCRIPTIONS/S/RESOURCEGROUPS/RG/PROVIDERS/MICROSOFT.WEB/SITES/APP\","
               "\"category\":\"AppServiceHTTPLogs\",\"properties\":{\"CsMethod\":\"GET\","
               "\"CsUriStem\":\"/a/" + n + "\",\"ScStatus\":429,\"CsUsername\":\"u-" + n + "\"}}";
    return {};
}

QByteArray header(const QString &format)
{
    return format == u"csv" ? QByteArray("timestamp,name,url,resultCode,duration\n") : QByteArray();
}

struct CountingSinkForTest final : IngestSink
{
    void onEvent(RequestEvent &&event) override { events.append(std::move(event)); }
    void onMalformed(MalformedRecord &&) override { ++malformed; }
    QList<RequestEvent> events;
    qint64 malformed = 0;
};

struct Collected
{
    QList<RequestEvent> events;
    QList<MalformedRecord> malformed;
};

} // namespace

class TestLineReaders : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void formats_data()
    {
        QTest::addColumn<QString>("format");
        for (const char *format : {"ndjson", "access", "csv", "resilience", "azure-records"})
            QTest::newRow(format) << QString::fromLatin1(format);
    }

    // Appended in pieces while followed: the same events as one read of the whole file.
    void formats()
    {
        QFETCH(QString, format);
        QTemporaryDir dir;
        const QString path = dir.filePath(u"app.log"_s);
        QByteArray content = header(format);
        for (int i = 0; i < 30; ++i)
            content += formatLine(format, i) + '\n';
        appendTo(path, content);
        QCOMPARE(detectFileFormat(path, nullptr), format);
        QCOMPARE(followModeFor(format, readFileHead(path)), FollowMode::Lines);

        FileTailer tailer;
        TailIngest ingest;
        Collected got;
        tailer.setBatchCallback([&](const TailBatch &batch) {
            ingest.parse(batch, &got.events, &got.malformed);
        });
        tailer.addFile(path);
        tailer.start();
        // More lines; one cut in two between appends (a writer flushing mid-line).
        QByteArray more;
        for (int i = 30; i < 60; ++i)
            more += formatLine(format, i) + '\n';
        const qsizetype cut = more.size() - 20;
        appendTo(path, more.first(cut));
        tailer.pollNow();
        appendTo(path, more.sliced(cut));
        tailer.pollNow();
        tailer.stop();

        CountingSinkForTest whole;
        const SourceOutcome outcome = readSource(path, whole);
        QVERIFY(outcome.readable());
        QCOMPARE(outcome.format, format);
        QCOMPARE(whole.malformed, 0);
        QCOMPARE(whole.events.size(), 60);
        QVERIFY2(got.malformed.isEmpty(),
                 qPrintable(got.malformed.isEmpty() ? QString() : got.malformed.constFirst().toString()));
        QCOMPARE(got.events.size(), whole.events.size());
        for (int i = 0; i < got.events.size(); ++i) {
            const RequestEvent &a = got.events.at(i);
            const RequestEvent &b = whole.events.at(i);
            QCOMPARE(a.tsMs, b.tsMs);
            QCOMPARE(a.status, b.status);
            QCOMPARE(a.identity, b.identity);
            QCOMPARE(a.url, b.url);
            QCOMPARE(a.line, b.line);
            QCOMPARE(a.offset, b.offset);
            QCOMPARE(a.source, path);
        }
    }

    // Rotation (rename + new file) and copytruncate of an access log: every line exactly once.
    void rotationAndCopytruncate()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"access.log"_s);
        int next = 0;
        auto lines = [&](int count) {
            QByteArray data;
            for (int i = 0; i < count; ++i)
                data += formatLine(u"access"_s, next++) + '\n';
            return data;
        };
        appendTo(path, lines(10));
        FileTailer tailer;
        tailer.setOrphanGraceMs(0);
        TailIngest ingest;
        Collected got;
        tailer.setBatchCallback([&](const TailBatch &batch) {
            ingest.parse(batch, &got.events, &got.malformed);
        });
        tailer.addFile(path);
        tailer.start();
        appendTo(path, lines(5));
        tailer.pollNow();
        // logrotate's default: renamed away, a new file under the name.
        appendTo(path, lines(3)); // written before the rename, read from the old file
        QVERIFY(QFile::rename(path, path + u".1"_s));
        appendTo(path, lines(4));
        tailer.pollNow();
        tailer.pollNow();
        // copytruncate: copied aside, cut to zero in place, written again.
        tailer.pollNow();
        QVERIFY(QFile::copy(path, path + u".2"_s));
        QVERIFY(QFile::resize(path, 0));
        tailer.pollNow();
        appendTo(path, lines(6));
        tailer.pollNow();
        tailer.stop();
        QVERIFY2(got.malformed.isEmpty(), qPrintable(got.malformed.isEmpty() ? QString() : got.malformed.constFirst().toString()));
        QStringList identities;
        for (const RequestEvent &event : std::as_const(got.events))
            identities.append(event.identity);
        QStringList expected;
        for (int i = 0; i < next; ++i)
            expected.append(u"user"_s + QString::number(i));
        identities.sort();
        expected.sort();
        QCOMPARE(identities, expected);
    }

    // A whole-document format is not parsed line by line; tail says so once per file.
    void documentsAreNotLines()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"capture.har"_s);
        appendTo(path, "{\n  \"log\": {\n    \"entries\": [\n    ]\n  }\n}\n");
        QCOMPARE(followModeFor(u"har"_s, readFileHead(path)), FollowMode::Document);
        QVERIFY(!createLineParser(u"har"_s, readFileHead(path)));
        FileTailer tailer;
        TailIngest ingest;
        Collected got;
        tailer.setBatchCallback([&](const TailBatch &batch) {
            ingest.parse(batch, &got.events, &got.malformed);
        });
        tailer.addFile(path);
        tailer.start();
        appendTo(path, "\n\n");
        tailer.pollNow();
        tailer.stop();
        QCOMPARE(got.events.size(), 0);
        QCOMPARE(got.malformed.size(), 1);
        QVERIFY(got.malformed.constFirst().reason.contains(u"har"));
        // An Azure export with one {"records":[...]} document per line is lines.
        QCOMPARE(followModeFor(u"azure-records"_s, "{\"records\":[]}\n{\"records\":[]}\n"),
                 FollowMode::Lines);
        QCOMPARE(followModeFor(u"azure-records"_s, "{\n \"records\": [\n"), FollowMode::Document);
    }
};

QTEST_GUILESS_MAIN(TestLineReaders)
#include "tst_linereaders.moc"
