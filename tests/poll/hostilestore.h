#pragma once
// The misbehaving loopback store of tests/poll/hostile_store.py (a separate python process, so
// a store that stalls or streams gigabytes never shares the test's event loop), driven over its
// control routes with the blocking client of tests/tools/testhttp.h.

#include "testhttp.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QString>

namespace ts::testhostile {

class Store
{
public:
    ~Store()
    {
        m_process.kill();
        m_process.waitForFinished(5000);
    }

    bool start(QString *error)
    {
        m_process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        // Debian's python3 (installer/setup.sh installs it), whatever else PATH offers first.
        QString python =
            QStandardPaths::findExecutable(QStringLiteral("python3"), {QStringLiteral("/usr/bin")});
        if (python.isEmpty())
            python = QStringLiteral("python3");
        m_process.start(python, {QStringLiteral(TS_HOSTILE_STORE)});
        if (!m_process.waitForStarted(10'000)) {
            *error = QStringLiteral("hostile_store.py did not start: ") + m_process.errorString();
            return false;
        }
        while (!m_process.canReadLine()) {
            if (!m_process.waitForReadyRead(10'000)) {
                *error = QStringLiteral("hostile_store.py did not say its ports: ") +
                         m_process.errorString();
                return false;
            }
        }
        const QByteArray line = m_process.readLine().trimmed();
        const QList<QByteArray> ports = line.split(' ');
        m_port = quint16(ports.value(0).toUInt());
        m_otherPort = quint16(ports.value(1).toUInt());
        if (m_port == 0 || m_otherPort == 0) {
            *error = QStringLiteral("hostile_store.py said \"%1\"").arg(QString::fromUtf8(line));
            return false;
        }
        return true;
    }

    [[nodiscard]] quint16 port() const { return m_port; }
    [[nodiscard]] quint16 otherPort() const { return m_otherPort; }

    bool addRows(const QByteArray &ndjson)
    {
        return testhttp::post(m_port, "/_rows", ndjson).startsWith("HTTP/1.1 200");
    }
    bool configure(const QJsonObject &settings)
    {
        return testhttp::post(m_port, "/_config",
                              QJsonDocument(settings).toJson(QJsonDocument::Compact),
                              "application/json")
            .startsWith("HTTP/1.1 200");
    }
    // The requests the other origin received (each with its headers).
    QJsonArray seenByOtherOrigin() { return QJsonDocument::fromJson(body("/_seen")).array(); }
    QJsonObject stats() { return QJsonDocument::fromJson(body("/_stats")).object(); }

    // The source URL of each store kind on this server, with extra options appended.
    QString url(const QString &kind, const QString &options = {}) const
    {
        if (kind == u"ndjson")
            return QStringLiteral("http://127.0.0.1:%1/rows?after={cursor}").arg(m_port) + options;
        if (kind == u"kql")
            return QStringLiteral("kql+http://127.0.0.1:%1/v1/workspaces/w/query?table=T&"
                                  "map=status=Status,identity=Identity,operationId=OperationId,"
                                  "body=Body")
                       .arg(m_port) +
                   options;
        return QStringLiteral("clickhouse://127.0.0.1:%1/default/requests?x=1").arg(m_port) +
               options;
    }

private:
    QByteArray body(const QByteArray &path)
    {
        const QByteArray response = testhttp::get(m_port, path);
        return response.mid(response.indexOf("\r\n\r\n") + 4);
    }

    QProcess m_process;
    quint16 m_port = 0;
    quint16 m_otherPort = 0;
};

} // namespace ts::testhostile
