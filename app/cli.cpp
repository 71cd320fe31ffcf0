#include "cli.h"

#include "engine/analysis.h"
#include "engine/reportformat.h"
#include "ingest/sourcereader.h"

#include <QFileInfo>
#include <QTextStream>

#include <cstdio>
#include <cstring>

namespace ts::app {

namespace {

constexpr int kExitOk = 0;
constexpr int kExitNothingRead = 1;
constexpr int kExitUsage = 2;

QTextStream &err()
{
    static QTextStream stream(stderr);
    return stream;
}

// Prints the first malformed records as FILE:LINE: reason while counting all of them.
class MalformedPrinter final : public IngestSink
{
public:
    explicit MalformedPrinter(IngestSink &next) : m_next(next) {}
    void onEvent(RequestEvent &&event) override { m_next.onEvent(std::move(event)); }
    void onMalformed(MalformedRecord &&record) override
    {
        if (++m_count <= kPrinted)
            err() << record.toString() << Qt::endl;
        else if (m_count == kPrinted + 1)
            err() << "(further malformed records are counted but not printed)" << Qt::endl;
        m_next.onMalformed(std::move(record));
    }

private:
    static constexpr qint64 kPrinted = 20;
    IngestSink &m_next;
    qint64 m_count = 0;
};

struct ReportArguments
{
    bool json = false;
    QStringList policies;
    SourceOptions source;
    QString workspace;
    QStringList files;
};

void printUsage(QTextStream &out)
{
    out << "usage:\n"
           "  throttlescope                               the dashboard\n"
           "  throttlescope FILE...                       the dashboard with these logs opened\n"
           "  throttlescope --demo                        the dashboard on the built-in live demo\n"
           "  throttlescope --version\n"
           "  throttlescope report [--json] [--policy NAME|FILE]... [--format FORMAT] FILE...|-\n"
           "  throttlescope report --workspace WS.db [--json]\n"
           "  throttlescope import --workspace WS.db FILE...\n";
}

// Parses the options shared by report and import. Returns false (after printing why) on bad usage.
bool parseArguments(const QStringList &args, ReportArguments &parsed)
{
    for (qsizetype i = 0; i < args.size(); ++i) {
        const QString &arg = args[i];
        auto value = [&](QString &target) {
            if (i + 1 >= args.size()) {
                err() << "throttlescope: " << arg << " needs a value" << Qt::endl;
                return false;
            }
            target = args[++i];
            return true;
        };
        QString policy;
        if (arg == u"--json") {
            parsed.json = true;
        } else if (arg == u"--policy") {
            if (!value(policy))
                return false;
            parsed.policies << policy;
        } else if (arg == u"--format") {
            if (!value(parsed.source.format))
                return false;
        } else if (arg == u"--map") {
            if (!value(parsed.source.csvMapping))
                return false;
        } else if (arg == u"--log-format") {
            if (!value(parsed.source.accessLogFormat))
                return false;
        } else if (arg == u"--workspace") {
            if (!value(parsed.workspace))
                return false;
        } else if (arg.startsWith(u"--") || (arg.startsWith(u'-') && arg != u"-")) {
            err() << "throttlescope: unknown option " << arg << Qt::endl;
            return false;
        } else {
            parsed.files << arg;
        }
    }
    return true;
}

int runReport(const QStringList &args)
{
    ReportArguments parsed;
    if (!parseArguments(args, parsed))
        return kExitUsage;
    if (parsed.files.isEmpty() && parsed.workspace.isEmpty()) {
        err() << "throttlescope report: give at least one FILE (or - for standard input), or --workspace WS"
              << Qt::endl;
        return kExitUsage;
    }
    PolicySet policies;
    if (parsed.policies.isEmpty()) {
        policies = PolicySet::builtin();
    } else {
        for (const QString &policy : std::as_const(parsed.policies)) {
            QString error;
            if (!policies.load(policy, &error)) {
                err() << "throttlescope: --policy " << policy << ": " << error << Qt::endl;
                return kExitUsage;
            }
        }
    }
    Analysis analysis(std::move(policies));
    MalformedPrinter printer(analysis);
    int readable = 0;
    for (const QString &file : std::as_const(parsed.files)) {
        const SourceOutcome outcome = readSource(file, printer, parsed.source);
        if (!outcome.readable()) {
            err() << outcome.result.fatalError << Qt::endl;
            continue;
        }
        ++readable;
    }
    if (readable == 0)
        return kExitNothingRead;
    const ReportData report = analysis.report();
    QTextStream out(stdout);
    if (parsed.json)
        out << QString::fromUtf8(reportToJson(report));
    else
        out << reportToText(report);
    out.flush();
    return kExitOk;
}

} // namespace

bool isHeadlessInvocation(int argc, char *argv[])
{
    if (argc < 2)
        return false;
    for (const char *command : {"report", "import", "--version", "-v", "--help", "-h"}) {
        if (std::strcmp(argv[1], command) == 0)
            return true;
    }
    return false;
}

int runHeadless(const QStringList &arguments)
{
    QTextStream out(stdout);
    const QString command = arguments.value(1);
    const QStringList rest = arguments.mid(2);
    if (command == u"--version" || command == u"-v") {
        out << "throttlescope " << THROTTLESCOPE_VERSION << Qt::endl;
        return kExitOk;
    }
    if (command == u"--help" || command == u"-h") {
        printUsage(out);
        return kExitOk;
    }
    if (command == u"report")
        return runReport(rest);
    printUsage(err());
    return kExitUsage;
}

} // namespace ts::app
