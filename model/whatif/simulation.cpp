#include "whatif/simulation.h"

#include "engine/breakertracker.h"
#include "signals/throttlesignals.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <queue>

namespace ts::whatif {

namespace {

constexpr qint64 kNever = std::numeric_limits<qint64>::min();
// The background lane's share is measured over the sends of the trailing minute.
constexpr qint64 kLaneShareWindowMs = 60'000;

// splitmix64: a stateless, well-mixed hash of the jitter's inputs.
quint64 mix(quint64 x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// Retry-After as canonical logs write it: seconds, to the millisecond.
QString retryAfterText(qint64 ms)
{
    return QString::number(double(std::max<qint64>(0, ms)) / 1000.0, 'f', 3);
}

// One operation being worked on by one of an identity's concurrency slots.
struct Slot
{
    qint32 operation = -1; // -1: the slot picks the next operation when it is ready
    qint32 attempt = 0;    // attempts made so far for it (the next send's `attempt`)
    qint64 readyAt = 0;
    quint64 order = 0; // ties of readyAt: the slot that became ready first goes first
};

struct SlotLater
{
    bool operator()(const Slot &a, const Slot &b) const
    {
        return a.readyAt != b.readyAt ? a.readyAt > b.readyAt : a.order > b.order;
    }
};

struct Client
{
    int identity = 0;
    std::priority_queue<Slot, std::vector<Slot>, SlotLater> ready;
    // The identity's operations, by lane when a cap separates them (else all in [0]).
    std::vector<qint32> lanes[2];
    size_t next[2] = {0, 0};
    // Pacing: send k of a run of paced sends goes at anchor + ceil(k x interval), computed from
    // the run's anchor rather than accumulated, so a window of W ms holds exactly the sends a
    // steady pace puts there (no drift from adding rounded intervals).
    double intervalMs = 0;
    qint64 paceAnchorMs = 0;
    qint64 pacedSends = 0;
    qint64 holdUntil = kNever; // a Retry-After the client obeys
    // Sends of the trailing minute, all and background (the lane cap's measure).
    std::deque<qint64> recentAll;
    std::deque<qint64> recentBackground;
    RunTotals totals;
    qint64 scheduledAt = kNever; // the live entry of this client in the turn queue
    // The event each send is made in (its shape's fields stay while the shape does).
    RequestEvent scratch;
    qint32 scratchShape = -1;
};

struct Turn
{
    qint64 at;
    int client;
    bool operator>(const Turn &other) const
    {
        return at != other.at ? at > other.at : client > other.client;
    }
};

} // namespace

struct Simulation::Impl
{
    const Workload &work;
    PolicySet policies;
    Behaviour behaviour;
    SimulationOptions options;
    ThrottleEngine engine;
    std::unique_ptr<BreakerTracker> breakers;
    SendObserver observer;
    std::vector<Client> clients;
    std::priority_queue<Turn, std::vector<Turn>, std::greater<>> turns;
    quint64 slotOrder = 0;
    SimulationResult result;

    static ThrottleEngine::Options engineOptions(const SimulationOptions &options)
    {
        ThrottleEngine::Options engineOptions;
        engineOptions.recordPlotData = options.recordPlotData;
        return engineOptions;
    }

    Impl(const Workload &w, const PolicySet &set, Behaviour b, SimulationOptions o)
        : work(w), policies(set), behaviour(std::move(b)), options(o), engine(set, engineOptions(o))
    {
        if (behaviour.breaker) {
            // The client's own breaker: every policy gets the one asked for.
            PolicySet withBreaker = set;
            withBreaker.setBreaker(*behaviour.breaker);
            BreakerParameters parameters;
            parameters.model = *behaviour.breaker;
            breakers = std::make_unique<BreakerTracker>(parameters, withBreaker);
        }
    }

    const Operation &operationOf(const Client &client, qint32 index) const
    {
        return work.identities[size_t(client.identity)].operations[size_t(index)];
    }

    void schedule(int index, qint64 at)
    {
        Client &client = clients[size_t(index)];
        if (client.scheduledAt == at)
            return;
        client.scheduledAt = at;
        turns.push({at, index});
    }

    void pushSlot(Client &client, Slot slot)
    {
        slot.order = slotOrder++;
        client.ready.push(slot);
    }

    // The earliest instant the pace lets the client send next.
    static qint64 nextPacedSend(const Client &client)
    {
        // (The epsilon keeps an exact multiple of the interval on its millisecond.)
        return client.paceAnchorMs +
               qint64(std::ceil(double(client.pacedSends) * client.intervalMs - 1e-6));
    }
    static void notePacedSend(Client &client, qint64 t)
    {
        if (t > nextPacedSend(client)) {
            // Idle past its slot: a new run of paced sends starts here.
            client.paceAnchorMs = t;
            client.pacedSends = 0;
        }
        ++client.pacedSends;
    }

