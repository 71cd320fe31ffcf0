#pragma once
// One HTTP exchange with a polled store, as the poller needs it to be:
//   - the answer's body is handed on in pieces as it arrives (decompressed when the store
//     gzips it), never held whole here, and refused past a size cap, so memory is bounded by
//     what the consumer keeps;
//   - an answer is complete or it is an error: a connection reset, a transfer that stops, a
//     compressed stream that ends early are cut-off answers (FetchProblem::CutOff), even after
//     a 200 status line (Qt reports those with the status of the head they followed);
//   - a total deadline per answer, not only an idle timeout: a store sending a byte every few
//     seconds does not hold the poller;
//   - redirects are followed only within the same origin (scheme, host, port), where the
//     credentials were meant to go; a redirect to another origin is not followed at all.
//
// Synchronous: fetch() runs a local event loop; use it on the thread that made the fetcher.

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QPair>
#include <QString>
#include <QUrl>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

class QNetworkAccessManager;

namespace ts::poll {

struct FetchLimits
{
    qint64 maxAnswerBytes = 64LL * 1024 * 1024; // decompressed body
    int deadlineMs = 60'000;                    // the whole answer, from the request on
    int idleTimeoutMs = 30'000;                 // no byte for this long
    int maxRedirects = 5;                       // same-origin ones
};

enum class FetchProblem {
    None,
    Network,     // no answer (refused, reset before the status line, DNS, TLS)
    CutOff,      // an answer that stopped before its end
    Deadline,    // not complete within FetchLimits::deadlineMs
    TooLarge,    // more than FetchLimits::maxAnswerBytes
    OtherOrigin, // redirected to another origin: not followed
    Refused,     // the body consumer stopped reading (its reason in error)
    Cancelled,
};

struct FetchResult
{
    int status = 0; // of the final answer; 0 when there was none
    FetchProblem problem = FetchProblem::None;
    QString error;         // what went wrong, for health().lastError
    QByteArray retryAfter; // the store's Retry-After
    QByteArray errorBody;  // a non-2xx answer's body (its first 64 KiB), for the message
    std::optional<qint64> storeDateMs; // the answer's Date header: the store's clock
    // The body's end was told by the connection closing (no Content-Length, not chunked): a
    // cut there cannot be told from the end, so the consumer checks what it got.
    bool framedByClose = false;
    qint64 bodyBytes = 0;
    [[nodiscard]] bool ok() const { return problem == FetchProblem::None; }
};

class StoreFetcher
{
public:
    // Receives a 2xx answer's body in pieces; returning false stops the transfer (Refused).
    using BodySink = std::function<bool(QByteArrayView piece)>;
    using Headers = QList<QPair<QByteArray, QByteArray>>;

    explicit StoreFetcher(const std::atomic<bool> *cancel = nullptr);
    ~StoreFetcher();
    StoreFetcher(const StoreFetcher &) = delete;
    StoreFetcher &operator=(const StoreFetcher &) = delete;

    FetchResult fetch(const QByteArray &method, const QUrl &url, const QByteArray &body,
                      const Headers &headers, const FetchLimits &limits, const BodySink &sink);

    // Whether two URLs share scheme, host and port (default ports filled in).
    static bool sameOrigin(const QUrl &a, const QUrl &b);

private:
    struct Exchange;
    FetchResult fetchOnce(const QByteArray &method, const QUrl &url, const QByteArray &body,
                          const Headers &headers, const FetchLimits &limits, qint64 deadlineAtMs,
                          const BodySink &sink, QUrl *redirectTo);

    const std::atomic<bool> *m_cancel;
    std::unique_ptr<QNetworkAccessManager> m_network;
};

} // namespace ts::poll
