#pragma once
// What a crashed dashboard left in its scratch workspace (engine/scratchworkspace.h). Its
// listener answered 200 for every event it committed there: those events are the user's and
// are kept until the user says what to do with them (issue 29.4). An orphan that holds no
// event (or is not a workspace at all) has nothing to lose and is removed.

#include <QList>
#include <QString>

namespace ts {

struct OrphanedScratch
{
    QString path;       // the scratch workspace a dashboard no longer running left behind
    qint64 events = 0;  // events it holds (committed: a listener may have acknowledged them)
    qint64 sources = 0; // sources (files, feeds) they came from
};

// The scratch workspaces in `directory` whose dashboard is gone and that hold events, oldest
// first; the ones that hold none are removed. Never touches a running dashboard's file.
QList<OrphanedScratch> findOrphanedScratchWorkspaces(const QString &directory = QString());

// Copies an orphan's committed contents (its WAL included) into a new workspace file at
// `destination`, then removes the orphan. False and *error when it could not: the orphan stays.
bool recoverScratchWorkspace(const QString &orphan, const QString &destination, QString *error);

// The question the dashboard asks: "Recover 5,000 events received before the crash?".
QString recoveryQuestion(const OrphanedScratch &orphan);

} // namespace ts
