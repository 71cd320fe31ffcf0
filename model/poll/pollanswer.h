#pragma once
// What a store's answer holds, read without trusting it: the bytes of an answer split into
// rows as they arrive (bounded row length), ClickHouse's JSONEachRow rows with their key, and
// the Azure Monitor query API's tables[] turned into canonical rows. Pure functions of the
// bytes (the network is storefetch.h's), so a fuzzer can drive them (tests/fuzz/fuzz_pollanswer).

#include <QByteArray>
#include <QByteArrayView>
#include <QHash>
#include <QList>
#include <QString>

namespace ts::poll {

// The longest row an answer may carry. A longer one is not kept (memory is bounded by the page,
// not by one row): it becomes a malformed row at its place, and reading goes on after it.
inline constexpr qsizetype kMaxRowBytes = 8 * 1024 * 1024;

// One page of an answer: its rows, in the store's order.
struct PageRows
{
    QList<QByteArray> lines; // one row each (canonical JSON), without its line end
    QList<qint64> keys;      // per line: the store's key in ms, -1 = the parsed row's ts
    // Rows longer than kMaxRowBytes, by their position in `lines` (an empty line stands there),
    // and the hash (rowHash) of each one's bytes, computed as they streamed past.
    QList<qsizetype> oversize;
    QList<quint64> oversizeHashes;
    qint64 bytes = 0;
};

// Splits an answer's body into rows as it arrives: blank lines are skipped, "\r\n" ends a row
// too. A row longer than maxRow is dropped as it streams (only its position is kept).
class RowSplitter
{
public:
    explicit RowSplitter(PageRows &page, qsizetype maxRow = kMaxRowBytes)
        : m_page(page), m_maxRow(maxRow)
    {
    }
    void feed(QByteArrayView piece);
    // The end of the answer. A last row without its line end is a row when the answer's length
    // was known (Content-Length, chunked); when the connection's close ended it, it may be cut:
    // false and *error.
    bool finish(bool framedByClose, QString *error);

private:
    void endRow(QByteArrayView row);

    PageRows &m_page;
    qsizetype m_maxRow;
    QByteArray m_partial;      // the current row's bytes so far
    bool m_skipping = false;   // the current row is over maxRow: dropped up to its line end
    quint64 m_skippedHash = 0; // rowHash of the dropped row's bytes so far
};

// A JSONEachRow row of the poller's ClickHouse query: {"__tskey":SECONDS,...}. *key is the
// second (a non-negative integer as the query computes it), *row the rest as a JSON object.
// False and *error when the row is not that (a store that answers something else, or
// ClickHouse's exception text written into an answer it had begun: "Code: 241. DB::...").
bool splitClickHouseRow(QByteArrayView line, qint64 *keySeconds, QByteArray *row, QString *error);

// The Azure Monitor Logs / Application Insights query API's answer.
struct KqlAnswer
{
    QList<QByteArray> rows; // canonical rows: {"field":value,...}
    QString error;          // the answer's error object, described (masked); empty = none
    bool hasTables = false; // tables[] was present
};

// Reads tables[0] (PrimaryResult): each column named by `fieldOfColumn` (column -> canonical
// field) or by itself (the timestamp column `tsColumn` as "ts"), null and empty values left
// out, numbers written as text in numeric fields (App Insights' resultCode) made numbers.
// `body` must have kJsonPadding bytes of spare capacity past its size (reserve them).
// False and *error when the body is not the API's JSON.
inline constexpr qsizetype kJsonPadding = 64;
bool parseKqlAnswer(const QByteArray &body, const QHash<QString, QString> &fieldOfColumn,
                    const QString &tsColumn, KqlAnswer *answer, QString *error);

} // namespace ts::poll
