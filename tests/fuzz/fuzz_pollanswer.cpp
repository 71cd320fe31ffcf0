// libFuzzer harness for what a polled store answers (poll/pollanswer.h), all three store kinds
// on the same bytes: an NDJSON endpoint's body split into rows as it arrives (in pieces cut at
// a place the input chooses), ClickHouse's JSONEachRow rows with their key, and the Azure
// Monitor query API's tables[]. Invariants: no row longer than the cap is kept, every oversize
// row has its hash, a kept row never holds a line end, a ClickHouse key is never negative.
#include "poll/pollanswer.h"

#include <QHash>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace {

void splitRows(const QByteArray &bytes, qsizetype cut)
{
    constexpr qsizetype kMaxRow = 4096; // small, so the fuzzer reaches the oversize path
    ts::poll::PageRows page;
    ts::poll::RowSplitter splitter(page, kMaxRow);
    splitter.feed(QByteArrayView(bytes).first(cut));
    splitter.feed(QByteArrayView(bytes).sliced(cut));
    QString error;
    const bool whole = splitter.finish(cut % 2 == 0, &error);
    if (!whole && error.isEmpty())
        std::abort(); // a refused ending must say why
    if (page.oversize.size() != page.oversizeHashes.size())
        std::abort();
    for (const QByteArray &line : std::as_const(page.lines)) {
        if (line.size() > kMaxRow || line.contains('\n'))
            std::abort();
    }
    for (const qsizetype at : std::as_const(page.oversize)) {
        if (at < 0 || at >= page.lines.size() || !page.lines.at(at).isEmpty())
            std::abort();
    }
}

void clickHouseRows(const QByteArray &bytes)
{
    for (const QByteArray &line : bytes.split('\n')) {
        qint64 key = 0;
        QByteArray row;
        QString error;
        if (ts::poll::splitClickHouseRow(line, &key, &row, &error)) {
            if (key < 0 || !row.startsWith('{'))
                std::abort();
        } else if (error.isEmpty()) {
            std::abort();
        }
    }
}

void kqlAnswer(const QByteArray &bytes)
{
    QByteArray body = bytes;
    body.reserve(body.size() + ts::poll::kJsonPadding);
    const QHash<QString, QString> fieldOfColumn{
        {QStringLiteral("Status"), QStringLiteral("status")},
        {QStringLiteral("Identity"), QStringLiteral("identity")}};
    ts::poll::KqlAnswer answer;
    QString error;
    if (!ts::poll::parseKqlAnswer(body, fieldOfColumn, QStringLiteral("TimeGenerated"), &answer,
                                  &error)) {
        if (error.isEmpty())
            std::abort();
        return;
    }
    for (const QByteArray &row : std::as_const(answer.rows)) {
        if (!row.startsWith('{') || !row.endsWith('}'))
            std::abort();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray bytes(reinterpret_cast<const char *>(data), static_cast<qsizetype>(size));
    const qsizetype cut = size == 0 ? 0 : qsizetype(data[0]) * qsizetype(size) / 256;
    splitRows(bytes, cut);
    clickHouseRows(bytes);
    kqlAnswer(bytes);
    return 0;
}
