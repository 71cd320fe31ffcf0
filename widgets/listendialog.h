#pragma once
// File > Listen…: where the dashboard's listener binds (loopback by default), the bearer token
// (typed, or read from a private file) and after how long a silent feed is marked stale. The
// address, port, token file and stale threshold are remembered (QSettings); a typed token
// never is.

#include <QDialog>
#include <QString>

class QLineEdit;
class QSpinBox;

namespace ts::widgets {

struct ListenSettings
{
    QString address = QStringLiteral("127.0.0.1");
    int port = 4318; // the OTLP/HTTP port exporters use by default
    QString token;     // not remembered
    QString tokenFile; // a private file whose first line is the token
    int staleAfterSeconds = 60;

    static ListenSettings load();
    void save() const;
};

class ListenDialog : public QDialog
{
    Q_OBJECT
public:
    explicit ListenDialog(const ListenSettings &settings, QWidget *parent = nullptr);
    [[nodiscard]] ListenSettings settings() const;

private:
    QLineEdit *m_address;
    QSpinBox *m_port;
    QLineEdit *m_token;
    QLineEdit *m_tokenFile;
    QSpinBox *m_staleAfter;
};

} // namespace ts::widgets
