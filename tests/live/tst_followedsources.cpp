// The dashboard's followed files (live/followedsources.h) on real files appended during the
// test: a file read once and then followed gives every line exactly once through growth, a
// partial last line, rotation and copytruncate, in every line format; a glob picks up new files
// in its folder; a whole-document format is read again without counting anything twice; Follow
// off pauses and Follow on catches up.
#include "ingest/sourcereader.h"
#include "live/followedsources.h"

#include <QDir>
#include <QFile>
#include <QSignalSpy>
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

void writeFile(const QString &path, const QByteArray &data)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(file.write(data), data.size());
}

QByteArray ndjsonLine(int i)
{
    return "{\"ts\":\"2026-02-18T22:44:09.512Z\",\"identity\":\"u-" + QByteArray::number(i) +
           "\",\"service\":\"graph\",\"status\":429}\n";
}

QByteArray accessLine(int i)
{
    return "10.0.0.1 - u-" + QByteArray::number(i) +
           " [18/Feb/2026:22:44:09 +0000] \"GET /v1.0/me HTTP/1.1\" 429 120 \"-\" \"m/1.0\"\n";
}

QByteArray harWith(int entries)
{
    QByteArray har = "{\"log\":{\"version\":\"1.2\",\"creator\":{\"name\":\"t\",\"version\":\"1\"},"
                     "\"entries\":[";
    for (int i = 0; i < entries; ++i) {
        if (i > 0)
            har += ',';
        har += "{\"startedDateTime\":\"2026-02-18T22:44:0" + QByteArray::number(i % 10) +
               ".512Z\",\"time\":5,\"request\":{\"method\":\"GET\",\"url\":"
               "\"https://graph.microsoft.com/v1.0/me?i=" +
               QByteArray::number(i) +
               "\",\"headers\":[]},\"response\":{\"status\":429,\"headers\":[]}}";
    }
    return har + "]}}\n";
}

struct Collect final : IngestSink
{
    void onEvent(RequestEvent &&event) override { events.append(std::move(event)); }
    void onMalformed(MalformedRecord &&record) override { malformed.append(std::move(record)); }
    QList<RequestEvent> events;
    QList<MalformedRecord> malformed;
};

// What the dashboard does with a file it opens: one read from the start (holding back an
// unterminated last line), then following from where it ended.
struct Harness
{
    FollowedSources followed;
    QStringList identities;
    QStringList sources;
    QList<MalformedRecord> malformed;

    Harness()
    {
        QObject::connect(&followed, &FollowedSources::eventsRead, &followed,
                         [this](const QString &source, const QList<RequestEvent> &events,
                                const QList<MalformedRecord> &bad) {
                             for (const RequestEvent &event : events) {
                                 identities.append(event.identity);
                                 sources.append(source);
                             }
                             malformed += bad;
                         });
    }
    void open(const QString &path)
    {
        Collect sink;
        ReadControl control;
        control.holdUnterminatedTail = true;
        const SourceOutcome outcome = readSource(path, sink, {}, control);
        for (const RequestEvent &event : std::as_const(sink.events))
            identities.append(event.identity);
        malformed += sink.malformed;
        followed.followFile(path, outcome.readable() ? outcome.format : QString(),
                            outcome.result.endOffset, outcome.result.endLine,
                            sink.events.size(), sink.malformed.size());
    }
    void poll()
    {
        followed.pollNow();
        followed.pollNow();
    }
};

QStringList expected(int from, int to)
{
    QStringList list;
    for (int i = from; i < to; ++i)
        list.append(u"u-"_s + QString::number(i));
    return list;
}

QStringList sorted(QStringList list)
{
    list.sort();
    return list;
}

} // namespace

