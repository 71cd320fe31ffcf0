#include "ingest/ndjsonreader.h"

#include "core/immortaltext.h"
#include "core/timeparse.h"
#include "ingest/readerutil.h"
#include "ingest/redaction.h"

#include <QFileDevice>
#include <QIODevice>

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

namespace ts {

namespace {

using namespace simdjson;

// Bytes per parsed chunk: large enough to amortise the hand-off between threads, small enough
// that the chunks in flight (parsed events are ~5x their text) keep peak memory low.
constexpr qsizetype kChunkSize = 1024 * 1024;
constexpr int kMaxInternedPerField = 4096;
// Parser threads for one read: this machine class has 2 cores, and the consumer needs one too.
constexpr int kWorkers = 2;

using ingest::toQString;

// Low-cardinality fields (identity, service, method, errorCode ...) repeat on almost every line.
// Interning them turns a UTF-8 decode + allocation into a hash lookup and shares one QString.
class StringInterner
{
public:
    // The shared QString for `sv`. Its characters live in the process's immortal arena (see
    // core/immortaltext.h), so events copy and free it without touching a reference count.
    // With lowerCaseText, the text is `sv` lower-cased, once per distinct value.
    // Returned by value: copying into a temporary and moving that into the event's field is
    // inline code, where assigning a const reference calls QString::operator= in Qt's library.
    QString intern(std::string_view sv, bool lowerCaseText = false)
    {
        const quint64 hash = hashOf(sv);
        // Open addressing in one array: the usual hit is one probe whose hash and bytes are in
        // a single entry (a node-based map chased a bucket pointer, then a node, per lookup).
        size_t index = size_t(hash) & (m_entries.size() - 1);
        while (m_entries[index].used) {
            Entry &entry = m_entries[index];
            if (entry.hash == hash && entry.bytes.size() == sv.size() &&
                sameBytes(entry.bytes.data(), sv.data(), sv.size()))
                return entry.text;
            index = (index + 1) & (m_entries.size() - 1);
        }
        if (m_used >= kMaxInternedPerField) {
            // High-cardinality after all: start over to keep memory bounded.
            m_entries.assign(kInitialSlots, Entry{});
            m_used = 0;
            return intern(sv, lowerCaseText);
        }
        if (2 * (m_used + 1) > int(m_entries.size())) { // keep it at most half full
            grow();
            return intern(sv, lowerCaseText);
        }
        Entry &entry = m_entries[index];
        entry.used = true;
        entry.hash = hash;
        entry.bytes.assign(sv);
        QString text = toQString(sv);
        if (lowerCaseText)
            text = std::move(text).toLower();
        else
            redact::redactShortField(text); // once per distinct value, not once per event
        entry.text = ImmortalTextArena::process().keep(text);
        ++m_used;
        return entry.text;
    }

private:
    struct Entry
    {
        bool used = false;
        quint64 hash = 0;
        std::string bytes;
        QString text;
    };
    static constexpr size_t kInitialSlots = 64; // powers of two

    void grow()
    {
        std::vector<Entry> old(m_entries.size() * 2);
        old.swap(m_entries);
        for (Entry &entry : old) {
            if (!entry.used)
                continue;
            size_t index = size_t(entry.hash) & (m_entries.size() - 1);
            while (m_entries[index].used)
                index = (index + 1) & (m_entries.size() - 1);
            m_entries[index] = std::move(entry);
        }
    }

    static quint64 load64(const char *p)
    {
        quint64 v;
        std::memcpy(&v, p, 8);
        return v;
    }
    static quint32 load32(const char *p)
    {
        quint32 v;
        std::memcpy(&v, p, 4);
        return v;
    }

    // The bytes of a value of `size` (< 8) in one word, with loads of a fixed size: overlapping
    // 4-byte loads from both ends, or the first, middle and last byte. Both are one-to-one for a
    // given size, which the hash mixes in. (A byte loop here cost ~100 instructions per value.)
    static quint64 shortWord(const char *p, size_t size)
    {
        if (size >= 4)
            return load32(p) | (quint64(load32(p + size - 4)) << 32);
        if (size == 0)
            return 0;
        const auto byte = [p](size_t i) { return quint64(static_cast<unsigned char>(p[i])); };
        return byte(0) | (byte(size / 2) << 8) | (byte(size - 1) << 16);
    }

    // Values are short (a method, an identity): 8 bytes per step, not libstdc++'s murmur.
    static quint64 hashOf(std::string_view sv)
    {
        constexpr quint64 kMultiplier = 0x9E3779B97F4A7C15ull;
        const char *p = sv.data();
        const size_t size = sv.size();
        quint64 hash = quint64(size) * kMultiplier;
        const auto mix = [&hash](quint64 chunk) {
            hash = (hash ^ chunk) * kMultiplier;
            hash ^= hash >> 29;
        };
        if (size < 8) {
            mix(shortWord(p, size));
        } else {
            size_t i = 0;
            for (; i + 8 <= size; i += 8)
                mix(load64(p + i));
            if (i < size) // the last 8 bytes, overlapping the step before
                mix(load64(p + size - 8));
        }
        hash ^= hash >> 32;
        return hash * kMultiplier;
    }

