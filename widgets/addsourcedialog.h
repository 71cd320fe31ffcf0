#pragma once
// File > Add Source…: a log store to poll (docs/throttlescope.1, POLLED SOURCES), named by its
// URL, and how often to ask it. The URL carries no secret: a token or password is named by the
// environment variable or file that holds it (token-env=, password-file=, ...); the window
// passes the URL on and the pipeline refuses one with a secret in it.

#include <QDialog>

class QLineEdit;
class QSpinBox;

class AddSourceDialog : public QDialog
{
    Q_OBJECT
public:
    explicit AddSourceDialog(QWidget *parent = nullptr);

    [[nodiscard]] QString url() const;
    [[nodiscard]] int everySeconds() const;

private:
    QLineEdit *m_url = nullptr;
    QSpinBox *m_every = nullptr;
};
