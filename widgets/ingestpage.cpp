#include "ingestpage.h"

#include "ingest/feedhealth.h"
#include "models/ingestmodels.h"
#include "models/snapshotmath.h"

#include <QDateTime>
#include <QHeaderView>
#include <QLabel>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

namespace ts::widgets {

namespace {
// A stale feed's whole row turns red, not only the word in its State column: a silent feed
// must never look like a quiet system.
class StaleRowDelegate final : public QStyledItemDelegate
{
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem *option, const QModelIndex &index) const override
    {
        QStyledItemDelegate::initStyleOption(option, index);
        if (index.data(models::IngestSourcesModel::StaleRole).toBool()) {
            option->backgroundBrush = QColor(0xf8, 0xd0, 0xd0);
            option->palette.setColor(QPalette::Text, QColor(0x9b, 0x1c, 0x1c));
            option->palette.setColor(QPalette::HighlightedText, QColor(0xff, 0xe0, 0xe0));
            option->font.setBold(index.column() == models::IngestSourcesModel::StateColumn);
        }
    }
};
} // namespace

IngestPage::IngestPage(QWidget *parent)
    : QWidget(parent), m_sources(new models::IngestSourcesModel(this)),
      m_malformed(new models::MalformedRecordsModel(this)), m_sourcesView(new QTableView),
      m_malformedView(new QTableView), m_summary(new QLabel), m_malformedTitle(new QLabel),
      m_clock(new QTimer(this))
{
    auto *layout = new QVBoxLayout(this);
    m_summary->setWordWrap(true);
    layout->addWidget(m_summary);
    m_sourcesView->setModel(m_sources);
    m_sourcesView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_sourcesView->verticalHeader()->hide();
    m_sourcesView->horizontalHeader()->setStretchLastSection(true);
    m_sourcesView->setObjectName(QStringLiteral("ingestSources"));
    m_sourcesView->setItemDelegate(new StaleRowDelegate(m_sourcesView));
    layout->addWidget(m_sourcesView, 1);
    layout->addWidget(m_malformedTitle);
    m_malformedView->setModel(m_malformed);
    m_malformedView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_malformedView->verticalHeader()->hide();
    m_malformedView->horizontalHeader()->setStretchLastSection(true);
    m_malformedView->setObjectName(QStringLiteral("ingestMalformed"));
    layout->addWidget(m_malformedView, 1);
    m_clock->setInterval(1000);
    connect(m_clock, &QTimer::timeout, this, &IngestPage::tick);
    m_clock->start();
    setStatus({});
}

void IngestPage::setStatus(const IngestStatus &status)
{
    m_status = status;
    m_sources->setSources(status.sources);
    m_malformed->setRecords(status.malformed);
    m_sourcesView->resizeColumnsToContents();
    m_malformedTitle->setText(
        status.malformedTotal > status.malformed.size()
            ? tr("Malformed records: %1 (showing the last %2)")
                  .arg(status.malformedTotal)
                  .arg(status.malformed.size())
            : tr("Malformed records: %1")
                  .arg(std::max<qint64>(status.malformedTotal, status.malformed.size())));
    tick();
}

QString IngestPage::summaryText() const
{
    return m_summary->text();
}

void IngestPage::setStaleAfterSeconds(int seconds)
{
    m_sources->setStaleAfterMs(qint64(seconds) * 1000);
    tick();
}

void IngestPage::tick()
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    m_sources->setNow(now);
    const QStringList silent = m_sources->staleFeeds();
    if (silent != m_stale) {
        m_stale = silent;
        Q_EMIT staleFeedsChanged(m_stale);
    }
    if (m_status.sources.isEmpty()) {
        m_summary->setText(tr("No sources. Open a log, a workspace, listen (File > Listen…), or "
                              "start the demo."));
        return;
    }
    qint64 events = 0;
    double rate = 0;
    for (const IngestSourceStatus &source : m_status.sources) {
        if (!source.countedInWorkspace)
            events += source.events;
        rate += feedRateNow(source, now);
    }
    // Singular spelled out: tr()'s %n plural needs a loaded translation to say "1 source".
    const QString sources = m_status.sources.size() == 1
                                ? tr("1 source")
                                : tr("%1 sources").arg(m_status.sources.size());
    QString text = tr("%1, %2 events, %3 events/s")
                       .arg(sources)
                       .arg(events)
                       .arg(QString::number(rate, 'f', 1));
    // The live reorder window and what came too late for it (issue 30.4).
    const QString window = QString::number(double(m_status.reorderWindowMs) / 1000.0, 'f', 1);
    text += QStringLiteral(" · ") +
            (m_status.reorderWindowAuto
                 ? tr("reorder window %1 s (auto: sized from the lateness seen)").arg(window)
                 : tr("reorder window %1 s").arg(window)) +
            tr(", %1 late").arg(m_status.lateEvents);
    if (!silent.isEmpty())
        text += QStringLiteral("<br><b style=\"color:#d63a3a\">") +
                tr("Silent feed, stale: %1. No events is not the same as no traffic.")
                    .arg(silent.join(QStringLiteral(", ")).toHtmlEscaped()) +
                QStringLiteral("</b>");
    m_summary->setText(text);
}

} // namespace ts::widgets
