#include "cli.h"

#include "engine/analysis.h"
#include "engine/forecast.h"
#include "engine/reportformat.h"
#include "ingest/formatdetect.h"
#include "ingest/sortedread.h"
#include "ingest/sourcereader.h"
#include "ingest/timemerge.h"
#include "livecommands.h"
#include "policy/policy.h"
#include "pollcommand.h"
#include "store/importjob.h"
#include "store/workspace.h"
#include "store/workspacereader.h"
#include "store/workspacewriter.h"
#include "whatifcommand.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <QTextStream>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

#ifdef THROTTLESCOPE_HAS_MIMALLOC
#include <mimalloc.h>
#endif

namespace ts::app {

namespace {

constexpr int kExitOk = 0;
constexpr int kExitNothingRead = 1;
// import: an input was missing, unreadable or failed (the others are still imported).
constexpr int kExitInputFailed = 1;
constexpr int kExitUsage = 2;
// report --fail-on: the report was produced and has the findings named (docs/report-json.md).
constexpr int kExitFindings = 3;

// Which allocator serves malloc in this process, for --version (benchmark figures depend on
// it). Referencing mimalloc here also keeps it linked under --as-needed, which would otherwise
// drop a library the code never calls, and with it the replacement of malloc.
QString allocatorDescription()
{
#ifdef THROTTLESCOPE_HAS_MIMALLOC
    void *probe = std::malloc(16);
    const bool serving = mi_is_in_heap_region(probe);
    std::free(probe);
    const int version = mi_version();
    return QStringLiteral("mimalloc %1.%2.%3 (%4)")
        .arg(version / 100)
        .arg(version / 10 % 10)
        .arg(version % 10)
        .arg(serving ? QStringLiteral("serves malloc") : QStringLiteral("not serving malloc"));
#else
    return QStringLiteral("system malloc");
#endif
}

QTextStream &err()
{
    static QTextStream stream(stderr);
    return stream;
}

// Prints the first malformed records as FILE:LINE: reason while counting all of them.
class MalformedPrinter final : public IngestSink
{
public:
    explicit MalformedPrinter(IngestSink &next) : m_next(&next) {}
    void onEvent(RequestEvent &&event) override { m_next->onEvent(std::move(event)); }
    void onEvents(std::vector<RequestEvent> &&events) override
    {
        m_next->onEvents(std::move(events));
    }
    void onMalformed(MalformedRecord &&record) override
    {
        // A second read of the same files meets the records printed already: counted again
        // by the fresh analysis, printed once.
        if (m_skipPrinted > 0) {
            --m_skipPrinted;
        } else if (++m_count <= kPrinted) {
            err() << record.toString() << Qt::endl;
        } else if (m_count == kPrinted + 1) {
            err() << "(further malformed records are counted but not printed)" << Qt::endl;
        }
        m_next->onMalformed(std::move(record));
    }
    // The files are read again from their start into `next`.
    void readAgainInto(IngestSink &next)
    {
        m_next = &next;
        m_skipPrinted = m_count; // the same records come first (in each file's order)
    }

private:
    static constexpr qint64 kPrinted = 20;
    IngestSink *m_next;
    qint64 m_count = 0;
    qint64 m_skipPrinted = 0;
};

// report --fail-on: which findings make the exit status kExitFindings.
struct FailOn
{
    bool critical = false;  // an alert of severity critical
    bool warning = false;   // an alert of severity warning or critical
    bool throttles = false; // a throttled response in the log (throttles.total > 0)
    [[nodiscard]] bool any() const { return critical || warning || throttles; }
};

struct ReportArguments
{
    bool help = false;
    bool json = false;
    FailOn failOn;
    QStringList policies;
    SourceOptions source;
    QString workspace;
    QStringList files;
    QString pollSource; // --source URL (model/poll)
    std::optional<qint64> sinceMs;
    bool pushDown = false;
    std::optional<qint64> remaining; // --remaining N: the forecast with that much work left
};

void printUsage(QTextStream &out)
{
    out << "usage:\n"
           "  throttlescope                               the dashboard\n"
           "  throttlescope FILE...                       the dashboard with these logs opened\n"
           "  throttlescope --demo                        the dashboard on the built-in live demo\n"
           "  throttlescope --version\n"
           "  throttlescope report [--json] [--policy NAME|FILE]... [--format FORMAT] "
           "[--fail-on WHAT] [--remaining N] FILE...|-\n"
           "  throttlescope report --workspace WS.tsws [--json] [--fail-on WHAT]\n"
           "  throttlescope report --source URL [--since T] [--pushdown] [--json]\n"
           "  throttlescope import --workspace WS.tsws FILE...     (exit 1 if any FILE is "
           "missing or fails)\n"
           "  throttlescope tail --workspace WS.tsws [--out FILE] [--glob PATTERN] FILE|DIR...\n"
           "  throttlescope serve --listen 127.0.0.1:PORT --workspace WS.tsws [--token-file F]\n"
           "  throttlescope poll --workspace WS.tsws --source URL [--every S] [--once] "
           "[--since T]\n"
           "  throttlescope simulate --scenario NAME --out FILE [--seed N] [--duration S]\n"
           "  throttlescope whatif [--pace R/min] [--obey-retry-after] [--out FILE] ... FILE...\n"
           "  throttlescope COMMAND --help                each command's options\n"
           "Dashboard options: --demo [--speed X], --screenshot FILE.png [--size WxH] "
           "[--page NAME] [--screenshot-delay MS], --reorder-window S|auto\n"
           "A workspace (.tsws) given as FILE is opened as a workspace. Manual: man "
           "throttlescope\n";
}

// Parses --fail-on's value: critical, warning, throttles, or several of them comma-separated.
bool parseFailOn(const QString &value, FailOn &failOn)
{
    const QStringList names = value.split(u',', Qt::SkipEmptyParts);
    for (const QString &name : names) {
        const QString trimmed = name.trimmed();
        if (trimmed == u"critical") {
            failOn.critical = true;
        } else if (trimmed == u"warning") {
            failOn.warning = true;
        } else if (trimmed == u"throttles") {
            failOn.throttles = true;
        } else {
            err() << "throttlescope: --fail-on takes critical, warning or throttles, not \""
                  << trimmed << "\"" << Qt::endl;
            return false;
        }
    }
    if (names.isEmpty()) {
        err() << "throttlescope: --fail-on takes critical, warning or throttles" << Qt::endl;
        return false;
    }
    return true;
}

// The exit status of a report that was produced: kExitFindings when it has a finding that
// --fail-on names (each one is named on stderr; the report itself is printed in full either
// way), else kExitOk.
int exitStatusFor(const ReportData &report, const FailOn &failOn)
{
    if (!failOn.any())
        return kExitOk;
    qint64 critical = 0;
    qint64 warning = 0;
    for (const Alert &alert : report.alerts) {
        if (alert.severity == u"critical")
            ++critical;
        else if (alert.severity == u"warning")
            ++warning;
    }
    QStringList findings;
    if ((failOn.critical || failOn.warning) && critical > 0)
        findings << QString::number(critical) + u" critical alert(s)";
    if (failOn.warning && warning > 0)
        findings << QString::number(warning) + u" warning alert(s)";
    if (failOn.throttles && report.throttles.total > 0)
        findings << QString::number(report.throttles.total) + u" throttled response(s)";
    if (findings.isEmpty())
        return kExitOk;
    err() << "throttlescope: --fail-on: " << findings.join(u", ") << " (exit status "
          << kExitFindings << ")" << Qt::endl;
    return kExitFindings;
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
        if (arg == u"--help" || arg == u"-h") {
            parsed.help = true;
        } else if (arg == u"--json") {
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
        } else if (arg == u"--source") {
            if (!value(parsed.pollSource))
                return false;
        } else if (arg == u"--since") {
            QString since;
            if (!value(since))
                return false;
            qint64 ms = 0;
            if (!parseSinceArgument(since, &ms)) {
                err() << "throttlescope: --since takes an RFC 3339 time or Unix seconds / "
                         "milliseconds"
                      << Qt::endl;
                return false;
            }
            parsed.sinceMs = ms;
        } else if (arg == u"--pushdown") {
            parsed.pushDown = true;
        } else if (arg == u"--remaining") {
            QString count;
            if (!value(count))
                return false;
            bool ok = false;
            const qint64 remaining = count.toLongLong(&ok);
            if (!ok || remaining < 0) {
                err() << "throttlescope: --remaining takes the operations left to do (a whole "
                         "number), not \""
                      << count << "\"" << Qt::endl;
                return false;
            }
            parsed.remaining = remaining;
        } else if (arg == u"--fail-on") {
            QString what;
            if (!value(what) || !parseFailOn(what, parsed.failOn))
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

// Words joined by ", " and wrapped at 80 columns, each line indented to the help's second
// column: for lists that come from the code (formats, built-in policies).
QString helpList(const QStringList &words)
{
    constexpr qsizetype kIndent = 26;
    constexpr qsizetype kWidth = 80;
    QString text = QString(kIndent, u' ');
    qsizetype lineStart = 0;
    for (qsizetype i = 0; i < words.size(); ++i) {
        const QString word = words.at(i) + (i + 1 < words.size() ? u"," : u"");
        if (text.size() - lineStart + 1 + word.size() > kWidth &&
            text.size() - lineStart > kIndent) {
            text += u'\n';
            lineStart = text.size();
            text += QString(kIndent, u' ');
        } else if (text.size() - lineStart > kIndent) {
            text += u' ';
        }
        text += word;
    }
    return text + u'\n';
}

// The options that pick and configure a reader, shared by report and import.
QString readerOptionsHelp()
{
    return u"  --format FORMAT         the input format: auto (by content, the default) or one of\n"_qs +
           helpList(knownFormats()) +
           u""
           u"  --map FIELD=COLUMN,...  CSV: which column holds which field, e.g.\n"
           u"                          --map ts=TimeGenerated,status=ResultCode\n"
           u"  --log-format FORMAT     access logs: the nginx log_format the lines follow\n"_qs;
}

void printImportHelp(QTextStream &out)
{
    out << "usage: throttlescope import --workspace WS.tsws [OPTIONS] FILE...|-\n"
           "Options:\n"
           "  --workspace WS.tsws     the workspace to store into (created if missing)\n"
        << readerOptionsHelp()
        << "  -h, --help              this help\n"
           "Stores each FILE's requests in the workspace, exactly once. A file is recognised by\n"
           "its content, whatever its name: importing it again adds only what was appended, a\n"
           "renamed, rotated or copied file adds only its new lines, and an interrupted import\n"
           "resumes where it stopped. A file truncated and rewritten is read again from the\n"
           "start (with a warning).\n"
           "Exit status: 0 when every FILE was imported (or already was); 1 when any FILE is\n"
           "missing, unreadable or could not be imported (named on stderr as\n"
           "'FILE: cannot open: ...'; the other FILEs are still imported); 2 for bad usage.\n";
}

void printReportHelp(QTextStream &out)
{
    out << "usage: throttlescope report [OPTIONS] FILE...|-\n"
           "       throttlescope report --workspace WS.tsws [--json] [--policy NAME|FILE]... "
           "[--fail-on WHAT]\n"
           "       throttlescope report --source URL [--since T] [--pushdown] [--json] ...\n"
           "Replays the requests against the throttle policies and prints what happened.\n"
           "Several FILEs are one timeline: merged by time as they are read (a line up to 5 s\n"
           "behind the newest of its file takes its place; later ones are counted as late).\n"
           "Options:\n"
           "  --json                  the report as JSON (docs/report-json.md), not text\n"
           "  --policy NAME|FILE      a policy file, or a built-in policy by name:\n"
        << helpList(PolicySet::builtinNames())
        << "                          repeatable (default: the built-in policy of each\n"
           "                          event's service)\n"
        << readerOptionsHelp()
        << "  --workspace WS.tsws     report on what a workspace holds instead of FILEs\n"
        << pollSourceHelp()
        << "  --pushdown              ClickHouse: read per-second counts per (service,\n"
           "                          identity, app, tenant, category, method, status,\n"
           "                          errorCode) instead of every row, for large ranges (exact\n"
           "                          for whole-second fixed windows and credits; see the\n"
           "                          manual for the bound elsewhere)\n"
           "  --remaining N           the forecast with N operations left: per identity the\n"
           "                          accepted rate now, when a limit is reached at that rate\n"
           "                          (raised as a limit-ahead alert before the first 429) and\n"
           "                          when the rest is done, at that rate and at the advised pace\n"
           "  --fail-on WHAT          exit 3 when the report has such findings: critical (a\n"
           "                          critical alert), warning (a warning or critical alert),\n"
           "                          throttles (a throttled response); repeatable or\n"
           "                          comma-separated (critical,throttles)\n"
           "  -h, --help              this help\n"
           "Exit status: 0 when a report was produced (a FILE that cannot be read is named on\n"
           "stderr and left out); 1 when nothing could be read; 2 for bad usage; 3 when the\n"
           "report has a finding --fail-on names (the report is printed in full all the same,\n"
           "the findings are named on stderr). On a workspace whose imports did not all\n"
           "finish, the report says so (\"incompleteSources\" in JSON, a warning on stderr).\n";
}

std::optional<PolicySet> policiesFrom(const ReportArguments &parsed)
{
    if (parsed.policies.isEmpty())
        return PolicySet::builtin();
    PolicySet policies;
    for (const QString &policy : parsed.policies) {
        QString error;
        if (!policies.load(policy, &error)) {
            err() << "throttlescope: --policy " << policy << ": " << error << Qt::endl;
            return std::nullopt;
        }
    }
    return policies;
}

// report --remaining N: the report of a dashboard's analysis (it keeps the last minutes of
// each key's traffic) with the forecast at the end of the data: its limit-ahead alerts among
// the report's, and a forecast section (JSON "forecast", docs/report-json.md).
ReportData printReportWithForecast(const DashboardSnapshot &snapshot, qint64 remaining, bool json)
{
    ForecastOptions options;
    options.remaining = remaining;
    const QList<KeyForecast> forecasts = forecast(snapshot, options);
    ReportData report = snapshot.report;
    const qint64 now = report.lastMs.value_or(0);
    ForecastAlerts alerts;
    report.alerts += alerts.raise(forecasts, now);
    if (json) {
        QJsonObject object = QJsonDocument::fromJson(reportToJson(report)).object();
        object.insert(u"forecast"_qs, forecastToJson(forecasts));
        const QByteArray text = QJsonDocument(object).toJson(QJsonDocument::Indented);
        std::fwrite(text.constData(), 1, size_t(text.size()), stdout);
        std::fflush(stdout);
        return report;
    }
    QTextStream out(stdout);
    out << reportToText(report) << u'\n' << forecastText(forecasts, now);
    out.flush();
    return report;
}

// `notes`: what reading the input noticed that the counts do not show (a polled store's rows
// stamped ahead of its clock), one sentence each: "notes" in the JSON, "note:" lines at the end
// of the text's opening paragraph.
void printReport(const ReportData &report, bool json, const QStringList &notes = {})
{
    if (json) {
        // The JSON is UTF-8 already: written as is, not decoded into a QString and encoded
        // again by a QTextStream (three more copies of a report that grows with the alerts).
        QByteArray text = reportToJson(report);
        if (!notes.isEmpty()) {
            QJsonObject object = QJsonDocument::fromJson(text).object();
            object.insert(u"notes"_qs, QJsonArray::fromStringList(notes));
            text = QJsonDocument(object).toJson(QJsonDocument::Indented);
        }
        std::fwrite(text.constData(), 1, size_t(text.size()), stdout);
        std::fflush(stdout);
        return;
    }
    QString text = reportToText(report);
    if (!notes.isEmpty()) {
        const qsizetype paragraphEnd = text.indexOf(u"\n\n"_qs);
        text.insert(paragraphEnd < 0 ? text.size() : paragraphEnd + 1,
                    u"  note: "_qs + notes.join(u"\n  note: "_qs) + u'\n');
    }
    QTextStream out(stdout);
    out << text;
    out.flush();
}

// Where a workspace report's policy came from: "option" (--policy), "workspace" (the policy the
// dashboard saved in it) or "builtin" (neither).
struct PolicySource
{
    QString from;
    QString description;
};

QString policySourceWords(const QString &from)
{
    if (from == u"option")
        return u"--policy"_qs;
    if (from == u"workspace")
        return u"saved in the workspace"_qs;
    return u"built-in: nothing saved in the workspace"_qs;
}

// The policies a workspace report replays with: --policy, else the policy the dashboard saved
// in the workspace, so that a CI gate and the window replay the same workspace alike.
std::optional<PolicySet> workspacePolicies(const ReportArguments &parsed, WorkspaceReader &reader,
                                           PolicySource *source)
{
    if (!parsed.policies.isEmpty()) {
        *source = PolicySource{u"option"_qs, parsed.policies.join(u", "_qs)};
        return policiesFrom(parsed);
    }
    const QString saved =
        reader.setting(QLatin1StringView(Workspace::kPolicySetting)).value_or(QString());
    *source = PolicySource{saved.trimmed().isEmpty() ? u"builtin"_qs : u"workspace"_qs,
                           PolicySet::describeSetting(saved)};
    QString error;
    std::optional<PolicySet> policies = PolicySet::fromSetting(saved, &error);
    if (!policies) {
        err() << parsed.workspace << ": the policy saved in the workspace cannot be used (" << error
              << "): give --policy" << Qt::endl;
    }
    return policies;
}

QString importedSizeText(const IncompleteImport &item)
{
    const QLocale c = QLocale::c();
    if (item.sizeBytes < 0)
        return c.toString(item.committedBytes) + u" bytes";
    return c.toString(item.committedBytes) + u" of " + c.toString(item.sizeBytes) + u" bytes";
}

// The report of a workspace: the report's own keys as they are, plus "incompleteSources" and
// "policySource" (sorted in with them, as the writer sorts its keys); in text, the same at the
// end of the opening paragraph, next to the counts they qualify.
void printWorkspaceReport(const ReportData &report, bool json,
                          const QList<IncompleteImport> &incomplete, const PolicySource &policy)
{
    if (json) {
        QJsonObject object = QJsonDocument::fromJson(reportToJson(report)).object();
        QJsonArray sources;
        for (const IncompleteImport &item : incomplete) {
            sources.append(
                QJsonObject{{u"path"_qs, item.source.path},
                            {u"committedBytes"_qs, item.committedBytes},
                            {u"sizeBytes"_qs, item.sizeBytes >= 0 ? QJsonValue(item.sizeBytes)
                                                                  : QJsonValue(QJsonValue::Null)}});
        }
        object.insert(u"incompleteSources"_qs, sources);
        object.insert(u"policySource"_qs,
                      QJsonObject{{u"from"_qs, policy.from}, {u"policy"_qs, policy.description}});
        const QByteArray text = QJsonDocument(object).toJson(QJsonDocument::Indented);
        std::fwrite(text.constData(), 1, size_t(text.size()), stdout);
        std::fflush(stdout);
        return;
    }
    QString lines = u"  Policy: "_qs + policy.description + u" ("_qs +
                    policySourceWords(policy.from) + u")\n"_qs;
    if (!incomplete.isEmpty()) {
        lines += u"  INCOMPLETE: "_qs + QLocale::c().toString(incomplete.size()) +
                 u" source(s) only partly imported (an import was interrupted or is still "
                 u"running; run import again to finish):\n"_qs;
        for (const IncompleteImport &item : incomplete)
            lines += u"    "_qs + item.source.path + u": "_qs + importedSizeText(item) +
                     u" imported\n"_qs;
    }
    QString text = reportToText(report);
    const qsizetype paragraphEnd = text.indexOf(u"\n\n"_qs);
    text.insert(paragraphEnd < 0 ? text.size() : paragraphEnd + 1, lines);
    QTextStream out(stdout);
    out << text;
    out.flush();
}

// report --workspace: replay what the workspace holds, in time order, through the same Analysis.
int runWorkspaceReport(const ReportArguments &parsed)
{
    if (!parsed.files.isEmpty()) {
        err() << "throttlescope report: give FILEs or --workspace, not both" << Qt::endl;
        return kExitUsage;
    }
    if (!parsed.policies.isEmpty() && !policiesFrom(parsed))
        return kExitUsage;
    if (!QFile::exists(parsed.workspace)) {
        err() << parsed.workspace << ": no such workspace" << Qt::endl;
        return kExitNothingRead;
    }
    WorkspaceReader reader;
    if (!reader.open(parsed.workspace)) {
        err() << parsed.workspace << ": " << reader.errorString() << Qt::endl;
        return kExitNothingRead;
    }
    if (reader.isReadOnly())
        err() << "note: " << parsed.workspace
              << ": on a read-only file system: opened read-only" << Qt::endl;
    PolicySource policySource;
    const std::optional<PolicySet> policies = workspacePolicies(parsed, reader, &policySource);
    if (!policies)
        return kExitNothingRead;
    Analysis analysis(*policies, Analysis::Purpose::ReportOnly);
    const bool ok =
        reader.forEachEventInTimeOrder(8192, [&analysis](const QList<RequestEvent> &chunk) {
            for (const RequestEvent &event : chunk)
                analysis.add(event);
            return true;
        });
    if (!ok) {
        err() << parsed.workspace << ": " << reader.errorString() << Qt::endl;
        return kExitNothingRead;
    }
    const QList<StoredMalformed> samples = reader.malformed(0, 0, Analysis::kMalformedSamples);
    for (StoredMalformed stored : samples)
        analysis.onMalformed(std::move(stored.record));
    analysis.countMalformed(reader.countMalformed() - samples.size());

    // Sources an import did not finish (killed, cancelled, or still running elsewhere): the
    // report covers only what was committed of them, and says so.
    const QList<IncompleteImport> incomplete = incompleteImports(reader.sources(), reader.ledger());
    for (const IncompleteImport &item : incomplete) {
        err() << "warning: " << parsed.workspace << ": " << item.source.path
              << ": import incomplete (" << importedSizeText(item)
              << " imported; interrupted or still running): run import again to finish it"
              << Qt::endl;
    }
    const ReportData report = analysis.report();
    printWorkspaceReport(report, parsed.json, incomplete, policySource);
    return exitStatusFor(report, parsed.failOn);
}

// import --workspace WS FILE...: each file exactly once; an interrupted import resumes.
int runImport(const QStringList &args)
{
    ReportArguments parsed;
    if (!parseArguments(args, parsed))
        return kExitUsage;
    if (parsed.help) {
        QTextStream out(stdout);
        printImportHelp(out);
        return kExitOk;
    }
    if (parsed.workspace.isEmpty() || parsed.files.isEmpty()) {
        err() << "throttlescope import: usage: import --workspace WS.tsws FILE..." << Qt::endl;
        return kExitUsage;
    }
    if (parsed.failOn.any()) {
        err() << "throttlescope import: --fail-on is an option of report" << Qt::endl;
        return kExitUsage;
    }
    Workspace workspace;
    if (!workspace.open(parsed.workspace)) {
        err() << parsed.workspace << ": " << workspace.errorString() << Qt::endl;
        return kExitNothingRead;
    }
    WorkspaceWriter writer;
    if (!writer.start(parsed.workspace)) {
        err() << parsed.workspace << ": " << writer.errorString() << Qt::endl;
        return kExitNothingRead;
    }
    int imported = 0;
    // Inputs missing, unreadable or failed: each one makes the exit status 1, but the others
    // are still imported.
    int failedInputs = 0;
    QList<qint64> sourcesWithMalformed;
    QLocale c = QLocale::c();
    for (const QString &path : std::as_const(parsed.files)) {
        const QString name = sourceDisplayName(path);
        // Detection needs the first bytes; importFile opens the file itself (and seeks to resume).
        QFile probe;
        const bool opened =
            path == u"-" ? true : (probe.setFileName(path), probe.open(QIODevice::ReadOnly));
        if (!opened) {
            err() << name << ": cannot open: " << probe.errorString() << Qt::endl;
            ++failedInputs;
            continue;
        }
        QString error;
        std::unique_ptr<LogReader> logReader = readerFor(probe, name, parsed.source, &error);
        probe.close();
        if (!logReader) {
            err() << error << Qt::endl;
            ++failedInputs;
            continue;
        }
        ImportOptions options;
        QElapsedTimer sinceProgress;
        sinceProgress.start();
        options.progress = [&](qint64 done, qint64 total) {
            if (sinceProgress.elapsed() < 500)
                return;
            sinceProgress.restart();
            if (total > 0)
                err() << name << ": " << (done * 100 / total) << "% (" << c.toString(done / 1000000)
                      << " of " << c.toString(total / 1000000) << " MB)" << Qt::endl;
            else
                err() << name << ": " << c.toString(done / 1000000) << " MB read" << Qt::endl;
        };
        const ImportResult result = importFile(workspace, writer, path, *logReader, options);
        if (!result.ok()) {
            err() << name << ": " << importStatusName(result.status) << ": " << result.error
                  << Qt::endl;
            ++failedInputs;
            continue;
        }
        ++imported;
        if (result.contentReplaced()) {
            err() << "warning: " << name
                  << ": not the content imported from this path before (truncated and "
                     "rewritten, or replaced; "
                  << c.toString(result.replacedCommittedBytes)
                  << " bytes of it had been imported): read from the start as new content"
                  << Qt::endl;
        }
        if (result.status == ImportResult::Status::AlreadyImported) {
            if (result.earlierCopy)
                err() << name << ": an earlier copy of " << result.continuesPath
                      << ", imported further already: nothing added" << Qt::endl;
            else if (!result.continuesPath.isEmpty())
                err() << name << ": already imported as " << result.continuesPath
                      << ", nothing added" << Qt::endl;
            else
                err() << name << ": already imported, nothing added" << Qt::endl;
            continue;
        }
        if (result.malformedAdded > 0)
            sourcesWithMalformed << result.sourceId;
        err() << name << ": " << c.toString(result.eventsAdded) << " events, "
              << c.toString(result.malformedAdded) << " malformed records added";
        if (!result.continuesPath.isEmpty())
            err() << " (the content of " << result.continuesPath << ", renamed or copied)";
        if (result.resumed)
            err() << " (resumed after line " << c.toString(result.resumedFromLine) << ")";
        if (result.status == ImportResult::Status::Superseded)
            err() << "; another import of the same file took it over and adds the rest";
        err() << Qt::endl;
        if (result.heldBytes > 0) {
            err() << name << ": the last line (" << c.toString(result.heldBytes)
                  << " bytes, no newline) is incomplete, probably still being written: left for "
                     "the next import"
                  << Qt::endl;
        }
    }
    if (!writer.finish()) {
        err() << parsed.workspace << ": " << writer.errorString() << Qt::endl;
        return kExitNothingRead;
    }
    // The malformed records of the sources this run added to, as FILE:LINE: reason (the first
    // 20; all are stored and counted).
    WorkspaceReader reader;
    if (!sourcesWithMalformed.isEmpty() && reader.open(parsed.workspace)) {
        int printed = 0;
        for (qint64 sourceId : std::as_const(sourcesWithMalformed)) {
            const int room = Analysis::kMalformedSamples - printed;
            if (room <= 0)
                break;
            for (const StoredMalformed &stored : reader.malformed(sourceId, 0, room)) {
                err() << stored.record.toString() << Qt::endl;
                ++printed;
            }
        }
    }
    if (failedInputs > 0)
        return kExitInputFailed;
    return imported > 0 ? kExitOk : kExitNothingRead;
}

int runReport(const QStringList &args)
{
    ReportArguments parsed;
    if (!parseArguments(args, parsed))
        return kExitUsage;
    if (parsed.help) {
        QTextStream out(stdout);
        printReportHelp(out);
        return kExitOk;
    }
    if (!parsed.workspace.isEmpty())
        return runWorkspaceReport(parsed);
    if (!parsed.pollSource.isEmpty()) {
        if (!parsed.files.isEmpty()) {
            err() << "throttlescope report: give FILEs or --source, not both" << Qt::endl;
            return kExitUsage;
        }
        auto policies = policiesFrom(parsed);
        if (!policies)
            return kExitUsage;
        auto analysis =
            std::make_unique<Analysis>(std::move(*policies), Analysis::Purpose::ReportOnly);
        QStringList notes;
        {
            MalformedPrinter printer(*analysis);
            qint64 rows = 0;
            QString error;
            if (!readPolledSource(parsed.pollSource, parsed.sinceMs.value_or(0), parsed.pushDown,
                                  printer, &rows, &error, &notes)) {
                err() << error << Qt::endl;
                return kExitNothingRead;
            }
        }
        const ReportData report = analysis->report();
        std::jthread release([doomed = std::move(analysis)]() mutable { doomed.reset(); });
        printReport(report, parsed.json, notes);
        release.join();
        return exitStatusFor(report, parsed.failOn);
    }
    if (parsed.files.isEmpty()) {
        err() << "throttlescope report: give at least one FILE (or - for standard input), or "
                 "--workspace WS"
              << Qt::endl;
        return kExitUsage;
    }
    auto policies = policiesFrom(parsed);
    if (!policies)
        return kExitUsage;
    // The forecast reads each key's recent traffic, which only a dashboard's analysis keeps.
    const Analysis::Purpose purpose =
        parsed.remaining ? Analysis::Purpose::Dashboard : Analysis::Purpose::ReportOnly;
    auto analysis = std::make_unique<Analysis>(*policies, purpose);
    {
        MalformedPrinter printer(*analysis);
        // One timeline: the files are merged by time as they are read (timemerge.h), so two
        // clients' logs of the same hour give the report of their events in time order. Files
        // read whole are replayed in exact time order: one with a line later than the merge's
        // window is read again, sorted (sortedread.h), into a fresh analysis.
        MergeOptions merge;
        merge.stopAtFirstLate = canReadAgain(parsed.files);
        MergeResult merged = readSourcesMerged(parsed.files, printer, parsed.source, merge);
        if (merged.stoppedAtLate) {
            analysis = std::make_unique<Analysis>(*policies, purpose);
            printer.readAgainInto(*analysis);
            merged = readSourcesSorted(parsed.files, printer, parsed.source);
        }
        int readable = 0;
        for (const SourceOutcome &outcome : merged.outcomes) {
            if (!outcome.readable()) {
                err() << outcome.result.fatalError << Qt::endl;
                continue;
            }
            ++readable;
        }
        if (readable == 0)
            return kExitNothingRead;
    }
    if (parsed.remaining) {
        const ReportData report =
            printReportWithForecast(analysis->snapshot(), *parsed.remaining, parsed.json);
        return exitStatusFor(report, parsed.failOn);
    }
    const ReportData report = analysis->report();
    // The analysis (engine windows, detector state: tens of thousands of tracked operations on
    // a long log) takes milliseconds to free, and nothing waits for it but the exit: it is freed
    // on another core while this one formats and prints the report.
    std::jthread release([doomed = std::move(analysis)]() mutable { doomed.reset(); });
    printReport(report, parsed.json);
    release.join();
    return exitStatusFor(report, parsed.failOn);
}

} // namespace

bool isHeadlessInvocation(int argc, char *argv[])
{
    if (argc < 2)
        return false;
    for (const char *command : {"report", "import", "tail", "serve", "simulate", "poll", "whatif",
                                "--version", "-v", "--help", "-h"}) {
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
        out << "build: " << THROTTLESCOPE_BUILD_FLAVOR << Qt::endl;
        out << "allocator: " << allocatorDescription() << Qt::endl;
        return kExitOk;
    }
    if (command == u"--help" || command == u"-h") {
        printUsage(out);
        return kExitOk;
    }
    if (command == u"report")
        return runReport(rest);
    if (command == u"import")
        return runImport(rest);
    if (command == u"tail")
        return runTail(rest);
    if (command == u"serve")
        return runServe(rest);
    if (command == u"simulate")
        return runSimulate(rest);
    if (command == u"poll")
        return runPoll(rest);
    if (command == u"whatif")
        return runWhatIf(rest);
    printUsage(err());
    return kExitUsage;
}

} // namespace ts::app
