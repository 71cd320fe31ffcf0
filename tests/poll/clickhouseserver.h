#pragma once
// A real ClickHouse server for a test: Debian's clickhouse-server (installer/setup.sh installs
// it) run as a child process on free loopback ports with its data in a temporary directory and
// a generated config.xml (no service manager). Queries go over its HTTP interface through the
// blocking loopback client of tests/tools/testhttp.h.

#include "testhttp.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QThread>

namespace ts::testch {

inline QString serverBinary()
{
    for (const char *path : {"/usr/bin/clickhouse-server", "/usr/sbin/clickhouse-server"}) {
        if (QFile::exists(QString::fromLatin1(path)))
            return QString::fromLatin1(path);
    }
    return QStandardPaths::findExecutable(QStringLiteral("clickhouse-server"));
}

inline quint16 freePort()
{
    QTcpServer probe;
    probe.listen(QHostAddress::LocalHost, 0);
    return probe.serverPort();
}

class Server
{
public:
    ~Server() { stop(); }

    // Starts the server and waits for /ping; false and *error when it does not answer.
    bool start(QString *error)
    {
        const QString binary = serverBinary();
        if (binary.isEmpty()) {
            *error = QStringLiteral("clickhouse-server is not installed");
            return false;
        }
        const QString root = m_dir.path();
        QDir().mkpath(root + u"/data");
        QDir().mkpath(root + u"/tmp");
        QDir().mkpath(root + u"/user_files");
        m_httpPort = freePort();
        const quint16 tcpPort = freePort();
        const QString config =
            QStringLiteral(
                "<?xml version=\"1.0\"?>\n<yandex>\n"
                "  <logger><level>warning</level><console>1</console></logger>\n"
                "  <http_port>%1</http_port>\n  <tcp_port>%2</tcp_port>\n"
                "  <listen_host>127.0.0.1</listen_host>\n"
                "  <path>%3/data/</path>\n  <tmp_path>%3/tmp/</tmp_path>\n"
                "  <user_files_path>%3/user_files/</user_files_path>\n"
                "  <timezone>UTC</timezone>\n"
                "  <mark_cache_size>268435456</mark_cache_size>\n"
                "  <max_concurrent_queries>20</max_concurrent_queries>\n"
                "  <users><default><password></password><networks><ip>127.0.0.1</ip>"
                "</networks><profile>default</profile><quota>default</quota></default></users>\n"
                "  <profiles><default><max_threads>2</max_threads></default></profiles>\n"
                "  <quotas><default></default></quotas>\n"
                "  <default_profile>default</default_profile>\n"
                "  <default_database>default</default_database>\n</yandex>\n")
                .arg(m_httpPort)
                .arg(tcpPort)
                .arg(root);
        QFile file(root + u"/config.xml");
        if (!file.open(QIODevice::WriteOnly) || file.write(config.toUtf8()) < 0) {
            *error = file.errorString();
            return false;
        }
        file.close();
        m_process.setProcessChannelMode(QProcess::MergedChannels);
        m_process.setWorkingDirectory(root);
        m_process.start(binary, {u"--config-file="_qs + root + u"/config.xml"_qs});
        if (!m_process.waitForStarted(10'000)) {
            *error = m_process.errorString();
            return false;
        }
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < 40'000) {
            if (testhttp::exchange(m_httpPort,
                                   "GET /ping HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
                                   "close\r\n\r\n",
                                   2)
                    .contains("Ok."))
                return true;
            if (m_process.state() == QProcess::NotRunning)
                break;
            QThread::msleep(100);
        }
        m_process.waitForReadyRead(100);
        *error = QStringLiteral("clickhouse-server did not answer /ping: ") +
                 QString::fromLocal8Bit(m_process.readAll().right(2000));
        return false;
    }

    void stop()
    {
        if (m_process.state() == QProcess::NotRunning)
            return;
        m_process.terminate();
        if (!m_process.waitForFinished(15'000)) {
            m_process.kill();
            m_process.waitForFinished(5000);
        }
    }

    [[nodiscard]] quint16 httpPort() const { return m_httpPort; }

    // Runs one statement (data may follow it, as in INSERT ... FORMAT JSONEachRow); returns the
    // answer's body, or a null array with *error on an HTTP error.
    QByteArray query(const QByteArray &sql, QString *error = nullptr)
    {
        const QByteArray response = testhttp::exchange(
            m_httpPort,
            "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: " +
                QByteArray::number(sql.size()) + "\r\nConnection: close\r\n\r\n" + sql,
            600);
        const qsizetype headEnd = response.indexOf("\r\n\r\n");
        const QByteArray head = response.left(headEnd);
        const QByteArray body = headEnd < 0 ? QByteArray() : response.mid(headEnd + 4);
        if (!head.startsWith("HTTP/1.1 200") && !head.startsWith("HTTP/1.0 200")) {
            if (error)
                *error = QString::fromUtf8(head + "\n" + body);
            return {};
        }
        if (!head.toLower().contains("transfer-encoding: chunked"))
            return body.isNull() ? QByteArray("") : body;
        QByteArray plain(""); // decoded chunks: SIZE\r\nDATA\r\n ... 0\r\n\r\n
        qsizetype at = 0;
        while (at < body.size()) {
            const qsizetype eol = body.indexOf("\r\n", at);
            if (eol < 0)
                break;
            bool ok = false;
            const qsizetype size = body.mid(at, eol - at).trimmed().toLongLong(&ok, 16);
            if (!ok || size == 0)
                break;
            plain += body.mid(eol + 2, size);
            at = eol + 2 + size + 2;
        }
        return plain;
    }

private:
    QTemporaryDir m_dir;
    QProcess m_process;
    quint16 m_httpPort = 0;
};

} // namespace ts::testch
