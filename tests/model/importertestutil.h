#pragma once
// Shared by the importer tests: a sink that keeps everything, helpers to run a reader over bytes
// or a file, and a dump of every field of an event (for "no secret anywhere" checks).

#include "ingest/ingest.h"

#include <QBuffer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <vector>

namespace ts::testutil {

struct CollectingSink final : IngestSink
{
    std::vector<RequestEvent> events;
    std::vector<MalformedRecord> malformed;
    void onEvent(RequestEvent &&event) override { events.push_back(std::move(event)); }
    void onMalformed(MalformedRecord &&record) override { malformed.push_back(std::move(record)); }
};

inline ReadResult readBytes(LogReader &reader, const QByteArray &bytes, CollectingSink &sink,
                            const QString &name = QStringLiteral("test-input"),
                            const ReadControl &control = {})
{
    QBuffer buffer;
    buffer.setData(bytes);
    buffer.open(QIODevice::ReadOnly);
    return reader.read(buffer, name, sink, control);
}

inline ReadResult readFile(LogReader &reader, const QString &path, CollectingSink &sink,
                           const ReadControl &control = {})
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        ReadResult failed;
        failed.fatalError = path + QStringLiteral(": cannot open");
        return failed;
    }
    return reader.read(file, path, sink, control);
}

inline QByteArray fileBytes(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return file.readAll();
}

inline QString thirdParty(const char *relative)
{
    return QStringLiteral(TS_THIRDPARTY_DIR "/") + QString::fromUtf8(relative);
}

// Every field of two events, provenance included (not the source name). QCOMPARE returns from
// here on a mismatch: callers in a loop check QTest::currentTestFailed().
inline void compareEvents(const RequestEvent &actual, const RequestEvent &expected)
{
    QCOMPARE(int(actual.type), int(expected.type));
    QCOMPARE(actual.tsMs, expected.tsMs);
    QCOMPARE(actual.identity, expected.identity);
    QCOMPARE(actual.app, expected.app);
    QCOMPARE(actual.tenant, expected.tenant);
    QCOMPARE(actual.service, expected.service);
    QCOMPARE(actual.category, expected.category);
    QCOMPARE(actual.method, expected.method);
    QCOMPARE(actual.url, expected.url);
    QCOMPARE(actual.status, expected.status);
    QCOMPARE(actual.refusedByClientBreaker, expected.refusedByClientBreaker);
    QCOMPARE(actual.errorCode, expected.errorCode);
    QCOMPARE(actual.retryAfter, expected.retryAfter);
    QCOMPARE(actual.headers.items(), expected.headers.items());
    QCOMPARE(actual.body, expected.body);
    QCOMPARE(actual.durationMs, expected.durationMs);
    QCOMPARE(actual.requestId, expected.requestId);
    QCOMPARE(actual.batchId, expected.batchId);
    QCOMPARE(actual.batchIndex, expected.batchIndex);
    QCOMPARE(actual.batchEnvelope, expected.batchEnvelope);
    QCOMPARE(actual.attempt, expected.attempt);
    QCOMPARE(actual.operationId, expected.operationId);
    QCOMPARE(actual.lane, expected.lane);
    QCOMPARE(actual.credits, expected.credits);
    QCOMPARE(actual.serviceBusNamespace, expected.serviceBusNamespace);
    QCOMPARE(actual.entity, expected.entity);
    QCOMPARE(actual.breakerScope, expected.breakerScope);
    QCOMPARE(actual.breakerState, expected.breakerState);
    QCOMPARE(actual.text, expected.text);
    QCOMPARE(actual.extraJson, expected.extraJson);
    QCOMPARE(actual.line, expected.line);
    QCOMPARE(actual.offset, expected.offset);
}

// Every text an event carries, concatenated: what could reach storage, a report or a log.
inline QString dumpEvent(const RequestEvent &e)
{
    QString all = e.identity + u'|' + e.app + u'|' + e.tenant + u'|' + e.service + u'|' +
                  e.category + u'|' + e.method + u'|' + e.url + u'|' + e.errorCode + u'|' +
                  e.retryAfter + u'|' + e.body + u'|' + e.requestId + u'|' + e.batchId + u'|' +
                  e.operationId + u'|' + e.lane + u'|' + e.serviceBusNamespace + u'|' + e.entity +
                  u'|' + e.breakerScope + u'|' + e.breakerState + u'|' + e.text + u'|' +
                  QString::fromUtf8(e.extraJson) + u'|';
    for (const auto &[name, value] : e.headers.items())
        all += name + u':' + value + u'|';
    return all;
}

// An unsigned JWT ("header.payload.signature", base64url) with the given claims.
inline QString makeJwt(const QJsonObject &claims)
{
    const auto part = [](const QByteArray &json) {
        return QString::fromLatin1(
            json.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
    };
    return part(R"({"alg":"RS256","typ":"JWT"})") + u'.' +
           part(QJsonDocument(claims).toJson(QJsonDocument::Compact)) + u'.' +
           part("signature-bytes-that-nobody-checks");
}

inline qint64 isoMs(const char *iso)
{
    return QDateTime::fromString(QString::fromLatin1(iso), Qt::ISODateWithMs).toMSecsSinceEpoch();
}

} // namespace ts::testutil
