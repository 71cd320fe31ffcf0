#!/usr/bin/env python3
"""Writes the seeded-secret corpus that tests/cli/tst_secrets.cpp feeds to every command.

Each secret is a distinct, recognisable value (secrets.txt, one per line, with its kind); the
test greps every output (workspace and WAL, --out, report text and JSON, stderr, HTTP answers,
the dashboard's model text) for each of them, and for any 12-character piece of them, so a
truncated quote of a secret is caught too. Re-run this script only to change the corpus; the
files it writes are committed.
"""
import base64
import json
import os

here = os.path.dirname(os.path.abspath(__file__))


def b64u(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


JWT_HEADER = b64u(b'{"typ":"JWT","alg":"RS256","kid":"seeded"}')
JWT_PAYLOAD = b64u(json.dumps({"aud": "https://graph.microsoft.com", "upn": "alice@contoso.com",
                               "appid": "note-bridge", "tid": "72f988bf",
                               "nonce": "JwtPayloadNonce01"}).encode())
JWT_SIGNATURE = "JwtSignature01" + "Qx7_Lm2-Rt9Zw4Kp8Vn3Yb6Hc1Jd5Gf0" * 3
JWT = f"{JWT_HEADER}.{JWT_PAYLOAD}.{JWT_SIGNATURE}"

# kind -> secret value (what must never be found in any output)
SECRETS = {
    "jwt-bearer": JWT,
    "basic-auth": "dXNlcjpCYXNpY1NlY3JldDAy",
    "cookie": "CookieSecret03xyzQ",
    "set-cookie": "SetCookieSecret04xyz",
    "api-key": "ApiKeySecret05abcdef",
    "x-api-key": "XApiKeySecret06abcdef",
    "apim-subscription-key": "ApimKeySecret07abcdef",
    "sas-sig": "SasSignature08abcdef",
    "oauth-code": "OAuthCode09abcdefgh",
    "access-token": "AccessToken10abcdef",
    "refresh-token": "RefreshToken11abcdef",
    "client-secret": "ClientSecret12abcdef",
    "account-key": "AccountKey13abcdefgh",
    "shared-access-key": "SharedKey14abcdefghij",
    "url-password": "UrlPassword15abcdef",
    "function-key-header": "FunctionKey16abcdef",
    "function-key-code": "FunctionCode17abcdef",
    "servicebus-sas-sig": "SbSignature18abcdef",
    "id-token": "IdToken19abcdefghij",
    "form-password": "FormPassword20abcdef",
    "form-oauth-code": "FormOAuthCode21abcdef",
    "aad-token-header": "AadTokenHeader22abcdef",
    "proxy-authorization": "UHJveHlTZWNyZXQyMwxyz",
    "x-functions-code-in-body": "BodyFunctionCode24abc",
}
S = SECRETS

TS = "2026-02-18T22:44:%02d.%03dZ"


def ts(i):
    return TS % (i % 60, (i * 37) % 1000)


def write(name, text):
    with open(os.path.join(here, name), "w", newline="") as f:
        f.write(text)


SAS_URL = (f"https://acct.blob.core.windows.net/exports/page.json?sv=2021-08-06&se=2026-02-19"
           f"&sr=b&sp=r&sig={S['sas-sig']}%2B%3D")
CODE_URL = f"https://note-bridge.example/callback?code={S['oauth-code']}&state=s1"
USERINFO_URL = (f"https://migrator:{S['url-password']}@graph.microsoft.com/v1.0/me/onenote/pages"
                f"?access_token={S['access-token']}")
FUNCTION_URL = f"https://fn-migrate.azurewebsites.net/api/copy?code={S['function-key-code']}"
TOKEN_URL = "https://login.microsoftonline.com/72f988bf/oauth2/v2.0/token"
FORM_BODY = (f"grant_type=authorization_code&code={S['form-oauth-code']}&client_id=note-bridge"
             f"&client_secret={S['client-secret']}&password={S['form-password']}"
             f"&id_token={S['id-token']}")
REFRESH_BODY = json.dumps({"token_type": "Bearer", "refresh_token": S["refresh-token"],
                           "error": {"code": "TooManyRequests", "message": "slow down"}})
CONNECTION_BODY = (f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={S['account-key']}==;"
                   f"EndpointSuffix=core.windows.net")
SB_BODY = (f"Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;"
           f"SharedAccessKey={S['shared-access-key']}=")
SB_SAS = f"SharedAccessSignature sr=sb%3A%2F%2Fns&sig={S['servicebus-sas-sig']}&se=1771459999&skn=Root"
REQUEST_HEADERS = {
    "Authorization": "Bearer " + JWT,
    "Cookie": "session=" + S["cookie"],
    "api-key": S["api-key"],
    "x-api-key": S["x-api-key"],
    "Ocp-Apim-Subscription-Key": S["apim-subscription-key"],
    "x-functions-key": S["function-key-header"],
    "ServiceBusAuthorization": SB_SAS,
    "x-ms-token-aad-access-token": S["aad-token-header"],
    "Proxy-Authorization": "Basic " + S["proxy-authorization"],
}
RESPONSE_HEADERS = {"Set-Cookie": f"auth={S['set-cookie']}; Path=/; HttpOnly",
                    "x-ms-throttle-scope": "Application"}

# ---- canonical NDJSON: secrets in every field, then malformed lines that quote them ----------
lines = []


def ev(i, **fields):
    record = {"ts": ts(i), "identity": "sp-migrator", "service": "graph", "method": "GET",
              "url": "https://graph.microsoft.com/v1.0/me", "status": 200}
    record.update(fields)
    return json.dumps(record)


lines.append(ev(1, url=SAS_URL))
lines.append(ev(2, url=CODE_URL))
lines.append(ev(3, url=USERINFO_URL))
lines.append(ev(4, url=FUNCTION_URL, status=429, body=REFRESH_BODY, retryAfter="2"))
lines.append(ev(5, body=CONNECTION_BODY, status=503))
lines.append(ev(6, body=SB_BODY, status=500))
lines.append(ev(7, headers={"authorization": "Bearer " + JWT,
                            "set-cookie": RESPONSE_HEADERS["Set-Cookie"],
                            "x-ms-throttle-scope": "Application"}))
lines.append(ev(8, requestHeaders=REQUEST_HEADERS))
lines.append(ev(9, method="POST", url=TOKEN_URL, body=FORM_BODY, status=400))
lines.append(ev(10, identity="Bearer " + JWT, operationId=SAS_URL, requestId="code=" + S["form-oauth-code"]))
lines.append(json.dumps({"ts": ts(11), "type": "annotation", "text": "rotated key " + SB_BODY}))
lines.append(ev(12, body=f"x-functions-key: {S['x-functions-code-in-body']}", status=401))
lines.append(ev(13, requestHeaders={"Authorization": "Basic " + S["basic-auth"]}))
# malformed lines: each reason would quote a secret
lines.append(json.dumps({"ts": "Bearer " + JWT}))
lines.append(json.dumps({"ts": JWT}))
lines.append(json.dumps({"ts": f"sig={S['sas-sig']}&se=1"}))
lines.append(json.dumps({"ts": ts(13), "type": f"code={S['form-oauth-code']}"}))
lines.append(json.dumps({"ts": ts(14), "type": "Bearer " + JWT}))
lines.append(json.dumps({"ts": ts(15), "status": "Bearer " + JWT}))
lines.append('{"ts":"%s","url":"%s", broken' % (ts(16), SAS_URL))
lines.append(json.dumps({"ts": ts(17), "headers": "Bearer " + JWT}))
lines.append(json.dumps({"ts": ts(18), "durationMs": "AccountKey=" + S["account-key"]}))
lines.append(json.dumps({"ts": ts(19), "identity": {"client_secret": S["client-secret"]}}))
lines.append(f"Authorization: Bearer {JWT}")
lines.append(FORM_BODY)
write("corpus.ndjson", "\n".join(lines) + "\n")


# ---- HAR 1.2 ------------------------------------------------------------------------------
def har_headers(mapping):
    return [{"name": k, "value": v} for k, v in mapping.items()]


def har_entry(i, url, method="GET", status=200, post=None, body=""):
    request = {"method": method, "url": url, "httpVersion": "HTTP/1.1",
               "headers": har_headers(REQUEST_HEADERS),
               "cookies": [{"name": "session", "value": S["cookie"]}],
               "queryString": [], "headersSize": -1, "bodySize": -1}
    if post is not None:
        request["postData"] = {"mimeType": "application/x-www-form-urlencoded", "text": post,
                               "params": [{"name": "client_secret", "value": S["client-secret"]}]}
    return {"startedDateTime": ts(i), "time": 12.5, "request": request,
            "response": {"status": status, "statusText": "", "httpVersion": "HTTP/1.1",
                         "headers": har_headers(RESPONSE_HEADERS),
                         "cookies": [{"name": "auth", "value": S["set-cookie"]}],
                         "content": {"size": len(body), "mimeType": "application/json", "text": body},
                         "redirectURL": CODE_URL, "headersSize": -1, "bodySize": -1},
            "cache": {}, "timings": {"send": 1, "wait": 10, "receive": 1.5}}


har = {"log": {"version": "1.2", "creator": {"name": "seeded", "version": "1"}, "entries": [
    har_entry(1, SAS_URL),
    har_entry(2, USERINFO_URL, status=429, body=REFRESH_BODY),
    har_entry(3, TOKEN_URL, method="POST", post=FORM_BODY, status=400, body=CONNECTION_BODY),
    har_entry(4, FUNCTION_URL, body=SB_BODY),
]}}
bad = har_entry(5, SAS_URL)
bad["startedDateTime"] = "Bearer " + JWT
har["log"]["entries"].append(bad)
write("corpus.har", json.dumps(har, indent=1) + "\n")

# ---- CSV (Application Insights requests export) -------------------------------------------
def csv_field(text):
    return '"' + text.replace('"', '""') + '"'


csv_rows = ["timestamp [UTC],id,name,url,success,resultCode,duration,customDimensions,operation_Id,user_AuthenticatedId"]
dims = json.dumps({"Authorization": "Bearer " + JWT, "Retry-After": "3", "api-key": S["api-key"]})
csv_rows.append(",".join([ts(1), "req-1", "GET /exports", csv_field(SAS_URL), "False", "429", "3",
                          csv_field(dims), "op-1", "alice@contoso.com"]))
csv_rows.append(",".join([ts(2), "req-2", "GET /callback", csv_field(CODE_URL), "True", "200", "4",
                          "", csv_field("code=" + S["form-oauth-code"]), "alice@contoso.com"]))
csv_rows.append(",".join([ts(3), "req-3", "POST /token", csv_field(USERINFO_URL), "True", "200", "5",
                          "", "op-3", csv_field("Bearer " + JWT)]))
csv_rows.append(",".join([csv_field("Bearer " + JWT), "req-4", "GET /x", csv_field(FUNCTION_URL),
                          "True", "200", "5", "", "op-4", "bob"]))
csv_rows.append(",".join([ts(5), "req-5", "GET /y", csv_field(TOKEN_URL), "True",
                          csv_field(f"sig={S['sas-sig']}"), "5", "", "op-5", "bob"]))
write("corpus.csv", "\r\n".join(csv_rows) + "\r\n")


# ---- OTLP/JSON traces ---------------------------------------------------------------------
def attr(key, value):
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, list):
        return {"key": key, "value": {"arrayValue": {"values": [{"stringValue": v} for v in value]}}}
    return {"key": key, "value": {"stringValue": value}}


