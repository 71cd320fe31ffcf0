// libFuzzer harness for OtlpReader: any bytes must read without crashing, leaking or emitting a
// secret (see fuzzcommon.h).
#include "ingest/otlpreader.h"

#include "fuzzcommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ts::OtlpReader reader;
    ts::fuzz::runReader(reader, data, size);
    return 0;
}