    void startClients();
    qint32 nextOperation(Client &client, qint64 t);
    qint64 jittered(const Client &client, const Slot &slot, qint64 delayMs) const;
    void failAttempt(Client &client, Slot slot, qint64 t, qint64 retryAtMs);
    void attempt(Client &client, Slot slot, qint64 t);
    void takeTurn(int index, qint64 t);
    void collect();
    SimulationResult run();
};

void Simulation::Impl::startClients()
{
    const bool capped = behaviour.backgroundCapPercent.has_value();
    clients.resize(work.identities.size());
    for (size_t i = 0; i < work.identities.size(); ++i) {
        const IdentityWork &identity = work.identities[i];
        Client &client = clients[i];
        client.identity = int(i);
        for (qint32 k = 0; k < qint32(identity.operations.size()); ++k)
            client.lanes[capped && identity.operations[size_t(k)].background ? 1 : 0].push_back(k);
        if (const auto pace = behaviour.paceFor(identity.identity); pace && *pace > 0)
            client.intervalMs = 1000.0 / *pace;
        client.totals.startMs = identity.actual.startMs;
        client.totals.finishMs = identity.actual.startMs;
        client.totals.operations = qint64(identity.operations.size());
        if (identity.operations.empty())
            continue;
        const int slotCount = behaviour.concurrency > 0 ? behaviour.concurrency
                                                        : std::max(1, identity.peakConcurrency);
        for (int s = 0; s < slotCount && s < int(identity.operations.size()); ++s)
            pushSlot(client, Slot{-1, 0, identity.actual.startMs, 0});
        client.paceAnchorMs = identity.actual.startMs;
        schedule(int(i), identity.actual.startMs);
    }
}

// The next operation a free slot takes: the log's order, unless that is background work, the
// background lane already had its share of the trailing minute and foreground work waits.
qint32 Simulation::Impl::nextOperation(Client &client, qint64 t)
{
    const bool foreground = client.next[0] < client.lanes[0].size();
    const bool background = client.next[1] < client.lanes[1].size();
    if (!foreground && !background)
        return -1;
    int lane = foreground ? 0 : 1;
    if (foreground && background) {
        const qint32 first = client.lanes[0][client.next[0]];
        const qint32 second = client.lanes[1][client.next[1]];
        lane = second < first ? 1 : 0;
        if (lane == 1) {
            for (std::deque<qint64> *recent : {&client.recentAll, &client.recentBackground}) {
                while (!recent->empty() && recent->front() <= t - kLaneShareWindowMs)
                    recent->pop_front();
            }
            const double share =
                double(client.recentBackground.size() + 1) / double(client.recentAll.size() + 1);
            if (share * 100.0 > *behaviour.backgroundCapPercent)
                lane = 0;
        }
    }
    return client.lanes[lane][client.next[lane]++];
}

qint64 Simulation::Impl::jittered(const Client &client, const Slot &slot, qint64 delayMs) const
{
    if (!behaviour.jitterSeed || delayMs <= 0)
        return delayMs;
    const quint64 h =
        mix(*behaviour.jitterSeed ^ mix(quint64(client.identity) << 32 ^ quint64(slot.operation)) ^
            mix(quint64(slot.attempt)));
    const double unit = double(h >> 11) / double(quint64(1) << 53); // [0, 1)
    return qint64(std::llround(double(delayMs) * (0.75 + 0.5 * unit)));
}

// A refused attempt (by the service or the client's own breaker): retried while retries last,
// after the backoff or, when the client obeys it, exactly at the Retry-After; else lost.
void Simulation::Impl::failAttempt(Client &client, Slot slot, qint64 t, qint64 retryAtMs)
{
    if (slot.attempt <= behaviour.retries) {
        const qint64 delay = behaviour.obeyRetryAfter && retryAtMs != kNever
                                 ? retryAtMs - t
                                 : jittered(client, slot, behaviour.backoff.delayMs(slot.attempt));
        slot.readyAt = t + std::max<qint64>(0, delay);
        pushSlot(client, slot);
        return;
    }
    ++client.totals.lostOperations;
    client.totals.finishMs = std::max(client.totals.finishMs, t);
    pushSlot(client, Slot{-1, 0, t, 0});
}

void Simulation::Impl::attempt(Client &client, Slot slot, qint64 t)
{
    const Operation &operation = operationOf(client, slot.operation);
    RequestEvent &event = client.scratch;
    work.fillRequest(event, operation, t, &client.scratchShape);
    event.attempt = slot.attempt;
    ++slot.attempt;
    if (breakers && breakers->passesAt(event) > t) {
        ++client.totals.shortCircuited;
        failAttempt(client, slot, t, kNever);
        return;
    }
    // The service's answer, decided by the engine's limiters and charged as report charges it.
    ThrottleEngine::Admission admission;
    engine.addAnswered(event, [&](const ThrottleEngine::Admission &decided) {
        admission = decided;
        if (decided.refused) {
            event.status = 429;
            event.retryAfter = retryAfterText(decided.retryAtMs - t);
            event.durationMs = 0;
        } else {
            event.status = operation.outcomeStatus;
            event.durationMs = double(operation.serviceMs);
        }
    });
    if (breakers)
        breakers->add(event, throttle::extract(event));
    if (observer)
        observer(event);
    notePacedSend(client, t);
    if (behaviour.backgroundCapPercent) {
        client.recentAll.push_back(t);
        if (operation.background)
            client.recentBackground.push_back(t);
    }
    ++client.totals.requests;
    client.totals.retries += event.attempt > 0 ? 1 : 0;
    if (admission.refused) {
        ++client.totals.throttles;
        if (options.recordTimeline)
            result.simulatedTimeline.throttles.push_back(t);
        if (behaviour.obeyRetryAfter)
            client.holdUntil = std::max(client.holdUntil, admission.retryAtMs);
        failAttempt(client, slot, t, admission.retryAtMs);
        return;
    }
    const qint64 done = t + operation.serviceMs;
    client.totals.finishMs = std::max(client.totals.finishMs, done);
    if (options.recordTimeline)
        result.simulatedTimeline.completions.push_back(done);
    pushSlot(client, Slot{-1, 0, done, 0});
}

// The client's turn at t: it sends what its slots have ready, as the pace and a Retry-After
// it obeys allow, then asks for its next turn.
void Simulation::Impl::takeTurn(int index, qint64 t)
{
    Client &client = clients[size_t(index)];
    while (!client.ready.empty()) {
        const Slot top = client.ready.top();
        if (top.readyAt > t) {
            schedule(index, top.readyAt);
            return;
        }
        qint64 gate = nextPacedSend(client);
        if (behaviour.obeyRetryAfter)
            gate = std::max(gate, client.holdUntil);
        if (gate > t) {
            schedule(index, gate);
            return;
        }
        client.ready.pop();
        Slot slot = top;
        if (slot.operation < 0) {
            slot.operation = nextOperation(client, t);
            slot.attempt = 0;
            if (slot.operation < 0)
                continue; // no work left: the slot retires
        }
        attempt(client, slot, t);
    }
}

void Simulation::Impl::collect()
{
    result.behaviour = behaviour;
    for (const Policy &policy : policies.policies())
        result.policies << policy.name;
    for (const Client &client : clients) {
        const IdentityWork &identity = work.identities[size_t(client.identity)];
        IdentityOutcome outcome;
        outcome.identity = identity.identity;
        outcome.actual = identity.actual;
        outcome.whatif = client.totals;
        outcome.pacePerSecond = behaviour.paceFor(identity.identity);
        outcome.concurrency = behaviour.concurrency > 0 ? behaviour.concurrency
                                                        : std::max(1, identity.peakConcurrency);
        result.actual.merge(outcome.actual);
        result.whatif.merge(outcome.whatif);
        result.operations += qint64(identity.operations.size());
        result.byIdentity.push_back(std::move(outcome));
    }
    std::sort(result.simulatedTimeline.completions.begin(),
              result.simulatedTimeline.completions.end());
    result.advice = paceAdvice(engine.scopes());
}

SimulationResult Simulation::Impl::run()
{
    startClients();
    quint64 turnsTaken = 0;
    while (!turns.empty()) {
        const Turn turn = turns.top();
        turns.pop();
        Client &client = clients[size_t(turn.client)];
        if (client.scheduledAt != turn.at)
            continue; // superseded by an earlier turn
        client.scheduledAt = kNever;
        takeTurn(turn.client, turn.at);
        if (options.cancel && (++turnsTaken & 1023) == 0 && options.cancel->load()) {
            result.cancelled = true;
            break;
        }
    }
    collect();
    return std::move(result);
}

Simulation::Simulation(const Workload &work, const PolicySet &policies, Behaviour behaviour,
                       SimulationOptions options)
    : d(std::make_unique<Impl>(work, policies, std::move(behaviour), options))
{
}

Simulation::~Simulation() = default;

void Simulation::setSendObserver(SendObserver observer)
{
    d->observer = std::move(observer);
}

SimulationResult Simulation::run()
{
    return d->run();
}

const ThrottleEngine &Simulation::engine() const
{
    return d->engine;
}

} // namespace ts::whatif
