#include "breakerspage.h"

#include "core/timeparse.h"
#include "models/breakertransitionsmodel.h"
#include "models/displaynames.h"
#include "models/timerange.h"
#include "plotstyle.h"
#include "qcp.h"
#include "theme.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QLabel>
#include <QLineEdit>
#include <QMap>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <cmath>

namespace ts::widgets {

std::vector<BreakerBand> breakerBands(const ReportData &report, QStringList *rowLabels)
{
    // Row key "scope\x1fsource-order": logged (0) before reconstructed (1) for the same scope.
    QMap<QString, QList<const BreakerTransition *>> rows;
    auto rowKey = [](const QString &scope, const QString &source) -> QString {
        return scope + QChar(0x1f) + (source == u"logged" ? u'0' : u'1') + source;
    };
    for (const BreakerTransition &transition : report.breakerTransitions)
        rows[rowKey(transition.scope, transition.source)].append(&transition);
    // Breakers that never changed state still deserve a (closed or final-state) row.
    for (const BreakerSummary &summary : report.breakers) {
        const QString key = rowKey(summary.scope, summary.source);
        if (!rows.contains(key))
            rows.insert(key, {});
    }

    const qint64 first = report.firstMs.value_or(0);
    const qint64 last = std::max(report.lastMs.value_or(first), first + 1);
    std::vector<BreakerBand> bands;
    int row = 0;
    rowLabels->clear();
    for (auto it = rows.begin(); it != rows.end(); ++it, ++row) {
        const QStringList parts = it.key().split(QChar(0x1f));
        rowLabels->append(models::shortScope(parts.value(0)) + QStringLiteral(" (") +
                          parts.value(1).mid(1) + u')');
        auto &transitions = it.value();
        std::stable_sort(transitions.begin(), transitions.end(),
                         [](const BreakerTransition *a, const BreakerTransition *b) {
                             return a->tsMs < b->tsMs;
                         });
        QString state = QStringLiteral("closed");
        if (!transitions.isEmpty() && !transitions.first()->from.isEmpty())
            state = transitions.first()->from;
        if (transitions.isEmpty()) {
            for (const BreakerSummary &summary : report.breakers) {
                if (rowKey(summary.scope, summary.source) == it.key() &&
                    !summary.finalState.isEmpty())
                    state = summary.finalState;
            }
        }
        qint64 start = std::min(first, transitions.isEmpty() ? first : transitions.first()->tsMs);
        for (const BreakerTransition *transition : transitions) {
            if (transition->tsMs > start)
                bands.push_back({row, start, transition->tsMs, state});
            start = transition->tsMs;
            state = transition->to;
        }
        bands.push_back({row, start, std::max(last, start + 1), state});
    }
    return bands;
}

BreakersPage::BreakersPage(models::TimeRange *timeRange, QWidget *parent)
    : DashboardPage(timeRange, parent), m_plot(new QCustomPlot), m_summary(new QLabel),
      m_modelText(new QLabel), m_preset(new QComboBox), m_failurePercent(new QDoubleSpinBox),
      m_window(new QComboBox), m_windowSize(new QSpinBox), m_minimumThroughput(new QSpinBox),
      m_breakSeconds(new QDoubleSpinBox), m_probes(new QSpinBox), m_retryAfter(new QCheckBox),
      m_formPages(new QStackedWidget), m_libraryOptions(new QLineEdit), m_libraryError(new QLabel),
      m_apply(new QPushButton(tr("Apply"))), m_model(new models::BreakerTransitionsModel(this)),
      m_proxy(new QSortFilterProxyModel(this)), m_view(new QTableView)
{
    auto *layout = new QVBoxLayout(this);
    buildForm(layout);
    setFormModel(m_inEffect);
    updateModelText();
    connectForm();

    QStringList legend;
    for (const QString &state : {QStringLiteral("closed"), QStringLiteral("soft-open"),
                                 QStringLiteral("open"), QStringLiteral("half-open")})
        legend.append(QStringLiteral("<span style=\"color:%1\">&#9632;</span> %2")
                          .arg(breakerStateColor(state).name(), state));
    auto *legendLabel = new QLabel(legend.join(QStringLiteral("&nbsp;&nbsp;")));
    auto *top = new QHBoxLayout;
    // One line per breaker, as long as its key: wrapped, so it never widens the window.
    m_summary->setWordWrap(true);
    m_summary->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    top->addWidget(m_summary, 1);
    top->addWidget(legendLabel);
    layout->addLayout(top);
    auto *splitter = new QSplitter(Qt::Vertical);
    splitter->setObjectName(QStringLiteral("breakersSplitter"));
    m_plot->setObjectName(QStringLiteral("breakersPlot"));
    m_plot->setMinimumHeight(140);
    splitter->addWidget(m_plot);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(models::BreakerTransitionsModel::SortRole);
    m_view->setModel(m_proxy);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(0, Qt::AscendingOrder);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->verticalHeader()->hide();
    m_view->horizontalHeader()->setStretchLastSection(true);
    splitter->addWidget(m_view);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    // Initial proportions (the table's size hint would otherwise squeeze the plot).
    splitter->setSizes({600, 400});
    layout->addWidget(splitter, 1);

    useUtcTimeAxis(m_plot->xAxis);
    m_plot->xAxis->setLabel(tr("time (UTC)"));
    m_plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create());
    m_plot->yAxis->grid()->setVisible(false);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->axisRect()->setRangeDrag(Qt::Horizontal);
    m_plot->axisRect()->setRangeZoom(Qt::Horizontal);
    m_cursor = new QCPItemStraightLine(m_plot);
    m_cursor->setPen(QPen(palette().color(QPalette::Text), 1.2, Qt::DashLine));
    m_cursor->setVisible(false);
    applyPalette(m_plot);
    tunePlotForSpeed(m_plot);

