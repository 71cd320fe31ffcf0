#pragma once
// The operator's display preferences (Preferences dialog, QSettings group "preferences"): fill
// thresholds for the colours, local time or UTC, how often the dashboard redraws, and the
// theme. They change what is shown, never what is computed: the report and the engine are the
// same whatever they say.

#include "theme.h"

#include <QDialog>

class QComboBox;
class QDoubleSpinBox;
class QSpinBox;

namespace ts::widgets {

class Dashboard;

struct Preferences
{
    double fillWarning = 0.8; // amber from this fill
    double fillLimit = 1.0;   // red from this fill
    bool utc = true;          // times in UTC (else local time)
    int refreshMs = 100;      // the dashboard's redraw interval
    ThemeMode theme = ThemeMode::System;
    // The reorder window of live feeds (ingest/livereorder.h), seconds; -1 = auto (sized from
    // the lateness seen). The one preference that changes what is computed: events late by more
    // than it are charged at a later instant.
    int reorderWindowSeconds = -1;

    static Preferences load();
    void save() const;
    // Makes them effective: colours, times, theme, and the dashboard's interval and pages
    // (dashboard may be null).
    void apply(Dashboard *dashboard) const;
    bool operator==(const Preferences &) const = default;
};

class PreferencesDialog : public QDialog
{
    Q_OBJECT
public:
    explicit PreferencesDialog(QWidget *parent = nullptr);

    void setPreferences(const Preferences &preferences);
    [[nodiscard]] Preferences preferences() const;

private:
    QDoubleSpinBox *m_warning;
    QDoubleSpinBox *m_limit;
    QComboBox *m_time;
    QSpinBox *m_refresh;
    QComboBox *m_theme;
    QSpinBox *m_reorder;
};

} // namespace ts::widgets
