#include "storefetch.h"

#include "live/inflate.h"

#include <QDateTime>
#include <QEventLoop>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QTimer>

#include <algorithm>

namespace ts::poll {

namespace {

// Bytes Qt may buffer for a reply before it stops reading the socket: the store is slowed by
// TCP instead of filling memory while the consumer works.
constexpr qint64 kReadBufferBytes = 1024 * 1024;
constexpr qsizetype kErrorBodyBytes = 64 * 1024;
constexpr int kCancelCheckMs = 100;

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

int defaultPort(const QString &scheme)
{
    return scheme == u"https" ? 443 : 80;
}

bool isRedirect(int status)
{
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// "https://host:port/path", without user info or query (either may carry a secret).
QString shown(const QUrl &url)
{
    return url.adjusted(QUrl::RemoveUserInfo | QUrl::RemoveQuery | QUrl::RemoveFragment)
        .toDisplayString();
}

} // namespace

// What one request's reply has given so far; owned by fetchOnce's stack frame.
struct StoreFetcher::Exchange
{
    QNetworkReply *reply = nullptr;
    FetchResult result;
    const FetchLimits *limits = nullptr;
    const BodySink *sink = nullptr;
    std::unique_ptr<live::StreamInflater> inflater; // Content-Encoding: gzip / deflate
    bool headSeen = false;
    bool success = false; // a 2xx status: the body goes to the sink
    // The answer's Content-Length (-1: none) and the bytes of it read (still encoded). Checked
    // here too: Qt at times finishes a reply whose connection closed early without an error.
    qint64 announcedLength = -1;
    qint64 wireBytes = 0;

    void onHead()
    {
        if (headSeen)
            return;
        headSeen = true;
        result.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        success = result.status >= 200 && result.status < 300;
        result.retryAfter = reply->rawHeader("Retry-After");
        const QByteArray date = reply->rawHeader("Date");
        if (!date.isEmpty()) {
            const QDateTime parsed =
                QDateTime::fromString(QString::fromLatin1(date).trimmed(), Qt::RFC2822Date);
            if (parsed.isValid())
                result.storeDateMs = parsed.toMSecsSinceEpoch();
        }
        bool lengthGiven = false;
        const qint64 length = reply->rawHeader("Content-Length").trimmed().toLongLong(&lengthGiven);
        announcedLength = lengthGiven && length >= 0 ? length : -1;
        result.framedByClose = !reply->hasRawHeader("Content-Length") &&
                               !reply->rawHeader("Transfer-Encoding").toLower().contains("chunked");
        const QByteArray encoding = reply->rawHeader("Content-Encoding").trimmed().toLower();
        if (encoding == "gzip" || encoding == "x-gzip" || encoding == "deflate")
            inflater = std::make_unique<live::StreamInflater>();
        else if (!encoding.isEmpty() && encoding != "identity" && success)
            stop(FetchProblem::Refused,
                 QStringLiteral("the store answered in an encoding it was not asked for (%1)")
                     .arg(QString::fromLatin1(encoding.left(40))));
    }

    void stop(FetchProblem problem, const QString &error)
    {
        if (result.problem != FetchProblem::None)
            return;
        result.problem = problem;
        result.error = error;
        reply->abort();
    }

    // Decompressed bytes of the answer.
    bool take(QByteArrayView piece)
    {
        result.bodyBytes += piece.size();
        if (!success) {
            const qsizetype room = kErrorBodyBytes - result.errorBody.size();
            if (room > 0)
                result.errorBody.append(piece.first(std::min<qsizetype>(room, piece.size())));
            return true;
        }
        if (result.bodyBytes > limits->maxAnswerBytes) {
            stop(FetchProblem::TooLarge,
                 QStringLiteral("the answer exceeds %1 MiB (max-answer=)")
                     .arg(double(limits->maxAnswerBytes) / (1024.0 * 1024.0)));
            return false;
        }
        if (!(*sink)(piece)) {
            stop(FetchProblem::Refused, {});
            return false;
        }
        return true;
    }

    void onData()
    {
        onHead();
        while (result.problem == FetchProblem::None && reply->bytesAvailable() > 0) {
            const QByteArray chunk = reply->read(kReadBufferBytes);
            if (chunk.isEmpty())
                break;
            wireBytes += chunk.size();
            if (!inflater) {
                take(chunk);
                continue;
            }
            if (!inflater->feed(chunk, [this](QByteArrayView piece) { return take(piece); }) &&
                result.problem == FetchProblem::None) {
                stop(FetchProblem::CutOff,
                     QStringLiteral("the compressed answer is corrupt: %1").arg(inflater->error()));
            }
        }
    }