    connect(m_plot, &QCustomPlot::mouseDoubleClick, this,
            [this](QMouseEvent *) { this->timeRange()->showAll(); });
    connect(m_plot->xAxis, qOverload<const QCPRange &>(&QCPAxis::rangeChanged), this,
            [this](const QCPRange &range) {
                if (!m_applyingRange)
                    this->timeRange()->setRange(plotKeyToMs(range.lower), plotKeyToMs(range.upper));
            });
    // A transition clicked in the list: show the moment it happened.
    connect(m_view, &QTableView::activated, this, [this](const QModelIndex &index) {
        const qint64 at = index.data(models::BreakerTransitionsModel::TimeMsRole).toLongLong();
        this->timeRange()->setReplayInstant(at);
    });
}

void BreakersPage::buildForm(QVBoxLayout *layout)
{
    // The reference breaker: what the reconstruction replays, and the form to change it. One
    // line of words first (what people compare with Polly / Resilience4j), then the numbers.
    m_modelText->setObjectName(QStringLiteral("breakerModelText"));
    m_modelText->setWordWrap(true);
    m_modelText->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    layout->addWidget(m_modelText);
    m_preset->setObjectName(QStringLiteral("breakerPreset"));
    m_preset->addItem(tr("Polly v8 defaults"), QStringLiteral("polly-v8"));
    m_preset->addItem(tr("Resilience4j defaults"), QStringLiteral("resilience4j"));
    m_preset->addItem(tr("cockatiel (Node): its options"), QStringLiteral("cockatiel"));
    m_preset->addItem(tr("opossum (Node): its options"), QStringLiteral("opossum"));
    m_preset->addItem(tr("Custom"), QStringLiteral("custom"));
    m_preset->setToolTip(tr("The breaker replayed on every caller: a library's defaults, or a "
                            "Node library's own rules with the options its client was given"));
    m_failurePercent->setObjectName(QStringLiteral("breakerFailurePercent"));
    m_failurePercent->setRange(0.1, 100);
    m_failurePercent->setDecimals(1);
    m_failurePercent->setSuffix(QStringLiteral(" %"));
    m_failurePercent->setToolTip(tr("Opens when at least this share of the requests in the "
                                    "window failed (throttles, 5xx, 408)"));
    m_window->setObjectName(QStringLiteral("breakerWindow"));
    m_window->addItem(tr("seconds"), QStringLiteral("time"));
    m_window->addItem(tr("last calls"), QStringLiteral("count"));
    m_windowSize->setObjectName(QStringLiteral("breakerWindowSize"));
    m_windowSize->setRange(1, 86400);
    m_windowSize->setToolTip(tr("The sampling window: a duration (Polly) or a number of calls "
                                "(Resilience4j COUNT_BASED)"));
    m_minimumThroughput->setObjectName(QStringLiteral("breakerMinimumThroughput"));
    m_minimumThroughput->setRange(1, 1000000);
    m_minimumThroughput->setToolTip(tr("Requests the window must hold before the ratio counts"));
    m_breakSeconds->setObjectName(QStringLiteral("breakerBreakSeconds"));
    m_breakSeconds->setRange(0, 86400);
    m_breakSeconds->setDecimals(1);
    m_breakSeconds->setSuffix(QStringLiteral(" s"));
    m_probes->setObjectName(QStringLiteral("breakerProbes"));
    m_probes->setRange(1, 1000);
    m_probes->setToolTip(tr("Half-open: the requests whose failure ratio decides"));
    m_retryAfter->setObjectName(QStringLiteral("breakerRetryAfter"));
    m_retryAfter->setText(tr("Retry-After extends the break"));
    m_apply->setObjectName(QStringLiteral("breakerApply"));
    m_apply->setToolTip(tr("Replay the log with this breaker"));
    m_libraryOptions->setObjectName(QStringLiteral("breakerLibraryOptions"));
    m_libraryOptions->setToolTip(
        tr("The library's options as JSON, by its own names and in ms, e.g. cockatiel "
           "{\"breaker\": \"SamplingBreaker\", \"threshold\": 0.2, \"duration\": 30000, "
           "\"halfOpenAfter\": 10000}; opossum {\"errorThresholdPercentage\": 50, "
           "\"resetTimeout\": 30000}"));
    m_libraryError->setObjectName(QStringLiteral("breakerLibraryError"));
    m_libraryError->setWordWrap(true);
    m_libraryError->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    // Short rows, so the page still fits a 1024 px screen: the preset and Apply, then the rule
    // and the break (or a library's options).
    auto addField = [](QHBoxLayout *row, const QString &label, QWidget *field) {
        if (!label.isEmpty())
            row->addWidget(new QLabel(label));
        row->addWidget(field);
    };
    auto *head = new QHBoxLayout;
    addField(head, tr("Breaker:"), m_preset);
    head->addWidget(m_apply);
    head->addStretch(1);
    auto *reference = new QWidget;
    auto *referenceLayout = new QVBoxLayout(reference);
    referenceLayout->setContentsMargins(0, 0, 0, 0);
    auto *rule = new QHBoxLayout;
    auto *pause = new QHBoxLayout;
    addField(rule, tr("opens at"), m_failurePercent);
    addField(rule, tr("failed, of at least"), m_minimumThroughput);
    addField(rule, tr("requests in"), m_windowSize);
    addField(rule, {}, m_window);
    rule->addStretch(1);
    addField(pause, tr("Open for"), m_breakSeconds);
    addField(pause, tr("then probes:"), m_probes);
    addField(pause, {}, m_retryAfter);
    pause->addStretch(1);
    referenceLayout->addLayout(rule);
    referenceLayout->addLayout(pause);
    auto *library = new QWidget;
    auto *libraryLayout = new QVBoxLayout(library);
    libraryLayout->setContentsMargins(0, 0, 0, 0);
    auto *options = new QHBoxLayout;
    addField(options, tr("Options (the library's, as in the client's code):"), m_libraryOptions);
    libraryLayout->addLayout(options);
    libraryLayout->addWidget(m_libraryError);
    libraryLayout->addStretch(1); // the field beside the picker, not centred in the page's rows
    m_formPages->addWidget(reference);
    m_formPages->addWidget(library);
    // The form never sets the window's minimum width (an 800 px window stays 800 px): at a
    // narrow width its right end is cut rather than the window widened.
    auto *form = new QWidget;
    form->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    auto *formLayout = new QVBoxLayout(form);
    formLayout->setContentsMargins(0, 0, 0, 0);
    formLayout->addLayout(head);
    formLayout->addWidget(m_formPages);
    layout->addWidget(form);
}

