// Help > User Guide opens the installed guide (share/doc/throttlescope/README.md relative to
// the executable), in a build tree the checkout's README.md, through the desktop's URL handler.
#include "mainwindow.h"
#include "userguide.h"

#include <QAction>
#include <QApplication>
#include <QDesktopServices>
#include <QDir>
#include <QFile>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

// Stands in for the desktop: receives the URLs QDesktopServices::openUrl() is given.
class UrlCatcher : public QObject
{
    Q_OBJECT
public:
    QList<QUrl> urls;
public Q_SLOTS:
    void open(const QUrl &url) { urls << url; }
};

class TestUserGuide : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // QSettings in a throwaway location
        QCoreApplication::setOrganizationName(QStringLiteral("ThrottlescopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_userguide"));
    }

    // An installed layout: bin/throttlescope and share/doc/throttlescope/README.md.
    void installedGuideNextToTheExecutable()
    {
        QTemporaryDir prefix;
        QVERIFY(prefix.isValid());
        QVERIFY(QDir().mkpath(prefix.filePath(u"bin"_qs)));
        const QString applicationDir = prefix.filePath(u"bin"_qs);
        // Not installed (a system that leaves out /usr/share/doc) and not a build tree: none.
        QCOMPARE(ts::app::userGuidePath(applicationDir), QString());

        QVERIFY(QDir().mkpath(prefix.filePath(u"share/doc/throttlescope/docs"_qs)));
        QFile guide(prefix.filePath(u"share/doc/throttlescope/README.md"_qs));
        QVERIFY(guide.open(QIODevice::WriteOnly));
        guide.close();
        QCOMPARE(ts::app::userGuidePath(applicationDir), QFileInfo(guide).absoluteFilePath());
    }

    // This test runs from the build tree: the checkout's README.md is the guide.
    void buildTreeUsesTheCheckout()
    {
        const QString guide = ts::app::userGuidePath(QCoreApplication::applicationDirPath());
        QVERIFY(guide.endsWith(u"/README.md"));
        QVERIFY(QFileInfo::exists(guide));
    }

    void helpMenuOpensTheGuide()
    {
        UrlCatcher catcher;
        QDesktopServices::setUrlHandler(u"file"_qs, &catcher, "open");
        MainWindow window;
        QAction *action = window.findChild<QAction *>(u"userGuideAction"_qs);
        QVERIFY(action);
        action->trigger();
        QDesktopServices::unsetUrlHandler(u"file"_qs);
        QCOMPARE(catcher.urls.size(), 1);
        QCOMPARE(catcher.urls.constFirst().toLocalFile(),
                 ts::app::userGuidePath(QCoreApplication::applicationDirPath()));
    }
};

QTEST_MAIN(TestUserGuide)
#include "tst_userguide.moc"
