#include "throttleengine.h"

#include "core/timeparse.h"
#include "engine/limiterstate.h"
#include "engine/usageseries.h"
#include "policy/eventfields.h"
#include "policy/textmatcher.h"
#include "signals/throttlesignals.h"

#include <QHash>
#include <QVarLengthArray>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <deque>
#include <map>

namespace ts {

namespace {

using limiter::kNoTime;

constexpr int kMaxLimits = 64; // per policy, see Policy::validate()
// Fixed windows shorter than this are not re-phased from Retry-After: a Service Bus "wait 2
// seconds" says nothing about where a 1 s credit window starts.
constexpr qint64 kMinLearnableWindowMs = 10'000;
constexpr size_t kMaxRetryIntervals = 5000;
// Near-limit saturation that comes back within this long (or one window, when longer) is the
// same episode: one alert.
constexpr qint64 kNearLimitEpisodeGapMs = 60'000;
// A limit-percentage / remaining header corrects the bucket when it is further than this
// fraction of the capacity from the replay's usage (headers round; a few requests in flight
// between the service's count and the log's order are no news).
constexpr double kCorrectionTolerance = 0.2;
// An unexpected 429 on a window the log may not show whole is taken as state from before the
// log only while the replay's usage is below this fraction of the capacity; above it the limit
// is likelier lower than documented (the report's "far below the limit" line uses the same
// half).
constexpr double kHiddenStateBelowFill = 0.5;

// Conditions a policy can memoise per event (bits of a quint64).
constexpr int kMaxMemoConditions = 64;

struct CompiledCondition
{
    EventField field;
    TextMatcher matcher;
    // Another condition on the same field that matches exactly where this one does not
    // ("^(?!.*/onenote/)" and "/onenote/"): this one is answered by negating it (-1: none).
    int complementOf = -1;
};

struct CompiledCost
{
    std::vector<int> match; // condition ids in the policy's table
    double credits = 1;
};

struct CompiledLimit
{
    int policy = -1;
    int indexInPolicy = -1;
    PolicyLimit spec;
    limiter::Params params;
    std::vector<int> match; // condition ids in the policy's table
    int keySignature = -1;  // index into the policy's key signatures
    std::vector<CompiledCost> cost;
    bool chargeThrottled = true;
    bool keyedByAppOnly = false; // one bucket for all users of an app
    bool keyedByIdentity = false; // the key holds the identity: no callers to keep
    qint64 resolutionMs = 1000;
};

constexpr size_t kAddressSlots = 512;
// Keys of up to this many parts are found by address (most keys are an identity, or an app and
// an identity); longer ones go through the hash.
constexpr size_t kAddressParts = 2;

// A key entry remembered by the addresses and lengths of its parts' characters. The addresses
// live in the slot itself: comparing them touches one cache line, where going through the
// entry's QStringList touched three.
struct AddressSlot
{
    std::array<const char16_t *, kAddressParts> text{};
    std::array<qsizetype, kAddressParts> size{};
    int entry = -1;
};

// The distinct `key` field lists of a policy. Limits with the same key (OneNote's minute, hour
// and concurrency all key by app+identity) share one lookup per event.
struct KeySignature
{
    std::vector<EventField> fields;
    // key hash -> first entry with that hash (collisions chain through KeyEntry::nextSameHash)
    QHash<size_t, int> entries;
    int lastEntry = -1;
    // Entries by the addresses of their parts' characters. Readers intern identities, apps and
    // namespaces, and an entry keeps the event's own string (shared), so the next event with
    // the same interned value finds its entry by address: no hash of the text, no comparison
    // of characters. Sound because a slot is only filled with addresses of characters the
    // entry's own strings hold (so they stay alive and unchanged while the entry exists).
    std::vector<AddressSlot> byAddress = std::vector<AddressSlot>(kAddressSlots);
};

// One key value of one signature, and its bucket in each limit of the policy (-1 = none yet).
struct KeyEntry
{
    QStringList parts;
    QString key; // parts joined with '+'
    int nextSameHash = -1;
    // Inline for the usual handful of limits: one fewer pointer to follow per event.
    QVarLengthArray<int, 8> buckets;
    int activity = -1; // index into Impl::activities (plot data only)
    // Requests charged under this key by any limit of the policy, and those the service
    // refused: what the pace advice divides each limit's requests by.
    qint64 requests = 0;
    qint64 throttled = 0;
};

// The last minutes of one key's traffic, per second (see KeyActivity): what the Overview reads
// as "429s per second now" and the lane share. Bounded by time, so a long log costs nothing.
struct ActivityLog
{
    // Past the retention's 300 one-second bins by this many, the old ones are dropped.
    static constexpr size_t kPruneAtBins = 512;
    QString key;
    std::deque<KeyActivityBin> bins;

    KeyActivityBin &binAt(qint64 t)
    {
        const qint64 start = limiter::floorDiv(t, 1000) * 1000;
        if (bins.empty() || bins.back().startMs < start) {
            bins.emplace_back().startMs = start;
            // Bins past the retention are dropped in batches, not one per new second: the
            // oldest bin is minutes old and out of cache, and reading it for every new bin of
            // every key was a cache miss per second of each key (issue 17.5). The snapshot
            // skips what is past the retention anyway.
            if (bins.size() > kPruneAtBins) {
                while (bins.front().startMs <= start - DashboardSnapshot::kActivityRetentionMs)
                    bins.pop_front();
            }
        }
        // A late event (older than the newest bin) counts in the newest bin: per-bucket
        // clamping does the same with its instant.
        return bins.back();
    }
};

struct CompiledPolicy
{
    QString name;
    // Every distinct (field, pattern) of the policy, limits and cost rules, compiled once; an
    // event evaluates each at most once (memoised in EventContext).
    std::vector<CompiledCondition> conditions;
    std::vector<int> match;
    // The condition of `match` that says "service is exactly X" (-1: none), and X: policies are
    // routed by service name, and a policy reached that way need not test it again.
    int exactServiceCondition = -1;
    QString exactService;
    std::vector<std::pair<QString, TextMatcher>> categories;
    // The memoised conditions on the category field, and which of them hold for each category
    // the URL rules can give (one more entry at the end: no rule matched). A classified event
    // starts its limit pass with these answers instead of running the matchers again.
    quint64 categoryConditionBits = 0;
    std::vector<quint64> categoryConditionHits;
    std::vector<int> limits; // indices into Impl::limits
    std::vector<KeySignature> keys;
    // Which limits have charged the same event: nextSafeSend of a key is the maximum over them.
    std::array<quint64, kMaxLimits> coCharged{};
    quint64 lastChargedMask = 0;

    int conditionId(const FieldCondition &condition)
    {
        const auto field = eventFieldFromName(condition.field);
        for (size_t i = 0; i < conditions.size(); ++i) {
            if (field && conditions[i].field == *field &&
                conditions[i].matcher.pattern() == condition.pattern) {
                return int(i);
            }
        }
        CompiledCondition c;
        // Validated when the policy was loaded; an unknown field can only come from a Policy
        // edited in code, and then the condition never matches.
        c.field = field.value_or(EventField::Service);
        if (!field || !c.matcher.compile(condition.pattern))
            c.matcher.compile(QStringLiteral("(?!)"));
        conditions.push_back(std::move(c));
        return int(conditions.size() - 1);
    }

    std::vector<int> conditionIds(const QList<FieldCondition> &list)
    {
        std::vector<int> ids;
        for (const FieldCondition &condition : list)
            ids.push_back(conditionId(condition));
        return ids;
    }

    // Once every condition is compiled: the shortcuts the per-event pass takes.
    void linkConditions()
    {
        for (size_t i = 0; i < conditions.size(); ++i) {
            for (size_t j = 0; j < conditions.size(); ++j) {
                if (i != j && conditions[i].field == conditions[j].field &&
                    conditions[j].complementOf < 0 &&
                    conditions[i].matcher.isComplementOf(conditions[j].matcher)) {
                    conditions[i].complementOf = int(j);
                    break;
                }
            }
        }
        categoryConditionBits = 0;
        categoryConditionHits.assign(categories.size() + 1, 0);
        for (size_t id = 0; id < conditions.size() && id < size_t(kMaxMemoConditions); ++id) {
            if (conditions[id].field != EventField::Category)
                continue;
            const quint64 bit = quint64(1) << id;
            categoryConditionBits |= bit;
            for (size_t k = 0; k <= categories.size(); ++k) {
                const QStringView name =
                    k < categories.size() ? QStringView(categories[k].first) : QStringView();
                if (conditions[id].matcher.matches(name))
                    categoryConditionHits[k] |= bit;
            }
        }
    }
};

// The policies an event of one service can select, in policy order: those whose match names
// exactly this service and those that do not name one. Built on first sight of the service.
struct ServiceRoute
{
    QString service;
    std::vector<int> candidates;
};

// Beyond this many distinct service names (a log with garbage in the service field), events of
// new services test every policy instead of growing the table.
constexpr size_t kMaxServiceRoutes = 64;

// Key hashing on the hot path. Qt's qHash(QStringView) is seeded SipHash where AES-NI is
// missing (tens of ns for an e-mail address); keys here are verified by comparison and nobody
// chooses them to collide, so a multiply-xorshift over 4 UTF-16 units at a time is enough.
inline size_t keyHash(QStringView text, size_t seed)
{
    quint64 h = quint64(seed) ^ (quint64(text.size()) * 0x9E3779B97F4A7C15ULL);
    const char16_t *p = text.utf16();
    qsizetype n = text.size();
    while (n >= 4) {
        quint64 v;
        std::memcpy(&v, p, sizeof v);
        h = (h ^ v) * 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 31;
        p += 4;
        n -= 4;
    }
    if (n > 0) {
        quint64 v = 0;
        std::memcpy(&v, p, size_t(n) * sizeof(char16_t));
        h = (h ^ v) * 0x94D049BB133111EBULL;
        h ^= h >> 29;
    }
    return size_t(h);
}

// Equality without a library call for the common "different length" and "same text" cases.
// Interned values (the readers share one copy of each service, method, identity) are the same
// characters in memory: compared by address first.
inline bool sameText(QStringView a, QStringView b)
{
    return a.size() == b.size() &&
           (a.utf16() == b.utf16() || a.isEmpty() ||
            std::memcmp(a.utf16(), b.utf16(), size_t(a.size()) * sizeof(char16_t)) == 0);
}

constexpr int kMaxKeySignatures = 16;

// What one event looks like to one policy, computed lazily and at most once.
struct EventContext
{
    const RequestEvent *event = nullptr;
    QStringView service;
    QStringView category;
    bool pathReady = false;
    QStringView path;
    bool hostReady = false;
    QStringView host;
    quint64 evaluated = 0;
    quint64 results = 0;
    std::array<int, kMaxKeySignatures> keyEntries;

    QStringView value(EventField field, QString *scratch)
    {
        switch (field) {
        case EventField::Service:
            return service;
        case EventField::Category:
            return category;
        case EventField::Path:
            if (!pathReady) {
                path = urlPath(event->url);
                pathReady = true;
            }
            return path;
        case EventField::Host:
            if (!hostReady) {
                host = urlHost(event->url);
                hostReady = true;
            }
            return host;
        default:
            return eventFieldValue(*event, field, service, category, scratch);
        }
    }

