#pragma once
// Help > User Guide: the guide installed with the package (README.md, with docs/ beside it, in
// share/doc/throttlescope/), or in a build tree the checkout's own README.md.

#include <QString>

class QWidget;

namespace ts::app {

// The guide for an executable in `applicationDir`: the installed README.md relative to it, else,
// for an executable inside the build tree, the source checkout's; empty when there is none.
QString userGuidePath(const QString &applicationDir);

// Opens the guide with the desktop's viewer (QDesktopServices); says where it was looked for
// when it is not installed (a system that leaves out /usr/share/doc) or nothing opened it.
void openUserGuide(QWidget *parent);

} // namespace ts::app
