#include "eventspage.h"

#include "models/eventsmodel.h"
#include "models/snapshotmath.h"
#include "models/timerange.h"
#include "models/workspaceeventsource.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

namespace ts::widgets {

namespace {
// How often a visible Events page looks for new rows in a growing workspace.
constexpr qint64 kTailRefreshMs = 1000;
} // namespace

EventsPage::EventsPage(models::TimeRange *timeRange, QWidget *parent)
    : QWidget(parent), m_timeRange(timeRange), m_model(new models::EventsModel(this)),
      m_identity(new QLineEdit), m_status(new QLineEdit), m_errorCode(new QLineEdit),
      m_lane(new QComboBox), m_cause(new QComboBox), m_text(new QLineEdit),
      m_visibleRangeOnly(new QCheckBox), m_columns(new QToolButton), m_view(new QTableView),
      m_detail(new QPlainTextEdit), m_statusLabel(new QLabel), m_debounce(new QTimer(this)),
      m_tailTimer(new QTimer(this))
{
    auto *layout = new QVBoxLayout(this);
    auto *filters = new QHBoxLayout;
    m_identity->setPlaceholderText(tr("identity"));
    m_identity->setObjectName(QStringLiteral("filterIdentity"));
    m_status->setPlaceholderText(tr("status"));
    m_status->setMaximumWidth(m_status->fontMetrics().horizontalAdvance(QStringLiteral("000000")) +
                              20);
    m_status->setObjectName(QStringLiteral("filterStatus"));
    m_errorCode->setPlaceholderText(tr("error code"));
    m_errorCode->setObjectName(QStringLiteral("filterErrorCode"));
    m_lane->addItem(tr("any lane"), QString());
    m_lane->addItem(tr("foreground"), QStringLiteral("foreground"));
    m_lane->addItem(tr("background"), QStringLiteral("background"));
    m_lane->setObjectName(QStringLiteral("filterLane"));
    m_cause->addItem(tr("any cause"), QString());
    for (const ThrottleCause cause :
         {ThrottleCause::Limit, ThrottleCause::RetryAfter, ThrottleCause::Concurrency,
          ThrottleCause::Capacity, ThrottleCause::Unexplained}) {
        m_cause->addItem(throttleCauseName(cause), throttleCauseName(cause));
    }
    m_cause->setObjectName(QStringLiteral("filterCause"));
    m_cause->setToolTip(tr("Why the event was throttled (observed) or would have been "
                           "(predicted): the limit exhausted, a Retry-After still running, "
                           "concurrency, the service's capacity, or unexplained"));
    m_text->setPlaceholderText(tr("text in URL, code or identity"));
    m_text->setObjectName(QStringLiteral("filterText"));
    m_visibleRangeOnly->setText(tr("visible time range"));
    m_visibleRangeOnly->setToolTip(tr("Only events inside the time range the plots show"));
    for (QLineEdit *edit : {m_identity, m_status, m_errorCode, m_text})
        edit->setClearButtonEnabled(true);
    filters->addWidget(m_identity, 2);
    filters->addWidget(m_status);
    filters->addWidget(m_errorCode, 1);
    filters->addWidget(m_lane);
    filters->addWidget(m_cause);
    filters->addWidget(m_text, 3);
    filters->addWidget(m_visibleRangeOnly);
    m_columns->setText(tr("Columns"));
    m_columns->setPopupMode(QToolButton::InstantPopup);
    filters->addWidget(m_columns);
    layout->addLayout(filters);
    layout->addWidget(m_statusLabel);

    auto *splitter = new QSplitter(Qt::Vertical);
    splitter->setObjectName(QStringLiteral("eventsSplitter"));
    m_view->setModel(m_model);
    m_view->setObjectName(QStringLiteral("eventsTable"));
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->verticalHeader()->hide();
    // Fixed row heights: the view never measures rows, which keeps scrolling a big model cheap.
    m_view->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 6);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->horizontalHeader()->setContextMenuPolicy(Qt::CustomContextMenu);
    m_view->setWordWrap(false);
    m_view->setColumnWidth(
        models::EventsModel::TimeColumn,
        m_view->fontMetrics().horizontalAdvance(QStringLiteral("2026-02-18T22:46:00.000Z")) + 16);
    m_view->setColumnWidth(models::EventsModel::UrlColumn, 380);
    splitter->addWidget(m_view);
    m_detail->setReadOnly(true);
    m_detail->setObjectName(QStringLiteral("eventDetail"));
    m_detail->setPlaceholderText(tr("Select an event to see its headers and body."));
    QFont mono(QStringLiteral("monospace"));
    mono.setStyleHint(QFont::TypeWriter);
    m_detail->setFont(mono);
    m_detail->setLineWrapMode(QPlainTextEdit::NoWrap);
    splitter->addWidget(m_detail);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    layout->addWidget(splitter, 1);