    // The value as a QString sharing the event's own characters when the field is one of its
    // strings (so a key entry made from it has the same address as later interned values), a
    // copy otherwise.
    [[nodiscard]] QString shareable(EventField field, QStringView value) const
    {
        const QString *own = ownString(field, value);
        return own ? *own : value.toString();
    }

    // The event's own string that `value` (the field's value) is, or null when the value is a
    // part of one (a URL path) or computed.
    [[nodiscard]] const QString *ownString(EventField field, QStringView value) const
    {
        const QString *own = nullptr;
        switch (field) {
        case EventField::Identity:
            own = &event->identity;
            break;
        case EventField::App:
            own = &event->app;
            break;
        case EventField::Tenant:
            own = &event->tenant;
            break;
        case EventField::Entity:
            own = &event->entity;
            break;
        case EventField::Namespace:
            own = &event->serviceBusNamespace;
            break;
        case EventField::Method:
            own = &event->method;
            break;
        default:
            break;
        }
        if (own && own->size() == value.size() && QStringView(*own).utf16() == value.utf16())
            return own;
        return nullptr;
    }

    bool test(const CompiledPolicy &policy, int id, QString *scratch)
    {
        if (id < kMaxMemoConditions) {
            const quint64 bit = quint64(1) << id;
            if (evaluated & bit)
                return results & bit;
            const CompiledCondition &c = policy.conditions[size_t(id)];
            const bool hit = c.complementOf >= 0 ? !test(policy, c.complementOf, scratch)
                                                 : c.matcher.matches(value(c.field, scratch));
            evaluated |= bit;
            if (hit)
                results |= bit;
            return hit;
        }
        const CompiledCondition &c = policy.conditions[size_t(id)];
        return c.matcher.matches(value(c.field, scratch));
    }

    bool all(const CompiledPolicy &policy, const std::vector<int> &ids, QString *scratch)
    {
        for (int id : ids) {
            if (!test(policy, id, scratch))
                return false;
        }
        return true;
    }
};

// Prefetches, for writing, where the next item appended to v goes: a bucket's marks are
// appended to between other buckets' events, and by its next one the slot is in cache.
template <typename T> void prefetchNextSlot(const std::vector<T> &v)
{
    if (v.size() < v.capacity())
        __builtin_prefetch(v.data() + v.size(), 1, 3);
}

// Instants kept for plotting, bounded: past the cap every other one is dropped and the stride
// doubles, so the picture keeps its shape over any length of log.
class BoundedInstants
{
public:
    void push(qint64 t, size_t cap)
    {
        if (++m_skip < m_stride)
            return;
        m_skip = 0;
        m_items.push_back(t);
        prefetchNextSlot(m_items);
        if (m_items.size() > cap) {
            size_t out = 0;
            for (size_t i = 0; i < m_items.size(); i += 2)
                m_items[out++] = m_items[i];
            m_items.resize(out);
            m_stride *= 2;
        }
    }
    [[nodiscard]] const std::vector<qint64> &items() const { return m_items; }

private:
    std::vector<qint64> m_items;
    qint64 m_stride = 1;
    qint64 m_skip = 0;
};

// (instant, value) samples kept for plotting, bounded like BoundedInstants but peak-preserving:
// past the cap, neighbours merge into the higher one and each stored sample then stands for
// twice as many raw ones (the highest of them), so a long log keeps its whole time span and
// its peaks instead of only its first samples.
class BoundedPeaks
{
public:
    void push(qint64 t, double value, size_t cap)
    {
        if (m_inGroup == 0 || value > m_group.second) {
            m_group.first = t;
            m_group.second = value;
        }
        if (++m_inGroup < m_stride)
            return;
        m_inGroup = 0;
        // Field by field: copying the pair whole reloads it as one 16-byte value just stored
        // as two 8-byte ones, a store-forwarding stall behind the slot's cache miss (most of
        // the cost of a header percentage per event, issue 17.5).
        std::pair<qint64, double> &item = m_items.emplace_back();
        item.first = m_group.first;
        item.second = m_group.second;
        prefetchNextSlot(m_items);
        if (m_items.size() > cap) {
            size_t out = 0;
            for (size_t i = 0; i < m_items.size(); i += 2) {
                const bool pair = i + 1 < m_items.size();
                m_items[out++] =
                    pair && m_items[i + 1].second > m_items[i].second ? m_items[i + 1] : m_items[i];
            }
            m_items.resize(out);
            m_stride *= 2;
        }
    }
    // The stored samples and the group being filled.
    [[nodiscard]] std::vector<std::pair<qint64, double>> items() const
    {
        std::vector<std::pair<qint64, double>> all = m_items;
        if (m_inGroup > 0)
            all.push_back(m_group);
        return all;
    }

private:
    std::vector<std::pair<qint64, double>> m_items;
    std::pair<qint64, double> m_group{0, 0};
    qint64 m_stride = 1;
    qint64 m_inGroup = 0;
};

using Series = UsageSeries;

// What a bucket's plot shows besides the usage steps; touched on throttles and observed
// percentages only, so kept out of the bucket's hot lines.
struct SeriesMarks
{
    BoundedPeaks observedPct;
    BoundedInstants observedThrottles;
    BoundedInstants predictedThrottles;
    std::vector<std::pair<qint64, qint64>> retryAfter;
    std::vector<StateCorrection> corrections; // at most maxSeriesPoints
};

// Laid out by temperature: every event of the bucket reads and writes the first three cache
// lines (bookkeeping, the bin being filled, the fixed-window state); the rest is touched on
// throttles, bin changes or at read-out. With hundreds of buckets and a stream of events going
// through the cache, the number of lines an event touches is what the engine's speed depends on.
struct alignas(64) Bucket
{
    // ---- every event ----
    int limit = -1; // index into Impl::limits
    bool inObservedEpisode = false;
    bool nearLimit = false; // near-limit alert coalescing
    qint64 lastT = kNoTime;
    qint64 requests = 0;
    double chargedCost = 0; // the costs of its requests, summed (the mix the advice reads)
    double peakUsage = 0;   // as the limiter counts it
    double peakFill = 0;
    double acceptedPeakUsage = 0;
    // Exhaustion episodes: closed total plus the running [start, end).
    qint64 atLimitMs = 0;
    qint64 exhaustedStart = kNoTime;
    qint64 exhaustedEnd = kNoTime;
    qint64 lastHighMs = kNoTime;
    Series series;        // the usage over time (plot data)
    limiter::State state; // fixed-window fields first

    // ---- throttles and read-out ----
    qint64 predicted = 0;
    qint64 observed = 0;
    // Observed throttle episodes and what they teach.
    std::optional<double> effectiveLimit;
    std::optional<double> observedPctMax;
    qint64 retryUntil = kNoTime;
    // The fixed window whose end a Retry-After taught (its start once moved): one lesson per
    // window (see process()).
    qint64 learnedWindowStart = kNoTime;
    int nearLimitAlert = -1; // index in Impl::alerts of the running episode's alert
    // Throttles by cause (ThrottleCause as index): observed ones attributed here, predicted.
    std::array<qint64, kThrottleCauseCount> observedByCause{};
    std::array<qint64, kThrottleCauseCount> predictedByCause{};
    // The service's corrections of this bucket: all counted, the first kept for the report.
    qint64 corrections = 0;
    std::vector<StateCorrection> correctionLog;
    SeriesMarks marks;
    QString key; // the key entry's parts joined with '+'
    QString service;
    // A key without the identity (an ARM subscription, an app): who sent its requests, the
    // first ScopeSummary::kMaxCallers of them (issue 30.6: the breakers of its row).
    QStringList callers;
    int keyEntry = -1;       // index into Impl::keyEntries
    double serviceMsSum = 0; // concurrency limits: send to answer, summed over its requests
};
// One limit's view of the event being processed.
struct Charge
{
    int bucket;
    double cost;
    bool hadRoom;
};

// What planCharges() found for one event: its policy, the limits that charge it and whether
// each had room. Made in place and never moved: ctx.service may view inferredService.
struct ChargePlan
{
    QString inferredService; // the service inferred from the URL, when the event names none
    EventContext ctx;
    int policy = -1;
    const QString *category = nullptr; // the policy's URL rule that classified it, if any
    std::array<Charge, kMaxLimits> charges;
    int count = 0;
    quint64 mask = 0;
    bool anyExhausted = false;
    bool late = false;
};

qint64 defaultResolutionMs(const PolicyLimit &limit)
{
    // Per second for minute-scale windows, finer where a bucket turns over within seconds.
    double horizonSeconds = 60;
    switch (limit.algorithm) {
    case Algorithm::FixedWindow:
    case Algorithm::SlidingWindow:
    case Algorithm::Credits:
        horizonSeconds = limit.windowSeconds;
        break;
    case Algorithm::TokenBucket:
        horizonSeconds = limit.refillPerSecond > 0 ? limit.capacity / limit.refillPerSecond : 60;
        break;
    case Algorithm::LeakyBucket: {
        const double rate = double(limit.nginxMilliRate()) / 1000.0;
        horizonSeconds = rate > 0 ? std::max(1.0, limit.burst) / rate : 60;
        break;
    }
    case Algorithm::Concurrency:
        horizonSeconds = 1;
        break;
    case Algorithm::Observed:
        horizonSeconds = 60;
        break;
    }
    if (horizonSeconds < 2)
        return 100;
    if (horizonSeconds < 10)
        return 250;
    return 1000;
}

// The steady request rate into a bucket that its limit sustains at this mean cost
// (engine/paceadvice.h); 0 when nothing limits it.
double allowedRatePerSecond(const CompiledLimit &limit, double meanCost, double meanServiceSeconds)
{
    const PolicyLimit &spec = limit.spec;
    switch (spec.algorithm) {
    case Algorithm::FixedWindow:
    case Algorithm::SlidingWindow:
    case Algorithm::Credits:
        // Evenly spaced, a window of W seconds holds at most ceil(rate x W) requests.
        return spec.windowSeconds > 0 && meanCost > 0
                   ? std::floor(limit.params.capacity / meanCost + 1e-9) / spec.windowSeconds
                   : 0;
    case Algorithm::TokenBucket:
        return meanCost > 0 ? spec.refillPerSecond / meanCost : 0;
    case Algorithm::LeakyBucket:
        return double(limit.params.milliRate) / 1000.0;
    case Algorithm::Concurrency:
        // Little's law: requests in flight = rate x time in flight.
        return meanServiceSeconds > 0 ? limit.params.capacity / meanServiceSeconds : 0;
    case Algorithm::Observed:
        break;
    }
    return 0;
}

} // namespace

struct ThrottleEngine::Impl
{
    using Verdict = ThrottleEngine::Verdict;

    Options options;
    PolicySet policySet;
    std::vector<CompiledPolicy> policies;
    std::vector<CompiledLimit> limits;
    std::vector<Bucket> buckets;
    std::vector<KeyEntry> keyEntries;
    std::vector<ServiceRoute> serviceRoutes;
    int lastServiceRoute = -1;

    qint64 requestEvents = 0;
    qint64 lateEvents = 0;
    qint64 unmatchedEvents = 0;
    std::optional<qint64> firstMs;
    std::optional<qint64> lastMs;

