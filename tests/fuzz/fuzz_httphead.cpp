// libFuzzer harness for the listener's HTTP request head parser (live/httpconnection.h:
// parseRequestHead, parseFraming): the first bytes any client on the network sends. Invariants:
// a refusal is a 4xx/5xx with a message; an accepted head has a method, a path starting with
// '/', and a framing that is either chunked or a non-negative length, never both.
#include "live/httpconnection.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray head(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    ts::live::HttpRequest request;
    std::optional<ts::live::HeadError> error = ts::live::parseRequestHead(head, &request);
    if (!error)
        error = ts::live::parseFraming(&request);
    if (error) {
        if (error->status < 400 || error->status > 599 || error->message.isEmpty())
            std::abort();
        return 0;
    }
    if (request.method.isEmpty() || !request.path.startsWith('/'))
        std::abort();
    if (request.chunked && request.contentLength >= 0)
        std::abort();
    if (request.contentLength < -1)
        std::abort();
    for (const auto &[name, value] : std::as_const(request.headers)) {
        if (name.isEmpty() || name.contains(':') || value.contains('\n'))
            std::abort();
    }
    return 0;
}