    m_debounce->setSingleShot(true);
    m_debounce->setInterval(250);
    connect(m_debounce, &QTimer::timeout, this, &EventsPage::applyFilter);
    m_tailTimer->setSingleShot(true);
    connect(m_tailTimer, &QTimer::timeout, this, &EventsPage::noteNewEvents);
    for (QLineEdit *edit : {m_identity, m_status, m_errorCode, m_text})
        connect(edit, &QLineEdit::textEdited, m_debounce, qOverload<>(&QTimer::start));
    connect(m_lane, &QComboBox::currentIndexChanged, this, &EventsPage::applyFilter);
    connect(m_cause, &QComboBox::currentIndexChanged, this, [this] {
        applyCauseSource();
        updateStatus();
    });
    connect(m_visibleRangeOnly, &QCheckBox::toggled, this, &EventsPage::applyFilter);
    connect(m_timeRange, &models::TimeRange::rangeChanged, this, [this] {
        if (m_visibleRangeOnly->isChecked())
            m_debounce->start();
    });
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &EventsPage::showDetail);
    connect(m_model, &QAbstractItemModel::rowsInserted, this, &EventsPage::updateStatus);
    connect(m_model, &QAbstractItemModel::modelReset, this, &EventsPage::updateStatus);
    connect(m_model, &models::EventsModel::matchingCountChanged, this, &EventsPage::updateStatus);
    connect(m_model, &models::EventsModel::fetchingChanged, this, &EventsPage::updateStatus);
    connect(m_model, &QAbstractItemModel::modelReset, m_detail, &QPlainTextEdit::clear);
    connect(m_view->horizontalHeader(), &QHeaderView::customContextMenuRequested, this,
            [this](const QPoint &pos) {
                showColumnMenu(m_view->horizontalHeader()->mapToGlobal(pos));
            });
    connect(m_columns, &QToolButton::clicked, this,
            [this] { showColumnMenu(m_columns->mapToGlobal(QPoint(0, m_columns->height()))); });
    updateStatus();
}

void EventsPage::noteNewEvents()
{
    m_tailStale = true;
    // The tail query and the recount touch the workspace: not more than once a second, and not
    // for a page nobody looks at.
    if (!isVisible())
        return;
    if (m_sinceTailRefresh.isValid() && m_sinceTailRefresh.elapsed() < kTailRefreshMs) {
        // Not lost when the feed stops right after: one deferred look at the end of the second.
        if (!m_tailTimer->isActive())
            m_tailTimer->start(int(kTailRefreshMs - m_sinceTailRefresh.elapsed()));
        return;
    }
    m_tailTimer->stop();
    m_tailStale = false;
    m_sinceTailRefresh.start();
    m_model->refreshTail();
}

void EventsPage::showEvent(QShowEvent *event)
{
    QWidget::showEvent(event);
    if (m_tailStale) {
        m_sinceTailRefresh.invalidate();
        noteNewEvents();
    }
}

void EventsPage::setEventCauses(std::shared_ptr<const std::vector<EventCause>> causes)
{
    m_causes = causes;
    m_model->setEventCauses(std::move(causes));
    if (m_causeSource) {
        // New causes come after the loaded ones (their keys grow with time): the tail.
        m_causeSource->setCauses(m_causes);
        noteNewEvents();
    }
}

void EventsPage::setCauseFilter(const QString &cause)
{
    const int index = m_cause->findData(cause);
    m_cause->setCurrentIndex(index >= 0 ? index : 0);
}

QString EventsPage::causeFilter() const
{
    return m_cause->currentData().toString();
}

int EventsPage::shownRowCount() const
{
    int shown = 0;
    for (int row = 0; row < m_model->rowCount(); ++row)
        shown += m_view->isRowHidden(row) ? 0 : 1;
    return shown;
}

void EventsPage::applyCauseSource()
{
    const QString wanted = causeFilter();
    if (wanted.isEmpty() || !m_baseSource) {
        m_causeSource.reset();
        m_model->setSource(m_baseSource);
        return;
    }
    m_causeSource = std::make_shared<models::CauseEventSource>(m_baseSource, wanted);
    m_causeSource->setCauses(m_causes);
    m_model->setSource(m_causeSource);
}

void EventsPage::setEventSource(std::shared_ptr<models::EventPageSource> source)
{
    m_baseSource = std::move(source);
    applyCauseSource();
    updateStatus();
}

void EventsPage::setFilter(const models::EventQuery &query)
{
    m_identity->setText(query.identity);
    m_status->setText(query.status ? QString::number(*query.status) : QString());
    m_errorCode->setText(query.errorCode);
    const int lane = m_lane->findData(query.lane);
    {
        const QSignalBlocker blocker(m_lane);
        m_lane->setCurrentIndex(lane >= 0 ? lane : 0);
    }
    m_text->setText(query.text);
    m_fromMs = query.fromMs;
    m_toMs = query.toMs;
    {
        const QSignalBlocker blocker(m_visibleRangeOnly);
        m_visibleRangeOnly->setChecked(false);
    }
    applyFilter();
}