    ThrottleSummary throttles;
    qint64 throttleBinMs = 1000;
    struct BinCounts
    {
        QMap<QString, qint64> byErrorCode;
        QMap<QString, qint64> byCause;
    };
    std::map<qint64, BinCounts> throttleBins;
    QList<Alert> alerts;
    std::vector<ActivityLog> activities; // per key entry that saw traffic (plot data only)
    // Throttled events' causes (plot data only), and the copy the last snapshot got: reused
    // while nothing was added, so a quiet feed does not copy it ten times a second.
    // A deque: dropping the oldest quarter when full frees it without moving the other
    // 75,000 records (that move was a visible share of the plot data's cost).
    std::deque<EventCause> eventCauses;
    bool eventCausesSorted = true;
    quint64 eventCausesAdded = 0; // ever recorded: tells a snapshot whether they changed
    mutable quint64 publishedCausesAdded = 0;
    mutable std::shared_ptr<const std::vector<EventCause>> publishedCauses;

    // Text for fields that are numbers in the event (status), so matchers can read them.
    QString scratch;

    void compile(const PolicySet &set)
    {
        policySet = set;
        policies.clear();
        limits.clear();
        buckets.clear();
        serviceRoutes.clear();
        lastServiceRoute = -1;
        for (const Policy &policy : set.policies()) {
            CompiledPolicy compiled;
            compiled.name = policy.name;
            compiled.match = compiled.conditionIds(policy.match);
            for (int id : compiled.match) {
                const CompiledCondition &condition = compiled.conditions[size_t(id)];
                const auto exact = condition.matcher.exactText();
                if (condition.field == EventField::Service && exact && id < kMaxMemoConditions) {
                    compiled.exactServiceCondition = id;
                    compiled.exactService = *exact;
                    break;
                }
            }
            for (const CategoryRule &rule : policy.categories) {
                TextMatcher matcher;
                if (!matcher.compile(rule.urlPattern))
                    matcher.compile(QStringLiteral("(?!)"));
                compiled.categories.emplace_back(rule.name, std::move(matcher));
            }
            const int policyIndex = int(policies.size());
            for (int i = 0; i < policy.limits.size() && i < kMaxLimits; ++i) {
                const PolicyLimit &spec = policy.limits.at(i);
                CompiledLimit limit;
                limit.policy = policyIndex;
                limit.indexInPolicy = i;
                limit.spec = spec;
                limit.params = limiter::Params::fromLimit(spec);
                limit.match = compiled.conditionIds(spec.match);
                std::vector<EventField> keyFields;
                for (const QString &field : spec.keyFields())
                    keyFields.push_back(eventFieldFromName(field).value_or(EventField::Identity));
                for (size_t k = 0; k < compiled.keys.size(); ++k) {
                    if (compiled.keys[k].fields == keyFields)
                        limit.keySignature = int(k);
                }
                if (limit.keySignature < 0 && compiled.keys.size() < size_t(kMaxKeySignatures)) {
                    compiled.keys.push_back({keyFields, {}, -1});
                    limit.keySignature = int(compiled.keys.size() - 1);
                }
                if (limit.keySignature < 0)
                    limit.keySignature = 0; // more than 16 distinct keys in one policy: share
                for (const CostRule &rule : spec.cost)
                    limit.cost.push_back({compiled.conditionIds(rule.match), rule.credits});
                limit.chargeThrottled = policy.chargesThrottled(spec);
                limit.keyedByAppOnly =
                    keyFields.size() == 1 && keyFields.front() == EventField::App;
                limit.keyedByIdentity = std::find(keyFields.begin(), keyFields.end(),
                                                  EventField::Identity) != keyFields.end();
                limit.resolutionMs = defaultResolutionMs(spec);
                compiled.limits.push_back(int(limits.size()));
                limits.push_back(std::move(limit));
            }
            compiled.linkConditions();
            policies.push_back(std::move(compiled));
        }
    }

    void resetCounters()
    {
        buckets.clear();
        keyEntries.clear();
        for (CompiledPolicy &policy : policies) {
            policy.coCharged.fill(0);
            policy.lastChargedMask = 0;
            for (KeySignature &signature : policy.keys) {
                signature.entries.clear();
                signature.lastEntry = -1;
                signature.byAddress.assign(kAddressSlots, AddressSlot{});
            }
        }
        requestEvents = 0;
        lateEvents = 0;
        unmatchedEvents = 0;
        firstMs.reset();
        lastMs.reset();
        throttles = {};
        throttleBinMs = options.throttleBinMs;
        throttleBins.clear();
        alerts.clear();
        activities.clear();
        eventCauses.clear();
        eventCausesSorted = true;
        eventCausesAdded = 0;
        publishedCausesAdded = 0;
        publishedCauses.reset();
    }

    // The route of the event's service (-1 when the table is full and the service is new).
    int serviceRouteFor(QStringView service)
    {
        // Logs come in runs of one service: try the last route before searching.
        if (lastServiceRoute >= 0 &&
            sameText(serviceRoutes[size_t(lastServiceRoute)].service, service)) {
            return lastServiceRoute;
        }
        for (size_t i = 0; i < serviceRoutes.size(); ++i) {
            if (sameText(serviceRoutes[i].service, service)) {
                lastServiceRoute = int(i);
                return lastServiceRoute;
            }
        }
        if (serviceRoutes.size() >= kMaxServiceRoutes)
            return -1;
        ServiceRoute route;
        route.service = service.toString();
        for (int i = 0; i < int(policies.size()); ++i) {
            const CompiledPolicy &policy = policies[size_t(i)];
            if (policy.exactServiceCondition < 0 || sameText(policy.exactService, service))
                route.candidates.push_back(i);
        }
        serviceRoutes.push_back(std::move(route));
        lastServiceRoute = int(serviceRoutes.size() - 1);
        return lastServiceRoute;
    }

    // The first policy, in policy order, whose match conditions all hold.
    int selectPolicy(EventContext &ctx)
    {
        auto fits = [&](int i) {
            const CompiledPolicy &policy = policies[size_t(i)];
            // Policy-level matches on the category see the event's own category only.
            ctx.evaluated = 0;
            ctx.results = 0;
            if (policy.exactServiceCondition >= 0 && sameText(policy.exactService, ctx.service)) {
                const quint64 bit = quint64(1) << policy.exactServiceCondition;
                ctx.evaluated |= bit;
                ctx.results |= bit;
            }
            return ctx.all(policy, policy.match, &scratch);
        };
        const int route = serviceRouteFor(ctx.service);
        if (route < 0) {
            for (int i = 0; i < int(policies.size()); ++i) {
                if (fits(i))
                    return i;
            }
            return -1;
        }
        for (int i : serviceRoutes[size_t(route)].candidates) {
            if (fits(i))
                return i;
        }
        return -1;
    }

    // The event's category: its own, or the first of the policy's URL rules that matches
    // (*rule = that rule's index, categories.size() when none matched, -1 for the event's own).
    QStringView classify(const CompiledPolicy &policy, EventContext &ctx, int *rule)
    {
        *rule = -1;
        if (!ctx.event->category.isEmpty() || policy.categories.empty())
            return ctx.event->category;
        const QStringView path = ctx.value(EventField::Path, &scratch);
        for (size_t k = 0; k < policy.categories.size(); ++k) {
            if (policy.categories[k].second.matches(path)) {
                *rule = int(k);
                return policy.categories[k].first;
            }
        }
        *rule = int(policy.categories.size());
        return {};
    }

    int keyEntryFor(CompiledPolicy &policy, int signatureIndex, EventContext &ctx)
    {
        if (ctx.keyEntries[size_t(signatureIndex)] >= 0)
            return ctx.keyEntries[size_t(signatureIndex)];
        KeySignature &signature = policy.keys[size_t(signatureIndex)];
        std::array<QStringView, 4> parts;
        const size_t n = std::min<size_t>(signature.fields.size(), parts.size());
        for (size_t i = 0; i < n; ++i)
            parts[i] = ctx.value(signature.fields[i], &scratch);

        auto sameKey = [&](const KeyEntry &entry) {
            for (size_t i = 0; i < n; ++i) {
                if (!sameText(entry.parts.at(qsizetype(i)), parts[i]))
                    return false;
            }
            return true;
        };
        const bool byAddress = n <= kAddressParts;
        quintptr mixed = 0;
        for (size_t i = 0; i < n; ++i)
            mixed = (mixed ^ quintptr(parts[i].utf16())) * 0x9E3779B97F4A7C15ULL;
        AddressSlot &addressSlot = signature.byAddress[size_t(mixed >> 40) % kAddressSlots];
        auto slotHoldsParts = [&] {
            if (!byAddress || addressSlot.entry < 0)
                return false;
            for (size_t i = 0; i < n; ++i) {
                if (addressSlot.size[i] != parts[i].size() ||
                    addressSlot.text[i] != parts[i].utf16())
                    return false;
            }
            return true;
        };

        int found = -1;
        const bool slotHit = slotHoldsParts();
        if (slotHit) {
            found = addressSlot.entry;
        } else if (signature.lastEntry >= 0 && sameKey(keyEntries[size_t(signature.lastEntry)])) {
            // Logs come in runs from the same caller: try the last entry before hashing.
            found = signature.lastEntry;
        } else {
            size_t hash = size_t(signatureIndex) * 0x9E3779B97F4A7C15ULL;
            for (size_t i = 0; i < n; ++i)
                hash = keyHash(parts[i], hash);
            int index = signature.entries.value(hash, -1);
            int previous = -1;
            while (index >= 0 && found < 0) {
                if (sameKey(keyEntries[size_t(index)]))
                    found = index;
                previous = index;
                index = keyEntries[size_t(index)].nextSameHash;
            }
            if (found < 0) {
                KeyEntry entry;
                for (size_t i = 0; i < n; ++i)
                    entry.parts.append(ctx.shareable(signature.fields[i], parts[i]));
                entry.key = entry.parts.join(u'+');
                entry.buckets.resize(qsizetype(policy.limits.size()));
                std::fill(entry.buckets.begin(), entry.buckets.end(), -1);
                found = int(keyEntries.size());
                keyEntries.push_back(std::move(entry));
                if (previous >= 0)
                    keyEntries[size_t(previous)].nextSameHash = found;
                else
                    signature.entries.insert(hash, found);
            }
        }
        if (!slotHit && byAddress) {
            // Remembered by address only when the entry's strings are these very characters.
            const KeyEntry &entry = keyEntries[size_t(found)];
            bool sameCharacters = true;
            for (size_t i = 0; sameCharacters && i < n; ++i) {
                const QString &part = entry.parts.at(qsizetype(i));
                sameCharacters = part.size() == parts[i].size() &&
                                 (part.isEmpty() || QStringView(part).utf16() == parts[i].utf16());
            }
            if (sameCharacters) {
                addressSlot = AddressSlot{};
                for (size_t i = 0; i < n; ++i) {
                    addressSlot.text[i] = parts[i].utf16();
                    addressSlot.size[i] = parts[i].size();
                }
                addressSlot.entry = found;
            }
        }
        signature.lastEntry = found;
        ctx.keyEntries[size_t(signatureIndex)] = found;
        return found;
    }

