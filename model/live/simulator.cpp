#include "simulator.h"

#include "ndjsonformat.h"
#include "simulatedservice.h"

#include <QDateTime>
#include <QIODevice>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <numbers>
#include <queue>
#include <random>
#include <vector>

namespace ts::live {

namespace {

constexpr qint64 kTickMs = 100;
constexpr qint64 kSecond = 1000;
constexpr qint64 kMinute = 60 * kSecond;
// In the demo the three sessions take turns: the Fabric deployment and the Service Bus
// producers start while the OneNote migration recovers.
constexpr qint64 kDemoFabricDelayMs = 45 * kMinute;
constexpr qint64 kDemoServiceBusDelayMs = 60 * kMinute;

const QString kForeground = QStringLiteral("foreground");
const QString kBackground = QStringLiteral("background");

class Random
{
public:
    explicit Random(quint64 seed) : m_engine(seed) {}
    double uniform(double low, double high)
    {
        return std::uniform_real_distribution<double>(low, high)(m_engine);
    }
    qint64 between(qint64 low, qint64 high) // inclusive
    {
        return std::uniform_int_distribution<qint64>(low, high)(m_engine);
    }
    bool chance(double probability) { return uniform(0, 1) < probability; }
    QString guid()
    {
        const quint64 a = m_engine();
        const quint64 b = m_engine();
        const QString hex = QStringLiteral("%1%2")
                                .arg(qulonglong(a), 16, 16, QChar(u'0'))
                                .arg(qulonglong(b), 16, 16, QChar(u'0'));
        return hex.mid(0, 8) + u'-' + hex.mid(8, 4) + u'-' + hex.mid(12, 4) + u'-' +
               hex.mid(16, 4) + u'-' + hex.mid(20, 12);
    }
    QString hex(int digits)
    {
        QString out;
        while (out.size() < digits)
            out += QStringLiteral("%1").arg(qulonglong(m_engine()), 16, 16, QChar(u'0'));
        return out.left(digits);
    }

private:
    std::mt19937_64 m_engine;
};

// A request an actor wants to send at `ts`; the actor fills the response once the service
// has decided.
struct Intent
{
    qint64 ts = 0;
    quint64 sequence = 0;           // ties in ts keep planning order
    int actor = -1;                 // -1: a plain event (breaker, annotation) that needs no answer
    int token = 0;                  // the actor's own reference (job, task, producer)
    qint64 durationMs = 0;          // if accepted
    qint64 throttledDurationMs = 0; // if throttled
    RequestEvent event;
};

class Planner
{
public:
    Planner(std::vector<Intent> &intents, quint64 &sequence, int actor)
        : m_intents(intents), m_sequence(sequence), m_actor(actor)
    {
    }
    RequestEvent &request(qint64 ts, int token, qint64 durationMs, qint64 throttledDurationMs)
    {
        Intent intent;
        intent.ts = ts;
        intent.sequence = m_sequence++;
        intent.actor = m_actor;
        intent.token = token;
        intent.durationMs = durationMs;
        intent.throttledDurationMs = throttledDurationMs;
        intent.event.tsMs = ts;
        m_intents.push_back(std::move(intent));
        return m_intents.back().event;
    }
    void breaker(qint64 ts, const QString &scope, const QString &state)
    {
        RequestEvent &event = plain(ts);
        event.type = EventType::Breaker;
        event.breakerScope = scope;
        event.breakerState = state;
    }
    void annotation(qint64 ts, const QString &text)
    {
        RequestEvent &event = plain(ts);
        event.type = EventType::Annotation;
        event.text = text;
    }

private:
    RequestEvent &plain(qint64 ts)
    {
        Intent intent;
        intent.ts = ts;
        intent.sequence = m_sequence++;
        intent.event.tsMs = ts;
        m_intents.push_back(std::move(intent));
        return m_intents.back().event;
    }
    std::vector<Intent> &m_intents;
    quint64 &m_sequence;
    int m_actor;
};

class Actor
{
public:
    virtual ~Actor() = default;
    // Plans what is sent in [from, to).
    virtual void plan(qint64 from, qint64 to, Planner &planner) = 0;
    // The service's answer: complete intent.event (status, headers, body, duration) and update
    // the actor's state. Breaker transitions caused by the answer go to `planner`.
    virtual void answer(Intent &intent, const ServiceVerdict &verdict, Planner &planner) = 0;
};

QString fabricBlockedUntil(qint64 ms)
{
    // "2/18/2026 10:45:04 PM", the .NET invariant "G" pattern Fabric uses.
    const QDateTime time = QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC);
    const QTime clock = time.time();
    const int hour12 = clock.hour() % 12 == 0 ? 12 : clock.hour() % 12;
    return QStringLiteral("%1/%2/%3 %4:%5:%6 %7")
        .arg(time.date().month())
        .arg(time.date().day())
        .arg(time.date().year())
        .arg(hour12)
        .arg(clock.minute(), 2, 10, QChar(u'0'))
        .arg(clock.second(), 2, 10, QChar(u'0'))
        .arg(clock.hour() < 12 ? u"AM"_qs : u"PM"_qs);
}

// ---------------------------------------------------------------------------------------------
// OneNote -> Notion migration through Microsoft Graph (delegated, one bucket per app + user).
// ---------------------------------------------------------------------------------------------
class OneNoteMigration final : public Actor
{
public:
    static constexpr int kPages = 1300;
    static constexpr qint64 kNaiveRetryDelay = 30 * kSecond;
    static constexpr int kSlots = 4; // requests in flight per user (OneNote allows 5)