models::EventQuery EventsPage::currentQuery() const
{
    models::EventQuery query;
    query.identity = m_identity->text().trimmed();
    bool ok = false;
    const int status = m_status->text().trimmed().toInt(&ok);
    if (ok)
        query.status = status;
    query.errorCode = m_errorCode->text().trimmed();
    query.lane = m_lane->currentData().toString();
    query.text = m_text->text().trimmed();
    if (m_visibleRangeOnly->isChecked() && m_timeRange->hasRange()) {
        query.fromMs = m_timeRange->startMs();
        query.toMs = m_timeRange->endMs();
    } else {
        query.fromMs = m_fromMs;
        query.toMs = m_toMs;
    }
    return query;
}

void EventsPage::applyFilter()
{
    m_debounce->stop();
    m_model->setQuery(currentQuery());
    updateStatus();
}

void EventsPage::setColumnVisible(int column, bool visible)
{
    m_view->setColumnHidden(column, !visible);
}

void EventsPage::showColumnMenu(const QPoint &globalPos)
{
    QMenu menu(this);
    for (int column = 0; column < m_model->columnCount(); ++column) {
        QAction *action =
            menu.addAction(m_model->headerData(column, Qt::Horizontal, Qt::DisplayRole).toString());
        action->setCheckable(true);
        action->setChecked(!m_view->isColumnHidden(column));
        connect(action, &QAction::toggled, this,
                [this, column](bool on) { setColumnVisible(column, on); });
    }
    menu.exec(globalPos);
}

void EventsPage::showDetail()
{
    const QModelIndex current = m_view->currentIndex();
    if (!current.isValid()) {
        m_detail->clear();
        return;
    }
    const RequestEvent &event = m_model->eventAt(current.row());
    QString text = models::eventDetailText(event);
    if (m_snapshot) {
        const QString buckets = models::bucketsAtText(*m_snapshot, event, event.tsMs);
        if (!buckets.isEmpty())
            text += QStringLiteral("\n\n") + buckets;
    }
    m_detail->setPlainText(text);
}

void EventsPage::setSnapshot(std::shared_ptr<const DashboardSnapshot> snapshot)
{
    m_snapshot = std::move(snapshot);
}

QString EventsPage::detailText() const
{
    return m_detail->toPlainText();
}

QString EventsPage::statusText() const
{
    return m_statusLabel->text();
}

void EventsPage::updateStatus()
{
    const auto &source = m_model->source();
    if (!source) {
        m_statusLabel->setText(tr("No workspace: events are browsable once logs are imported "
                                  "into a workspace (File > Open Workspace)."));
        return;
    }
    QString text = source->description() + QStringLiteral(" · ");
    const qint64 matching = m_model->matchingCount();
    if (matching >= 0)
        text += tr("%1 matching, %2 loaded").arg(matching).arg(m_model->rowCount());
    else if (m_model->isCounting())
        text += tr("counting…, %1 loaded").arg(m_model->rowCount());
    else
        text += tr("%1 loaded (text search: not counted)").arg(m_model->rowCount());
    if (m_model->isFetching())
        text += tr(" · searching…");
    if (!causeFilter().isEmpty())
        text += tr(" · cause %1 (the engine's newest %2 causes)")
                    .arg(causeFilter())
                    .arg(DashboardSnapshot::kMaxEventCauses);
    const models::EventQuery query = currentQuery();
    if (query.fromMs || query.toMs)
        text += tr(" · time-filtered");
    if (m_model->reachedLoadLimit())
        text += tr(" · stopped at %1 rows: narrow the filter to see further")
                    .arg(models::EventsModel::kMaxLoadedRows);
    if (!source->errorString().isEmpty())
        text += QStringLiteral(" · ") + source->errorString();
    m_statusLabel->setText(text);
}

QByteArray EventsPage::saveHeaderState() const
{
    return m_view->horizontalHeader()->saveState();
}

void EventsPage::restoreHeaderState(const QByteArray &state)
{
    m_view->horizontalHeader()->restoreState(state);
}

bool EventsPage::setWorkspacePath(const QString &path)
{
    if (path.isEmpty()) {
        setEventSource(nullptr);
        return true;
    }
    QString error;
    auto source = models::WorkspaceEventSource::open(path, &error);
    if (!source) {
        setEventSource(nullptr);
        m_statusLabel->setText(tr("Could not open workspace %1: %2").arg(path, error));
        return false;
    }
    setEventSource(std::move(source));
    return true;
}

} // namespace ts::widgets
