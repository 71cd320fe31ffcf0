// Several logs, one timeline (issue 19.5): readSourcesMerged merges its inputs by time, so two
// clients' logs of the same period give the report of their events in time order, whatever the
// order they are named in, the same as the merged file and as an import followed by the
// workspace report; lines a little late take their place, later ones are counted as late.

#include "../bench/canonicalgenerator.h"
#include "engine/analysis.h"
#include "engine/reportformat.h"
#include "ingest/sourcereader.h"
#include "ingest/timemerge.h"
#include "session/analysissession.h"
#include "store/importjob.h"
#include "store/workspace.h"
#include "store/workspacereader.h"
#include "store/workspacewriter.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <random>

using namespace ts;
using namespace Qt::StringLiterals;

namespace {

QList<QByteArray> readLines(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    QList<QByteArray> lines = file.readAll().split('\n');
    while (!lines.isEmpty() && lines.back().isEmpty())
        lines.removeLast();
    return lines;
}

void writeLines(const QString &path, const QList<QByteArray> &lines)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    for (const QByteArray &line : lines)
        file.write(line + '\n');
}

qint64 tsOf(const QByteArray &line)
{
    static const QRegularExpression ts(u"\"ts\":(\\d+)"_s);
    return ts.match(QString::fromUtf8(line)).captured(1).toLongLong();
}

// The report of `paths` read as the CLI's `report FILE...` reads them (merged by time).
QJsonObject mergedReport(const QStringList &paths, qint64 *late = nullptr,
                         qint64 windowMs = kDefaultReorderWindowMs)
{
    Analysis analysis(PolicySet::builtin(), Analysis::Purpose::ReportOnly);
    MergeOptions options;
    options.reorderWindowMs = windowMs;
    const MergeResult result = readSourcesMerged(paths, analysis, {}, options);
    if (late)
        *late = result.lateEvents;
    return QJsonDocument::fromJson(reportToJson(analysis.report())).object();
}

// The report of `paths` read one after the other, as `report A B` did before issue 19.5.
QJsonObject sequentialReport(const QStringList &paths)
{
    Analysis analysis(PolicySet::builtin(), Analysis::Purpose::ReportOnly);
    for (const QString &path : paths)
        readSource(path, analysis);
    return QJsonDocument::fromJson(reportToJson(analysis.report())).object();
}

// `import --workspace WS paths...` then `report --workspace WS`, as the CLI does them.
QJsonObject workspaceReport(const QString &workspacePath, const QStringList &paths)
{
    {
        Workspace workspace;
        WorkspaceWriter writer;
        if (!workspace.open(workspacePath) || !writer.start(workspacePath))
            return {};
        for (const QString &path : paths) {
            QFile probe(path);
            if (!probe.open(QIODevice::ReadOnly))
                return {};
            QString error;
            std::unique_ptr<LogReader> reader = readerFor(probe, path, {}, &error);
            probe.close();
            if (!reader || !importFile(workspace, writer, path, *reader).ok())
                return {};
        }
        if (!writer.finish())
            return {};
    }
    WorkspaceReader reader;
    if (!reader.open(workspacePath))
        return {};
    Analysis analysis(PolicySet::builtin(), Analysis::Purpose::ReportOnly);
    reader.forEachEventInTimeOrder(8192, [&analysis](const QList<RequestEvent> &chunk) {
        for (const RequestEvent &event : chunk)
            analysis.add(event);
        return true;
    });
    const QList<StoredMalformed> samples = reader.malformed(0, 0, Analysis::kMalformedSamples);
    for (StoredMalformed stored : samples)
        analysis.onMalformed(std::move(stored.record));
    analysis.countMalformed(reader.countMalformed() - samples.size());
    return QJsonDocument::fromJson(reportToJson(analysis.report())).object();
}

double peakFill(const QJsonObject &report)
{
    double peak = 0;
    for (const QJsonValue &scope : report.value(u"scopes"_s).toArray())
        peak = qMax(peak, scope.toObject().value(u"peakFill"_s).toDouble());
    return peak;
}

qsizetype alertCount(const QJsonObject &report)
{
    return report.value(u"alerts"_s).toArray().size();
}

// A readable account of where two reports part, for the failure message.
QByteArray firstDifference(const QJsonObject &a, const QJsonObject &b)
{
    for (auto it = a.begin(); it != a.end(); ++it) {
        if (b.value(it.key()) != it.value())
            return it.key().toUtf8() + ": " +
                   QJsonDocument(QJsonArray{it.value()}).toJson(QJsonDocument::Compact).left(300) +
                   " vs " +
                   QJsonDocument(QJsonArray{b.value(it.key())})
                       .toJson(QJsonDocument::Compact)
                       .left(300);
    }
    return "keys differ";
}

} // namespace