    int bucketFor(CompiledPolicy &policy, int limitIndex, EventContext &ctx)
    {
        const CompiledLimit &limit = limits[size_t(limitIndex)];
        const int entryIndex = keyEntryFor(policy, limit.keySignature, ctx);
        int &slot = keyEntries[size_t(entryIndex)].buckets[qsizetype(limit.indexInPolicy)];
        if (slot >= 0)
            return slot;
        Bucket bucket;
        bucket.limit = limitIndex;
        bucket.keyEntry = entryIndex;
        bucket.key = keyEntries[size_t(entryIndex)].key;
        bucket.service = ctx.service.toString();
        bucket.series.resolutionMs = limit.resolutionMs;
        bucket.series.linear = limiter::State::changesLinearly(limit.params);
        slot = int(buckets.size());
        buckets.push_back(std::move(bucket));
        return slot;
    }

    double costFor(const CompiledPolicy &policy, const CompiledLimit &limit, EventContext &ctx)
    {
        const Algorithm algorithm = limit.spec.algorithm;
        if (algorithm != Algorithm::Credits && algorithm != Algorithm::FixedWindow &&
            algorithm != Algorithm::TokenBucket && algorithm != Algorithm::SlidingWindow) {
            return 1;
        }
        // The event's explicit cost wins (Service Bus batch sends, filter evaluations).
        if (algorithm == Algorithm::Credits && ctx.event->credits >= 0)
            return ctx.event->credits;
        for (const CompiledCost &rule : limit.cost) {
            if (ctx.all(policy, rule.match, &scratch))
                return rule.credits;
        }
        return limit.spec.defaultCost;
    }

    // Returns the throttle's error code as counted ("none" without one).
    QString recordThrottle(const RequestEvent &event, const throttle::ThrottleSignals &sig)
    {
        ++throttles.total;
        const QString code = sig.errorCode.isEmpty() ? QStringLiteral("none") : sig.errorCode;
        ++throttles.byErrorCode[code];
        ++throttles.byScope[sig.scope && !sig.scope->scope.isEmpty() ? sig.scope->scope
                                                                     : QStringLiteral("none")];
        const throttle::ThrottleKind kind =
            sig.kind == throttle::ThrottleKind::None ? throttle::ThrottleKind::RateLimit : sig.kind;
        ++throttles.byKind[throttle::throttleKindName(kind)];
        if (!sig.retryable)
            ++throttles.notRetryable;
        ++throttles.byIdentityAndErrorCode[event.identity.isEmpty() ? QStringLiteral("none")
                                                                    : event.identity][code];

        return code;
    }

    // The throttle in the bar chart's bin, by error code and by cause.
    void recordThrottleBin(qint64 tsMs, const QString &code, ThrottleCause cause)
    {
        const qint64 bin = limiter::floorDiv(tsMs, throttleBinMs) * throttleBinMs;
        BinCounts &counts = throttleBins[bin];
        ++counts.byErrorCode[code];
        ++counts.byCause[throttleCauseName(cause)];
        if (throttleBins.size() > size_t(options.maxSeriesPoints)) {
            throttleBinMs *= 2;
            std::map<qint64, BinCounts> merged;
            for (const auto &[start, from] : throttleBins) {
                BinCounts &target = merged[limiter::floorDiv(start, throttleBinMs) * throttleBinMs];
                for (auto it = from.byErrorCode.cbegin(); it != from.byErrorCode.cend(); ++it)
                    target.byErrorCode[it.key()] += it.value();
                for (auto it = from.byCause.cbegin(); it != from.byCause.cend(); ++it)
                    target.byCause[it.key()] += it.value();
            }
            throttleBins = std::move(merged);
        }
    }

    void raiseNearLimit(Bucket &bucket, const CompiledLimit &limit, qint64 t, double usage,
                        double fill)
    {
        // One alert per episode: saturation that lasts, or keeps coming back within a window
        // (at least a minute: Service Bus's one-second credit windows fill and drain all the
        // time under load, and an alert every few seconds says nothing the first did not), is
        // one episode. An episode that goes on to exhaust the bucket turns its alert critical.
        const qint64 gap = std::max<qint64>(limit.params.windowMs, kNearLimitEpisodeGapMs);
        const bool newEpisode = !bucket.nearLimit || t - bucket.lastHighMs > gap;
        bucket.nearLimit = true;
        bucket.lastHighMs = t;
        auto detail = [&] {
            return QStringLiteral("%1 limit '%2' for %3 at %4% (%5 of %6, %7)")
                .arg(policies[size_t(limit.policy)].name, limit.spec.name, bucket.key)
                // Clamped: a bucket far over its capacity (heavy credits) would overflow int.
                .arg(qRound64(std::min(fill * 100, 1e12)))
                .arg(usage)
                .arg(limit.params.capacity)
                .arg(algorithmName(limit.spec.algorithm));
        };
        const QString critical = QStringLiteral("critical");
        if (!newEpisode) {
            if (fill >= 1.0 && bucket.nearLimitAlert >= 0 &&
                alerts[bucket.nearLimitAlert].severity != critical) {
                Alert &alert = alerts[bucket.nearLimitAlert];
                alert.severity = critical;
                alert.detail = detail() + QStringLiteral(", reached at %1").arg(formatIsoMs(t));
            }
            return;
        }
        Alert alert;
        alert.kind = QStringLiteral("near-limit");
        alert.severity = fill >= 1.0 ? critical : QStringLiteral("warning");
        alert.atMs = t;
        alert.key = bucket.key;
        alert.detail = detail();
        bucket.nearLimitAlert = int(alerts.size());
        alerts.append(alert);
    }

    // The event's second in the activity log of every key it was charged under (each key entry
    // once, whatever number of limits share it).
    void recordActivity(const CompiledPolicy &policy, const EventContext &ctx, bool throttled,
                        const QString &code, qint64 requests)
    {
        const RequestEvent &event = *ctx.event;
        const bool background =
            !event.lane.isEmpty() && event.lane.compare(u"background", Qt::CaseInsensitive) == 0;
        const bool tagged =
            background ||
            (!event.lane.isEmpty() && event.lane.compare(u"foreground", Qt::CaseInsensitive) == 0);
        for (size_t k = 0; k < policy.keys.size() && k < size_t(kMaxKeySignatures); ++k) {
            const int entryIndex = ctx.keyEntries[k];
            if (entryIndex < 0)
                continue;
            KeyEntry &entry = keyEntries[size_t(entryIndex)];
            if (entry.activity < 0) {
                entry.activity = int(activities.size());
                activities.emplace_back().key = entry.key;
            }
            KeyActivityBin &bin = activities[size_t(entry.activity)].binAt(event.tsMs);
            // One second of one key: a count that fits (kMaxWeight < 2^31).
            const qint32 n = qint32(requests);
            bin.requests += n;
            bin.background += background ? n : 0;
            bin.laneTagged += tagged ? n : 0;
            if (throttled) {
                ++bin.throttles;
                ++bin.byErrorCode[code];
            }
        }
    }

    // What the engine keeps of a throttle answer besides the taxonomy.
    struct ThrottleAdvice
    {
        std::optional<double> limitPercentage;
        std::optional<qint64> retryAtMs;
        QString errorCode;     // "none" without one
        bool capacity = false; // the service said its capacity, not the caller's rate
        // x-ms-throttle-scope: whether it names an app-wide scope (nullopt: no header)
        std::optional<bool> applicationWide;
    };

    static ThrottleAdvice adviceFrom(const throttle::ThrottleSignals &sig, QString code)
    {
        ThrottleAdvice advice{sig.limitPercentage, sig.retryAtMs, std::move(code),
                              sig.kind == throttle::ThrottleKind::Capacity, std::nullopt};
        if (sig.scope && !sig.scope->scope.isEmpty())
            advice.applicationWide = sig.scope->isApplicationWide();
        return advice;
    }

    // Counts a throttle answer and returns its advice. Out of line: the signal set is a large
    // object that only the ~1 % of throttled events need on the stack.
    [[gnu::noinline]] ThrottleAdvice noteThrottle(const RequestEvent &event,
                                                  const throttle::ThrottleSignals *given)
    {
        if (given)
            return adviceFrom(*given, recordThrottle(event, *given));
        const throttle::ThrottleSignals extracted = throttle::extract(event);
        return adviceFrom(extracted, recordThrottle(event, extracted));
    }

    // Points a bucket's usage series may hold (see Series).
    [[nodiscard]] size_t usageSeriesBudget() const
    {
        return size_t(std::min(options.maxSeriesPoints, options.usageSeriesPoints));
    }

    // The points of the usage series in (from, to] without an event (plot data only): where
    // the usage changed (see limiter::State::forEachChange) and, for a line, its value at `to`
    // (where an event at `to` jumps from, or where the data ends). Into `series`, the bucket's
    // own or a copy of it (seriesOf's tail to the end of the data).
    void recordChanges(Series &series, const Bucket &bucket, const CompiledLimit &limit,
                       qint64 from, qint64 to) const
    {
        const size_t cap = usageSeriesBudget();
        const double capacity = limit.params.capacity;
        const auto point = [&](qint64 at, double usage, double accepted) {
            const qint64 room = bucket.state.roomAt(limit.params, at);
            series.recordChange(at, usage, accepted, capacity > 0 ? usage / capacity : 0,
                                room > at ? room : 0, cap);
        };
        bucket.state.forEachChange(limit.params, from, to, point);
        if (series.linear && to > from && series.lastPointT != to)
            point(to, bucket.state.countedUsageAt(limit.params, to),
                  bucket.state.usageAt(limit.params, to));
    }

    // Limit or Concurrency: what the exhaustion of this charge's limit is called.
    [[nodiscard]] ThrottleCause limitCause(const Charge &charge) const
    {
        const Bucket &bucket = buckets[size_t(charge.bucket)];
        return limits[size_t(bucket.limit)].spec.algorithm == Algorithm::Concurrency
                   ? ThrottleCause::Concurrency
                   : ThrottleCause::Limit;
    }

    // Sent while a Retry-After / blocked-until of one of its buckets still ran.
    [[nodiscard]] bool blockedByRetryAfter(const std::array<Charge, kMaxLimits> &charges,
                                           int count) const
    {
        for (int i = 0; i < count; ++i) {
            const Bucket &bucket = buckets[size_t(charges[size_t(i)].bucket)];
            if (bucket.retryUntil != kNoTime && bucket.retryUntil > bucket.lastT)
                return true;
        }
        return false;
    }

    // The one charge an unexpected throttle can be pinned on: the only modelled limit of the
    // event, or the only one of the granularity (app-wide or not) the throttle-scope header
    // names. -1 when it cannot be told.
    [[nodiscard]] int attributableCharge(const std::array<Charge, kMaxLimits> &charges, int count,
                                         std::optional<bool> applicationWide) const
    {
        int only = -1;
        int modelled = 0;
        int named = -1;
        int namedCount = 0;
        for (int i = 0; i < count; ++i) {
            const CompiledLimit &limit =
                limits[size_t(buckets[size_t(charges[size_t(i)].bucket)].limit)];
            if (limit.spec.algorithm == Algorithm::Observed)
                continue;
            ++modelled;
            only = i;
            if (applicationWide && limit.keyedByAppOnly == *applicationWide) {
                ++namedCount;
                named = i;
            }
        }
        if (modelled == 1)
            return only;
        if (applicationWide && namedCount <= 1)
            return named; // none: the service names a granularity no limit has (one is missing)
        return hiddenStateCharge(charges, count, applicationWide);
    }

