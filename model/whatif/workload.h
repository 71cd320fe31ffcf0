#pragma once
// The work a log shows, for `whatif` (docs/whatif.md, "The workload"): per identity, each
// operation in the order the log first sent it, with what the policies match and charge it by
// (method, URL, service, app, tenant, category, lane, credits), its service time and the answer
// the service gave the work itself. A retry is not new work:
//
//   a request is a retry when its attempt is >= 1, when its operationId was sent before, or,
//   without an operationId, when the same identity sent the same method and URL before and
//   that request was answered 429 (any throttle the signals recognise), 5xx, 408 or not at
//   all, within retryMemoryMs (the alert detector's memory, engine/alertdetector.h).
//
// What the log shows of each identity (its requests, throttles, retries, lost operations,
// first send and finish) is the "actual" side of the comparison. An operation is lost when
// its last attempt was refused or failed transiently (a throttle, 5xx, 408, no answer).
//
// Built by WorkloadBuilder, an IngestSink that takes the events in time order (as readers and
// timemerge.h deliver them). Memory: ~100 bytes per operation plus its URL, the shared field
// combinations stored once.

#include "core/requestevent.h"
#include "ingest/ingest.h"

#include <QHash>
#include <QString>

#include <absl/container/flat_hash_map.h>

#include <array>
#include <memory>
#include <vector>

namespace ts::whatif {

// What one side of the comparison (the log, or the simulated client) did for an identity, or
// for all of them.
struct RunTotals
{
    qint64 requests = 0;       // sent (a weighted record counts as its weight)
    qint64 throttles = 0;      // answered with a throttle
    qint64 retries = 0;        // requests that were retries
    qint64 operations = 0;     // units of work
    qint64 lostOperations = 0; // work whose last attempt was refused or failed transiently
    qint64 shortCircuited = 0; // attempts a client-side breaker refused (simulated side only)
    qint64 startMs = 0;        // the first send
    qint64 finishMs = 0;       // the last answer (send + service time)

    [[nodiscard]] double makespanSeconds() const { return double(finishMs - startMs) / 1000.0; }
    // Adds another identity's totals (start the earliest, finish the latest).
    void merge(const RunTotals &other);
};

// When work completed (an accepted answer) and throttles fell, for the What-if page's charts.
struct Timeline
{
    std::vector<qint64> completions;
    std::vector<qint64> throttles;
};

// The fields a request is matched, keyed and charged by besides its URL: shared by the many
// operations that have them in common (one entry per combination).
struct RequestShape
{
    QString identity;
    QString service;
    QString app;
    QString tenant;
    QString category;
    QString lane;
    QString method;
    QString serviceBusNamespace;
    QString entity;
};

struct Operation
{
    QString url;
    QString operationId;
    double credits = -1;        // the explicit cost, < 0 = none (the policy's cost rules decide)
    qint32 shape = 0;           // Workload::shapes index
    qint32 outcomeStatus = 200; // the service's answer to the work when it is not throttled
    qint32 serviceMs = 0;       // the time the service took (durationMs of its answered attempt)
    qint32 attempts = 0;        // requests the log spent on it
    bool lost = false;          // its last attempt in the log was refused or failed transiently
    bool background = false;    // lane "background"
};

struct IdentityWork
{
    QString identity; // "" when the log does not say
    std::vector<Operation> operations;
    RunTotals actual;
    int peakConcurrency = 1; // requests in flight at once in the log (send to answer)
};

struct Workload
{
    std::vector<RequestShape> shapes;
    std::vector<IdentityWork> identities; // in order of first appearance
    qint64 events = 0;                    // request events read
    qint64 malformed = 0;                 // records that could not be read
    QList<MalformedRecord> malformedSamples;
    Timeline actualTimeline; // when the builder was asked to record it

    [[nodiscard]] RunTotals actualTotals() const;
    [[nodiscard]] qint64 operationCount() const;
    // The request an operation's attempt sends: its shape's fields and its own, at tsMs.
    [[nodiscard]] RequestEvent request(const Operation &operation, qint64 tsMs) const;
    // The same into an event reused from send to send: the shape's fields are assigned only
    // when *shapeInEvent (the shape the event holds, -1 for none) is another one.
    void fillRequest(RequestEvent &event, const Operation &operation, qint64 tsMs,
                     qint32 *shapeInEvent) const;
};

class WorkloadBuilder final : public IngestSink
{
public:
    // retryMemoryMs: how long a failed request without an operationId is remembered.
    explicit WorkloadBuilder(qint64 retryMemoryMs = 10 * 60 * 1000);
    // Keeps the log's completions and throttles (Workload::actualTimeline) for the charts.
    void setRecordTimeline(bool record) { m_recordTimeline = record; }
    ~WorkloadBuilder() override;

    void onEvent(RequestEvent &&event) override;
    void onEvents(std::vector<RequestEvent> &&events) override;
    void onMalformed(MalformedRecord &&record) override;
    void add(const RequestEvent &event);

    // The workload, once every event was added (the builder is spent).
    [[nodiscard]] Workload finish();

private:
    struct IdentityState;
    [[nodiscard]] int identityIndex(const QString &identity);
    [[nodiscard]] qint32 shapeIndex(const RequestEvent &event);
    // The operation an event belongs to, and whether it is a retry (-1: new work).
    [[nodiscard]] qint32 retriedOperation(IdentityState &state, const RequestEvent &event,
                                          quint64 requestKey, bool *retry) const;
    void noteAnswer(IdentityState &state, qint32 index, const RequestEvent &event,
                    quint64 requestKey, bool throttled);

    qint64 m_retryMemoryMs;
    bool m_recordTimeline = false;
    Workload m_work;
    std::vector<std::unique_ptr<IdentityState>> m_states; // parallel to m_work.identities
    QHash<QString, int> m_identityIndex;
    const char16_t *m_lastIdentityText = nullptr; // the last identity seen, by address
    int m_lastIdentity = -1;
    // Shapes by the addresses of their interned strings (readers intern them: the same value
    // is the same characters); the entry keeps the strings, so an address is never reused for
    // other text while it is a key. Missed addresses fall back to the text.
    absl::flat_hash_map<std::array<const void *, 9>, qint32> m_shapeByAddress;
    QHash<QString, qint32> m_shapeByText;
};

} // namespace ts::whatif
