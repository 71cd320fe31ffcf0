#include "alertbanner.h"

#include "engine/reportdata.h"
#include "models/displaynames.h"
#include "theme.h"

#include <QApplication>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QStyle>
#include <QToolButton>

#include <algorithm>

namespace ts::widgets {

QString alertHeadline(const Alert &alert)
{
    QString text = alert.kind + QStringLiteral(" · ") + models::shortName(alert.key);
    if (!alert.detail.isEmpty())
        text += QStringLiteral(": ") + alert.detail;
    return text;
}

AlertBanner::AlertBanner(QWidget *parent)
    : QFrame(parent), m_text(new QLabel), m_show(new QPushButton(tr("Show Alerts"))),
      m_close(new QToolButton)
{
    setObjectName(QStringLiteral("alertBanner"));
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(8, 4, 4, 4);
    auto *icon = new QLabel;
    icon->setPixmap(style()->standardIcon(QStyle::SP_MessageBoxCritical).pixmap(20, 20));
    layout->addWidget(icon);
    m_text->setObjectName(QStringLiteral("alertBannerText"));
    m_text->setWordWrap(true);
    m_text->setTextFormat(Qt::PlainText);
    m_text->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    layout->addWidget(m_text, 1);
    layout->addWidget(m_show);
    m_close->setIcon(style()->standardIcon(QStyle::SP_TitleBarCloseButton));
    m_close->setAutoRaise(true);
    m_close->setToolTip(tr("Dismiss"));
    layout->addWidget(m_close);
    connect(m_show, &QPushButton::clicked, this, [this] {
        Q_EMIT showAlertsRequested();
        hide();
    });
    connect(m_close, &QToolButton::clicked, this, &QWidget::hide);
    applyColours();
    hide();
}

QString criticalAlertsSummary(const QList<Alert> &current)
{
    QStringList named;
    for (const Alert &alert : current) {
        const QString name = alert.kind + QStringLiteral(" · ") + models::shortName(alert.key);
        if (alert.severity == u"critical" && !named.contains(name))
            named.append(name);
    }
    if (named.isEmpty())
        return AlertBanner::tr("Throttlescope: no critical alert");
    constexpr qsizetype kShown = 3;
    QString text =
        AlertBanner::tr("Throttlescope: %n critical alert(s): ", nullptr, int(named.size())) +
        QStringList(named.mid(0, kShown)).join(QStringLiteral(", "));
    if (named.size() > kShown)
        text += AlertBanner::tr(" and %n more", nullptr, int(named.size() - kShown));
    return text;
}

void AlertBanner::withdrawIfGone(const QList<Alert> &current)
{
    if (m_kind.isEmpty())
        return;
    const bool standing = std::any_of(current.begin(), current.end(), [this](const Alert &alert) {
        return alert.severity == u"critical" && alert.kind == m_kind && alert.key == m_key;
    });
    if (!standing) {
        m_kind.clear();
        m_key.clear();
        hide();
    }
}

void AlertBanner::showAlert(const Alert &alert, int more)
{
    m_kind = alert.kind;
    m_key = alert.key;
    QString text = tr("Critical alert: %1").arg(alertHeadline(alert));
    if (more > 0)
        text += tr(" (+%n more)", nullptr, more);
    m_text->setText(text);
    setToolTip(alert.key);
    show();
}

QString AlertBanner::text() const
{
    return m_text->text();
}

void AlertBanner::changeEvent(QEvent *event)
{
    QFrame::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        applyColours();
}

void AlertBanner::applyColours()
{
    // The critical red, faded into the window colour: readable in light and dark themes.
    // From the parent (or the application), never from this widget's own palette, which holds
    // the previous mix.
    const QPalette base = parentWidget() ? parentWidget()->palette() : QApplication::palette();
    const QColor window = base.color(QPalette::Window);
    const QColor red = fillColor(1.0);
    const QColor mixed((window.red() * 3 + red.red()) / 4, (window.green() * 3 + red.green()) / 4,
                       (window.blue() * 3 + red.blue()) / 4);
    QPalette palette = QWidget::palette();
    if (palette.color(QPalette::Window) != mixed) {
        palette.setColor(QPalette::Window, mixed);
        // setPalette sends another PaletteChange; the colour is then already right.
        setPalette(palette);
    }
}

} // namespace ts::widgets
