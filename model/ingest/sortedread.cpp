#include "ingest/sortedread.h"

#include <QDataStream>
#include <QDir>
#include <QFileInfo>
#include <QTemporaryFile>

#include <algorithm>
#include <memory>
#include <queue>
#include <vector>

namespace ts {

namespace {

// Events read back from a run file at a time, per run being merged.
constexpr qsizetype kReadBackEvents = 512;
// Merged events handed to the sink at a time.
constexpr size_t kOutputBatch = 4096;

// ---- run files: every field of an event, in a private binary form ---------------------------

void writeEvent(QDataStream &out, const RequestEvent &e)
{
    out << quint8(e.type) << e.batchEnvelope << e.secretsMasked << qint32(e.status)
        << qint32(e.batchIndex) << qint32(e.attempt) << e.tsMs << e.durationMs << e.credits
        << e.weight;
    for (const QString *text : {&e.identity,
                                &e.app,
                                &e.service,
                                &e.category,
                                &e.method,
                                &e.url,
                                &e.serviceBusNamespace,
                                &e.entity,
                                &e.lane,
                                &e.errorCode,
                                &e.retryAfter,
                                &e.tenant,
                                &e.body,
                                &e.requestId,
                                &e.batchId,
                                &e.operationId,
                                &e.breakerScope,
                                &e.breakerState,
                                &e.text,
                                &e.source})
        out << *text;
    out << qint32(e.headers.items().size());
    for (const auto &[name, value] : e.headers.items())
        out << name << value;
    out << e.extraJson << e.line << e.offset;
}

void readEvent(QDataStream &in, RequestEvent &e)
{
    quint8 type = 0;
    qint32 status = 0;
    qint32 batchIndex = 0;
    qint32 attempt = 0;
    in >> type >> e.batchEnvelope >> e.secretsMasked >> status >> batchIndex >> attempt >> e.tsMs >>
        e.durationMs >> e.credits >> e.weight;
    e.type = EventType(type);
    e.status = status;
    e.batchIndex = batchIndex;
    e.attempt = attempt;
    for (QString *text : {&e.identity,
                          &e.app,
                          &e.service,
                          &e.category,
                          &e.method,
                          &e.url,
                          &e.serviceBusNamespace,
                          &e.entity,
                          &e.lane,
                          &e.errorCode,
                          &e.retryAfter,
                          &e.tenant,
                          &e.body,
                          &e.requestId,
                          &e.batchId,
                          &e.operationId,
                          &e.breakerScope,
                          &e.breakerState,
                          &e.text,
                          &e.source})
        in >> *text;
    qint32 headers = 0;
    in >> headers;
    e.headers.reserve(headers);
    for (qint32 i = 0; i < headers; ++i) {
        QString name;
        QString value;
        in >> name >> value;
        e.headers.setLowerCase(name, value); // stored lower-case already
    }
    in >> e.extraJson >> e.line >> e.offset;
}

// One sorted run: in memory (the last of an input) or in a temporary file.
class Run
{
public:
    Run(int input, std::vector<RequestEvent> &&events) : m_input(input), m_memory(std::move(events))
    {
    }
    Run(int input, std::unique_ptr<QTemporaryFile> file, qint64 events)
        : m_input(input), m_file(std::move(file)), m_left(events)
    {
        m_file->seek(0);
        m_stream.setDevice(m_file.get());
    }

    [[nodiscard]] int input() const { return m_input; }

    // The next event, or false at the run's end.
    bool next(RequestEvent &out)
    {
        if (m_position >= m_buffer.size() && !refill())
            return false;
        out = std::move(m_buffer[m_position++]);
        return true;
    }

private:
    bool refill()
    {
        m_buffer.clear();
        m_position = 0;
        if (!m_file) {
            m_buffer.swap(m_memory); // handed over whole, once
            return !m_buffer.empty();
        }
        const qint64 take = std::min<qint64>(m_left, kReadBackEvents);
        m_buffer.resize(size_t(take));
        for (RequestEvent &event : m_buffer)
            readEvent(m_stream, event);
        m_left -= take;
        return take > 0 && m_stream.status() == QDataStream::Ok;
    }

    int m_input;
    std::vector<RequestEvent> m_memory;
    std::unique_ptr<QTemporaryFile> m_file;
    QDataStream m_stream;
    qint64 m_left = 0;
    std::vector<RequestEvent> m_buffer;
    size_t m_position = 0;
};

std::unique_ptr<QTemporaryFile> newRunFile(QString *error)
{
    auto file = std::make_unique<QTemporaryFile>(
        QDir::temp().filePath(QStringLiteral("throttlescope-sort-XXXXXX")));
    if (!file->open()) {
        *error = file->fileName() + QStringLiteral(": ") + file->errorString();
        return nullptr;
    }
    return file;
}

// Merges runs by (time, input, run index): runs is in run order, so equal instants of one input
// come out in line order. Each merged event goes to `deliver`.
template <typename Deliver>
void mergeRuns(std::vector<std::unique_ptr<Run>> &runs, Deliver &&deliver)
{
    struct Head
    {
        RequestEvent event;
        size_t run = 0;
    };
    std::vector<Head> heads(runs.size());
    const auto later = [&heads, &runs](size_t a, size_t b) {
        const Head &x = heads[a];
        const Head &y = heads[b];
        if (x.event.tsMs != y.event.tsMs)
            return x.event.tsMs > y.event.tsMs;
        if (runs[x.run]->input() != runs[y.run]->input())
            return runs[x.run]->input() > runs[y.run]->input();
        return x.run > y.run;
    };
    std::priority_queue<size_t, std::vector<size_t>, decltype(later)> queue(later);
    for (size_t i = 0; i < runs.size(); ++i) {
        heads[i].run = i;
        if (runs[i]->next(heads[i].event))
            queue.push(i);
    }
    while (!queue.empty()) {
        const size_t top = queue.top();
        queue.pop();
        deliver(std::move(heads[top].event));
        if (runs[top]->next(heads[top].event))
            queue.push(top);
    }
}

// Collects one input's events into sorted runs, spilling all but the last to files.
class RunBuilder final : public IngestSink
{
public:
    RunBuilder(int input, IngestSink &malformedTo, const SortOptions &sort,
               std::vector<std::unique_ptr<Run>> &runs)
        : m_input(input), m_malformedTo(malformedTo), m_sort(sort), m_runs(runs)
    {
    }