    // Of several limits, the window whose state from before the log explains a refusal the
    // replay did not expect (issue 30.17, as issue 19 infers a token bucket's start): the only
    // window that, drained when the log began, would have refused too; of several, the one whose
    // history reaches furthest back (a log cut an hour into OneNote's per-hour storm: after its
    // first minute, only the per-hour window can still hide what was sent before). -1: none.
    // applicationWide: only limits of the granularity the throttle-scope header names.
    [[nodiscard]] int hiddenStateCharge(const std::array<Charge, kMaxLimits> &charges, int count,
                                        std::optional<bool> applicationWide) const
    {
        int found = -1;
        qint64 furthest = -1;
        for (int i = 0; i < count; ++i) {
            const Charge &charge = charges[size_t(i)];
            const Bucket &bucket = buckets[size_t(charge.bucket)];
            const CompiledLimit &limit = limits[size_t(bucket.limit)];
            const limiter::Params &params = limit.params;
            if (applicationWide && limit.keyedByAppOnly != *applicationWide)
                continue;
            // Windows only: what a window hides ends with it (a token or leaky bucket under
            // steady traffic never catches up with its drained twin, and would take every
            // 429 nothing explains for ever).
            const Algorithm algorithm = limit.spec.algorithm;
            if (algorithm != Algorithm::FixedWindow && algorithm != Algorithm::SlidingWindow &&
                algorithm != Algorithm::Credits)
                continue;
            if (!bucket.state.hiddenRefuses(params, bucket.lastT, charge.cost))
                continue;
            const qint64 reach = params.windowMs; // how far back it remembers
            if (reach > furthest) {
                furthest = reach;
                found = i;
            }
        }
        return found;
    }

    // The service refused what the replay thought fit: when the log may not show this
    // bucket's whole state (a drained start would have refused too), set it to full.
    bool correctFor429(const Charge &charge)
    {
        Bucket &bucket = buckets[size_t(charge.bucket)];
        const CompiledLimit &limit = limits[size_t(bucket.limit)];
        if (!options.correctFromService || !limiter::State::correctable(limit.params))
            return false;
        // A bucket refused after the log showed it take most of its documented capacity tells
        // of a lower limit (the effective limit learns it), not of state the log did not show.
        // (Windows only: a token or leaky bucket under steady traffic sits near its limit
        // whatever it started with, so its usage says nothing of that.)
        const Algorithm algorithm = limit.spec.algorithm;
        const bool window = algorithm == Algorithm::FixedWindow ||
                            algorithm == Algorithm::Credits ||
                            algorithm == Algorithm::SlidingWindow;
        const bool hidden = bucket.state.hiddenRefuses(limit.params, bucket.lastT, charge.cost) &&
                            (!window || bucket.state.countedUsageAt(limit.params, bucket.lastT) <
                                            kHiddenStateBelowFill * limit.params.capacity);
        if (!hidden && !bucket.state.estimated)
            return false;
        // What the answer says: full. For a token bucket that means "less than the cost": the
        // drained start when that is what the log allows (a limiter that starts empty), else,
        // on a bucket already corrected, the middle of what a refusal leaves possible.
        double said = limit.params.capacity;
        if (algorithm == Algorithm::TokenBucket && !hidden) {
            said = limit.params.capacity - charge.cost / 2;
        } else if (algorithm == Algorithm::TokenBucket && bucket.state.hiddenMicro > 0) {
            said = limit.params.capacity -
                   std::min(double(bucket.state.hiddenMicro) / 1e6, charge.cost / 2);
        }
        correct(bucket, limit, bucket.lastT, said, QStringLiteral("429"));
        bucket.state.estimated = true;
        return true;
    }

    // Sets the bucket's usage to what the service said and records it.
    void correct(Bucket &bucket, const CompiledLimit &limit, qint64 t, double said,
                 const QString &reason)
    {
        StateCorrection correction;
        correction.atMs = t;
        correction.saidUsage = said;
        correction.modelUsage = bucket.state.countedUsageAt(limit.params, t);
        correction.capacity = limit.params.capacity;
        correction.reason = reason;
        bucket.state.setUsage(limit.params, t, said);
        ++bucket.corrections;
        if (bucket.correctionLog.size() < size_t(ScopeSummary::kMaxCorrectionLog))
            bucket.correctionLog.push_back(correction);
        if (options.recordPlotData &&
            bucket.marks.corrections.size() < size_t(options.maxSeriesPoints))
            bucket.marks.corrections.push_back(correction);
    }

    // The first take - 1 of a weighted event's accepted requests, each charged to every limit
    // of the event in the order a replay of the requests one by one would: the charge
    // arithmetic is the same, and so are the near-limit alerts (raised at the request that
    // crosses the threshold, turned critical at the one that fills the bucket). What else a
    // charge updates (peaks, the series, time at the limit) is monotonic over requests at one
    // instant, so the last request, charged by the caller, sets it as the replay would.
    void chargeAllButLast(const std::array<Charge, kMaxLimits> &charges, int count, qint64 take,
                          qint64 endMs)
    {
        for (qint64 unit = 1; unit < take; ++unit) {
            for (int i = 0; i < count; ++i) {
                const Charge &c = charges[size_t(i)];
                Bucket &bucket = buckets[size_t(c.bucket)];
                const CompiledLimit &limit = limits[size_t(bucket.limit)];
                bucket.state.charge(limit.params, bucket.lastT, c.cost, true, endMs);
                const double cap = limit.params.capacity;
                if (cap <= 0)
                    continue;
                const double accepted = bucket.state.usageAt(limit.params, bucket.lastT);
                if (accepted / cap >= options.nearLimitFill)
                    raiseNearLimit(bucket, limit, bucket.lastT, accepted, accepted / cap);
            }
        }
    }

    // One event, standing for event.weight requests (RequestEvent::weight). Where charging
    // them in one step decides exactly as charging them one by one would, they are charged in
    // one step: successes and failures that are not throttles, on fixed windows, credits,
    // token buckets and exact sliding windows, for as many of them as have room (roomForUnits).
    // Where the outcome depends on the order of the requests (a 429, which corrects state and
    // teaches limits; no status, which the model's verdict decides; leaky buckets; concurrency;
    // a bucket corrected from a 429; a bucket with no room, whose requests are predicted
    // throttles one by one) the rest are replayed one request at a time, in the same pass.
    Verdict process(const RequestEvent &event, const throttle::ThrottleSignals *given)
    {
        // Refused by the client's own breaker: it never reached the service, no limit saw it.
        if (event.refusedByClientBreaker)
            return {};
        if (event.weight <= 1 || !event.isRequest())
            return processUnits(event, given, 1, nullptr);
        const bool throttled = given ? given->throttled : throttle::isThrottle(event);
        const bool byUnit = throttled || event.status == 0;
        Verdict last;
        bool predicted = false;
        auto unitFills = std::make_shared<std::vector<Verdict::FillRun>>();
        for (qint64 left = event.weight; left > 0;) {
            qint64 done = 1;
            Verdict::FillRun run;
            last = processUnits(event, given, byUnit ? 1 : left, &done, nullptr, &run);
            predicted = predicted || last.predictedThrottled;
            left -= done;
            run.units = done;
            appendFillRun(*unitFills, run);
        }
        last.predictedThrottled = predicted;
        if (last.matched)
            last.unitFills = std::move(unitFills);
        return last;
    }

    // Who sends a bucket's requests, when its key does not say (the first few).
    static void noteCaller(Bucket &bucket, const QString &identity)
    {
        if (identity.isEmpty() || bucket.callers.size() >= ScopeSummary::kMaxCallers ||
            (!bucket.callers.isEmpty() && bucket.callers.constLast() == identity) ||
            bucket.callers.contains(identity))
            return;
        bucket.callers.append(identity);
    }

    // The accepted usage of each charged bucket now (before this event's charge).
    void acceptedUsages(const std::array<Charge, kMaxLimits> &charges, int count,
                        std::array<double, kMaxLimits> &usages) const
    {
        for (int i = 0; i < count; ++i) {
            const Bucket &bucket = buckets[size_t(charges[size_t(i)].bucket)];
            usages[size_t(i)] =
                bucket.state.usageAt(limits[size_t(bucket.limit)].params, bucket.lastT);
        }
    }

    [[nodiscard]] double capacityOf(const Charge &charge) const
    {
        return limits[size_t(buckets[size_t(charge.bucket)].limit)].params.capacity;
    }

    // Joins a run of unchanging fill to the same unchanging fill before it (429s replayed one
    // at a time: thousands of runs of one request, all at the same fill).
    static void appendFillRun(std::vector<Verdict::FillRun> &runs, const Verdict::FillRun &run)
    {
        if (!runs.empty()) {
            Verdict::FillRun &previous = runs.back();
            if (run.from == run.to && previous.from == previous.to && previous.to == run.to &&
                previous.capacity == run.capacity) {
                previous.units += run.units;
                return;
            }
        }
        runs.push_back(run);
    }

    // Selects the event's policy and, for each of its limits that charges the event, the bucket
    // advanced to the event's instant (created on first sight), the cost and whether it has
    // room: the first half of processUnits(), and all of admit(). Running it twice for one
    // event changes nothing the second time (advancing to the same instant is a no-op), so
    // admit() followed by add() decides as add() alone would. False when no policy applies.
    bool planCharges(const RequestEvent &event, ChargePlan &plan)
    {
        if (event.service.isEmpty())
            plan.inferredService = inferServiceFromUrl(event.url);
        EventContext &ctx = plan.ctx;
        ctx.event = &event;
        ctx.service = event.service.isEmpty() ? QStringView(plan.inferredService)
                                              : QStringView(event.service);
        ctx.category = event.category;
        plan.policy = selectPolicy(ctx);
        if (plan.policy < 0)
            return false;
        CompiledPolicy &policy = policies[size_t(plan.policy)];
        int rule = -1;
        ctx.category = classify(policy, ctx, &rule);
        if (rule >= 0 && size_t(rule) < policy.categories.size())
            plan.category = &policy.categories[size_t(rule)].first;
        // The memo of the selection pass saw the event's own category; limits see the
        // classified one, whose category conditions were answered when the policy compiled.
        ctx.evaluated = rule >= 0 ? policy.categoryConditionBits : 0;
        ctx.results = rule >= 0 ? policy.categoryConditionHits[size_t(rule)] : 0;
        ctx.keyEntries.fill(-1);

        // Which limits charge this event, and did each have room?
        for (int limitIndex : policy.limits) {
            CompiledLimit &limit = limits[size_t(limitIndex)];
            if (!ctx.all(policy, limit.match, &scratch))
                continue;
            const int b = bucketFor(policy, limitIndex, ctx);
            Bucket &bucket = buckets[size_t(b)];
            qint64 t = event.tsMs;
            if (bucket.lastT != kNoTime && t < bucket.lastT) {
                t = bucket.lastT; // late event: evaluated at the bucket's latest instant
                plan.late = true;
            }
            // Where the usage changed while the bucket was idle (a window ended, charges left the
            // window, a bucket refilled), so the series is the usage at every instant.
            if (options.recordPlotData && bucket.lastT != kNoTime)
                recordChanges(bucket.series, bucket, limit, bucket.lastT, t);
            bucket.state.advance(limit.params, t);
            if (bucket.lastT == kNoTime) {
                // The bucket's first event: the log shows nothing from before it.
                if (limit.spec.initialFill > 0)
                    bucket.state.setUsage(limit.params, t,
                                          limit.spec.initialFill * limit.params.capacity);
                else if (options.correctFromService)
                    bucket.state.startHidden(limit.params, t);
            }
            bucket.lastT = t;
            const double cost = costFor(policy, limit, ctx);
            const bool room = bucket.state.hasRoom(limit.params, t, cost);
            plan.anyExhausted = plan.anyExhausted || !room;
            plan.charges[size_t(plan.count++)] = {b, cost, room};
            plan.mask |= quint64(1) << limit.indexInPolicy;
        }
        return true;
    }

