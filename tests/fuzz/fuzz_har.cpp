// libFuzzer harness for HarReader: any bytes must read without crashing, leaking or emitting a
// secret (see fuzzcommon.h).
#include "ingest/harreader.h"

#include "fuzzcommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ts::HarReader reader;
    ts::fuzz::runReader(reader, data, size);
    return 0;
}
