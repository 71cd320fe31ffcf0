#pragma once
// Secrets never reach disk, reports or logs. Every importer passes its events through
// redactEvent() before handing them on; everything here is a pure function.
//
// What counts as a secret: credentials (Authorization, cookies, API / subscription / function
// keys, client secrets, passwords), bearer tokens and anything shaped like a JWT, SAS
// signatures (sig=, SharedAccessSignature, SharedAccessKey, AccountKey). Values are replaced
// by the word REDACTED and everything around them stays byte-identical, so a redacted URL still
// classifies by the policy's URL rules and a redacted body still yields its errorCode.
//
// Cost: the functions return their input (implicitly shared, no allocation) when no trigger is
// present, which is the case for almost every event of a large log.

#include "core/requestevent.h"

#include <QByteArray>
#include <QString>
#include <QStringView>

#include <optional>

namespace ts::redact {

// The replacement written in place of a secret value.
inline constexpr QLatin1StringView kRedacted{"REDACTED"};

// Whether a header (name already lower-case) carries credentials and must be dropped.
bool isSecretHeader(QStringView lowerName);
// Whether a query-parameter / key name names a secret (case-insensitive): sig, code,
// access_token, refresh_token, id_token, client_secret, subscription-key, api-key, apikey, key,
// token, password, ... SAS fields that are not secret (sv, se, sp, sr, st, spr) are not.
bool isSecretParameterName(QStringView name);

// Masks the values of secret query (and fragment) parameters and the password of a userinfo
// ("https://user:pw@host"). Returns url itself (shared) when there is nothing to mask.
QString redactUrl(const QString &url);

// Masks secrets in free text (bodies, messages, raw JSON, connection strings): Bearer tokens,
// JWTs, sig=, SharedAccessKey=, SharedAccessSignature ..., AccountKey=, client_secret=,
// "access_token":"...", "refresh_token", "client_secret", Password=, Authorization: / Cookie:
// lines. Returns text itself (shared) when no trigger is present.
QString redactText(const QString &text);
// The same on UTF-8 / Latin-1 bytes (extraJson, raw records). Returns bytes itself when clean.
QByteArray redactBytes(const QByteArray &bytes);

// The one way a reader (or any other source of records: the listener, the poller, the session's
// fatal read errors) makes a MalformedRecord: the reason may quote the record it rejects, so its
// secrets are masked here (redactText), before any sink can see it.
[[nodiscard]] MalformedRecord malformedRecord(QString source, qint64 line, const QString &why);

// Drops secret headers (after reading the identity from an Authorization bearer token, see
// applyIdentityFromAuthorization), masks secrets in the URL, body, annotation text, the other
// header values and extraJson (whose unknown keys may be "authorization", "cookie", ...).
// Every other text field is scanned as free text. Sets event.secretsMasked.
// A reader that masked some fields itself (values it interns and bodies it caches, masked once
// per distinct value with redactShortField() and redactText(); headers it dropped or masked as
// it read them) says so, and only the rest is scanned: the URL, text, extraJson and the
// per-request ids.
enum class AlreadyMasked { Nothing, ShortFieldsHeadersAndBody };
void redactEvent(RequestEvent &event, AlreadyMasked already = AlreadyMasked::Nothing);
// Masks a short field's value (an identity, a method, an error code, a header value) as
// redactEvent() would.
void redactShortField(QString &value);
// What every sink calls on an event before it writes, sends or shows it: masks it unless its
// reader already did (the flag), so masking happens once and no path can skip it.
inline void ensureMasked(RequestEvent &event)
{
    if (!event.secretsMasked)
        redactEvent(event);
}

// A value from the input, to quote in a message (a malformed record's reason, an error): its
// secrets masked first, then any long random-looking run (a bare key in the wrong column that
// no pattern recognises), then cut to maxChars characters, in double quotes. The only way
// readers quote what they read.
QString quoteMasked(QStringView value, qsizetype maxChars = 64);

// Identity claims of a bearer JWT, read without checking the signature (Throttlescope only
// needs to know *who* was charged, not to trust them). The token itself is never stored.
struct JwtClaims
{
    QString user;     // upn > unique_name > preferred_username
    QString objectId; // oid
    QString app;      // appid > azp
    QString tenant;   // tid
    bool operator==(const JwtClaims &other) const = default;
};
// "Bearer eyJ..." (or a bare JWT). nullopt when the value is not a decodable JWT or its payload
// has none of the claims above.
std::optional<JwtClaims> claimsFromAuthorization(QStringView authorizationHeaderValue);
// Fills event.identity (upn > unique_name > preferred_username > oid), app and tenant from the
// token, each only when still empty.
void applyIdentityFromAuthorization(RequestEvent &event, QStringView authorizationValue);

} // namespace ts::redact
