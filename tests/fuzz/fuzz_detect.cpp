// libFuzzer harness for format detection and the reader factory: whatever detectFormat names,
// the reader it creates must read the same bytes safely.
#include "ingest/formatdetect.h"

#include "fuzzcommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray head(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const QString format = ts::detectFormat(head);
    if (format.isEmpty())
        return 0;
    if (!ts::knownFormats().contains(format))
        std::abort();
    const auto reader = ts::createReader(format);
    if (!reader)
        std::abort();
    ts::fuzz::runReader(*reader, data, size);
    return 0;
}
