#pragma once
// The headless command line: report, import, and friends. See docs/report-json.md.

#include <QStringList>

namespace ts::app {

// True when argv names a headless command (report, import, --version, --help ...), so main()
// can avoid creating a QApplication (no display needed).
bool isHeadlessInvocation(int argc, char *argv[]);
int runHeadless(const QStringList &arguments);

} // namespace ts::app
