#pragma once
// Runs the built throttlescope binary as an operator or a script would: arguments, optional
// standard input; exit code and both output streams back. For the tests in tests/cli/.

#include <QByteArray>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace ts::test {

inline QString appBinary()
{
    const QString fromEnv = qEnvironmentVariable("TS_APP_BINARY");
    return fromEnv.isEmpty() ? QStringLiteral(TS_APP_BINARY) : fromEnv;
}

struct AppRun
{
    int exitCode = -1; // -1: did not start, crashed, or did not finish in time
    QByteArray out;
    QByteArray err;
};

inline AppRun runApp(const QStringList &args, const QByteArray &stdinData = {})
{
    QProcess process;
    process.start(appBinary(), args);
    if (!process.waitForStarted())
        return {};
    if (!stdinData.isNull())
        process.write(stdinData);
    process.closeWriteChannel();
    if (!process.waitForFinished(120000)) {
        process.kill();
        process.waitForFinished();
        return {-1, process.readAllStandardOutput(), process.readAllStandardError()};
    }
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
            process.readAllStandardOutput(), process.readAllStandardError()};
}

} // namespace ts::test
