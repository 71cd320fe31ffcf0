#include "listendialog.h"

#include "ingest/feedhealth.h"

#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>

namespace ts::widgets {

namespace {
const QString kAddressKey = QStringLiteral("listen/address");
const QString kPortKey = QStringLiteral("listen/port");
const QString kTokenFileKey = QStringLiteral("listen/tokenFile");
} // namespace

ListenSettings ListenSettings::load()
{
    QSettings settings;
    ListenSettings listen;
    listen.address = settings.value(kAddressKey, listen.address).toString();
    listen.port = settings.value(kPortKey, listen.port).toInt();
    listen.tokenFile = settings.value(kTokenFileKey).toString();
    listen.staleAfterSeconds =
        settings.value(QLatin1StringView(kStaleAfterSettingsKey), kDefaultStaleAfterSeconds)
            .toInt();
    return listen;
}

void ListenSettings::save() const
{
    QSettings settings;
    settings.setValue(kAddressKey, address);
    settings.setValue(kPortKey, port);
    settings.setValue(kTokenFileKey, tokenFile);
    settings.setValue(QLatin1StringView(kStaleAfterSettingsKey), staleAfterSeconds);
}

ListenDialog::ListenDialog(const ListenSettings &settings, QWidget *parent)
    : QDialog(parent), m_address(new QLineEdit(settings.address)), m_port(new QSpinBox),
      m_token(new QLineEdit(settings.token)), m_tokenFile(new QLineEdit(settings.tokenFile)),
      m_staleAfter(new QSpinBox)
{
    setWindowTitle(tr("Listen for request logs"));
    setObjectName(QStringLiteral("listenDialog"));
    auto *form = new QFormLayout;
    m_address->setObjectName(QStringLiteral("listenAddress"));
    m_address->setToolTip(tr("127.0.0.1 accepts only this machine. Any other address needs a "
                             "bearer token."));
    form->addRow(tr("Bind &address:"), m_address);
    m_port->setObjectName(QStringLiteral("listenPort"));
    m_port->setRange(0, 65535);
    m_port->setSpecialValueText(tr("any free port"));
    m_port->setValue(settings.port);
    form->addRow(tr("&Port:"), m_port);
    m_token->setObjectName(QStringLiteral("listenToken"));
    m_token->setEchoMode(QLineEdit::Password);
    m_token->setPlaceholderText(tr("none (loopback only)"));
    form->addRow(tr("Bearer &token:"), m_token);
    auto *fileRow = new QHBoxLayout;
    m_tokenFile->setObjectName(QStringLiteral("listenTokenFile"));
    m_tokenFile->setPlaceholderText(tr("or a private file holding the token"));
    auto *browse = new QPushButton(tr("Browse…"));
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Token file"));
        if (!path.isEmpty())
            m_tokenFile->setText(path);
    });
    fileRow->addWidget(m_tokenFile, 1);
    fileRow->addWidget(browse);
    form->addRow(tr("Token &file:"), fileRow);
    m_staleAfter->setObjectName(QStringLiteral("listenStaleAfter"));
    m_staleAfter->setRange(1, 24 * 3600);
    m_staleAfter->setSuffix(tr(" s"));
    m_staleAfter->setValue(settings.staleAfterSeconds);
    m_staleAfter->setToolTip(tr("A feed that sends nothing for this long is marked stale on the "
                                "Ingest page and in the status bar: no events is not the same "
                                "as no traffic."));
    form->addRow(tr("Mark a feed &stale after:"), m_staleAfter);
    auto *routes = new QLabel(tr("POST /ingest (NDJSON request log, gzip) · POST /v1/traces (OTLP/HTTP "
                                 "JSON) · GET /health. A POST is answered 200 once its events are "
                                 "stored in the session's workspace."));
    routes->setWordWrap(true);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("&Listen"));
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(routes);
    layout->addWidget(buttons);
}

ListenSettings ListenDialog::settings() const
{
    ListenSettings settings;
    settings.address = m_address->text().trimmed();
    settings.port = m_port->value();
    settings.token = m_token->text();
    settings.tokenFile = m_tokenFile->text().trimmed();
    settings.staleAfterSeconds = m_staleAfter->value();
    return settings;
}

} // namespace ts::widgets
