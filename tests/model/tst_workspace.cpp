// The SQLite workspace: schema and migrations, every field round-tripped with its provenance,
// secrets never written, the import ledger (re-import adds nothing, appended lines only, a
// replaced file is a new source, resume after cancel and after a real SIGKILL), malformed
// records with file:line, and the reader's filters, keyset pages and time-ordered replay.

#include "importertestutil.h"
#include "ingest/ndjsonreader.h"
#include "ingest/redaction.h"
#include "sqltestutil.h"
#include "store/importjob.h"
#include "store/storesql.h"
#include "store/workspace.h"
#include "store/workspacereader.h"
#include "store/workspacewriter.h"
#include "testlinereader.h"

#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRandomGenerator>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QStringEncoder>
#include <QTemporaryDir>
#include <QTest>
#include <QVariant>

#include <array>
#include <atomic>

using namespace ts;
using namespace Qt::StringLiterals;

using HeaderPairs = QList<QPair<QString, QString>>;

Q_DECLARE_METATYPE(ts::RequestEvent)
Q_DECLARE_METATYPE(ts::EventFilter)
Q_DECLARE_METATYPE(ts::ImportResult::Status)

namespace {

qint64 duplicateLines(const QString &workspacePath)
{
    return testutil::sqlScalar(
               workspacePath,
               QStringLiteral("SELECT count(*) FROM (SELECT source_id, line FROM events "
                              "GROUP BY source_id, line HAVING count(*) > 1)"))
        .toLongLong();
}

qint64 eventRows(const QString &workspacePath)
{
    return testutil::sqlScalar(workspacePath, QStringLiteral("SELECT count(*) FROM events"))
        .toLongLong();
}

// Appends lines [from, from + count) of the test generator to path.
void appendLines(const QString &path, qint64 from, qint64 count)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Append));
    QByteArray chunk;
    for (qint64 i = from; i < from + count; ++i) {
        chunk += test::testLine(i);
        if (chunk.size() > (1 << 20)) {
            file.write(chunk);
            chunk.clear();
        }
    }
    file.write(chunk);
}

// One import in its own Workspace + WorkspaceWriter, as a separate run of the CLI would do.
ImportResult importOnce(const QString &workspacePath, const QString &file, LogReader &reader,
                        const ImportOptions &options = {})
{
    Workspace workspace;
    if (!workspace.open(workspacePath)) {
        ImportResult failed;
        failed.error = workspace.errorString();
        return failed;
    }
    WorkspaceWriter writer;
    if (!writer.start(workspacePath)) {
        ImportResult failed;
        failed.error = writer.errorString();
        return failed;
    }
    ImportResult result = importFile(workspace, writer, file, reader, options);
    if (!writer.finish() && result.error.isEmpty())
        result.error = writer.errorString();
    return result;
}

// Writes events directly through a writer under one source; returns the source id.
qint64 writeEvents(const QString &workspacePath, const QList<RequestEvent> &events)
{
    Workspace workspace;
    if (!workspace.open(workspacePath))
        return 0;
    const qint64 sourceId = workspace.addSource(QStringLiteral("/logs/direct.ndjson"),
                                                QStringLiteral("ndjson"), 0, 0, "direct");
    WorkspaceWriter writer;
    if (!writer.start(workspacePath))
        return 0;
    WriteBatch batch;
    batch.sourceId = sourceId;
    batch.events = events;
    batch.checkpoint = LedgerCheckpoint{1000, events.size(), true};
    if (!writer.submit(std::move(batch)) || !writer.finish())
        return 0;
    return sourceId;
}

// Turns a workspace of this version into what version 2 wrote: version 3 only added columns,
// version 4 a table, version 5 and 6 a column each.
bool downgradeToVersion2(const QString &path)
{
    for (const char *sql :
         {"ALTER TABLE events DROP COLUMN refused", "ALTER TABLE events DROP COLUMN weight",
          "DROP TABLE poll_cursors",
          "ALTER TABLE sources DROP COLUMN head_hash", "ALTER TABLE sources DROP COLUMN seen_size",
          "ALTER TABLE import_ledger DROP COLUMN owner", "PRAGMA user_version = 2"}) {
        testutil::sqlScalar(path, QString::fromLatin1(sql));
    }
    return testutil::sqlScalar(path, QStringLiteral("PRAGMA user_version")).toInt() == 2 &&
           testutil::sqlScalar(path,
                               QStringLiteral("SELECT count(*) FROM pragma_table_info('sources')"
                                              " WHERE name = 'head_hash'"))
                   .toInt() == 0;
}

// Writes `corpus` into a fresh workspace at `path` the way `layout` says:
//   "direct"     one writer run;
//   "discarded"  interleaved with batches of another source, which is then discarded (its
//                rows leave gaps in the same summary blocks);
//   "version 1"  as a version 1 workspace (no block summaries, other indexes), which the
//                reader migrates when it opens it.
bool writeLayout(const QString &path, const QString &layout, const QList<RequestEvent> &corpus)
{
    if (layout == u"discarded") {
        Workspace workspace;
        if (!workspace.open(path))
            return false;
        const qint64 noise = workspace.addSource(QStringLiteral("/logs/noise.ndjson"),
                                                 QStringLiteral("ndjson"), 0, 0, "noise");
        const qint64 kept = workspace.addSource(QStringLiteral("/logs/kept.ndjson"),
                                                QStringLiteral("ndjson"), 0, 0, "kept");
        WorkspaceWriter writer;
        if (!writer.start(path))
            return false;
        for (qsizetype start = 0; start < corpus.size(); start += 1000) {
            WriteBatch noiseBatch;
            noiseBatch.sourceId = noise;
            for (int i = 0; i < 700; ++i) {
                RequestEvent event = corpus.at(start);
                event.identity = QStringLiteral("noise-%1").arg(i % 50);
                event.line = start + i + 1;
                noiseBatch.events.append(event);
            }
            WriteBatch keptBatch;
            keptBatch.sourceId = kept;
            keptBatch.events = corpus.mid(start, 1000);
            if (!writer.submit(std::move(noiseBatch)) || !writer.submit(std::move(keptBatch)))
                return false;
        }
        return writer.finish() && workspace.discardSourceData(noise);
    }
    if (writeEvents(path, corpus) == 0)
        return false;
    if (layout == u"version 1") {
        if (!downgradeToVersion2(path))
            return false;
        // What version 1 had instead of the summaries.
        for (const char *sql :
             {"DROP TABLE event_blocks", "DROP TABLE event_block_overflow",
              "DROP INDEX idx_events_failed", "DROP INDEX idx_events_error",
              "CREATE INDEX idx_events_identity ON events(identity)",
              "CREATE INDEX idx_events_status ON events(status)",
              "CREATE INDEX idx_events_error ON events(error_code) WHERE error_code IS NOT NULL",
              "CREATE INDEX idx_events_lane ON events(lane)", "PRAGMA user_version = 1"}) {
            testutil::sqlScalar(path, QString::fromLatin1(sql));
        }
        // Left at version 1: WorkspaceReader::open() migrates it.
        if (testutil::sqlScalar(path, QStringLiteral("PRAGMA user_version")).toInt() != 1)
            return false;
    }
    return true;
}

// Rows of event_blocks that differ from a summary computed from the events now (both ways),
// leaving out the blocks a column overflowed in.
qint64 summaryMismatches(const QString &path)
{
    const QString fromEvents = QStringLiteral(
        "SELECT 0 AS field, identity AS value, (id - 1) >> 13 AS block, count(*) AS events"
        " FROM events WHERE identity IS NOT NULL GROUP BY 2, 3"
        " UNION ALL SELECT 1, coalesce(status, 0), (id - 1) >> 13, count(*) FROM events"
        " GROUP BY 2, 3"
        " UNION ALL SELECT 2, error_code, (id - 1) >> 13, count(*) FROM events"
        " WHERE error_code IS NOT NULL GROUP BY 2, 3"
        " UNION ALL SELECT 3, lane, (id - 1) >> 13, count(*) FROM events"
        " WHERE lane IS NOT NULL GROUP BY 2, 3"
        " UNION ALL SELECT 4, source_id, (id - 1) >> 13, count(*) FROM events"
        " WHERE source_id IS NOT NULL GROUP BY 2, 3");
    const QString summarized = QStringLiteral("NOT EXISTS (SELECT 1 FROM event_block_overflow o"
                                              " WHERE o.field = x.field AND o.block = x.block)");
    const QString expected = u"SELECT * FROM (" + fromEvents + u") x WHERE " + summarized;
    const QString stored = u"SELECT * FROM event_blocks x WHERE " + summarized;
    const QVariant mismatches = testutil::sqlScalar(
        path, u"SELECT (SELECT count(*) FROM (" + expected + u" EXCEPT " + stored +
                  u")) + (SELECT count(*) FROM (" + stored + u" EXCEPT " + expected + u"))");
    return mismatches.isValid() ? mismatches.toLongLong() : -1;
}

RequestEvent fullRequest()
{
    RequestEvent event;
    event.type = EventType::Request;
    event.tsMs = 1771454650100;
    event.identity = QStringLiteral("alice@contoso.com");
    event.app = QStringLiteral("note-bridge");
    event.tenant = QStringLiteral("contoso");
    event.service = QStringLiteral("graph");
    event.category = QStringLiteral("onenote");
    event.method = QStringLiteral("GET");
    event.url = QStringLiteral("https://graph.microsoft.com/v1.0/me/onenote/pages/1-abc/content");
    event.status = 429;
    event.errorCode = QStringLiteral("TooManyRequests");
    event.retryAfter = QStringLiteral("Wed, 18 Feb 2026 22:45:04 GMT");
    event.headers.set(QStringLiteral("x-ms-throttle-scope"), QStringLiteral("Application"));
    event.headers.set(QStringLiteral("retry-after"), QStringLiteral("55"));
    event.headers.set(QStringLiteral("x-ms-throttle-information"),
                      QStringLiteral("a \"quoted\"\\ value"));
    event.body = QStringLiteral("{\"error\":{\"code\":\"TooManyRequests\"}}");
    event.durationMs = 84.5;
    event.requestId = QStringLiteral("req-42");
    event.batchId = QStringLiteral("batch-7");
    event.batchIndex = 3;
    event.batchEnvelope = false;
    event.attempt = 2;
    event.operationId = QStringLiteral("page-1-abc");
    event.lane = QStringLiteral("background");
    event.credits = 10;
    event.serviceBusNamespace = QStringLiteral("sb-prod");
    event.entity = QStringLiteral("orders");
    event.extraJson = QByteArrayLiteral("{\"region\":\"westeurope\",\"n\":[1,2]}");
    event.line = 17;
    event.offset = 4096;
    return event;
}