def span(i, url, status, extra=()):
    start = 1771454649000000000 + i * 1000000000
    return {"traceId": "5B8EFFF798038103D269B633813FC60C", "spanId": "EEE19B7EC3C1B1%02d" % i,
            "name": "GET", "kind": 3, "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(start + 50000000),
            "attributes": [attr("http.request.method", "GET"), attr("url.full", url),
                           attr("http.response.status_code", status),
                           attr("http.request.header.authorization", ["Bearer " + JWT]),
                           attr("http.request.header.cookie", ["session=" + S["cookie"]]),
                           attr("http.request.header.ocp-apim-subscription-key", [S["apim-subscription-key"]]),
                           attr("http.response.header.set-cookie", [RESPONSE_HEADERS["Set-Cookie"]]),
                           attr("enduser.id", "alice@contoso.com")] + list(extra)}


otlp = {"resourceSpans": [{"resource": {"attributes": [attr("service.name", "note-bridge")]},
                           "scopeSpans": [{"scope": {"name": "seeded"}, "spans": [
                               span(1, SAS_URL, 200),
                               span(2, USERINFO_URL, 429, [attr("exception.message", REFRESH_BODY)]),
                               span(3, FUNCTION_URL, 200, [attr("db.connection_string", CONNECTION_BODY)]),
                               span(4, CODE_URL, 200, [attr("http.request.body", FORM_BODY)]),
                           ]}]}]}
