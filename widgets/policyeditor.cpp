#include "policyeditor.h"

#include "engine/reportdata.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QHash>
#include <QHBoxLayout>
#include <QJsonDocument>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QVBoxLayout>

namespace ts::widgets {

QStringList PolicyEditor::builtinPolicyNames()
{
    QStringList names;
    const QStringList files = QDir(QStringLiteral(":/policies"))
                                  .entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
    for (const QString &file : files)
        names.append(file.chopped(5));
    return names;
}

QString PolicyEditor::builtinPolicyText(const QString &name)
{
    QFile file(QStringLiteral(":/policies/") + name + QStringLiteral(".json"));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll());
}

PolicyEditor::PolicyEditor(QWidget *parent)
    : QDialog(parent), m_builtin(new QComboBox), m_editor(new QPlainTextEdit), m_status(new QLabel),
      m_apply(new QPushButton(tr("&Apply")))
{
    setWindowTitle(tr("Throttle policy"));
    auto *layout = new QVBoxLayout(this);
    auto *top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Built-in:")));
    m_builtin->addItem(tr("(custom)"), QString());
    const QStringList names = builtinPolicyNames();
    for (const QString &name : names)
        m_builtin->addItem(name, name);
    top->addWidget(m_builtin, 1);
    auto *load = new QPushButton(tr("&Open…"));
    auto *save = new QPushButton(tr("&Save As…"));
    top->addWidget(load);
    top->addWidget(save);
    layout->addLayout(top);
    QFont mono(QStringLiteral("monospace"));
    mono.setStyleHint(QFont::TypeWriter);
    m_editor->setFont(mono);
    m_editor->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_editor->setTabStopDistance(m_editor->fontMetrics().horizontalAdvance(u' ') * 2);
    layout->addWidget(m_editor, 1);
    m_status->setWordWrap(true);
    layout->addWidget(m_status);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    buttons->addButton(m_apply, QDialogButtonBox::ApplyRole);
    layout->addWidget(buttons);
    resize(720, 560);

    connect(m_builtin, &QComboBox::currentIndexChanged, this, [this](int index) {
        const QString name = m_builtin->itemData(index).toString();
        if (!name.isEmpty())
            selectPolicy(name);
    });
    connect(m_editor, &QPlainTextEdit::textChanged, this, &PolicyEditor::validate);
    connect(load, &QPushButton::clicked, this, &PolicyEditor::loadFile);
    connect(save, &QPushButton::clicked, this, &PolicyEditor::saveFile);
    connect(m_apply, &QPushButton::clicked, this, &PolicyEditor::apply);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    if (!names.isEmpty())
        selectPolicy(names.first());
    else
        validate();
}

void PolicyEditor::selectPolicy(const QString &name)
{
    m_loadedName = name;
    m_loadedText = builtinPolicyText(name);
    {
        const QSignalBlocker blocker(m_builtin);
        m_builtin->setCurrentIndex(std::max(0, m_builtin->findData(name)));
    }
    m_editor->setPlainText(m_loadedText);
}

QString PolicyEditor::mostUsedPolicy(const ReportData &report)
{
    QHash<QString, qint64> requests;
    for (const ScopeSummary &scope : report.scopes)
        requests[scope.policy] += scope.requests;
    QString most;
    for (auto it = requests.cbegin(); it != requests.cend(); ++it) {
        if (most.isEmpty() || it.value() > requests.value(most) ||
            (it.value() == requests.value(most) && it.key() < most))
            most = it.key();
    }
    return most;
}

void PolicyEditor::showPolicyInForce(const QString &setting, const QString &mostUsed)
{
    const QString trimmed = setting.trimmed();
    const QStringList names = builtinPolicyNames();
    if (trimmed.startsWith(u'{')) {
        setPolicyText(trimmed);
    } else if (names.contains(trimmed)) {
        selectPolicy(trimmed);
    } else if (!trimmed.isEmpty() && trimmed != u"builtin" && QFile::exists(trimmed)) {
        QFile file(trimmed);
        if (file.open(QIODevice::ReadOnly))
            setPolicyText(QString::fromUtf8(file.readAll()));
    } else if (names.contains(mostUsed)) {
        selectPolicy(mostUsed);
    }
    validate();
}

void PolicyEditor::setPolicyText(const QString &json)
{
    m_loadedName.clear();
    m_loadedText.clear();
    {
        const QSignalBlocker blocker(m_builtin);
        m_builtin->setCurrentIndex(0);
    }
    m_editor->setPlainText(json);
}

QString PolicyEditor::policyText() const
{
    return m_editor->toPlainText();
}

QString PolicyEditor::policyJsonOrName() const
{
    if (!m_loadedName.isEmpty() && m_editor->toPlainText() == m_loadedText)
        return m_loadedName;
    return m_editor->toPlainText();
}

QString PolicyEditor::validationError() const
{
    const QString text = m_editor->toPlainText();
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(text.toUtf8(), &error);
    if (error.error != QJsonParseError::NoError) {
        // offset is in UTF-8 bytes; the policies are ASCII in practice, so count lines in
        // the prefix of the UTF-8 text.
        const QByteArray utf8 = text.toUtf8().left(error.offset);
        const int line = static_cast<int>(utf8.count('\n')) + 1;
        const int column = static_cast<int>(error.offset - utf8.lastIndexOf('\n'));
        return tr("line %1, column %2: %3").arg(line).arg(column).arg(error.errorString());
    }
    if (!document.isObject())
        return tr("a policy is a JSON object");
    return {};
}

void PolicyEditor::validate()
{
    const QString error = validationError();
    m_apply->setEnabled(error.isEmpty());
    if (error.isEmpty()) {
        m_status->setText(policyJsonOrName() == m_loadedName && !m_loadedName.isEmpty()
                              ? tr("Built-in policy '%1'.").arg(m_loadedName)
                              : tr("Valid JSON (edited policy)."));
    } else {
        m_status->setText(tr("Not valid JSON: %1").arg(error));
    }
}

void PolicyEditor::loadFile()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open policy"), QString(),
                                                      tr("Policy (*.json);;All files (*)"));
    if (path.isEmpty())
        return;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        m_status->setText(tr("Could not read %1: %2").arg(path, file.errorString()));
        return;
    }
    setPolicyText(QString::fromUtf8(file.readAll()));
}

void PolicyEditor::saveFile()
{
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Save policy"), QString(), tr("Policy (*.json)"));
    if (path.isEmpty())
        return;
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(policyText().toUtf8()) < 0 || !file.commit())
        m_status->setText(tr("Could not write %1: %2").arg(path, file.errorString()));
}

void PolicyEditor::apply()
{
    if (!validationError().isEmpty())
        return;
    Q_EMIT policyChangeRequested(policyJsonOrName());
}

} // namespace ts::widgets
