#include "userguide.h"

#include <QCoreApplication>
#include <QDesktopServices>
#include <QDir>
#include <QFileInfo>
#include <QMessageBox>
#include <QUrl>

namespace ts::app {

namespace {

QString installedGuide(const QString &applicationDir)
{
    return QDir::cleanPath(applicationDir + u'/' + QStringLiteral(THROTTLESCOPE_DOC_FROM_BIN) +
                           u"/README.md");
}

} // namespace

QString userGuidePath(const QString &applicationDir)
{
    const QString installed = installedGuide(applicationDir);
    if (QFileInfo::exists(installed))
        return installed;
    // Only an executable of this build tree reads the checkout: an installed one never
    // depends on where it was built.
    const QString buildTree = QDir::cleanPath(QStringLiteral(THROTTLESCOPE_BUILD_DIR)) + u'/';
    const QString sourceGuide = QStringLiteral(THROTTLESCOPE_SOURCE_DIR "/README.md");
    if (QString(QDir::cleanPath(applicationDir) + u'/').startsWith(buildTree) &&
        QFileInfo::exists(sourceGuide))
        return sourceGuide;
    return {};
}

void openUserGuide(QWidget *parent)
{
    const QString applicationDir = QCoreApplication::applicationDirPath();
    const QString guide = userGuidePath(applicationDir);
    if (guide.isEmpty()) {
        QMessageBox::information(
            parent, QCoreApplication::translate("UserGuide", "User Guide"),
            QCoreApplication::translate("UserGuide",
                                        "The user guide is not installed here (%1). It is part of "
                                        "the package, and online with the source code; "
                                        "`man throttlescope` describes every command.")
                .arg(QDir::toNativeSeparators(installedGuide(applicationDir))));
        return;
    }
    if (!QDesktopServices::openUrl(QUrl::fromLocalFile(guide))) {
        QMessageBox::information(parent, QCoreApplication::translate("UserGuide", "User Guide"),
                                 QCoreApplication::translate("UserGuide",
                                                             "No application opened the user "
                                                             "guide: it is %1")
                                     .arg(QDir::toNativeSeparators(guide)));
    }
}

} // namespace ts::app
