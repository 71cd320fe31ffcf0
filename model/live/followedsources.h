#pragma once
// The dashboard's followed files: what the operator opened (command line, File > Open, drag and
// drop) keeps being read as it grows, as `tail -F` and lnav do, until Follow is switched off.
//
// The dashboard reads each file once from its start (AnalysisSession: progress, cancel), then
// hands its end position here (followFile). Line formats continue from that position through
// FileTailer, with the rotation, copytruncate and partial-last-line rules of `tail` and the
// per-format line parsers `tail` uses (linereaders.h). Whole-document formats (HAR, OTLP JSON,
// vcr) are read again when the file changes; the events already taken from them are skipped by
// count, so nothing is counted twice. A folder (a directory, or a glob such as logs/*.ndjson)
// is watched: files that appear in it later are followed from their first byte.
//
// Lives on the session's thread: everything it reads is handed over by eventsRead, which the
// session takes into the same path as every other source (analysis, scratch workspace).

#include "filetailer.h"
#include "ingest/ingest.h"
#include "ingest/sourcereader.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QPair>
#include <QSet>
#include <QString>
#include <QStringList>

#include <memory>

class QFileSystemWatcher;
class QTimer;

namespace ts::live {

class TailIngest;

// What the operator opened, split into files to read now and folders to watch for new files.
struct OpenRequest
{
    QStringList files; // existing files, in a stable order
    struct Folder
    {
        QString directory;
        QStringList nameFilters; // wildcards ("*.ndjson"); "*" for a whole directory
    };
    QList<Folder> folders;
};
// "logs/*.ndjson" and "logs/" (a directory) become a folder and the files now in it; anything
// else stays a file as given.
OpenRequest expandOpenArguments(const QStringList &arguments);

class FollowedSources : public QObject
{
    Q_OBJECT
public:
    explicit FollowedSources(QObject *parent = nullptr);
    ~FollowedSources() override;

    [[nodiscard]] bool isEnabled() const { return m_enabled; }
    // Files followed now (as the session named them), for tests and the status bar.
    [[nodiscard]] QStringList followedFiles() const;
    // How often files are polled when no watcher notification comes (default 100 ms).
    void setPollInterval(int milliseconds);

public Q_SLOTS:
    // `path` was read from its start as `format` up to endOffset / endLine (complete lines:
    // the session holds back an unterminated last line) and gave `events` events and
    // `malformed` malformed records: follow it from there. An empty format (unreadable) is
    // remembered so that it is left alone when its folder is watched.
    void followFile(const QString &path, const QString &format, qint64 endOffset, qint64 endLine,
                    qint64 events, qint64 malformed);
    // Files appearing in `directory` that match `nameFilters` are followed from their first byte.
    void watchFolder(const QString &directory, const QStringList &nameFilters);
    // Follow (default) or pause; paused files are caught up when following resumes.
    void setEnabled(bool enabled);
    // Reads what is available now (the timers call it too).
    void pollNow();
    // Forgets every followed file and folder (a new session).
    void clear();

Q_SIGNALS:
    // New events and malformed records of one source (named as the session named the file).
    void eventsRead(const QString &source, const QList<ts::RequestEvent> &events,
                    const QList<ts::MalformedRecord> &malformed);
    // The files followed now (as the session named them; none while following is paused):
    // the Ingest page says "following" for them.
    void followedFilesChanged(const QStringList &files);

private:
    struct Document
    {
        QString path;
        QString format;
        qint64 eventsSeen = 0;
        qint64 malformedSeen = 0;
        qint64 size = -1;
        qint64 mtimeNs = -1;
    };
    using Identity = QPair<quint64, quint64>;

    void ensureStarted();
    void announceFollowed();
    void onBatch(const TailBatch &batch);
    void pollDocuments();
    void readDocument(Document &document);
    QString sourceNameFor(const TailBatch &batch) const;

    bool m_enabled = true;
    int m_pollIntervalMs = 100;
    std::unique_ptr<FileTailer> m_tailer;
    std::unique_ptr<TailIngest> m_ingest;
    QTimer *m_documentTimer = nullptr;
    QFileSystemWatcher *m_documentWatcher = nullptr;
    QList<Document> m_documents;
    // Where each followed line file was read up to by the session: the tailer's start points.
    QList<TailPosition> m_positions;
    // Line files by identity: the name the session gave them (rotated files keep it).
    QHash<Identity, QString> m_names;
    // Absolute path -> the name the session gave (a file re-created under a followed name).
    QHash<QString, QString> m_namesByPath;
    // Identities read by the tailer but not line by line (documents, unreadable files).
    QSet<Identity> m_ignored;
    // Identities the tailer delivered and that were classified (line format or ignored).
    QSet<Identity> m_classified;
    QStringList m_followed;
};

} // namespace ts::live
