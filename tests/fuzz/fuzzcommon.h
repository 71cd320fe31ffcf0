#pragma once
// Shared by the libFuzzer harnesses: run one reader over the fuzzer's bytes and touch everything
// it emits, so AddressSanitizer sees any dangling or out-of-bounds string.

#include "ingest/ingest.h"

#include <QBuffer>
#include <QByteArray>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace ts::fuzz {

class TouchingSink final : public IngestSink
{
public:
    void onEvent(RequestEvent &&event) override
    {
        m_checksum += event.url.size() + event.method.size() + event.body.size() +
                      event.identity.size() + event.extraJson.size() + event.headers.items().size();
        // Readers must never emit a bearer token (redaction runs on every event).
        if (event.url.contains(u"Bearer eyJ") || event.body.contains(u"Bearer eyJ"))
            std::abort();
    }
    void onMalformed(MalformedRecord &&record) override { m_checksum += record.reason.size(); }
    [[nodiscard]] qsizetype checksum() const { return m_checksum; }

private:
    qsizetype m_checksum = 0;
};

inline ReadResult runReader(LogReader &reader, const uint8_t *data, size_t size)
{
    QByteArray bytes(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::ReadOnly);
    TouchingSink sink;
    const ReadResult result = reader.read(buffer, QStringLiteral("fuzz-input"), sink, {});
    // Counts must agree with what was emitted and never go negative.
    if (result.events < 0 || result.malformed < 0 || result.bytesRead > qint64(size))
        std::abort();
    return result;
}

} // namespace ts::fuzz