    OneNoteMigration(qint64 startMs, quint64 seed) : m_random(seed)
    {
        m_appId = m_random.guid();
        m_tenant = m_random.guid();
        m_migrationStart = startMs + 2 * kMinute;
        m_fixAt = startMs + 32 * kMinute;
        m_started = startMs;
        const int pagesPerUser[] = {520, 430, 350};
        const char *upns[] = {"alice@contoso.com", "bob@contoso.com", "carol@contoso.com"};
        for (int u = 0; u < 3; ++u) {
            User user;
            user.upn = QString::fromLatin1(upns[u]);
            user.objectId = m_random.guid();
            user.scope = u"user:"_qs + user.upn;
            user.nextScan = startMs + m_random.between(0, 8 * kSecond);
            user.slotFreeAt.assign(kSlots, 0);
            for (int p = 0; p < pagesPerUser[u]; ++p) {
                Job job;
                job.user = u;
                job.pageId = u"1-"_qs + m_random.hex(32) + u"!"_qs +
                             QString::number(m_random.between(1, 400)) + u"-"_qs + m_random.hex(32);
                job.operationId = u"page-"_qs + job.pageId.mid(2, 12);
                user.pending.push_back(int(m_jobs.size()));
                m_jobs.push_back(std::move(job));
            }
            m_users.push_back(std::move(user));
        }
    }

    void plan(qint64 from, qint64 to, Planner &planner) override
    {
        if (from <= m_started && m_started < to)
            planner.annotation(m_started, u"OneNote scans running (3 users, foreground lane)"_qs);
        if (from <= m_migrationStart && m_migrationStart < to) {
            planner.annotation(
                m_migrationStart,
                u"migration started: 1,300 OneNote pages -> Notion (background lane, retry "
                u"after a fixed 30 s on 429)"_qs);
        }
        const bool fixed = from >= m_fixAt;
        if (fixed && !m_fixAnnounced) {
            m_fixAnnounced = true;
            planner.annotation(m_fixAt,
                               u"fix switched on: one shared circuit breaker per user (all retry "
                               u"loops wait together) + background lane capped at 50 % of the "
                               u"budget"_qs);
            for (User &user : m_users) {
                // Every individual retry timer collapses into the breaker's one wait.
                while (!user.waiting.empty()) {
                    user.retryQueue.push_back(user.waiting.top().second);
                    user.waiting.pop();
                }
                std::sort(user.retryQueue.begin(), user.retryQueue.end());
                if (!user.retryQueue.empty()) {
                    user.breaker = BreakerState::Open;
                    user.openUntil = m_fixAt + user.cooldown;
                    planner.breaker(m_fixAt, user.scope, u"open"_qs);
                }
            }
        }
        for (int u = 0; u < int(m_users.size()); ++u) {
            planScans(u, from, to, fixed, planner);
            if (from + kTickMs <= m_migrationStart)
                continue;
            if (fixed)
                planFixed(u, from, to, planner);
            else
                planNaive(u, from, to, planner);
        }
        if (!m_completeAnnounced && m_done == kPages) {
            m_completeAnnounced = true;
            planner.annotation(from, u"migration complete: 1,300 pages copied"_qs);
        }
    }

