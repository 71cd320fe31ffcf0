#include "timerange.h"

namespace ts::models {

namespace {
// A range is never empty: a single instant of data is shown one second wide.
constexpr qint64 kMinimumWidthMs = 1000;
constexpr qint64 kMinuteMs = 60'000;
} // namespace

QList<qint64> TimeRange::presetWindowsMs()
{
    return {5 * kMinuteMs, 15 * kMinuteMs, 60 * kMinuteMs, 0};
}

QString TimeRange::windowSettingText(qint64 widthMs)
{
    if (widthMs <= 0)
        return QStringLiteral("all");
    if (widthMs % (60 * kMinuteMs) == 0)
        return QString::number(widthMs / (60 * kMinuteMs)) + u'h';
    if (widthMs % kMinuteMs == 0)
        return QString::number(widthMs / kMinuteMs) + u'm';
    return QString::number(widthMs / 1000) + u's';
}

std::optional<qint64> TimeRange::windowFromSettingText(const QString &text)
{
    const QString trimmed = text.trimmed();
    if (trimmed == u"all")
        return 0;
    if (trimmed.size() < 2)
        return std::nullopt;
    bool ok = false;
    const qint64 count = trimmed.first(trimmed.size() - 1).toLongLong(&ok);
    if (!ok || count <= 0 || count > 24 * 365)
        return std::nullopt;
    switch (trimmed.back().unicode()) {
    case u'h':
        return count * 60 * kMinuteMs;
    case u'm':
        return count * kMinuteMs;
    case u's':
        return count * 1000;
    default:
        return std::nullopt;
    }
}

TimeRange::Span TimeRange::followedSpan(qint64 firstMs, qint64 lastMs, qint64 windowMs,
                                        std::optional<qint64> chosenWidthMs)
{
    const qint64 span = lastMs - firstMs;
    qint64 width = span; // all the data
    if (chosenWidthMs && *chosenWidthMs > 0)
        width = *chosenWidthMs;
    else if (windowMs > 0)
        width = std::min(windowMs, span); // less data than the window: all of it, no blank
    const qint64 start = std::max(firstMs, lastMs - width);
    return {start, std::max(lastMs, start + kMinimumWidthMs)};
}

void TimeRange::setTrailingWindowMs(qint64 widthMs)
{
    widthMs = std::max<qint64>(0, widthMs);
    const bool changed = widthMs != m_windowMs;
    m_windowMs = widthMs;
    m_chosenWidthMs.reset();
    if (!m_following) {
        setFollowing(true); // applies the window
    } else if (m_hasBounds) {
        const Span span = followedSpan(m_firstMs, m_lastMs, m_windowMs, std::nullopt);
        applyRange(span.startMs, span.endMs);
    }
    if (changed)
        Q_EMIT trailingWindowChanged(widthMs);
}

TimeRange::TimeRange(QObject *parent) : QObject(parent) {}

void TimeRange::setBounds(qint64 firstMs, qint64 lastMs)
{
    if (lastMs < firstMs)
        std::swap(firstMs, lastMs);
    const bool changed = !m_hasBounds || firstMs != m_firstMs || lastMs != m_lastMs;
    const bool firstTime = !m_hasBounds;
    m_hasBounds = true;
    m_firstMs = firstMs;
    m_lastMs = lastMs;
    if (!changed)
        return;
    Q_EMIT boundsChanged(firstMs, lastMs);
    if (m_following) {
        // The trailing window (or the width the operator zoomed to) ending at the last event;
        // with less data than that, all of it: the width is never stuck at that of the first
        // few seconds of a live feed.
        const Span span = followedSpan(firstMs, lastMs, m_windowMs, m_chosenWidthMs);
        applyRange(span.startMs, span.endMs);
    } else if (firstTime || !hasRange()) {
        applyRange(firstMs, lastMs == firstMs ? lastMs + kMinimumWidthMs : lastMs);
    }
}

void TimeRange::setRange(qint64 startMs, qint64 endMs)
{
    if (endMs < startMs)
        std::swap(startMs, endMs);
    if (endMs == startMs)
        endMs = startMs + 1;
    if (m_following && (!m_hasBounds || endMs < m_lastMs))
        setFollowing(false);
    // Zoomed while still following (the range reaches the last event): that width is kept.
    if (m_following)
        m_chosenWidthMs = endMs - startMs;
    applyRange(startMs, endMs);
}

void TimeRange::showAll()
{
    m_chosenWidthMs.reset();
    if (m_hasBounds)
        applyRange(m_firstMs, m_lastMs > m_firstMs ? m_lastMs : m_firstMs + kMinimumWidthMs);
}

void TimeRange::setFollowing(bool following)
{
    if (following == m_following)
        return;
    m_following = following;
    if (!following)
        m_chosenWidthMs.reset(); // back to live means back to the trailing window
    if (following) {
        setReplayInstant(std::nullopt);
        if (m_hasBounds) {
            const Span span = followedSpan(m_firstMs, m_lastMs, m_windowMs, m_chosenWidthMs);
            applyRange(span.startMs, span.endMs);
        }
    }
    Q_EMIT followingChanged(following);
}

void TimeRange::setReplayInstant(std::optional<qint64> instantMs)
{
    if (instantMs == m_replayInstant)
        return;
    m_replayInstant = instantMs;
    if (instantMs && m_following) {
        m_following = false;
        Q_EMIT followingChanged(false);
    }
    Q_EMIT replayInstantChanged();
}

void TimeRange::applyRange(qint64 startMs, qint64 endMs)
{
    if (startMs == m_startMs && endMs == m_endMs)
        return;
    m_startMs = startMs;
    m_endMs = endMs;
    Q_EMIT rangeChanged(startMs, endMs);
}

} // namespace ts::models