// The events behind the filter tests: a deterministic mix of identities, statuses, lanes.
// `count` above 8192 spreads them over several summary blocks; `distinctIdentities` adds an
// identity of its own to most events, more per block than a summary lists (overflow).
QList<RequestEvent> filterCorpus(int count = 300, bool distinctIdentities = false)
{
    static const QString identities[] = {QStringLiteral("sp-migrator"),
                                         QStringLiteral("alice@contoso.com"),
                                         QStringLiteral("orders-app")};
    QList<RequestEvent> events;
    for (int i = 0; i < count; ++i) {
        RequestEvent event;
        // Not in time order on purpose: replay must sort.
        event.tsMs = 1771454650000 + qint64((i * 37) % 300) * 1000;
        event.identity =
            distinctIdentities && i % 3 != 1 ? QStringLiteral("user%1").arg(i) : identities[i % 3];
        event.status = i % 10 == 0 ? 429 : (i % 7 == 0 ? 0 : 200);
        event.errorCode = event.status == 429 ? QStringLiteral("RequestBlocked") : QString();
        event.lane = i % 4 == 0 ? QStringLiteral("background") : QStringLiteral("foreground");
        event.url =
            QStringLiteral("https://api.fabric.microsoft.com/v1/workspaces/W%1/items").arg(i % 25);
        event.line = i + 1;
        event.offset = i * 100;
        events.append(event);
    }
    return events;
}

bool matches(const RequestEvent &event, const EventFilter &filter)
{
    if (!filter.identity.isEmpty() && event.identity != filter.identity)
        return false;
    if (!filter.identityPart.isEmpty() &&
        !event.identity.contains(filter.identityPart, Qt::CaseInsensitive))
        return false;
    if (filter.status && event.status != *filter.status)
        return false;
    if (!filter.errorCode.isEmpty() && event.errorCode != filter.errorCode)
        return false;
    if (!filter.lane.isEmpty() && event.lane != filter.lane)
        return false;
    if (filter.fromMs && event.tsMs < *filter.fromMs)
        return false;
    if (filter.toMs && event.tsMs >= *filter.toMs)
        return false;
    if (!filter.text.isEmpty() && !event.url.contains(filter.text, Qt::CaseInsensitive) &&
        !event.errorCode.contains(filter.text, Qt::CaseInsensitive) &&
        !event.identity.contains(filter.text, Qt::CaseInsensitive)) {
        return false;
    }
    return true;
}

// The filters every corpus of readerFilters() is queried with.
QList<std::pair<QString, EventFilter>> readerFilterCases()
{
    QList<std::pair<QString, EventFilter>> cases;
    auto addRow = [&cases](const char *name) -> EventFilter & {
        cases.append({QString::fromLatin1(name), EventFilter()});
        return cases.last().second;
    };
    EventFilter all;
    addRow("no filter") = all;
    EventFilter identity;
    identity.identity = QStringLiteral("alice@contoso.com");
    addRow("identity") = identity;
    EventFilter throttled;
    throttled.status = 429;
    addRow("status 429") = throttled;
    EventFilter noResponse;
    noResponse.status = 0;
    addRow("status 0 (no response)") = noResponse;
    EventFilter errorCode;
    errorCode.errorCode = QStringLiteral("RequestBlocked");
    addRow("errorCode") = errorCode;
    EventFilter lane;
    lane.lane = QStringLiteral("background");
    addRow("lane") = lane;
    EventFilter text;
    text.text = QStringLiteral("/w1");
    addRow("free text in url, any case") = text;
    EventFilter textIdentity;
    textIdentity.text = QStringLiteral("CONTOSO");
    addRow("free text in identity") = textIdentity;
    EventFilter textLike;
    textLike.text = QStringLiteral("W1_");
    addRow("free text with a LIKE wildcard character") = textLike;
    EventFilter range;
    range.fromMs = 1771454650000 + 100 * 1000;
    range.toMs = 1771454650000 + 160 * 1000;
    addRow("time range") = range;
    EventFilter combined;
    combined.identity = QStringLiteral("sp-migrator");
    combined.status = 429;
    combined.lane = QStringLiteral("background");
    combined.fromMs = 1771454650000 + 50 * 1000;
    addRow("combined") = combined;
    EventFilter identityAndText;
    identityAndText.identity = QStringLiteral("alice@contoso.com");
    identityAndText.text = QStringLiteral("w2");
    addRow("identity and free text") = identityAndText;
    EventFilter absent;
    absent.identity = QStringLiteral("nobody");
    addRow("identity never seen") = absent;
    // Issue 30.10: a part of the identity, any case; LIKE's wildcards are plain characters.
    EventFilter identityPart;
    identityPart.identityPart = QStringLiteral("ALICE");
    addRow("part of the identity, any case") = identityPart;
    EventFilter identityPartWithStatus;
    identityPartWithStatus.identityPart = QStringLiteral("contoso.com");
    identityPartWithStatus.status = 429;
    addRow("part of the identity and status") = identityPartWithStatus;
    EventFilter identityPartWildcard;
    identityPartWildcard.identityPart = QStringLiteral("user_");
    addRow("part of the identity with a LIKE wildcard character") = identityPartWildcard;
    return cases;
}

} // namespace

