#include "whatifcommand.h"

#include "ingest/sourcereader.h"
#include "ingest/timemerge.h"
#include "live/ndjsonformat.h"
#include "policy/policy.h"
#include "whatif/behaviour.h"
#include "whatif/clientsettings.h"
#include "whatif/pacesweep.h"
#include "whatif/simulation.h"
#include "whatif/whatifformat.h"
#include "whatif/workload.h"

#include <QFile>
#include <QLocale>
#include <QTextStream>

#include <cstdio>
#include <functional>
#include <map>

namespace ts::app {

namespace {

using whatif::Behaviour;

constexpr int kExitOk = 0;
constexpr int kExitNothingRead = 1;
constexpr int kExitUsage = 2;

QTextStream &err()
{
    static QTextStream stream(stderr);
    return stream;
}

struct WhatIfArguments
{
    bool help = false;
    bool json = false;
    QStringList policies;
    SourceOptions source;
    QString out;
    Behaviour behaviour;
    QStringList files;
    bool sweep = false; // --sweep pace
    whatif::SweepOptions sweepOptions;
    std::optional<whatif::ClientKind> emitClient; // --emit polly|resilience4j|azure-sdk
};

bool parseCount(const QString &option, const QString &text, int minimum, int *value)
{
    bool ok = false;
    const int parsed = text.toInt(&ok);
    if (!ok || parsed < minimum || parsed > 1'000'000) {
        err() << "throttlescope whatif: " << option << " takes a whole number >= " << minimum
              << ", not \"" << text << "\"" << Qt::endl;
        return false;
    }
    *value = parsed;
    return true;
}

// Options that take a value: each stores it (or says why it cannot) and returns false on error.
using ValueOption = std::function<bool(const QString &option, const QString &value)>;

std::map<QString, ValueOption> valueOptions(WhatIfArguments &parsed)
{
    auto fail = [](const QString &error) {
        err() << "throttlescope whatif: " << error << Qt::endl;
        return false;
    };
    Behaviour &b = parsed.behaviour;
    return {
        {u"--policy"_qs,
         [&parsed](const QString &, const QString &v) {
             parsed.policies << v;
             return true;
         }},
        {u"--format"_qs,
         [&parsed](const QString &, const QString &v) {
             parsed.source.format = v;
             return true;
         }},
        {u"--map"_qs,
         [&parsed](const QString &, const QString &v) {
             parsed.source.csvMapping = v;
             return true;
         }},
        {u"--log-format"_qs,
         [&parsed](const QString &, const QString &v) {
             parsed.source.accessLogFormat = v;
             return true;
         }},
        {u"--out"_qs,
         [&parsed](const QString &, const QString &v) {
             parsed.out = v;
             return true;
         }},
        {u"--pace"_qs,
         [&b, fail](const QString &, const QString &v) {
             QString error;
             b.pacePerSecond = whatif::parsePace(v, &error);
             return b.pacePerSecond ? true : fail(error);
         }},
        {u"--concurrency"_qs,
         [&b](const QString &o, const QString &v) { return parseCount(o, v, 1, &b.concurrency); }},
        {u"--retries"_qs,
         [&b](const QString &o, const QString &v) { return parseCount(o, v, 0, &b.retries); }},
        {u"--backoff"_qs,
         [&b, fail](const QString &, const QString &v) {
             QString error;
             const auto backoff = whatif::Backoff::parse(v, &error);
             if (backoff)
                 b.backoff = *backoff;
             return backoff ? true : fail(error);
         }},
        {u"--jitter"_qs,
         [&b, fail](const QString &o, const QString &v) {
             bool ok = false;
             const quint64 seed = v.toULongLong(&ok);
             if (ok)
                 b.jitterSeed = seed;
             return ok ? true
                       : fail(o + u" takes a seed (a whole number), not \""_qs + v + u"\""_qs);
         }},
        {u"--breaker"_qs,
         [&b, fail](const QString &, const QString &v) {
             QString error;
             b.breaker = whatif::parseBreaker(v, &error);
             return b.breaker ? true : fail(error);
         }},
        {u"--emit"_qs,
         [&parsed, fail](const QString &o, const QString &v) {
             parsed.emitClient = whatif::clientKindFromName(v);
             return parsed.emitClient
                        ? true
                        : fail(o + u" takes "_qs + whatif::clientKindNames().join(u", "_qs) +
                               u", not \""_qs + v + u"\""_qs);
         }},
        {u"--sweep"_qs,
         [&parsed, fail](const QString &o, const QString &v) {
             parsed.sweep = v == u"pace";
             return parsed.sweep ? true
                                 : fail(o + u" takes pace (the one sweep there is), not \""_qs + v +
                                        u"\""_qs);
         }},
        {u"--max-429"_qs,
         [&parsed, fail](const QString &o, const QString &v) {
             bool ok = false;
             const double percent = v.endsWith(u'%') ? v.chopped(1).toDouble(&ok) : v.toDouble(&ok);
             ok = ok && percent >= 0 && percent < 100;
             if (ok)
                 parsed.sweepOptions.max429Percent = percent;
             return ok ? true
                       : fail(o + u" takes a percentage in [0, 100), not \""_qs + v + u"\""_qs);
         }},
        {u"--background-cap"_qs,
         [&b, fail](const QString &o, const QString &v) {
             bool ok = false;
             const double percent = v.endsWith(u'%') ? v.chopped(1).toDouble(&ok) : v.toDouble(&ok);
             if (ok && percent > 0 && percent <= 100)
                 b.backgroundCapPercent = percent;
             return b.backgroundCapPercent
                        ? true
                        : fail(o + u" takes a percentage in (0, 100], not \""_qs + v + u"\""_qs);
         }},
    };
}

bool parseWhatIfArguments(const QStringList &args, WhatIfArguments &parsed)
{
    const std::map<QString, ValueOption> options = valueOptions(parsed);
    for (qsizetype i = 0; i < args.size(); ++i) {
        const QString &arg = args[i];
        if (arg == u"--help" || arg == u"-h") {
            parsed.help = true;
        } else if (arg == u"--json") {
            parsed.json = true;
        } else if (arg == u"--obey-retry-after") {
            parsed.behaviour.obeyRetryAfter = true;
        } else if (const auto it = options.find(arg); it != options.end()) {
            if (i + 1 >= args.size()) {
                err() << "throttlescope whatif: " << arg << " needs a value" << Qt::endl;
                return false;
            }
            if (!it->second(arg, args[++i]))
                return false;
        } else if (arg.startsWith(u"--") || (arg.startsWith(u'-') && arg != u"-")) {
            err() << "throttlescope whatif: unknown option " << arg << Qt::endl;
            return false;
        } else {
            parsed.files << arg;
        }
    }
    return true;
}

void printWhatIfHelp(QTextStream &out)
{
    out << "usage: throttlescope whatif [OPTIONS] FILE...|-\n"
           "Replays the log's own work under another client behaviour: per identity, each\n"
           "operation in its order (retries are not new work), sent by a simulated client and\n"
           "answered by the policy's limits as the report's replay decides; prints the log's\n"
           "run beside the simulated one (docs/whatif.md).\n"
           "Options:\n"
           "  --policy NAME|FILE      the limits (as for report; repeatable)\n"
           "  --pace R/s|R/min        each identity sends at most R requests per second or\n"
           "                          minute, retries included (default: unpaced)\n"
           "  --concurrency N         operations in flight per identity (default: the\n"
           "                          identity's peak in the log)\n"
           "  --obey-retry-after      wait for a 429's Retry-After before sending anything\n"
           "                          more, and retry then\n"
           "  --retries N             retries of a refused operation before it is lost\n"
           "                          (default 3)\n"
           "  --backoff SPEC          exp:BASE[:CAP] or fixed:S, in seconds (default fixed:2)\n"
           "  --jitter SEED           jitter the backoff (x0.75 to x1.25), seeded\n"
           "  --breaker MODEL         a client-side circuit breaker: polly-v8, resilience4j or a\n"
           "                          JSON file (docs/policy.md, \"breaker\")\n"
           "  --background-cap PCT    the background lane's share of the sends while\n"
           "                          foreground work waits\n"
           "  --json                  the comparison as JSON\n"
           "  --out FILE              the simulated sends as canonical NDJSON, their status the\n"
           "                          predicted answer: report replays it to the same throttles\n"
           "  --sweep pace            search, per identity, the fastest pace whose run gets at\n"
           "                          most --max-429 PCT % of its requests refused (default 0),\n"
           "                          printing each step's finish time\n"
           "  --max-429 PCT           the share of 429s the sweep accepts\n"
           "  --emit CLIENT           print settings to copy instead of the comparison: polly\n"
           "                          (Polly v8, C#), resilience4j (YAML) or azure-sdk (.NET\n"
           "                          retry options), with the pace the limits allow (or\n"
           "                          --pace) and this behaviour's retries, backoff, breaker\n"
           "  --format FORMAT         the input format (as for report; also --map, --log-format)\n"
           "  -h, --help              this help\n"
           "Exit status: 0 done; 1 nothing could be read, or --out could not be written;\n"
           "2 for bad usage.\n";
}

// The simulated sends as canonical NDJSON, written in large blocks.
class SendLog
{
public:
    bool open(const QString &path)
    {
        m_file.setFileName(path);
        return m_file.open(QIODevice::WriteOnly | QIODevice::Truncate);
    }
    void write(const RequestEvent &event)
    {
        live::appendNdjsonLine(event, m_buffer);
        if (m_buffer.size() >= 1 << 20)
            flush();
    }
    bool finish()
    {
        flush();
        m_file.close();
        return m_ok;
    }
    [[nodiscard]] QString errorString() const { return m_file.errorString(); }

private:
    void flush()
    {
        m_ok = m_ok && m_file.write(m_buffer) == m_buffer.size();
        m_buffer.clear();
    }
    QFile m_file;
    QByteArray m_buffer;
    bool m_ok = true;
};

// The files' work, merged by time as report reads them. nullopt when nothing could be read.
std::optional<whatif::Workload> readWorkload(const WhatIfArguments &parsed)
{
    whatif::WorkloadBuilder builder;
    const MergeResult merged = readSourcesMerged(parsed.files, builder, parsed.source);
    int readable = 0;
    for (const SourceOutcome &outcome : merged.outcomes) {
        if (outcome.readable())
            ++readable;
        else
            err() << outcome.result.fatalError << Qt::endl;
    }
    if (readable == 0)
        return std::nullopt;
    whatif::Workload work = builder.finish();
    for (const MalformedRecord &record : std::as_const(work.malformedSamples))
        err() << record.toString() << Qt::endl;
    if (work.malformed > work.malformedSamples.size())
        err() << "(" << QLocale::c().toString(work.malformed)
              << " malformed records in all; the first are named above)" << Qt::endl;
    return work;
}

// whatif --sweep pace: the steps as they are simulated, then the answer per identity.
int runSweep(const WhatIfArguments &parsed, const whatif::Workload &work, const PolicySet &policies)
{
    QTextStream out(stdout);
    const auto onStep = [&](const whatif::SweepStep &step) {
        if (!parsed.json) {
            out << whatif::sweepStepToText(step, work);
            out.flush();
        }
    };
    if (!parsed.json)
        out << "pace sweep: per identity, the fastest pace with at most "
            << parsed.sweepOptions.max429Percent << " % 429s ("
            << parsed.behaviour.describe().section(u", "_qs, 1) << ")\n";
    const whatif::SweepResult sweep =
        whatif::sweepPace(work, policies, parsed.behaviour, parsed.sweepOptions, onStep);
    if (parsed.json) {
        const QByteArray text = whatif::sweepToJson(sweep, work);
        std::fwrite(text.constData(), 1, size_t(text.size()), stdout);
        std::fflush(stdout);
    } else {
        out << "\n" << whatif::sweepToText(sweep);
        out.flush();
    }
    return kExitOk;
}

// Usage errors of options that do not go together; empty when none.
QString conflictingOptions(const WhatIfArguments &parsed)
{
    if (parsed.files.isEmpty())
        return u"give at least one FILE (or - for standard input)"_qs;
    if (parsed.sweep && parsed.behaviour.pacePerSecond)
        return u"--sweep pace searches the pace: give no --pace"_qs;
    if (parsed.sweep && parsed.emitClient)
        return u"--emit prints the settings of one behaviour: give it without --sweep"_qs;
    if (parsed.sweep && !parsed.out.isEmpty())
        return u"--sweep pace simulates many runs: --out writes one, give it without --sweep"_qs;
    return {};
}

} // namespace

int runWhatIf(const QStringList &args)
{
    WhatIfArguments parsed;
    if (!parseWhatIfArguments(args, parsed))
        return kExitUsage;
    QTextStream out(stdout);
    if (parsed.help) {
        printWhatIfHelp(out);
        return kExitOk;
    }
    if (const QString conflict = conflictingOptions(parsed); !conflict.isEmpty()) {
        err() << "throttlescope whatif: " << conflict << Qt::endl;
        return kExitUsage;
    }
    PolicySet policies = parsed.policies.isEmpty() ? PolicySet::builtin() : PolicySet();
    for (const QString &policy : std::as_const(parsed.policies)) {
        QString error;
        if (!policies.load(policy, &error)) {
            err() << "throttlescope: --policy " << policy << ": " << error << Qt::endl;
            return kExitUsage;
        }
    }
    const std::optional<whatif::Workload> work = readWorkload(parsed);
    if (!work)
        return kExitNothingRead;
    if (parsed.sweep)
        return runSweep(parsed, *work, policies);
    SendLog sends;
    if (!parsed.out.isEmpty() && !sends.open(parsed.out)) {
        err() << parsed.out << ": " << sends.errorString() << Qt::endl;
        return kExitNothingRead;
    }
    whatif::Simulation simulation(*work, policies, parsed.behaviour);
    if (!parsed.out.isEmpty())
        simulation.setSendObserver([&sends](const RequestEvent &event) { sends.write(event); });
    const whatif::SimulationResult result = simulation.run();
    if (!parsed.out.isEmpty() && !sends.finish()) {
        err() << parsed.out << ": " << sends.errorString() << Qt::endl;
        return kExitNothingRead;
    }
    if (parsed.emitClient) {
        QStringList identities;
        for (const whatif::IdentityWork &identity : work->identities)
            identities << identity.identity;
        out << whatif::clientSettings(*parsed.emitClient, identities, result.advice,
                                      parsed.behaviour);
        out.flush();
        return kExitOk;
    }
    if (parsed.json) {
        const QByteArray text = whatif::resultToJson(result);
        std::fwrite(text.constData(), 1, size_t(text.size()), stdout);
        std::fflush(stdout);
    } else {
        out << whatif::resultToText(result);
        out.flush();
    }
    return kExitOk;
}

} // namespace ts::app
