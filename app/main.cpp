// Composition root: decide between a headless command and the dashboard, then hand over.
//
// The dashboard lives in a module (throttlescope-dashboard.so) loaded here only when it is
// asked for. Linked into the executable, Qt Widgets, Qt Gui, QCustomPlot and what they pull in
// (X11, fonts, GL: ~50 libraries) were mapped and relocated by every headless command: ~18
// million instructions, ~6 ms, which was half of the start-up of a one-line `report`.
#include "cli.h"

#include <QCoreApplication>

#include <dlfcn.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace {

using DashboardMain = int (*)(int, char **);

// Where the module may be: next to the executable (a build tree), or where `cmake --install`
// puts it relative to the executable's bin/ directory.
std::vector<std::filesystem::path> dashboardModuleCandidates(const char *argv0)
{
    std::error_code error;
    std::filesystem::path executable = std::filesystem::read_symlink("/proc/self/exe", error);
    if (error)
        executable = std::filesystem::absolute(argv0, error);
    const std::filesystem::path directory = executable.parent_path();
    return {directory / THROTTLESCOPE_DASHBOARD_MODULE,
            directory / THROTTLESCOPE_DASHBOARD_INSTALL_DIR / THROTTLESCOPE_DASHBOARD_MODULE};
}

int runDashboard(int argc, char *argv[])
{
    std::string failures;
    for (const std::filesystem::path &candidate : dashboardModuleCandidates(argv[0])) {
        std::error_code error;
        if (!std::filesystem::exists(candidate, error))
            continue;
        // RTLD_NOW: a missing library is reported here, not at some later call.
        void *module = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!module) {
            failures += std::string("\n  ") + dlerror();
            continue;
        }
        const auto entry =
            reinterpret_cast<DashboardMain>(dlsym(module, "throttlescope_dashboard_main"));
        if (!entry) {
            failures += "\n  " + candidate.string() + ": no throttlescope_dashboard_main";
            continue;
        }
        return entry(argc, argv); // (the module stays loaded until the process ends)
    }
    if (failures.empty()) {
        std::fprintf(stderr,
                     "throttlescope: cannot start the dashboard: %s not found next to the "
                     "executable or in %s\n",
                     THROTTLESCOPE_DASHBOARD_MODULE, THROTTLESCOPE_DASHBOARD_INSTALL_DIR);
    } else { // found, but it would not load: say why, not "not found"
        std::fprintf(stderr, "throttlescope: cannot start the dashboard: %s did not load:%s\n",
                     THROTTLESCOPE_DASHBOARD_MODULE, failures.c_str());
    }
    std::fprintf(stderr, "(the headless commands still work: throttlescope --help)\n");
    return 1;
}

} // namespace

int main(int argc, char *argv[])
{
    if (ts::app::isHeadlessInvocation(argc, argv)) {
        QCoreApplication app(argc, argv);
        QCoreApplication::setApplicationName(QStringLiteral("throttlescope"));
        QCoreApplication::setApplicationVersion(QStringLiteral(THROTTLESCOPE_VERSION));
        return ts::app::runHeadless(app.arguments());
    }
    return runDashboard(argc, argv);
}
