#include "filetailer.h"

#include "core/contenthash.h"

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QMutexLocker>
#include <QSet>
#include <QTimer>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace ts::live {

namespace {

// Large reads keep the syscall count low when a file is caught up after a pause; a batch is
// still split by line count before it is handed out.
constexpr qint64 kReadChunk = 1 << 20;
// Bytes from the start of a file remembered to notice "truncated and written again past the old
// length" between two polls, which the size alone cannot show, and to recognise its content.
constexpr qsizetype kHeadFingerprint = kTailHeadBytes;

QByteArray encodedPath(const QString &path)
{
    return QFile::encodeName(path);
}

QString errnoText()
{
    return QString::fromLocal8Bit(std::strerror(errno));
}

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

// pread until `size` bytes or end of file; returns what was read.
QByteArray readAt(int fd, qint64 offset, qint64 size)
{
    QByteArray buffer(size, Qt::Uninitialized);
    qint64 done = 0;
    while (done < size) {
        const ssize_t got =
            ::pread(fd, buffer.data() + done, size_t(size - done), off_t(offset + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        done += got;
    }
    buffer.truncate(done);
    return buffer;
}

// The path an open file has now (Linux /proc), empty when deleted or unknown.
QString currentName(int fd)
{
    const QByteArray link = QByteArrayLiteral("/proc/self/fd/") + QByteArray::number(fd);
    char target[4096];
    const ssize_t length = ::readlink(link.constData(), target, sizeof target - 1);
    if (length <= 0)
        return {};
    const QString name = QFile::decodeName(QByteArray(target, length));
    if (name.endsWith(u" (deleted)") || !name.startsWith(u'/'))
        return {};
    return name;
}

} // namespace

struct FileTailer::Tracked
{
    QString path; // current name; for an orphan the last name it was seen under
    int fd = -1;
    quint64 device = 0;
    quint64 inode = 0;
    qint64 readOffset = 0; // bytes consumed from the file, including `partial`
    qint64 line = 0;       // complete lines handed out
    QByteArray partial;    // an incomplete last line, held until its '\n' arrives
    QByteArray head;       // the file's first committed bytes, see kHeadFingerprint
    QByteArray headHash;   // headHashOf(head)
    // Adopted at the offset of its content (a copy) that it has not reached yet: until it
    // does, being shorter than readOffset is not a truncation, and nothing is read.
    bool catchingUp = false;
    qint64 lastSize = -1;
    qint64 lastMtimeNs = -1;
    qint64 orphanSinceMs = -1; // >= 0: no candidate name points to this file any more
    // A rotated sibling of a file followed by name, adopted for the lines it holds: drained
    // and then closed like an orphan, without a fileRemoved for it.
    bool drainOnly = false;

    ~Tracked()
    {
        if (fd >= 0)
            ::close(fd);
    }
    [[nodiscard]] qint64 committedOffset() const { return readOffset - partial.size(); }
};

FileTailer::FileTailer(QObject *parent) : QObject(parent)
{
    qRegisterMetaType<ts::live::TailBatch>();
    qRegisterMetaType<ts::live::TailPosition>();
}

FileTailer::~FileTailer() = default;

void FileTailer::setPollInterval(int milliseconds)
{
    m_pollIntervalMs = qMax(10, milliseconds);
    if (m_pollTimer)
        m_pollTimer->setInterval(m_pollIntervalMs);
}

void FileTailer::setBatchCallback(BatchCallback callback)
{
    m_callback = std::move(callback);
}

void FileTailer::setMaxBatchLines(int lines)
{
    m_maxBatchLines = qMax(1, lines);
}

void FileTailer::setOrphanGraceMs(int milliseconds)
{
    m_orphanGraceMs = qMax(0, milliseconds);
}

void FileTailer::setFileSystemWatcherEnabled(bool enabled)
{
    m_useWatcher = enabled;
}

void FileTailer::addFile(const QString &path)
{
    m_watches.append({QFileInfo(path).absoluteFilePath(), {}});
    if (m_running)
        schedulePoll();
}

void FileTailer::addDirectory(const QString &directory, const QStringList &nameFilters)
{
    m_watches.append({QFileInfo(directory).absoluteFilePath(),
                      nameFilters.isEmpty() ? QStringList{QStringLiteral("*")} : nameFilters});
    if (m_running)
        schedulePoll();
}

void FileTailer::setStartPositions(const QList<TailPosition> &positions)
{
    m_startPositions = positions;
    m_startPositionUsed = QList<bool>(positions.size(), false);
    m_startRecovered = false;
    for (auto &position : m_startPositions)
        position.path = QFileInfo(position.path).absoluteFilePath();
}

QList<TailPosition> FileTailer::positions() const
{
    QMutexLocker locker(&m_positionsMutex);
    return m_positions.values();
}

qint64 FileTailer::linesDelivered() const
{
    QMutexLocker locker(&m_positionsMutex);
    return m_linesDelivered;
}

void FileTailer::start()
{
    if (m_running)
        return;
    m_running = true;
    if (!m_pollTimer) {
        m_pollTimer = new QTimer(this);
        m_pollTimer->setTimerType(Qt::PreciseTimer);
        connect(m_pollTimer, &QTimer::timeout, this, &FileTailer::pollNow);
        // The watcher only shortens the wait; a short single-shot coalesces an event burst
        // (one write can fire several notifications) into one poll.
        m_wakeTimer = new QTimer(this);
        m_wakeTimer->setSingleShot(true);
        m_wakeTimer->setInterval(2);
        connect(m_wakeTimer, &QTimer::timeout, this, &FileTailer::pollNow);
        m_watcher = new QFileSystemWatcher(this);
        connect(m_watcher, &QFileSystemWatcher::fileChanged, this, &FileTailer::schedulePoll);
        connect(m_watcher, &QFileSystemWatcher::directoryChanged, this, &FileTailer::schedulePoll);
    }
    m_pollTimer->setInterval(m_pollIntervalMs);
    m_pollTimer->start();
    pollNow();
}

void FileTailer::stop()
{
    if (!m_running)
        return;
    // One last poll so that everything written before stop() is delivered.
    pollNow();
    m_running = false;
    if (m_pollTimer)
        m_pollTimer->stop();
    if (m_wakeTimer)
        m_wakeTimer->stop();
}

void FileTailer::schedulePoll()
{
    if (m_running && m_wakeTimer && !m_wakeTimer->isActive())
        m_wakeTimer->start();
}

void FileTailer::scanCandidates(QStringList &candidates)
{
    for (const Watch &watch : std::as_const(m_watches)) {
        if (watch.nameFilters.isEmpty()) {
            candidates.append(watch.path);
            continue;
        }
        const QDir dir(watch.path);
        // Sorted by name so that files present at start are read in a stable order
        // (app.log.2 before app.log.1 is not guessable; name order is at least deterministic).
        const QStringList names =
            dir.entryList(watch.nameFilters, QDir::Files | QDir::Hidden, QDir::Name);
        for (const QString &name : names)
            candidates.append(dir.absoluteFilePath(name));
    }
}

FileTailer::Tracked *FileTailer::findByIdentity(quint64 device, quint64 inode)
{
    for (const auto &tracked : m_tracked) {
        if (tracked->device == device && tracked->inode == inode)
            return tracked.get();
    }
    return nullptr;
}

FileTailer::StartDecision FileTailer::decideStart(const QString &path, int fd, quint64 device,
                                                  quint64 inode, qint64 size)
{
    StartDecision decision;
    decision.position = TailPosition{path, 0, 0, device, inode};
    const QByteArray head = readAt(fd, 0, qMin<qint64>(kHeadFingerprint, size));
    QHash<qint64, QByteArray> prefixHashes; // by length: positions share a few head lengths
    auto startsWith = [&](qint64 length, const QByteArray &hash) {
        if (length > head.size())
            return false;
        auto it = prefixHashes.constFind(length);
        if (it == prefixHashes.cend())
            it = prefixHashes.insert(length, headHashOf(QByteArrayView(head).first(length)));
        return *it == hash;
    };

    // Its own positions (a renamed file may have several: one per name it was followed under)
    // and those of the same content elsewhere; the furthest of each kind.
    std::optional<TailPosition> own;
    std::optional<TailPosition> sameContent;
    qsizetype ownIndex = -1;
    qsizetype sameContentIndex = -1;
    bool ownContentChanged = false;
    auto consider = [](std::optional<TailPosition> &best, qsizetype &bestIndex,
                       const TailPosition &candidate, qsizetype index) {
        if (!best || candidate.offset > best->offset) {
            best = candidate;
            bestIndex = index;
        }
    };
    for (qsizetype i = 0; i < m_startPositions.size(); ++i) {
        const TailPosition &stored = m_startPositions.at(i);
        const bool sameFile = stored.inode != 0 && stored.device == device && stored.inode == inode;
        if (stored.headLength <= 0 || stored.headHash.isEmpty()) {
            // No head known (an older workspace): trusted by identity, else by name.
            if (sameFile || (stored.inode == 0 && stored.path == path))
                consider(own, ownIndex, stored, i);
            continue;
        }
        if (!startsWith(stored.headLength, stored.headHash)) {
            ownContentChanged = ownContentChanged || sameFile;
            continue;
        }
        if (sameFile)
            consider(own, ownIndex, stored, i);
        else
            consider(sameContent, sameContentIndex, stored, i);
    }
    // A copy of a file followed now, made while running.
    bool maybeCopyInProgress = false;
    for (const auto &tracked : m_tracked) {
        if (tracked->head.isEmpty())
            continue;
        if (head.size() >= tracked->head.size()) {
            if (head.startsWith(tracked->head)) {
                consider(sameContent, sameContentIndex,
                         TailPosition{path, tracked->committedOffset(), tracked->line, device,
                                      inode, tracked->head.size(), tracked->headHash},
                         -1);
            }
        } else if (tracked->head.startsWith(head)) {
            maybeCopyInProgress = true;
        }
    }

    if (own || ownContentChanged)
        forgetIdentity(path, device, inode);
    if (own) {
        if (own->offset <= size) {
            decision.position = *own;
            decision.matched = true;
            decision.startIndex = ownIndex;
        } else {
            decision.truncated = true; // cut below what was read of it
        }
    } else if (ownContentChanged) {
        decision.truncated = true; // rewritten with other content (or its inode was reused)
    } else if (sameContent) {
        decision.position = *sameContent;
        decision.catchingUp = sameContent->offset > size;
        decision.matched = true;
        decision.startIndex = sameContentIndex;
    } else if (maybeCopyInProgress) {
        decision.defer = true;
    }
    decision.position.path = path;
    decision.position.device = device;
    decision.position.inode = inode;
    return decision;
}

// A position names its file once: an inode (or, without one, a name) met again later in this
// session is another file. Its head still recognises copies of its content.
void FileTailer::forgetIdentity(const QString &path, quint64 device, quint64 inode)
{
    for (TailPosition &stored : m_startPositions) {
        const bool sameFile = stored.inode != 0 && stored.device == device && stored.inode == inode;
        const bool headless = stored.headLength <= 0 || stored.headHash.isEmpty();
        if (sameFile || (headless && stored.inode == 0 && stored.path == path)) {
            stored.device = 0;
            stored.inode = 0;
            if (headless)
                stored.path.clear(); // nothing left to recognise it by
        }
    }
}

void FileTailer::pollNow()
{
    if (m_polling)
        return;
    m_polling = true;

    QStringList candidates;
    scanCandidates(candidates);

    QSet<const Tracked *> seen;
    if (!m_startRecovered)
        recoverRotatedAtStart(seen);
    for (const QString &path : std::as_const(candidates))
        openCandidate(path, /*recoveryOnly=*/false, seen);

    // Oldest first: the tail of a rotated file is delivered before the head of its successor.
    const qint64 now = nowMs();
    for (const auto &tracked : m_tracked) {
        if (!seen.contains(tracked.get()) && tracked->orphanSinceMs < 0 && !tracked->drainOnly) {
            tracked->orphanSinceMs = now;
            // Renamed outside what we watch (app.log -> app.log.1): name its remaining lines
            // after the file's new name, so sources and positions stay tied to the right file.
            const QString renamedTo = currentName(tracked->fd);
            if (!renamedTo.isEmpty() && renamedTo != tracked->path) {
                const QString oldPath = tracked->path;
                tracked->path = renamedTo;
                emit fileRotated(oldPath, renamedTo);
            } else {
                emit fileRemoved(tracked->path);
            }
        }
        readAvailable(*tracked);
    }
    // Copies found while reading (drainCopyOf) hold older lines than what follows: first.
    for (auto &adopted : m_adopted)
        m_tracked.insert(m_tracked.begin(), std::move(adopted));
    m_adopted.clear();

    for (auto it = m_tracked.begin(); it != m_tracked.end();) {
        Tracked &file = **it;
        if (file.orphanSinceMs >= 0 && now - file.orphanSinceMs >= m_orphanGraceMs) {
            closeOrphan(file);
            it = m_tracked.erase(it);
        } else {
            ++it;
        }
    }

    refreshWatcher(candidates);
    m_polling = false;
}

void FileTailer::readAvailable(Tracked &file)
{
    struct stat info;
    if (::fstat(file.fd, &info) != 0) {
        emit errorOccurred(file.path, errnoText());
        return;
    }
    const qint64 size = qint64(info.st_size);
    const qint64 mtimeNs = qint64(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec;
    const bool changed = size != file.lastSize || mtimeNs != file.lastMtimeNs;
    file.lastSize = size;
    file.lastMtimeNs = mtimeNs;
    if (!changed && size == file.readOffset)
        return;
    if (file.catchingUp) {
        if (size < file.readOffset)
            return; // a copy still being written, or an older one: nothing new in it yet
        file.catchingUp = false;
        refreshHead(file, file.readOffset);
    }

    // copytruncate (same inode, shorter), or truncated and rewritten beyond the old length
    // between two polls (the first bytes differ).
    bool truncated = size < file.readOffset;
    if (!truncated && !file.head.isEmpty() && changed)
        truncated = readAt(file.fd, 0, file.head.size()) != file.head;
    if (truncated && isWatchedFile(file.path) && !drainCopyOf(file) && file.line > 0) {
        emit linesUnrecoverable(
            file.path, file.line,
            QStringLiteral("truncated (copytruncate?) and no rotated copy of it holds its "
                           "content: lines written after line %1 and before the truncation, "
                           "if any, are lost")
                .arg(file.line));
    }
    if (truncated) {
        file.readOffset = 0;
        file.line = 0;
        file.partial.clear();
        file.head.clear();
        file.headHash.clear();
        publishPosition(file);
        emit fileTruncated(file.path);
    }

    QList<TailLine> lines;
    while (true) {
        const QByteArray chunk = readAt(file.fd, file.readOffset, kReadChunk);
        if (chunk.isEmpty())
            break;
        qint64 lineStart = file.committedOffset();
        file.readOffset += chunk.size();
        QByteArray data = file.partial.isEmpty() ? chunk : file.partial + chunk;
        file.partial.clear();
        qsizetype from = 0;
        while (true) {
            const qsizetype newline = data.indexOf('\n', from);
            if (newline < 0)
                break;
            qsizetype end = newline;
            if (end > from && data.at(end - 1) == '\r')
                --end;
            lines.append(TailLine{data.sliced(from, end - from), ++file.line, lineStart});
            lineStart += newline + 1 - from;
            from = newline + 1;
            if (lines.size() >= m_maxBatchLines)
                emitLines(file, lines, lineStart);
        }
        file.partial = data.sliced(from);
        if (chunk.size() < kReadChunk)
            break;
    }
    emitLines(file, lines, file.committedOffset());
}

void FileTailer::refreshHead(Tracked &file, qint64 upTo)
{
    // The head covers committed bytes only, so that a file cut back to its committed offset
    // (an unfinished last line dropped) still starts with it.
    const qint64 wanted = qMin<qint64>(kHeadFingerprint, upTo);
    if (file.head.size() >= wanted)
        return;
    file.head = readAt(file.fd, 0, wanted);
    file.headHash = headHashOf(file.head);
}

void FileTailer::emitLines(Tracked &file, QList<TailLine> &lines, qint64 endOffset)
{
    if (lines.isEmpty())
        return;
    refreshHead(file, endOffset);
    TailBatch batch;
    batch.path = file.path;
    batch.device = file.device;
    batch.inode = file.inode;
    batch.lines = std::move(lines);
    lines = {};
    batch.endLine = batch.lines.constLast().line;
    batch.endOffset = endOffset;
    batch.headLength = file.head.size();
    batch.headHash = file.headHash;
    const qint64 count = batch.lines.size();
    if (m_callback)
        m_callback(batch);
    {
        QMutexLocker locker(&m_positionsMutex);
        m_positions.insert({file.device, file.inode},
                           TailPosition{file.path, batch.endOffset, batch.endLine, file.device,
                                        file.inode, batch.headLength, batch.headHash});
        m_linesDelivered += count;
    }
    emit linesReady(batch);
}

void FileTailer::publishPosition(const Tracked &file)
{
    QMutexLocker locker(&m_positionsMutex);
    m_positions.insert({file.device, file.inode},
                       TailPosition{file.path, file.committedOffset(), file.line, file.device,
                                    file.inode, file.head.size(), file.headHash});
}

void FileTailer::forgetPosition(const Tracked &file)
{
    QMutexLocker locker(&m_positionsMutex);
    m_positions.remove({file.device, file.inode});
}

void FileTailer::closeOrphan(Tracked &file)
{
    // The file will never grow again as far as we can tell: a last line without its '\n' is
    // still a line the writer produced, so it is handed out rather than lost.
    if (!file.partial.isEmpty()) {
        QByteArray text = file.partial;
        if (text.endsWith('\r'))
            text.chop(1);
        QList<TailLine> lines{TailLine{text, ++file.line, file.committedOffset()}};
        file.partial.clear();
        emitLines(file, lines, file.readOffset);
    }
    forgetPosition(file);
}

FileTailer::Tracked *FileTailer::openCandidate(const QString &path, bool recoveryOnly,
                                               QSet<const Tracked *> &seen)
{
    struct stat info;
    if (::stat(encodedPath(path).constData(), &info) != 0 || !S_ISREG(info.st_mode))
        return nullptr;
    if (Tracked *tracked = findByIdentity(quint64(info.st_dev), quint64(info.st_ino))) {
        if (recoveryOnly)
            return nullptr;
        if (tracked->path != path) {
            const QString oldPath = tracked->path;
            tracked->path = path;
            emit fileRotated(oldPath, path);
        }
        tracked->orphanSinceMs = -1;
        tracked->drainOnly = false;
        seen.insert(tracked);
        return tracked;
    }
    const int fd = ::open(encodedPath(path).constData(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        emit errorOccurred(path, errnoText());
        return nullptr;
    }
    // Identity from the open handle: the name may have been replaced since stat().
    struct stat opened;
    if (::fstat(fd, &opened) != 0) {
        ::close(fd);
        return nullptr;
    }
    if (Tracked *already = findByIdentity(quint64(opened.st_dev), quint64(opened.st_ino))) {
        ::close(fd);
        if (!recoveryOnly)
            seen.insert(already);
        return nullptr;
    }
    const StartDecision start = decideStart(path, fd, quint64(opened.st_dev),
                                            quint64(opened.st_ino), qint64(opened.st_size));
    if (start.defer || (recoveryOnly && !start.matched)) {
        ::close(fd); // looked at again by the next poll (a sibling: never read from its start)
        return nullptr;
    }
    if (start.startIndex >= 0)
        m_startPositionUsed[start.startIndex] = true;
    auto file = std::make_unique<Tracked>();
    file->path = path;
    file->fd = fd;
    file->device = quint64(opened.st_dev);
    file->inode = quint64(opened.st_ino);
    file->readOffset = start.position.offset;
    file->line = start.position.line;
    file->catchingUp = start.catchingUp;
    if (!file->catchingUp)
        refreshHead(*file, file->readOffset);
    if (!recoveryOnly)
        seen.insert(file.get());
    emit fileOpened(path, start.position.offset);
    if (start.truncated)
        emit fileTruncated(path);
    publishPosition(*file);
    m_tracked.push_back(std::move(file));
    return m_tracked.back().get();
}

bool FileTailer::isWatchedFile(const QString &path) const
{
    return std::any_of(m_watches.cbegin(), m_watches.cend(), [&path](const Watch &watch) {
        return watch.nameFilters.isEmpty() && watch.path == path;
    });
}

QStringList FileTailer::rotatedSiblings(const QString &path) const
{
    const QFileInfo info(path);
    const QString base = info.fileName();
    // Oldest first, like the lines they hold; compressed ones cannot be followed.
    const QFileInfoList entries =
        info.dir().entryInfoList({base + u".*", base + u"-*", base + u"_*"},
                                 QDir::Files | QDir::Hidden, QDir::Time | QDir::Reversed);
    QStringList siblings;
    for (const QFileInfo &entry : entries) {
        const QString suffix = entry.suffix().toLower();
        if (suffix == u"gz" || suffix == u"bz2" || suffix == u"xz" || suffix == u"zst" ||
            suffix == u"zip" || suffix == u"lz4" || suffix == u"z")
            continue;
        siblings.append(entry.absoluteFilePath());
    }
    return siblings;
}

void FileTailer::recoverRotatedAtStart(QSet<const Tracked *> &seen)
{
    m_startRecovered = true;
    if (m_startPositions.isEmpty())
        return;
    for (const Watch &watch : std::as_const(m_watches)) {
        if (!watch.nameFilters.isEmpty())
            continue;
        for (const QString &sibling : rotatedSiblings(watch.path)) {
            if (Tracked *adopted = openCandidate(sibling, /*recoveryOnly=*/true, seen)) {
                adopted->drainOnly = true;
                adopted->orphanSinceMs = nowMs();
            }
        }
    }
    // Stored positions of files followed by name that no file holds any more, neither the
    // file nor a rotated sibling: what was written after them is gone. (Several positions of
    // one content are one file: one of them resumed is enough.)
    QSet<QByteArray> resumedContents;
    for (qsizetype i = 0; i < m_startPositions.size(); ++i) {
        if (m_startPositionUsed.at(i))
            resumedContents.insert(m_startPositions.at(i).headHash);
    }
    for (qsizetype i = 0; i < m_startPositions.size(); ++i) {
        const TailPosition &stored = m_startPositions.at(i);
        if (m_startPositionUsed.at(i) || stored.offset <= 0 || !isWatchedFile(stored.path) ||
            (!stored.headHash.isEmpty() && resumedContents.contains(stored.headHash)))
            continue;
        // Its own file, resumed or found truncated, is decided by the poll that follows.
        struct stat info;
        const bool ownStillThere = ::stat(encodedPath(stored.path).constData(), &info) == 0 &&
                                   quint64(info.st_dev) == stored.device &&
                                   quint64(info.st_ino) == stored.inode;
        if (ownStillThere && qint64(info.st_size) >= stored.offset)
            continue;
        emit linesUnrecoverable(
            stored.path, stored.line,
            QStringLiteral("rotated or replaced while not followed, and neither it nor a rotated "
                           "sibling holds its content any more: lines written after line %1 "
                           "(byte %2), if any, are lost")
                .arg(stored.line)
                .arg(stored.offset));
    }
}

bool FileTailer::drainCopyOf(const Tracked &file)
{
    if (file.head.isEmpty())
        return false;
    for (const QString &sibling : rotatedSiblings(file.path)) {
        const int fd = ::open(encodedPath(sibling).constData(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        struct stat opened;
        const bool candidate = ::fstat(fd, &opened) == 0 &&
                               !findByIdentity(quint64(opened.st_dev), quint64(opened.st_ino)) &&
                               qint64(opened.st_size) >= file.committedOffset() &&
                               readAt(fd, 0, file.head.size()) == file.head;
        if (!candidate) {
            ::close(fd);
            continue;
        }
        // The copy holds what the file held when it was copied: read from where it stood.
        auto copy = std::make_unique<Tracked>();
        copy->path = sibling;
        copy->fd = fd;
        copy->device = quint64(opened.st_dev);
        copy->inode = quint64(opened.st_ino);
        copy->readOffset = file.committedOffset();
        copy->line = file.line;
        copy->head = file.head;
        copy->headHash = file.headHash;
        copy->drainOnly = true;
        copy->orphanSinceMs = nowMs();
        emit fileOpened(sibling, copy->readOffset);
        publishPosition(*copy);
        readAvailable(*copy);
        m_adopted.push_back(std::move(copy));
        return true;
    }
    return false;
}

void FileTailer::refreshWatcher(const QStringList &candidates)
{
    if (!m_watcher || !m_useWatcher)
        return;
    QStringList wanted;
    for (const Watch &watch : std::as_const(m_watches)) {
        // A file's directory tells about its re-creation; a watched directory about new files.
        wanted.append(watch.nameFilters.isEmpty() ? QFileInfo(watch.path).absolutePath()
                                                  : watch.path);
    }
    for (const QString &path : candidates)
        wanted.append(path);
    wanted.removeDuplicates();
    QStringList current = m_watcher->files() + m_watcher->directories();
    QStringList toAdd;
    for (const QString &path : std::as_const(wanted)) {
        if (!current.contains(path) && QFileInfo::exists(path))
            toAdd.append(path);
    }
    QStringList toRemove;
    for (const QString &path : std::as_const(current)) {
        if (!wanted.contains(path))
            toRemove.append(path);
    }
    if (!toRemove.isEmpty())
        m_watcher->removePaths(toRemove);
    if (!toAdd.isEmpty())
        m_watcher->addPaths(toAdd);
}

} // namespace ts::live