    // Charges up to `units` identical requests of `event` (see process()): all of them when
    // that is exact, else one; *done says how many. units > 1 only for events that are
    // neither throttles nor without a status.
    // planned: what planCharges() already found for this very event (addAnswered()), else null.
    // fillRun (weighted events): the fullest limit's usage before and after this call's charge.
    Verdict processUnits(const RequestEvent &event, const throttle::ThrottleSignals *given,
                         qint64 units, qint64 *done, ChargePlan *planned = nullptr,
                         Verdict::FillRun *fillRun = nullptr)
    {
        Verdict verdict;
        if (done)
            *done = units;
        if (!event.isRequest())
            return verdict;
        verdict.request = true;
        // Corrected below when fewer than `units` are charged in this call.
        requestEvents += units;
        const qint64 t0 = event.tsMs;
        if (!firstMs || t0 < *firstMs)
            firstMs = t0;
        if (!lastMs || t0 > *lastMs)
            lastMs = t0;

        // What the service said.
        const bool throttled = given ? given->throttled : throttle::isThrottle(event);
        verdict.observedThrottled = throttled;
        // Extracted only for throttles (unless the caller already has them): the full signal
        // set is a few hundred bytes of strings and optionals that a plain success does not need.
        std::optional<double> observedPct;
        std::optional<qint64> retryAt;
        QString throttleCode;
        bool capacityThrottle = false;
        std::optional<bool> scopeApplicationWide;
        // What a remaining-quota header says is used, as a fraction of its limit.
        std::optional<double> remainingFill;
        if (throttled) {
            ThrottleAdvice advice = noteThrottle(event, given);
            observedPct = advice.limitPercentage;
            retryAt = advice.retryAtMs;
            throttleCode = std::move(advice.errorCode);
            capacityThrottle = advice.capacity;
            scopeApplicationWide = advice.applicationWide;
        } else if (given) {
            observedPct = given->limitPercentage;
            if (given->rateLimit.remaining && given->rateLimit.limit && *given->rateLimit.limit > 0)
                remainingFill = 1.0 - *given->rateLimit.remaining / *given->rateLimit.limit;
        } else if (!event.headers.isEmpty()) {
            // The same two readings as from given signals, so add(event) and add(event, signals)
            // correct alike (the remaining-quota header was read only from given signals).
            const QString value = event.headers.value(u"x-ms-throttle-limit-percentage");
            if (!value.isEmpty())
                observedPct = throttle::parseLimitPercentage(value);
            const throttle::RateLimitInfo rate =
                throttle::parseRateLimit(event.headers, throttle::responseTimeMs(event));
            if (rate.remaining && rate.limit && *rate.limit > 0)
                remainingFill = 1.0 - *rate.remaining / *rate.limit;
        }

        ChargePlan ownPlan;
        ChargePlan &plan = planned ? *planned : ownPlan;
        if (!planned)
            planCharges(event, plan);
        if (plan.policy < 0) {
            unmatchedEvents += units;
            return verdict;
        }
        EventContext &ctx = plan.ctx;
        CompiledPolicy &policy = policies[size_t(plan.policy)];
        verdict.category = plan.category;
        std::array<Charge, kMaxLimits> &charges = plan.charges;
        const int count = plan.count;
        const quint64 mask = plan.mask;
        bool anyExhausted = plan.anyExhausted;
        const bool late = plan.late;
        // How many of the event's requests this call charges: all that have room, when charging
        // them in one step is exact (and no service header asks for a correction, which a
        // request at a time would apply at a different point), else one.
        qint64 take = units;
        if (units > 1 && count > 0) {
            if (observedPct || remainingFill)
                take = 1;
            for (int i = 0; i < count && take > 1; ++i) {
                const Bucket &bucket = buckets[size_t(charges[size_t(i)].bucket)];
                const CompiledLimit &limit = limits[size_t(bucket.limit)];
                take =
                    bucket.state.estimated
                        ? 1
                        : std::min(take, bucket.state.roomForUnits(limit.params, bucket.lastT,
                                                                   charges[size_t(i)].cost, take));
            }
            take = std::max<qint64>(take, 1);
            requestEvents -= units - take;
            if (done)
                *done = take;
        }
        if (late)
            lateEvents += take;
        if (count == 0)
            return verdict;
        verdict.matched = true;
        if (options.recordPlotData)
            recordActivity(policy, ctx, throttled, throttleCode, take);
        // Each key the event was charged under, once (the limits that share a key share it).
        for (size_t k = 0; k < policy.keys.size() && k < size_t(kMaxKeySignatures); ++k) {
            if (ctx.keyEntries[k] >= 0) {
                KeyEntry &entry = keyEntries[size_t(ctx.keyEntries[k])];
                entry.requests += take;
                entry.throttled += throttled ? take : 0;
            }
        }
        verdict.predictedThrottled = anyExhausted;
        if (mask != policy.lastChargedMask) { // the same set of limits again changes nothing
            policy.lastChargedMask = mask;
            for (quint64 rest = mask; rest; rest &= rest - 1)
                policy.coCharged[size_t(std::countr_zero(rest))] |= mask;
        }

        // The service accepted what a bucket corrected from a 429 had no room for: the 429 said
        // less than the replay took from it (a token bucket that refused may have had most of
        // a token). Give it just the room the answer proves, and go on from there.
        if (anyExhausted && !throttled && event.status > 0 && event.status < 400 &&
            options.correctFromService) {
            for (int i = 0; i < count; ++i) {
                const Charge c = charges[size_t(i)];
                Bucket &bucket = buckets[size_t(c.bucket)];
                if (c.hadRoom || !bucket.state.estimated)
                    continue;
                const CompiledLimit &limit = limits[size_t(bucket.limit)];
                correct(bucket, limit, bucket.lastT, std::max(0.0, limit.params.capacity - c.cost),
                        QStringLiteral("accepted"));
                bucket.state.estimated = true;
                // The answer is the evidence: the corrected bucket had room for it.
                charges[size_t(i)].hadRoom = true;
            }
            anyExhausted = false;
            for (int i = 0; i < count; ++i)
                anyExhausted = anyExhausted || !charges[size_t(i)].hadRoom;
            verdict.predictedThrottled = anyExhausted;
        }

        // Why the service throttled, and which of the event's limits that was.
        ThrottleCause cause = ThrottleCause::None;
        int causeCharge = -1;     // the charge whose limit is the cause
        int correctedCharge = -1; // the charge whose bucket this 429 corrected
        if (throttled) {
            if (capacityThrottle) {
                cause = ThrottleCause::Capacity;
            } else if (anyExhausted) {
                for (int i = 0; i < count && causeCharge < 0; ++i)
                    causeCharge = charges[size_t(i)].hadRoom ? -1 : i;
                cause = limitCause(charges[size_t(causeCharge)]);
            } else if (blockedByRetryAfter(charges, count)) {
                cause = ThrottleCause::RetryAfter;
            } else {
                causeCharge = attributableCharge(charges, count, scopeApplicationWide);
                cause = causeCharge < 0 ? ThrottleCause::Unexplained
                                        : limitCause(charges[size_t(causeCharge)]);
                if (causeCharge >= 0 && correctFor429(charges[size_t(causeCharge)]))
                    correctedCharge = causeCharge;
            }
            ++throttles.byCause[throttleCauseName(cause)];
            if (options.recordPlotData)
                recordThrottleBin(event.tsMs, throttleCode, cause);
            verdict.cause = cause;
        } else if (anyExhausted) {
            for (int i = 0; i < count && causeCharge < 0; ++i)
                causeCharge = charges[size_t(i)].hadRoom ? -1 : i;
            verdict.cause = limitCause(charges[size_t(causeCharge)]);
        }
        if (causeCharge >= 0)
            verdict.causeLimit =
                &limits[size_t(buckets[size_t(charges[size_t(causeCharge)].bucket)].limit)]
                     .spec.name;
        if (options.recordPlotData && verdict.cause != ThrottleCause::None) {
            if (eventCauses.size() >= DashboardSnapshot::kMaxEventCauses) {
                // Keep the newest: drop the oldest quarter at once, not one per new cause.
                eventCauses.erase(eventCauses.begin(),
                                  eventCauses.begin() + DashboardSnapshot::kMaxEventCauses / 4);
            }
            eventCausesSorted =
                eventCausesSorted && (eventCauses.empty() || eventCauses.back().tsMs <= t0);
            ++eventCausesAdded;
            EventCause &record = eventCauses.emplace_back();
            record.tsMs = t0;
            record.identity = event.identity;
            record.line = event.line;
            record.cause = verdict.cause;
            if (verdict.causeLimit)
                record.limit = *verdict.causeLimit;
            record.observed = throttled;
        }

        // The service's answer decides whether the request consumed quota; the model's own
        // verdict decides only when the log has no answer (status 0).
        const bool rejected = event.status == 0 ? anyExhausted : throttled;
        const qint64 responseMs = throttle::responseTimeMs(event);
        const qint64 endMs = event.durationMs >= 0 ? responseMs : t0;

        double maxFill = 0;        // accepted: what softens the breakers (Verdict::fill)
        double maxCountedFill = 0; // as the limiter counts it: the reconstructed percentage
        std::array<double, kMaxLimits> usageBefore;   // only [0, count) is used
        std::array<double, kMaxLimits> usageAfter;    // as the limiter counts it
        std::array<double, kMaxLimits> acceptedAfter; // accepted charges only
        std::array<double, kMaxLimits> acceptedBefore; // only for fillRun
        if (fillRun)
            acceptedUsages(charges, count, acceptedBefore);
        int fullest = -1;
        for (int i = 0; i < count; ++i) {
            const Charge &c = charges[size_t(i)];
            Bucket &bucket = buckets[size_t(c.bucket)];
            const CompiledLimit &limit = limits[size_t(bucket.limit)];
            // The usage before the charge teaches the effective limit of an observed throttle:
            // the usage as the limiter counts it (throttled charges included where the service
            // charges them), the same usage that decides. The accepted usage alone made a limit
            // that a storm of counted 429s exhausted look lower than documented.
            if (throttled)
                usageBefore[size_t(i)] = bucket.state.countedUsageAt(limit.params, bucket.lastT);
            if (take > 1 && i == 0)
                chargeAllButLast(charges, count, take, endMs);
            if (!rejected || limit.chargeThrottled)
                bucket.state.charge(limit.params, bucket.lastT, c.cost, !rejected, endMs);
            const double usage = bucket.state.usageAt(limit.params, bucket.lastT);
            acceptedAfter[size_t(i)] = usage;
            usageAfter[size_t(i)] = bucket.state.countedUsageAt(limit.params, bucket.lastT);
            const double cap = limit.params.capacity;
            if (cap > 0 && usage / cap > maxFill) {
                maxFill = usage / cap;
                verdict.fillApplicationWide = limit.keyedByAppOnly;
                fullest = i;
            }
            if (cap > 0)
                maxCountedFill = std::max(maxCountedFill, usageAfter[size_t(i)] / cap);
        }
        verdict.fill = maxFill;
        if (fillRun && fullest >= 0)
            *fillRun = {0, acceptedBefore[size_t(fullest)], acceptedAfter[size_t(fullest)],
                        capacityOf(charges[size_t(fullest)])};

        for (int i = 0; i < count; ++i) {
            const Charge &c = charges[size_t(i)];
            Bucket &bucket = buckets[size_t(c.bucket)];
            CompiledLimit &limit = limits[size_t(bucket.limit)];
            const qint64 t = bucket.lastT;
            bucket.requests += take;
            if (!limit.keyedByIdentity)
                noteCaller(bucket, event.identity);
            bucket.chargedCost += c.cost * double(take);
            if (limit.spec.algorithm == Algorithm::Concurrency)
                bucket.serviceMsSum += double(std::max<qint64>(0, endMs - t0)) * double(take);
            if (!c.hadRoom) {
                ++bucket.predicted;
                ++bucket.predictedByCause[size_t(limitCause(c))];
                if (options.recordPlotData)
                    bucket.marks.predictedThrottles.push(t, size_t(options.maxSeriesPoints));
            }
            // Attribute an observed throttle to the limits the model finds exhausted; when it
            // finds none, to the one limit it can be pinned on (the only one that applies, or
            // the one the throttle-scope header names), else the log cannot say which limit
            // tripped, so every limit of the event shows it.
            const bool attributed =
                throttled && (anyExhausted ? !c.hadRoom
                                           : causeCharge < 0 || i == causeCharge ||
                                                 limit.spec.algorithm == Algorithm::Observed);
            if (attributed) {
                ++bucket.observed;
                // This scope's view: its own limit when it was exhausted (or is the one the
                // 429 was pinned on), else the event's cause.
                const bool ownLimit =
                    (!c.hadRoom || i == causeCharge) && cause != ThrottleCause::Capacity;
                const ThrottleCause scopeCause = ownLimit ? limitCause(c) : cause;
                ++bucket.observedByCause[size_t(scopeCause)];
                if (options.recordPlotData)
                    bucket.marks.observedThrottles.push(t, size_t(options.maxSeriesPoints));
                // The effective limit is learned only from 429s this limit caused, and not
                // from one that corrected state the log did not show (its usage then says
                // nothing about the limit).
                if (!bucket.inObservedEpisode && limit.spec.algorithm != Algorithm::Observed &&
                    ownLimit && i != correctedCharge) {
                    const double before = usageBefore[size_t(i)];
                    bucket.effectiveLimit = std::max(bucket.effectiveLimit.value_or(0), before);
                }
                bucket.inObservedEpisode = true;
                if (retryAt && *retryAt > responseMs) {
                    if (options.recordPlotData &&
                        bucket.marks.retryAfter.size() < kMaxRetryIntervals)
                        bucket.marks.retryAfter.emplace_back(responseMs, *retryAt);
                    bucket.retryUntil = std::max(bucket.retryUntil, *retryAt);
                    const bool fixed = limit.spec.algorithm == Algorithm::FixedWindow ||
                                       limit.spec.algorithm == Algorithm::Credits;
                    const qint64 end = bucket.state.windowEnd(limit.params);
                    // Once per window: a fixed window's 429s all name the same end. Moved on
                    // by every 429 (429s that each say "55 s from now"), the window never
                    // ended: its count and a correction's estimate were never reset, and each
                    // request it accepted was corrected again (385k corrections in 1M events).
                    if (fixed && limit.params.windowMs >= kMinLearnableWindowMs && *retryAt > t &&
                        *retryAt <= t + limit.params.windowMs && end != kNoTime &&
                        std::llabs(*retryAt - end) > 1000 &&
                        bucket.state.windowStart != bucket.learnedWindowStart) {
                        bucket.state.learnWindowEnd(limit.params, *retryAt);
                        bucket.learnedWindowStart = bucket.state.windowStart;
                    }
                }
            } else if (!throttled) {
                bucket.inObservedEpisode = false;
            }
            if (observedPct) {
                bucket.observedPctMax = std::max(bucket.observedPctMax.value_or(0), *observedPct);
                if (options.recordPlotData)
                    bucket.marks.observedPct.push(t, *observedPct, size_t(options.maxSeriesPoints));
            }
            // A limit-percentage or remaining-quota header far from the replay's fill, while
            // the log may not show the bucket's whole state: take the service's word.
            if ((observedPct || remainingFill) && bucket.state.hiddenActive && !throttled &&
                count == 1) {
                const double said =
                    (observedPct ? *observedPct : *remainingFill) * limit.params.capacity;
                const double counted = bucket.state.countedUsageAt(limit.params, t);
                if (limiter::State::correctable(limit.params) &&
                    std::abs(said - counted) > kCorrectionTolerance * limit.params.capacity) {
                    correct(bucket, limit, t, said,
                            observedPct ? QStringLiteral("limit-percentage")
                                        : QStringLiteral("remaining"));
                    usageAfter[size_t(i)] = bucket.state.countedUsageAt(limit.params, t);
                    acceptedAfter[size_t(i)] = bucket.state.usageAt(limit.params, t);
                }
            }

            // Phase learning moves no charge. The bucket's usage is the limiter's count; the
            // near-limit alert keeps reading the accepted layer, as it always has.
            const double usage = usageAfter[size_t(i)];
            const double accepted = acceptedAfter[size_t(i)];
            const double cap = limit.params.capacity;
            const double fill = cap > 0 ? usage / cap : 0;
            const double acceptedFill = cap > 0 ? accepted / cap : 0;
            bucket.peakUsage = std::max(bucket.peakUsage, usage);
            bucket.peakFill = std::max(bucket.peakFill, fill);
            bucket.acceptedPeakUsage = std::max(bucket.acceptedPeakUsage, accepted);

            // Time at the limit: the union of [exhausted, room again) intervals.
            const qint64 room = bucket.state.trackRoomAt(limit.params, t);
            if (options.recordPlotData)
                bucket.series.recordEvent(t, usage, accepted, maxCountedFill, room > t ? room : 0,
                                          usageSeriesBudget());
            if (cap > 0 && acceptedFill >= options.nearLimitFill)
                raiseNearLimit(bucket, limit, t, accepted, acceptedFill);
            if (room > t) {
                if (bucket.exhaustedStart != kNoTime && t <= bucket.exhaustedEnd) {
                    bucket.exhaustedEnd = std::max(bucket.exhaustedEnd, room);
                } else {
                    if (bucket.exhaustedStart != kNoTime)
                        bucket.atLimitMs += bucket.exhaustedEnd - bucket.exhaustedStart;
                    bucket.exhaustedStart = t;
                    bucket.exhaustedEnd = room;
                }
            }
        }
        return verdict;
    }

