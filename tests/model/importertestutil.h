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
