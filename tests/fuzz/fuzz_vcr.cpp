// libFuzzer harness for VcrReader (the YAML subset of vcrpy cassettes).
#include "ingest/vcrreader.h"

#include "fuzzcommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ts::VcrReader reader;
    ts::fuzz::runReader(reader, data, size);
    return 0;
}
