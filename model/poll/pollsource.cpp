#include "pollsource.h"

#include <QFile>
#include <QRegularExpression>
#include <QUrlQuery>

namespace ts::poll {

QString sourceKindName(SourceKind kind)
{
    switch (kind) {
    case SourceKind::ClickHouse:
        return QStringLiteral("clickhouse");
    case SourceKind::Kql:
        return QStringLiteral("kql");
    case SourceKind::NdjsonHttp:
        return QStringLiteral("ndjson-http");
    }
    return {};
}

namespace {

// Parameter names that would put a secret into the URL (stored, displayed): refused.
bool isSecretParameter(const QString &name)
{
    const QString lower = name.toLower();
    for (const char *word : {"password", "passwd", "token", "key", "secret", "sig", "apikey",
                             "api-key", "access_token", "code"}) {
        if (lower == QLatin1StringView(word))
            return true;
    }
    return false;
}

} // namespace

std::optional<PollSource> PollSource::parse(const QString &text, QString *error)
{
    // Tolerant: the {cursor} placeholder is not a URL character.
    const QUrl url(text.trimmed(), QUrl::TolerantMode);
    if (!url.isValid() || url.host().isEmpty()) {
        // Without its query: a refused URL may carry a secret there.
        *error = QStringLiteral("%1: not a source URL (clickhouse://HOST:PORT/DB/TABLE, "
                                "kql+https://HOST/..., https://HOST/...{cursor})")
                     .arg(text.section(u'?', 0, 0));
        return std::nullopt;
    }
    if (!url.password().isEmpty()) {
        *error = QStringLiteral("%1: a password in the URL would be stored in clear; name the "
                                "variable or file that holds it (password-env=, password-file=)")
                     .arg(url.toDisplayString(QUrl::RemovePassword));
        return std::nullopt;
    }
    PollSource source;
    source.url = text.trimmed();
    QUrlQuery query(url);
    QUrlQuery passOn; // parameters that belong to the endpoint (NDJSON: its own query)
    bool ok = true;
    const auto items = query.queryItems(QUrl::FullyDecoded);
    for (const auto &[name, value] : items) {
        if (name == u"overlap") {
            const double seconds = value.toDouble(&ok);
            if (!ok || seconds < 0) {
                *error = QStringLiteral("%1: overlap= takes seconds").arg(text);
                return std::nullopt;
            }
            source.overlapMs = qint64(seconds * 1000);
        } else if (name == u"page") {
            source.pageRows = value.toInt(&ok);
            if (!ok || source.pageRows < 1) {
                *error = QStringLiteral("%1: page= takes a row count").arg(text);
                return std::nullopt;
            }
        } else if (name == u"user") {
            source.user = value;
        } else if (name == u"password-env") {
            source.passwordEnv = value;
        } else if (name == u"password-file") {
            source.passwordFile = value;
        } else if (name == u"token-env") {
            source.tokenEnv = value;
        } else if (name == u"token-file") {
            source.tokenFile = value;
        } else if (name == u"ms") {
            source.msColumn = value;
        } else if (name == u"table") {
            source.table = value;
        } else if (name == u"query") {
            source.kqlQuery = value;
        } else if (name == u"map") {
            for (const QString &pair : value.split(u',', Qt::SkipEmptyParts)) {
                const qsizetype eq = pair.indexOf(u'=');
                if (eq <= 0) {
                    *error = QStringLiteral("%1: map= takes FIELD=COLUMN,...").arg(text);
                    return std::nullopt;
                }
                source.mapping.insert(pair.left(eq).trimmed(), pair.mid(eq + 1).trimmed());
            }
        } else if (isSecretParameter(name)) {
            *error = QStringLiteral("%1: a secret in the URL (%2=) would be stored in clear; "
                                    "name the variable or file that holds it (token-env=, "
                                    "token-file=, password-env=, password-file=)")
                         .arg(url.adjusted(QUrl::RemoveQuery).toString(), name);
            return std::nullopt;
        } else {
            passOn.addQueryItem(name, value);
        }
    }

    const QString scheme = url.scheme().toLower();
    QUrl endpoint = url;
    endpoint.setUserInfo({});
    if (scheme == u"clickhouse") {
        source.kind = SourceKind::ClickHouse;
        const QStringList parts = url.path().split(u'/', Qt::SkipEmptyParts);
        if (parts.size() != 2) {
            *error = QStringLiteral("%1: expected clickhouse://HOST:PORT/DATABASE/TABLE").arg(text);
            return std::nullopt;
        }
        static const QRegularExpression identifier(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
        for (const QString &part : parts) {
            if (!identifier.match(part).hasMatch()) {
                *error = QStringLiteral("%1: \"%2\" is not a plain identifier").arg(text, part);
                return std::nullopt;
            }
        }
        if (!source.msColumn.isEmpty() && !identifier.match(source.msColumn).hasMatch()) {
            *error = QStringLiteral("%1: ms= names a column").arg(text);
            return std::nullopt;
        }
        source.database = parts.at(0);
        source.table = parts.at(1);
        source.user = source.user.isEmpty() ? url.userName() : source.user;
        endpoint.setScheme(QStringLiteral("http"));
        endpoint.setPort(url.port(8123));
        endpoint.setPath(QStringLiteral("/"));
        endpoint.setQuery(QString());
    } else if (scheme == u"kql+http" || scheme == u"kql+https") {
        source.kind = SourceKind::Kql;
        if (source.table.isEmpty() && source.kqlQuery.isEmpty()) {
            *error = QStringLiteral("%1: name the table (table=) or a query (query=)").arg(text);
            return std::nullopt;
        }
        endpoint.setScheme(scheme.mid(4));
        endpoint.setQuery(passOn);
    } else if (scheme == u"http" || scheme == u"https") {
        source.kind = SourceKind::NdjsonHttp;
        if (!text.contains(u"{cursor}") && !text.contains(u"%7Bcursor%7D") &&
            !text.contains(u"{cursor_iso}") && !text.contains(u"%7Bcursor_iso%7D")) {
            *error = QStringLiteral("%1: an NDJSON endpoint's URL needs a {cursor} (or "
                                    "{cursor_iso}) placeholder where the poller puts the time "
                                    "to read from")
                         .arg(text);
            return std::nullopt;
        }
        endpoint.setQuery(passOn);
    } else {
        *error = QStringLiteral("%1: unknown source scheme \"%2\" (clickhouse, kql+https, "
                                "kql+http, https, http)")
                     .arg(text, scheme);
        return std::nullopt;
    }
    source.endpoint = endpoint;
    return source;
}

QString PollSource::secret(QString *error) const
{
    const QString env = kind == SourceKind::ClickHouse ? passwordEnv : tokenEnv;
    const QString file = kind == SourceKind::ClickHouse ? passwordFile : tokenFile;
    if (!env.isEmpty()) {
        const QByteArray value = qgetenv(env.toLocal8Bit().constData());
        if (value.isEmpty())
            *error = QStringLiteral("the environment variable %1 is not set").arg(env);
        return QString::fromUtf8(value).trimmed();
    }
    if (!file.isEmpty()) {
        QFile in(file);
        if (!in.open(QIODevice::ReadOnly)) {
            *error = QStringLiteral("%1: %2").arg(file, in.errorString());
            return {};
        }
        return QString::fromUtf8(in.readAll()).trimmed();
    }
    return {};
}

QString PollSource::kqlTimeColumn() const
{
    if (const auto it = mapping.constFind(QStringLiteral("ts")); it != mapping.cend())
        return it.value();
    return endpoint.path().contains(u"/apps/") ? QStringLiteral("timestamp")
                                                : QStringLiteral("TimeGenerated");
}

} // namespace ts::poll
