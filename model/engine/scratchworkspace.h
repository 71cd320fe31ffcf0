#pragma once
// The dashboard's scratch workspaces: the temporary SQLite file a session writes everything it
// reads to (for the Events page), until it is saved. They hold the user's request logs, so they
// are private to the user (0600, and SQLite gives the -wal and -shm files the same mode), they
// go when their session ends, and the ones a crashed dashboard left behind are offered back at
// the next start (store/scratchrecovery.h). Only a dashboard's own files are touched: the name says
// whose they are
// ("throttlescope-session-<pid>-<tag>.db" in the temporary directory).

#include <QString>
#include <QStringList>

namespace ts {

// Where scratch workspaces live (the system's temporary directory unless a test says otherwise).
[[nodiscard]] QString scratchWorkspaceDirectory();
// A new name for this process's scratch workspace (`tag` tells several sessions apart).
[[nodiscard]] QString newScratchWorkspacePath(quintptr tag);
// Whether the path names a scratch workspace (any process's): never offered in Recent, never
// the title of the window.
[[nodiscard]] bool isScratchWorkspacePath(const QString &path);
// Creates `path` empty and readable by its owner only, before SQLite opens it.
bool createPrivateFile(const QString &path, QString *error);
// Removes a scratch workspace with its -wal, -shm and -journal files.
void removeScratchWorkspace(const QString &path);
// The scratch workspaces of dashboards that are no longer running (their process is gone),
// the caller's own regular files only.
[[nodiscard]] QStringList
orphanedScratchWorkspaces(const QString &directory = scratchWorkspaceDirectory());
// Removes them all; returns how many were removed. What they hold is lost: the dashboard asks
// first (store/scratchrecovery.h).
int removeOrphanedScratchWorkspaces(const QString &directory = scratchWorkspaceDirectory());

} // namespace ts
