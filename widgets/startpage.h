#pragma once
// What the window shows before there is anything to show: the three ways in (open a log,
// listen for a live feed, run the demo) and the recent files, instead of empty pages that look
// like a quiet system.

#include <QWidget>

class QListWidget;
class QCommandLinkButton;

namespace ts::widgets {

class StartPage : public QWidget
{
    Q_OBJECT
public:
    explicit StartPage(QWidget *parent = nullptr);

    void setRecentFiles(const QStringList &paths);
    [[nodiscard]] QCommandLinkButton *openButton() const { return m_open; }
    [[nodiscard]] QCommandLinkButton *listenButton() const { return m_listen; }
    [[nodiscard]] QCommandLinkButton *demoButton() const { return m_demo; }

Q_SIGNALS:
    void openLogsRequested();
    void listenRequested();
    void demoRequested();
    void recentFileRequested(const QString &path);

private:
    QCommandLinkButton *m_open;
    QCommandLinkButton *m_listen;
    QCommandLinkButton *m_demo;
    QListWidget *m_recent;
    QWidget *m_recentBox;
};

} // namespace ts::widgets
