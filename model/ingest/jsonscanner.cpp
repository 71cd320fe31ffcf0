#include "jsonscanner.h"

#include <QIODevice>

namespace ts::ingest {

namespace {

constexpr size_t kChunkSize = 4 * 1024 * 1024;
constexpr qint64 kProgressEvery = 8 * 1024 * 1024;

} // namespace

JsonStreamScanner::JsonStreamScanner(QIODevice &device, const ReadControl &control)
    : m_device(device), m_control(control)
{
    m_total = device.isSequential() ? -1 : device.size();
    m_base = device.pos();
    reserve(kChunkSize * 2);
}

void JsonStreamScanner::reserve(size_t capacity)
{
    // simdjson reads up to simdjson::SIMDJSON_PADDING bytes past a slice: keep them allocated.
    auto bigger = std::make_unique<char[]>(capacity + simdjson::SIMDJSON_PADDING);
    if (m_size > 0)
        std::memcpy(bigger.get(), m_data.get(), m_size);
    std::memset(bigger.get() + m_size, 0, capacity + simdjson::SIMDJSON_PADDING - m_size);
    m_data = std::move(bigger);
    m_capacity = capacity;
}

bool JsonStreamScanner::fill()
{
    if (m_eof)
        return false;
    const size_t keep = m_pin != kNoPin ? std::min(m_pin, m_pos) : m_pos;
    if (keep > 0) {
        if (m_lineCounted < keep) {
            m_linesBefore += std::count(m_data.get() + m_lineCounted, m_data.get() + keep, '\n');
            m_lineCounted = keep;
        }
        m_lineCounted -= keep;
        std::memmove(m_data.get(), m_data.get() + keep, m_size - keep);
        m_size -= keep;
        m_pos -= keep;
        if (m_pin != kNoPin)
            m_pin -= keep;
        m_base += static_cast<qint64>(keep);
    }
    if (m_capacity - m_size < kChunkSize)
        reserve(std::max(m_capacity * 2, m_size + kChunkSize));
    const qint64 got =
        m_device.read(m_data.get() + m_size, static_cast<qint64>(m_capacity - m_size));
    if (got < 0) {
        m_ioError = m_device.errorString();
        m_eof = true;
        return false;
    }
    if (got == 0) {
        if (m_device.isSequential() && !m_device.atEnd() && m_device.waitForReadyRead(-1))
            return fill();
        m_eof = true;
        return false;
    }
    m_size += static_cast<size_t>(got);
    // Zero the padding after the data, so a slice ending at m_size is followed by NULs.
    std::memset(m_data.get() + m_size, 0, simdjson::SIMDJSON_PADDING);
    m_bytesRead += got;
    if (m_control.progress && m_bytesRead - m_lastProgress >= kProgressEvery) {
        m_lastProgress = m_bytesRead;
        m_control.progress(m_bytesRead, m_total);
    }
    return true;
}

} // namespace ts::ingest
