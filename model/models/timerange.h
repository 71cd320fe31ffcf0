#pragma once
// The one time range every view shows, plus the replay instant. Views read it and write it
// (zoom, pan, a click on an alert); it tells all of them, so the pages never disagree about
// "when". QObject in Qt Core only: it lives in the model layer with the item models.

#include <QList>
#include <QObject>
#include <QString>

#include <optional>

namespace ts::models {

class TimeRange : public QObject
{
    Q_OBJECT
public:
    explicit TimeRange(QObject *parent = nullptr);

    // The extent of the data ([first, last] event time). While following, the visible range
    // slides so that its end stays at the last event.
    void setBounds(qint64 firstMs, qint64 lastMs);
    [[nodiscard]] bool hasBounds() const { return m_hasBounds; }
    [[nodiscard]] qint64 firstMs() const { return m_firstMs; }
    [[nodiscard]] qint64 lastMs() const { return m_lastMs; }

    // The visible range. Setting it by hand (zoom, pan, an alert) stops following.
    void setRange(qint64 startMs, qint64 endMs);
    [[nodiscard]] qint64 startMs() const { return m_startMs; }
    [[nodiscard]] qint64 endMs() const { return m_endMs; }
    [[nodiscard]] bool hasRange() const { return m_endMs > m_startMs; }
    void showAll();

    // Live-follow: the range end tracks the last event and the replay instant is cleared.
    void setFollowing(bool following);
    [[nodiscard]] bool isFollowing() const { return m_following; }

    // The trailing window shown while following, like Grafana's "Last 15 minutes": the range
    // ends at the last event and is this wide, or as wide as the data when there is less of it
    // (never a blank window narrower than the data, never wider than it). 0 = all the data.
    // Choosing one follows the newest data and forgets a width set by zooming.
    void setTrailingWindowMs(qint64 widthMs);
    [[nodiscard]] qint64 trailingWindowMs() const { return m_windowMs; }
    // The toolbar's presets: 5 min, 15 min, 1 h, all (0).
    static QList<qint64> presetWindowsMs();
    // "5m", "15m", "1h", "all": how a workspace remembers the choice; nullopt = not a preset.
    static QString windowSettingText(qint64 widthMs);
    static std::optional<qint64> windowFromSettingText(const QString &text);
    // Where the range goes while following, for bounds [firstMs, lastMs]: the pure rule above
    // (chosenWidthMs: a width the operator zoomed to while following, which wins).
    struct Span
    {
        qint64 startMs = 0;
        qint64 endMs = 0;
        friend bool operator==(const Span &, const Span &) = default;
    };
    static Span followedSpan(qint64 firstMs, qint64 lastMs, qint64 windowMs,
                             std::optional<qint64> chosenWidthMs);

    // Replay: show every bucket as it was at this instant; nullopt = the latest state.
    void setReplayInstant(std::optional<qint64> instantMs);
    [[nodiscard]] std::optional<qint64> replayInstant() const { return m_replayInstant; }

Q_SIGNALS:
    void rangeChanged(qint64 startMs, qint64 endMs);
    void boundsChanged(qint64 firstMs, qint64 lastMs);
    void followingChanged(bool following);
    void replayInstantChanged();
    void trailingWindowChanged(qint64 widthMs);

private:
    void applyRange(qint64 startMs, qint64 endMs);

    bool m_hasBounds = false;
    qint64 m_firstMs = 0;
    qint64 m_lastMs = 0;
    qint64 m_startMs = 0;
    qint64 m_endMs = 0;
    bool m_following = true;
    std::optional<qint64> m_replayInstant;
    qint64 m_windowMs = 0;
    // A width the operator zoomed to while following (the view keeps it as data arrives),
    // until a preset is chosen or everything is shown.
    std::optional<qint64> m_chosenWidthMs;
};

} // namespace ts::models