    // What the pace advice reads of a bucket (ScopeSummary::keyRequests and after).
    void fillAdviceInputs(ScopeSummary &s, const Bucket &bucket, const CompiledLimit &limit,
                          const CompiledPolicy &policy) const
    {
        if (bucket.keyEntry < 0)
            return;
        const KeyEntry &entry = keyEntries[size_t(bucket.keyEntry)];
        s.keyRequests = entry.requests;
        s.keyThrottled = entry.throttled;
        const std::vector<EventField> &fields = policy.keys[size_t(limit.keySignature)].fields;
        for (size_t i = 0; i < fields.size(); ++i) {
            if (fields[i] == EventField::Identity)
                s.keyIdentity = entry.parts.value(qsizetype(i));
        }
        // Rounded to 1e-9: the sum of fractional costs depends on whether a weighted event added
        // cost * n at once or n single requests added cost n times (the last bits differ), and
        // the same traffic must give the same advice however it was folded (tst_pollweighted).
        s.meanCost = bucket.requests > 0
                         ? std::round(bucket.chargedCost / double(bucket.requests) * 1e9) / 1e9
                         : 1;
        const double meanServiceSeconds =
            bucket.requests > 0 ? bucket.serviceMsSum / double(bucket.requests) / 1000.0 : 0;
        s.allowedRatePerSecond = allowedRatePerSecond(limit, s.meanCost, meanServiceSeconds);
    }

    // Limits of the same policy that charged the same events, transitively.
    [[nodiscard]] quint64 coChargedClosure(const CompiledPolicy &policy, int indexInPolicy) const
    {
        quint64 mask = quint64(1) << indexInPolicy;
        for (bool grew = true; grew;) {
            grew = false;
            for (int i = 0; i < kMaxLimits; ++i) {
                if ((mask >> i) & 1) {
                    const quint64 next = mask | policy.coCharged[size_t(i)];
                    if (next != mask) {
                        mask = next;
                        grew = true;
                    }
                }
            }
        }
        return mask;
    }

