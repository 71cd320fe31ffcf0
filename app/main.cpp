// Composition root: decide between a headless command and the dashboard, then hand over.
#include "cli.h"

#include <QApplication>
#include <QCoreApplication>
#include <QMainWindow>

#include <memory>

int main(int argc, char *argv[])
{
    if (ts::app::isHeadlessInvocation(argc, argv)) {
        QCoreApplication app(argc, argv);
        QCoreApplication::setApplicationName(QStringLiteral("throttlescope"));
        QCoreApplication::setApplicationVersion(QStringLiteral(THROTTLESCOPE_VERSION));
        return ts::app::runHeadless(app.arguments());
    }
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Throttlescope"));
    QApplication::setOrganizationName(QStringLiteral("Throttlescope"));
    QApplication::setApplicationVersion(QStringLiteral(THROTTLESCOPE_VERSION));
    QMainWindow window;
    window.setWindowTitle(QStringLiteral("Throttlescope"));
    window.resize(1280, 800);
    window.show();
    return QApplication::exec();
}
