// The manual page, docs/throttlescope.1, against the command line's own help: every option each
// command's --help prints is documented in that command's section (.SS), every option the
// manual documents exists, every command has a section, and the dashboard's options (parsed in
// app/dashboardmain.cpp) are in both the top-level --help and the manual.
#include "testcli.h"

#include <QFile>
#include <QMap>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

using ts::test::AppRun;
using ts::test::runApp;

namespace {

QString readText(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll());
}

// The manual's source with troff's escaped hyphens ("\-") made plain.
QString manualSource()
{
    return readText(QStringLiteral(TS_MANPAGE)).replace(u"\\-"_qs, u"-"_qs);
}

// The text of each subsection (.SS NAME), up to the next .SS or .SH.
QMap<QString, QString> manualSections(const QString &manual)
{
    QMap<QString, QString> sections;
    QString current;
    const QStringList lines = manual.split(u'\n');
    for (const QString &line : lines) {
        if (line.startsWith(u".SS ")) {
            current = line.mid(4).trimmed().remove(u'"');
            continue;
        }
        if (line.startsWith(u".SH "))
            current.clear();
        if (!current.isEmpty())
            sections[current] += line + u'\n';
    }
    return sections;
}

// The long options a text names ("--fail-on"), each once.
QSet<QString> longOptions(const QString &text)
{
    static const QRegularExpression option(u"(?<![\\w-])--[a-z][a-z0-9-]*[a-z0-9]"_qs);
    QSet<QString> options;
    auto it = option.globalMatch(text);
    while (it.hasNext())
        options.insert(it.next().captured(0));
    return options;
}

QString helpOf(const QStringList &args)
{
    const AppRun run = runApp(args);
    if (run.exitCode != 0)
        return {};
    // The live commands print their help on stderr, report and import on stdout.
    return QString::fromUtf8(run.out + run.err);
}

// The commands the top-level --help lists ("  throttlescope report ...").
QStringList commandsOfTopLevelHelp()
{
    static const QRegularExpression command(u"^\\s+throttlescope ([a-z]+)\\b"_qs,
                                            QRegularExpression::MultilineOption);
    QStringList commands;
    auto it = command.globalMatch(helpOf({u"--help"_qs}));
    while (it.hasNext()) {
        const QString name = it.next().captured(1);
        if (!commands.contains(name))
            commands << name;
    }
    return commands;
}

// The options app/dashboardmain.cpp compares arguments with (arg == u"--demo").
QSet<QString> dashboardParserOptions()
{
    static const QRegularExpression compared(u"arg == u\"(--[a-z0-9-]+)\""_qs);
    QSet<QString> options;
    auto it = compared.globalMatch(readText(QStringLiteral(TS_DASHBOARD_SOURCE)));
    while (it.hasNext())
        options.insert(it.next().captured(1));
    return options;
}

QString missing(const QSet<QString> &wanted, const QSet<QString> &have)
{
    QStringList absent = (wanted - have).values();
    absent.sort();
    return absent.join(u' ');
}

} // namespace

class TestManpage : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QVERIFY2(!manualSource().isEmpty(), TS_MANPAGE);
        QVERIFY(commandsOfTopLevelHelp().size() >= 5);
    }

    void commandOptionsMatchTheirSection_data()
    {
        QTest::addColumn<QString>("command");
        for (const QString &command : commandsOfTopLevelHelp())
            QTest::newRow(qPrintable(command)) << command;
    }

    void commandOptionsMatchTheirSection()
    {
        QFETCH(QString, command);
        const QString help = helpOf({command, u"--help"_qs});
        QVERIFY2(!help.isEmpty(), "the command has no --help");
        const QMap<QString, QString> sections = manualSections(manualSource());
        QVERIFY2(sections.contains(command), "the manual has no .SS section for the command");
        const QSet<QString> helpOptions = longOptions(help);
        const QSet<QString> manualOptions = longOptions(sections.value(command));
        const QString undocumented = missing(helpOptions, manualOptions);
        QVERIFY2(undocumented.isEmpty(),
                 qPrintable(u"in --help, not in the manual's section: "_qs + undocumented));
        const QString stale = missing(manualOptions, helpOptions);
        QVERIFY2(stale.isEmpty(), qPrintable(u"in the manual, not in --help: "_qs + stale));
    }

    void topLevelAndDashboardOptionsAreDocumented()
    {
        const QString manual = manualSource();
        const QSet<QString> manualOptions = longOptions(manual);
        const QString topLevelHelp = helpOf({u"--help"_qs});
        const QSet<QString> topLevelOptions = longOptions(topLevelHelp);
        QString undocumented = missing(topLevelOptions, manualOptions);
        QVERIFY2(undocumented.isEmpty(),
                 qPrintable(u"in --help, not in the manual: "_qs + undocumented));

        const QSet<QString> dashboardOptions = dashboardParserOptions();
        QVERIFY(dashboardOptions.contains(u"--demo"_qs));
        const QString notInHelp = missing(dashboardOptions, topLevelOptions);
        QVERIFY2(notInHelp.isEmpty(),
                 qPrintable(u"the dashboard accepts, --help does not say: "_qs + notInHelp));
        const QSet<QString> dashboardSection =
            longOptions(manualSections(manual).value(u"dashboard"_qs));
        undocumented = missing(dashboardOptions, dashboardSection);
        QVERIFY2(
            undocumented.isEmpty(),
            qPrintable(u"the dashboard accepts, its section does not say: "_qs + undocumented));
        const QString stale = missing(dashboardSection, dashboardOptions);
        QVERIFY2(stale.isEmpty(),
                 qPrintable(u"the dashboard section names, the dashboard rejects: "_qs + stale));
    }

    void versionMatches()
    {
        const AppRun version = runApp({u"--version"_qs});
        QCOMPARE(version.exitCode, 0);
        const QString firstLine = QString::fromUtf8(version.out).section(u'\n', 0, 0);
        QVERIFY(firstLine.startsWith(u"throttlescope "));
        QVERIFY2(manualSource().contains(u".TH THROTTLESCOPE 1 "_qs) &&
                     manualSource().contains(u'"' + firstLine + u'"'),
                 qPrintable(u"the manual's .TH line does not name "_qs + firstLine));
    }
};

QTEST_GUILESS_MAIN(TestManpage)
#include "tst_manpage.moc"
