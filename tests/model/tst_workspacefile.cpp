// Workspace files are recognised by their content (the SQLite header with application id
// 'TSWS'), by the app (looksLikeWorkspaceFile) and by the desktop's MIME database (the
// package's shared-mime-info XML, read here by QMimeDatabase as a file manager reads it).
#include "store/workspace.h"

#include <QFile>
#include <QMimeDatabase>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

namespace {

const QString kWorkspaceMime = QStringLiteral("application/x-throttlescope-workspace");

enum class Content { Workspace, OtherSqlite, Ndjson, Empty, Missing };

// Creates `name` in `dir` with the given content; returns its path.
QString makeFile(const QTemporaryDir &dir, const QString &name, Content content)
{
    const QString path = dir.filePath(name);
    switch (content) {
    case Content::Workspace: {
        ts::Workspace workspace;
        if (!workspace.open(path))
            qWarning() << workspace.errorString();
        break;
    }
    case Content::OtherSqlite: {
        const QString connection = QStringLiteral("other-sqlite");
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection);
            db.setDatabaseName(path);
            db.open();
            QSqlQuery(db).exec(
                QStringLiteral("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)"));
            QSqlQuery(db).exec(QStringLiteral("INSERT INTO notes (text) VALUES ('hello')"));
            db.close();
        }
        QSqlDatabase::removeDatabase(connection);
        break;
    }
    case Content::Ndjson: {
        QFile file(path);
        file.open(QIODevice::WriteOnly);
        file.write(
            QByteArray(200, ' ').prepend("{\"ts\":\"2026-02-18T22:44:09Z\",\"status\":200}\n"));
        break;
    }
    case Content::Empty: {
        QFile file(path);
        file.open(QIODevice::WriteOnly);
        break;
    }
    case Content::Missing:
        break;
    }
    return path;
}

} // namespace

class TestWorkspaceFile : public QObject
{
    Q_OBJECT

    QTemporaryDir m_mimeData;

private slots:
    void initTestCase()
    {
        // The package's MIME XML, in a data directory of its own searched before the system's
        // (whose freedesktop.org.xml defines application/vnd.sqlite3, our parent type).
        QVERIFY(m_mimeData.isValid());
        QVERIFY(QDir().mkpath(m_mimeData.filePath(u"mime/packages"_qs)));
        QVERIFY(QFile::copy(QStringLiteral(TS_MIME_XML),
                            m_mimeData.filePath(u"mime/packages/throttlescope.xml"_qs)));
        // The XML, not the binary caches (mime.cache) built from it: Qt 6.4 reading a cache
        // answers the parent type (application/vnd.sqlite3) for a workspace, where GLib (gio)
        // reading the same cache, and Qt reading the XML, answer the workspace type.
        qputenv("QT_NO_MIME_CACHE", "1");
        const QByteArray systemDirs = qgetenv("XDG_DATA_DIRS");
        qputenv(
            "XDG_DATA_DIRS",
            QFile::encodeName(m_mimeData.path()) + ':' +
                (systemDirs.isEmpty() ? QByteArray("/usr/local/share:/usr/share") : systemDirs));
    }

    void recognisedByContent_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("content");
        QTest::addColumn<bool>("workspace");
        QTest::addColumn<bool>("knownByContentAlone");
        QTest::newRow("workspace.tsws") << u"a.tsws"_qs << int(Content::Workspace) << true << true;
        QTest::newRow("workspace, any name")
            << u"migration.data"_qs << int(Content::Workspace) << true << true;
        QTest::newRow("workspace.db (older name)")
            << u"old.db"_qs << int(Content::Workspace) << true << true;
        QTest::newRow("other SQLite file .db")
            << u"notes.db"_qs << int(Content::OtherSqlite) << false << true;
        QTest::newRow("other SQLite file .tsws")
            << u"notes.tsws"_qs << int(Content::OtherSqlite) << false << true;
        QTest::newRow("log named .tsws") << u"log.tsws"_qs << int(Content::Ndjson) << false << true;
        QTest::newRow("log") << u"requests.ndjson"_qs << int(Content::Ndjson) << false << true;
        QTest::newRow("empty .tsws (being created)")
            << u"new.tsws"_qs << int(Content::Empty) << true << false;
        QTest::newRow("missing .tsws") << u"gone.tsws"_qs << int(Content::Missing) << true << false;
        QTest::newRow("missing log")
            << u"gone.ndjson"_qs << int(Content::Missing) << false << false;
    }

    void recognisedByContent()
    {
        QFETCH(QString, name);
        QFETCH(int, content);
        QFETCH(bool, workspace);
        QFETCH(bool, knownByContentAlone);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = makeFile(dir, name, Content(content));
        QCOMPARE(ts::looksLikeWorkspaceFile(path), workspace);

        // The desktop's view: by content (file managers trust a matching extension first),
        // and by the .tsws glob.
        const QMimeDatabase mimeDatabase;
        if (knownByContentAlone) {
            const QMimeType byContent =
                mimeDatabase.mimeTypeForFile(path, QMimeDatabase::MatchContent);
            QCOMPARE(byContent.name() == kWorkspaceMime, workspace);
        }
        if (name.endsWith(u".tsws")) {
            QCOMPARE(mimeDatabase.mimeTypeForFile(path, QMimeDatabase::MatchExtension).name(),
                     kWorkspaceMime);
        }
    }

    void mimeTypeIsASqliteDatabase()
    {
        const QMimeType type = QMimeDatabase().mimeTypeForName(kWorkspaceMime);
        QVERIFY(type.isValid());
        QVERIFY(type.inherits(u"application/vnd.sqlite3"_qs));
        QCOMPARE(type.suffixes(), QStringList{u"tsws"_qs});
    }
};

QTEST_GUILESS_MAIN(TestWorkspaceFile)
#include "tst_workspacefile.moc"
