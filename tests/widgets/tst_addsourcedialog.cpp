// File > Add Source…: the URL and the poll interval the window passes on, Add enabled only with
// a URL. TS_KEEP_SCREENSHOTS=DIR keeps a picture of the dialog for a look.
#include "addsourcedialog.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTest>

class TestAddSourceDialog : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void urlAndInterval_data()
    {
        QTest::addColumn<QString>("typed");
        QTest::addColumn<int>("every");
        QTest::addColumn<bool>("addEnabled");
        QTest::addColumn<QString>("url");
        QTest::newRow("empty") << QString() << 5 << false << QString();
        QTest::newRow("blank") << u"   "_qs << 5 << false << QString();
        QTest::newRow("clickhouse") << u" clickhouse://127.0.0.1:8123/logs/requests "_qs << 10
                                    << true << u"clickhouse://127.0.0.1:8123/logs/requests"_qs;
        QTest::newRow("interval clamped") << u"https://h/rows?after={cursor}"_qs << 99999 << true
                                          << u"https://h/rows?after={cursor}"_qs;
    }

    void urlAndInterval()
    {
        QFETCH(QString, typed);
        QFETCH(int, every);
        QFETCH(bool, addEnabled);
        QFETCH(QString, url);
        AddSourceDialog dialog;
        auto *edit = dialog.findChild<QLineEdit *>(u"sourceUrl"_qs);
        auto *interval = dialog.findChild<QSpinBox *>(u"pollEvery"_qs);
        auto *buttons = dialog.findChild<QDialogButtonBox *>();
        QVERIFY(edit && interval && buttons);
        QPushButton *add = buttons->button(QDialogButtonBox::Ok);
        QVERIFY(!add->isEnabled());
        QTest::keyClicks(edit, typed);
        interval->setValue(every);
        QCOMPARE(add->isEnabled(), addEnabled);
        QCOMPARE(dialog.url(), url);
        QCOMPARE(dialog.everySeconds(), std::min(every, 3600));
        const QString keep = qEnvironmentVariable("TS_KEEP_SCREENSHOTS");
        if (!keep.isEmpty() && addEnabled) {
            dialog.show();
            QVERIFY(QTest::qWaitForWindowExposed(&dialog));
            QVERIFY(dialog.grab().save(QDir(keep).filePath(u"addsource-%1.png"_qs.arg(
                QString::fromUtf8(QTest::currentDataTag()).replace(u' ', u'-')))));
        }
    }
};

QTEST_MAIN(TestAddSourceDialog)
#include "tst_addsourcedialog.moc"
