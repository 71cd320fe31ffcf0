// The dashboard given a workspace as FILE (`throttlescope migration.tsws`, or the desktop
// opening a .tsws through the package's MIME type) opens it as a workspace, recognised by its
// content whatever its name, and reads the other files as logs.
#include "dashboardcontroller.h"
#include "ingest/sourcereader.h"
#include "mainwindow.h"
#include "store/importjob.h"
#include "store/workspace.h"
#include "store/workspacewriter.h"

#include <QApplication>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

namespace {

// A workspace holding the canonical examples, at `path`.
bool makeWorkspace(const QString &path)
{
    ts::Workspace workspace;
    ts::WorkspaceWriter writer;
    const QString log = QStringLiteral(TS_TEST_DATA_DIR "/canonical/spec-examples.ndjson");
    if (!workspace.open(path) || !writer.start(path))
        return false;
    QFile probe(log);
    if (!probe.open(QIODevice::ReadOnly))
        return false;
    QString error;
    const std::unique_ptr<ts::LogReader> reader = ts::readerFor(probe, log, {}, &error);
    probe.close();
    if (!reader)
        return false;
    const bool imported = ts::importFile(workspace, writer, log, *reader).ok();
    return writer.finish() && imported;
}

MainWindow *shownWindow()
{
    const auto widgets = QApplication::topLevelWidgets();
    for (QWidget *widget : widgets) {
        if (auto *window = qobject_cast<MainWindow *>(widget))
            return window;
    }
    return nullptr;
}

} // namespace

class TestOpenWorkspace : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // QSettings in a throwaway location
        QCoreApplication::setOrganizationName(QStringLiteral("ThrottlescopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_openworkspace"));
    }

    void workspaceGivenAsFile_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow(".tsws") << u"migration.tsws"_qs;
        QTest::newRow("any name") << u"migration.data"_qs;
    }

    void workspaceGivenAsFile()
    {
        QFETCH(QString, name);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(name);
        QVERIFY(makeWorkspace(path));

        ts::app::DashboardOptions options;
        options.files = {path};
        ts::app::DashboardController controller(options);
        controller.start();
        MainWindow *window = shownWindow();
        QVERIFY(window);
        // The window names the workspace it has open (MainWindow::setWorkspacePath).
        QTRY_VERIFY_WITH_TIMEOUT(window->windowTitle().startsWith(name), 60000);
    }
};

QTEST_MAIN(TestOpenWorkspace)
#include "tst_openworkspace.moc"
