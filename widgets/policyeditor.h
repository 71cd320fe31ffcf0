#pragma once
// Policy picker and editor: the built-in policies (compiled in under :/policies/) or a JSON
// file, edited as text with a syntax check. "Apply" hands a built-in name (when its text is
// untouched) or the edited JSON to whoever re-runs the pipeline.

#include <QDialog>

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace ts {
struct ReportData;
}

namespace ts::widgets {

class PolicyEditor : public QDialog
{
    Q_OBJECT
public:
    explicit PolicyEditor(QWidget *parent = nullptr);

    // Names of the built-in policies ("fabric", "nginx", ...), from the resource directory.
    static QStringList builtinPolicyNames();
    static QString builtinPolicyText(const QString &name);

    void selectPolicy(const QString &name);
    void setPolicyText(const QString &json);
    // Opens on the policy in force (issue 30.13): `setting` as the session keeps it (a built-in
    // name, a file, the edited JSON; empty or "builtin": the built-in policies), and of the
    // built-in ones the policy `mostUsed` names (the one that replayed the most requests).
    void showPolicyInForce(const QString &setting, const QString &mostUsed);
    // The policy that replayed the most requests of a report ("" when none matched any).
    static QString mostUsedPolicy(const ts::ReportData &report);
    [[nodiscard]] QString policyText() const;
    // The built-in name when the text is that policy untouched, else the JSON text.
    [[nodiscard]] QString policyJsonOrName() const;
    // Empty when the text is a JSON object, else "line L, column C: reason".
    [[nodiscard]] QString validationError() const;

Q_SIGNALS:
    void policyChangeRequested(const QString &policyJsonOrName);

private:
    void validate();
    void loadFile();
    void saveFile();
    void apply();

    QComboBox *m_builtin;
    QPlainTextEdit *m_editor;
    QLabel *m_status;
    QPushButton *m_apply;
    QString m_loadedName;
    QString m_loadedText;
};

} // namespace ts::widgets
