#pragma once
// Decompression of bodies sent with `Content-Encoding: gzip` (or `deflate`): request bodies the
// listener receives and answers the poller reads. Bounded, so a small compressed body cannot
// expand into gigabytes (a "zip bomb") before the size check, and strict about the end: a
// stream that stops before its end (a cut-off answer, a truncated body) is an error, never a
// shorter body taken as whole.

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <functional>
#include <memory>

namespace ts::live {

enum class InflateStatus { Ok, TooLarge, Corrupt };

// gzip or zlib-wrapped deflate (detected from the header). `maxOutput` bounds the result.
InflateStatus inflateBody(const QByteArray &compressed, qint64 maxOutput, QByteArray *output,
                          QString *error);

// The same a piece at a time, for a body that arrives in pieces and should not be held whole:
// feed() each piece as it arrives; what it inflates to goes to `out` in pieces of at most
// 256 KiB. Concatenated gzip members (what `cat a.gz b.gz` makes) are one stream.
class StreamInflater
{
public:
    using Output = std::function<bool(QByteArrayView piece)>; // false: stop (the caller's reason)

    StreamInflater();
    ~StreamInflater();
    StreamInflater(const StreamInflater &) = delete;
    StreamInflater &operator=(const StreamInflater &) = delete;

    // False when the input is corrupt (error()) or `out` asked to stop.
    bool feed(QByteArrayView input, const Output &out);
    // Whether everything fed so far ends exactly at the end of a stream: a body whose
    // compressed bytes stop before that is cut off.
    [[nodiscard]] bool complete() const;
    [[nodiscard]] qint64 totalOut() const { return m_totalOut; }
    [[nodiscard]] QString error() const { return m_error; }

private:
    struct State;
    std::unique_ptr<State> m_state;
    qint64 m_totalOut = 0;
    bool m_ended = false; // the last member's end was seen and nothing followed it
    bool m_failed = false;
    QString m_error;
};

// gzip-compress (used by tests and the simulator's HTTP sender).
QByteArray gzipCompress(const QByteArray &data);

} // namespace ts::live
