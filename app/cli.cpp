#include "cli.h"

#include <QTextStream>

#include <cstring>

namespace ts::app {

bool isHeadlessInvocation(int argc, char *argv[])
{
    if (argc < 2)
        return false;
    for (const char *command : {"report", "import", "--version", "-v", "--help", "-h"}) {
        if (std::strcmp(argv[1], command) == 0)
            return true;
    }
    return false;
}

int runHeadless(const QStringList &arguments)
{
    QTextStream out(stdout);
    if (arguments.value(1) == u"--version" || arguments.value(1) == u"-v") {
        out << "throttlescope " << THROTTLESCOPE_VERSION << Qt::endl;
        return 0;
    }
    return 2;
}

} // namespace ts::app
