// FileTailer: every line exactly once, through growth, partial lines, rotation, copytruncate,
// deletion and re-creation, directory watches, restarts from stored positions and a worker thread.
#include "live/filetailer.h"

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <memory>

using namespace ts::live;

namespace {

void appendTo(const QString &path, const QByteArray &data)
{
    QFile file(path);
    QVERIFY2(file.open(QIODevice::WriteOnly | QIODevice::Append), qPrintable(file.errorString()));
    QCOMPARE(file.write(data), data.size());
    file.close();
}

QByteArray numberedLines(const QByteArray &prefix, int from, int count)
{
    QByteArray data;
    for (int i = from; i < from + count; ++i)
        data += prefix + QByteArray::number(i) + '\n';
    return data;
}

// Collects lines on the tailer's thread through the batch callback.
struct Collector
{
    QList<QByteArray> texts;
    QList<TailLine> lines;
    QStringList paths;
    void attach(FileTailer &tailer)
    {
        tailer.setBatchCallback([this](const TailBatch &batch) {
            for (const TailLine &line : batch.lines) {
                texts.append(line.text);
                lines.append(line);
                paths.append(batch.path);
            }
        });
    }
    // Every expected text exactly once (order within a file is checked separately).
    [[nodiscard]] bool exactly(const QList<QByteArray> &expected, QString *why) const
    {
        QList<QByteArray> got = texts;
        QList<QByteArray> want = expected;
        std::sort(got.begin(), got.end());
        std::sort(want.begin(), want.end());
        if (got == want)
            return true;
        const auto dup = std::adjacent_find(got.begin(), got.end());
        *why = QStringLiteral("got %1 lines, want %2; first duplicate: %3")
                   .arg(got.size())
                   .arg(want.size())
                   .arg(dup == got.end() ? QStringLiteral("none") : QString::fromUtf8(*dup));
        return false;
    }
};

QList<QByteArray> splitLines(const QByteArray &data)
{
    QList<QByteArray> lines = data.split('\n');
    if (!lines.isEmpty() && lines.constLast().isEmpty())
        lines.removeLast();
    return lines;
}

} // namespace

class TestFileTailer : public QObject
{
    Q_OBJECT
private slots:
    void partialLines_data()
    {
        QTest::addColumn<QList<QByteArray>>("writes");
        QTest::addColumn<QList<QByteArray>>("expected");
        QTest::addColumn<QList<qint64>>("offsets");
        QTest::newRow("whole-lines")
            << QList<QByteArray>{"a\nbb\n", "ccc\n"} << QList<QByteArray>{"a", "bb", "ccc"}
            << QList<qint64>{0, 2, 5};
        QTest::newRow("split-mid-line")
            << QList<QByteArray>{"{\"ts\":1", "23}\n{\"t", "s\":4}\n"}
            << QList<QByteArray>{"{\"ts\":123}", "{\"ts\":4}"} << QList<qint64>{0, 11};
        QTest::newRow("crlf-split-between-cr-and-lf")
            << QList<QByteArray>{"one\r", "\ntwo\r\n"} << QList<QByteArray>{"one", "two"}
            << QList<qint64>{0, 5};
        QTest::newRow("empty-lines-kept")
            << QList<QByteArray>{"\n\nx\n"} << QList<QByteArray>{"", "", "x"}
            << QList<qint64>{0, 1, 2};
        QTest::newRow("unfinished-tail-held")
            << QList<QByteArray>{"done\nnot yet"} << QList<QByteArray>{"done"} << QList<qint64>{0};
    }
    void partialLines()
    {
        QFETCH(QList<QByteArray>, writes);
        QFETCH(QList<QByteArray>, expected);
        QFETCH(QList<qint64>, offsets);
        QTemporaryDir dir;
        const QString path = dir.filePath(u"app.ndjson"_qs);
        FileTailer tailer;
        Collector collector;
        collector.attach(tailer);
        tailer.addFile(path);
        tailer.start();
        for (const QByteArray &chunk : std::as_const(writes)) {
            appendTo(path, chunk);
            tailer.pollNow(); // each fragment seen on its own, as a slow writer would produce it
        }
        QTRY_COMPARE(collector.texts, expected);
        for (qsizetype i = 0; i < offsets.size(); ++i) {
            QCOMPARE(collector.lines.at(i).offset, offsets.at(i));
            QCOMPARE(collector.lines.at(i).line, i + 1);
        }
        // The held partial line is not part of the resume position.
        const QList<TailPosition> positions = tailer.positions();
        QCOMPARE(positions.size(), 1);
        const qint64 complete = QByteArray(writes.join()).lastIndexOf('\n') + 1;
        QCOMPARE(positions.constFirst().offset, complete);
        QCOMPARE(positions.constFirst().line, expected.size());
    }