    [[nodiscard]] QList<ScopeSummary> summaries(std::optional<qint64> atMs) const
    {
        QList<ScopeSummary> result;
        result.reserve(qsizetype(buckets.size()));
        const qint64 at = atMs.value_or(lastMs.value_or(0));

        // The next safe send of a key is the latest "room again" over all co-charged limits.
        QHash<QString, QList<int>> bucketsByKey; // "policy\nkey" -> buckets
        for (int i = 0; i < int(buckets.size()); ++i) {
            const Bucket &bucket = buckets[size_t(i)];
            const CompiledLimit &limit = limits[size_t(bucket.limit)];
            bucketsByKey[QString::number(limit.policy) + u'\n' + bucket.key].append(i);
        }
        // When the bucket has room again, and whether the service's Retry-After is what
        // decides it.
        auto blockedUntil = [&](const Bucket &bucket, bool *byRetryAfter) {
            const CompiledLimit &limit = limits[size_t(bucket.limit)];
            qint64 until = bucket.state.roomAt(limit.params, std::max(at, bucket.lastT));
            *byRetryAfter = bucket.retryUntil != kNoTime && bucket.retryUntil > until;
            if (*byRetryAfter)
                until = bucket.retryUntil;
            return until;
        };

        for (const Bucket &bucket : buckets) {
            const CompiledLimit &limit = limits[size_t(bucket.limit)];
            const CompiledPolicy &policy = policies[size_t(limit.policy)];
            ScopeSummary s;
            s.service = bucket.service;
            s.limit = limit.spec.name;
            s.key = bucket.key;
            s.algorithm = algorithmName(limit.spec.algorithm);
            s.policy = policy.name;
            s.capacity = limit.params.capacity;
            s.windowSeconds = (limit.spec.algorithm == Algorithm::FixedWindow ||
                               limit.spec.algorithm == Algorithm::SlidingWindow ||
                               limit.spec.algorithm == Algorithm::Credits)
                                  ? limit.spec.windowSeconds
                                  : 0;
            s.requests = bucket.requests;
            s.callers = bucket.callers;
            s.peakUsage = bucket.peakUsage;
            s.peakFill = bucket.peakFill;
            s.acceptedPeakUsage = bucket.acceptedPeakUsage;
            s.acceptedPeakFill = s.capacity > 0 ? bucket.acceptedPeakUsage / s.capacity : 0;
            qint64 atLimit = bucket.atLimitMs;
            if (bucket.exhaustedStart != kNoTime) {
                const qint64 end =
                    atMs ? std::min(bucket.exhaustedEnd, *atMs) : bucket.exhaustedEnd;
                atLimit += std::max<qint64>(0, end - bucket.exhaustedStart);
            }
            s.timeAtLimitSeconds = double(atLimit) / 1000.0;
            s.predictedThrottled = bucket.predicted;
            s.observedThrottled = bucket.observed;
            s.effectiveLimit = bucket.effectiveLimit;
            s.observedLimitPercentage = bucket.observedPctMax;
            for (int c = 0; c < kThrottleCauseCount; ++c) {
                const QString name = throttleCauseName(ThrottleCause(c));
                if (bucket.observedByCause[size_t(c)] > 0)
                    s.observedByCause.insert(name, bucket.observedByCause[size_t(c)]);
                if (bucket.predictedByCause[size_t(c)] > 0)
                    s.predictedByCause.insert(name, bucket.predictedByCause[size_t(c)]);
            }
            fillAdviceInputs(s, bucket, limit, policy);
            s.corrections = bucket.corrections;
            s.correctionLog =
                QList<StateCorrection>(bucket.correctionLog.begin(), bucket.correctionLog.end());
            const qint64 evalAt = std::max(at, bucket.lastT);
            s.currentUsage = bucket.state.countedUsageAt(limit.params, evalAt);
            s.currentFill = s.capacity > 0 ? s.currentUsage / s.capacity : 0;
            s.currentAcceptedUsage = bucket.state.usageAt(limit.params, evalAt);

            const quint64 group = coChargedClosure(policy, limit.indexInPolicy);
            qint64 safe = kNoTime;
            for (int other :
                 bucketsByKey.value(QString::number(limit.policy) + u'\n' + bucket.key)) {
                const Bucket &candidate = buckets[size_t(other)];
                const int index = limits[size_t(candidate.limit)].indexInPolicy;
                if (!((group >> index) & 1))
                    continue;
                bool byRetryAfter = false;
                const qint64 until = blockedUntil(candidate, &byRetryAfter);
                if (until > evalAt && until > safe) { // the maximum, never the minimum
                    safe = until;
                    s.nextSafeSendLimit = limits[size_t(candidate.limit)].spec.name;
                    s.nextSafeSendRetryAfter = byRetryAfter;
                }
            }
            if (safe != kNoTime)
                s.nextSafeSendMs = safe;
            result.append(s);
        }
        return result;
    }

    [[nodiscard]] ScopeSeries seriesOf(int index) const
    {
        ScopeSeries out;
        if (index < 0 || index >= int(buckets.size()))
            return out;
        const Bucket &bucket = buckets[size_t(index)];
        const SeriesMarks &marks = bucket.marks;
        // The tail up to the end of the data, as the next event would record it: the bucket's
        // usage fell back after its last event (a window ended, the bucket refilled) while
        // other keys went on, and the chart must show that as the report does.
        Series s = bucket.series;
        if (options.recordPlotData && lastMs && bucket.lastT != kNoTime && bucket.lastT < *lastMs)
            recordChanges(s, bucket, limits[size_t(bucket.limit)], bucket.lastT, *lastMs);
        const size_t n = s.size();
        out.linear = s.linear;
        out.firstExact = s.bins.size();
        out.usageT.resize(n);
        out.usage.resize(n);
        out.acceptedUsage.resize(n);
        out.blockedUntil.resize(n);
        out.reconstructedPct.resize(n);
        for (size_t i = 0; i < n; ++i) {
            const Series::Point &point = s.at(i);
            out.usageT[i] = point.t;
            out.usage[i] = point.usage;
            out.acceptedUsage[i] = point.accepted;
            out.blockedUntil[i] = point.blockedUntil;
            out.reconstructedPct[i] = point.pct;
        }
        for (const auto &[t, pct] : marks.observedPct.items()) {
            out.observedPctT.push_back(t);
            out.observedPct.push_back(pct);
        }
        out.observedThrottleT = marks.observedThrottles.items();
        out.predictedThrottleT = marks.predictedThrottles.items();
        out.retryAfterIntervals = marks.retryAfter;
        out.corrections = marks.corrections;
        return out;
    }
};

ThrottleEngine::ThrottleEngine(PolicySet policies) : ThrottleEngine(std::move(policies), Options{})
{
}

ThrottleEngine::ThrottleEngine(PolicySet policies, Options options) : d(std::make_unique<Impl>())
{
    d->options = options;
    reset(std::move(policies));
}

ThrottleEngine::~ThrottleEngine() = default;

void ThrottleEngine::reset(PolicySet policies)
{
    d->compile(policies);
    d->resetCounters();
}

const PolicySet &ThrottleEngine::policies() const
{
    return d->policySet;
}

ThrottleEngine::Verdict ThrottleEngine::add(const RequestEvent &event)
{
    return d->process(event, nullptr);
}

ThrottleEngine::Verdict ThrottleEngine::add(const RequestEvent &event,
                                            const throttle::ThrottleSignals &extracted)
{
    return d->process(event, &extracted);
}

void ThrottleEngine::addBatch(std::span<const RequestEvent> events)
{
    const size_t n = events.size();
    for (size_t i = 0; i < n; ++i) {
        if (i + 4 < n)
            prefetchEventFields(events[i + 4]);
        if (i + 2 < n)
            prefetchEventText(events[i + 2]);
        d->process(events[i], nullptr);
    }
}

void ThrottleEngine::addBatch(const QList<RequestEvent> &events)
{
    addBatch(std::span<const RequestEvent>(events.constData(), size_t(events.size())));
}

namespace {

// What a plan says the service answers (see ThrottleEngine::admit()).
ThrottleEngine::Admission admissionOf(const ChargePlan &plan, const std::vector<Bucket> &buckets,
                                      const std::vector<CompiledLimit> &limits)
{
    ThrottleEngine::Admission admission;
    admission.matched = plan.count > 0;
    admission.refused = plan.anyExhausted;
    for (int i = 0; i < plan.count; ++i) {
        const Charge &charge = plan.charges[size_t(i)];
        if (charge.hadRoom)
            continue;
        const Bucket &bucket = buckets[size_t(charge.bucket)];
        const CompiledLimit &limit = limits[size_t(bucket.limit)];
        const qint64 room = bucket.state.roomAt(limit.params, bucket.lastT, charge.cost);
        if (!admission.limit || room > admission.retryAtMs) {
            admission.retryAtMs = room;
            admission.limit = &limit.spec.name;
        }
    }
    return admission;
}

} // namespace

ThrottleEngine::Admission ThrottleEngine::admit(const RequestEvent &event)
{
    if (!event.isRequest())
        return {};
    ChargePlan plan;
    d->planCharges(event, plan);
    return admissionOf(plan, d->buckets, d->limits);
}

ThrottleEngine::Verdict
ThrottleEngine::addAnswered(RequestEvent &event,
                            const std::function<void(const Admission &)> &answer)
{
    if (!event.isRequest() || event.weight > 1) {
        answer(admit(event));
        return add(event);
    }
    ChargePlan plan;
    d->planCharges(event, plan);
    answer(admissionOf(plan, d->buckets, d->limits));
    return d->processUnits(event, nullptr, 1, nullptr, &plan);
}

qint64 ThrottleEngine::requestEvents() const
{
    return d->requestEvents;
}

qint64 ThrottleEngine::lateEvents() const
{
    return d->lateEvents;
}

qint64 ThrottleEngine::unmatchedEvents() const
{
    return d->unmatchedEvents;
}

std::optional<qint64> ThrottleEngine::firstMs() const
{
    return d->firstMs;
}

std::optional<qint64> ThrottleEngine::lastMs() const
{
    return d->lastMs;
}

QList<ScopeSummary> ThrottleEngine::scopes(std::optional<qint64> atMs) const
{
    return d->summaries(atMs);
}

int ThrottleEngine::scopeCount() const
{
    return int(d->buckets.size());
}

ScopeSeries ThrottleEngine::series(int scopeIndex) const
{
    return d->seriesOf(scopeIndex);
}

ThrottleSummary ThrottleEngine::throttleSummary() const
{
    return d->throttles;
}

std::vector<ThrottleBin> ThrottleEngine::throttleBins() const
{
    std::vector<ThrottleBin> bins;
    bins.reserve(d->throttleBins.size());
    for (const auto &[start, counts] : d->throttleBins)
        bins.push_back({start, counts.byErrorCode, counts.byCause});
    return bins;
}

qint64 ThrottleEngine::throttleBinMs() const
{
    return d->throttleBinMs;
}

QList<Alert> ThrottleEngine::alerts() const
{
    return d->alerts;
}

void ThrottleEngine::fillSnapshot(DashboardSnapshot *snapshot, std::optional<qint64> atMs) const
{
    snapshot->report.scopes = scopes(atMs);
    snapshot->report.throttles = d->throttles;
    if (d->firstMs)
        snapshot->report.firstMs = d->firstMs;
    if (d->lastMs)
        snapshot->report.lastMs = d->lastMs;
    snapshot->report.alerts.append(d->alerts);
    snapshot->series.clear();
    snapshot->series.reserve(d->buckets.size());
    for (int i = 0; i < int(d->buckets.size()); ++i)
        snapshot->series.push_back(series(i));
    snapshot->throttleBins = throttleBins();
    snapshot->binMs = d->throttleBinMs;
    if (!d->publishedCauses || d->publishedCausesAdded != d->eventCausesAdded) {
        d->publishedCausesAdded = d->eventCausesAdded;
        auto causes =
            std::make_shared<std::vector<EventCause>>(d->eventCauses.begin(), d->eventCauses.end());
        if (!d->eventCausesSorted)
            std::stable_sort(
                causes->begin(), causes->end(),
                [](const EventCause &a, const EventCause &b) { return a.tsMs < b.tsMs; });
        d->publishedCauses = std::move(causes);
    }
    snapshot->eventCauses = d->eventCauses.empty() ? nullptr : d->publishedCauses;
    snapshot->keyActivity.clear();
    if (d->lastMs) {
        // Only what is recent at the end of the data; a key silent for longer shows nothing.
        const qint64 since = *d->lastMs - DashboardSnapshot::kActivityRetentionMs;
        for (const ActivityLog &log : d->activities) {
            // (Ascending: a binary search past the bins the log has not dropped yet.)
            auto first = std::partition_point(
                log.bins.begin(), log.bins.end(),
                [since](const KeyActivityBin &bin) { return bin.startMs <= since; });
            if (first == log.bins.end())
                continue;
            KeyActivity &activity = snapshot->keyActivity.emplace_back();
            activity.key = log.key;
            activity.bins.assign(first, log.bins.end());
        }
    }
}

DashboardSnapshot ThrottleEngine::replay(const PolicySet &policies,
                                         std::span<const RequestEvent> events)
{
    ThrottleEngine engine(policies);
    engine.addBatch(events);
    DashboardSnapshot snapshot;
    engine.fillSnapshot(&snapshot);
    return snapshot;
}

} // namespace ts
