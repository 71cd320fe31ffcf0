// The usage series' storage (engine/usageseries.h, issue 17.5) against a plain reference: the
// series as it was before the exact points became a ring (one vector of bins then points, a
// fold rebuilding it), on random streams of events and change points with every budget small
// enough that folds and bin coarsening happen all the time. Every point, the number of bins,
// the bin width and the last instant must be the same after every call; so must a copy taken
// part way and fed on (what ThrottleEngine::series does for the tail to the end of the data).

#include "engine/usageseries.h"

#include <QRandomGenerator>
#include <QTest>

#include <vector>

using namespace ts;

namespace {

using Point = UsageSeries::Point;

// The series before issue 17.5, kept as simple as it was (a division per bin, a rebuilt
// vector per fold): the reference.
struct ReferenceSeries
{
    static constexpr size_t kInitial = 64;
    qint64 resolutionMs = 1000;
    bool linear = false;
    size_t exactFrom = 0;
    bool lastIsEvent = false;
    qint64 lastPointT = limiter::kNoTime;
    std::vector<Point> points;

    void recordChange(const Point &point, size_t cap)
    {
        if (lastPointT == point.t)
            points.back() = point;
        else
            push(point, cap);
        lastIsEvent = false;
    }

    void recordEvent(const Point &point, size_t cap)
    {
        if (lastPointT == point.t && (!linear || lastIsEvent))
            points.back() = point;
        else
            push(point, cap);
        lastIsEvent = true;
    }

    static void appendPeak(std::vector<Point> &to, Point point, qint64 resolution)
    {
        point.t = limiter::floorDiv(point.t, resolution) * resolution;
        if (!to.empty() && to.back().t == point.t) {
            Point &back = to.back();
            back.usage = std::max(back.usage, point.usage);
            back.accepted = std::max(back.accepted, point.accepted);
            back.pct = std::max(back.pct, point.pct);
            back.blockedUntil = std::max(back.blockedUntil, point.blockedUntil);
            return;
        }
        to.push_back(point);
    }

    static void appendCarried(std::vector<Point> &to, const Point &point, qint64 nextT,
                              qint64 resolution)
    {
        appendPeak(to, point, resolution);
        const qint64 b = limiter::floorDiv(point.t, resolution) * resolution + resolution;
        const qint64 last = limiter::floorDiv(nextT, resolution) * resolution;
        Point carried = point;
        if (nextT > b) {
            carried.t = b;
            appendPeak(to, carried, resolution);
        }
        if (last > b && nextT > last) {
            carried.t = last;
            appendPeak(to, carried, resolution);
        }
    }

    void push(const Point &point, size_t cap)
    {
        points.push_back(point);
        lastPointT = point.t;
        if (points.size() > std::max<size_t>(cap, 8))
            fold(std::max<size_t>(cap, 8));
    }

    void foldPoint(std::vector<Point> &bins, size_t i) const
    {
        const Point &point = points[i];
        appendPeak(bins, point, resolutionMs);
        if (i + 1 >= points.size())
            return;
        const Point &next = points[i + 1];
        const qint64 binStart = limiter::floorDiv(point.t, resolutionMs) * resolutionMs;
        qint64 b = binStart + resolutionMs;
        if (next.t <= b)
            return;
        const bool line = linear && (next.usage != point.usage || next.accepted != point.accepted);
        if (!line || (next.t - b) / resolutionMs > qint64(kInitial)) {
            appendCarried(bins, point, next.t, resolutionMs);
            return;
        }
        const double span = double(next.t - point.t);
        for (; b < next.t; b += resolutionMs) {
            const double share = double(b - point.t) / span;
            Point at = point;
            at.t = b;
            at.usage = point.usage + (next.usage - point.usage) * share;
            at.accepted = point.accepted + (next.accepted - point.accepted) * share;
            at.pct = point.pct + (next.pct - point.pct) * share;
            appendPeak(bins, at, resolutionMs);
        }
    }