void BreakersPage::connectForm()
{
    connect(m_preset, &QComboBox::activated, this, [this] {
        const QString name = m_preset->currentData().toString();
        if (name != u"custom") {
            selectPreset(name);
            return;
        }
        // Custom: the reference form, from what it holds.
        m_formPages->setCurrentIndex(0);
        formEdited();
    });
    for (auto *spin : {m_windowSize, m_minimumThroughput, m_probes})
        connect(spin, &QSpinBox::valueChanged, this, &BreakersPage::formEdited);
    for (auto *spin : {m_failurePercent, m_breakSeconds})
        connect(spin, &QDoubleSpinBox::valueChanged, this, &BreakersPage::formEdited);
    connect(m_window, &QComboBox::currentIndexChanged, this, [this] {
        if (m_fillingForm)
            return;
        // Show the window size of the kind chosen (kept from before when switching back).
        const bool time = m_window->currentData().toString() == u"time";
        m_fillingForm = true;
        m_windowSize->setValue(time ? int(m_samplingMs / 1000) : m_windowCalls);
        m_fillingForm = false;
        formEdited();
    });
    connect(m_retryAfter, &QCheckBox::toggled, this, &BreakersPage::formEdited);
    connect(m_libraryOptions, &QLineEdit::textEdited, this, &BreakersPage::formEdited);
    connect(m_apply, &QPushButton::clicked, this, &BreakersPage::applyForm);
}