    // Equal bytes, inline for the usual short value instead of a call to memcmp.
    static bool sameBytes(const char *a, const char *b, size_t size)
    {
        if (size > 16)
            return std::memcmp(a, b, size) == 0;
        if (size >= 8)
            return ((load64(a) ^ load64(b)) | (load64(a + size - 8) ^ load64(b + size - 8))) == 0;
        return shortWord(a, size) == shortWord(b, size);
    }

    std::vector<Entry> m_entries = std::vector<Entry>(kInitialSlots);
    int m_used = 0;
};

// Whether an interned header name is a credential's, by the address of its characters: the
// interner hands out one immortal address per distinct name, so the name check runs once per
// name (and per slot collision), not once per header of every line.
class SecretHeaderCache
{
public:
    bool isSecret(const QString &lowerName)
    {
        const auto address = reinterpret_cast<quintptr>(lowerName.constData());
        Slot &slot = m_slots[(address >> 4) % m_slots.size()];
        if (slot.address != address || slot.size != lowerName.size()) {
            slot.address = address;
            slot.size = lowerName.size();
            slot.secret = redact::isSecretHeader(lowerName);
        }
        return slot.secret;
    }

private:
    struct Slot
    {
        quintptr address = 0;
        qsizetype size = -1;
        bool secret = false;
    };
    std::array<Slot, 64> m_slots{};
};

// Response bodies, masked, by content. A log's failures repeat a few templates (Fabric's
// RequestBlocked body, OneNote's 20166, Service Bus's 50009), so a body is usually decoded and
// scanned for secrets once, not once per failed request. Direct-mapped and bounded: a body
// that is never repeated costs one hash and one slot.
class MaskedTextCache
{
public:
    QString masked(std::string_view bytes)
    {
        if (bytes.size() > kMaxCachedBytes)
            return redact::redactText(toQString(bytes));
        const size_t hash = std::hash<std::string_view>{}(bytes);
        Slot &slot = m_slots[hash % m_slots.size()];
        if (slot.hash != hash || slot.bytes != bytes) {
            slot.hash = hash;
            slot.bytes.assign(bytes);
            slot.text = redact::redactText(toQString(bytes));
        }
        return slot.text;
    }

private:
    static constexpr size_t kMaxCachedBytes = 4096;
    struct Slot
    {
        size_t hash = 0;
        std::string bytes;
        QString text;
    };
    std::array<Slot, 256> m_slots{};
};

enum class Field : quint8 {
    Unknown,
    Ts,
    Type,
    Identity,
    App,
    Tenant,
    Service,
    Category,
    Method,
    Url,
    Status,
    ErrorCode,
    RetryAfter,
    Headers,
    Body,
    DurationMs,
    RequestId,
    BatchId,
    Batch,
    BatchIndex,
    Attempt,
    OperationId,
    Lane,
    Credits,
    Weight,
    Refused,
    Namespace,
    Entity,
    Scope,
    State,
    Text
};

// `key` (whose length the caller has checked) spells `literal`: a comparison of a constant
// size, which the compiler turns into a load or two instead of a call to memcmp.
template <size_t N> bool is(std::string_view key, const char (&literal)[N])
{
    return std::memcmp(key.data(), literal, N - 1) == 0;
}

Field fieldOf(std::string_view key)
{
    // A switch on length keeps this to one or two comparisons per key.
    switch (key.size()) {
    case 2:
        if (is(key, "ts"))
            return Field::Ts;
        break;
    case 3:
        if (is(key, "app"))
            return Field::App;
        if (is(key, "url"))
            return Field::Url;
        break;
    case 4:
        if (is(key, "type"))
            return Field::Type;
        if (is(key, "body"))
            return Field::Body;
        if (is(key, "lane"))
            return Field::Lane;
        if (is(key, "text"))
            return Field::Text;
        break;
    case 5:
        if (is(key, "batch"))
            return Field::Batch;
        if (is(key, "scope"))
            return Field::Scope;
        if (is(key, "state"))
            return Field::State;
        break;
    case 6:
        if (is(key, "tenant"))
            return Field::Tenant;
        if (is(key, "method"))
            return Field::Method;
        if (is(key, "status"))
            return Field::Status;
        if (is(key, "entity"))
            return Field::Entity;
        if (is(key, "weight"))
            return Field::Weight;
        break;
    case 7:
        if (is(key, "service"))
            return Field::Service;
        if (is(key, "headers"))
            return Field::Headers;
        if (is(key, "batchId"))
            return Field::BatchId;
        if (is(key, "attempt"))
            return Field::Attempt;
        if (is(key, "credits"))
            return Field::Credits;
        if (is(key, "refused"))
            return Field::Refused;
        break;
    case 8:
        if (is(key, "identity"))
            return Field::Identity;
        if (is(key, "category"))
            return Field::Category;
        break;
    case 9:
        if (is(key, "errorCode"))
            return Field::ErrorCode;
        if (is(key, "requestId"))
            return Field::RequestId;
        if (is(key, "namespace"))
            return Field::Namespace;
        break;
    case 10:
        if (is(key, "retryAfter"))
            return Field::RetryAfter;
        if (is(key, "durationMs"))
            return Field::DurationMs;
        if (is(key, "batchIndex"))
            return Field::BatchIndex;
        break;
    case 11:
        if (is(key, "operationId"))
            return Field::OperationId;
        break;
    default:
        break;
    }
    return Field::Unknown;
}

} // namespace

struct NdjsonReader::Impl
{
    // The DOM parser dispatches to the best SIMD kernel at run time (the on-demand API would be
    // compiled for the build machine's baseline only), and reuses its buffers across lines.
    dom::parser parser;
    StringInterner identity, app, tenant, service, category, method, errorCode, retryAfter, lane,
        ns, entity, headerName, headerValue, scope, state, typeName;
    SecretHeaderCache secretHeaders;
    MaskedTextCache bodies;
    std::string scratch; // a line copied with padding when it cannot be parsed in place
    QString sourceName;  // the last read's source name, and its copy in the immortal arena
    QString eventSource;

