// libFuzzer harness for the whole analysis, as `throttlescope report` runs it: bytes -> the
// reader detectFormat() picks (NDJSON when nothing fits) -> Analysis (throttle engine with the
// built-in policies, breakers, alert detectors) -> the report as JSON and as text. Extreme but
// accepted values (times near 1970 or 9999, 30-day durations, huge attempts and retry advice)
// must not overflow anywhere on the way (UBSan) nor crash.
#include "engine/analysis.h"
#include "engine/reportformat.h"
#include "ingest/formatdetect.h"

#include "fuzzcommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    QByteArray bytes(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    QString format = ts::detectFormat(bytes);
    if (format.isEmpty())
        format = QStringLiteral("ndjson");
    const auto reader = ts::createReader(format);
    if (!reader)
        std::abort();
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::ReadOnly);
    static const ts::PolicySet policies = ts::PolicySet::builtin();
    ts::Analysis analysis(policies, ts::Analysis::Purpose::ReportOnly);
    const ts::ReadResult result =
        reader->read(buffer, QStringLiteral("fuzz-input"), analysis, ts::ReadControl{});
    const ts::ReportData report = analysis.report();
    // The report counts requests (not breaker transitions, annotations or $batch envelopes).
    if (report.events > result.events || report.malformed != result.malformed)
        std::abort();
    const QByteArray json = ts::reportToJson(report);
    const QString text = ts::reportToText(report);
    if (json.isEmpty() || text.isEmpty())
        std::abort();
    return 0;
}
