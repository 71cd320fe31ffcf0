#include "addsourcedialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

AddSourceDialog::AddSourceDialog(QWidget *parent) : QDialog(parent)
{
    setWindowTitle(tr("Add Source"));
    setObjectName(QStringLiteral("addSourceDialog"));
    auto *layout = new QVBoxLayout(this);
    auto *help = new QLabel(
        tr("Poll a log store the fleet already writes to:\n"
           "  clickhouse://HOST:PORT/DATABASE/TABLE\n"
           "  kql+https://api.loganalytics.io/v1/workspaces/ID/query?table=AppRequests&map=…\n"
           "  https://HOST/PATH?after={cursor}   (NDJSON answers)\n"
           "Secrets never go in the URL: name the variable or file that holds them\n"
           "(token-env=VAR, token-file=PATH, password-env=VAR, password-file=PATH).\n"
           "Rows are stored with the cursor that covers them: once the session is saved,\n"
           "opening its workspace again resumes polling where it stopped."),
        this);
    help->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(help);
    auto *form = new QFormLayout;
    m_url = new QLineEdit(this);
    m_url->setObjectName(QStringLiteral("sourceUrl"));
    m_url->setPlaceholderText(QStringLiteral("clickhouse://127.0.0.1:8123/logs/requests"));
    m_url->setMinimumWidth(520);
    form->addRow(tr("&URL:"), m_url);
    m_every = new QSpinBox(this);
    m_every->setObjectName(QStringLiteral("pollEvery"));
    m_every->setRange(1, 3600);
    m_every->setValue(5);
    m_every->setSuffix(tr(" s"));
    form->addRow(tr("Poll &every:"), m_every);
    layout->addLayout(form);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    QPushButton *ok = buttons->button(QDialogButtonBox::Ok);
    ok->setText(tr("&Add"));
    ok->setEnabled(false);
    connect(m_url, &QLineEdit::textChanged, ok,
            [ok](const QString &text) { ok->setEnabled(!text.trimmed().isEmpty()); });
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
}

QString AddSourceDialog::url() const
{
    return m_url->text().trimmed();
}

int AddSourceDialog::everySeconds() const
{
    return m_every->value();
}
