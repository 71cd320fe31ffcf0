#pragma once
// Breakers view: the reference breaker the reconstruction replays (its parameters, a preset
// combo and a small form to change them: Apply re-runs the reconstruction; a Node library's
// preset, cockatiel or opossum, takes that library's options as JSON, pasted from the client's
// code), a timeline of state bands per scope (closed, soft-open, open, half-open), the logged
// and the reconstructed breaker of the same scope on adjacent rows, and the transitions listed
// below.

#include "dashboardpage.h"
#include "policy/breakermodel.h"

#include <QStringList>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QStackedWidget;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;
class QCPItemStraightLine;
class QVBoxLayout;

namespace ts::models {
class BreakerTransitionsModel;
}

namespace ts::widgets {

struct BreakerBand
{
    int row = 0;
    qint64 startMs = 0;
    qint64 endMs = 0;
    QString state;
};

// Turns transitions into state bands per (scope, source) row over [firstMs, lastMs]. Before a
// row's first transition the breaker is in that transition's "from" state. Rows are ordered by
// scope, then logged before reconstructed; rowLabels receives "scope (source)".
std::vector<BreakerBand> breakerBands(const ReportData &report, QStringList *rowLabels);

class BreakersPage : public DashboardPage
{
    Q_OBJECT
public:
    explicit BreakersPage(models::TimeRange *timeRange, QWidget *parent = nullptr);

    [[nodiscard]] QCustomPlot *plot() const override { return m_plot; }
    [[nodiscard]] QAbstractItemModel *tableModel() const override;
    [[nodiscard]] const std::vector<BreakerBand> &bands() const { return m_bands; }
    [[nodiscard]] const QStringList &rowLabels() const { return m_rowLabels; }

    // The reference breaker: the one in effect (from the snapshot) and the form's values.
    [[nodiscard]] const BreakerModel &modelInEffect() const { return m_inEffect; }
    // The form's breaker; a library preset whose options do not read gives its defaults and
    // *error says why (Apply is disabled then).
    [[nodiscard]] BreakerModel formModel(QString *error = nullptr) const;
    void setFormModel(const BreakerModel &model);
    // Picks a preset in the combo (its values fill the form), by name: polly-v8, resilience4j,
    // cockatiel, opossum (a library's defaults in its options field).
    void selectPreset(const QString &name);
    // Apply: emits breakerModelChangeRequested with the form's values.
    void applyForm();

Q_SIGNALS:
    // A `breaker` object (docs/policy.md) as compact JSON.
    void breakerModelChangeRequested(const QString &breakerJson);

protected:
    void refresh() override;
    void timeChanged() override;

private:
    void applyTimeRange();
    void formEdited();
    void updateModelText();
    void buildForm(QVBoxLayout *layout);
    void connectForm();
    [[nodiscard]] bool libraryPresetChosen() const;

    QCustomPlot *m_plot;
    QLabel *m_summary;
    QLabel *m_modelText;
    QComboBox *m_preset;
    QDoubleSpinBox *m_failurePercent;
    QComboBox *m_window;
    QSpinBox *m_windowSize; // seconds (time window) or calls (count window)
    QSpinBox *m_minimumThroughput;
    QDoubleSpinBox *m_breakSeconds;
    QSpinBox *m_probes;
    QCheckBox *m_retryAfter;
    // The reference form (page 0) or a library's options (page 1).
    QStackedWidget *m_formPages;
    QLineEdit *m_libraryOptions; // the library's options object, as JSON
    QLabel *m_libraryError;
    QPushButton *m_apply;
    BreakerModel m_inEffect;
    // The form's window size of the other window kind, so switching kinds and back keeps it.
    qint64 m_samplingMs = 30000;
    int m_windowCalls = 100;
    bool m_formEdited = false;  // the operator changed the form since it showed m_inEffect
    bool m_fillingForm = false; // setFormModel is writing the widgets (not an edit)
    models::BreakerTransitionsModel *m_model;
    QSortFilterProxyModel *m_proxy;
    QTableView *m_view;
    std::vector<BreakerBand> m_bands;
    QStringList m_rowLabels;
    QCPItemStraightLine *m_cursor = nullptr;
    bool m_applyingRange = false; // true while we set the axis from the TimeRange (no feedback)
};

} // namespace ts::widgets
