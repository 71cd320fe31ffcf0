#include "preferences.h"

#include "dashboard.h"
#include "models/displaynames.h"
#include "plotstyle.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>

namespace ts::widgets {

namespace {
const QString kGroup = QStringLiteral("preferences");
} // namespace

Preferences Preferences::load()
{
    QSettings settings;
    settings.beginGroup(kGroup);
    Preferences p;
    p.fillWarning = settings.value(QStringLiteral("fillWarning"), p.fillWarning).toDouble();
    p.fillLimit = settings.value(QStringLiteral("fillLimit"), p.fillLimit).toDouble();
    p.utc = settings.value(QStringLiteral("utc"), p.utc).toBool();
    p.refreshMs = settings.value(QStringLiteral("refreshMs"), p.refreshMs).toInt();
    p.theme = themeModeFromName(settings.value(QStringLiteral("theme")).toString());
    p.reorderWindowSeconds =
        settings.value(QStringLiteral("reorderWindowSeconds"), p.reorderWindowSeconds).toInt();
    p.reorderWindowSeconds = std::clamp(p.reorderWindowSeconds, -1, 3600);
    // A hand-edited or corrupt file must not make every cell red or the window spin.
    p.fillLimit = std::clamp(p.fillLimit, 0.1, 10.0);
    p.fillWarning = std::clamp(p.fillWarning, 0.05, p.fillLimit);
    p.refreshMs = std::clamp(p.refreshMs, 50, 5000);
    return p;
}

void Preferences::save() const
{
    QSettings settings;
    settings.beginGroup(kGroup);
    settings.setValue(QStringLiteral("fillWarning"), fillWarning);
    settings.setValue(QStringLiteral("fillLimit"), fillLimit);
    settings.setValue(QStringLiteral("utc"), utc);
    settings.setValue(QStringLiteral("refreshMs"), refreshMs);
    settings.setValue(QStringLiteral("theme"), themeModeName(theme));
    settings.setValue(QStringLiteral("reorderWindowSeconds"), reorderWindowSeconds);
}

void Preferences::apply(Dashboard *dashboard) const
{
    setFillThresholds(fillWarning, fillLimit);
    models::setDisplayTimeUtc(utc);
    if (theme != currentThemeMode())
        applyTheme(theme);
    if (!dashboard)
        return;
    dashboard->setRefreshIntervalMs(refreshMs);
    applyDisplayTime(dashboard);
    dashboard->redrawAll();
}

PreferencesDialog::PreferencesDialog(QWidget *parent)
    : QDialog(parent), m_warning(new QDoubleSpinBox), m_limit(new QDoubleSpinBox),
      m_time(new QComboBox), m_refresh(new QSpinBox), m_theme(new QComboBox),
      m_reorder(new QSpinBox)
{
    setObjectName(QStringLiteral("preferencesDialog"));
    setWindowTitle(tr("Preferences"));
    auto *form = new QFormLayout;
    for (QDoubleSpinBox *box : {m_warning, m_limit}) {
        box->setRange(5, 1000);
        box->setDecimals(0);
        box->setSuffix(QStringLiteral(" %"));
        box->setSingleStep(5);
    }
    m_warning->setObjectName(QStringLiteral("fillWarning"));
    m_limit->setObjectName(QStringLiteral("fillLimit"));
    m_warning->setToolTip(tr("Fills from this share of the limit are amber"));
    m_limit->setToolTip(tr("Fills from this share of the limit are red"));
    form->addRow(tr("Fill: amber from"), m_warning);
    form->addRow(tr("Fill: red from"), m_limit);
    m_time->setObjectName(QStringLiteral("timeZone"));
    m_time->addItem(tr("UTC (as the logs and reports)"), true);
    m_time->addItem(tr("Local time"), false);
    form->addRow(tr("Times"), m_time);
    m_refresh->setObjectName(QStringLiteral("refreshMs"));
    m_refresh->setRange(50, 5000);
    m_refresh->setSingleStep(50);
    m_refresh->setSuffix(tr(" ms"));
    m_refresh->setToolTip(tr("How often the dashboard redraws while data arrives"));
    form->addRow(tr("Redraw at most every"), m_refresh);
    m_theme->setObjectName(QStringLiteral("theme"));
    m_theme->addItem(tr("Follow the system"), themeModeName(ThemeMode::System));
    m_theme->addItem(tr("Light"), themeModeName(ThemeMode::Light));
    m_theme->addItem(tr("Dark"), themeModeName(ThemeMode::Dark));
    form->addRow(tr("Theme"), m_theme);
    m_reorder->setObjectName(QStringLiteral("reorderWindow"));
    m_reorder->setRange(-1, 3600);
    m_reorder->setSpecialValueText(tr("auto (sized from the lateness seen)"));
    m_reorder->setSuffix(tr(" s"));
    m_reorder->setToolTip(tr("How long a live feed's events wait for earlier ones that arrive "
                             "late (access logs write a line when the request ends). Events "
                             "later than this are counted late on the Ingest page."));
    form->addRow(tr("Live feeds: reorder window"), m_reorder);
    // Red must not start below amber.
    connect(m_limit, &QDoubleSpinBox::valueChanged, this,
            [this](double limit) { m_warning->setMaximum(limit); });

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel |
                                         QDialogButtonBox::RestoreDefaults);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(buttons->button(QDialogButtonBox::RestoreDefaults), &QPushButton::clicked, this,
            [this] { setPreferences(Preferences{}); });
    auto *layout = new QVBoxLayout(this);
    auto *note = new QLabel(tr("These change how things are shown, never what is computed, "
                               "but for the reorder window of live feeds."));
    note->setWordWrap(true);
    layout->addWidget(note);
    layout->addLayout(form);
    layout->addWidget(buttons);
    setPreferences(Preferences::load());
}

void PreferencesDialog::setPreferences(const Preferences &p)
{
    m_limit->setValue(p.fillLimit * 100.0);
    m_warning->setMaximum(m_limit->value());
    m_warning->setValue(p.fillWarning * 100.0);
    m_time->setCurrentIndex(p.utc ? 0 : 1);
    m_refresh->setValue(p.refreshMs);
    m_theme->setCurrentIndex(std::max(0, m_theme->findData(themeModeName(p.theme))));
    m_reorder->setValue(p.reorderWindowSeconds);
}

Preferences PreferencesDialog::preferences() const
{
    Preferences p;
    p.fillWarning = m_warning->value() / 100.0;
    p.fillLimit = m_limit->value() / 100.0;
    p.utc = m_time->currentData().toBool();
    p.refreshMs = m_refresh->value();
    p.theme = themeModeFromName(m_theme->currentData().toString());
    p.reorderWindowSeconds = m_reorder->value();
    return p;
}

} // namespace ts::widgets
