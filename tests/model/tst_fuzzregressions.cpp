// Every input under tests/data/fuzz-regressions/<format>/ (crashes found by the libFuzzer
// harnesses in tests/fuzz/, and hand-written edge cases) read by its reader and by format
// detection: no crash, counts that match what was emitted, fatal errors that name the file,
// no bearer token in any event.
#include "core/valuelimits.h"
#include "ingest/csvreader.h"
#include "ingest/formatdetect.h"

#include "importertestutil.h"

#include <QDirIterator>
#include <QFileInfo>

using namespace ts;
using namespace ts::testutil;

class TestFuzzRegressions : public QObject
{
    Q_OBJECT
private slots:
    void regressions_data()
    {
        QTest::addColumn<QString>("format");
        QTest::addColumn<QString>("path");
        const QString root = QStringLiteral(TS_TEST_DATA_DIR "/fuzz-regressions");
        int files = 0;
        for (const QString &format : knownFormats()) {
            QDirIterator it(root + u'/' + format, QDir::Files);
            while (it.hasNext()) {
                const QString path = it.next();
                QTest::newRow(qPrintable(format + u'/' + it.fileName())) << format << path;
                ++files;
            }
        }
        // The folder is not allowed to vanish silently.
        QVERIFY(files >= 9);
    }

    void regressions()
    {
        QFETCH(QString, format);
        QFETCH(QString, path);
        const auto reader = createReader(format);
        QVERIFY(reader);
        CollectingSink sink;
        const ReadResult result = readFile(*reader, path, sink);
        QCOMPARE(result.events, qint64(sink.events.size()));
        QCOMPARE(result.malformed, qint64(sink.malformed.size()));
        QVERIFY(result.bytesRead <= QFileInfo(path).size());
        if (!result.fatalError.isEmpty())
            QVERIFY2(result.fatalError.startsWith(path + u": "), qPrintable(result.fatalError));
        for (const MalformedRecord &record : sink.malformed) {
            QCOMPARE(record.source, path);
            QVERIFY(!record.reason.isEmpty());
        }
        for (const RequestEvent &event : sink.events) {
            QVERIFY(!dumpEvent(event).contains(u"Bearer eyJ"));
            // No value outside core/valuelimits.h's ranges reaches the engine.
            QVERIFY2(limits::eventValueProblem(event).isEmpty(),
                     qPrintable(limits::eventValueProblem(event)));
        }

        // Detection on the same bytes, and whatever reader it picks, must be just as safe.
        const QString detected = detectFormat(fileBytes(path));
        if (!detected.isEmpty()) {
            QVERIFY(knownFormats().contains(detected));
            CollectingSink other;
            const ReadResult again = readFile(*createReader(detected), path, other);
            QCOMPARE(again.events, qint64(other.events.size()));
        }
    }

    // Found by fuzz_csv (whose first input line is a --map spec): a later mapping entry takes
    // the time column for a header ("ts=When,...,header.x=When"). The reader must see that no
    // time column is left, not look for one past the end of its columns.
    void csvMappingTakesTheTimeColumnAway()
    {
        const QString path = QStringLiteral(
            TS_TEST_DATA_DIR "/fuzz-regressions/csv/mapping-takes-the-time-column-away.csv");
        const QByteArray bytes = fileBytes(path);
        const qsizetype newline = bytes.indexOf('\n');
        QVERIFY(newline > 0);
        const auto mapping = CsvMapping::fromString(QString::fromUtf8(bytes.left(newline)));
        QVERIFY(mapping);
        CsvReader reader(*mapping);
        CollectingSink sink;
        const ReadResult result = readBytes(reader, bytes.mid(newline + 1), sink, path);
        QVERIFY2(result.fatalError.contains(u"no timestamp column"), qPrintable(result.fatalError));
        QVERIFY(sink.events.empty());
    }

    void truncatedEscapeIsAFatalErrorNotACrash()
    {
        const QString path =
            QStringLiteral(TS_TEST_DATA_DIR "/fuzz-regressions/har/escape-at-end-of-input.har");
        CollectingSink sink;
        const ReadResult result = readFile(*createReader(QStringLiteral("har")), path, sink);
        QVERIFY(sink.events.empty());
        QVERIFY2(result.fatalError.contains(u"corrupt HAR"), qPrintable(result.fatalError));
    }

    void batchWithWrongTypesStillYieldsTheEnvelope()
    {
        // A $batch whose sub-response has a string status and array headers: the envelope is
        // emitted, the sub-response keeps what could be read (status unknown = 0).
        const QString path =
            QStringLiteral(TS_TEST_DATA_DIR "/fuzz-regressions/har/batch-with-wrong-types.har");
        CollectingSink sink;
        const ReadResult result = readFile(*createReader(QStringLiteral("har")), path, sink);
        QVERIFY2(result.fatalError.isEmpty(), qPrintable(result.fatalError));
        QCOMPARE(result.events, 2);
        QVERIFY(sink.events[0].batchEnvelope);
        QCOMPARE(sink.events[1].batchIndex, 0); // matched by the numeric id 1
        QCOMPARE(sink.events[1].status, 0);
    }
};

QTEST_GUILESS_MAIN(TestFuzzRegressions)
#include "tst_fuzzregressions.moc"
