// Helper process for tst_workspace: imports one file into a workspace with the test line
// reader, slowly, so that the test can SIGKILL it in the middle and check that a re-import
// resumes exactly where the last committed transaction ended, or run two at once.
//   workspace_import_child WORKSPACE FILE DELAY_US_PER_RECORD BATCH_RECORDS [noresume]
// ("noresume": the reader cannot resume, as HAR or CSV). Prints "STATUS: N events, M malformed"
// (what this process committed). Exit status 0 when the import is ok (ImportResult::ok()), 1
// otherwise.

#include "store/importjob.h"
#include "store/workspace.h"
#include "store/workspacewriter.h"
#include "testlinereader.h"

#include <QCoreApplication>

#include <cstdio>

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    if (args.size() != 5 && !(args.size() == 6 && args.at(5) == u"noresume")) {
        std::fprintf(stderr,
                     "usage: workspace_import_child WORKSPACE FILE DELAY_US BATCH [noresume]\n");
        return 2;
    }
    const QString workspacePath = args.at(1);
    ts::Workspace workspace;
    if (!workspace.open(workspacePath)) {
        std::fprintf(stderr, "%s\n", qPrintable(workspace.errorString()));
        return 1;
    }
    ts::WorkspaceWriter writer;
    if (!writer.start(workspacePath)) {
        std::fprintf(stderr, "%s\n", qPrintable(writer.errorString()));
        return 1;
    }
    ts::test::TestLineReader reader;
    reader.delayMicrosecondsPerRecord = args.at(3).toInt();
    reader.resumable = args.size() == 5;
    ts::ImportOptions options;
    options.batchRecords = args.at(4).toLongLong();
    const ts::ImportResult result = ts::importFile(workspace, writer, args.at(2), reader, options);
    const bool finished = writer.finish();
    std::printf(
        "%s: %lld events, %lld malformed\n", qPrintable(ts::importStatusName(result.status)),
        static_cast<long long>(result.eventsAdded), static_cast<long long>(result.malformedAdded));
    return result.ok() && finished ? 0 : 1;
}