class TestTimeMerge : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void interleavedClients_data();
    void interleavedClients();
    void lateLines_data();
    void lateLines();
    void shuffledFile();
    void singleInputInOrderIsUnchanged();
    void malformedKeepFileAndLine();
    void observerSeesEachInputInItsOrder();
    void dashboardMergesTheFilesItOpens();

private:
    QTemporaryDir m_dir;
    QString m_log; // a canonical log in time order
    QList<QByteArray> m_lines;
};

void TestTimeMerge::initTestCase()
{
    QVERIFY(m_dir.isValid());
    m_log = m_dir.filePath(u"canonical.ndjson"_s);
    generateCanonicalLog(m_log, 30000, 19);
    // The generator writes ~1000 requests a second; stretched 20 times, the log covers ten
    // minutes (room for minute blocks and a minute's lateness), equal instants staying equal.
    static const QRegularExpression ts(u"\"ts\":(\\d+)"_s);
    const QList<QByteArray> raw = readLines(m_log);
    QCOMPARE(raw.size(), 30000);
    const qint64 start = tsOf(raw.front());
    for (const QByteArray &line : raw) {
        QString text = QString::fromUtf8(line);
        const QRegularExpressionMatch match = ts.match(text);
        const qint64 stretched = start + (match.captured(1).toLongLong() - start) * 20;
        text.replace(match.capturedStart(1), match.capturedLength(1), QString::number(stretched));
        m_lines.append(text.toUtf8());
    }
    writeLines(m_log, m_lines);
}

void TestTimeMerge::interleavedClients_data()
{
    QTest::addColumn<QString>("split");
    QTest::newRow("round robin (one client's requests spread over two machines)") << u"rr"_s;
    QTest::newRow("by identity (two clients of one service)") << u"identity"_s;
    QTest::newRow("by blocks of a minute (two machines taking turns)") << u"minute"_s;
}