class TestWorkspace : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    int m_serial = 0;
    QString freshPath(const QString &stem)
    {
        return m_dir.filePath(stem + QString::number(++m_serial));
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void schemaVersionAndReopen()
    {
        const QString path = freshPath(QStringLiteral("schema")) + u".tsws";
        {
            Workspace workspace;
            QVERIFY2(workspace.open(path), qPrintable(workspace.errorString()));
            QCOMPARE(workspace.schemaVersion(), kWorkspaceSchemaVersion);
            QVERIFY(
                workspace.setSetting(QStringLiteral("csv.mapping"), QStringLiteral("{\"a\":1}")));
        }
        QCOMPARE(testutil::sqlScalar(path, QStringLiteral("PRAGMA journal_mode")).toString(),
                 QStringLiteral("wal"));
        for (const char *table : {"sources", "events", "malformed", "import_ledger", "settings"}) {
            QCOMPARE(
                testutil::sqlScalar(path, QStringLiteral("SELECT count(*) FROM sqlite_master WHERE "
                                                         "type = 'table' AND name = '%1'")
                                              .arg(QLatin1StringView(table)))
                    .toInt(),
                1);
        }
        Workspace reopened;
        QVERIFY2(reopened.open(path), qPrintable(reopened.errorString()));
        QCOMPARE(reopened.schemaVersion(), kWorkspaceSchemaVersion);
        QCOMPARE(reopened.setting(QStringLiteral("csv.mapping")).value_or(QString()),
                 QStringLiteral("{\"a\":1}"));
        WorkspaceReader reader;
        QVERIFY2(reader.open(path), qPrintable(reader.errorString()));
        QCOMPARE(reader.setting(QStringLiteral("csv.mapping")).value_or(QString()),
                 QStringLiteral("{\"a\":1}"));
        QVERIFY(reader.setSetting(QStringLiteral("tail.offset"), QStringLiteral("1234")));
        QCOMPARE(reopened.setting(QStringLiteral("tail.offset")).value_or(QString()),
                 QStringLiteral("1234"));
        QVERIFY(!reader.setting(QStringLiteral("absent")).has_value());
    }

    // A new workspace gets 16 KiB pages (fewer page splits and WAL frames for the writer); one
    // that exists keeps its page size and is written as before.
    void pageSizeOfNewAndExistingWorkspaces()
    {
        const QString fresh = freshPath(QStringLiteral("pages-new"));
        QVERIFY(writeEvents(fresh, {fullRequest()}) > 0);
        QCOMPARE(testutil::sqlScalar(fresh, QStringLiteral("PRAGMA page_size")).toInt(),
                 store::kNewWorkspacePageSize);

        // A 4 KiB file that is still empty of tables when the workspace is created in it.
        const QString older = freshPath(QStringLiteral("pages-old"));
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), u"pages-old"_s);
            db.setDatabaseName(older);
            QVERIFY(db.open());
            QSqlQuery query(db);
            QVERIFY(query.exec(QStringLiteral("PRAGMA page_size=4096")));
            QVERIFY(query.exec(QStringLiteral("CREATE TABLE scratch(a)")));
            QVERIFY(query.exec(QStringLiteral("DROP TABLE scratch")));
            query.finish();
            db.close();
        }
        QSqlDatabase::removeDatabase(u"pages-old"_s);
        QList<RequestEvent> events;
        for (int i = 0; i < 300; ++i) {
            RequestEvent event = fullRequest();
            event.tsMs += i;
            events.append(event);
        }
        QVERIFY(writeEvents(older, events) > 0);
        QVERIFY(writeEvents(older, events) > 0); // reopened: still its own page size
        QCOMPARE(testutil::sqlScalar(older, QStringLiteral("PRAGMA page_size")).toInt(), 4096);
        WorkspaceReader reader;
        QVERIFY2(reader.open(older), qPrintable(reader.errorString()));
        QCOMPARE(reader.countEvents(), 600);
    }

    void openRefuses_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("expectedError");
        QTest::newRow("newer schema") << QStringLiteral("newer") << QStringLiteral("newer");
        QTest::newRow("foreign SQLite file")
            << QStringLiteral("foreign") << QStringLiteral("not a Throttlescope workspace");
        QTest::newRow("text file") << QStringLiteral("text") << QString();
        QTest::newRow("missing file (reader only)") << QStringLiteral("missing") << QString();
    }

    void openRefuses()
    {
        QFETCH(QString, kind);
        QFETCH(QString, expectedError);
        const QString path = freshPath(QStringLiteral("refuse"));
        if (kind == u"newer") {
            {
                Workspace workspace;
                QVERIFY(workspace.open(path));
            }
            testutil::sqlScalar(path, QStringLiteral("PRAGMA user_version = 99"));
            QCOMPARE(testutil::sqlScalar(path, QStringLiteral("PRAGMA user_version")).toInt(), 99);
        } else if (kind == u"foreign") {
            testutil::sqlScalar(path, QStringLiteral("CREATE TABLE notes(id INTEGER)"));
        } else if (kind == u"text") {
            QFile file(path);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(QByteArray(4096, 'x'));
        }
        if (kind != u"missing") {
            Workspace workspace;
            QVERIFY(!workspace.open(path));
            QVERIFY(workspace.errorString().contains(expectedError));
        }
        WorkspaceReader reader;
        QVERIFY(!reader.open(path));
        QVERIFY(!reader.errorString().isEmpty());
        if (kind == u"missing")
            QVERIFY(!QFileInfo::exists(path)); // a reader never creates a workspace
    }

    void roundTripEveryField_data()
    {
        QTest::addColumn<RequestEvent>("event");
        QTest::newRow("request with every field") << fullRequest();
        RequestEvent minimal;
        minimal.tsMs = 1;
        QTest::newRow("defaults (unknowns stay unknown)") << minimal;
        RequestEvent envelope = fullRequest();
        envelope.batchEnvelope = true;
        envelope.batchIndex = -1;
        envelope.status = 0;
        envelope.durationMs = 0;
        envelope.credits = 0;
        envelope.attempt = 0;
        QTest::newRow("batch envelope, zeros that are not unknown") << envelope;
        RequestEvent breaker;
        breaker.type = EventType::Breaker;
        breaker.tsMs = 1771454652000;
        breaker.breakerScope = QStringLiteral("user:alice@contoso.com");
        breaker.breakerState = QStringLiteral("soft-open");
        breaker.line = 3;
        QTest::newRow("breaker") << breaker;
        RequestEvent annotation;
        annotation.type = EventType::Annotation;
        annotation.tsMs = 1771454653000;
        annotation.text = QStringLiteral("migration batch 3 started — ünïcödé ✓ \t tab");
        annotation.offset = 0;
        QTest::newRow("annotation, unicode") << annotation;
    }

    void roundTripEveryField()
    {
        QFETCH(RequestEvent, event);
        const QString path = freshPath(QStringLiteral("roundtrip"));
        const qint64 sourceId = writeEvents(path, {event});
        QVERIFY(sourceId > 0);
        WorkspaceReader reader;
        QVERIFY2(reader.open(path), qPrintable(reader.errorString()));
        QCOMPARE(reader.countEvents(), 1);
        const QList<StoredEvent> page = reader.fetchPage({}, 0, 10);
        QCOMPARE(page.size(), 1);
        QCOMPARE(page.first().sourceId, sourceId);
        QCOMPARE(page.first().event.source, QStringLiteral("/logs/direct.ndjson"));
        testutil::compareEvents(page.first().event, event);
        const auto byRow = reader.eventByRowId(page.first().rowId);
        QVERIFY(byRow.has_value());
        testutil::compareEvents(byRow->event, event);
        int replayed = 0;
        QVERIFY(reader.forEachEventInTimeOrder(10, [&](const QList<RequestEvent> &chunk) {
            for (const RequestEvent &stored : chunk) {
                testutil::compareEvents(stored, event);
                ++replayed;
            }
            return true;
        }));
        QCOMPARE(replayed, 1);
    }

    // The writer binds a row's columns only where they differ from what the statement holds
    // from earlier rows (bindings survive a reset), names in a multi-row insert only the
    // columns some of its rows have a value in, and caches the UTF-8 of shared strings. Rows
    // whose every column goes from NULL to a value to another value (and back), as shared
    // and as unshared strings, in runs and in tails of a batch, must read back exactly: a
    // stale binding or a dropped column shows here.
    void consecutiveRowsKeepTheirOwnValues_data()
    {
        QTest::addColumn<QString>("pattern");
        QTest::addColumn<int>("rows");
        for (const char *pattern :
             {"null-a-b", "a-null-b-b", "one field per row", "sparse random"}) {
            for (const int rows : {1, 3, 16, 17, 50, 100, 2000}) {
                if (QByteArray(pattern) == "sparse random" && rows < 50)
                    continue;
                QTest::addRow("%s, %d rows", pattern, rows) << QString::fromLatin1(pattern) << rows;
            }
        }
    }

    void consecutiveRowsKeepTheirOwnValues()
    {
        QFETCH(QString, pattern);
        QFETCH(int, rows);
        constexpr int kFields = 32; // every column but type and ts_ms
        // Two values per text field, each one QString shared by every row that carries it
        // (like the readers' interned strings, same characters at the same address).
        QStringList shared[3];
        for (int field = 0; field < kFields; ++field) {
            shared[0].append(QString());
            shared[1].append(QStringLiteral("a%1").arg(field));
            shared[2].append(QStringLiteral("b%1-ünï").arg(field));
        }
        QRandomGenerator random(17);
        auto valueOf = [&](int row, int field) {
            if (pattern == u"null-a-b")
                return (row + field) % 3;
            if (pattern == u"a-null-b-b")
                return std::array{1, 0, 2, 2}[size_t(row + field) % 4];
            if (pattern == u"one field per row")
                return row % kFields == field ? 1 + (row / kFields) % 2 : 0;
            return random.bounded(10) == 0 ? 1 + int(random.bounded(2)) : 0; // sparse random
        };
        QList<RequestEvent> events;
        QList<qint64> weights;
        for (int row = 0; row < rows; ++row) {
            RequestEvent event;
            event.type = EventType(row % 3);
            event.tsMs = 1000 + row;
            int values[kFields];
            for (int field = 0; field < kFields; ++field)
                values[field] = valueOf(row, field);
            auto text = [&](int field) { return shared[values[field]][field]; };
            // A fresh copy each row: equal text at a new address.
            auto unshared = [&](int field) {
                return values[field] == 0 ? QString()
                                          : QString(text(field).data(), text(field).size());
            };
            auto number = [&](int field, qint64 unknown, qint64 a, qint64 b) {
                return std::array{unknown, a, b}[size_t(values[field])];
            };
            event.identity = text(0);
            event.app = text(1);
            event.tenant = text(2);
            event.service = text(3);
            event.category = text(4);
            event.method = text(5);
            event.url = unshared(6);
            event.status = int(number(7, 0, 200, 429));
            event.errorCode = text(8);
            event.retryAfter = text(9);
            if (values[10] >= 1)
                event.headers.set(QStringLiteral("x-a"), text(10));
            if (values[10] == 2)
                event.headers.set(QStringLiteral("x-b"), QStringLiteral("q\"2"));
            event.body = unshared(11);
            event.durationMs = double(number(12, -1, 0, 84));
            event.requestId = unshared(13);
            event.batchId = unshared(14);
            event.batchIndex = int(number(15, -1, 0, 3));
            event.batchEnvelope = values[16] != 0;
            event.attempt = int(number(17, -1, 0, 2));
            event.operationId = unshared(18);
            event.lane = text(19);
            event.credits = double(number(20, -1, 0, 10));
            event.serviceBusNamespace = text(21);
            event.entity = text(22);
            event.breakerScope = text(23);
            event.breakerState = text(24);
            event.text = unshared(25);
            if (values[26] != 0)
                event.extraJson =
                    values[26] == 1 ? QByteArray("{\"x\":1}") : QByteArray("{\"y\":2}");
            event.line = number(27, 0, 1, row + 2);
            event.offset = number(28, -1, 0, 1000 + row);
            event.weight = number(29, 1, 2, 5);
            event.refusedByClientBreaker = values[31] != 0;
            // Field 30: shared strings of other fields, swapped (a value moving between columns).
            if (values[30] == 1)
                std::swap(event.identity, event.lane);
            events.append(event);
            weights.append(event.weight);
        }
        const QString path = freshPath(QStringLiteral("consecutive"));
        const qint64 sourceId = writeEvents(path, events);
        QVERIFY(sourceId > 0);
        WorkspaceReader reader;
        QVERIFY2(reader.open(path), qPrintable(reader.errorString()));
        const QList<StoredEvent> page = reader.fetchPage({}, 0, rows + 1);
        QCOMPARE(page.size(), rows);
        for (int row = 0; row < rows; ++row) {
            testutil::compareEvents(page[row].event, events[row]);
            if (QTest::currentTestFailed())
                QFAIL(qPrintable(QStringLiteral("row %1").arg(row)));
            QCOMPARE(page[row].event.weight, weights[row]);
            QCOMPARE(page[row].sourceId, sourceId);
        }
    }

    // The writer encodes headers as JSON straight to UTF-8; the bytes stored must be those of
    // headersToJson() (what readers and older versions expect), escapes and all.
    void headersStoredAsTheirJson_data()
    {
        QTest::addColumn<HeaderPairs>("pairs");
        using Pairs = HeaderPairs;
        QTest::newRow("plain") << Pairs{{u"x-a"_s, u"1"_s}};
        QTest::newRow("several") << Pairs{
            {u"x-a"_s, u"1"_s}, {u"x-b"_s, u""_s}, {u"x-c"_s, u"3"_s}};
        QTest::newRow("escapes") << Pairs{
            {u"x-q"_s, u"a \"quoted\" \\ value"_s},
            {u"x-ctl"_s, u"\t\n\r"_s + QChar(0x01) + QChar(0x1f) + u"end"_s}};
        QTest::newRow("non-ascii") << Pairs{{u"x-ü"_s, u"ünïcödé ✓ 😀"_s}};
        QTest::newRow("lone surrogates")
            << Pairs{{u"x-s"_s, QString(QChar(0xd83d)) + u"\""_s + QChar(0xde00)},
                     {u"x-t"_s, u"end"_s + QChar(0xd800)}};
        QTest::newRow("long") << Pairs{{u"x-long"_s, QString(5000, u'a') + u"\\"_s}};
    }

    void headersStoredAsTheirJson()
    {
        QFETCH(HeaderPairs, pairs);
        QList<RequestEvent> events;
        RequestEvent event;
        event.tsMs = 1;
        for (const auto &[name, value] : std::as_const(pairs))
            event.headers.set(name, value);
        // A shared-string column too (bound from the writer's UTF-8 cache).
        event.identity = pairs.last().second;
        // In a multi-row insert and alone.
        for (int i = 0; i < 17; ++i) {
            event.tsMs = 1 + i;
            events.append(event);
        }
        const QString path = freshPath(QStringLiteral("headers"));
        QVERIFY(writeEvents(path, events) > 0);
        // What the writer always stored: QStringEncoder's UTF-8, which writes U+FFFD for a lone
        // surrogate (QString::toUtf8() writes '?').
        QStringEncoder utf8(QStringEncoder::Utf8, QStringConverter::Flag::Stateless);
        const QByteArray expected = utf8.encode(store::headersToJson(event.headers));
        const QByteArray expectedIdentity = utf8.encode(event.identity);
        for (const int row : {1, 17}) {
            QCOMPARE(testutil::sqlScalar(path, QStringLiteral("SELECT CAST(headers AS BLOB) FROM "
                                                              "events WHERE id = %1")
                                                   .arg(row))
                         .toByteArray(),
                     expected);
            const QVariant identity = testutil::sqlScalar(
                path,
                QStringLiteral("SELECT CAST(identity AS BLOB) FROM events WHERE id = %1").arg(row));
            QCOMPARE(identity.toByteArray(), expectedIdentity);
        }
        WorkspaceReader reader;
        QVERIFY2(reader.open(path), qPrintable(reader.errorString()));
        const QList<StoredEvent> page = reader.fetchPage({}, 0, 100);
        QCOMPARE(page.size(), 17);
        QCOMPARE(page.last().event.headers.items(),
                 store::headersFromJson(QString::fromUtf8(expected)).items());
    }

    void secretsNeverReachTheFile_data()
    {
        QTest::addColumn<QString>("headerName");
        QTest::addColumn<QString>("headerValue");
        QTest::addColumn<QString>("url");
        QTest::addColumn<QString>("secret");
        const QString plainUrl = QStringLiteral("https://graph.microsoft.com/v1.0/me");
        QTest::newRow("authorization header")
            << QStringLiteral("Authorization") << QStringLiteral("Bearer opaque-Zq81SecretTok3n")
            << plainUrl << QStringLiteral("Zq81SecretTok3n");
        QTest::newRow("cookie header")
            << QStringLiteral("Cookie") << QStringLiteral("session=C00kieS3cretValue; theme=dark")
            << plainUrl << QStringLiteral("C00kieS3cretValue");
        QTest::newRow("SAS sig in the URL")
            << QString() << QString()
            << QStringLiteral("https://sb-prod.servicebus.windows.net/orders/messages?sv=2021"
                              "&sig=S1gN4tureS3cretXYZ%3D&se=1771454650")
            << QStringLiteral("S1gN4tureS3cretXYZ");
        QTest::newRow("subscription key header")
            << QStringLiteral("Ocp-Apim-Subscription-Key") << QStringLiteral("KeyK3yK3ySecret99")
            << plainUrl << QStringLiteral("KeyK3yK3ySecret99");
    }

    void secretsNeverReachTheFile()
    {
        QFETCH(QString, headerName);
        QFETCH(QString, headerValue);
        QFETCH(QString, url);
        QFETCH(QString, secret);
        const QString path = freshPath(QStringLiteral("secrets"));
        const QString marker = QStringLiteral("marker-") + QString::number(m_serial) + u"-ok";
        RequestEvent event;
        event.tsMs = 1771454650000;
        event.url = url;
        event.requestId = marker;
        if (!headerName.isEmpty())
            event.headers.set(headerName, headerValue);
        event.headers.set(QStringLiteral("x-ms-throttle-scope"), QStringLiteral("Application"));
        QVERIFY(writeEvents(path, {event}) > 0);

        QByteArray bytes;
        for (const QString &suffix : {QString(), QStringLiteral("-wal")}) {
            QFile file(path + suffix);
            if (file.open(QIODevice::ReadOnly))
                bytes += file.readAll();
        }
        // The event itself is in the file (so the search below looks at real content)...
        QVERIFY(bytes.contains(marker.toUtf8()));
        // ...but its secret is not, in any encoding SQLite could use.
        QVERIFY(!bytes.contains(secret.toUtf8()));
        const QByteArray utf16(reinterpret_cast<const char *>(secret.utf16()), secret.size() * 2);
        QVERIFY(!bytes.contains(utf16));

        WorkspaceReader reader;
        QVERIFY(reader.open(path));
        const QList<StoredEvent> page = reader.fetchPage({}, 0, 1);
        QCOMPARE(page.size(), 1);
        QVERIFY(!page.first().event.url.contains(secret));
        for (const auto &[name, value] : page.first().event.headers.items())
            QVERIFY(!value.contains(secret));
        QCOMPARE(page.first().event.headers.value(u"x-ms-throttle-scope"),
                 QStringLiteral("Application"));
    }

    void malformedReasonsAreRedacted()
    {
        const QString path = freshPath(QStringLiteral("malformed-secret"));
        Workspace workspace;
        QVERIFY(workspace.open(path));
        const qint64 sourceId = workspace.addSource(QStringLiteral("/logs/a.ndjson"),
                                                    QStringLiteral("ndjson"), 0, 0, "a");
        WorkspaceWriter writer;
        QVERIFY(writer.start(path));
        WriteBatch batch;
        batch.sourceId = sourceId;
        batch.malformed.append(redact::malformedRecord(
            QStringLiteral("/logs/a.ndjson"), 7,
            QStringLiteral("not JSON: GET https://x.blob.core.windows.net/c?sv=1&sig="
                           "S1gN4tureS3cretXYZ&se=2 marker-reason-ok")));
        QVERIFY(writer.submit(std::move(batch)));
        QVERIFY(writer.finish());
        workspace.close();
        QByteArray bytes;
        for (const QString &suffix : {QString(), QStringLiteral("-wal")}) {
            QFile file(path + suffix);
            if (file.open(QIODevice::ReadOnly))
                bytes += file.readAll();
        }
        QVERIFY(bytes.contains("marker-reason-ok"));
        QVERIFY(!bytes.contains("S1gN4tureS3cretXYZ"));
    }

    void reimportAddsNothing()
    {
        const QString workspacePath = freshPath(QStringLiteral("reimport"));
        const QString logPath = freshPath(QStringLiteral("reimport-log"));
        appendLines(logPath, 0, 2000);
        test::TestLineReader reader;
        const ImportResult first = importOnce(workspacePath, logPath, reader);
        QVERIFY2(first.ok(), qPrintable(first.error));
        QCOMPARE(first.status, ImportResult::Status::Imported);
        QCOMPARE(first.eventsAdded, 2000);
        QVERIFY(!first.resumed);
        QCOMPARE(first.endOffset, QFileInfo(logPath).size());

        const ImportResult second = importOnce(workspacePath, logPath, reader);
        QCOMPARE(second.status, ImportResult::Status::AlreadyImported);
        QCOMPARE(second.eventsAdded, 0);
        QCOMPARE(second.sourceId, first.sourceId);
        QCOMPARE(eventRows(workspacePath), 2000);

        // The same file named through another path (or a symlink) is still the same file.
        const QString viaDot =
            QFileInfo(logPath).absolutePath() + u"/./" + QFileInfo(logPath).fileName();
        const ImportResult third = importOnce(workspacePath, viaDot, reader);
        QCOMPARE(third.status, ImportResult::Status::AlreadyImported);
        const QString viaLink = logPath + u".link";
        QVERIFY(QFile::link(logPath, viaLink));
        QCOMPARE(importOnce(workspacePath, viaLink, reader).status,
                 ImportResult::Status::AlreadyImported);
        QCOMPARE(eventRows(workspacePath), 2000);

        WorkspaceReader workspaceReader;
        QVERIFY(workspaceReader.open(workspacePath));
        const QList<LedgerEntry> ledger = workspaceReader.ledger();
        QCOMPARE(ledger.size(), 1);
        QVERIFY(ledger.first().complete);
        QCOMPARE(ledger.first().events, 2000);
        QCOMPARE(ledger.first().committedLine, 2000);
        const QList<SourceRecord> sources = workspaceReader.sources();
        QCOMPARE(sources.size(), 1);
        QCOMPARE(sources.first().path, QFileInfo(logPath).canonicalFilePath());
        QCOMPARE(sources.first().format, QStringLiteral("testlines"));
        QCOMPARE(sources.first().size, QFileInfo(logPath).size());
    }

    void appendedLinesOnly()
    {
        const QString workspacePath = freshPath(QStringLiteral("append"));
        const QString logPath = freshPath(QStringLiteral("append-log"));
        appendLines(logPath, 0, 1000);
        // A line still being written when the first import runs.
        const QByteArray line1000 = test::testLine(1000);
        {
            QFile file(logPath);
            QVERIFY(file.open(QIODevice::Append));
            file.write(line1000.left(10));
        }
        test::TestLineReader reader;
        const ImportResult first = importOnce(workspacePath, logPath, reader);
        QVERIFY2(first.ok(), qPrintable(first.error));
        QCOMPARE(first.eventsAdded, 1000);
        {
            QFile file(logPath);
            QVERIFY(file.open(QIODevice::Append));
            file.write(line1000.mid(10));
        }
        appendLines(logPath, 1001, 249);

        const ImportResult second = importOnce(workspacePath, logPath, reader);
        QVERIFY2(second.ok(), qPrintable(second.error));
        QCOMPARE(second.status, ImportResult::Status::Imported);
        QVERIFY(second.resumed);
        QCOMPARE(second.sourceId, first.sourceId);
        QCOMPARE(second.resumedFromLine, 1000);
        QCOMPARE(second.resumedFromOffset, first.endOffset);
        QCOMPARE(second.eventsAdded, 250);
        QCOMPARE(eventRows(workspacePath), 1250);
        QCOMPARE(duplicateLines(workspacePath), 0);
        QCOMPARE(testutil::sqlScalar(workspacePath, QStringLiteral("SELECT max(line) FROM events"))
                     .toLongLong(),
                 1250);
        // The line completed after the first import is whole, not two halves.
        QCOMPARE(testutil::sqlScalar(workspacePath,
                                     QStringLiteral("SELECT url FROM events WHERE line = 1001"))
                     .toString(),
                 QStringLiteral("https://api.fabric.microsoft.com/v1/workspaces/1f2e/items/1000"));

        const ImportResult third = importOnce(workspacePath, logPath, reader);
        QCOMPARE(third.status, ImportResult::Status::AlreadyImported);
        QCOMPARE(eventRows(workspacePath), 1250);
    }

    void replacedFileIsNewSource()
    {
        const QString workspacePath = freshPath(QStringLiteral("replace"));
        const QString logPath = freshPath(QStringLiteral("replace-log"));
        appendLines(logPath, 0, 500);
        test::TestLineReader reader;
        const ImportResult first = importOnce(workspacePath, logPath, reader);
        QVERIFY2(first.ok(), qPrintable(first.error));
        QVERIFY(QFile::remove(logPath));
        appendLines(logPath, 5000, 300); // same path, other content (rotated log)
        const ImportResult second = importOnce(workspacePath, logPath, reader);
        QVERIFY2(second.ok(), qPrintable(second.error));
        QCOMPARE(second.status, ImportResult::Status::Imported);
        QVERIFY(!second.resumed);
        QVERIFY(second.sourceId != first.sourceId);
        QCOMPARE(second.eventsAdded, 300);
        QCOMPARE(eventRows(workspacePath), 800);
        // A longer file whose head differs is not taken for an appended one either.
        QVERIFY(QFile::remove(logPath));
        appendLines(logPath, 9000, 900);
        const ImportResult third = importOnce(workspacePath, logPath, reader);
        QVERIFY(!third.resumed);
        QCOMPARE(third.eventsAdded, 900);
        QCOMPARE(eventRows(workspacePath), 1700);
    }

    void resumeAfterKilledImport()
    {
        const QString workspacePath = freshPath(QStringLiteral("killed"));
        const QString logPath = freshPath(QStringLiteral("killed-log"));
        constexpr qint64 kLines = 60000;
        appendLines(logPath, 0, kLines);

        QProcess child;
        child.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        child.start(QStringLiteral(TS_WORKSPACE_IMPORT_CHILD),
                    {workspacePath, logPath, QStringLiteral("50"), QStringLiteral("500")});
        QVERIFY2(child.waitForStarted(10000), qPrintable(child.errorString()));

        // Wait until a few transactions are committed, then kill it without warning.
        qint64 committedWhenKilled = 0;
        QElapsedTimer waited;
        waited.start();
        while (committedWhenKilled < 5000 && waited.elapsed() < 60000) {
            QTest::qWait(20);
            QVERIFY2(child.state() == QProcess::Running, "the child finished before the kill");
            WorkspaceReader reader;
            if (!reader.open(workspacePath))
                continue; // not created yet
            const QList<LedgerEntry> ledger = reader.ledger();
            if (!ledger.isEmpty())
                committedWhenKilled = ledger.first().committedLine;
        }
        QVERIFY(committedWhenKilled >= 5000);
        child.kill(); // SIGKILL
        QVERIFY(child.waitForFinished(10000));
        QCOMPARE(child.exitStatus(), QProcess::CrashExit);

        // What the killed process left: a ledger that matches its rows exactly.
        qint64 ledgerLine = 0;
        {
            WorkspaceReader reader;
            QVERIFY2(reader.open(workspacePath), qPrintable(reader.errorString()));
            const QList<LedgerEntry> ledger = reader.ledger();
            QCOMPARE(ledger.size(), 1);
            QVERIFY(!ledger.first().complete);
            ledgerLine = ledger.first().committedLine;
            QVERIFY(ledgerLine >= committedWhenKilled);
            QVERIFY(ledgerLine < kLines);
            QCOMPARE(reader.countEvents(), ledgerLine);
            QCOMPARE(ledger.first().events, ledgerLine);
        }

        test::TestLineReader reader;
        const ImportResult resumed = importOnce(workspacePath, logPath, reader);
        QVERIFY2(resumed.ok(), qPrintable(resumed.error));
        QCOMPARE(resumed.status, ImportResult::Status::Imported);
        QVERIFY(resumed.resumed);
        QCOMPARE(resumed.resumedFromLine, ledgerLine);
        QCOMPARE(resumed.eventsAdded, kLines - ledgerLine);

        QCOMPARE(eventRows(workspacePath), kLines);
        QCOMPARE(duplicateLines(workspacePath), 0);
        QCOMPARE(testutil::sqlScalar(workspacePath,
                                     QStringLiteral("SELECT count(DISTINCT line) FROM events"))
                     .toLongLong(),
                 kLines);
        QCOMPARE(testutil::sqlScalar(workspacePath, QStringLiteral("SELECT min(line) FROM events"))
                     .toLongLong(),
                 1);
        QCOMPARE(testutil::sqlScalar(workspacePath, QStringLiteral("SELECT max(line) FROM events"))
                     .toLongLong(),
                 kLines);
        // Each row kept the offset of its own line.
        QCOMPARE(testutil::sqlScalar(workspacePath,
                                     QStringLiteral("SELECT byte_offset FROM events WHERE "
                                                    "line = %1")
                                         .arg(ledgerLine + 1))
                     .toLongLong(),
                 resumed.resumedFromOffset);
    }

    // Two imports of one file at once, in two processes: every line is stored once. The run
    // that claims the source last imports what the other had not committed; the other stops.
    void concurrentImportsStoreOnce_data()
    {
        QTest::addColumn<bool>("resumable");
        QTest::addColumn<int>("secondStartsAfterMs");
        QTest::newRow("resumable, started together") << true << 0;
        QTest::newRow("resumable, second joins mid-way") << true << 150;
        QTest::newRow("cannot resume, started together") << false << 0;
        QTest::newRow("cannot resume, second joins mid-way") << false << 150;
    }

    void concurrentImportsStoreOnce()
    {
        QFETCH(bool, resumable);
        QFETCH(int, secondStartsAfterMs);
        constexpr qint64 kLines = 8000;
        const QString logPath = freshPath(QStringLiteral("concurrent-log"));
        appendLines(logPath, 0, kLines);
        // Any interleaving must give the same count; a few rounds meet a few of them.
        for (int round = 0; round < 3; ++round) {
            const QString workspacePath = freshPath(QStringLiteral("concurrent"));
            QStringList args{workspacePath, logPath, QStringLiteral("10"), QStringLiteral("500")};
            if (!resumable)
                args << QStringLiteral("noresume");
            QProcess first;
            QProcess second;
            first.setProcessChannelMode(QProcess::ForwardedErrorChannel);
            second.setProcessChannelMode(QProcess::ForwardedErrorChannel);
            first.start(QStringLiteral(TS_WORKSPACE_IMPORT_CHILD), args);
            if (secondStartsAfterMs > 0)
                QTest::qWait(secondStartsAfterMs);
            second.start(QStringLiteral(TS_WORKSPACE_IMPORT_CHILD), args);
            qint64 committedByChildren = 0;
            for (QProcess *child : {&first, &second}) {
                QVERIFY2(child->waitForFinished(60000), qPrintable(child->errorString()));
                QCOMPARE(child->exitStatus(), QProcess::NormalExit);
                const QByteArray out = child->readAllStandardOutput();
                QVERIFY2(child->exitCode() == 0, out.constData());
                // "imported: N events, ..." / "continued by another import: N events, ..."
                const qsizetype colon = out.indexOf(": ");
                committedByChildren +=
                    out.mid(colon + 2, out.indexOf(' ', colon + 2) - colon - 2).toLongLong();
            }
            QCOMPARE(eventRows(workspacePath), kLines);
            QCOMPARE(duplicateLines(workspacePath), 0);
            QCOMPARE(testutil::sqlScalar(workspacePath,
                                         QStringLiteral("SELECT count(DISTINCT line) FROM events"))
                         .toLongLong(),
                     kLines);
            QCOMPARE(
                testutil::sqlScalar(workspacePath, QStringLiteral("SELECT count(*) FROM sources"))
                    .toInt(),
                1);
            QCOMPARE(testutil::sqlScalar(workspacePath,
                                         QStringLiteral("SELECT complete FROM import_ledger"))
                         .toInt(),
                     1);
            // A resumable run keeps what it committed: between them, each line once. (A run that
            // cannot resume is taken over by starting again: its rows give way.)
            if (resumable)
                QCOMPARE(committedByChildren, kLines);
        }
    }

    // A source is its content: a renamed, rotated or copied file adds only its new lines; new
    // content at a known path (truncated and rewritten, replaced) is read from the start.
    void fileRecognisedByContent_data()
    {
        QTest::addColumn<QString>("change");
        QTest::addColumn<qint64>("firstLines");
        QTest::addColumn<qint64>("expectedAdded");
        QTest::addColumn<ImportResult::Status>("expectedStatus");
        QTest::addColumn<bool>("expectReplaced");
        using S = ImportResult::Status;
        QTest::newRow("renamed, nothing new")
            << u"rename"_s << 2000LL << 0LL << S::AlreadyImported << false;
        QTest::newRow("renamed, then appended to")
            << u"rename+append"_s << 2000LL << 300LL << S::Imported << false;
        QTest::newRow("copied, the copy appended to")
            << u"copy+append"_s << 2000LL << 300LL << S::Imported << false;
        QTest::newRow("small file (head under 64 KiB) grown, then renamed")
            << u"rename+append"_s << 20LL << 300LL << S::Imported << false;
        QTest::newRow("an earlier copy of content imported further")
            << u"earlier copy"_s << 2000LL << 0LL << S::AlreadyImported << false;
        QTest::newRow("truncated and rewritten with other content")
            << u"rewrite"_s << 2000LL << 2500LL << S::Imported << true;
        QTest::newRow("cut below what was imported, same head (copytruncate), then written")
            << u"copytruncate"_s << 2000LL << 1200LL << S::Imported << true;
        QTest::newRow("rotated: renamed, a new file at the old name")
            << u"rotate"_s << 2000LL << 500LL << S::Imported << true;
    }

    void fileRecognisedByContent()
    {
        QFETCH(QString, change);
        QFETCH(qint64, firstLines);
        QFETCH(qint64, expectedAdded);
        QFETCH(ImportResult::Status, expectedStatus);
        QFETCH(bool, expectReplaced);
        const QString workspacePath = freshPath(QStringLiteral("content"));
        const QString logPath = freshPath(QStringLiteral("content-log"));
        const QString otherPath = logPath + u".1";
        appendLines(logPath, 0, firstLines);
        test::TestLineReader reader;
        const ImportResult first = importOnce(workspacePath, logPath, reader);
        QVERIFY2(first.ok(), qPrintable(first.error));
        QCOMPARE(first.eventsAdded, firstLines);

        QString importedPath = otherPath;
        if (change.startsWith(u"rename") || change == u"rotate") {
            QVERIFY(QFile::rename(logPath, otherPath));
        } else if (change == u"copy+append") {
            QVERIFY(QFile::copy(logPath, otherPath));
        } else if (change == u"earlier copy") {
            QFile source(logPath);
            QVERIFY(source.open(QIODevice::ReadOnly));
            QFile copy(otherPath);
            QVERIFY(copy.open(QIODevice::WriteOnly));
            qint64 bytes = 0;
            for (qint64 i = 0; i < 1500; ++i)
                bytes += test::testLine(i).size();
            copy.write(source.read(bytes)); // the first 1500 lines: more than the head
        } else if (change == u"rewrite") {
            QVERIFY(QFile::remove(logPath));
            appendLines(logPath, 50000, 2500);
            importedPath = logPath;
        } else if (change == u"copytruncate") {
            QFile file(logPath);
            QVERIFY(file.open(QIODevice::ReadWrite));
            qint64 bytes = 0;
            for (qint64 i = 0; i < 1000; ++i)
                bytes += test::testLine(i).size();
            QVERIFY(file.resize(bytes)); // the same first 1000 lines, then other ones
            file.close();
            appendLines(logPath, 70000, 200);
            importedPath = logPath;
        }
        if (change.endsWith(u"+append"))
            appendLines(otherPath, firstLines, 300);
        if (change == u"rotate") {
            appendLines(logPath, 90000, 500);
            importedPath = logPath;
            // The rotated file has nothing new.
            QCOMPARE(importOnce(workspacePath, otherPath, reader).status,
                     ImportResult::Status::AlreadyImported);
        }

        const ImportResult second = importOnce(workspacePath, importedPath, reader);
        QVERIFY2(second.ok(), qPrintable(second.error));
        QCOMPARE(second.status, expectedStatus);
        QCOMPARE(second.eventsAdded, expectedAdded);
        QCOMPARE(second.contentReplaced(), expectReplaced);
        if (expectReplaced) {
            QVERIFY(second.sourceId != first.sourceId);
            QVERIFY(!second.resumed);
        } else {
            QCOMPARE(second.sourceId, first.sourceId);
        }
        QCOMPARE(second.earlierCopy, change == u"earlier copy");
        QCOMPARE(eventRows(workspacePath), firstLines + expectedAdded);
        QCOMPARE(duplicateLines(workspacePath), 0);
        // And nothing more the next time.
        QCOMPARE(importOnce(workspacePath, importedPath, reader).status,
                 ImportResult::Status::AlreadyImported);
        QCOMPARE(eventRows(workspacePath), firstLines + expectedAdded);
    }

    // A file that is not a workspace is refused before anything is written to it: not its
    // journal mode (the header), not its user_version, no -wal / -shm beside it.
    void foreignFileLeftUntouched_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::newRow("SQLite file of another application") << u"sqlite"_s;
        QTest::newRow("SQLite file with a user_version") << u"sqlite user_version"_s;
        QTest::newRow("SQLite file with another application_id") << u"sqlite application_id"_s;
        QTest::newRow("text file") << u"text"_s;
    }

    void foreignFileLeftUntouched()
    {
        QFETCH(QString, kind);
        const QString path = freshPath(QStringLiteral("foreign"));
        if (kind.startsWith(u"sqlite")) {
            testutil::sqlScalar(
                path, QStringLiteral("CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT)"));
            testutil::sqlScalar(path, QStringLiteral("INSERT INTO notes(text) VALUES('keep me')"));
            if (kind.endsWith(u"user_version"))
                testutil::sqlScalar(path, QStringLiteral("PRAGMA user_version = 2"));
            if (kind.endsWith(u"application_id"))
                testutil::sqlScalar(path, QStringLiteral("PRAGMA application_id = 1234"));
            QCOMPARE(testutil::sqlScalar(path, QStringLiteral("PRAGMA journal_mode")).toString(),
                     u"delete"_s);
        } else {
            QFile file(path);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(QByteArray(4096, 'x'));
        }
        auto bytes = [&path] {
            QFile file(path);
            return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
        };
        const QByteArray before = bytes();
        const QDateTime modified = QFileInfo(path).lastModified();
        QVERIFY(!before.isEmpty());

        Workspace workspace;
        QVERIFY(!workspace.open(path));
        QVERIFY2(kind == u"text" ||
                     workspace.errorString().contains(u"not a Throttlescope workspace"),
                 qPrintable(workspace.errorString()));
        WorkspaceWriter writer;
        QVERIFY(!writer.start(path));
        WorkspaceReader reader;
        QVERIFY(!reader.open(path));
        test::TestLineReader lineReader;
        QVERIFY(!importOnce(path, freshPath(QStringLiteral("foreign-log")), lineReader).ok());

        QCOMPARE(bytes(), before);
        QCOMPARE(QFileInfo(path).lastModified(), modified);
        for (const char *suffix : {"-wal", "-shm", "-journal"})
            QVERIFY2(!QFileInfo::exists(path + QLatin1StringView(suffix)), suffix);
    }

    // A workspace written by the previous version (2) opens: its import sources are recognised
    // by content from then on, and what it holds of an unfinished import is reported.
    void version2WorkspaceMigrates()
    {
        const QString workspacePath = freshPath(QStringLiteral("v2"));
        const QString logPath = freshPath(QStringLiteral("v2-log"));
        const QString partialPath = freshPath(QStringLiteral("v2-partial"));
        appendLines(logPath, 0, 2000);
        appendLines(partialPath, 100000, 4000); // other content (the same would continue logPath)
        test::TestLineReader reader;
        QCOMPARE(importOnce(workspacePath, logPath, reader).eventsAdded, 2000);
        std::atomic<bool> cancel{false};
        ImportOptions options;
        options.cancel = &cancel;
        options.batchRecords = 500;
        options.progress = [&cancel](qint64 done, qint64) {
            if (done > 100000)
                cancel = true;
        };
        const ImportResult cancelled = importOnce(workspacePath, partialPath, reader, options);
        QCOMPARE(cancelled.status, ImportResult::Status::Cancelled);
        {
            Workspace workspace;
            QVERIFY(workspace.open(workspacePath));
            QVERIFY(workspace.addSource(QStringLiteral("/logs/tailed.log"),
                                        QStringLiteral("ndjson"), 0, 0, "tail:64768:1234") > 0);
        }
        QVERIFY(downgradeToVersion2(workspacePath));

        // The reader migrates it (as `report --workspace` would open it first).
        WorkspaceReader workspaceReader;
        QVERIFY2(workspaceReader.open(workspacePath), qPrintable(workspaceReader.errorString()));
        QCOMPARE(testutil::sqlScalar(workspacePath, QStringLiteral("PRAGMA user_version")).toInt(),
                 kWorkspaceSchemaVersion);
        const QList<SourceRecord> sources = workspaceReader.sources();
        QCOMPARE(sources.size(), 3);
        QVERIFY(sources.at(0).isFileImport());
        QCOMPARE(sources.at(0).headHash, sources.at(0).fingerprint);
        QVERIFY(sources.at(1).isFileImport());
        QVERIFY(!sources.at(2).isImport()); // the tailed file: a live source
        const QList<IncompleteImport> incomplete =
            incompleteImports(sources, workspaceReader.ledger());
        QCOMPARE(incomplete.size(), 1);
        QCOMPARE(incomplete.first().source.path, QFileInfo(partialPath).canonicalFilePath());
        QCOMPARE(incomplete.first().committedBytes, cancelled.endOffset);
        QCOMPARE(incomplete.first().sizeBytes, -1); // version 2 did not record it
        workspaceReader.close();

        // Recognised by content now: renamed, the complete file adds nothing; the partial one
        // resumes.
        QVERIFY(QFile::rename(logPath, logPath + u".1"));
        QCOMPARE(importOnce(workspacePath, logPath + u".1", reader).status,
                 ImportResult::Status::AlreadyImported);
        const ImportResult resumed = importOnce(workspacePath, partialPath, reader);
        QVERIFY(resumed.resumed);
        QCOMPARE(resumed.eventsAdded, 4000 - cancelled.eventsAdded);
        QCOMPARE(eventRows(workspacePath), 6000);
        QVERIFY(workspaceReader.open(workspacePath));
        QVERIFY(incompleteImports(workspaceReader.sources(), workspaceReader.ledger()).isEmpty());
    }

    void cancelledImportResumes_data()
    {
        QTest::addColumn<bool>("resumable");
        QTest::newRow("resumable reader") << true;
        QTest::newRow("reader that cannot resume starts over") << false;
    }

    void cancelledImportResumes()
    {
        QFETCH(bool, resumable);
        const QString workspacePath = freshPath(QStringLiteral("cancel"));
        const QString logPath = freshPath(QStringLiteral("cancel-log"));
        constexpr qint64 kLines = 20000;
        appendLines(logPath, 0, kLines);
        const qint64 size = QFileInfo(logPath).size();

        test::TestLineReader reader;
        reader.resumable = resumable;
        std::atomic<bool> cancel{false};
        ImportOptions options;
        options.cancel = &cancel;
        options.batchRecords = 1000;
        qint64 lastDone = 0;
        options.progress = [&](qint64 done, qint64 total) {
            QCOMPARE(total, size);
            lastDone = done;
            if (done > size / 2)
                cancel = true;
        };
        const ImportResult cancelled = importOnce(workspacePath, logPath, reader, options);
        QCOMPARE(cancelled.status, ImportResult::Status::Cancelled);
        QVERIFY(cancelled.error.isEmpty());
        QVERIFY(lastDone > size / 2);
        QVERIFY(cancelled.eventsAdded < kLines);
        QCOMPARE(eventRows(workspacePath), cancelled.eventsAdded);
        if (resumable) {
            WorkspaceReader workspaceReader;
            QVERIFY(workspaceReader.open(workspacePath));
            QCOMPARE(workspaceReader.ledger().value(0).committedLine, cancelled.eventsAdded);
        }

        const ImportResult finished = importOnce(workspacePath, logPath, reader);
        QVERIFY2(finished.ok(), qPrintable(finished.error));
        QCOMPARE(finished.status, ImportResult::Status::Imported);
        QCOMPARE(finished.resumed, resumable);
        QCOMPARE(finished.restarted, !resumable);
        QCOMPARE(finished.eventsAdded, resumable ? kLines - cancelled.eventsAdded : kLines);
        QCOMPARE(eventRows(workspacePath), kLines);
        QCOMPARE(duplicateLines(workspacePath), 0);

        const ImportResult again = importOnce(workspacePath, logPath, reader);
        QCOMPARE(again.status, ImportResult::Status::AlreadyImported);
        QCOMPARE(eventRows(workspacePath), kLines);
    }

    // The real reader of the canonical log through the same ledger: chunked checkpoints.
    void ndjsonReaderImportsOnceAndResumesAppends()
    {
        const QString workspacePath = freshPath(QStringLiteral("ndjson"));
        const QString logPath = freshPath(QStringLiteral("ndjson-log")) + u".ndjson";
        auto ndjsonLine = [](qint64 i) -> QByteArray {
            return "{\"ts\":" + QByteArray::number(1771454650000 + i * 10) + ",\"identity\":\"sp-" +
                   QByteArray::number(i % 5) +
                   "\",\"method\":\"GET\",\"url\":\"https://api.fabric.microsoft.com/v1/"
                   "workspaces/" +
                   QByteArray::number(i) + "\",\"status\":" + (i % 9 == 0 ? "429" : "200") + "}\n";
        };
        {
            QFile file(logPath);
            QVERIFY(file.open(QIODevice::WriteOnly));
            for (qint64 i = 0; i < 3000; ++i)
                file.write(i == 1234 ? QByteArray("this is not json\n") : ndjsonLine(i));
        }
        NdjsonReader reader;
        const ImportResult first = importOnce(workspacePath, logPath, reader);
        QVERIFY2(first.ok(), qPrintable(first.error));
        QCOMPARE(first.eventsAdded, 2999);
        QCOMPARE(first.malformedAdded, 1);
        {
            WorkspaceReader workspaceReader;
            QVERIFY(workspaceReader.open(workspacePath));
            QCOMPARE(workspaceReader.malformed().value(0).record.line, 1235);
            QCOMPARE(workspaceReader.ledger().value(0).committedLine, 3000);
        }
        QCOMPARE(importOnce(workspacePath, logPath, reader).status,
                 ImportResult::Status::AlreadyImported);
        {
            QFile file(logPath);
            QVERIFY(file.open(QIODevice::Append));
            for (qint64 i = 3000; i < 3500; ++i)
                file.write(ndjsonLine(i));
        }
        const ImportResult appended = importOnce(workspacePath, logPath, reader);
        QVERIFY2(appended.ok(), qPrintable(appended.error));
        QVERIFY(appended.resumed);
        QCOMPARE(appended.resumedFromLine, 3000);
        QCOMPARE(appended.eventsAdded, 500);
        QCOMPARE(eventRows(workspacePath), 3499);
        QCOMPARE(duplicateLines(workspacePath), 0);
        QCOMPARE(testutil::sqlScalar(workspacePath,
                                     QStringLiteral("SELECT url FROM events WHERE line = 3500"))
                     .toString(),
                 QStringLiteral("https://api.fabric.microsoft.com/v1/workspaces/3499"));
    }

    // A log imported while its writer is still appending: the last line, cut mid-write, is
    // neither an event nor a malformed record; the next import takes it whole. A last line that
    // parses is complete even without its newline.
    void lineCutMidWriteWaitsForTheNextImport_data()
    {
        QTest::addColumn<bool>("withBom");
        QTest::newRow("plain") << false;
        QTest::newRow("BOM, the cut line is the first") << true;
    }

    void lineCutMidWriteWaitsForTheNextImport()
    {
        QFETCH(bool, withBom);
        const QString workspacePath = freshPath(QStringLiteral("cut"));
        const QString logPath = freshPath(QStringLiteral("cut-log")) + u".ndjson";
        auto line = [](qint64 i) -> QByteArray {
            return "{\"ts\":" + QByteArray::number(1771454650000 + i * 10) +
                   ",\"identity\":\"sp-1\",\"url\":\"https://api.fabric.microsoft.com/v1/items/" +
                   QByteArray::number(i) + "\",\"status\":200}\n";
        };
        const qint64 complete = withBom ? 0 : 3;
        QByteArray written = withBom ? QByteArray("\xEF\xBB\xBF") : QByteArray();
        for (qint64 i = 0; i < complete; ++i)
            written += line(i);
        const QByteArray cutLine = line(complete);
        const qsizetype cutAt = cutLine.size() / 2;
        {
            QFile file(logPath);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(written + cutLine.left(cutAt));
        }
        NdjsonReader reader;
        const ImportResult first = importOnce(workspacePath, logPath, reader);
        QVERIFY2(first.ok(), qPrintable(first.error));
        QCOMPARE(first.eventsAdded, complete);
        QCOMPARE(first.malformedAdded, 0);
        // The resume point is the start of the cut line (the file's start, BOM included, when
        // it is the first line); everything after it is held.
        const qint64 resumeAt = withBom ? 0 : qint64(written.size());
        QCOMPARE(first.endOffset, resumeAt);
        QCOMPARE(first.heldBytes, qint64(written.size() + cutAt) - resumeAt);
        // The writer finishes the line and adds another, still without a final newline (but
        // whole: it parses, so it is imported).
        {
            QFile file(logPath);
            QVERIFY(file.open(QIODevice::Append));
            file.write(cutLine.mid(cutAt) + line(complete + 1).chopped(1));
        }
        const ImportResult second = importOnce(workspacePath, logPath, reader);
        QVERIFY2(second.ok(), qPrintable(second.error));
        QVERIFY(second.resumed);
        QCOMPARE(second.eventsAdded, 2);
        QCOMPARE(second.malformedAdded, 0);
        QCOMPARE(second.heldBytes, 0);
        QCOMPARE(eventRows(workspacePath), complete + 2);
        QCOMPARE(duplicateLines(workspacePath), 0);
        QCOMPARE(
            testutil::sqlScalar(workspacePath, QStringLiteral("SELECT count(*) FROM malformed"))
                .toLongLong(),
            0);
        QCOMPARE(importOnce(workspacePath, logPath, reader).status,
                 ImportResult::Status::AlreadyImported);
    }

    // stdin cannot be fingerprinted: every read is a new source, never resumed or skipped.
    void stdinIsAlwaysANewSource()
    {
        const QString workspacePath = freshPath(QStringLiteral("stdin"));
        QByteArray input;
        for (qint64 i = 0; i < 100; ++i)
            input += test::testLine(i);
        for (int run = 1; run <= 2; ++run) {
            QProcess child;
            child.setProcessChannelMode(QProcess::ForwardedErrorChannel);
            child.start(
                QStringLiteral(TS_WORKSPACE_IMPORT_CHILD),
                {workspacePath, QStringLiteral("-"), QStringLiteral("0"), QStringLiteral("30")});
            QVERIFY(child.waitForStarted(10000));
            child.write(input);
            child.closeWriteChannel();
            QVERIFY(child.waitForFinished(30000));
            QCOMPARE(child.exitCode(), 0);
            QCOMPARE(eventRows(workspacePath), 100 * run);
        }
        WorkspaceReader reader;
        QVERIFY(reader.open(workspacePath));
        const QList<SourceRecord> sources = reader.sources();
        QCOMPARE(sources.size(), 2);
        QCOMPARE(sources.at(0).path, QStringLiteral("-"));
        QVERIFY(sources.at(0).fingerprint != sources.at(1).fingerprint);
        EventFilter secondRun;
        secondRun.sourceId = sources.at(1).id;
        QCOMPARE(reader.countEvents(secondRun), 100);
    }

    void malformedRecordsKeepFileAndLine()
    {
        const QString workspacePath = freshPath(QStringLiteral("malformed"));
        const QString logPath = freshPath(QStringLiteral("malformed-log"));
        {
            QFile file(logPath);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(test::testLine(0));
            file.write("this is not a record\n");
            file.write(test::testLine(2));
            file.write("\n");
            file.write("12\tonly\tthree\n");
            file.write(test::testLine(5));
        }
        test::TestLineReader reader;
        const ImportResult result = importOnce(workspacePath, logPath, reader);
        QVERIFY2(result.ok(), qPrintable(result.error));
        QCOMPARE(result.eventsAdded, 3);
        QCOMPARE(result.malformedAdded, 3);

        WorkspaceReader workspaceReader;
        QVERIFY(workspaceReader.open(workspacePath));
        QCOMPARE(workspaceReader.countMalformed(), 3);
        QCOMPARE(workspaceReader.countMalformed(result.sourceId), 3);
        const QList<StoredMalformed> records = workspaceReader.malformed();
        QCOMPARE(records.size(), 3);
        const QString absolute = QFileInfo(logPath).canonicalFilePath();
        const qint64 expectedLines[] = {2, 4, 5};
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(records.at(i).record.source, absolute);
            QCOMPARE(records.at(i).record.line, expectedLines[i]);
            QCOMPARE(records.at(i).record.toString(),
                     absolute + u':' + QString::number(expectedLines[i]) +
                         u": expected 4 or 5 tab-separated fields");
        }
        // Keyset paging over malformed records too.
        const QList<StoredMalformed> rest = workspaceReader.malformed(0, records.first().rowId, 10);
        QCOMPARE(rest.size(), 2);
        QCOMPARE(workspaceReader.ledger().value(0).malformed, 3);
        // Events keep their own line numbers around the malformed ones.
        QCOMPARE(testutil::sqlScalar(workspacePath,
                                     QStringLiteral("SELECT group_concat(line) FROM "
                                                    "(SELECT line FROM events ORDER BY line)"))
                     .toString(),
                 QStringLiteral("1,3,6"));
    }

    void readerFilters_data()
    {
        QTest::addColumn<QString>("layout");
        QTest::addColumn<int>("events");
        QTest::addColumn<bool>("distinctIdentities");
        QTest::addColumn<EventFilter>("filter");
        struct Corpus
        {
            const char *name;
            const char *layout;
            int events;
            bool distinctIdentities;
        };
        // One summary block; several (paging crosses block boundaries); a block with more
        // identities than a summary lists; rows of a discarded source gone from the blocks;
        // a version 1 workspace migrated to summaries.
        const Corpus corpora[] = {
            {"one block", "direct", 300, false},
            {"three blocks", "direct", 20000, false},
            {"identity overflow", "direct", 10000, true},
            {"discarded source", "discarded", 12000, false},
            {"migrated from version 1", "version 1", 10000, false},
        };
        for (const Corpus &corpus : corpora) {
            const QList<std::pair<QString, EventFilter>> filters = readerFilterCases();
            for (const auto &[name, filter] : filters) {
                QTest::addRow("%s: %s", corpus.name, qPrintable(name))
                    << QString::fromLatin1(corpus.layout) << corpus.events
                    << corpus.distinctIdentities << filter;
            }
        }
    }

    void readerFilters()
    {
        QFETCH(QString, layout);
        QFETCH(int, events);
        QFETCH(bool, distinctIdentities);
        QFETCH(EventFilter, filter);
        const QList<RequestEvent> corpus = filterCorpus(events, distinctIdentities);
        qint64 expected = 0;
        for (const RequestEvent &event : corpus)
            expected += matches(event, filter) ? 1 : 0;

        const QString path = freshPath(QStringLiteral("filters"));
        QVERIFY(writeLayout(path, layout, corpus));
        WorkspaceReader reader;
        QVERIFY2(reader.open(path), qPrintable(reader.errorString()));
        QCOMPARE(testutil::sqlScalar(path, QStringLiteral("PRAGMA user_version")).toInt(),
                 kWorkspaceSchemaVersion);
        QCOMPARE(summaryMismatches(path), 0);
        if (distinctIdentities) {
            QVERIFY(testutil::sqlScalar(path,
                                        QStringLiteral("SELECT count(*) FROM event_block_overflow"))
                        .toInt() > 0);
        }
        QCOMPARE(reader.countEvents(filter), expected);

        // Keyset pages visit every matching row exactly once, in row order (pages of 7 on
        // the small corpus; larger ones on the others, so that pages end inside blocks too).
        const int pageSize = events > 1000 ? 997 : 7;
        qint64 after = 0;
        qint64 seen = 0;
        QList<StoredEvent> page;
        do {
            page = reader.fetchPage(filter, after, pageSize);
            for (const StoredEvent &stored : std::as_const(page)) {
                QVERIFY(stored.rowId > after);
                after = stored.rowId;
                QVERIFY(matches(stored.event, filter));
                // Row i of the corpus is line i + 1.
                testutil::compareEvents(stored.event, corpus.at(stored.event.line - 1));
                ++seen;
            }
        } while (!page.isEmpty());
        QCOMPARE(seen, expected);

        // Replay in time order, in chunks.
        qint64 replayed = 0;
        qint64 previousTs = std::numeric_limits<qint64>::min();
        QVERIFY(reader.forEachEventInTimeOrder(
            16,
            [&](const QList<RequestEvent> &chunk) {
                for (const RequestEvent &event : chunk) {
                    if (event.tsMs < previousTs)
                        return false;
                    previousTs = event.tsMs;
                    ++replayed;
                }
                return true;
            },
            filter));
        QCOMPARE(replayed, expected);
    }

    void queriesUseIndexes_data()
    {
        // The statement shapes WorkspaceReader runs, and what SQLite's plan must show: no
        // query scans the whole events table when the filter has a summarized or time term.
        QTest::addColumn<QString>("sql");
        QTest::addColumn<QString>("plan");
        QTest::newRow("summary lookup")
            << QStringLiteral("SELECT block, events FROM event_blocks WHERE field = 0 AND value = "
                              "'alice@contoso.com'")
            << QStringLiteral("USING PRIMARY KEY (field=? AND value=?)");
        QTest::newRow("page inside candidate blocks")
            << QStringLiteral("SELECT id FROM events WHERE identity = 'a' AND lane = 'x' AND "
                              "id >= 6 AND id <= 8192 ORDER BY id LIMIT 100")
            << QStringLiteral("INTEGER PRIMARY KEY (rowid>? AND rowid<?)");
        QTest::newRow("identity and status 429 (partial index)")
            << QStringLiteral("SELECT count(*) FROM events WHERE identity = 'a' AND status = 429 "
                              "AND status >= 400 AND id >= 1 AND id <= 8192")
            << QStringLiteral("idx_events_failed");
        QTest::newRow("errorCode and lane (partial index)")
            << QStringLiteral("SELECT id FROM events WHERE error_code = 'RequestBlocked' AND lane "
                              "= 'background' AND id >= 6 AND id <= 8192 ORDER BY id LIMIT 100")
            << QStringLiteral("idx_events_error");
        QTest::newRow("time range")
            << QStringLiteral(
                   "SELECT id FROM events WHERE ts_ms >= 5 AND ts_ms < 10 ORDER BY id LIMIT 100")
            << QStringLiteral("idx_events_ts");
        QTest::newRow("replay in time order")
            << QStringLiteral("SELECT id FROM events ORDER BY ts_ms, id")
            << QStringLiteral("idx_events_ts");
    }

    void queriesUseIndexes()
    {
        QFETCH(QString, sql);
        QFETCH(QString, plan);
        const QString path = freshPath(QStringLiteral("plan"));
        QVERIFY(writeEvents(path, filterCorpus()) > 0);
        QString detail;
        {
            const QString name = QStringLiteral("tst-workspace-plan");
            {
                QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
                db.setDatabaseName(path);
                QVERIFY(db.open());
                QSqlQuery query(db);
                QVERIFY(query.exec(u"EXPLAIN QUERY PLAN " + sql));
                while (query.next())
                    detail += query.value(3).toString() + u" | ";
            }
            QSqlDatabase::removeDatabase(name);
        }
        QVERIFY2(detail.contains(plan), qPrintable(detail));
    }

    void writerReportsProgressAndBoundsItsQueue()
    {
        const QString path = freshPath(QStringLiteral("progress"));
        Workspace workspace;
        QVERIFY(workspace.open(path));
        const qint64 sourceId =
            workspace.addSource(QStringLiteral("http"), QStringLiteral("live"), -1, 0, "live:http");
        WorkspaceWriter writer;
        WorkspaceWriter::Options options;
        options.maxQueuedRecords = 64;
        QVERIFY(writer.start(path, options));
        qint64 reportedEvents = 0;
        QObject context;
        connect(&writer, &WorkspaceWriter::progress, &context,
                [&](qint64 events, qint64) { reportedEvents = events; });
        // Many small batches through a tiny queue: submit() must block, not drop or grow.
        for (int b = 0; b < 200; ++b) {
            WriteBatch batch;
            batch.sourceId = sourceId;
            for (int i = 0; i < 10; ++i) {
                RequestEvent event;
                event.tsMs = b * 10 + i;
                event.line = b * 10 + i + 1;
                batch.events.append(event);
            }
            QVERIFY(writer.submit(std::move(batch)));
        }
        QVERIFY(writer.flush());
        QCOMPARE(writer.eventsWritten(), 2000);
        QTRY_COMPARE_WITH_TIMEOUT(reportedEvents, 2000, 5000);
        QVERIFY(writer.finish());
        QVERIFY(!writer.submit(WriteBatch{})); // finished: nothing more is accepted
        QCOMPARE(eventRows(path), 2000);
        // Batches without a checkpoint (live input) leave no ledger entry.
        QCOMPARE(
            testutil::sqlScalar(path, QStringLiteral("SELECT count(*) FROM import_ledger")).toInt(),
            0);
    }

    void writerRefusesAnUnopenableWorkspace()
    {
        WorkspaceWriter writer;
        QVERIFY(!writer.start(m_dir.filePath(QStringLiteral("no/such/dir/ws.tsws"))));
        QVERIFY(!writer.errorString().isEmpty());
        QVERIFY(!writer.submit(WriteBatch{}));
    }
};

QTEST_GUILESS_MAIN(TestWorkspace)
#include "tst_workspace.moc"
