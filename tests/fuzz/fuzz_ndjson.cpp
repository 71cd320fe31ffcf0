// libFuzzer harness for NdjsonReader, the canonical format: every field of every line (numbers
// of any size, times, headers, types), through the whole read path (line splitting, the
// parallel parse of large inputs, malformed records). Every emitted event must lie within the
// ranges of core/valuelimits.h, and every non-blank line must be an event or a malformed record.
#include "core/valuelimits.h"
#include "ingest/ndjsonreader.h"

#include "fuzzcommon.h"

#include <algorithm>

namespace {

class CheckingSink final : public ts::IngestSink
{
public:
    void onEvent(ts::RequestEvent &&event) override
    {
        if (!ts::limits::eventValueProblem(event).isEmpty())
            std::abort(); // an extreme value got through the reader
        ++events;
        m_touch.onEvent(std::move(event));
    }
    void onMalformed(ts::MalformedRecord &&record) override
    {
        if (record.line < 1)
            std::abort(); // a malformed record must name its line
        ++malformed;
        m_touch.onMalformed(std::move(record));
    }
    qint64 events = 0;
    qint64 malformed = 0;

private:
    ts::fuzz::TouchingSink m_touch;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    QByteArray bytes(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::ReadOnly);
    ts::NdjsonReader reader;
    CheckingSink sink;
    const ts::ReadResult result =
        reader.read(buffer, QStringLiteral("fuzz-input"), sink, ts::ReadControl{});
    if (result.events != sink.events || result.malformed != sink.malformed)
        std::abort();
    // Every line that is not blank (only spaces and tabs, and a final '\r') is one record: an
    // event or a malformed one.
    qint64 records = 0;
    for (QByteArray line : bytes.split('\n')) {
        if (line.endsWith('\r'))
            line.chop(1);
        if (std::any_of(line.cbegin(), line.cend(), [](char c) { return c != ' ' && c != '\t'; }))
            ++records;
    }
    if (result.events + result.malformed != records)
        std::abort();
    return 0;
}
