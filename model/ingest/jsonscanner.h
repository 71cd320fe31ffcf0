#pragma once
// A forward-only walker over a JSON document read through a sliding buffer. Readers use it to
// find the records of large JSON files (HAR log.entries, Azure {"records":[...]}, streams of
// OTLP requests) and to slice out one record at a time for simdjson, so a file of any size is
// read with memory bounded by its largest record. Only structure is checked here (nesting,
// strings, escapes); whoever parses a slice validates its content.

#include "ingest/ingest.h"

#include <QString>

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

class QIODevice;

namespace ts::ingest {

inline constexpr size_t kNoPin = static_cast<size_t>(-1);

// Walks a JSON document through a sliding buffer. Everything before the read position (or
// before the pin, when a caller needs a whole value kept in memory) may be discarded when more
// input is read, so memory is bounded by the largest pinned value, not the file.
class JsonStreamScanner
{
public:
    JsonStreamScanner(QIODevice &device, const ReadControl &control);

    // --- buffer -------------------------------------------------------------------------------
    bool ensure() { return m_pos < m_size || fill(); }
    [[nodiscard]] char current() const { return m_data[m_pos]; }
    [[nodiscard]] const char *data() const { return m_data.get(); }
    [[nodiscard]] size_t pos() const { return m_pos; }
    [[nodiscard]] qint64 offsetOf(size_t index) const
    {
        return m_base + static_cast<qint64>(index);
    }
    [[nodiscard]] qint64 offset() const { return offsetOf(m_pos); }
    [[nodiscard]] qint64 bytesRead() const { return m_bytesRead; }
    [[nodiscard]] const QString &ioError() const { return m_ioError; }
    // Keeps everything from index on in the buffer until unpin(). Refills move the buffer, so
    // read the index back with pinned() after scanning.
    void pin(size_t index) { m_pin = index; }
    [[nodiscard]] size_t pinned() const { return m_pin; }
    // Goes back to the pinned index (to re-read a value whose first member was peeked at).
    void rewindToPin() { m_pos = m_pin; }
    void unpin() { m_pin = kNoPin; }
    void advance() { ++m_pos; }

    // 1-based line of a buffer index. Indexes must mostly grow (entries come in file order);
    // counting is incremental so the whole file is counted once.
    qint64 lineAt(size_t index)
    {
        if (index >= m_lineCounted) {
            m_linesBefore += std::count(m_data.get() + m_lineCounted, m_data.get() + index, '\n');
        } else {
            m_linesBefore -= std::count(m_data.get() + index, m_data.get() + m_lineCounted, '\n');
        }
        m_lineCounted = index;
        return m_linesBefore + 1;
    }

    // --- tokens -------------------------------------------------------------------------------
    // Skips whitespace; false at the end of input.
    bool skipWhitespace()
    {
        for (;;) {
            if (!ensure())
                return false;
            const char c = m_data[m_pos];
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
                return true;
            ++m_pos;
        }
    }

    // At '"': reads a short string raw (escapes kept as written). Used for member names.
    bool readKey(std::string &out)
    {
        out.clear();
        ++m_pos;
        for (;;) {
            if (!ensure())
                return false;
            const char c = m_data[m_pos++];
            if (c == '"')
                return true;
            out.push_back(c);
            if (c == '\\') {
                if (!ensure())
                    return false;
                out.push_back(m_data[m_pos++]);
            }
        }
    }

    // At '"': skips a string of any length. The closing quote is found with memchr; whether it
    // is escaped is decided by the run of backslashes before it, carried across buffer refills.
    bool skipString()
    {
        ++m_pos;
        size_t pendingBackslashes = 0;
        for (;;) {
            if (!ensure())
                return false;
            const char *begin = m_data.get() + m_pos;
            const size_t available = m_size - m_pos;
            const auto *quote = static_cast<const char *>(std::memchr(begin, '"', available));
            if (!quote) {
                size_t run = 0;
                while (run < available && begin[available - 1 - run] == '\\')
                    ++run;
                pendingBackslashes = run == available ? pendingBackslashes + run : run;
                m_pos = m_size;
                continue;
            }
            size_t run = 0;
            while (quote - run > begin && *(quote - run - 1) == '\\')
                ++run;
            if (quote - run == begin)
                run += pendingBackslashes;
            m_pos = static_cast<size_t>(quote - m_data.get()) + 1;
            if (run % 2 == 0)
                return true;
            pendingBackslashes = 0;
        }
    }

    // At '{' or '[': skips to just past the matching bracket. Only nesting and strings are
    // tracked; the content is validated later by whoever parses the slice.
    bool skipContainer()
    {
        int depth = 0;
        for (;;) {
            if (!ensure())
                return false;
            const char c = m_data[m_pos];
            if (c == '"') {
                if (!skipString())
                    return false;
                continue;
            }
            if (c == '{' || c == '[') {
                ++depth;
            } else if (c == '}' || c == ']') {
                if (--depth == 0) {
                    ++m_pos;
                    return true;
                }
            }
            ++m_pos;
        }
    }

    // Skips any value (after whitespace).
    bool skipValue()
    {
        if (!skipWhitespace())
            return false;
        const char c = m_data[m_pos];
        if (c == '"')
            return skipString();
        if (c == '{' || c == '[')
            return skipContainer();
        if (c == ',' || c == '}' || c == ']' || c == ':')
            return false;
        // A scalar: number, true, false, null.
        while (ensure()) {
            const char s = m_data[m_pos];
            if (s == ',' || s == '}' || s == ']' || s == ' ' || s == '\n' || s == '\r' || s == '\t')
                break;
            ++m_pos;
        }
        return true;
    }

private:
    void reserve(size_t capacity);
    bool fill();

    QIODevice &m_device;
    const ReadControl &m_control;
    std::unique_ptr<char[]> m_data;
    size_t m_capacity = 0;
    size_t m_size = 0;
    size_t m_pos = 0;
    size_t m_pin = kNoPin;
    qint64 m_base = 0;        // file offset of m_data[0]
    size_t m_lineCounted = 0; // buffer index up to which newlines are counted...
    qint64 m_linesBefore = 0; // ...and how many there were before it
    qint64 m_bytesRead = 0;
    qint64 m_total = -1;
    qint64 m_lastProgress = 0;
    bool m_eof = false;
    QString m_ioError;
};

} // namespace ts::ingest
