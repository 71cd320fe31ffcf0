// What the window shows never holds a secret: the seeded corpus (tests/data/secrets) is opened
// through the dashboard's own pipeline (AnalysisSession, its scratch workspace, the Events and
// Ingest pages), and every text a screenshot could show is searched: every page's labels,
// buttons and tooltips, every cell, header and tooltip of every table, every plot's legend and
// text items, and what the window exports (the JSON report, every table as CSV, the window
// title and status bar). The command-line outputs are covered by tests/cli/tst_secrets.cpp.
#include "dashboard.h"
#include "mainwindow.h"
#include "plotstyle.h"
#include "qcp.h"
#include "session/analysissession.h"

#include <QAbstractButton>
#include <QAbstractItemView>
#include <QApplication>
#include <QFile>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

namespace {

QByteArray readAll(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

QString corpusPath(const QString &name)
{
    return QStringLiteral(TS_TEST_DATA_DIR "/secrets/") + name;
}

// Every text of a model: all cells in the roles a view shows, and the headers.
void collectModelText(const QAbstractItemModel *model, QString &text)
{
    const QList<int> roles{Qt::DisplayRole, Qt::ToolTipRole, Qt::StatusTipRole, Qt::WhatsThisRole,
                           Qt::EditRole};
    for (int column = 0; column < model->columnCount(); ++column) {
        for (const int role : roles)
            text += model->headerData(column, Qt::Horizontal, role).toString() + u'\n';
    }
    for (int row = 0; row < model->rowCount(); ++row) {
        for (int column = 0; column < model->columnCount(); ++column) {
            const QModelIndex index = model->index(row, column);
            for (const int role : roles)
                text += model->data(index, role).toString() + u'\n';
        }
    }
}

void collectWidgetText(QWidget *root, QString &text)
{
    text += root->windowTitle() + u'\n' + root->toolTip() + u'\n';
    for (QWidget *widget : root->findChildren<QWidget *>()) {
        text += widget->toolTip() + u'\n' + widget->statusTip() + u'\n';
        if (const auto *label = qobject_cast<const QLabel *>(widget))
            text += label->text() + u'\n';
        else if (const auto *button = qobject_cast<const QAbstractButton *>(widget))
            text += button->text() + u'\n';
        else if (const auto *edit = qobject_cast<const QLineEdit *>(widget))
            text += edit->text() + u'\n';
        else if (const auto *group = qobject_cast<const QGroupBox *>(widget))
            text += group->title() + u'\n';
        else if (const auto *view = qobject_cast<const QAbstractItemView *>(widget)) {
            if (view->model())
                collectModelText(view->model(), text);
        } else if (auto *plot = qobject_cast<QCustomPlot *>(widget)) {
            for (int i = 0; i < plot->plottableCount(); ++i)
                text += plot->plottable(i)->name() + u'\n';
            for (int i = 0; i < plot->itemCount(); ++i) {
                if (const auto *item = qobject_cast<const QCPItemText *>(plot->item(i)))
                    text += item->text() + u'\n';
            }
            for (const QCPAxis *axis : plot->axisRect()->axes())
                text += axis->label() + u'\n';
        }
    }
}

} // namespace

class TestSecretsView : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("ThrottlescopeTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_secretsview"));
    }

    void windowShowsNoSecret()
    {
        QList<QPair<QString, QByteArray>> secrets;
        for (const QByteArray &line : readAll(corpusPath(u"secrets.txt"_qs)).split('\n')) {
            const qsizetype tab = line.indexOf('\t');
            if (tab > 0)
                secrets.append({QString::fromLatin1(line.left(tab)), line.mid(tab + 1)});
        }
        QVERIFY(secrets.size() >= 18);

        MainWindow window;
        window.resize(1400, 900);
        window.show();
        ts::AnalysisSession session;
        connect(&session, &ts::AnalysisSession::snapshotReady, &window,
                [&window](std::shared_ptr<const ts::DashboardSnapshot> snapshot) {
                    window.applySnapshot(std::move(snapshot));
                });
        connect(&session, &ts::AnalysisSession::ingestStatusChanged, &window,
                [&window](const ts::IngestStatus &status) {
                    window.dashboard()->setIngestStatus(status);
                });
        connect(&session, &ts::AnalysisSession::workspaceReady, &window,
                [&window](const QString &path) { window.dashboard()->setWorkspacePath(path); });
        QSignalSpy finished(&session, &ts::AnalysisSession::filesFinished);
        QStringList files;
        for (const char *name : {"corpus.ndjson", "corpus.har", "corpus.csv", "corpus.otlp.json",
                                 "corpus.access.log", "corpus.vcr.yaml"})
            files.append(corpusPath(QString::fromLatin1(name)));
        session.openFiles(files, ts::SourceOptions{});
        QVERIFY(finished.count() > 0 || finished.wait(60000));
        session.publishIfDirty();
        QTest::qWait(3 * ts::widgets::Dashboard::kDrainIntervalMs);
        window.dashboard()->flushPendingSnapshot();
        QVERIFY(window.dashboard()->snapshot());
        QVERIFY(window.dashboard()->snapshot()->report.events > 20);

        QTemporaryDir dir;
        QList<QPair<QString, QString>> texts;
        for (const QString &page : ts::widgets::Dashboard::pageNames()) {
            window.showPage(page);
            QCOMPARE(window.dashboard()->currentPageName(), page);
            window.dashboard()->flushPendingSnapshot();
            QTest::qWait(50);
            QString text;
            collectWidgetText(&window, text);
            text += window.statusBar()->currentMessage();
            texts.append({u"page "_qs + page, text});
            if (QAbstractItemModel *table = window.dashboard()->currentTable()) {
                const QString csv = dir.filePath(page + u".csv"_qs);
                QCOMPARE(ts::widgets::exportModelCsv(table, csv), QString());
                texts.append({u"table export "_qs + page, QString::fromUtf8(readAll(csv))});
            }
        }
        const QString report = dir.filePath(u"report.json"_qs);
        QSignalSpy operation(&session, &ts::AnalysisSession::operationFinished);
        session.exportReport(report);
        texts.append({u"JSON report export"_qs, QString::fromUtf8(readAll(report))});
        QVERIFY(readAll(report).contains("\"events\""));

        // The search looks where the secrets would be: the malformed records' reasons (Ingest
        // page) and the events with masked values (Events page) are on screen.
        QString everything;
        for (const auto &[where, text] : std::as_const(texts))
            everything += text;
        QVERIFY(everything.contains(u"is not an RFC 3339 time"_qs));
        QVERIFY(everything.contains(u"REDACTED"_qs));

        QStringList leaks;
        for (const auto &[where, text] : std::as_const(texts)) {
            const QByteArray bytes = text.toUtf8();
            for (const auto &[kind, value] : std::as_const(secrets)) {
                for (qsizetype i = 0; i + 12 <= value.size(); ++i) {
                    if (bytes.contains(QByteArrayView(value).sliced(i, 12))) {
                        leaks.append(where + u": " + kind);
                        break;
                    }
                }
            }
        }
        QVERIFY2(leaks.isEmpty(), qPrintable(leaks.join(u"\n"_qs)));
    }
};

QTEST_MAIN(TestSecretsView)
#include "tst_secretsview.moc"