    // Parse one line in place: `data` must be followed by SIMDJSON_PADDING readable bytes.
    bool parsePadded(const char *data, size_t size, RequestEvent &event, QString *reason);
    // One line's document, already parsed.
    bool parseDocument(const dom::element &doc, RequestEvent &event, QString *reason);
    // Its fields that use the interners: headers and text fields.
    bool readHeaders(const dom::element &value, RequestEvent &event, QString &authorization,
                     std::string &storage, QString *reason);
    bool readTextField(Field which, std::string_view text, RequestEvent &event, QString *reason);
};

namespace {

// Accepts strings and numbers/booleans (as their JSON text): logs written by hand are lenient.
bool scalarText(const dom::element &value, std::string_view &out, std::string &storage)
{
    if (value.get_string().get(out) == SUCCESS) // nearly always: one look at the tape
        return true;
    switch (value.type()) {
    case dom::element_type::INT64:
    case dom::element_type::UINT64:
    case dom::element_type::DOUBLE:
    case dom::element_type::BOOL:
        storage = simdjson::minify(value);
        out = storage;
        return true;
    case dom::element_type::NULL_VALUE:
        out = {};
        return true;
    default:
        return false;
    }
}

bool numberOf(const dom::element &value, double &out)
{
    switch (value.type()) {
    case dom::element_type::INT64:
    case dom::element_type::UINT64:
    case dom::element_type::DOUBLE:
        return value.get_double().get(out) == SUCCESS;
    case dom::element_type::STRING: {
        std::string_view text;
        if (value.get_string().get(text) != SUCCESS)
            return false;
        bool ok = false;
        out = toQString(text).toDouble(&ok);
        return ok;
    }
    default:
        return false;
    }
}

} // namespace

bool NdjsonReader::Impl::parsePadded(const char *data, size_t size, RequestEvent &event,
                                     QString *reason)
{
    dom::element doc;
    if (auto error = parser.parse(data, size, false).get(doc)) {
        if (reason)
            *reason = QStringLiteral("not JSON (") + QLatin1StringView(error_message(error)) + u')';
        return false;
    }
    return parseDocument(doc, event, reason);
}

namespace {

// A field's value could not be read: *reason says why, false for the caller to return.
bool failWith(QString *reason, QString text)
{
    if (reason)
        *reason = std::move(text);
    return false;
}

bool readTs(const dom::element &value, RequestEvent &event, QString *reason)
{
    std::string_view text;
    if (value.is_number()) {
        double number = 0;
        if (value.get_double().get(number) != SUCCESS)
            return failWith(reason, QStringLiteral("\"ts\" is not a number"));
        const auto ms = unixNumberToMs(number);
        if (!ms)
            return failWith(reason,
                            QStringLiteral("\"ts\" ") + QString::number(number, 'g', 15) +
                                QStringLiteral(" is not a Unix time in range (1970 to 9999)"));
        event.tsMs = *ms;
    } else if (value.get_string().get(text) == SUCCESS) {
        const auto ms = parseRfc3339Ms(text);
        if (!ms)
            return failWith(reason, QStringLiteral("\"ts\" is not an RFC 3339 time: ") +
                                        redact::quoteMasked(toQString(text)));
        event.tsMs = *ms;
    } else {
        return failWith(reason, QStringLiteral("\"ts\" must be a string or a number"));
    }
    return true;
}

// status, durationMs, credits, weight, batchIndex, attempt.
bool readNumberField(Field which, std::string_view key, const dom::element &value,
                     RequestEvent &event, QString *reason)
{
    double number;
    if (which == Field::Status) {
        const auto status = numberOf(value, number)
                                ? limits::toBoundedInt(number, 0, limits::kMaxStatus)
                                : std::nullopt;
        if (!status)
            return failWith(reason, QStringLiteral("\"status\" is not an HTTP status"));
        event.status = *status;
        return true;
    }
    if (value.is_null())
        return true;
    const QString quoted = u'"' + toQString(key) + u'"';
    if (which == Field::DurationMs || which == Field::Credits) {
        if (!numberOf(value, number))
            return failWith(reason, quoted + QStringLiteral(" is not a number"));
        // Negative means unknown / none; a non-finite or huge value is refused.
        const double highest =
            which == Field::DurationMs ? limits::kMaxDurationMs : limits::kMaxCredits;
        if (!limits::inRange(number, -highest, highest))
            return failWith(reason, limits::outOfRangeReason(quoted, number, 0, highest));
        (which == Field::DurationMs ? event.durationMs : event.credits) = number;
        return true;
    }
    if (!numberOf(value, number))
        return failWith(reason, quoted + QStringLiteral(" is not an integer"));
    if (which == Field::Weight) {
        // The requests this record stands for (RequestEvent::weight): a whole number >= 1.
        if (!limits::inRange(number, 1, double(limits::kMaxWeight)) || number != std::floor(number))
            return failWith(reason, limits::outOfRangeReason(u"\"weight\"", number, 1,
                                                             double(limits::kMaxWeight)));
        event.weight = qint64(number);
        return true;
    }
    // batchIndex, attempt: -1 is "unknown" for both.
    const int highest = which == Field::BatchIndex ? limits::kMaxBatchIndex : limits::kMaxAttempt;
    const auto integer = limits::toBoundedInt(number, -1, highest);
    if (!integer)
        return failWith(reason, limits::outOfRangeReason(quoted, number, 0, highest));
    (which == Field::BatchIndex ? event.batchIndex : event.attempt) = *integer;
    return true;
}

// "refused": "breaker" (the client's own breaker refused the request; null: not refused).
bool readRefused(const dom::element &value, RequestEvent &event, QString *reason)
{
    std::string_view text;
    if (value.is_null())
        return true;
    if (value.get_string().get(text) != SUCCESS || text != "breaker")
        return failWith(reason, QStringLiteral("\"refused\" must be \"breaker\" (the client's own "
                                               "circuit breaker refused the request)"));
    event.refusedByClientBreaker = true;
    return true;
}

// An unknown key, kept verbatim in the event's extra JSON object.
void appendExtra(std::string &extra, std::string_view key, const dom::element &value)
{
    extra += extra.empty() ? '{' : ',';
    extra += '"';
    // The key was unescaped by the parser; re-escape what JSON requires.
    for (char c : key) {
        if (c == '"' || c == '\\')
            extra += '\\';
        extra += c;
    }
    extra += "\":";
    extra += simdjson::minify(value);
}

} // namespace

bool NdjsonReader::Impl::readHeaders(const dom::element &value, RequestEvent &event,
                                     QString &authorization, std::string &storage, QString *reason)
{
    dom::object headers;
    if (value.get_object().get(headers) != SUCCESS)
        return failWith(reason, QStringLiteral("\"headers\" is not an object"));
    event.headers.reserve(qsizetype(headers.size()));
    const dom::object::iterator headersEnd = headers.end();
    for (dom::object::iterator header = headers.begin(); header != headersEnd; ++header) {
        const dom::element headerValueElement = header.value();
        std::string_view headerText;
        if (!scalarText(headerValueElement, headerText, storage)) {
            // Repeated headers as an array: keep the JSON text.
            storage = simdjson::minify(headerValueElement);
            headerText = storage;
        }
        // Names are case-insensitive: stored lower-case, lowered once per distinct name.
        QString name = headerName.intern(header.key(), true);
        // A credential header is dropped here, before its value is kept anywhere; a bearer
        // token first tells who was charged.
        if (secretHeaders.isSecret(name)) {
            if (name == u"authorization")
                authorization = toQString(headerText);
            continue;
        }
        event.headers.setLowerCase(std::move(name), headerValue.intern(headerText));
    }
    return true;
}

bool NdjsonReader::Impl::readTextField(Field which, std::string_view text, RequestEvent &event,
                                       QString *reason)
{
    switch (which) {
    case Field::Type: {
        const auto type = eventTypeFromName(typeName.intern(text));
        if (!type)
            return failWith(reason, QStringLiteral("unknown \"type\": ") +
                                        redact::quoteMasked(toQString(text), 32));
        event.type = *type;
        break;
    }
    case Field::Identity:
        event.identity = identity.intern(text);
        break;
    case Field::App:
        event.app = app.intern(text);
        break;
    case Field::Tenant:
        event.tenant = tenant.intern(text);
        break;
    case Field::Service:
        event.service = service.intern(text);
        break;
    case Field::Category:
        event.category = category.intern(text);
        break;
    case Field::Method:
        event.method = method.intern(text);
        break;
    case Field::Url:
        event.url = toQString(text);
        break;
    case Field::ErrorCode:
        event.errorCode = errorCode.intern(text);
        break;
    case Field::RetryAfter:
        event.retryAfter = retryAfter.intern(text);
        break;
    case Field::Body:
        event.body = bodies.masked(text);
        break;
    case Field::RequestId:
        event.requestId = toQString(text);
        break;
    case Field::BatchId:
        event.batchId = toQString(text);
        break;
    case Field::OperationId:
        event.operationId = toQString(text);
        break;
    case Field::Lane:
        event.lane = lane.intern(text);
        break;
    case Field::Namespace:
        event.serviceBusNamespace = ns.intern(text);
        break;
    case Field::Entity:
        event.entity = entity.intern(text);
        break;
    case Field::Scope:
        event.breakerScope = scope.intern(text);
        break;
    case Field::State:
        event.breakerState = state.intern(text);
        break;
    case Field::Text:
        event.text = toQString(text);
        break;
    default:
        break;
    }
    return true;
}

bool NdjsonReader::Impl::parseDocument(const dom::element &doc, RequestEvent &event,
                                       QString *reason)
{
    dom::object object;
    if (doc.get_object().get(object) != SUCCESS)
        return failWith(reason, QStringLiteral("not a JSON object"));

    bool haveTs = false;
    QString authorization; // an Authorization header's value, read for the identity only
    std::string extra;     // unknown keys, kept verbatim
    std::string storage;
    // The iterator's key() and value() rather than a key_value_pair: building the pair on the
    // stack and reading it back in other widths stalled store forwarding (perf: ~60 % of this
    // function's samples on the copy).
    const dom::object::iterator fieldsEnd = object.end();
    for (dom::object::iterator field = object.begin(); field != fieldsEnd; ++field) {
        const std::string_view key = field.key();
        const dom::element value = field.value();
        std::string_view text;
        const Field which = fieldOf(key);
        bool read = true;
        switch (which) {
        case Field::Ts:
            read = readTs(value, event, reason);
            haveTs = true;
            break;
        case Field::Status:
        case Field::DurationMs:
        case Field::Credits:
        case Field::Weight:
        case Field::BatchIndex:
        case Field::Attempt:
            read = readNumberField(which, key, value, event, reason);
            break;
        case Field::Refused:
            read = readRefused(value, event, reason);
            break;
        case Field::Batch: {
            bool flag = false;
            if (value.get_bool().get(flag) != SUCCESS)
                return failWith(reason, QStringLiteral("\"batch\" is not a boolean"));
            event.batchEnvelope = flag;
            break;
        }
        case Field::Headers:
            read = readHeaders(value, event, authorization, storage, reason);
            break;
        case Field::Unknown:
            appendExtra(extra, key, value);
            break;
        default:
            if (!scalarText(value, text, storage))
                return failWith(reason, QStringLiteral("\"") + toQString(key) +
                                            QStringLiteral("\" must be a string"));
            read = readTextField(which, text, event, reason);
            break;
        }
        if (!read)
            return false;
    }
    if (!haveTs)
        return failWith(reason, QStringLiteral("missing \"ts\""));
    // Refused before it was sent: the service never answered it.
    if (event.refusedByClientBreaker && event.status != 0)
        return failWith(reason, QStringLiteral("a request refused by the client's breaker has no "
                                               "\"status\" (it never reached the service)"));
    if (!extra.empty()) {
        extra += '}';
        event.extraJson = QByteArray(extra.data(), static_cast<qsizetype>(extra.size()));
    }
    // Masked here, on the parser's thread, so every consumer of a parsed line (a report, an
    // import, tail, the listener, the dashboard) only ever holds the masked event. The interned
    // fields, header values and bodies were masked when first seen, secret headers never kept.
    if (!authorization.isEmpty())
        redact::applyIdentityFromAuthorization(event, authorization);
    redact::redactEvent(event, redact::AlreadyMasked::ShortFieldsHeadersAndBody);
    return true;
}

NdjsonReader::NdjsonReader() : d(std::make_unique<Impl>()) {}
NdjsonReader::~NdjsonReader() = default;

bool NdjsonReader::parseLine(const char *data, qsizetype size, RequestEvent &event, QString *reason)
{
    d->scratch.assign(data, static_cast<size_t>(size));
    d->scratch.resize(static_cast<size_t>(size) + SIMDJSON_PADDING);
    return d->parsePadded(d->scratch.data(), static_cast<size_t>(size), event, reason);
}

namespace {

// A run of complete lines cut from the input, parsed on a worker and delivered in order.
struct Chunk
{
    // The lines, followed by SIMDJSON_PADDING bytes. Not a std::vector: resizing one zeroes
    // every byte, megabytes per chunk that the read overwrites at once.
    std::unique_ptr<char[]> bytes;
    size_t capacity = 0; // bytes allocated
    size_t size = 0;
    qint64 baseOffset = 0; // source offset of bytes[0]
    qint64 baseLine = 0;   // line number before the first line of the chunk
    qint64 lines = 0;      // lines in the chunk (the last may lack its newline)
    bool atFileStart = false;
    bool holdUnterminated = false; // the file's last chunk, read with holdUnterminatedTail
};

struct ParsedChunk
{
    // The chunk's buffer, handed back to the reading thread to be filled again: a fresh megabyte
    // per chunk is a megabyte of page faults when the allocator has returned the last one.
    std::unique_ptr<char[]> spentBytes;
    size_t spentCapacity = 0;
    std::vector<RequestEvent> events;
    std::vector<MalformedRecord> malformed;
    qint64 endOffset = 0;
    qint64 endLine = 0;
    qint64 heldBytes = 0;
};

} // namespace

namespace {

// What may surround a line's object: JSON whitespace other than a newline.
bool onlyLineSpace(const char *text, size_t size)
{
    for (size_t i = 0; i < size; ++i) {
        if (text[i] != ' ' && text[i] != '\t' && text[i] != '\r')
            return false;
    }
    return true;
}

// A line that is not a record: spaces and tabs, then at most one carriage return (the same
// definition for the document stream and the line-by-line path).
bool isBlankLine(const char *text, size_t size)
{
    if (size > 0 && text[size - 1] == '\r')
        --size;
    for (size_t i = 0; i < size; ++i) {
        if (text[i] != ' ' && text[i] != '\t')
            return false;
    }
    return true;
}

} // namespace

// The chunk's lines as one simdjson document stream: one stage-1 pass over the chunk instead of
// one per line (the set-up and the padded copy of each line's last block), ~20 % of simdjson's
// time on the benchmark's lines. Only while each document is exactly one line's object: at the
// first line that is anything else (not JSON, not an object, a document over several lines or
// two on one line, a record the reader refuses, a line the stream would skip) it stops, and the
// caller goes on line by line from there, so every malformed line is reported as it always was.
// Advances pos (the next line's start) and line (the last line done) over the lines it parsed.
static void parseWholeLines(NdjsonReader::Impl &impl, const Chunk &chunk, const QString &sourceName,
                            ParsedChunk &parsed, size_t &pos, qint64 &line)
{
    const char *data = chunk.bytes.get();
    const size_t size = chunk.size;
    dom::document_stream stream;
    // One batch for the whole chunk: no stage-1 thread, and no document cut at a batch end.
    if (impl.parser
            .parse_many(reinterpret_cast<const uint8_t *>(data), size,
                        std::max(size, dom::DEFAULT_BATCH_SIZE))
            .get(stream) != SUCCESS)
        return;
    for (auto it = stream.begin(); it != stream.end(); ++it) {
        dom::element doc;
        if ((*it).get(doc) != SUCCESS)
            return;
        const size_t start = it.current_index();
        size_t lineEnd = size;
        for (;;) { // blank lines before the document
            const void *nl = std::memchr(data + pos, '\n', size - pos);
            lineEnd = nl ? size_t(static_cast<const char *>(nl) - data) : size;
            if (start < lineEnd)
                break;
            if (!isBlankLine(data + pos, lineEnd - pos) || lineEnd >= size)
                return;
            ++line;
            pos = lineEnd + 1;
        }
        if (start < pos || data[start] != '{')
            return;
        const size_t end = start + it.source().size(); // (an object's source ends at its '}')
        if (end > lineEnd || !onlyLineSpace(data + pos, start - pos) ||
            !onlyLineSpace(data + end, lineEnd - end))
            return;
        RequestEvent &event = parsed.events.emplace_back();
        if (!impl.parseDocument(doc, event, nullptr)) {
            parsed.events.pop_back(); // the line-by-line path says why
            return;
        }
        ++line;
        event.source = sourceName; // (immortal text: see read())
        event.line = line;
        event.offset = chunk.baseOffset + qint64(pos);
        pos = lineEnd + 1;
    }
}

// Parses every line of a chunk. Runs on a worker thread with an Impl no one else uses.
static ParsedChunk parseChunkLines(NdjsonReader::Impl &impl, const Chunk &chunk,
                                   const QString &sourceName)
{
    ParsedChunk parsed;
    // Exactly one slot per line: an event is ~0.5 KB, so a guess from the byte count would
    // leave megabytes unused in every batch in flight.
    parsed.events.reserve(size_t(chunk.lines));
    const char *data = chunk.bytes.get();
    size_t pos = 0;
    qint64 line = chunk.baseLine;
    bool atStart = chunk.atFileStart;
    // (A chunk that opens the file with a byte-order mark goes line by line: the mark is not
    // JSON whitespace.)
    const bool byteOrderMark =
        atStart && chunk.size >= 3 && std::memcmp(data, "\xEF\xBB\xBF", 3) == 0;
    if (!byteOrderMark) {
        parseWholeLines(impl, chunk, sourceName, parsed, pos, line);
        atStart = atStart && pos == 0;
    }
    while (pos < chunk.size) {
        const void *nl = std::memchr(data + pos, '\n', chunk.size - pos);
        const size_t end = nl ? size_t(static_cast<const char *>(nl) - data) : chunk.size;
        const char *begin = data + pos;
        size_t length = end - pos;
        qint64 lineOffset = chunk.baseOffset + qint64(pos);
        ++line;
        if (atStart) {
            atStart = false;
            if (length >= 3 && std::memcmp(begin, "\xEF\xBB\xBF", 3) == 0) {
                begin += 3;
                length -= 3;
                lineOffset += 3;
            }
        }
        const bool blank = isBlankLine(begin, length);
        if (length > 0 && begin[length - 1] == '\r')
            --length;
        if (!blank) { // a blank line is not an event, not an error
            // Parsed in place in its slot: moving a ~0.5 KB event of 20 strings into the
            // vector, then destroying the moved-from one, cost more than the rare pop_back of
            // a malformed line.
            RequestEvent &event = parsed.events.emplace_back();
            QString reason;
            if (impl.parsePadded(begin, length, event, &reason)) {
                event.source = sourceName; // (immortal text: see read())
                event.line = line;
                event.offset = lineOffset;
            } else if (!nl && chunk.holdUnterminated) {
                // Cut mid-write: left whole for the next read, not counted as malformed.
                parsed.events.pop_back();
                parsed.endOffset = chunk.baseOffset + qint64(pos);
                parsed.endLine = line - 1;
                parsed.heldBytes = qint64(chunk.size - pos);
                return parsed;
            } else {
                parsed.events.pop_back();
                parsed.malformed.push_back(redact::malformedRecord(sourceName, line, reason));
            }
        }
        pos = end + 1;
    }
    parsed.endOffset = chunk.baseOffset + qint64(chunk.size);
    parsed.endLine = line;
    return parsed;
}

static ParsedChunk parseChunk(NdjsonReader::Impl &impl, Chunk &chunk, const QString &sourceName)
{
    ParsedChunk parsed = parseChunkLines(impl, chunk, sourceName);
    parsed.spentBytes = std::move(chunk.bytes);
    parsed.spentCapacity = chunk.capacity;
    return parsed;
}

namespace {

// One parser thread for the length of a read, fed one chunk at a time. Threads that live as
// long as the read (instead of one std::async thread per chunk) keep one malloc arena each, so
// the memory of freed batches is found again instead of faulted in afresh for every chunk.
class ParserThread
{
public:
    ParserThread(NdjsonReader::Impl &impl, const QString &sourceName)
        : m_impl(impl), m_sourceName(sourceName), m_thread([this] { run(); })
    {
    }
    ParserThread(const ParserThread &) = delete;
    ParserThread &operator=(const ParserThread &) = delete;
    ~ParserThread()
    {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_wake.notify_one();
        m_thread.join();
    }