QAbstractItemModel *BreakersPage::tableModel() const
{
    return m_proxy;
}

bool BreakersPage::libraryPresetChosen() const
{
    return m_formPages->currentIndex() == 1;
}

BreakerModel BreakersPage::formModel(QString *error) const
{
    if (libraryPresetChosen()) {
        // The library's options, under the preset's name.
        const QString preset = m_preset->currentData().toString();
        QJsonObject options;
        QJsonParseError parseError;
        const QString text = m_libraryOptions->text().trimmed();
        const QJsonDocument document =
            QJsonDocument::fromJson((text.isEmpty() ? u"{}"_qs : text).toUtf8(), &parseError);
        QString why;
        std::optional<BreakerModel> model;
        if (!document.isObject()) {
            why = tr("the options must be a JSON object (%1)")
                      .arg(parseError.error != QJsonParseError::NoError ? parseError.errorString()
                                                                        : tr("not an object"));
        } else {
            options = document.object();
            if (options.contains(u"preset"))
                why = tr("the preset is chosen above: leave \"preset\" out");
            else
                options.insert(u"preset"_qs, preset);
            if (why.isEmpty())
                model = BreakerModel::fromJson(options, &why);
        }
        if (error)
            *error = model ? QString() : why;
        return model ? *model : BreakerModel::fromPreset(preset).value_or(BreakerModel{});
    }
    BreakerModel model;
    model.failureRatio = m_failurePercent->value() / 100.0;
    model.window = m_window->currentData().toString() == u"count" ? BreakerModel::Window::Count
                                                                  : BreakerModel::Window::Time;
    model.samplingDurationMs = model.window == BreakerModel::Window::Time
                                   ? qint64(m_windowSize->value()) * 1000
                                   : m_samplingMs;
    model.windowCalls =
        model.window == BreakerModel::Window::Count ? m_windowSize->value() : m_windowCalls;
    model.minimumThroughput = m_minimumThroughput->value();
    model.breakDurationMs = qint64(std::llround(m_breakSeconds->value() * 1000.0));
    model.halfOpenCalls = m_probes->value();
    model.retryAfterExtendsBreak = m_retryAfter->isChecked();
    if (error)
        error->clear();
    return model;
}

void BreakersPage::setFormModel(const BreakerModel &model)
{
    m_fillingForm = true;
    if (model.rules != BreakerModel::Rules::Reference) {
        // A library's preset: its options, by its names (the reference form keeps its values).
        m_formPages->setCurrentIndex(1);
        m_preset->setCurrentIndex(m_preset->findData(model.matchingPreset()));
        m_libraryOptions->setText(QString::fromUtf8(
            QJsonDocument(model.libraryOptions()).toJson(QJsonDocument::Compact)));
        m_fillingForm = false;
        formEdited();
        return;
    }
    m_formPages->setCurrentIndex(0);
    m_samplingMs = model.samplingDurationMs;
    m_windowCalls = model.windowCalls;
    m_failurePercent->setValue(model.failureRatio * 100.0);
    const bool time = model.window == BreakerModel::Window::Time;
    m_window->setCurrentIndex(time ? 0 : 1);
    m_windowSize->setValue(time ? int(model.samplingDurationMs / 1000) : model.windowCalls);
    m_minimumThroughput->setValue(model.minimumThroughput);
    m_breakSeconds->setValue(double(model.breakDurationMs) / 1000.0);
    m_probes->setValue(model.halfOpenCalls);
    m_retryAfter->setChecked(model.retryAfterExtendsBreak);
    m_fillingForm = false;
    formEdited();
}

void BreakersPage::selectPreset(const QString &name)
{
    if (const auto preset = BreakerModel::fromPreset(name))
        setFormModel(*preset);
}

void BreakersPage::formEdited()
{
    if (m_fillingForm)
        return;
    QString error;
    const BreakerModel model = formModel(&error);
    m_libraryError->setText(error);
    m_libraryError->setVisible(!error.isEmpty());
    if (!libraryPresetChosen()) {
        if (m_window->currentData().toString() == u"time")
            m_samplingMs = model.samplingDurationMs;
        else
            m_windowCalls = model.windowCalls;
        m_preset->setCurrentIndex(m_preset->findData(model.matchingPreset()));
    }
    m_formEdited = !(model == m_inEffect);
    m_apply->setEnabled(m_formEdited && error.isEmpty());
}

void BreakersPage::applyForm()
{
    QString error;
    const BreakerModel model = formModel(&error);
    if (!error.isEmpty())
        return;
    Q_EMIT breakerModelChangeRequested(
        QString::fromUtf8(QJsonDocument(model.toJson()).toJson(QJsonDocument::Compact)));
}