bad_span = span(5, SAS_URL, 200)
bad_span["startTimeUnixNano"] = "Bearer " + JWT
otlp["resourceSpans"][0]["scopeSpans"][0]["spans"].append(bad_span)
write("corpus.otlp.json", json.dumps(otlp, indent=1) + "\n")

# ---- Combined access log --------------------------------------------------------------------
def access(i, url, status, referer="-", user="-"):
    return (f'10.0.0.{i} - {user} [18/Feb/2026:22:44:{i:02d} +0000] "GET {url} HTTP/1.1" {status} 512 '
            f'"{referer}" "note-bridge/1.0"')


def path_of(url):
    return url.split("://", 1)[1].split("/", 1)[1] if "://" in url else url


access_lines = [
    access(1, "/" + path_of(SAS_URL), 200, referer=CODE_URL),
    access(2, "/" + path_of(USERINFO_URL), 429, referer=FUNCTION_URL),
    access(3, "/api/copy?code=" + S["function-key-code"], 200, user="migrator"),
    access(4, "/cb?" + FORM_BODY, 200),
    f'10.0.0.5 - - [Bearer {JWT}] "GET /x?sig={S["sas-sig"]} HTTP/1.1" 200 1 "-" "-"',
    f'10.0.0.6 - - [18/Feb/2026:22:44:06 +0000] "GET /x?sig={S["sas-sig"]} HTTP/1.1" {S["api-key"]} 1 "-" "-"',
]
write("corpus.access.log", "\n".join(access_lines) + "\n")

