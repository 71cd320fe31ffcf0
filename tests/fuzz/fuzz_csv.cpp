// libFuzzer harness for CsvReader: automatic column recognition, and an explicit mapping taken
// from the first input line (so CsvMapping::fromString is fuzzed too).
#include "ingest/csvreader.h"

#include "fuzzcommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ts::CsvReader automatic;
    ts::fuzz::runReader(automatic, data, size);

    const auto *end = static_cast<const uint8_t *>(std::memchr(data, '\n', size));
    if (end) {
        const QString spec = QString::fromUtf8(reinterpret_cast<const char *>(data), end - data);
        if (const auto mapping = ts::CsvMapping::fromString(spec)) {
            if (ts::CsvMapping::fromString(mapping->toString()) != mapping)
                std::abort(); // toString/fromString must round-trip
            ts::CsvReader mapped(*mapping);
            const size_t skip = static_cast<size_t>(end - data) + 1;
            ts::fuzz::runReader(mapped, data + skip, size - skip);
        }
    }
    return 0;
}