    void onFinished(const FetchLimits &limits)
    {
        onHead();
        onData();
        if (result.problem != FetchProblem::None)
            return;
        const QNetworkReply::NetworkError error = reply->error();
        // Qt reports an HTTP error status (4xx, 5xx; a redirect it does not follow) as an error
        // too: that answer is the store's, for the caller to read. Only errors of the transfer
        // (below 100: reset, closed, timed out) make an answer incomplete.
        const bool transferError = error != QNetworkReply::NoError && int(error) < 100;
        if (error != QNetworkReply::NoError && !transferError && result.status >= 300)
            return; // a status the caller reads (a redirect, 4xx, 5xx)
        if (error != QNetworkReply::NoError) {
            const bool timedOut = error == QNetworkReply::OperationCanceledError;
            const QString why =
                timedOut
                    ? QStringLiteral("no byte for %1 s").arg(double(limits.idleTimeoutMs) / 1000.0)
                    : reply->errorString();
            if (result.status == 0 || !headSeen) {
                result.problem = FetchProblem::Network;
                result.error = why;
            } else {
                result.problem = FetchProblem::CutOff;
                result.error = QStringLiteral("the answer was cut off after %1 bytes (%2)")
                                   .arg(result.bodyBytes)
                                   .arg(why);
            }
            return;
        }
        if (success && announcedLength >= 0 && wireBytes < announcedLength) {
            result.problem = FetchProblem::CutOff;
            result.error = QStringLiteral("the answer was cut off after %1 of its %2 bytes")
                               .arg(wireBytes)
                               .arg(announcedLength);
            return;
        }
        if (inflater && success && !inflater->complete()) {
            result.problem = FetchProblem::CutOff;
            result.error = QStringLiteral("the compressed answer ended before its end, after %1 "
                                          "bytes")
                               .arg(result.bodyBytes);
        }
    }
};

StoreFetcher::StoreFetcher(const std::atomic<bool> *cancel)
    : m_cancel(cancel), m_network(std::make_unique<QNetworkAccessManager>())
{
}

StoreFetcher::~StoreFetcher() = default;

bool StoreFetcher::sameOrigin(const QUrl &a, const QUrl &b)
{
    const QString schemeA = a.scheme().toLower();
    const QString schemeB = b.scheme().toLower();
    return schemeA == schemeB && a.host().compare(b.host(), Qt::CaseInsensitive) == 0 &&
           a.port(defaultPort(schemeA)) == b.port(defaultPort(schemeB));
}

FetchResult StoreFetcher::fetch(const QByteArray &method, const QUrl &url, const QByteArray &body,
                                const Headers &headers, const FetchLimits &limits,
                                const BodySink &sink)
{
    const qint64 deadlineAt = nowMs() + limits.deadlineMs;
    QUrl target = url;
    for (int redirects = 0;; ++redirects) {
        QUrl next;
        FetchResult result =
            fetchOnce(method, target, body, headers, limits, deadlineAt, sink, &next);
        if (next.isEmpty())
            return result;
        if (!sameOrigin(url, next)) {
            // The credentials in `headers` are for the store's origin only: nothing is sent to
            // the other one, not even a request without them.
            result.problem = FetchProblem::OtherOrigin;
            result.error = QStringLiteral("the store redirected to %1, another origin than %2: "
                                          "not followed (its credentials are never sent to "
                                          "another origin; name the final URL as the source)")
                               .arg(shown(next), shown(url));
            return result;
        }
        if (redirects >= limits.maxRedirects) {
            result.problem = FetchProblem::Network;
            result.error = QStringLiteral("more than %1 redirects").arg(limits.maxRedirects);
            return result;
        }
        target = next;
    }
}

FetchResult StoreFetcher::fetchOnce(const QByteArray &method, const QUrl &url,
                                    const QByteArray &body, const Headers &headers,
                                    const FetchLimits &limits, qint64 deadlineAtMs,
                                    const BodySink &sink, QUrl *redirectTo)
{
    QNetworkRequest request(url);
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                         QNetworkRequest::ManualRedirectPolicy);
    request.setTransferTimeout(limits.idleTimeoutMs);
    // Asked for explicitly, Qt hands the compressed bytes over as they are: they are inflated
    // here, where a stream that ends early is noticed (Qt's own decompression takes a cut
    // gzip stream as a complete, shorter body).
    request.setRawHeader("Accept-Encoding", "gzip");
    for (const auto &[name, value] : headers)
        request.setRawHeader(name, value);
    Exchange exchange;
    exchange.limits = &limits;
    exchange.sink = &sink;
    exchange.reply = method == "GET" ? m_network->get(request)
                                     : m_network->sendCustomRequest(request, method, body);
    exchange.reply->setReadBufferSize(kReadBufferBytes);
    QNetworkReply *reply = exchange.reply;
    QEventLoop loop;
    QObject::connect(reply, &QNetworkReply::metaDataChanged, &loop, [&] { exchange.onHead(); });
    QObject::connect(reply, &QNetworkReply::readyRead, &loop, [&] { exchange.onData(); });
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    QTimer deadline;
    deadline.setSingleShot(true);
    QObject::connect(&deadline, &QTimer::timeout, &loop, [&] {
        exchange.stop(FetchProblem::Deadline,
                      QStringLiteral("the answer did not complete within %1 s (timeout=)")
                          .arg(double(limits.deadlineMs) / 1000.0));
    });
    deadline.start(int(std::clamp<qint64>(deadlineAtMs - nowMs(), 0, INT_MAX)));
    QTimer cancelCheck;
    QObject::connect(&cancelCheck, &QTimer::timeout, &loop, [&] {
        if (m_cancel && m_cancel->load())
            exchange.stop(FetchProblem::Cancelled, QStringLiteral("cancelled"));
    });
    cancelCheck.start(kCancelCheckMs);
    if (!reply->isFinished())
        loop.exec();
    exchange.onFinished(limits);
    FetchResult result = std::move(exchange.result);
    if (result.problem == FetchProblem::None && isRedirect(result.status)) {
        const QUrl location = QUrl::fromEncoded(reply->rawHeader("Location").trimmed());
        if (location.isValid() && !location.isEmpty())
            *redirectTo = url.resolved(location);
    }
    reply->deleteLater();
    return result;
}

} // namespace ts::poll