void TestTimeMerge::interleavedClients()
{
    QFETCH(QString, split);
    static const QRegularExpression identity(u"\"identity\":\"sp-(\\d+)\""_s);
    QList<QByteArray> a;
    QList<QByteArray> b;
    for (qsizetype i = 0; i < m_lines.size(); ++i) {
        bool toA = false;
        if (split == u"rr")
            toA = i % 2 == 0;
        else if (split == u"identity")
            toA = identity.match(QString::fromUtf8(m_lines[i])).captured(1).toInt() % 2 == 0;
        else
            toA = (tsOf(m_lines[i]) / 60000) % 2 == 0;
        (toA ? a : b).append(m_lines[i]);
    }
    QVERIFY(!a.isEmpty() && !b.isEmpty());
    const QString pathA = m_dir.filePath(split + u"-a.ndjson"_s);
    const QString pathB = m_dir.filePath(split + u"-b.ndjson"_s);
    writeLines(pathA, a);
    writeLines(pathB, b);
    // The merged file: both logs in time order, A's line first at an equal instant (the order
    // the merge and the workspace's replay give).
    QList<QByteArray> merged = a + b;
    std::stable_sort(merged.begin(), merged.end(),
                     [](const QByteArray &x, const QByteArray &y) { return tsOf(x) < tsOf(y); });
    const QString pathMerged = m_dir.filePath(split + u"-merged.ndjson"_s);
    writeLines(pathMerged, merged);

    qint64 late = -1;
    const QJsonObject ab = mergedReport({pathA, pathB}, &late);
    QCOMPARE(late, qint64(0));
    QCOMPARE(ab.value(u"lateEvents"_s).toInteger(), qint64(0));
    QCOMPARE(ab.value(u"events"_s).toInteger(), qint64(m_lines.size()));
    const QJsonObject ba = mergedReport({pathB, pathA});
    const QJsonObject ofMerged = mergedReport({pathMerged});
    const QJsonObject ofWorkspace =
        workspaceReport(m_dir.filePath(split + u".tsws"_s), {pathA, pathB});
    const QJsonObject before = sequentialReport({pathA, pathB});
    qInfo("%s: peak fill / alerts: report A B before %.3f / %lld, now %.3f / %lld; merged file "
          "%.3f / %lld; workspace %.3f / %lld; late before %lld",
          qPrintable(split), peakFill(before), qlonglong(alertCount(before)), peakFill(ab),
          qlonglong(alertCount(ab)), peakFill(ofMerged), qlonglong(alertCount(ofMerged)),
          peakFill(ofWorkspace), qlonglong(alertCount(ofWorkspace)),
          before.value(u"lateEvents"_s).toInteger());

    QVERIFY2(ab == ofMerged, firstDifference(ab, ofMerged).constData());
    QVERIFY2(ab == ofWorkspace, firstDifference(ab, ofWorkspace).constData());

    // B A: the same as `import B A` and the report of the workspace, and as the merged file
    // with B's line first at an equal instant.
    QList<QByteArray> mergedBA = b + a;
    std::stable_sort(mergedBA.begin(), mergedBA.end(),
                     [](const QByteArray &x, const QByteArray &y) { return tsOf(x) < tsOf(y); });
    const QString pathMergedBA = m_dir.filePath(split + u"-merged-ba.ndjson"_s);
    writeLines(pathMergedBA, mergedBA);
    const QJsonObject ofMergedBA = mergedReport({pathMergedBA});
    const QJsonObject ofWorkspaceBA =
        workspaceReport(m_dir.filePath(split + u"-ba.tsws"_s), {pathB, pathA});
    QVERIFY2(ba == ofMergedBA, firstDifference(ba, ofMergedBA).constData());
    QVERIFY2(ba == ofWorkspaceBA, firstDifference(ba, ofWorkspaceBA).constData());
    // A B against B A: what does not depend on the order of requests sent in the same
    // millisecond is the same. Which of two such requests a limit refuses (and what follows
    // from it: per-key predictions, breakers, alerts) follows the order named, as it follows
    // the order of the lines in one file.
    for (const QString &key : {u"events"_s, u"byStatus"_s, u"throttles"_s, u"from"_s, u"to"_s,
                               u"lateEvents"_s, u"malformed"_s})
        QVERIFY2(ab.value(key) == ba.value(key), qPrintable(key));
    QCOMPARE(peakFill(ba), peakFill(ab));
    QStringList differing;
    for (auto it = ab.begin(); it != ab.end(); ++it) {
        if (ba.value(it.key()) != it.value())
            differing << it.key();
    }
    qInfo("%s: report B A: peak fill %.3f, %lld alerts; differs from A B in: %s", qPrintable(split),
          peakFill(ba), qlonglong(alertCount(ba)), qPrintable(differing.join(u", "_s)));
    // And the merged file is the original log: the merge put the two halves back together.
    if (split == u"minute") // where the halves share instants, the original's order is its own
        QVERIFY2(ab == mergedReport({m_log}),
                 firstDifference(ab, mergedReport({m_log})).constData());
}

void TestTimeMerge::lateLines_data()
{
    QTest::addColumn<qint64>("delayMs");
    QTest::addColumn<int>("every");
    QTest::addColumn<bool>("expectLate");
    QTest::newRow("up to 3 s late: put back in place") << qint64(3000) << 37 << false;
    QTest::newRow("4.9 s late: put back in place") << qint64(4900) << 101 << false;
    QTest::newRow("60 s late: counted as late") << qint64(60000) << 499 << true;
}