class TestFollowedSources : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void exactlyOnce_data()
    {
        QTest::addColumn<bool>("access");
        QTest::newRow("ndjson") << false;
        QTest::newRow("access log") << true;
    }

    void exactlyOnce()
    {
        QFETCH(bool, access);
        auto line = [access](int i) { return access ? accessLine(i) : ndjsonLine(i); };
        QTemporaryDir dir;
        const QString path = dir.filePath(u"app.log"_s);
        QByteArray initial;
        for (int i = 0; i < 20; ++i)
            initial += line(i);
        // Opened while line 20 is half written.
        const QByteArray half = line(20);
        appendTo(path, initial + half.first(15));
        Harness harness;
        harness.open(path);
        QCOMPARE(harness.identities.size(), 20);
        QCOMPARE(harness.followed.followedFiles(), QStringList{path});

        appendTo(path, half.sliced(15) + line(21) + line(22));
        harness.poll();
        QCOMPARE(sorted(harness.identities), sorted(expected(0, 23)));
        QVERIFY(harness.sources.contains(path));

        // Rotation: renamed away after a last write, a new file under the name.
        appendTo(path, line(23));
        QVERIFY(QFile::rename(path, path + u".1"_s));
        appendTo(path, line(24) + line(25));
        harness.poll();
        QCOMPARE(sorted(harness.identities), sorted(expected(0, 26)));
        // Every event keeps the name the file was opened under.
        QCOMPARE(harness.sources.count(path), harness.sources.size());

        // copytruncate: copied aside, cut in place, written again.
        QVERIFY(QFile::copy(path, path + u".2"_s));
        QVERIFY(QFile::resize(path, 0));
        harness.poll();
        appendTo(path, line(26) + line(27));
        harness.poll();
        QCOMPARE(sorted(harness.identities), sorted(expected(0, 28)));
        QVERIFY2(harness.malformed.isEmpty(), qPrintable(harness.malformed.isEmpty() ? QString() : harness.malformed.constFirst().toString()));
    }

    // A glob's folder: files created later are followed from their first byte, the ones read at
    // open continue where they were read; other names are left alone.
    void globPicksUpNewFiles()
    {
        QTemporaryDir dir;
        appendTo(dir.filePath(u"a.ndjson"_s), ndjsonLine(0) + ndjsonLine(1));
        appendTo(dir.filePath(u"notes.txt"_s), "not a log\n");
        const OpenRequest request = expandOpenArguments({dir.filePath(u"*.ndjson"_s)});
        QCOMPARE(request.files, QStringList{dir.filePath(u"a.ndjson"_s)});
        QCOMPARE(request.folders.size(), 1);
        QCOMPARE(request.folders.constFirst().nameFilters, QStringList{u"*.ndjson"_s});
        Harness harness;
        for (const QString &file : request.files)
            harness.open(file);
        for (const auto &folder : request.folders)
            harness.followed.watchFolder(folder.directory, folder.nameFilters);
        harness.poll();
        QCOMPARE(harness.identities.size(), 2);
        appendTo(dir.filePath(u"b.ndjson"_s), ndjsonLine(2) + ndjsonLine(3));
        appendTo(dir.filePath(u"a.ndjson"_s), ndjsonLine(4));
        appendTo(dir.filePath(u"notes.txt"_s), "still not a log\n");
        harness.poll();
        QCOMPARE(sorted(harness.identities), sorted(expected(0, 5)));
        QVERIFY(harness.malformed.isEmpty());

        // A directory is a folder of every file in it.
        const OpenRequest whole = expandOpenArguments({dir.path()});
        QCOMPARE(whole.files.size(), 3);
        QCOMPARE(whole.folders.constFirst().nameFilters, QStringList{u"*"_s});
    }

    // A HAR saved again with more entries: only the new entries are taken.
    void documentReadAgain()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"capture.har"_s);
        writeFile(path, harWith(2));
        Harness harness;
        harness.open(path);
        QCOMPARE(harness.identities.size(), 2);
        harness.poll();
        QCOMPARE(harness.identities.size(), 2);
        QTest::qWait(20); // a new modification time on coarse clocks
        writeFile(path, harWith(2).first(40)); // caught half saved: nothing taken
        harness.poll();
        QTest::qWait(20);
        writeFile(path, harWith(5));
        harness.poll();
        QCOMPARE(harness.identities.size(), 5);
        harness.poll();
        QCOMPARE(harness.identities.size(), 5);
    }

    // Follow off: nothing is read; on: what was written meanwhile arrives, once.
    void pauseAndResume()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"app.ndjson"_s);
        appendTo(path, ndjsonLine(0));
        Harness harness;
        harness.open(path);
        harness.followed.setEnabled(false);
        appendTo(path, ndjsonLine(1) + ndjsonLine(2));
        harness.poll();
        QCOMPARE(harness.identities.size(), 1);
        harness.followed.setEnabled(true);
        harness.poll();
        QCOMPARE(sorted(harness.identities), sorted(expected(0, 3)));
        // And through the event loop, as in the dashboard (watcher or timer).
        QSignalSpy spy(&harness.followed, &FollowedSources::eventsRead);
        appendTo(path, ndjsonLine(3));
        QVERIFY(spy.wait(5000));
        QCOMPARE(sorted(harness.identities), sorted(expected(0, 4)));
    }
};

QTEST_GUILESS_MAIN(TestFollowedSources)
#include "tst_followedsources.moc"
