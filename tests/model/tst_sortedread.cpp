// Issue 30.4, files: a file read whole is replayed in exact time order. The real Apache combined
// sample (lines written when a request ends, stamped when it began) has 7,304 of 10,000 lines
// up to 59 s behind; the merge's 5 s window counted them late and charged them at the wrong
// instant. The report's read stops at the first late line and reads the file again sorted in
// runs and merged (ingest/sortedread.h), in bounded memory.

#include "../bench/canonicalgenerator.h"
#include "engine/analysis.h"
#include "engine/reportformat.h"
#include "ingest/sortedread.h"
#include "ingest/timemerge.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <random>

using namespace ts;
using namespace Qt::StringLiterals;

namespace {

const QString kApache =
    QStringLiteral(TS_THIRDPARTY_DIR "/oplogs/elastic-examples_apache_logs_combined.log");

// Keeps (time, source, line) of what it is handed, in order.
class Recorder final : public IngestSink
{
public:
    struct Seen
    {
        qint64 tsMs;
        QString source;
        qint64 line;
    };
    void onEvent(RequestEvent &&event) override
    {
        seen.push_back({event.tsMs, event.source, event.line});
    }
    void onMalformed(MalformedRecord &&) override { ++malformed; }
    std::vector<Seen> seen;
    qint64 malformed = 0;
};

// As `report FILE...` reads: merged, and when a line comes later than the window, again sorted.
QByteArray reportJson(const QStringList &paths, bool *readAgain = nullptr)
{
    auto analysis = std::make_unique<Analysis>(PolicySet::builtin(), Analysis::Purpose::ReportOnly);
    MergeOptions merge;
    merge.stopAtFirstLate = canReadAgain(paths);
    const MergeResult first = readSourcesMerged(paths, *analysis, {}, merge);
    if (readAgain)
        *readAgain = first.stoppedAtLate;
    if (first.stoppedAtLate) {
        analysis = std::make_unique<Analysis>(PolicySet::builtin(), Analysis::Purpose::ReportOnly);
        readSourcesSorted(paths, *analysis);
    }
    return reportToJson(analysis->report());
}

QList<QByteArray> lines(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    QList<QByteArray> all = file.readAll().split('\n');
    while (!all.isEmpty() && all.back().isEmpty())
        all.removeLast();
    return all;
}

void writeLines(const QString &path, const QList<QByteArray> &all)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    for (const QByteArray &line : all)
        file.write(line + '\n');
}

// The order `paths` must come out in: by time, then input, then line.
void expectExactOrder(const std::vector<Recorder::Seen> &seen, const QStringList &paths)
{
    for (size_t i = 1; i < seen.size(); ++i) {
        const auto &a = seen[i - 1];
        const auto &b = seen[i];
        const auto rank = [&paths](const Recorder::Seen &s) {
            return std::tuple(s.tsMs, paths.indexOf(s.source), s.line);
        };
        QVERIFY2(rank(a) < rank(b), qPrintable(u"%1:%2 (%3) before %4:%5 (%6)"_s.arg(a.source)
                                                   .arg(a.line)
                                                   .arg(a.tsMs)
                                                   .arg(b.source)
                                                   .arg(b.line)
                                                   .arg(b.tsMs)));
    }
}

} // namespace

class TestSortedRead : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void apacheSampleInExactOrder();
    void runsSpillAndMerge_data();
    void runsSpillAndMerge();
    void aFileInOrderIsReadOnce();
};

void TestSortedRead::apacheSampleInExactOrder()
{
    // The merged read meets the late lines; the sorted one hands on every line in time order.
    Recorder windowed;
    MergeOptions merge;
    const MergeResult before = readSourcesMerged({kApache}, windowed, {}, merge);
    QCOMPARE(before.lateEvents, qint64(7304));
    Recorder sorted;
    const MergeResult after = readSourcesSorted({kApache}, sorted);
    QCOMPARE(after.lateEvents, qint64(0));
    QCOMPARE(qsizetype(sorted.seen.size()), qsizetype(10000));
    expectExactOrder(sorted.seen, {kApache});

    // The report of the file is the report of the same lines sorted by time beforehand.
    QTemporaryDir dir;
    QList<QByteArray> all = lines(kApache);
    QCOMPARE(all.size(), qsizetype(10000));
    std::vector<std::pair<qint64, QByteArray>> byTime;
    for (size_t i = 0; i < sorted.seen.size(); ++i)
        byTime.emplace_back(i, all.at(sorted.seen[i].line - 1));
    QList<QByteArray> inOrder;
    for (const auto &[index, line] : byTime)
        inOrder.append(line);
    const QString sortedPath = dir.filePath(u"sorted.log"_s);
    writeLines(sortedPath, inOrder);
    bool readAgain = false;
    const QJsonObject report = QJsonDocument::fromJson(reportJson({kApache}, &readAgain)).object();
    QVERIFY(readAgain);
    bool sortedReadAgain = true;
    const QJsonObject expected =
        QJsonDocument::fromJson(reportJson({sortedPath}, &sortedReadAgain)).object();
    QVERIFY(!sortedReadAgain);
    QCOMPARE(report.value(u"lateEvents"_s).toInteger(), qint64(0));
    QCOMPARE(report, expected);
}

void TestSortedRead::runsSpillAndMerge_data()
{
    QTest::addColumn<int>("files");
    QTest::addColumn<int>("runEvents");
    QTest::addColumn<int>("fanIn");
    QTest::newRow("one file, one run in memory") << 1 << 100000 << 64;
    QTest::newRow("one file, 30 runs on disk") << 1 << 100 << 64;
    QTest::newRow("one file, merged in passes") << 1 << 100 << 3;
    QTest::newRow("three files, equal instants, merged in passes") << 3 << 150 << 4;
}

// A shuffled log (lines up to 10 minutes apart) in small runs: every event comes out, in the
// order of time, input and line, whatever the runs and passes.
void TestSortedRead::runsSpillAndMerge()
{
    QFETCH(int, files);
    QFETCH(int, runEvents);
    QFETCH(int, fanIn);
    QTemporaryDir dir;
    QStringList paths;
    std::mt19937 rng(7);
    qsizetype total = 0;
    for (int f = 0; f < files; ++f) {
        const QString path = dir.filePath(u"log-%1.ndjson"_s.arg(f));
        generateCanonicalLog(path, 3000, 42); // the same instants in each file
        QList<QByteArray> all = lines(path);
        std::shuffle(all.begin(), all.end(), rng);
        writeLines(path, all);
        paths.append(path);
        total += all.size();
    }
    Recorder recorder;
    SortOptions sort;
    sort.runEvents = runEvents;
    sort.fanIn = fanIn;
    const MergeResult result = readSourcesSorted(paths, recorder, {}, {}, sort);
    QCOMPARE(result.outcomes.size(), paths.size());
    QCOMPARE(qsizetype(recorder.seen.size()), total);
    expectExactOrder(recorder.seen, paths);
}

// A file in time order never stops at a late line: `report` reads it once, analysing as it reads.
void TestSortedRead::aFileInOrderIsReadOnce()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(u"in-order.ndjson"_s);
    generateCanonicalLog(path, 5000, 3);
    bool readAgain = true;
    const QJsonObject report = QJsonDocument::fromJson(reportJson({path}, &readAgain)).object();
    QVERIFY(!readAgain);
    QCOMPARE(report.value(u"events"_s).toInteger(), qint64(5000));
}

QTEST_GUILESS_MAIN(TestSortedRead)
#include "tst_sortedread.moc"
