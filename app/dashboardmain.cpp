// The dashboard's entry point, in a module of its own (throttlescope-dashboard.so) that main()
// loads only when no headless command was given: see app/main.cpp.
#include "dashboardcontroller.h"

#include <QApplication>
#include <QIcon>
#include <QTextStream>

namespace {

// Parses the dashboard's own options; everything else is a file to open.
bool parseDashboardOptions(const QStringList &args, ts::app::DashboardOptions &options)
{
    QTextStream err(stderr);
    for (qsizetype i = 1; i < args.size(); ++i) {
        const QString &arg = args[i];
        auto next = [&](QString &value) {
            if (i + 1 >= args.size()) {
                err << "throttlescope: " << arg << " needs a value" << Qt::endl;
                return false;
            }
            value = args[++i];
            return true;
        };
        QString value;
        if (arg == u"--demo") {
            options.demo = true;
        } else if (arg == u"--speed") {
            if (!next(value))
                return false;
            options.demoSpeed = value.toDouble();
            if (*options.demoSpeed <= 0) {
                err << "throttlescope: --speed needs a positive number" << Qt::endl;
                return false;
            }
        } else if (arg == u"--screenshot") {
            if (!next(options.screenshotPath))
                return false;
        } else if (arg == u"--size") {
            if (!next(value))
                return false;
            const QStringList parts = value.split(u'x');
            const int width = parts.value(0).toInt();
            const int height = parts.value(1).toInt();
            if (parts.size() != 2 || width < 200 || height < 150) {
                err << "throttlescope: --size takes WIDTHxHEIGHT, e.g. 1600x1000" << Qt::endl;
                return false;
            }
            options.screenshotSize = QSize(width, height);
        } else if (arg == u"--page") {
            if (!next(options.screenshotPage))
                return false;
        } else if (arg == u"--reorder-window") {
            if (!next(value))
                return false;
            bool ok = false;
            const double seconds = value.toDouble(&ok);
            if (value == u"auto") {
                options.reorderWindowMs = -1;
            } else if (ok && seconds >= 0 && seconds <= 3600) {
                options.reorderWindowMs = qint64(seconds * 1000);
            } else {
                err << "throttlescope: --reorder-window takes seconds (0 to 3600) or auto"
                    << Qt::endl;
                return false;
            }
        } else if (arg == u"--screenshot-delay") {
            if (!next(value))
                return false;
            options.screenshotDelayMs = value.toInt();
        } else if (arg.startsWith(u"--")) {
            err << "throttlescope: unknown option " << arg << " (see throttlescope --help)"
                << Qt::endl;
            return false;
        } else {
            options.files << arg;
        }
    }
    return true;
}

// A screenshot needs no screen: without a display (a CI job, ssh), render offscreen instead of
// aborting in the xcb plugin. An explicit QT_QPA_PLATFORM is left alone.
void useOffscreenForHeadlessScreenshots(int argc, char *argv[])
{
    bool screenshot = false;
    for (int i = 1; i < argc; ++i)
        screenshot = screenshot || qstrcmp(argv[i], "--screenshot") == 0;
    if (screenshot && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") &&
        qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
}

} // namespace

extern "C" Q_DECL_EXPORT int throttlescope_dashboard_main(int argc, char *argv[])
{
    useOffscreenForHeadlessScreenshots(argc, argv);
    QApplication::setHighDpiScaleFactorRoundingPolicy(
        Qt::HighDpiScaleFactorRoundingPolicy::PassThrough);
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Throttlescope"));
    QApplication::setOrganizationName(QStringLiteral("Throttlescope"));
    QApplication::setApplicationVersion(QStringLiteral(THROTTLESCOPE_VERSION));
    // The desktop entry and icon the package installs (installer/): the shell groups the
    // window with its menu entry, and the window shows the icon of the theme.
    QGuiApplication::setDesktopFileName(QStringLiteral(THROTTLESCOPE_APP_ID));
    QApplication::setWindowIcon(QIcon::fromTheme(QStringLiteral(THROTTLESCOPE_APP_ID)));
    ts::app::DashboardOptions options;
    if (!parseDashboardOptions(QApplication::arguments(), options))
        return 2;
    ts::app::DashboardController controller(options);
    controller.start();
    return QApplication::exec();
}
