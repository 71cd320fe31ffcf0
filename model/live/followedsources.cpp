#include "followedsources.h"

#include "core/contenthash.h"
#include "filetailer.h"
#include "linereaders.h"
#include "tailingest.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QTimer>

#include <sys/stat.h>

namespace ts::live {

namespace {

// Documents are re-read when their size or modification time changes; the watcher says so at
// once where it works, this poll everywhere else (network and overlay file systems).
constexpr int kDocumentPollMs = 250;

bool hasWildcard(const QString &name)
{
    return name.contains(u'*') || name.contains(u'?') || name.contains(u'[');
}

struct FileIdentity
{
    bool ok = false;
    quint64 device = 0;
    quint64 inode = 0;
    qint64 size = 0;
    qint64 mtimeNs = 0;
};

FileIdentity identityOf(const QString &path)
{
    FileIdentity identity;
    struct stat info;
    if (::stat(QFile::encodeName(path).constData(), &info) != 0)
        return identity;
    identity.ok = true;
    identity.device = quint64(info.st_dev);
    identity.inode = quint64(info.st_ino);
    identity.size = qint64(info.st_size);
    identity.mtimeNs = qint64(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec;
    return identity;
}

// Lines in the first `bytes` bytes of a file (for readers that do not count them).
qint64 countLines(const QString &path, qint64 bytes)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return 0;
    qint64 lines = 0;
    qint64 done = 0;
    while (done < bytes) {
        const QByteArray chunk = file.read(qMin<qint64>(1 << 20, bytes - done));
        if (chunk.isEmpty())
            break;
        lines += chunk.count('\n');
        done += chunk.size();
    }
    return lines;
}

// Skips what an earlier read of the same document already delivered, keeps the rest.
class SkippingSink final : public IngestSink
{
public:
    SkippingSink(qint64 skipEvents, qint64 skipMalformed)
        : m_skipEvents(skipEvents), m_skipMalformed(skipMalformed)
    {
    }
    void onEvent(RequestEvent &&event) override
    {
        if (++eventsTotal > m_skipEvents)
            events.append(std::move(event));
    }
    void onMalformed(MalformedRecord &&record) override
    {
        if (++malformedTotal > m_skipMalformed)
            malformed.append(std::move(record));
    }
    QList<RequestEvent> events;
    QList<MalformedRecord> malformed;
    qint64 eventsTotal = 0;
    qint64 malformedTotal = 0;

private:
    qint64 m_skipEvents;
    qint64 m_skipMalformed;
};

} // namespace

OpenRequest expandOpenArguments(const QStringList &arguments)
{
    OpenRequest request;
    for (const QString &argument : arguments) {
        const QFileInfo info(argument);
        if (info.isDir()) {
            const QDir dir(argument);
            request.folders.append({info.absoluteFilePath(), {QStringLiteral("*")}});
            const QStringList names = dir.entryList(QDir::Files, QDir::Name);
            for (const QString &name : names)
                request.files.append(dir.filePath(name));
        } else if (hasWildcard(info.fileName())) {
            const QString directory = QFileInfo(info.path()).absoluteFilePath();
            request.folders.append({directory, {info.fileName()}});
            const QDir dir(info.path());
            const QStringList names = dir.entryList({info.fileName()}, QDir::Files, QDir::Name);
            for (const QString &name : names)
                request.files.append(dir.filePath(name));
        } else {
            request.files.append(argument);
        }
    }
    return request;
}

FollowedSources::FollowedSources(QObject *parent) : QObject(parent) {}

FollowedSources::~FollowedSources() = default;

QStringList FollowedSources::followedFiles() const
{
    return m_followed;
}

void FollowedSources::setPollInterval(int milliseconds)
{
    m_pollIntervalMs = milliseconds;
    if (m_tailer)
        m_tailer->setPollInterval(milliseconds);
}

void FollowedSources::ensureStarted()
{
    if (m_tailer)
        return;
    // Created here, on the thread that follows, so that its timers live there.
    m_ingest = std::make_unique<TailIngest>();
    m_tailer = std::make_unique<FileTailer>();
    m_tailer->setPollInterval(m_pollIntervalMs);
    m_tailer->setBatchCallback([this](const TailBatch &batch) { onBatch(batch); });
    connect(m_tailer.get(), &FileTailer::fileTruncated, this, [this](const QString &path) {
        // Read again from its start: its format is told again, from the new content.
        const QString absolute = QFileInfo(path).absoluteFilePath();
        const FileIdentity identity = identityOf(absolute);
        if (identity.ok) {
            m_ingest->forget(identity.device, identity.inode);
            m_classified.remove({identity.device, identity.inode});
        }
    });
    m_documentTimer = new QTimer(this);
    m_documentTimer->setInterval(kDocumentPollMs);
    connect(m_documentTimer, &QTimer::timeout, this, &FollowedSources::pollDocuments);
    m_documentWatcher = new QFileSystemWatcher(this);
    connect(m_documentWatcher, &QFileSystemWatcher::fileChanged, this,
            &FollowedSources::pollDocuments);
    if (m_enabled) {
        m_tailer->start();
        m_documentTimer->start();
    }
}

void FollowedSources::followFile(const QString &path, const QString &format, qint64 endOffset,
                                 qint64 endLine, qint64 events, qint64 malformed)
{
    if (path == u"-")
        return; // standard input is read once
    const QString absolute = QFileInfo(path).absoluteFilePath();
    const FileIdentity identity = identityOf(absolute);
    if (!identity.ok)
        return;
    const Identity key{identity.device, identity.inode};
    if (m_names.contains(key) || m_ignored.contains(key))
        return; // followed already (opened twice)
    ensureStarted();
    if (format.isEmpty()) {
        // Unreadable as any format: the session said so once; its lines are not read again.
        m_ignored.insert(key);
        return;
    }
    const QByteArray head = readFileHead(absolute);
    if (followModeFor(format, head) == FollowMode::Document) {
        m_ignored.insert(key);
        m_documents.append(Document{path, format, events, malformed, identity.size, identity.mtimeNs});
        m_documentWatcher->addPath(absolute);
        m_followed.append(path);
        announceFollowed();
        return;
    }
    if (endLine <= 0 && endOffset > 0)
        endLine = countLines(absolute, endOffset);
    const qint64 headLength = qMin<qint64>(kTailHeadBytes, endOffset);
    m_positions.append(TailPosition{absolute, endOffset, endLine, identity.device, identity.inode,
                                    headLength, headHashOf(QByteArrayView(head).first(
                                                    qMin<qint64>(headLength, head.size())))});
    m_tailer->setStartPositions(m_positions);
    m_names.insert(key, path);
    m_namesByPath.insert(absolute, path);
    m_classified.insert(key);
    m_tailer->addFile(absolute);
    m_followed.append(path);
    announceFollowed();
}

void FollowedSources::watchFolder(const QString &directory, const QStringList &nameFilters)
{
    ensureStarted();
    m_tailer->addDirectory(directory, nameFilters);
}

void FollowedSources::setEnabled(bool enabled)
{
    if (m_enabled == enabled)
        return;
    m_enabled = enabled;
    if (!m_tailer)
        return;
    if (enabled) {
        m_tailer->start(); // catches up with what was written while paused
        m_documentTimer->start();
        pollDocuments();
    } else {
        m_tailer->stop();
        m_documentTimer->stop();
    }
    announceFollowed();
}

void FollowedSources::pollNow()
{
    if (!m_tailer || !m_enabled)
        return;
    m_tailer->pollNow();
    pollDocuments();
}

void FollowedSources::clear()
{
    if (m_tailer)
        m_tailer->stop();
    m_tailer.reset();
    m_ingest.reset();
    delete m_documentTimer;
    m_documentTimer = nullptr;
    delete m_documentWatcher;
    m_documentWatcher = nullptr;
    m_documents.clear();
    m_positions.clear();
    m_names.clear();
    m_namesByPath.clear();
    m_ignored.clear();
    m_classified.clear();
    m_followed.clear();
    announceFollowed();
}

void FollowedSources::announceFollowed()
{
    Q_EMIT followedFilesChanged(m_enabled ? m_followed : QStringList());
}

QString FollowedSources::sourceNameFor(const TailBatch &batch) const
{
    // A rotated file keeps the name it was opened under (the operator opened app.log, not
    // app.log.1); a file re-created under a followed name takes that name.
    const auto byIdentity = m_names.constFind({batch.device, batch.inode});
    if (byIdentity != m_names.cend())
        return *byIdentity;
    return m_namesByPath.value(batch.path, batch.path);
}

void FollowedSources::onBatch(const TailBatch &batch)
{
    const Identity key{batch.device, batch.inode};
    if (m_ignored.contains(key))
        return;
    if (!m_classified.contains(key)) {
        // A file that appeared in a watched folder (or was re-created): told by its content.
        const QByteArray head = readFileHead(batch.path);
        const QString format = followFormat(head, {});
        if (!format.isEmpty() && followModeFor(format, head) == FollowMode::Document) {
            m_ignored.insert(key);
            m_documents.append(Document{batch.path, format, 0, 0, -1, -1});
            m_documentWatcher->addPath(batch.path);
            m_followed.append(batch.path);
            announceFollowed();
            return;
        }
        m_classified.insert(key);
        if (!m_names.contains(key) && !m_followed.contains(sourceNameFor(batch))) {
            m_followed.append(sourceNameFor(batch));
            announceFollowed();
        }
    }
    QList<RequestEvent> events;
    QList<MalformedRecord> malformed;
    m_ingest->parse(batch, &events, &malformed);
    if (events.isEmpty() && malformed.isEmpty())
        return;
    const QString name = sourceNameFor(batch);
    for (RequestEvent &event : events)
        event.source = name;
    for (MalformedRecord &record : malformed)
        record.source = name;
    Q_EMIT eventsRead(name, events, malformed);
}

void FollowedSources::pollDocuments()
{
    if (!m_enabled)
        return;
    for (Document &document : m_documents) {
        const FileIdentity identity = identityOf(document.path);
        if (!identity.ok || (identity.size == document.size && identity.mtimeNs == document.mtimeNs))
            continue;
        document.size = identity.size;
        document.mtimeNs = identity.mtimeNs;
        readDocument(document);
    }
}

void FollowedSources::readDocument(Document &document)
{
    SkippingSink sink(document.eventsSeen, document.malformedSeen);
    SourceOptions options;
    options.format = document.format;
    const SourceOutcome outcome = readSource(document.path, sink, options);
    // Half written (a capture being saved): nothing is taken until it reads whole.
    if (!outcome.readable())
        return;
    // A document caught half written reads short; what was taken stays taken.
    document.eventsSeen = qMax(document.eventsSeen, sink.eventsTotal);
    document.malformedSeen = qMax(document.malformedSeen, sink.malformedTotal);
    if (sink.events.isEmpty() && sink.malformed.isEmpty())
        return;
    for (RequestEvent &event : sink.events)
        event.source = document.path;
    Q_EMIT eventsRead(document.path, sink.events, sink.malformed);
}

} // namespace ts::live