    void fold(size_t cap)
    {
        const size_t keepExact = cap / 2;
        const size_t foldEnd = points.size() - keepExact;
        std::vector<Point> bins(points.begin(), points.begin() + qsizetype(exactFrom));
        for (size_t i = exactFrom; i < foldEnd; ++i)
            foldPoint(bins, i);
        while (bins.size() > cap - keepExact) {
            resolutionMs *= 2;
            std::vector<Point> coarser;
            for (size_t k = 0; k < bins.size(); ++k)
                appendCarried(coarser, bins[k],
                              k + 1 < bins.size() ? bins[k + 1].t : points[foldEnd].t,
                              resolutionMs);
            bins = std::move(coarser);
        }
        bins.insert(bins.end(), points.begin() + qsizetype(foldEnd), points.end());
        exactFrom = bins.size() - keepExact;
        points = std::move(bins);
    }
};

bool samePoint(const Point &a, const Point &b)
{
    // Bit for bit: the storage must not change a value (NaN never occurs here).
    return a.t == b.t && a.usage == b.usage && a.accepted == b.accepted && a.pct == b.pct &&
           a.blockedUntil == b.blockedUntil;
}

QString describe(const Point &p)
{
    return QStringLiteral("(%1 %2 %3 %4 %5)")
        .arg(p.t)
        .arg(p.usage, 0, 'g', 17)
        .arg(p.accepted, 0, 'g', 17)
        .arg(p.pct, 0, 'g', 17)
        .arg(p.blockedUntil);
}

// Empty when equal, else where they differ.
QString compare(const UsageSeries &series, const ReferenceSeries &ref)
{
    if (series.size() != ref.points.size())
        return QStringLiteral("size %1, reference %2").arg(series.size()).arg(ref.points.size());
    if (series.bins.size() != ref.exactFrom)
        return QStringLiteral("bins %1, reference %2").arg(series.bins.size()).arg(ref.exactFrom);
    if (series.resolutionMs != ref.resolutionMs || series.lastPointT != ref.lastPointT ||
        series.lastIsEvent != ref.lastIsEvent)
        return QStringLiteral("resolution, last instant or last kind differ");
    for (size_t i = 0; i < ref.points.size(); ++i) {
        if (!samePoint(series.at(i), ref.points[i]))
            return QStringLiteral("point %1: %2, reference %3")
                .arg(i)
                .arg(describe(series.at(i)), describe(ref.points[i]));
    }
    return {};
}

} // namespace

class TestUsageSeries : public QObject
{
    Q_OBJECT

private slots:
    void matchesReference_data();
    void matchesReference();
};

void TestUsageSeries::matchesReference_data()
{
    QTest::addColumn<bool>("linear");
    QTest::addColumn<int>("cap");
    QTest::addColumn<quint32>("seed");
    QTest::addColumn<int>("maxGapMs");
    for (bool linear : {false, true}) {
        for (int cap : {1, 8, 9, 17, 40, 101}) {
            for (int maxGap : {3, 400, 20000}) {
                for (quint32 seed : {1u, 2u, 3u}) {
                    QTest::addRow("%s cap %d gap %d seed %u", linear ? "line" : "step", cap, maxGap,
                                  seed)
                        << linear << cap << seed << maxGap;
                }
            }
        }
    }
}

void TestUsageSeries::matchesReference()
{
    QFETCH(bool, linear);
    QFETCH(int, cap);
    QFETCH(quint32, seed);
    QFETCH(int, maxGapMs);

    QRandomGenerator rng(seed);
    UsageSeries series;
    ReferenceSeries ref;
    series.linear = ref.linear = linear;
    series.resolutionMs = ref.resolutionMs = 1 + rng.bounded(1500u);
    qint64 t = -50000 + qint64(rng.bounded(100000u)); // negative instants too (floorDiv)
    std::optional<UsageSeries> copy;
    std::optional<ReferenceSeries> copyRef;
    for (int step = 0; step < 6000; ++step) {
        // Same instant often (a replaced point), small gaps mostly, the odd long silence.
        const quint32 kind = rng.bounded(10u);
        if (kind >= 3)
            t += kind == 9 ? qint64(rng.bounded(quint32(maxGapMs) * 40 + 1))
                           : qint64(rng.bounded(quint32(maxGapMs) + 1));
        Point p{};
        p.t = t;
        // A few distinct values, so that equal neighbours (flat lines) occur.
        p.usage =
            double(rng.bounded(6u)) * 0.75 + (rng.bounded(4u) == 0 ? rng.generateDouble() : 0);
        p.accepted = rng.bounded(3u) == 0 ? p.usage : double(rng.bounded(5u));
        p.pct = p.usage / 7.0;
        p.blockedUntil = rng.bounded(3u) == 0 ? t + qint64(rng.bounded(5000u)) : 0;
        const bool event = rng.bounded(2u) == 0;
        if (event) {
            series.recordEvent(p.t, p.usage, p.accepted, p.pct, p.blockedUntil, size_t(cap));
            ref.recordEvent(p, size_t(cap));
        } else {
            series.recordChange(p.t, p.usage, p.accepted, p.pct, p.blockedUntil, size_t(cap));
            ref.recordChange(p, size_t(cap));
        }
        const QString diff = compare(series, ref);
        QVERIFY2(diff.isEmpty(), qPrintable(QStringLiteral("step %1: %2").arg(step).arg(diff)));
        // A copy taken part way goes on as the original would (ThrottleEngine::series).
        if (step % 997 == 500) {
            copy = series;
            copyRef = ref;
        }
        if (copy) {
            copy->recordChange(p.t + 1, p.usage, p.accepted, p.pct, 0, size_t(cap));
            copyRef->recordChange({p.t + 1, p.usage, p.accepted, p.pct, 0}, size_t(cap));
            const QString copyDiff = compare(*copy, *copyRef);
            QVERIFY2(copyDiff.isEmpty(),
                     qPrintable(QStringLiteral("copy at step %1: %2").arg(step).arg(copyDiff)));
            copy.reset();
            copyRef.reset();
        }
    }
    QVERIFY(ref.exactFrom > 0 || cap > 5000); // folding took place
}

QTEST_GUILESS_MAIN(TestUsageSeries)
#include "tst_usageseries.moc"