void BreakersPage::updateModelText()
{
    const QString replayed =
        m_inEffect.rules == BreakerModel::Rules::Reference
            ? tr("Reference breaker replayed on the log: %1.")
            : tr("Breaker replayed on the log by its library's own rules: %1.");
    m_modelText->setText(replayed.arg(m_inEffect.describe()) +
                         tr(" A failure is a throttle, a 5xx or a 408; soft-open only marks a "
                            "limit nearly used."));
}

void BreakersPage::refresh()
{
    const auto &snap = snapshot();
    if (snap && !(snap->report.breakerModel == m_inEffect)) {
        m_inEffect = snap->report.breakerModel;
        updateModelText();
        // The operator's unapplied edits stay; otherwise the form shows what is in effect.
        if (!m_formEdited)
            setFormModel(m_inEffect);
        else
            formEdited();
    }
    m_model->setTransitions(snap ? snap->report.breakerTransitions : QList<BreakerTransition>());
    fitColumns(m_view, 320); // headers whole; a long scope elided, in full in its tooltip
    // Bands are items (one rectangle each): rebuilt from scratch, cheap for the hundreds of
    // transitions a breaker produces.
    for (int i = m_plot->itemCount() - 1; i >= 0; --i) {
        if (m_plot->item(i) != m_cursor)
            m_plot->removeItem(i);
    }
    m_bands = snap ? breakerBands(snap->report, &m_rowLabels) : std::vector<BreakerBand>();
    if (!snap)
        m_rowLabels.clear();
    for (const BreakerBand &band : m_bands) {
        auto *rect = new QCPItemRect(m_plot);
        rect->topLeft->setCoords(plotKey(band.startMs), band.row + 0.35);
        rect->bottomRight->setCoords(plotKey(band.endMs), band.row - 0.35);
        const QColor colour = breakerStateColor(band.state);
        rect->setPen(Qt::NoPen);
        rect->setBrush(colour);
        rect->setSelectable(false);
    }
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (int row = 0; row < m_rowLabels.size(); ++row)
        ticker->addTick(row, m_rowLabels.at(row));
    m_plot->yAxis->setTicker(ticker);
    m_plot->yAxis->setRange(-0.6, std::max<double>(0.6, m_rowLabels.size() - 0.4));
    m_plot->yAxis->setRangeReversed(true);

    if (!snap || snap->report.breakers.isEmpty()) {
        m_summary->setText(snap ? tr("No breaker activity (no breaker events logged, no "
                                     "reconstructed transitions).")
                                : tr("No data."));
    } else {
        QStringList parts;
        for (const BreakerSummary &breaker : snap->report.breakers) {
            QString line =
                tr("%1 (%2): %3 transitions, open %4 s, now %5")
                    .arg(models::shortScope(breaker.scope), breaker.source)
                    .arg(breaker.transitions)
                    .arg(QString::number(breaker.openSeconds, 'f', 1), breaker.finalState);
            if (breaker.failures > 0)
                line += tr("; %1 of %2 requests failed, peak failure ratio %3")
                            .arg(breaker.failures)
                            .arg(breaker.requests)
                            .arg(breaker.peakFailureRatio, 0, 'g', 3);
            if (breaker.model && !(*breaker.model == snap->report.breakerModel))
                line += tr(" (its policy's breaker: %1)").arg(breaker.model->describe());
            if (breaker.trips > 0 || breaker.blockedRequests > 0)
                line += (breaker.trips == 1 ? tr("; tripped once")
                                            : tr("; tripped %1 times").arg(breaker.trips)) +
                        tr(", %1 requests sent while open").arg(breaker.blockedRequests) +
                        (breaker.blockedIdentities.size() == 1
                             ? tr(" (1 identity)")
                             : tr(" (%1 identities)").arg(breaker.blockedIdentities.size()));
            parts.append(line);
        }
        m_summary->setText(parts.join(u'\n'));
    }
    applyTimeRange();
}

void BreakersPage::timeChanged()
{
    applyTimeRange();
}

void BreakersPage::applyTimeRange()
{
    m_applyingRange = true;
    if (timeRange()->hasRange())
        m_plot->xAxis->setRange(plotKey(timeRange()->startMs()), plotKey(timeRange()->endMs()));
    m_applyingRange = false;
    const auto instant = timeRange()->replayInstant();
    m_cursor->setVisible(instant.has_value());
    if (instant) {
        m_cursor->point1->setCoords(plotKey(*instant), 0);
        m_cursor->point2->setCoords(plotKey(*instant), 1);
    }
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace ts::widgets
