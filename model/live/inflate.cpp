#include "inflate.h"

#include <QString>

#include <zlib.h>

namespace ts::live {

namespace {
constexpr qsizetype kStep = 256 * 1024;
} // namespace

struct StreamInflater::State
{
    z_stream stream{};
    bool initialised = false;
    char buffer[kStep];
};

StreamInflater::StreamInflater() : m_state(std::make_unique<State>())
{
    // 32 + MAX_WBITS: detect gzip or zlib headers automatically.
    if (inflateInit2(&m_state->stream, 32 + MAX_WBITS) == Z_OK) {
        m_state->initialised = true;
    } else {
        m_failed = true;
        m_error = QStringLiteral("zlib initialisation failed");
    }
}

StreamInflater::~StreamInflater()
{
    if (m_state->initialised)
        inflateEnd(&m_state->stream);
}

bool StreamInflater::complete() const
{
    return !m_failed && m_ended;
}

bool StreamInflater::feed(QByteArrayView input, const Output &out)
{
    if (m_failed)
        return false;
    z_stream &stream = m_state->stream;
    stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(input.data()));
    stream.avail_in = uInt(input.size());
    while (stream.avail_in > 0) {
        if (m_ended) {
            // Concatenated gzip members are one body: another member begins.
            if (inflateReset(&stream) != Z_OK) {
                m_failed = true;
                m_error = QStringLiteral("gzip body is corrupt: cannot start its next member");
                return false;
            }
            m_ended = false;
        }
        stream.next_out = reinterpret_cast<Bytef *>(m_state->buffer);
        stream.avail_out = uInt(kStep);
        const int rc = inflate(&stream, Z_NO_FLUSH);
        const qsizetype produced = kStep - qsizetype(stream.avail_out);
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
            m_failed = true;
            m_error = QStringLiteral("gzip body is corrupt: %1")
                          .arg(QString::fromLatin1(stream.msg ? stream.msg : "inflate error"));
            return false;
        }
        if (produced > 0) {
            m_totalOut += produced;
            if (!out(QByteArrayView(m_state->buffer, produced)))
                return false;
        }
        if (rc == Z_STREAM_END) {
            m_ended = true;
        } else if (rc == Z_BUF_ERROR && produced == 0) {
            break; // needs more input
        }
    }
    // Output may still be pending inside zlib for input already consumed.
    while (!m_ended) {
        stream.next_out = reinterpret_cast<Bytef *>(m_state->buffer);
        stream.avail_out = uInt(kStep);
        const int rc = inflate(&stream, Z_NO_FLUSH);
        const qsizetype produced = kStep - qsizetype(stream.avail_out);
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
            m_failed = true;
            m_error = QStringLiteral("gzip body is corrupt: %1")
                          .arg(QString::fromLatin1(stream.msg ? stream.msg : "inflate error"));
            return false;
        }
        if (produced > 0) {
            m_totalOut += produced;
            if (!out(QByteArrayView(m_state->buffer, produced)))
                return false;
        }
        if (rc == Z_STREAM_END)
            m_ended = true;
        if (produced == 0 || rc == Z_STREAM_END)
            break;
    }
    return true;
}

InflateStatus inflateBody(const QByteArray &compressed, qint64 maxOutput, QByteArray *output,
                          QString *error)
{
    output->clear();
    StreamInflater inflater;
    bool tooLarge = false;
    const bool ok = inflater.feed(compressed, [&](QByteArrayView piece) {
        if (output->size() + piece.size() > maxOutput) {
            tooLarge = true;
            return false;
        }
        if (output->capacity() < output->size() + piece.size()) {
            // Typical bodies expand a few times; past that, room for the largest allowed output
            // at once: growing by doubling would keep each previous buffer resident (a body
            // inflating to a 32 MiB limit cost 68 MiB). Pages are touched only as they fill.
            output->reserve(output->isEmpty()
                                ? qMin<qsizetype>(maxOutput, compressed.size() * 4 + kStep)
                                : qsizetype(maxOutput));
        }
        output->append(piece);
        return true;
    });
    InflateStatus status = InflateStatus::Ok;
    if (tooLarge) {
        status = InflateStatus::TooLarge;
        *error = QStringLiteral("decompressed body exceeds %1 bytes").arg(maxOutput);
    } else if (!ok) {
        status = InflateStatus::Corrupt;
        *error = inflater.error();
    } else if (!inflater.complete()) {
        status = InflateStatus::Corrupt;
        *error = QStringLiteral("gzip body is truncated");
    }
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