    void answer(Intent &intent, const ServiceVerdict &verdict, Planner &planner) override
    {
        RequestEvent &event = intent.event;
        const bool scan = intent.token < 0;
        User &user = m_users[size_t(scan ? -intent.token - 1 : m_jobs[size_t(intent.token)].user)];
        if (verdict.accepted) {
            event.status = 200;
            event.durationMs = double(intent.durationMs);
            if (verdict.maxFill >= 0.8) {
                event.headers.set(u"x-ms-throttle-limit-percentage"_qs,
                                  QString::number(std::min(verdict.maxFill, 1.8), 'f', 1));
            }
        } else {
            event.status = 429;
            event.durationMs = double(intent.throttledDurationMs);
            event.errorCode = u"20166"_qs;
            event.headers.set(u"x-ms-throttle-scope"_qs,
                              u"User/ReadWrite/"_qs + m_appId + u'/' + user.objectId);
            event.body = QStringLiteral(
                "{\"error\":{\"code\":\"20166\",\"message\":\"The request limit for this user "
                "has been exceeded. Retry after the limit resets.\",\"@api.url\":"
                "\"https://aka.ms/onenote-errors#C20166\"}}");
        }
        const qint64 done = intent.ts + qint64(event.durationMs);
        const bool fixedNow = intent.ts >= m_fixAt;
        if (scan) {
            if (!verdict.accepted && !fixedNow && event.attempt < 2)
                user.scanRetries.push({done + kNaiveRetryDelay, event.attempt + 1});
            if (!verdict.accepted && fixedNow)
                tripBreaker(user, done, planner);
            return;
        }
        Job &job = m_jobs[size_t(intent.token)];
        if (intent.durationMs >= 0 && job.slot >= 0) {
            user.slotFreeAt[size_t(job.slot)] = done;
            job.slot = -1;
        }
        if (verdict.accepted) {
            job.done = true;
            ++m_done;
            if (fixedNow && user.breaker == BreakerState::HalfOpen) {
                user.breaker = BreakerState::Closed;
                user.cooldown = kMinute;
                planner.breaker(done, user.scope, u"closed"_qs);
            }
            return;
        }
        ++job.attempt;
        if (fixedNow) {
            user.retryQueue.push_front(intent.token);
            tripBreaker(user, done, planner);
        } else {
            user.waiting.push({done + kNaiveRetryDelay, intent.token});
        }
    }

private:
    enum class BreakerState { Closed, Open, HalfOpen };
    struct Job
    {
        int user = 0;
        QString pageId;
        QString operationId;
        int attempt = 0;
        int slot = -1;
        bool done = false;
    };
    using Wake = std::pair<qint64, int>; // (when, job)
    struct User
    {
        QString upn;
        QString objectId;
        QString scope;
        std::deque<int> pending;    // never tried
        std::deque<int> retryQueue; // fixed client: throttled jobs, in order
        std::priority_queue<Wake, std::vector<Wake>, std::greater<>> waiting; // naive timers
        std::priority_queue<std::pair<qint64, int>, std::vector<std::pair<qint64, int>>,
                            std::greater<>>
            scanRetries; // (when, attempt)
        std::vector<qint64> slotFreeAt;
        std::deque<std::pair<qint64, bool>> sent; // fixed client: (when, background) of its sends
        qint64 nextScan = 0;
        int scanSequence = 0;
        BreakerState breaker = BreakerState::Closed;
        qint64 openUntil = 0;
        qint64 cooldown = kMinute;
    };

    void tripBreaker(User &user, qint64 at, Planner &planner)
    {
        if (user.breaker == BreakerState::HalfOpen)
            user.cooldown = std::min<qint64>(user.cooldown * 2, 5 * kMinute);
        if (user.breaker != BreakerState::Open)
            planner.breaker(at, user.scope, u"open"_qs);
        user.breaker = BreakerState::Open;
        // OneNote sends no Retry-After: wait for the longest of the layers the client knows
        // about, at least a whole minute window.
        user.openUntil = std::max(user.openUntil, at + user.cooldown);
    }

    RequestEvent &pageRequest(Planner &planner, qint64 ts, int jobIndex)
    {
        Job &job = m_jobs[size_t(jobIndex)];
        const User &user = m_users[size_t(job.user)];
        RequestEvent &event =
            planner.request(ts, jobIndex, m_random.between(250, 900), m_random.between(25, 90));
        fillCommon(event, user);
        event.url = u"https://graph.microsoft.com/v1.0/users/"_qs + user.objectId +
                    u"/onenote/pages/"_qs + job.pageId + u"/content"_qs;
        event.attempt = job.attempt;
        event.operationId = job.operationId;
        event.lane = kBackground;
        return event;
    }

    void fillCommon(RequestEvent &event, const User &user)
    {
        event.identity = user.upn;
        event.app = m_appId;
        event.tenant = m_tenant;
        event.service = u"graph"_qs;
        event.method = u"GET"_qs;
        event.requestId = m_random.guid();
    }

    void scanRequest(int u, qint64 ts, int attempt, Planner &planner)
    {
        User &user = m_users[size_t(u)];
        RequestEvent &event =
            planner.request(ts, -u - 1, m_random.between(120, 420), m_random.between(25, 80));
        fillCommon(event, user);
        event.url = u"https://graph.microsoft.com/v1.0/users/"_qs + user.objectId +
                    u"/onenote/pages?$top=20&$select=id,title,lastModifiedDateTime"_qs;
        event.attempt = attempt;
        event.operationId = u"scan-"_qs + user.upn.section(u'@', 0, 0) + u'-' +
                            QString::number(++user.scanSequence);
        event.lane = kForeground;
    }

    void planScans(int u, qint64 from, qint64 to, bool fixed, Planner &planner)
    {
        User &user = m_users[size_t(u)];
        while (!user.scanRetries.empty() && user.scanRetries.top().first < to) {
            const auto [when, attempt] = user.scanRetries.top();
            user.scanRetries.pop();
            scanRequest(u, std::max(when, from), attempt, planner);
        }
        while (user.nextScan < to) {
            const qint64 at = std::max(user.nextScan, from);
            user.nextScan = at + m_random.between(20 * kSecond, 60 * kSecond);
            // The fixed client keeps interactive work behind an open breaker, too; the lane cap
            // is what keeps room for it once the breaker closes.
            if (fixed && (user.breaker != BreakerState::Closed || !budgetAllows(user, at, false)))
                continue;
            scanRequest(u, at, 0, planner);
            if (fixed)
                user.sent.push_back({at, false});
        }
    }