    void fileCreatedAfterStart()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"later.ndjson"_qs);
        FileTailer tailer;
        Collector collector;
        collector.attach(tailer);
        tailer.addFile(path);
        tailer.start();
        QTest::qWait(150);
        QVERIFY(collector.texts.isEmpty());
        appendTo(path, numberedLines("late-", 0, 25));
        QTRY_COMPARE(collector.texts.size(), 25);
        QCOMPARE(collector.texts.constFirst(), QByteArray("late-0"));
    }

    // logrotate's default: rename the file, create a new one. Lines written to the old file
    // after our last read (the writer still has it open) and lines in the new file are all seen.
    void renameRotation_data()
    {
        QTest::addColumn<bool>("writerKeepsOldHandle");
        QTest::newRow("writer-reopens") << false;
        QTest::newRow("writer-writes-old-handle-after-rename") << true;
    }
    void renameRotation()
    {
        QFETCH(bool, writerKeepsOldHandle);
        QTemporaryDir dir;
        const QString path = dir.filePath(u"app.log"_qs);
        const QString rotated = dir.filePath(u"app.log.1"_qs);
        FileTailer tailer;
        tailer.setPollInterval(50);
        Collector collector;
        collector.attach(tailer);
        QSignalSpy removed(&tailer, &FileTailer::fileRemoved);
        QSignalSpy rotatedSpy(&tailer, &FileTailer::fileRotated);
        tailer.addFile(path);
        appendTo(path, numberedLines("first-", 0, 100));
        tailer.start();
        QTRY_COMPARE(collector.texts.size(), 100);

        QFile oldHandle(path);
        QVERIFY(oldHandle.open(QIODevice::WriteOnly | QIODevice::Append));
        oldHandle.write(numberedLines("unread-", 0, 40)); // not yet polled when rotated
        oldHandle.flush();
        QVERIFY(QFile::rename(path, rotated));
        if (writerKeepsOldHandle) {
            oldHandle.write(numberedLines("late-old-", 0, 7));
            oldHandle.flush();
        }
        appendTo(path, numberedLines("second-", 0, 60));
        if (writerKeepsOldHandle) {
            oldHandle.write("late-old-partial"); // no newline: flushed when the old file is let go
            oldHandle.flush();
        }
        oldHandle.close();

        QList<QByteArray> expected = splitLines(numberedLines("first-", 0, 100)) +
                                     splitLines(numberedLines("unread-", 0, 40)) +
                                     splitLines(numberedLines("second-", 0, 60));
        if (writerKeepsOldHandle) {
            expected += splitLines(numberedLines("late-old-", 0, 7));
            expected += QByteArray("late-old-partial");
            tailer.setOrphanGraceMs(300);
        }
        QString why;
        QTRY_VERIFY2_WITH_TIMEOUT(collector.exactly(expected, &why), qPrintable(why), 5000);
        // Renamed, not removed: the new name is known, and the old file's last lines carry it.
        QCOMPARE(removed.size(), 0);
        QCOMPARE(rotatedSpy.size(), 1);
        QCOMPARE(rotatedSpy.constFirst().at(1).toString(), rotated);
        QCOMPARE(collector.paths.at(collector.texts.indexOf("unread-0")), rotated);
        // The old file's lines come before the new file's first line.
        const qsizetype firstSecond = collector.texts.indexOf("second-0");
        QCOMPARE(collector.texts.indexOf(writerKeepsOldHandle ? "late-old-6" : "unread-39"),
                 firstSecond - 1);
        // The new file is numbered from its own line 1.
        QCOMPARE(collector.lines.at(firstSecond).line, 1);
        QCOMPARE(collector.lines.at(firstSecond).offset, 0);
        QTest::qWait(400);
        QVERIFY2(collector.exactly(expected, &why), qPrintable(why));
    }

    // copytruncate: the same inode is cut to zero and written again.
    void copyTruncate_data()
    {
        QTest::addColumn<bool>("regrowBeyondOldSize");
        QTest::newRow("regrow-small") << false;
        QTest::newRow("regrow-past-old-length-before-poll") << true;
    }
    void copyTruncate()
    {
        QFETCH(bool, regrowBeyondOldSize);
        QTemporaryDir dir;
        const QString path = dir.filePath(u"app.log"_qs);
        FileTailer tailer;
        tailer.setPollInterval(1000000); // polls only when told: the truncation happens unseen
        Collector collector;
        collector.attach(tailer);
        QSignalSpy truncated(&tailer, &FileTailer::fileTruncated);
        tailer.addFile(path);
        appendTo(path, numberedLines("before-", 0, 100));
        tailer.start();
        QCOMPARE(collector.texts.size(), 100);

        QVERIFY(QFile::copy(path, dir.filePath(u"app.log.1"_qs)));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadWrite));
        QVERIFY(file.resize(0));
        file.close();
        const int after = regrowBeyondOldSize ? 300 : 20;
        appendTo(path, numberedLines("after-", 0, after));
        tailer.pollNow();

        QString why;
        const QList<QByteArray> expected = splitLines(numberedLines("before-", 0, 100)) +
                                           splitLines(numberedLines("after-", 0, after));
        QVERIFY2(collector.exactly(expected, &why), qPrintable(why));
        QCOMPARE(truncated.size(), 1);
        QCOMPARE(collector.lines.at(100).line, 1);
        QCOMPARE(collector.lines.at(100).offset, 0);
    }

    void deleteAndRecreate()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"app.log"_qs);
        FileTailer tailer;
        tailer.setPollInterval(40);
        tailer.setOrphanGraceMs(100);
        Collector collector;
        collector.attach(tailer);
        tailer.addFile(path);
        appendTo(path, numberedLines("gen1-", 0, 30));
        tailer.start();
        QTRY_COMPARE(collector.texts.size(), 30);
        // Written and deleted before any poll, while the tailer holds the file open.
        appendTo(path, numberedLines("gen1-", 30, 5));
        QVERIFY(QFile::remove(path));
        tailer.pollNow();
        QTest::qWait(250); // gone for a while; the old file is let go
        QCOMPARE(tailer.positions().size(), 0);
        appendTo(path, numberedLines("gen2-", 0, 12));
        const QList<QByteArray> expected =
            splitLines(numberedLines("gen1-", 0, 35)) + splitLines(numberedLines("gen2-", 0, 12));
        QString why;
        QTRY_VERIFY2(collector.exactly(expected, &why), qPrintable(why));
        QCOMPARE(collector.lines.constLast().line, 12);
        QTest::qWait(200);
        QVERIFY2(collector.exactly(expected, &why), qPrintable(why));
    }

    void directoryWatch()
    {
        QTemporaryDir dir;
        FileTailer tailer;
        tailer.setPollInterval(40);
        Collector collector;
        collector.attach(tailer);
        appendTo(dir.filePath(u"a.ndjson"_qs), numberedLines("a-", 0, 10));
        appendTo(dir.filePath(u"ignored.txt"_qs), numberedLines("txt-", 0, 10));
        tailer.addDirectory(dir.path(), {u"*.ndjson"_qs});
        tailer.start();
        QTRY_COMPARE(collector.texts.size(), 10);

        appendTo(dir.filePath(u"b.ndjson"_qs), numberedLines("b-", 0, 20));
        appendTo(dir.filePath(u"a.ndjson"_qs), numberedLines("a-", 10, 5));
        QTRY_COMPARE(collector.texts.size(), 35);
        // Renamed inside the directory to another matching name: the same file, not a new one.
        QVERIFY(QFile::rename(dir.filePath(u"a.ndjson"_qs), dir.filePath(u"a-old.ndjson"_qs)));
        appendTo(dir.filePath(u"a-old.ndjson"_qs), numberedLines("a-", 15, 3));
        appendTo(dir.filePath(u"a.ndjson"_qs), numberedLines("a2-", 0, 4));
        appendTo(dir.filePath(u"ignored.txt"_qs), numberedLines("txt-", 10, 10));
        QDir().mkpath(dir.filePath(u"sub.ndjson"_qs)); // a directory matching the glob is skipped

        const QList<QByteArray> expected = splitLines(numberedLines("a-", 0, 18)) +
                                           splitLines(numberedLines("b-", 0, 20)) +
                                           splitLines(numberedLines("a2-", 0, 4));
        QString why;
        QTRY_VERIFY2(collector.exactly(expected, &why), qPrintable(why));
        QTest::qWait(200);
        QVERIFY2(collector.exactly(expected, &why), qPrintable(why));
        QVERIFY(collector.paths.contains(dir.filePath(u"a-old.ndjson"_qs)));
        QCOMPARE(tailer.positions().size(), 3);
    }

    void resumeFromStoredPositions_data()
    {
        QTest::addColumn<bool>("keepIdentity");
        QTest::newRow("by-inode") << true;
        QTest::newRow("by-path-only") << false;
    }
    void resumeFromStoredPositions()
    {
        QFETCH(bool, keepIdentity);
        QTemporaryDir dir;
        const QString path = dir.filePath(u"app.log"_qs);
        appendTo(path, numberedLines("one-", 0, 50));
        appendTo(path, "half a li");
        QList<TailPosition> stored;
        {
            FileTailer tailer;
            Collector collector;
            collector.attach(tailer);
            tailer.addFile(path);
            tailer.start();
            QCOMPARE(collector.texts.size(), 50);
            tailer.stop();
            stored = tailer.positions();
        }
        QCOMPARE(stored.size(), 1);
        QCOMPARE(stored.constFirst().line, 50);
        if (!keepIdentity) {
            stored[0].device = 0;
            stored[0].inode = 0;
        }
        appendTo(path, "ne\n" + numberedLines("two-", 0, 5));
        FileTailer tailer;
        Collector collector;
        collector.attach(tailer);
        tailer.setStartPositions(stored);
        tailer.addFile(path);
        tailer.start();
        QList<QByteArray> expected{"half a line"};
        expected += splitLines(numberedLines("two-", 0, 5));
        QCOMPARE(collector.texts, expected);
        QCOMPARE(collector.lines.constFirst().line, 51);
    }

    // Issue 29.5: a file followed by name (not a folder), rotated while the tailer is stopped,
    // by a rename (logrotate's default) or a copytruncate: its lines written after the stored
    // position are read from the rotated file, before the new file's, none twice.
    void singleFileRotatedWhileStopped_data()
    {
        QTest::addColumn<QString>("rotation");
        QTest::addColumn<int>("unread");
        QTest::newRow("rename") << u"rename"_qs << 500;
        QTest::newRow("copytruncate") << u"copytruncate"_qs << 234;
    }
    void singleFileRotatedWhileStopped()
    {
        QFETCH(QString, rotation);
        QFETCH(int, unread);
        QTemporaryDir dir;
        const QString path = dir.filePath(u"app.log"_qs);
        const QString rotated = dir.filePath(u"app.log.1"_qs);
        appendTo(path, numberedLines("read-", 0, 1000));
        QList<TailPosition> stored;
        {
            FileTailer tailer;
            Collector collector;
            collector.attach(tailer);
            tailer.addFile(path);
            tailer.start();
            QCOMPARE(collector.texts.size(), 1000);
            tailer.stop();
            stored = tailer.positions();
        }
        // Stopped: lines keep coming, then the rotation, then the new file's first lines.
        appendTo(path, numberedLines("unread-", 0, unread));
        if (rotation == u"rename") {
            QVERIFY(QFile::rename(path, rotated));
        } else {
            QVERIFY(QFile::copy(path, rotated));
            QFile file(path);
            QVERIFY(file.open(QIODevice::ReadWrite));
            QVERIFY(file.resize(0));
        }
        appendTo(path, numberedLines("new-", 0, 300));

        FileTailer tailer;
        tailer.setOrphanGraceMs(50);
        Collector collector;
        collector.attach(tailer);
        QSignalSpy unrecoverable(&tailer, &FileTailer::linesUnrecoverable);
        tailer.setStartPositions(stored);
        tailer.addFile(path);
        tailer.start();
        const QList<QByteArray> expected = splitLines(numberedLines("unread-", 0, unread)) +
                                           splitLines(numberedLines("new-", 0, 300));
        QString why;
        QVERIFY2(collector.exactly(expected, &why), qPrintable(why));
        // The rotated file's lines come first, numbered on from where the file stood.
        QCOMPARE(collector.texts.constFirst(), QByteArray("unread-0"));
        QCOMPARE(collector.lines.constFirst().line, 1001);
        QCOMPARE(collector.paths.constFirst(), rotated);
        QCOMPARE(collector.texts.at(unread), QByteArray("new-0"));
        QCOMPARE(unrecoverable.size(), 0);
        // Drained, the rotated file is let go; nothing of it comes again.
        QTest::qWait(300);
        tailer.pollNow();
        QVERIFY2(collector.exactly(expected, &why), qPrintable(why));
    }

    // Issue 29.5: copytruncate while following a single file: the lines written between the
    // last poll and the truncation are read from the copy, before the file's new ones.
    void singleFileCopyTruncateWhileRunning()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"app.log"_qs);
        FileTailer tailer;
        tailer.setPollInterval(1000000); // polls only when told
        tailer.setOrphanGraceMs(50);
        Collector collector;
        collector.attach(tailer);
        QSignalSpy unrecoverable(&tailer, &FileTailer::linesUnrecoverable);
        tailer.addFile(path);
        appendTo(path, numberedLines("before-", 0, 100));
        tailer.start();
        QCOMPARE(collector.texts.size(), 100);
        appendTo(path, numberedLines("unpolled-", 0, 234));
        QVERIFY(QFile::copy(path, dir.filePath(u"app.log.1"_qs)));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadWrite));
        QVERIFY(file.resize(0));
        file.close();
        appendTo(path, numberedLines("after-", 0, 20));
        tailer.pollNow();
        const QList<QByteArray> expected = splitLines(numberedLines("before-", 0, 100)) +
                                           splitLines(numberedLines("unpolled-", 0, 234)) +
                                           splitLines(numberedLines("after-", 0, 20));
        QString why;
        QVERIFY2(collector.exactly(expected, &why), qPrintable(why));
        QCOMPARE(collector.texts.at(100), QByteArray("unpolled-0"));
        QCOMPARE(collector.texts.at(334), QByteArray("after-0"));
        QCOMPARE(unrecoverable.size(), 0);
        QTest::qWait(200);
        tailer.pollNow();
        QVERIFY2(collector.exactly(expected, &why), qPrintable(why));
    }

    // What no rotated file holds any more is reported, with how far the file was read.
    void unrecoverableLinesAreReported()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"app.log"_qs);
        appendTo(path, numberedLines("read-", 0, 40));
        QList<TailPosition> stored;
        {
            FileTailer tailer;
            tailer.addFile(path);
            tailer.start();
            tailer.stop();
            stored = tailer.positions();
        }
        // Rotated and compressed while stopped (logrotate without delaycompress).
        appendTo(path, numberedLines("gone-", 0, 10));
        QVERIFY(QFile::rename(path, dir.filePath(u"app.log.1.gz"_qs)));
        appendTo(path, numberedLines("new-", 0, 3));
        FileTailer tailer;
        Collector collector;
        collector.attach(tailer);
        QSignalSpy unrecoverable(&tailer, &FileTailer::linesUnrecoverable);
        tailer.setStartPositions(stored);
        tailer.addFile(path);
        tailer.start();
        QCOMPARE(collector.texts, splitLines(numberedLines("new-", 0, 3)));
        QCOMPARE(unrecoverable.size(), 1);
        QCOMPARE(unrecoverable.constFirst().at(0).toString(), path);
        QCOMPARE(unrecoverable.constFirst().at(1).toLongLong(), 40);
        // Truncated while running with no copy anywhere: reported too.
        tailer.setPollInterval(1000000);
        appendTo(path, numberedLines("more-", 0, 2));
        tailer.pollNow();
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadWrite));
        QVERIFY(file.resize(0));
        file.close();
        appendTo(path, "x\n");
        tailer.pollNow();
        QCOMPARE(unrecoverable.size(), 2);
        QCOMPARE(unrecoverable.at(1).at(1).toLongLong(), 5);
    }

    void storedPositionOfAnotherFileIsIgnored()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"app.log"_qs);
        appendTo(path, numberedLines("x-", 0, 3));
        // A position for a longer file of the same name that has since been replaced.
        FileTailer tailer;
        Collector collector;
        collector.attach(tailer);
        tailer.setStartPositions({TailPosition{path, 5000, 90, 0, 0}});
        tailer.addFile(path);
        tailer.start();
        QCOMPARE(collector.texts.size(), 3);
    }

    // Files changed while the tailer was stopped, met again through stored positions: the
    // content decides, not the name or the inode alone.
    void restartRecognisesContent_data()
    {
        QTest::addColumn<QString>("change");
        QTest::addColumn<bool>("expectTruncated");
        QTest::newRow("renamed") << u"rename"_qs << false;
        QTest::newRow("copied, the copy appended to") << u"copy"_qs << false;
        QTest::newRow("truncated and rewritten, longer") << u"rewrite"_qs << true;
        QTest::newRow("cut below its position, same head (copytruncate)") << u"cut"_qs << true;
        QTest::newRow("followed under two names, a stale position of the old one")
            << u"two names"_qs << false;
    }
    void restartRecognisesContent()
    {
        QFETCH(QString, change);
        QFETCH(bool, expectTruncated);
        QTemporaryDir dir;
        const QString path = dir.filePath(u"app.log"_qs);
        const QString other = dir.filePath(u"other.log"_qs);
        appendTo(path, numberedLines("one-", 0, 1000)); // more than the head (kTailHeadBytes)
        QList<TailPosition> stored;
        {
            FileTailer tailer;
            Collector collector;
            collector.attach(tailer);
            tailer.addDirectory(dir.path(), {u"*.log"_qs});
            tailer.start();
            QCOMPARE(collector.texts.size(), 1000);
            tailer.stop();
            stored = tailer.positions();
        }
        QCOMPARE(stored.size(), 1);
        QCOMPARE(stored.constFirst().headLength, kTailHeadBytes);
        QVERIFY(!stored.constFirst().headHash.isEmpty());

        QList<QByteArray> expected;
        if (change == u"rename" || change == u"two names") {
            QVERIFY(QFile::rename(path, other));
            appendTo(other, numberedLines("two-", 0, 5));
            expected = splitLines(numberedLines("two-", 0, 5));
            if (change == u"two names") {
                // What a workspace holds after a run followed it as other.log too: the old
                // name's position is behind.
                TailPosition later = stored.constFirst();
                later.path = other;
                later.offset += numberedLines("two-", 0, 5).size();
                later.line += 5;
                stored.append(later);
                appendTo(other, numberedLines("three-", 0, 3));
                expected = splitLines(numberedLines("three-", 0, 3));
            }
        } else if (change == u"copy") {
            QVERIFY(QFile::copy(path, other));
            appendTo(other, numberedLines("copy-", 0, 4));
            expected = splitLines(numberedLines("copy-", 0, 4));
        } else if (change == u"rewrite") {
            QFile file(path);
            QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
            file.write(numberedLines("new-content-", 0, 1200));
            file.close();
            expected = splitLines(numberedLines("new-content-", 0, 1200));
        } else if (change == u"cut") {
            QFile file(path);
            QVERIFY(file.open(QIODevice::ReadWrite));
            QVERIFY(file.resize(numberedLines("one-", 0, 800).size()));
            file.close();
            appendTo(path, numberedLines("after-", 0, 7));
            expected = splitLines(numberedLines("one-", 0, 800)) +
                       splitLines(numberedLines("after-", 0, 7));
        }

        FileTailer tailer;
        Collector collector;
        collector.attach(tailer);
        QSignalSpy truncated(&tailer, &FileTailer::fileTruncated);
        tailer.setStartPositions(stored);
        tailer.addDirectory(dir.path(), {u"*.log"_qs});
        tailer.start();
        QString why;
        QVERIFY2(collector.exactly(expected, &why), qPrintable(why));
        QCOMPARE(truncated.size(), expectTruncated ? 1 : 0);
    }

    // A followed file copied into the watched directory while running, the copy seen half
    // written: nothing of it is read again; what is appended to the copy is.
    void copyWhileRunningIsNotReadTwice()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"app.log"_qs);
        const QString copy = dir.filePath(u"copy.log"_qs);
        FileTailer tailer;
        tailer.setPollInterval(1000000); // polls only when told
        tailer.setFileSystemWatcherEnabled(false);
        Collector collector;
        collector.attach(tailer);
        appendTo(path, numberedLines("one-", 0, 1000));
        tailer.addDirectory(dir.path(), {u"*.log"_qs});
        tailer.start();
        QCOMPARE(collector.texts.size(), 1000);

        const QByteArray content = numberedLines("one-", 0, 1000);
        appendTo(copy, {}); // created empty, as cp does
        tailer.pollNow();
        appendTo(copy, content.left(100)); // inside the head
        tailer.pollNow();
        QVERIFY(content.size() > 5100 && 5100 > kTailHeadBytes);
        appendTo(copy, content.mid(100, 5000)); // past the head, short of the end
        tailer.pollNow();
        appendTo(copy, content.mid(5100));
        tailer.pollNow();
        QCOMPARE(collector.texts.size(), 1000);
        appendTo(copy, numberedLines("copy-", 0, 3));
        tailer.pollNow();
        QString why;
        const QList<QByteArray> expected =
            splitLines(content) + splitLines(numberedLines("copy-", 0, 3));
        QVERIFY2(collector.exactly(expected, &why), qPrintable(why));
        QCOMPARE(collector.paths.constLast(), copy);
    }

    // A stored position names its file once: a file re-created later under that name (or on
    // the same inode number) is another file, read from its start.
    void storedPositionServesItsFileOnce()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"app.log"_qs);
        appendTo(path, numberedLines("old-", 0, 50));
        QList<TailPosition> stored;
        {
            FileTailer tailer;
            Collector collector;
            collector.attach(tailer);
            tailer.addFile(path);
            tailer.start();
            tailer.stop();
            stored = tailer.positions();
        }
        QCOMPARE(stored.size(), 1);
        stored[0] = TailPosition{path, stored[0].offset, stored[0].line, 0, 0}; // by name only
        FileTailer tailer;
        tailer.setPollInterval(1000000);
        tailer.setOrphanGraceMs(0);
        Collector collector;
        collector.attach(tailer);
        tailer.setStartPositions(stored);
        tailer.addFile(path);
        tailer.start();
        QVERIFY(collector.texts.isEmpty());
        QVERIFY(QFile::remove(path));
        tailer.pollNow();                             // gone: let go
        appendTo(path, numberedLines("new-", 0, 80)); // longer than the stored offset
        tailer.pollNow();
        QString why;
        QVERIFY2(collector.exactly(splitLines(numberedLines("new-", 0, 80)), &why),
                 qPrintable(why));
    }

    // The tailer on a worker thread, lines delivered through the queued signal while a writer
    // appends in bursts and rotates twice.
    void workerThreadUnderLoad()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(u"busy.log"_qs);
        QThread worker;
        auto *tailer = new FileTailer;
        tailer->setPollInterval(20);
        tailer->setOrphanGraceMs(200);
        tailer->addFile(path);
        tailer->moveToThread(&worker);
        connect(&worker, &QThread::finished, tailer, &QObject::deleteLater);
        QList<QByteArray> received;
        QSet<QThread *> deliveredOn;
        connect(tailer, &FileTailer::linesReady, this, [&](const TailBatch &batch) {
            deliveredOn.insert(QThread::currentThread());
            for (const TailLine &line : batch.lines)
                received.append(line.text);
        });
        worker.start();
        QMetaObject::invokeMethod(tailer, &FileTailer::start, Qt::QueuedConnection);

        QList<QByteArray> expected;
        int next = 0;
        for (int round = 0; round < 30; ++round) {
            QByteArray chunk = numberedLines("load-", next, 200);
            expected += splitLines(chunk);
            next += 200;
            // Split the burst in the middle of a line.
            appendTo(path, chunk.left(chunk.size() / 2 + 3));
            appendTo(path, chunk.mid(chunk.size() / 2 + 3));
            if (round == 10 || round == 20)
                QVERIFY(QFile::rename(path, path + u'.' + QString::number(round)));
            QTest::qWait(5);
        }
        QTRY_COMPARE_WITH_TIMEOUT(received.size(), expected.size(), 10000);
        QCOMPARE(received, expected); // in order, too: rotations drain the old file first
        QCOMPARE(deliveredOn, QSet<QThread *>{QThread::currentThread()});
        QCOMPARE(tailer->linesDelivered(), qint64(expected.size()));
        worker.quit();
        worker.wait();
    }
};

QTEST_GUILESS_MAIN(TestFileTailer)
#include "tst_filetailer.moc"
