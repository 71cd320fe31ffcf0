#pragma once
// The Overview at a glance: one row per identity (bucket key), sorted by urgency (blocked now,
// at limit, rising, calm), in the spirit of the Hystrix dashboard's one circle per command but
// for quotas. Each row: the worst fill now as the limiter counts it, a sparkline of the last
// minutes, 429s per second now by errorCode, the breaker state, the background lane's share
// and "safe to send in N s" with its reason, the maximum over every layer that holds the
// identity back, and the fastest steady pace its limits allow (the report's pace advice) (its own
// limits and the app-wide ones of a key it extends: "note-bridge" holds back
// "note-bridge+alice@contoso.com").
//
// "Now" is the replay instant when one is set, else the end of the data (the newest event of a
// live feed). Rows are recomputed in one pass per snapshot: dataChanged when the order stays,
// a layout change when only the order moves, a reset when identities come or go. The order
// moves only when an identity changes urgency class, or its fill moves by a 5 % step (sorting
// by raw values jitters, Hystrix issue #46).
//
// No colours here (Qt Core only): widgets/ paints the roles.

#include "engine/reportdata.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QStringList>

#include <memory>
#include <optional>
#include <vector>

namespace ts::models {

class IdentityUrgencyModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum class Urgency { Blocked = 0, AtLimit = 1, Rising = 2, Calm = 3 };

    enum Column {
        IdentityColumn,
        StatusColumn,
        FillColumn,
        SparklineColumn,
        ThrottleRateColumn,
        BreakerColumn,
        LaneColumn,
        SafeSendColumn,
        PaceColumn,
        ColumnCount
    };

    enum Role {
        UrgencyRole = Qt::UserRole + 1, // int (Urgency)
        FillRole,                       // double: worst fill now, as the limiter counts it
        SparklineRole,                  // QVariantList of double: worst fill, oldest first
        ThrottleRatesRole,              // QVariantMap errorCode -> 429s per second now
        ThrottleRateRole,               // double: 429s per second now (-1: not retained)
        BreakerStateRole,               // QString: closed | soft-open | half-open | open
        LaneShareRole,                  // double: background share 0..1 (-1: no lane data)
        SafeInMsRole,                   // qint64: ms until safe to send (0: safe now)
        SafeReasonRole,                 // QString: "onenote-per-hour frees up", "Retry-After"
        KeyRole,                        // QString: the identity (full key)
        PaceRole,       // double: the fastest steady pace the limits allow, per second (0: none)
        ScopeIndexRole, // int: the scope with the worst fill (-1: none)
    };

    // The sparkline: this long before "now", in this many samples (each the peak of its slice).
    static constexpr qint64 kSparklineMs = 5 * 60 * 1000;
    static constexpr int kSparklineSamples = 60;
    // "429s per second now" averages this window; the lane share the longer one.
    static constexpr qint64 kRateWindowMs = 10 * 1000;
    static constexpr qint64 kLaneWindowMs = 60 * 1000;

    explicit IdentityUrgencyModel(QObject *parent = nullptr);

    void setSnapshot(std::shared_ptr<const DashboardSnapshot> snapshot);
    // Replay: every figure at this instant; nullopt = the end of the data.
    void setInstant(std::optional<qint64> instantMs);
    [[nodiscard]] std::optional<qint64> instant() const { return m_instant; }
    // The instant the rows describe (the replay instant or the end of the data).
    [[nodiscard]] std::optional<qint64> referenceMs() const { return m_referenceMs; }

    [[nodiscard]] int rowCount(const QModelIndex &parent = {}) const override;
    [[nodiscard]] int columnCount(const QModelIndex &parent = {}) const override;
    [[nodiscard]] QVariant data(const QModelIndex &index, int role) const override;
    [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                      int role) const override;

    struct Row
    {
        QString key;
        Urgency urgency = Urgency::Calm;
        double fill = 0;     // worst over the row's scopes, as the limiter counts it
        double accepted = 0; // the accepted fill of that scope
        int worstScope = -1;
        std::vector<double> sparkline;
        double throttlesPerSecond = -1; // -1: not retained for this instant
        QMap<QString, double> throttleRates;
        QString breakerState; // worst over the breakers that apply
        QString breakerScope; // which one
        double backgroundShare = -1;
        std::optional<qint64> safeAtMs;
        qint64 safeInMs = 0;
        QString safeReason;
        std::vector<int> scopes; // own scopes, then the layers (app-wide keys) it extends
        // The pace advice of the key (engine/paceadvice.h), the tightest when several policies
        // key by it. Empty: no modelled limit.
        QString pace;       // "max 110/min · onenote-per-hour"
        QString paceDetail; // "max 110/min, onenote-per-hour limit binds"
        double pacePerSecond = 0;
    };
    [[nodiscard]] const Row &rowAt(int row) const { return m_rows.at(static_cast<size_t>(row)); }
    [[nodiscard]] int rowOfKey(const QString &key) const;

    static QString urgencyName(Urgency urgency);

private:
    void recompute();
    // Breaker transitions per (scope, source), in time order: the state at a replay instant.
    void buildTransitions();
    void computeRow(Row &row) const;
    void notePace(Row &row) const;
    [[nodiscard]] QString tooltip(const Row &row) const;

    std::shared_ptr<const DashboardSnapshot> m_snapshot;
    std::optional<qint64> m_instant;
    std::optional<qint64> m_referenceMs;
    std::vector<Row> m_rows;
    // Per snapshot: key -> its activity, breaker id -> breakers, breaker scope -> transitions.
    QHash<QString, int> m_activityOf;
    QHash<QString, QList<int>> m_breakersOf;
    // Row key -> the identities that sent its requests, for keys without one (an ARM
    // subscription): their breakers are the row's too (ScopeSummary::callers).
    QHash<QString, QStringList> m_callersOf;
    QHash<QString, std::vector<std::pair<qint64, QString>>> m_transitionsOf;
};

} // namespace ts::models