    void planNaive(int u, qint64 from, qint64 to, Planner &planner)
    {
        User &user = m_users[size_t(u)];
        // Every throttled job's own retry loop wakes after the same fixed delay: the waves.
        while (!user.waiting.empty() && user.waiting.top().first < to) {
            const auto [when, jobIndex] = user.waiting.top();
            user.waiting.pop();
            pageRequest(planner, std::max(when, from), jobIndex);
        }
        for (int slot = 0; slot < kSlots && !user.pending.empty(); ++slot) {
            if (user.slotFreeAt[size_t(slot)] >= to)
                continue;
            const int jobIndex = user.pending.front();
            user.pending.pop_front();
            const qint64 at =
                std::max(user.slotFreeAt[size_t(slot)], from) + m_random.between(3, 30);
            m_jobs[size_t(jobIndex)].slot = slot;
            user.slotFreeAt[size_t(slot)] = std::numeric_limits<qint64>::max();
            pageRequest(planner, std::min(at, to - 1), jobIndex);
        }
    }

    // The fixed client's lane budget, counted from its own sends: background work may use at
    // most half of the documented per-minute and per-hour limits, all lanes together all of them,
    // so interactive work always finds room.
    bool budgetAllows(User &user, qint64 at, bool background)
    {
        while (!user.sent.empty() && user.sent.front().first <= at - 60 * kMinute)
            user.sent.pop_front();
        qint64 minuteAll = 0;
        qint64 minuteBackground = 0;
        qint64 hourBackground = 0;
        for (const auto &[when, isBackground] : user.sent) {
            const bool inMinute = when > at - kMinute;
            minuteAll += inMinute ? 1 : 0;
            minuteBackground += inMinute && isBackground ? 1 : 0;
            hourBackground += isBackground ? 1 : 0;
        }
        const qint64 hourAll = qint64(user.sent.size());
        if (minuteAll + 1 > 120 || hourAll + 1 > 400)
            return false;
        return !background || (minuteBackground + 1 <= 60 && hourBackground + 1 <= 200);
    }

    void planFixed(int u, qint64 from, qint64 to, Planner &planner)
    {
        User &user = m_users[size_t(u)];
        if (user.breaker == BreakerState::Open && user.openUntil < to) {
            // Half-open: one probe on behalf of everyone waiting.
            const qint64 at = std::max(user.openUntil, from);
            user.breaker = BreakerState::HalfOpen;
            planner.breaker(at, user.scope, u"half-open"_qs);
            std::deque<int> &queue = user.retryQueue.empty() ? user.pending : user.retryQueue;
            if (queue.empty()) {
                user.breaker = BreakerState::Closed;
                planner.breaker(at, user.scope, u"closed"_qs);
            } else {
                const int jobIndex = queue.front();
                queue.pop_front();
                m_jobs[size_t(jobIndex)].slot = -1;
                pageRequest(planner, at, jobIndex);
                user.sent.push_back({at, true});
            }
            return;
        }
        if (user.breaker != BreakerState::Closed)
            return;
        for (int slot = 0; slot < kSlots; ++slot) {
            if (user.slotFreeAt[size_t(slot)] >= to)
                continue;
            std::deque<int> &queue = user.retryQueue.empty() ? user.pending : user.retryQueue;
            if (queue.empty())
                break;
            const qint64 at = std::min(
                std::max(user.slotFreeAt[size_t(slot)], from) + m_random.between(3, 30), to - 1);
            if (!budgetAllows(user, at, true))
                break;
            const int jobIndex = queue.front();
            queue.pop_front();
            m_jobs[size_t(jobIndex)].slot = slot;
            user.slotFreeAt[size_t(slot)] = std::numeric_limits<qint64>::max();
            pageRequest(planner, at, jobIndex);
            user.sent.push_back({at, true});
        }
    }

    Random m_random;
    QString m_appId;
    QString m_tenant;
    qint64 m_started = 0;
    qint64 m_migrationStart = 0;
    qint64 m_fixAt = 0;
    bool m_fixAnnounced = false;
    bool m_completeAnnounced = false;
    int m_done = 0;
    std::vector<Job> m_jobs;
    std::vector<User> m_users;
};

// ---------------------------------------------------------------------------------------------
// Fabric deployment: items (LRO), pipeline jobs and their status polls, Retry-After honoured.
// ---------------------------------------------------------------------------------------------
class FabricDeployment final : public Actor
{
public:
    static constexpr int kItemsPerRound = 240;
    static constexpr int kWorkers = 16;

    FabricDeployment(qint64 startMs, qint64 roundEveryMs, quint64 seed)
        : m_random(seed), m_roundEvery(roundEveryMs)
    {
        m_identity = m_random.guid();
        m_app = m_random.guid();
        m_tenant = m_random.guid();
        for (int w = 0; w < 3; ++w)
            m_workspaces.append(m_random.guid());
        m_nextRound = startMs + 30 * kSecond;
        m_workerFreeAt.assign(kWorkers, 0);
    }

