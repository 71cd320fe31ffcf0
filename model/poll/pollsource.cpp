#include "pollsource.h"

#include "ingest/redaction.h"

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

// Whether a parameter of the URL would put a secret into it (stored, displayed), by the rules
// that mask URLs in events (ingest/redaction.h), so that whatever a log's URL would have
// masked is never stored here in clear: by its name, or by a value shaped like a credential.
bool isSecretParameter(const QString &name, const QString &value)
{
    if (redact::isSecretParameterName(name))
        return true;
    const QString probe =
        u"http://h/?"_qs + QString::fromLatin1(QUrl::toPercentEncoding(name)) + u"=v"_qs;
    return redact::redactUrl(probe) != probe || redact::redactText(value) != value;
}

bool readNumber(const QString &value, double *number)
{
    bool ok = false;
    *number = value.toDouble(&ok);
    return ok && std::isfinite(*number) && *number >= 0;
}

// The options of the URL that are the poller's own (see pollsource.h); false and *error for a
// bad value. `shownUrl` names the URL in messages.
bool takeOption(PollSource &source, const QString &name, const QString &value, bool *consumed,
                const QString &shownUrl, QString *error)
{
    *consumed = true;
    double number = 0;
    auto bad = [&](const char *what) {
        *error = QStringLiteral("%1: %2= takes %3").arg(shownUrl, name, QLatin1StringView(what));
        return false;
    };
    if (name == u"overlap" || name == u"skew" || name == u"timeout") {
        if (!readNumber(value, &number) || number > 86400 || (name == u"timeout" && number <= 0))
            return bad("seconds");
        if (name == u"overlap")
            source.overlapMs = qint64(number * 1000);
        else if (name == u"skew")
            source.skewMs = qint64(number * 1000);
        else
            source.timeoutMs = int(number * 1000);
    } else if (name == u"page" || name == u"retries") {
        bool ok = false;
        const int count = value.toInt(&ok);
        if (!ok || count < 1 || count > (1 << 24))
            return bad(name == u"page" ? "a row count" : "a number of attempts");
        (name == u"page" ? source.pageRows : source.retries) = count;
    } else if (name == u"max-answer") {
        if (!readNumber(value, &number) || number < 1 || number > 65536)
            return bad("megabytes");
        source.maxAnswerBytes = qint64(number * 1024 * 1024);
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
            if (eq <= 0)
                return bad("FIELD=COLUMN,...");
            source.mapping.insert(pair.left(eq).trimmed(), pair.mid(eq + 1).trimmed());
        }
    } else {
        *consumed = false;
    }
    return true;
}

bool parseClickHouse(PollSource &source, const QUrl &url, QUrl &endpoint, const QString &shownUrl,
                     QString *error)
{
    source.kind = SourceKind::ClickHouse;
    const QStringList parts = url.path().split(u'/', Qt::SkipEmptyParts);
    if (parts.size() != 2) {
        *error = QStringLiteral("%1: expected clickhouse://HOST:PORT/DATABASE/TABLE").arg(shownUrl);
        return false;
    }
    static const QRegularExpression identifier(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
    for (const QString &part : parts) {
        if (!identifier.match(part).hasMatch()) {
            *error = QStringLiteral("%1: \"%2\" is not a plain identifier").arg(shownUrl, part);
            return false;
        }
    }
    if (!source.msColumn.isEmpty() && !identifier.match(source.msColumn).hasMatch()) {
        *error = QStringLiteral("%1: ms= names a column").arg(shownUrl);
        return false;
    }
    source.database = parts.at(0);
    source.table = parts.at(1);
    source.user = source.user.isEmpty() ? url.userName() : source.user;
    endpoint.setScheme(QStringLiteral("http"));
    endpoint.setPort(url.port(8123));
    endpoint.setPath(QStringLiteral("/"));
    endpoint.setQuery(QString());
    return true;
}

} // namespace

QString PollSource::shown(const QString &url)
{
    return redact::redactText(redact::redactUrl(url));
}

bool PollSource::takesPageSize() const
{
    return url.contains(u"{limit}") || url.contains(u"%7Blimit%7D", Qt::CaseInsensitive);
}

std::optional<PollSource> PollSource::parse(const QString &text, QString *error)
{
    const QString shownUrl = shown(text.trimmed());
    // Tolerant: the {cursor} placeholder is not a URL character.
    const QUrl url(text.trimmed(), QUrl::TolerantMode);
    if (!url.isValid() || url.host().isEmpty()) {
        *error = QStringLiteral("%1: not a source URL (clickhouse://HOST:PORT/DB/TABLE, "
                                "kql+https://HOST/..., https://HOST/...{cursor})")
                     .arg(shownUrl);
        return std::nullopt;
    }
    if (!url.password().isEmpty()) {
        *error = QStringLiteral("%1: a password in the URL would be stored in clear; name the "
                                "variable or file that holds it (password-env=, password-file=)")
                     .arg(url.toDisplayString(QUrl::RemovePassword | QUrl::RemoveQuery));
        return std::nullopt;
    }
    const QString path = url.path();
    if (redact::redactText(path) != path) {
        *error = QStringLiteral("%1: the URL's path holds what looks like a credential; it would "
                                "be stored in clear")
                     .arg(url.adjusted(QUrl::RemovePath | QUrl::RemoveQuery).toDisplayString());
        return std::nullopt;
    }
    PollSource source;
    source.url = text.trimmed();
    QUrlQuery passOn; // parameters that belong to the endpoint (NDJSON: its own query)
    const auto items = QUrlQuery(url).queryItems(QUrl::FullyDecoded);
    for (const auto &[name, value] : items) {
        bool consumed = false;
        if (!takeOption(source, name, value, &consumed, shownUrl, error))
            return std::nullopt;
        if (consumed)
            continue;
        if (isSecretParameter(name, value)) {
            *error = QStringLiteral("%1: a secret in the URL (%2=) would be stored in clear; "
                                    "name the variable or file that holds it (token-env=, "
                                    "token-file=, password-env=, password-file=)")
                         .arg(url.adjusted(QUrl::RemoveQuery).toDisplayString(),
                              redact::quoteMasked(name, 40));
            return std::nullopt;
        }
        passOn.addQueryItem(name, value);
    }

    const QString scheme = url.scheme().toLower();
    QUrl endpoint = url;
    endpoint.setUserInfo({});
    if (scheme == u"clickhouse") {
        if (!parseClickHouse(source, url, endpoint, shownUrl, error))
            return std::nullopt;
    } else if (scheme == u"kql+http" || scheme == u"kql+https") {
        source.kind = SourceKind::Kql;
        if (source.table.isEmpty() && source.kqlQuery.isEmpty()) {
            *error =
                QStringLiteral("%1: name the table (table=) or a query (query=)").arg(shownUrl);
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
                         .arg(shownUrl);
            return std::nullopt;
        }
        endpoint.setQuery(passOn);
    } else {
        *error = QStringLiteral("%1: unknown source scheme \"%2\" (clickhouse, kql+https, "
                                "kql+http, https, http)")
                     .arg(shownUrl, redact::quoteMasked(scheme, 20));
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
