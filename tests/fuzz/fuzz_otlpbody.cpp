// libFuzzer harness for parseOtlpJson, the function the live listener calls on POST bodies.
#include "ingest/otlpreader.h"

#include "fuzzcommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray body(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    ts::fuzz::TouchingSink sink;
    QString error;
    if (!ts::parseOtlpJson(body, QStringLiteral("http"), sink, &error) && error.isEmpty())
        std::abort(); // a rejected body must say why
    return 0;
}