    void plan(qint64 from, qint64 to, Planner &planner) override
    {
        if (m_nextRound < to) {
            ++m_round;
            planner.annotation(m_nextRound, QStringLiteral("Fabric deployment %1 started: %2 "
                                                           "items, pipelines run after creation")
                                                .arg(m_round)
                                                .arg(kItemsPerRound));
            for (int i = 0; i < kItemsPerRound; ++i) {
                Task task;
                task.workspace = m_workspaces.at(i % m_workspaces.size());
                task.item = m_random.guid();
                task.operationId = QStringLiteral("deploy-%1-item-%2").arg(m_round).arg(i + 1);
                task.readyAt = m_nextRound;
                m_queue.push_back(int(m_tasks.size()));
                m_tasks.push_back(std::move(task));
            }
            m_nextRound =
                m_roundEvery > 0 ? m_nextRound + m_roundEvery : std::numeric_limits<qint64>::max();
        }
        for (int w = 0; w < kWorkers; ++w) {
            if (m_workerFreeAt[size_t(w)] >= to)
                continue;
            // The worker takes the first task that is ready: not waiting between polls, and its
            // quota group not blocked (a RequestBlocked answer blocks the whole group of the
            // identity until the advised instant, so the client holds every request for it).
            auto it = std::find_if(m_queue.begin(), m_queue.end(), [&](int t) {
                const Task &candidate = m_tasks[size_t(t)];
                return candidate.readyAt < to &&
                       m_groupBlockedUntil[int(groupOf(candidate.step))] < to;
            });
            if (it == m_queue.end())
                break;
            const int taskIndex = *it;
            m_queue.erase(it);
            Task &task = m_tasks[size_t(taskIndex)];
            const qint64 at =
                std::min(std::max({m_workerFreeAt[size_t(w)], task.readyAt,
                                   m_groupBlockedUntil[int(groupOf(task.step))], from}) +
                             m_random.between(2, 40),
                         to - 1);
            task.worker = w;
            m_workerFreeAt[size_t(w)] = std::numeric_limits<qint64>::max();
            send(task, taskIndex, at, planner);
        }
    }

    void answer(Intent &intent, const ServiceVerdict &verdict, Planner &) override
    {
        Task &task = m_tasks[size_t(intent.token)];
        RequestEvent &event = intent.event;
        const qint64 t = intent.ts;
        if (verdict.accepted) {
            event.durationMs = double(intent.durationMs);
            switch (task.step) {
            case Step::CreateItem:
                event.status = 202;
                task.operation = m_random.guid();
                task.pollsLeft = int(m_random.between(1, 4));
                task.step = Step::PollItemOperation;
                break;
            case Step::PollItemOperation:
                event.status = 200;
                if (--task.pollsLeft <= 0)
                    task.step = Step::ItemOperationResult;
                break;
            case Step::ItemOperationResult:
                event.status = 200;
                task.step = Step::RunPipeline;
                break;
            case Step::RunPipeline:
                event.status = 202;
                task.job = m_random.guid();
                task.pollsLeft = int(m_random.between(3, 9));
                task.step = Step::PollJob;
                break;
            case Step::PollJob:
                event.status = 200;
                if (--task.pollsLeft <= 0)
                    task.step = Step::Done;
                break;
            case Step::Done:
                break;
            }
            task.attempt = 0;
        } else {
            event.status = 429;
            event.durationMs = double(intent.throttledDurationMs);
            event.errorCode = u"RequestBlocked"_qs;
            // Retry-After counts from the moment the answer arrives; the blocked-until text names
            // the whole second at which the window has room again.
            const qint64 respondedAt = t + intent.throttledDurationMs;
            const qint64 untilSecond = (verdict.retryAtMs + 999) / 1000 * 1000;
            const qint64 seconds = std::max<qint64>(1, (untilSecond - respondedAt + 999) / 1000);
            task.blockedUntil = respondedAt + seconds * 1000;
            event.retryAfter = QString::number(seconds);
            event.headers.set(u"x-ms-public-api-error-code"_qs, u"RequestBlocked"_qs);
            event.body = QStringLiteral("{\"requestId\":\"%1\",\"errorCode\":\"RequestBlocked\","
                                        "\"message\":\"Request is blocked by the upstream "
                                        "service until: %2 (UTC)\"}")
                             .arg(event.requestId, fabricBlockedUntil(untilSecond));
            ++task.attempt;
        }
        const qint64 done = t + qint64(event.durationMs);
        m_workerFreeAt[size_t(task.worker)] = done;
        if (task.step == Step::Done)
            return;
        // Polls wait between tries; a throttled request waits what Retry-After says.
        qint64 readyAt = done + m_random.between(50, 300);
        if (!verdict.accepted) {
            readyAt = task.blockedUntil + m_random.between(0, 1500);
            qint64 &blocked = m_groupBlockedUntil[int(groupOf(task.step))];
            blocked = std::max(blocked, task.blockedUntil);
        } else if (task.step == Step::PollItemOperation || task.step == Step::PollJob)
            readyAt = done + m_random.between(1000, 2500);
        task.readyAt = readyAt;
        m_queue.push_back(intent.token);
    }

private:
    enum class Step {
        CreateItem,
        PollItemOperation,
        ItemOperationResult,
        RunPipeline,
        PollJob,
        Done
    };
    enum class Group { Platform, JobScheduler, LongRunningOperations };
    static Group groupOf(Step step)
    {
        switch (step) {
        case Step::PollItemOperation:
        case Step::ItemOperationResult:
            return Group::LongRunningOperations;
        case Step::RunPipeline:
        case Step::PollJob:
            return Group::JobScheduler;
        case Step::CreateItem:
        case Step::Done:
            break;
        }
        return Group::Platform;
    }
    struct Task
    {
        QString workspace;
        QString item;
        QString operation;
        QString job;
        QString operationId;
        Step step = Step::CreateItem;
        int pollsLeft = 0;
        int attempt = 0;
        int worker = -1;
        qint64 readyAt = 0;
        qint64 blockedUntil = 0; // after a RequestBlocked: when Retry-After allows again
    };

