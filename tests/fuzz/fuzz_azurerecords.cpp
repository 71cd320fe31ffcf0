// libFuzzer harness for AzureRecordsReader: any bytes must read without crashing, leaking or
// emitting a secret (see fuzzcommon.h).
#include "ingest/azurerecordsreader.h"

#include "fuzzcommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ts::AzureRecordsReader reader;
    ts::fuzz::runReader(reader, data, size);
    return 0;
}