void TestTimeMerge::lateLines()
{
    QFETCH(qint64, delayMs);
    QFETCH(int, every);
    QFETCH(bool, expectLate);
    // Every `every`th line is written after the lines up to delayMs newer than it.
    QList<QByteArray> lines;
    QList<std::pair<qint64, QByteArray>> held; // (due, line), due in time order
    qint64 delayed = 0;
    for (qsizetype i = 0; i < m_lines.size(); ++i) {
        const qint64 ts = tsOf(m_lines[i]);
        while (!held.isEmpty() && held.front().first < ts)
            lines.append(held.takeFirst().second);
        // Not in the last 70 s: a line held to the end of the file is not always late.
        if (i % every == every - 1 && ts + delayMs + 10000 < tsOf(m_lines.back())) {
            held.append({ts + delayMs, m_lines[i]});
            ++delayed;
        } else {
            lines.append(m_lines[i]);
        }
    }
    for (const auto &[due, line] : std::as_const(held))
        lines.append(line);
    const QString lateFile = m_dir.filePath(u"late-%1.ndjson"_s.arg(delayMs));
    writeLines(lateFile, lines);
    QList<QByteArray> sorted = lines;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const QByteArray &x, const QByteArray &y) { return tsOf(x) < tsOf(y); });
    const QString sortedFile = m_dir.filePath(u"sorted-%1.ndjson"_s.arg(delayMs));
    writeLines(sortedFile, sorted);

    qint64 late = -1;
    const QJsonObject report = mergedReport({lateFile}, &late);
    const QJsonObject ofSorted = mergedReport({sortedFile});
    const QJsonObject before = sequentialReport({lateFile});
    qInfo("%lld ms late, %lld lines delayed: late %lld (engine read in file order: %lld), "
          "alerts %lld (sorted file %lld, file order %lld), peak fill %.3f (sorted %.3f, "
          "file order %.3f)",
          qlonglong(delayMs), qlonglong(delayed), qlonglong(late),
          before.value(u"lateEvents"_s).toInteger(), qlonglong(alertCount(report)),
          qlonglong(alertCount(ofSorted)), qlonglong(alertCount(before)), peakFill(report),
          peakFill(ofSorted), peakFill(before));
    QCOMPARE(report.value(u"lateEvents"_s).toInteger(), late);
    QCOMPARE(report.value(u"events"_s).toInteger(), qint64(m_lines.size()));
    if (!expectLate) {
        QCOMPARE(late, qint64(0));
        QVERIFY2(report == ofSorted, firstDifference(report, ofSorted).constData());
    } else {
        QCOMPARE(late, delayed);
        QCOMPARE(ofSorted.value(u"lateEvents"_s).toInteger(), qint64(0));
        // The same as one of two inputs (the k-way path, on threads). The empty one first: an
        // input's first chunk is merged before the next input's first instant is known, and
        // while that is unknown nothing can be handed on (timemerge.h).
        const QString empty = m_dir.filePath(u"empty.ndjson"_s);
        writeLines(empty, {});
        qint64 lateOfTwo = -1;
        mergedReport({empty, lateFile}, &lateOfTwo);
        QCOMPARE(lateOfTwo, delayed);
    }
}

void TestTimeMerge::shuffledFile()
{
    QList<QByteArray> shuffled = m_lines;
    std::mt19937 rng(5);
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    const QString path = m_dir.filePath(u"shuffled.ndjson"_s);
    writeLines(path, shuffled);
    qint64 late = -1;
    const QJsonObject report = mergedReport({path}, &late);
    const QJsonObject ofSorted = mergedReport({m_log});
    const QJsonObject before = sequentialReport({path});
    qInfo("shuffled file of %lld lines: %lld late; alerts %lld, peak fill %.3f (in file order "
          "before: %lld alerts, peak fill %.3f; sorted file: %lld alerts, peak fill %.3f)",
          qlonglong(shuffled.size()), qlonglong(late), qlonglong(alertCount(report)),
          peakFill(report), qlonglong(alertCount(before)), peakFill(before),
          qlonglong(alertCount(ofSorted)), peakFill(ofSorted));
    // Most lines of a shuffled file are far behind the newest one read: they are counted.
    QVERIFY(late > shuffled.size() / 2);
    QCOMPARE(report.value(u"lateEvents"_s).toInteger(), late);
    QCOMPARE(report.value(u"events"_s).toInteger(), qint64(shuffled.size()));
}

void TestTimeMerge::singleInputInOrderIsUnchanged()
{
    // The fast path: one input in time order is handed on as read.
    qint64 late = -1;
    const QJsonObject merged = mergedReport({m_log}, &late);
    QCOMPARE(late, qint64(0));
    const QJsonObject direct = sequentialReport({m_log});
    QVERIFY2(merged == direct, firstDifference(merged, direct).constData());
}

void TestTimeMerge::malformedKeepFileAndLine()
{
    const QString a = m_dir.filePath(u"bad-a.ndjson"_s);
    const QString b = m_dir.filePath(u"bad-b.ndjson"_s);
    writeLines(a, {m_lines[0], "{not json", m_lines[2], m_lines[4]});
    writeLines(b, {m_lines[1], m_lines[3], m_lines[5], "{\"ts\":\"yesterday\"}"});
    Analysis analysis(PolicySet::builtin(), Analysis::Purpose::ReportOnly);
    const MergeResult result = readSourcesMerged({a, b}, analysis);
    QCOMPARE(result.outcomes.size(), 2);
    QCOMPARE(result.outcomes[0].result.malformed, qint64(1));
    QCOMPARE(result.outcomes[1].result.malformed, qint64(1));
    const ReportData report = analysis.report();
    QCOMPARE(report.events, qint64(6));
    QCOMPARE(report.malformed, qint64(2));
    QStringList where;
    for (const MalformedRecord &record : report.malformedSamples)
        where << record.source + u':' + QString::number(record.line);
    where.sort();
    QCOMPARE(where, QStringList({a + u":2"_s, b + u":4"_s}));
}