    void send(Task &task, int taskIndex, qint64 at, Planner &planner)
    {
        const QString base = u"https://api.fabric.microsoft.com/v1"_qs;
        const QString itemUrl = base + u"/workspaces/"_qs + task.workspace + u"/items"_qs;
        RequestEvent &event =
            planner.request(at, taskIndex, m_random.between(80, 650), m_random.between(15, 60));
        event.identity = m_identity;
        event.app = m_app;
        event.tenant = m_tenant;
        event.service = u"fabric"_qs;
        event.requestId = m_random.guid();
        event.attempt = task.attempt;
        event.operationId = task.operationId;
        event.lane = kBackground;
        switch (task.step) {
        case Step::CreateItem:
            event.method = u"POST"_qs;
            event.url = itemUrl;
            break;
        case Step::PollItemOperation:
            event.method = u"GET"_qs;
            event.url = base + u"/operations/"_qs + task.operation;
            break;
        case Step::ItemOperationResult:
            event.method = u"GET"_qs;
            event.url = base + u"/operations/"_qs + task.operation + u"/result"_qs;
            break;
        case Step::RunPipeline:
            event.method = u"POST"_qs;
            event.url = itemUrl + u'/' + task.item + u"/jobs/instances?jobType=Pipeline"_qs;
            break;
        case Step::PollJob:
            event.method = u"GET"_qs;
            event.url = itemUrl + u'/' + task.item + u"/jobs/instances/"_qs + task.job;
            break;
        case Step::Done:
            break;
        }
    }

    Random m_random;
    qint64 m_roundEvery;
    qint64 m_nextRound = 0;
    int m_round = 0;
    QString m_identity;
    QString m_app;
    QString m_tenant;
    QStringList m_workspaces;
    std::vector<Task> m_tasks;
    std::deque<int> m_queue;
    std::vector<qint64> m_workerFreeAt;
    qint64 m_groupBlockedUntil[3] = {0, 0, 0};
};

// ---------------------------------------------------------------------------------------------
// Service Bus Standard: producers sharing one namespace's 1000 credits/s.
// ---------------------------------------------------------------------------------------------
class ServiceBusProducers final : public Actor
{
public:
    static constexpr qint64 kBatchEvery = 200;
    static constexpr qint64 kServerBusyPause = 10 * kSecond; // the .NET client's sleep

    // Active for `activeMs` at the start of every `periodMs` (periodMs 0 = always).
    ServiceBusProducers(qint64 startMs, qint64 activeMs, qint64 periodMs, quint64 seed)
        : m_random(seed), m_start(startMs), m_active(activeMs), m_period(periodMs)
    {
        struct Spec
        {
            const char *identity;
            const char *entity;
            double creditsPerSecond;
        };
        const Spec specs[] = {{"orders-api", "orders", 330},
                              {"payments-api", "payments", 250},
                              {"inventory-sync", "inventory", 210},
                              {"audit-forwarder", "audit", 160}};
        for (const Spec &spec : specs) {
            Producer producer;
            producer.identity = QString::fromLatin1(spec.identity);
            producer.entity = QString::fromLatin1(spec.entity);
            producer.creditsPerSecond = spec.creditsPerSecond;
            producer.nextSend = startMs + m_random.between(0, kBatchEvery);
            m_producers.push_back(std::move(producer));
        }
    }

    void plan(qint64 from, qint64 to, Planner &planner) override
    {
        if (!m_announced) {
            m_announced = true;
            planner.annotation(m_start, u"Service Bus producers started on sb-orders-prod "
                                        u"(Standard, 1000 credits/s)"_qs);
        }
        for (int p = 0; p < int(m_producers.size()); ++p) {
            Producer &producer = m_producers[size_t(p)];
            while (producer.nextSend < to) {
                const qint64 at = std::max(producer.nextSend, from);
                producer.nextSend = at + kBatchEvery + m_random.between(-20, 20);
                if (!isActive(at))
                    continue;
                // Load swells and ebbs over a few minutes; the peaks cross 1000 credits/s.
                const double phase =
                    double(at - m_start) / double(3 * kMinute) * 2 * std::numbers::pi;
                const double load =
                    1.0 + 0.12 * std::sin(phase + p) + m_random.uniform(-0.05, 0.05);
                const int credits = std::max(
                    1, int(std::lround(producer.creditsPerSecond * load * kBatchEvery / 1000.0)));
                if (producer.retryCredits == 0)
                    ++producer.batchSequence;
                RequestEvent &event =
                    planner.request(at, p, m_random.between(4, 35), m_random.between(2, 12));
                event.identity = producer.identity;
                event.service = u"servicebus"_qs;
                event.serviceBusNamespace = u"sb-orders-prod"_qs;
                event.entity = producer.entity;
                event.method = u"Send"_qs;
                event.url = u"amqps://sb-orders-prod.servicebus.windows.net/"_qs + producer.entity;
                event.credits = producer.retryCredits > 0 ? producer.retryCredits : credits;
                event.attempt = producer.retryAttempt;
                event.operationId =
                    producer.identity + u"-batch-"_qs + QString::number(producer.batchSequence);
                event.requestId = m_random.guid();
                event.lane = kBackground;
                // One batch at a time per producer: the next waits for this answer.
                producer.nextSend = std::numeric_limits<qint64>::max();
                producer.lastSend = at;
                break;
            }
        }
    }

