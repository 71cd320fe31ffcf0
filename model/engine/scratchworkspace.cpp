#include "engine/scratchworkspace.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ts {

namespace {
const QString kPrefix = QStringLiteral("throttlescope-session-");

const QRegularExpression &scratchName()
{
    static const QRegularExpression pattern(
        QStringLiteral("^throttlescope-session-(\\d+)-[0-9a-f]+\\.db$"));
    return pattern;
}

bool processAlive(qint64 pid)
{
    if (pid <= 0)
        return false;
    // EPERM: it exists but belongs to someone else (its files are not ours to remove).
    return ::kill(pid_t(pid), 0) == 0 || errno == EPERM;
}
} // namespace

QString scratchWorkspaceDirectory()
{
    return QDir::tempPath();
}

QString newScratchWorkspacePath(quintptr tag)
{
    return QDir(scratchWorkspaceDirectory())
        .filePath(
            kPrefix +
            QStringLiteral("%1-%2.db").arg(QCoreApplication::applicationPid()).arg(tag, 0, 16));
}

bool isScratchWorkspacePath(const QString &path)
{
    return scratchName().match(QFileInfo(path).fileName()).hasMatch();
}

bool createPrivateFile(const QString &path, QString *error)
{
    const QByteArray native = QFile::encodeName(path);
    // O_EXCL: never adopt a file someone else placed there first.
    const int fd = ::open(native.constData(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (error)
            *error =
                QStringLiteral("%1: %2").arg(path, QString::fromLocal8Bit(std::strerror(errno)));
        return false;
    }
    // The mode given to open() is masked by the umask only to remove bits: 0600 stays 0600
    // or less; fchmod makes it exactly that.
    ::fchmod(fd, 0600);
    ::close(fd);
    return true;
}

void removeScratchWorkspace(const QString &path)
{
    if (path.isEmpty())
        return;
    for (const QString &suffix :
         {QString(), QStringLiteral("-wal"), QStringLiteral("-shm"), QStringLiteral("-journal")})
        QFile::remove(path + suffix);
}

QStringList orphanedScratchWorkspaces(const QString &directory)
{
    const QDir dir(directory);
    const QStringList names =
        dir.entryList({kPrefix + QStringLiteral("*.db")}, QDir::Files | QDir::Hidden,
                      QDir::Time | QDir::Reversed);
    QStringList orphans;
    const uid_t me = ::getuid();
    for (const QString &name : names) {
        const QRegularExpressionMatch match = scratchName().match(name);
        if (!match.hasMatch())
            continue;
        const QString path = dir.filePath(name);
        struct stat info
        {
        };
        if (::lstat(QFile::encodeName(path).constData(), &info) != 0 || info.st_uid != me ||
            !S_ISREG(info.st_mode))
            continue; // only our own regular files
        if (processAlive(match.captured(1).toLongLong()))
            continue;
        orphans.append(path);
    }
    return orphans;
}

int removeOrphanedScratchWorkspaces(const QString &directory)
{
    const QStringList orphans = orphanedScratchWorkspaces(directory);
    for (const QString &path : orphans)
        removeScratchWorkspace(path);
    return int(orphans.size());
}

} // namespace ts