void TestTimeMerge::observerSeesEachInputInItsOrder()
{
    class Recorder final : public MergeInputObserver
    {
    public:
        void inputEvents(int input, const std::vector<RequestEvent> &events) override
        {
            for (const RequestEvent &event : events)
                lines[input].append(event.line);
        }
        void inputMalformed(int, const MalformedRecord &) override {}
        void inputFinished(int input, const SourceOutcome &outcome) override
        {
            endLines[input] = outcome.result.endLine;
        }
        QList<qint64> lines[3];
        qint64 endLines[3] = {-1, -1, -1};
    };
    QStringList paths;
    for (int i = 0; i < 3; ++i) {
        QList<QByteArray> part;
        for (qsizetype j = i; j < m_lines.size(); j += 3)
            part.append(m_lines[j]);
        paths << m_dir.filePath(u"third-%1.ndjson"_s.arg(i));
        writeLines(paths.back(), part);
    }
    Recorder recorder;
    Analysis analysis(PolicySet::builtin(), Analysis::Purpose::ReportOnly);
    const MergeResult result = readSourcesMerged(paths, analysis, {}, {}, &recorder);
    QCOMPARE(analysis.report().events, qint64(m_lines.size()));
    for (int i = 0; i < 3; ++i) {
        QCOMPARE(recorder.lines[i].size(), qsizetype(10000));
        QCOMPARE(recorder.lines[i].front(), qint64(1));
        QVERIFY(std::is_sorted(recorder.lines[i].cbegin(), recorder.lines[i].cend()));
        QCOMPARE(recorder.endLines[i], qint64(10000));
        QCOMPARE(result.outcomes[i].result.events, qint64(10000));
    }
}

void TestTimeMerge::dashboardMergesTheFilesItOpens()
{
    // Two clients' logs opened together in the dashboard: its report is the merged one, and
    // each file is still counted, copied to the Events page and handed to the follower.
    QList<QByteArray> a;
    QList<QByteArray> b;
    for (qsizetype i = 0; i < m_lines.size(); ++i)
        (i % 2 == 0 ? a : b).append(m_lines[i]);
    const QString pathA = m_dir.filePath(u"dash-a.ndjson"_s);
    const QString pathB = m_dir.filePath(u"dash-b.ndjson"_s);
    writeLines(pathA, a);
    writeLines(pathB, b);

    Analysis expected(PolicySet::builtin(), Analysis::Purpose::Dashboard);
    readSourcesMerged({pathA, pathB}, expected);

    AnalysisSession session;
    std::shared_ptr<const DashboardSnapshot> last;
    connect(&session, &AnalysisSession::snapshotReady, this,
            [&last](std::shared_ptr<const DashboardSnapshot> snapshot) { last = snapshot; });
    QSignalSpy read(&session, &AnalysisSession::sourceRead);
    QSignalSpy ready(&session, &AnalysisSession::workspaceReady);
    session.openFiles({pathA, pathB}, SourceOptions{});
    QVERIFY(last);
    const QJsonObject shown = QJsonDocument::fromJson(reportToJson(last->report)).object();
    const QJsonObject merged = QJsonDocument::fromJson(reportToJson(expected.report())).object();
    QVERIFY2(shown == merged, firstDifference(shown, merged).constData());
    QCOMPARE(shown.value(u"lateEvents"_s).toInteger(), qint64(0));

    // Each file as it ends (in the merge's order, not necessarily the given one).
    QCOMPARE(read.size(), 2);
    QHash<QString, std::pair<qint64, qint64>> lineAndEvents;
    for (const QList<QVariant> &signal : std::as_const(read))
        lineAndEvents.insert(signal.at(0).toString(),
                             {signal.at(3).toLongLong(), signal.at(4).toLongLong()});
    QCOMPARE(lineAndEvents.value(pathA), std::make_pair(qint64(a.size()), qint64(a.size())));
    QCOMPARE(lineAndEvents.value(pathB), std::make_pair(qint64(b.size()), qint64(b.size())));
    QVERIFY(!ready.isEmpty());
    WorkspaceReader scratch;
    QVERIFY(scratch.open(ready.back().at(0).toString()));
    QCOMPARE(scratch.countEvents(), qint64(m_lines.size()));
}

QTEST_GUILESS_MAIN(TestTimeMerge)
#include "tst_timemerge.moc"