    void onEvent(RequestEvent &&event) override
    {
        m_current.push_back(std::move(event));
        if (qsizetype(m_current.size()) >= m_sort.runEvents)
            spill();
    }
    void onEvents(std::vector<RequestEvent> &&events) override
    {
        for (RequestEvent &event : events)
            onEvent(std::move(event));
    }
    void onMalformed(MalformedRecord &&record) override
    {
        m_malformedTo.onMalformed(std::move(record));
    }

    // The input is read: its last run stays in memory.
    void finish()
    {
        if (m_current.empty())
            return;
        sortCurrent();
        m_runs.push_back(std::make_unique<Run>(m_input, std::move(m_current)));
        m_current.clear();
    }
    [[nodiscard]] const QString &error() const { return m_error; }

private:
    void sortCurrent()
    {
        std::stable_sort(
            m_current.begin(), m_current.end(),
            [](const RequestEvent &a, const RequestEvent &b) { return a.tsMs < b.tsMs; });
    }
    void spill()
    {
        sortCurrent();
        auto file = m_error.isEmpty() ? newRunFile(&m_error) : nullptr;
        if (!file) {
            // No room on disk: the run stays in memory (still exact; only memory grows).
            m_runs.push_back(std::make_unique<Run>(m_input, std::move(m_current)));
            m_current.clear();
            return;
        }
        QDataStream out(file.get());
        for (const RequestEvent &event : m_current)
            writeEvent(out, event);
        const auto events = qint64(m_current.size());
        m_current.clear();
        m_runs.push_back(std::make_unique<Run>(m_input, std::move(file), events));
    }

    int m_input;
    IngestSink &m_malformedTo;
    const SortOptions &m_sort;
    std::vector<std::unique_ptr<Run>> &m_runs;
    std::vector<RequestEvent> m_current;
    QString m_error;
};

// Past the fan-in, the first runs are merged into one longer run file until few enough remain.
void boundFanIn(std::vector<std::unique_ptr<Run>> &runs, int fanIn)
{
    const auto width = size_t(std::max(2, fanIn));
    while (runs.size() > width) {
        std::vector<std::unique_ptr<Run>> group(std::make_move_iterator(runs.begin()),
                                                std::make_move_iterator(runs.begin() + width));
        runs.erase(runs.begin(), runs.begin() + width);
        // Runs of one input stay together (inputs are read one after the other), so a group's
        // merge keeps the order rule; it is labelled with its first input.
        const int input = group.front()->input();
        QString error;
        auto file = newRunFile(&error);
        qint64 events = 0;
        std::vector<RequestEvent> memory;
        QDataStream out(file.get());
        mergeRuns(group, [&](RequestEvent &&event) {
            if (file)
                writeEvent(out, event);
            else
                memory.push_back(std::move(event));
            ++events;
        });
        auto merged = file ? std::make_unique<Run>(input, std::move(file), events)
                           : std::make_unique<Run>(input, std::move(memory));
        runs.insert(runs.begin(), std::move(merged));
    }
}

} // namespace

bool canReadAgain(const QStringList &paths)
{
    return std::all_of(paths.begin(), paths.end(), [](const QString &path) {
        return path != u"-" && QFileInfo(path).isFile();
    });
}

MergeResult readSourcesSorted(const QStringList &paths, IngestSink &sink,
                              const SourceOptions &options, const MergeOptions &merge,
                              const SortOptions &sort)
{
    MergeResult result;
    std::vector<std::unique_ptr<Run>> runs;
    qint64 doneBefore = 0;
    for (int input = 0; input < int(paths.size()); ++input) {
        RunBuilder builder(input, sink, sort, runs);
        ReadControl control;
        control.cancel = merge.cancel;
        control.holdUnterminatedTail = merge.holdUnterminatedTail;
        if (merge.progress) {
            control.progress = [&merge, doneBefore](qint64 done, qint64) {
                merge.progress(doneBefore + done, -1);
            };
        }
        SourceOutcome outcome = readSource(paths[input], builder, options, control);
        builder.finish();
        doneBefore += std::max<qint64>(0, QFileInfo(paths[input]).size());
        result.cancelled = result.cancelled || outcome.result.cancelled;
        result.outcomes.append(std::move(outcome));
        if (result.cancelled)
            break;
    }
    boundFanIn(runs, sort.fanIn);
    std::vector<RequestEvent> batch;
    batch.reserve(kOutputBatch);
    mergeRuns(runs, [&](RequestEvent &&event) {
        batch.push_back(std::move(event));
        if (batch.size() >= kOutputBatch) {
            sink.onEvents(std::move(batch));
            batch = {};
            batch.reserve(kOutputBatch);
        }
    });
    if (!batch.empty())
        sink.onEvents(std::move(batch));
    return result;
}

} // namespace ts