    // The thread must be idle (its previous chunk's future collected).
    std::future<ParsedChunk> parse(Chunk chunk)
    {
        std::packaged_task<ParsedChunk()> task([this, chunk = std::move(chunk)]() mutable {
            return parseChunk(m_impl, chunk, m_sourceName);
        });
        std::future<ParsedChunk> result = task.get_future();
        {
            std::lock_guard lock(m_mutex);
            m_task = std::move(task);
        }
        m_wake.notify_one();
        return result;
    }

private:
    void run()
    {
        for (;;) {
            std::packaged_task<ParsedChunk()> task;
            {
                std::unique_lock lock(m_mutex);
                m_wake.wait(lock, [this] { return m_stop || m_task.valid(); });
                if (!m_task.valid())
                    return; // stopping, nothing left to parse
                task = std::move(m_task);
            }
            task(); // (exceptions travel to the reader through the future)
        }
    }

    NdjsonReader::Impl &m_impl;
    const QString &m_sourceName;
    // Protects m_task and m_stop: the reading thread hands a task over, this thread takes it.
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::packaged_task<ParsedChunk()> m_task;
    bool m_stop = false;
    std::thread m_thread; // last: starts once the members above exist
};

} // namespace

ReadResult NdjsonReader::read(QIODevice &input, const QString &sourceName, IngestSink &sink,
                              const ReadControl &control)
{
    ReadResult result;
    const qint64 total = input.isSequential() ? -1 : input.size();
    qint64 offset = 0; // source offset of the first byte not yet cut into a chunk
    if (control.startOffset > 0 && !input.isSequential()) {
        if (!input.seek(control.startOffset)) {
            result.fatalError = sourceName + QStringLiteral(": cannot seek to resume offset");
            return result;
        }
        offset = control.startOffset;
    }
    qint64 lineBase = control.startLine; // lines before the next chunk
    result.endOffset = offset;
    result.endLine = lineBase;
    bool atFileStart = offset == 0;

    // Parsing runs on up to kWorkers threads while this thread reads ahead and hands finished
    // chunks to the sink strictly in input order (the engine needs time order, the ledger needs
    // offsets to advance monotonically). Each worker owns one Impl: simdjson parsers and the
    // interners are not thread-safe.
    // The name every event of this read carries, kept in the immortal arena (once per name
    // this reader sees): a shared reference-counted copy would have its count written by the
    // parser threads (a copy per event) and the threads that free older batches at once.
    if (d->sourceName != sourceName) {
        d->sourceName = sourceName;
        d->eventSource = ImmortalTextArena::process().keep(sourceName);
    }
    const QString eventSource = d->eventSource;
    std::vector<std::unique_ptr<Impl>> impls;
    impls.push_back(std::move(d));
    for (int i = 1; i < kWorkers; ++i)
        impls.push_back(std::make_unique<Impl>());
    std::vector<std::unique_ptr<ParserThread>> parsers;
    for (auto &impl : impls)
        parsers.push_back(std::make_unique<ParserThread>(*impl, eventSource));
    std::deque<std::pair<std::future<ParsedChunk>, size_t>> inFlight; // (result, parser)
    std::vector<size_t> idleParsers;
    for (size_t i = 0; i < parsers.size(); ++i)
        idleParsers.push_back(i);
    // Chunk buffers of the usual size, back from the parsers, to be filled again.
    std::vector<std::unique_ptr<char[]>> spareBuffers;
    constexpr size_t kBufferCapacity =
        size_t(kChunkSize) + size_t(kChunkSize) / 4 + SIMDJSON_PADDING;

    auto deliverOldest = [&] {
        auto [future, parser] = std::move(inFlight.front());
        inFlight.pop_front();
        ParsedChunk parsed = future.get();
        idleParsers.push_back(parser);
        if (parsed.spentCapacity == kBufferCapacity)
            spareBuffers.push_back(std::move(parsed.spentBytes));
        for (MalformedRecord &record : parsed.malformed)
            sink.onMalformed(std::move(record));
        result.events += qint64(parsed.events.size());
        sink.onEvents(std::move(parsed.events));
        result.malformed += qint64(parsed.malformed.size());
        result.endOffset = parsed.endOffset;
        result.endLine = parsed.endLine;
        result.heldBytes = parsed.heldBytes;
        if (control.checkpoint)
            control.checkpoint(result.endOffset, result.endLine);
    };
    auto countLines = [](const char *data, size_t size) {
        qint64 count = 0;
        for (const char *p = data, *end = data + size;
             (p = static_cast<const char *>(std::memchr(p, '\n', size_t(end - p)))); ++p)
            ++count;
        return count;
    };

    std::vector<char> carry; // the partial last line of the previous read
    bool eof = false;
    qint64 lastProgress = 0;
    while (!eof) {
        if (control.cancel && control.cancel->load(std::memory_order_relaxed)) {
            result.cancelled = true;
            break;
        }
        Chunk chunk;
        chunk.capacity =
            std::max(kBufferCapacity, carry.size() + size_t(kChunkSize) + SIMDJSON_PADDING);
        if (chunk.capacity == kBufferCapacity && !spareBuffers.empty()) {
            chunk.bytes = std::move(spareBuffers.back());
            spareBuffers.pop_back();
        } else {
            // (not zero-filled: the read overwrites it)
            chunk.bytes = std::make_unique_for_overwrite<char[]>(chunk.capacity);
        }
        if (!carry.empty()) // (memcpy from an empty vector's null data is undefined)
            std::memcpy(chunk.bytes.get(), carry.data(), carry.size());
        size_t filled = carry.size();
        const qint64 got = input.read(chunk.bytes.get() + filled, kChunkSize);
        if (got < 0) {
            result.fatalError = sourceName + QStringLiteral(": read error: ") + input.errorString();
            break;
        }
        // A file (or a pipe opened as QFile, e.g. stdin) blocks in read() until data or end of
        // file, so 0 means the end; other sequential devices may just be waiting for data.
        if (got == 0 && (!input.isSequential() || qobject_cast<QFileDevice *>(&input) ||
                         !input.waitForReadyRead(30000)))
            eof = true;
        result.bytesRead += got;
        filled += size_t(got);
        // Cut at the last newline; at end of file the unterminated last line is complete too.
        size_t cut = filled;
        if (!eof) {
            const char *data = chunk.bytes.get();
            size_t lastNl = filled;
            while (lastNl > 0 && data[lastNl - 1] != '\n')
                --lastNl;
            cut = lastNl;
        }
        carry.assign(chunk.bytes.get() + cut, chunk.bytes.get() + filled);
        if (cut == 0)
            continue; // no complete line yet (a line longer than a read): keep reading
        chunk.size = cut;
        std::memset(chunk.bytes.get() + cut, 0, SIMDJSON_PADDING);
        chunk.baseOffset = offset;
        chunk.baseLine = lineBase;
        chunk.atFileStart = atFileStart;
        chunk.holdUnterminated = eof && control.holdUnterminatedTail;
        atFileStart = false;
        const qint64 newlines = countLines(chunk.bytes.get(), cut);
        chunk.lines = newlines + ((cut > 0 && chunk.bytes[cut - 1] != '\n') ? 1 : 0);
        lineBase += chunk.lines;
        offset += qint64(cut);

        if (idleParsers.empty())
            deliverOldest();
        const size_t parser = idleParsers.back();
        idleParsers.pop_back();
        inFlight.emplace_back(parsers[parser]->parse(std::move(chunk)), parser);
        if (control.progress && (result.bytesRead - lastProgress >= kChunkSize || eof)) {
            lastProgress = result.bytesRead;
            control.progress(control.startOffset + result.bytesRead, total);
        }
    }
    while (!inFlight.empty())
        deliverOldest();
    parsers.clear(); // (joined before the Impls they use go)
    d = std::move(impls.front());
    return result;
}

} // namespace ts