    void answer(Intent &intent, const ServiceVerdict &verdict, Planner &) override
    {
        Producer &producer = m_producers[size_t(intent.token)];
        RequestEvent &event = intent.event;
        if (verdict.accepted) {
            event.status = 200;
            event.durationMs = double(intent.durationMs);
            producer.retryCredits = 0;
            producer.retryAttempt = 0;
            producer.nextSend =
                std::max(intent.ts + intent.durationMs,
                         producer.lastSend + kBatchEvery + m_random.between(-20, 20));
            return;
        }
        event.status = 429;
        event.durationMs = double(intent.throttledDurationMs);
        event.errorCode = u"50009"_qs;
        event.body = u"The request was terminated because the entity is being throttled. Error "
                     u"code: 50009. Please wait 2 seconds and try again."_qs;
        producer.retryCredits = event.credits;
        producer.retryAttempt = event.attempt + 1;
        producer.nextSend = intent.ts + qint64(event.durationMs) + kServerBusyPause;
    }

private:
    struct Producer
    {
        QString identity;
        QString entity;
        double creditsPerSecond = 0;
        qint64 nextSend = 0;
        qint64 lastSend = 0;
        double retryCredits = 0;
        int retryAttempt = 0;
        int batchSequence = 0;
    };

    bool isActive(qint64 at) const
    {
        if (m_period <= 0)
            return true;
        return (at - m_start) % m_period < m_active;
    }

    Random m_random;
    qint64 m_start;
    qint64 m_active;
    qint64 m_period;
    bool m_announced = false;
    std::vector<Producer> m_producers;
};

} // namespace

struct Simulation::Impl
{
    qint64 start = 0;
    qint64 end = 0;
    qint64 producedUntil = 0;
    std::unique_ptr<SimulatedService> service;
    std::vector<std::unique_ptr<Actor>> actors;
    std::vector<Intent> intents;
    quint64 sequence = 0;

    void tick(qint64 from, qint64 to, QList<RequestEvent> *out)
    {
        intents.clear();
        for (int a = 0; a < int(actors.size()); ++a) {
            Planner planner(intents, sequence, a);
            actors[size_t(a)]->plan(from, to, planner);
        }
        std::sort(intents.begin(), intents.end(), [](const Intent &x, const Intent &y) {
            return x.ts != y.ts ? x.ts < y.ts : x.sequence < y.sequence;
        });
        // Answers can add breaker transitions; they are emitted after the request that caused
        // them (at its completion instant, which is within or after this tick), so they are
        // collected and merged in time order.
        std::vector<Intent> followUps;
        std::vector<RequestEvent> produced;
        produced.reserve(intents.size());
        for (Intent &intent : intents) {
            if (intent.event.tsMs >= end)
                continue;
            if (intent.actor >= 0) {
                ServiceVerdict verdict = service->submit(intent.event, intent.durationMs);
                // The service's concurrency bookkeeping charged the accepted duration; a 429
                // answers faster, which the log then shows (a small, conservative difference).
                Planner planner(followUps, sequence, intent.actor);
                actors[size_t(intent.actor)]->answer(intent, verdict, planner);
            }
            produced.push_back(std::move(intent.event));
        }
        for (Intent &followUp : followUps)
            pending.push_back(std::move(followUp.event));
        // Release transitions whose instant has come, in time order with this tick's requests.
        std::stable_sort(
            pending.begin(), pending.end(),
            [](const RequestEvent &a, const RequestEvent &b) { return a.tsMs < b.tsMs; });
        std::vector<RequestEvent> merged;
        merged.reserve(produced.size() + pending.size());
        auto p = pending.begin();
        for (RequestEvent &event : produced) {
            while (p != pending.end() && p->tsMs <= event.tsMs)
                merged.push_back(std::move(*p++));
            merged.push_back(std::move(event));
        }
        while (p != pending.end() && p->tsMs < to)
            merged.push_back(std::move(*p++));
        pending.erase(pending.begin(), p);
        for (RequestEvent &event : merged) {
            if (event.tsMs < end) {
                event.source = QStringLiteral("demo");
                out->append(std::move(event));
            }
        }
    }
    std::vector<RequestEvent> pending; // breaker transitions not yet due

