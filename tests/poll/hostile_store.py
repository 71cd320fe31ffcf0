#!/usr/bin/env python3
"""A log store on loopback that misbehaves on purpose, for the poller's tests (tests/poll).

It holds rows (canonical NDJSON objects with a numeric "ts" in ms) and answers them the way the
poller's three store kinds ask, honestly or with one of the faults below:

  GET  /rows?after=MS[&limit=N]            an NDJSON endpoint: rows with ts >= after, in time
                                           order, at most min(N, config "page") of them
  POST /v1/workspaces/ID/query             the Azure Monitor query API: {"query": "T | where
                                           TimeGenerated >= datetime(X) | order by ... | take N"}
                                           answered with tables[] (columns TimeGenerated,
                                           Status, Identity, OperationId, Body)
  POST /?database=...                      ClickHouse's HTTP interface, for the few statements the
                                           poller sends (system.columns, max(ts), the page
                                           boundary, the page) on a table (ts UInt64 ms, identity,
                                           status, requestId, body)

Control (the test drives it over the same port):
  POST /_rows        NDJSON rows to add (each with a numeric "ts")
  POST /_config      JSON merged into the configuration (see CONFIG below)
  GET  /_seen        JSON: every request the *other origin* port received, with its headers
  GET  /_stats       JSON: requests per route

Faults (config "fault", applied to the next "fault_count" data requests, -1 = all):
  cut_cl        200 with the whole answer's Content-Length, half the body, then close
  cut_chunked   chunked, half the body, then close without the last chunk
  cut_gzip      gzip-encoded, the compressed stream cut in half, framed complete
  reset         half the body, then a TCP reset
  close_cut     no Content-Length (ended by close), cut in the middle of a row
  slow          the head, then one byte every "slow_seconds"
  huge          "huge_mb" megabytes of valid rows, ignoring the limit (no Content-Length:
                chunked)
  huge_line     one row of "huge_mb" megabytes
  redirect      307 to the same path on the other origin (another port)
  redirect_same 307 to the same path with &moved=1 on this origin
  repeat        the answer's rows, then all of them again
  status        answer with status "status" (and "retry_after" if set)
  ch_ignore_filter   ClickHouse: pages start at the oldest row whatever was asked (the
                     lower bound ignored, the LIMIT and the upper bound kept)
  ch_out_of_order    ClickHouse: the page's rows in reverse time order
  ch_bad_key         ClickHouse: the page's keys as text ("k12")

The first line printed on stdout is "PORT OTHER_PORT".
"""

import gzip
import json
import re
import socket
import struct
import sys
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

CONFIG = {
    "page": 1000000,       # NDJSON: rows per answer when no limit is asked
    "max_limit": 1000000,  # NDJSON: the largest limit it honours
    "fault": None,
    "fault_count": 0,
    "slow_seconds": 5,
    "huge_mb": 500,
    "status": 503,
    "retry_after": None,
    "kql_budget": None,    # KQL: bytes an answer may hold; past it rows are cut and PartialError
    "clock_offset_ms": 0,  # added to the Date header
}
LOCK = threading.Lock()  # protects ROWS, CONFIG, SEEN and STATS (handler threads)
ROWS = []                # (ts, line bytes), kept in time order (stable)
SEEN = []
STATS = {}


def take_fault():
    with LOCK:
        fault = CONFIG["fault"]
        count = CONFIG["fault_count"]
        if not fault or count == 0:
            return None
        if count > 0:
            CONFIG["fault_count"] = count - 1
        return fault


def rows_from(after, limit):
    with LOCK:
        out = [line for ts, line in ROWS if ts >= after]
    return out[:limit]


