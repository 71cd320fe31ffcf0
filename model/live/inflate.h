#pragma once
// Decompression of request bodies sent with `Content-Encoding: gzip` (or `deflate`), bounded so a
// small compressed body cannot expand into gigabytes (a "zip bomb") before the size check.

#include <QByteArray>

namespace ts::live {

enum class InflateStatus { Ok, TooLarge, Corrupt };

// gzip or zlib-wrapped deflate (detected from the header). `maxOutput` bounds the result.
InflateStatus inflateBody(const QByteArray &compressed, qint64 maxOutput, QByteArray *output,
                          QString *error);

// gzip-compress (used by tests and the simulator's HTTP sender).
QByteArray gzipCompress(const QByteArray &data);

} // namespace ts::live
