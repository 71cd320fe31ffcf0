#include "pollanswer.h"

#include "ingest/redaction.h"
#include "poll/pollcursor.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <simdjson.h>

#include <cmath>
#include <cstring>

namespace ts::poll {

static_assert(kJsonPadding >= simdjson::SIMDJSON_PADDING, "the KQL body's spare capacity");

// ---- rows of a streamed answer -----------------------------------------------------------------

void RowSplitter::endRow(QByteArrayView row)
{
    if (m_skipping) {
        m_skipping = false;
        m_page.oversize.append(m_page.lines.size());
        m_page.oversizeHashes.append(m_skippedHash);
        m_page.lines.append(QByteArray());
        m_page.keys.append(-1);
        return;
    }
    if (row.endsWith('\r'))
        row.chop(1);
    bool blank = true;
    for (const char c : row)
        blank = blank && (c == ' ' || c == '\t' || c == '\r');
    if (blank)
        return;
    m_page.lines.append(row.toByteArray());
    m_page.keys.append(-1);
}

void RowSplitter::feed(QByteArrayView piece)
{
    m_page.bytes += piece.size();
    while (!piece.isEmpty()) {
        const char *newline =
            static_cast<const char *>(std::memchr(piece.data(), '\n', size_t(piece.size())));
        const qsizetype take = newline ? newline - piece.data() : piece.size();
        if (m_skipping) {
            m_skippedHash = continueRowHash(m_skippedHash, piece.first(take));
        } else {
            if (m_partial.size() + take > m_maxRow) {
                m_skipping = true; // dropped from here to its line end
                m_skippedHash = continueRowHash(rowHash(m_partial.constData(), m_partial.size()),
                                                piece.first(take));
                m_partial = QByteArray();
            } else if (newline && m_partial.isEmpty()) {
                endRow(piece.first(take)); // the common case: no copy into m_partial first
                piece = piece.sliced(take + 1);
                continue;
            } else {
                m_partial.append(piece.first(take));
            }
        }
        if (!newline)
            return;
        endRow(m_partial);
        m_partial = QByteArray();
        piece = piece.sliced(take + 1);
    }
}

bool RowSplitter::finish(bool framedByClose, QString *error)
{
    if (m_partial.isEmpty() && !m_skipping)
        return true;
    if (framedByClose) {
        *error = QStringLiteral("the answer ended inside a row when the connection closed (no "
                                "Content-Length): it may have been cut off");
        return false;
    }
    endRow(m_partial);
    m_partial = QByteArray();
    return true;
}

// ---- ClickHouse
// ----------------------------------------------------------------------------------

bool splitClickHouseRow(QByteArrayView line, qint64 *keySeconds, QByteArray *row, QString *error)
{
    static constexpr QByteArrayView kKeyPrefix = "{\"__tskey\":";
    if (!line.startsWith(kKeyPrefix)) {
        *error = line.startsWith("Code:")
                     ? QStringLiteral("ClickHouse failed in the middle of its answer: %1")
                           .arg(redact::quoteMasked(
                               QString::fromUtf8(line.first(std::min<qsizetype>(line.size(), 300))),
                               300))
                     : QStringLiteral("ClickHouse answered a row that is not the query's "
                                      "(no __tskey first)");
        return false;
    }
    qsizetype at = kKeyPrefix.size();
    qint64 key = 0;
    qsizetype digits = 0;
    while (at < line.size() && line.at(at) >= '0' && line.at(at) <= '9' && digits < 15) {
        key = key * 10 + (line.at(at) - '0');
        ++at;
        ++digits;
    }
    const bool closes = at < line.size() && (line.at(at) == ',' || line.at(at) == '}');
    if (digits == 0 || !closes) {
        *error = QStringLiteral("ClickHouse answered a key that is not a whole number of "
                                "seconds: %1")
                     .arg(redact::quoteMasked(
                         QString::fromUtf8(
                             line.sliced(kKeyPrefix.size())
                                 .first(std::min<qsizetype>(40, line.size() - kKeyPrefix.size()))),
                         40));
        return false;
    }
    *keySeconds = key;
    *row = line.at(at) == '}' ? QByteArray("{}") : "{" + line.sliced(at + 1).toByteArray();
    return true;
}

// ---- the Azure Monitor query API
// -----------------------------------------------------------------

namespace {

using namespace simdjson;

// Canonical fields that are numbers (a KQL column may carry them as text: App Insights'
// resultCode is a string).
bool isNumericField(const QString &field)
{
    return field == u"status" || field == u"durationMs" || field == u"attempt" ||
           field == u"batchIndex" || field == u"credits";
}

QByteArray jsonString(const QString &text)
{
    const QByteArray array = QJsonDocument(QJsonArray{text}).toJson(QJsonDocument::Compact);
    return array.mid(1, array.size() - 2);
}

QString describeError(std::string_view rawError)
{
    const QJsonObject error =
        QJsonDocument::fromJson(QByteArray(rawError.data(), qsizetype(rawError.size()))).object();
    QString text = error.value(u"code").toString();
    const QString message = error.value(u"message").toString();
    if (!message.isEmpty())
        text += (text.isEmpty() ? QString() : u": "_qs) + message;
    const QJsonArray details = error.value(u"details").toArray();
    for (const QJsonValue &detail : details) {
        const QString more = detail.toObject().value(u"message").toString();
        if (!more.isEmpty())
            text += u" (" + more + u')';
    }
    const QJsonObject inner = error.value(u"innererror").toObject();
    if (!inner.value(u"message").toString().isEmpty())
        text += u" (" + inner.value(u"message").toString() + u')';
    if (text.isEmpty())
        text = QStringLiteral("an error without a message");
    return redact::quoteMasked(text, 300);
}

struct KqlColumn
{
    QByteArray key; // "field": JSON-encoded, with its colon
    bool numeric = false;
};

// One cell into `out`; false when it is left out (null, empty text).
bool appendCell(ondemand::value cell, const KqlColumn &column, QByteArray &out)
{
    ondemand::json_type type;
    if (cell.type().get(type))
        return false;
    std::string_view raw;
    switch (type) {
    case ondemand::json_type::null:
        return false;
    case ondemand::json_type::string: {
        std::string_view text;
        if (cell.get_string().get(text) || text.empty())
            return false;
        out += column.key;
        if (column.numeric) {
            bool ok = false;
            const double number =
                QByteArray::fromRawData(text.data(), qsizetype(text.size())).toDouble(&ok);
            if (ok && std::isfinite(number)) {
                out += QByteArray::number(number, 'g', 17);
                return true;
            }
        }
        out += jsonString(QString::fromUtf8(text.data(), qsizetype(text.size())));
        return true;
    }
    case ondemand::json_type::object: {
        ondemand::object object;
        if (cell.get_object().get(object) || object.raw_json().get(raw))
            return false;
        break;
    }
    case ondemand::json_type::array: {
        ondemand::array array;
        if (cell.get_array().get(array) || array.raw_json().get(raw))
            return false;
        break;
    }
    default:
        raw = cell.raw_json_token();
        break;
    }
    out += column.key;
    out += QByteArrayView(raw.data(), qsizetype(raw.size())).trimmed();
    return true;
}

bool readColumns(ondemand::object table, const QHash<QString, QString> &fieldOfColumn,
                 const QString &tsColumn, QList<KqlColumn> *columns)
{
    ondemand::array list;
    if (table.find_field_unordered("columns").get_array().get(list))
        return false;
    for (auto entry : list) {
        ondemand::object column;
        std::string_view name;
        if (entry.get_object().get(column) ||
            column.find_field_unordered("name").get_string().get(name))
            return false;
        const QString columnName = QString::fromUtf8(name.data(), qsizetype(name.size()));
        const QString field =
            fieldOfColumn.value(columnName, columnName == tsColumn ? u"ts"_qs : columnName);
        columns->append({jsonString(field) + ':', isNumericField(field)});
    }
    return true;
}

bool readRows(ondemand::object table, const QList<KqlColumn> &columns, KqlAnswer *answer)
{
    ondemand::array rows;
    if (table.find_field_unordered("rows").get_array().get(rows))
        return false;
    for (auto rowResult : rows) {
        ondemand::array row;
        if (rowResult.get_array().get(row))
            return false;
        QByteArray out("{");
        qsizetype index = 0;
        for (auto cellResult : row) {
            ondemand::value cell;
            if (cellResult.get(cell))
                return false;
            if (index < columns.size()) {
                const qsizetype before = out.size();
                if (out.size() > 1)
                    out += ',';
                if (!appendCell(cell, columns.at(index), out))
                    out.truncate(before);
            }
            ++index;
        }
        out += '}';
        answer->rows.append(std::move(out));
    }
    return true;
}

} // namespace

bool parseKqlAnswer(const QByteArray &body, const QHash<QString, QString> &fieldOfColumn,
                    const QString &tsColumn, KqlAnswer *answer, QString *error)
{
    *answer = KqlAnswer();
    auto notJson = [&](simdjson::error_code code) {
        *error = QStringLiteral("the query API's answer is not its JSON (%1)")
                     .arg(QString::fromLatin1(simdjson::error_message(code)));
        return false;
    };
    if (size_t(body.capacity() - body.size()) < size_t(kJsonPadding)) {
        QByteArray padded;
        padded.reserve(body.size() + kJsonPadding);
        padded.append(body);
        return parseKqlAnswer(padded, fieldOfColumn, tsColumn, answer, error);
    }
    {
        // On-demand reading trusts the document's structure (it assumes an object's fields end
        // where they should: fuzz_pollanswer reached simdjson's "unreachable" in
        // find_field_unordered on a broken object), so a store's answer is validated whole
        // first. The answer is at most max-answer= bytes; the tape is freed before reading.
        simdjson::dom::parser validator;
        simdjson::dom::element validated;
        if (const auto code =
                validator.parse(body.constData(), size_t(body.size()), false).get(validated))
            return notJson(code);
    }
    ondemand::parser parser;
    padded_string_view view(body.constData(), size_t(body.size()), size_t(body.capacity()));
    ondemand::document document;
    if (const auto code = parser.iterate(view).get(document))
        return notJson(code);
    // The error object first (a partial answer carries both), then the first table: its
    // columns, then its rows (read in a second pass if they came first).
    ondemand::object root;
    if (const auto code = document.get_object().get(root))
        return notJson(code);
    // After an error other than a missing field or a wrong type, the on-demand parser must not
    // be used again (simdjson abandons its iterator: the fuzzer found a null parser read when
    // a broken error object was followed by the search for tables[]).
    const auto recoverable = [](simdjson::error_code code) {
        return code == simdjson::NO_SUCH_FIELD || code == simdjson::INCORRECT_TYPE;
    };
    ondemand::value errorValue;
    ondemand::object errorObject;
    simdjson::error_code errorCode = root.find_field_unordered("error").get(errorValue);
    if (!errorCode)
        errorCode = errorValue.get_object().get(errorObject);
    if (errorCode && !recoverable(errorCode))
        return notJson(errorCode);
    if (!errorCode) {
        std::string_view rawError;
        if (const auto rawCode = errorObject.raw_json().get(rawError))
            return notJson(rawCode);
        answer->error = describeError(rawError);
    }
    ondemand::array tables;
    if (const auto code = root.find_field_unordered("tables").get_array().get(tables); code)
        return recoverable(code) ? true : notJson(code); // no tables[]: the caller tells an
                                                         // error answer from a broken one
    answer->hasTables = true;
    QList<KqlColumn> columns;
    for (auto tableResult : tables) {
        ondemand::object table;
        if (const auto code = tableResult.get_object().get(table))
            return notJson(code);
        if (!readColumns(table, fieldOfColumn, tsColumn, &columns))
            return notJson(simdjson::TAPE_ERROR);
        if (table.reset().error() || !readRows(table, columns, answer))
            return notJson(simdjson::TAPE_ERROR);
        break; // PrimaryResult only
    }
    return true;
}

} // namespace ts::poll