def http_date():
    return formatdate(time.time() + CONFIG["clock_offset_ms"] / 1000.0, usegmt=True)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def count(self, route):
        with LOCK:
            STATS[route] = STATS.get(route, 0) + 1

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def send_plain(self, status, body, content_type="application/x-ndjson", extra=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Date", http_date())
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def raw(self, data):
        self.wfile.write(data)
        self.wfile.flush()

    # ---- faults ---------------------------------------------------------------------------
    def answer(self, body, content_type="application/x-ndjson"):
        fault = take_fault()
        if fault in (None, "ch_ignore_filter", "ch_out_of_order", "ch_bad_key"):
            return self.send_plain(200, body, content_type)
        if fault == "repeat":
            return self.send_plain(200, body + body, content_type)
        if fault == "status":
            extra = [("Retry-After", str(CONFIG["retry_after"]))] if CONFIG["retry_after"] is not None else []
            return self.send_plain(CONFIG["status"], b'{"error":"busy"}', "application/json", extra)
        if fault in ("redirect", "redirect_same"):
            if fault == "redirect":
                target = "http://127.0.0.1:%d%s" % (OTHER_PORT, self.path)
            else:
                target = self.path + ("&" if "?" in self.path else "?") + "moved=1"
            self.send_response(307)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        head = "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nDate: %s\r\n" % (content_type, http_date())
        half = body[: len(body) // 2]
        self.close_connection = True
        if fault == "cut_cl":
            self.raw((head + "Content-Length: %d\r\n\r\n" % len(body)).encode() + half)
        elif fault == "cut_chunked":
            self.raw((head + "Transfer-Encoding: chunked\r\n\r\n").encode() + b"%x\r\n" % len(half) + half + b"\r\n")
        elif fault == "cut_gzip":
            packed = gzip.compress(body)
            packed = packed[: len(packed) // 2]
            self.raw((head + "Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(packed)).encode() + packed)
        elif fault == "reset":
            self.raw((head + "Content-Length: %d\r\n\r\n" % len(body)).encode() + half)
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        elif fault == "close_cut":
            cut = body[: max(1, body.rfind(b"\n", 0, len(body) // 2) + 5)]
            self.raw((head + "Connection: close\r\n\r\n").encode() + cut)
        elif fault == "slow":
            self.raw((head + "Content-Length: %d\r\n\r\n" % len(body)).encode())
            try:
                for i in range(len(body)):
                    self.raw(body[i:i + 1])
                    time.sleep(CONFIG["slow_seconds"])
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif fault in ("huge", "huge_line"):
            self.raw((head + "Transfer-Encoding: chunked\r\n\r\n").encode())
            self.stream_huge(fault == "huge_line")
        else:
            raise RuntimeError("unknown fault " + str(fault))

    def stream_huge(self, one_line):
        total = CONFIG["huge_mb"] * 1024 * 1024
        sent = 0
        base = 1771454400000
        n = 0
        try:
            while sent < total:
                if one_line:
                    piece = (b'{"ts":%d,"identity":"x","body":"' % base if sent == 0 else b"") + b"a" * (1 << 20)
                else:
                    lines = []
                    for _ in range(4096):
                        lines.append(b'{"ts":%d,"service":"graph","identity":"user-%d","status":200,'
                                     b'"url":"https://graph.microsoft.com/v1.0/me/messages","requestId":"r%d",'
                                     b'"body":"%s"}\n' % (base + n, n % 7, n, b"x" * 120))
                        n += 1
                    piece = b"".join(lines)
                self.raw(b"%x\r\n" % len(piece) + piece + b"\r\n")
                sent += len(piece)
            if one_line:
                tail = b'"}\n'
                self.raw(b"%x\r\n" % len(tail) + tail + b"\r\n")
            self.raw(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass

    # ---- routes ---------------------------------------------------------------------------
    def do_GET(self):
        url = urlparse(self.path)
        if url.path == "/_seen":
            with LOCK:
                return self.send_plain(200, json.dumps(SEEN).encode(), "application/json")
        if url.path == "/_stats":
            with LOCK:
                return self.send_plain(200, json.dumps(STATS).encode(), "application/json")
        if url.path == "/rows":
            self.count("rows")
            query = parse_qs(url.query)
            after = int(query.get("after", ["0"])[0])
            limit = min(int(query.get("limit", [str(CONFIG["page"])])[0]), CONFIG["max_limit"])
            lines = rows_from(after, limit)
            return self.answer(b"".join(line + b"\n" for line in lines))
        self.send_plain(404, b"no such route", "text/plain")

    def do_POST(self):
        url = urlparse(self.path)
        body = self.body()
        if url.path == "/_rows":
            added = []
            for line in body.splitlines():
                if line.strip():
                    added.append((int(json.loads(line)["ts"]), line.strip()))
            with LOCK:
                ROWS.extend(added)
                ROWS.sort(key=lambda row: row[0])
            return self.send_plain(200, b"{}", "application/json")
        if url.path == "/_config":
            with LOCK:
                CONFIG.update(json.loads(body))
            return self.send_plain(200, b"{}", "application/json")
        if url.path.startswith("/v1/"):
            self.count("kql")
            return self.kql(json.loads(body)["query"])
        if url.path == "/":
            self.count("clickhouse")
            return self.clickhouse(body.decode())
        self.send_plain(404, b"no such route", "text/plain")

    def kql(self, query):
        since = re.search(r"(>=?) datetime\(([^)]+)\)", query)
        take = int(re.search(r"take (\d+)", query).group(1))
        low = iso_ms(since.group(2)) + (1 if since.group(1) == ">" else 0)
        projected = "| project" in query  # the poller asks for the timestamp alone
        rows = []
        for line in rows_from(low, take):
            row = json.loads(line)
            if projected:
                rows.append([ms_iso(row["ts"])])
                continue
            rows.append([ms_iso(row["ts"]), str(row.get("status", "")), row.get("identity", ""),
                         row.get("operationId", ""), row.get("body", "")])
        error = None
        budget = CONFIG["kql_budget"]
        if budget is not None:
            used = 0
            for i, row in enumerate(rows):
                used += len(json.dumps(row))
                if used > budget:
                    rows = rows[:i]
                    error = {"code": "PartialError", "message": "There were some errors when processing your query.",
                             "details": [{"code": "EngineError", "message": "Query result set has exceeded the internal data size limit"}]}
                    break
        columns = [{"name": n, "type": t} for n, t in (("TimeGenerated", "datetime"), ("Status", "string"),
                                                       ("Identity", "string"), ("OperationId", "string"),
                                                       ("Body", "string"))]
        if projected:
            columns = columns[:1]
        answer = {"tables": [{"name": "PrimaryResult", "columns": columns, "rows": rows}]}
        if error:
            answer["error"] = error
        return self.answer(json.dumps(answer).encode(), "application/json")

    def clickhouse(self, sql):
        fault = CONFIG["fault"]
        if "system.columns" in sql:
            cols = [("ts", "UInt64"), ("identity", "String"), ("status", "UInt16"), ("requestId", "String"),
                    ("body", "String")]
            return self.send_plain(200, b"".join(json.dumps({"name": n, "type": t}).encode() + b"\n" for n, t in cols))
        if "max(`ts`)" in sql:
            with LOCK:
                top = max((ts for ts, _ in ROWS), default=0)
                n = len(ROWS)
            return self.send_plain(200, json.dumps({"m": float(top), "n": n}).encode() + b"\n")
        low = int(re.search(r"`ts` >= (\d+)", sql).group(1))
        high = re.search(r"`ts` < (\d+)", sql)
        with LOCK:
            rows = [(ts, line) for ts, line in ROWS]
        if fault == "ch_ignore_filter":
            low = 0
        limit = re.search(r"LIMIT (\d+), 1", sql)
        if limit:
            index = int(limit.group(1))
            chosen = [ts for ts, _ in rows if ts >= low]
            if index >= len(chosen):
                return self.send_plain(200, b"")
            return self.send_plain(200, json.dumps({"k": chosen[index] // 1000}, separators=(",", ":")).encode() + b"\n")
        page = [(ts, line) for ts, line in rows if ts >= low and (not high or ts < int(high.group(1)))]
        if fault == "ch_out_of_order":
            page.reverse()
        out = []
        for ts, line in page:
            row = json.loads(line)
            key = '"k%d"' % (ts // 1000) if fault == "ch_bad_key" else str(ts // 1000)
            fields = {"ts": ts, "identity": row.get("identity", ""), "status": row.get("status", 0),
                      "requestId": row.get("requestId", ""), "body": row.get("body", "")}
            out.append(('{"__tskey":%s,' % key).encode() + json.dumps(fields, separators=(",", ":")).encode()[1:] + b"\n")
        return self.answer(b"".join(out))


class OtherOrigin(BaseHTTPRequestHandler):
    """Another origin: whatever reaches it is recorded (a credential must never)."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        with LOCK:
            SEEN.append({"method": self.command, "path": self.path, "headers": dict(self.headers.items())})
        body = b'{"ts":1771454400000,"identity":"from-the-other-origin","status":200}\n'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = handle_any
    do_POST = handle_any


def iso_ms(text):
    from datetime import datetime, timezone
    value = datetime.strptime(text.replace("Z", ""), "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=timezone.utc)
    return int(round(value.timestamp() * 1000))


def ms_iso(ms):
    from datetime import datetime, timezone
    return datetime.fromtimestamp(ms / 1000.0, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # The poller hangs up on answers it refuses (too large, too slow): not an error here.
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


if __name__ == "__main__":
    main = Server(("127.0.0.1", 0), Handler)
    other = Server(("127.0.0.1", 0), OtherOrigin)
    OTHER_PORT = other.server_address[1]
    threading.Thread(target=other.serve_forever, daemon=True).start()
    print(main.server_address[1], OTHER_PORT, flush=True)
    try:
        main.serve_forever()
    except KeyboardInterrupt:
        pass
