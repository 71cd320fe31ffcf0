#include "inflate.h"

#include <QString>

#include <zlib.h>

namespace ts::live {

InflateStatus inflateBody(const QByteArray &compressed, qint64 maxOutput, QByteArray *output,
                          QString *error)
{
    output->clear();
    z_stream stream{};
    // 32 + MAX_WBITS: detect gzip or zlib headers automatically.
    if (inflateInit2(&stream, 32 + MAX_WBITS) != Z_OK) {
        *error = QStringLiteral("zlib initialisation failed");
        return InflateStatus::Corrupt;
    }
    stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(compressed.constData()));
    stream.avail_in = uInt(compressed.size());
    constexpr qsizetype kStep = 256 * 1024;
    int rc = Z_OK;
    InflateStatus status = InflateStatus::Ok;
    while (rc != Z_STREAM_END) {
        if (output->size() >= maxOutput) {
            status = InflateStatus::TooLarge;
            *error = QStringLiteral("decompressed body exceeds %1 bytes").arg(maxOutput);
            break;
        }
        const qsizetype before = output->size();
        const qsizetype room = qMin<qsizetype>(kStep, maxOutput - before);
        if (output->capacity() < before + room) {
            // Typical bodies expand a few times; past that, room for the largest allowed output
            // at once: growing by doubling would keep each previous buffer resident (a body
            // inflating to a 32 MiB limit cost 68 MiB). Pages are touched only as they fill.
            output->reserve(output->isEmpty()
                                ? qMin<qsizetype>(maxOutput, compressed.size() * 4 + kStep)
                                : qsizetype(maxOutput));
        }
        output->resize(before + room);
        stream.next_out = reinterpret_cast<Bytef *>(output->data() + before);
        stream.avail_out = uInt(room);
        rc = inflate(&stream, Z_NO_FLUSH);
        output->resize(before + room - qsizetype(stream.avail_out));
        if (rc == Z_STREAM_END) {
            // Concatenated gzip members (what `cat a.gz b.gz` makes) are one body.
            if (stream.avail_in > 0 && inflateReset(&stream) == Z_OK) {
                rc = Z_OK;
                continue;
            }
            break;
        }
        if (rc == Z_BUF_ERROR && stream.avail_in == 0) {
            status = InflateStatus::Corrupt;
            *error = QStringLiteral("gzip body is truncated");
            break;
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            status = InflateStatus::Corrupt;
            *error = QStringLiteral("gzip body is corrupt: %1")
                         .arg(QString::fromLatin1(stream.msg ? stream.msg : "inflate error"));
            break;
        }
    }
    inflateEnd(&stream);
    if (status != InflateStatus::Ok)
        output->clear();
    return status;
}

QByteArray gzipCompress(const QByteArray &data)
{
    z_stream stream{};
    // 16 + MAX_WBITS: a gzip wrapper rather than zlib's.
    if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return {};
    QByteArray output(qsizetype(deflateBound(&stream, uLong(data.size()))) + 32, Qt::Uninitialized);
    stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.constData()));
    stream.avail_in = uInt(data.size());
    stream.next_out = reinterpret_cast<Bytef *>(output.data());
    stream.avail_out = uInt(output.size());
    const int rc = deflate(&stream, Z_FINISH);
    output.resize(rc == Z_STREAM_END ? qsizetype(stream.total_out) : 0);
    deflateEnd(&stream);
    return output;
}

} // namespace ts::live
