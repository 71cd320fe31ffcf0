// libFuzzer harness for the inflater (live/inflate.h) the listener's request bodies and the
// poller's answers go through. The whole-body and the streaming inflater (fed in two pieces cut
// where the input chooses) must agree: same status, same bytes, never more than the bound; and
// what gzipCompress makes of the input inflates back to it.
#include "live/inflate.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    constexpr qint64 kMaxOutput = 1 << 20;
    const QByteArray input(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    QByteArray whole;
    QString error;
    const ts::live::InflateStatus status = ts::live::inflateBody(input, kMaxOutput, &whole, &error);
    if (whole.size() > kMaxOutput)
        std::abort();

    ts::live::StreamInflater stream;
    QByteArray streamed;
    const auto collect = [&](QByteArrayView piece) {
        streamed.append(piece);
        return streamed.size() <= kMaxOutput;
    };
    const qsizetype cut = size == 0 ? 0 : qsizetype(data[size - 1]) * qsizetype(size) / 256;
    const bool fed = stream.feed(QByteArrayView(input).first(cut), collect) &&
                     stream.feed(QByteArrayView(input).sliced(cut), collect);
    if (status == ts::live::InflateStatus::Ok) {
        if (!fed || !stream.complete() || streamed != whole)
            std::abort(); // what one accepts whole, the other accepts in pieces, the same
    } else if (status == ts::live::InflateStatus::Corrupt && error.isEmpty()) {
        std::abort();
    }

    if (size <= 65536) {
        QByteArray back;
        if (ts::live::inflateBody(ts::live::gzipCompress(input), kMaxOutput, &back, &error) !=
                ts::live::InflateStatus::Ok ||
            back != input)
            std::abort();
    }
    return 0;
}