# ---- vcrpy cassette (YAML) -----------------------------------------------------------------
def yaml_quote(text):
    return "'" + text.replace("'", "''") + "'"


def interaction(uri, status, body, headers=REQUEST_HEADERS):
    out = ["- request:", "    body: " + yaml_quote(FORM_BODY), "    headers:"]
    for k, v in headers.items():
        out += [f"      {k}:", f"      - {yaml_quote(v)}"]
    out += ["    method: POST", f"    uri: {uri}", "  response:", "    body:",
            f"      string: {yaml_quote(body)}", "    headers:",
            "      Set-Cookie:", f"      - {yaml_quote(RESPONSE_HEADERS['Set-Cookie'])}",
            "      Date:", "      - Wed, 18 Feb 2026 22:44:09 GMT",
            "    status:", f"      code: {status}", "      message: X"]
    return out


vcr = ["interactions:"]
vcr += interaction(SAS_URL, 200, REFRESH_BODY)
vcr += interaction(USERINFO_URL, 429, CONNECTION_BODY)
vcr += interaction(FUNCTION_URL, 200, SB_BODY)
vcr += interaction(CODE_URL, 200, "{}", {"Authorization": "Basic " + S["basic-auth"]})
# malformed: a status code that is a credential
vcr += interaction(SAS_URL, S["api-key"], REFRESH_BODY)
vcr.append("version: 1")
write("corpus.vcr.yaml", "\n".join(vcr) + "\n")

with open(os.path.join(here, "secrets.txt"), "w") as f:
    for kind, value in SECRETS.items():
        f.write(f"{kind}\t{value}\n")
