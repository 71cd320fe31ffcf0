#pragma once
// The one time range every view shows, plus the replay instant. Views read it and write it
// (zoom, pan, a click on an alert); it tells all of them, so the pages never disagree about
// "when". QObject in Qt Core only: it lives in the model layer with the item models.

#include <QObject>

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

    // Replay: show every bucket as it was at this instant; nullopt = the latest state.
    void setReplayInstant(std::optional<qint64> instantMs);
    [[nodiscard]] std::optional<qint64> replayInstant() const { return m_replayInstant; }

Q_SIGNALS:
    void rangeChanged(qint64 startMs, qint64 endMs);
    void boundsChanged(qint64 firstMs, qint64 lastMs);
    void followingChanged(bool following);
    void replayInstantChanged();

private:
    void applyRange(qint64 startMs, qint64 endMs);

    bool m_hasBounds = false;
    qint64 m_firstMs = 0;
    qint64 m_lastMs = 0;
    qint64 m_startMs = 0;
    qint64 m_endMs = 0;
    bool m_following = true;
    std::optional<qint64> m_replayInstant;
};

} // namespace ts::models