    // What create() was asked for, kept to start the next cycle of a loop.
    QString scenario;
    quint64 seed = 1;
    qint64 loopEveryMs = 0;
    qint64 nextCycleMs = 0;
    void addActors(qint64 cycleStart);
    void startNextCycle();
};

Simulation::Simulation() : d(std::make_unique<Impl>()) {}
Simulation::~Simulation() = default;

QStringList Simulation::scenarioNames()
{
    return {u"onenote-migration"_qs, u"fabric-deployment"_qs, u"servicebus-producers"_qs,
            u"demo"_qs};
}

qint64 Simulation::scenarioDurationMs(const QString &scenario)
{
    if (scenario == u"fabric-deployment")
        return 25 * kMinute;
    if (scenario == u"servicebus-producers")
        return 15 * kMinute;
    // The migration: 30 min of death spiral, then an hour until the throttled charges have
    // left Graph's one-hour window, then the rest of the pages at the capped rate.
    return 220 * kMinute;
}

std::unique_ptr<Simulation> Simulation::create(const SimulationOptions &options, QString *error)
{
    if (!scenarioNames().contains(options.scenario)) {
        *error = QStringLiteral("unknown scenario \"%1\" (one of: %2)")
                     .arg(options.scenario, scenarioNames().join(u", "));
        return nullptr;
    }
    std::unique_ptr<Simulation> simulation(new Simulation);
    Impl &d = *simulation->d;
    d.start = options.startMs > 0 ? options.startMs : kDefaultStartMs;
    const qint64 duration =
        options.durationMs > 0 ? options.durationMs : scenarioDurationMs(options.scenario);
    d.end = options.loopEveryMs > 0 ? std::numeric_limits<qint64>::max() : d.start + duration;
    d.producedUntil = d.start;
    d.service = std::make_unique<SimulatedService>(options.policies);
    d.scenario = options.scenario;
    d.seed = options.seed;
    d.loopEveryMs = options.loopEveryMs;
    d.nextCycleMs = options.loopEveryMs > 0 ? d.start + options.loopEveryMs : d.end;
    d.addActors(d.start);
    return simulation;
}

void Simulation::Impl::addActors(qint64 cycleStart)
{
    // Each scenario draws from its own stream, so "demo" holds the same sessions as the single
    // scenarios with the same seed.
    const bool demo = scenario == u"demo";
    if (demo || scenario == u"onenote-migration")
        actors.push_back(std::make_unique<OneNoteMigration>(cycleStart, seed * 3 + 1));
    if (demo || scenario == u"fabric-deployment") {
        actors.push_back(std::make_unique<FabricDeployment>(
            cycleStart, demo ? kDemoFabricDelayMs : 0, seed * 3 + 2));
    }
    if (demo || scenario == u"servicebus-producers") {
        actors.push_back(std::make_unique<ServiceBusProducers>(
            cycleStart, 15 * kMinute, demo ? kDemoServiceBusDelayMs : 0, seed * 3 + 3));
    }
}

void Simulation::Impl::startNextCycle()
{
    // The clients of the last cycle stop (their waiting retries are dropped); the service keeps
    // its buckets, so a cycle that starts while a window is still full is throttled sooner.
    actors.clear();
    ++seed;
    addActors(nextCycleMs);
    nextCycleMs += loopEveryMs;
}

void Simulation::advanceTo(qint64 untilMs, QList<RequestEvent> *out)
{
    const qint64 limit = std::min(untilMs, d->end);
    while (d->producedUntil + kTickMs <= limit) {
        if (d->loopEveryMs > 0 && d->producedUntil >= d->nextCycleMs)
            d->startNextCycle();
        d->tick(d->producedUntil, d->producedUntil + kTickMs, out);
        d->producedUntil += kTickMs;
    }
    if (d->producedUntil < d->end && limit == d->end) {
        d->tick(d->producedUntil, d->end, out);
        d->producedUntil = d->end;
    }
}

qint64 Simulation::startMs() const
{
    return d->start;
}

qint64 Simulation::endMs() const
{
    return d->end;
}

qint64 Simulation::producedUntilMs() const
{
    return d->producedUntil;
}

bool Simulation::finished() const
{
    return d->producedUntil >= d->end;
}

bool writeSimulation(const SimulationOptions &options, QIODevice &out, QString *error,
                     qint64 *eventsWritten)
{
    std::unique_ptr<Simulation> simulation = Simulation::create(options, error);
    if (!simulation)
        return false;
    qint64 written = 0;
    QList<RequestEvent> events;
    QByteArray buffer;
    while (!simulation->finished()) {
        events.clear();
        simulation->advanceTo(simulation->producedUntilMs() + kMinute, &events);
        buffer.clear();
        for (const RequestEvent &event : std::as_const(events))
            appendNdjsonLine(event, buffer);
        if (out.write(buffer) != buffer.size()) {
            *error = QStringLiteral("cannot write the simulation: %1").arg(out.errorString());
            return false;
        }
        written += events.size();
    }
    if (eventsWritten)
        *eventsWritten = written;
    return true;
}

} // namespace ts::live
