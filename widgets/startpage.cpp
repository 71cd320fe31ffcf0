#include "startpage.h"

#include <QApplication>
#include <QCommandLinkButton>
#include <QFileInfo>
#include <QIcon>
#include <QLabel>
#include <QListWidget>
#include <QStyle>
#include <QVBoxLayout>

namespace ts::widgets {

StartPage::StartPage(QWidget *parent)
    : QWidget(parent),
      m_open(new QCommandLinkButton(tr("Open Log…"),
                                    tr("Read request logs: NDJSON, HAR, CSV, OpenTelemetry, "
                                       "access logs, Azure records, or a saved workspace "
                                       "(Ctrl+O, or drop files here)"))),
      m_listen(new QCommandLinkButton(tr("Listen…"),
                                      tr("Receive requests live over HTTP or OTLP from your "
                                         "client, and watch its buckets fill as it runs"))),
      m_demo(new QCommandLinkButton(tr("Demo"),
                                    tr("A OneNote migration in a death spiral, a Fabric "
                                       "deployment and Service Bus producers, simulated live "
                                       "(Ctrl+D)"))),
      m_recent(new QListWidget), m_recentBox(new QWidget)
{
    setObjectName(QStringLiteral("startPage"));
    // It shares the window with the dashboard (a stacked widget takes the largest minimum of
    // its pages): it must never make the window wider than the dashboard needs.
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
    m_open->setObjectName(QStringLiteral("startOpen"));
    m_listen->setObjectName(QStringLiteral("startListen"));
    m_demo->setObjectName(QStringLiteral("startDemo"));
    m_open->setIcon(style()->standardIcon(QStyle::SP_DialogOpenButton));
    m_listen->setIcon(style()->standardIcon(QStyle::SP_DriveNetIcon));
    m_demo->setIcon(style()->standardIcon(QStyle::SP_MediaPlay));

    auto *column = new QVBoxLayout;
    column->setSpacing(10);
    auto *title = new QLabel(tr("Throttlescope"));
    QFont titleFont = title->font();
    titleFont.setPointSizeF(titleFont.pointSizeF() * 2.0);
    titleFont.setBold(true);
    title->setFont(titleFont);
    column->addWidget(title);
    auto *subtitle = new QLabel(tr("Rate limits, throttles and circuit breakers, reconstructed "
                                   "from API request logs. Where would you like to start?"));
    subtitle->setWordWrap(true);
    column->addWidget(subtitle);
    column->addSpacing(12);
    for (QCommandLinkButton *button : {m_open, m_listen, m_demo})
        column->addWidget(button);

    auto *recentLayout = new QVBoxLayout(m_recentBox);
    recentLayout->setContentsMargins(0, 12, 0, 0);
    recentLayout->addWidget(new QLabel(tr("Recent")));
    m_recent->setObjectName(QStringLiteral("startRecent"));
    m_recent->setMaximumHeight(m_recent->fontMetrics().height() * 8);
    m_recent->setTextElideMode(Qt::ElideMiddle);
    recentLayout->addWidget(m_recent);
    column->addWidget(m_recentBox);
    column->addStretch(1);

    // A centred column of readable width, whatever the window's size.
    auto *outer = new QHBoxLayout(this);
    outer->addStretch(1);
    auto *holder = new QWidget;
    holder->setLayout(column);
    holder->setMaximumWidth(640);
    auto *vertical = new QVBoxLayout;
    vertical->addStretch(1);
    vertical->addWidget(holder, 4);
    outer->addLayout(vertical, 3);
    outer->addStretch(1);

    connect(m_open, &QCommandLinkButton::clicked, this, &StartPage::openLogsRequested);
    connect(m_listen, &QCommandLinkButton::clicked, this, &StartPage::listenRequested);
    connect(m_demo, &QCommandLinkButton::clicked, this, &StartPage::demoRequested);
    connect(m_recent, &QListWidget::itemActivated, this, [this](QListWidgetItem *item) {
        Q_EMIT recentFileRequested(item->data(Qt::UserRole).toString());
    });
    setRecentFiles({});
}

void StartPage::setRecentFiles(const QStringList &paths)
{
    m_recent->clear();
    for (const QString &path : paths) {
        auto *item = new QListWidgetItem(QFileInfo(path).fileName() + QStringLiteral("  —  ") +
                                             QFileInfo(path).absolutePath(),
                                         m_recent);
        item->setData(Qt::UserRole, path);
        item->setToolTip(path);
    }
    m_recentBox->setVisible(!paths.isEmpty());
}

} // namespace ts::widgets
