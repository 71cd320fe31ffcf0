#!/usr/bin/env python3
"""Issue 29's figures from the command line: hostile-store scenarios (tests/poll/hostile_store.py)
against one or more throttlescope binaries (e.g. a build before the change and one after) with
`poll --once`, counting the rows lost and duplicated in the workspace and the credentials another
origin received.  Usage: hostile_figures.py tests/poll/hostile_store.py BINARY [BINARY...]"""
import json, os, sqlite3, subprocess, sys, tempfile, time, urllib.request

store_py = sys.argv[1]
binaries = sys.argv[2:]

def start_store():
    p = subprocess.Popen([sys.executable, store_py], stdout=subprocess.PIPE)
    port, other = map(int, p.stdout.readline().split())
    return p, port, other

def post(port, path, data):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method="POST")
    return urllib.request.urlopen(req, timeout=30).read()

def get(port, path):
    return urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30).read()

def row(ts, i):
    return (json.dumps({"ts": ts, "service": "graph", "identity": f"user-{i % 5}", "status": 200,
                        "requestId": f"r{i}", "operationId": f"r{i}"}) + "\n").encode()

def url(kind, port, extra=""):
    if kind == "ndjson":
        return f"http://127.0.0.1:{port}/rows?after={{cursor}}" + extra
    if kind == "kql":
        return (f"kql+http://127.0.0.1:{port}/v1/workspaces/w/query?table=T&map=status=Status,"
                f"identity=Identity,operationId=OperationId,body=Body" + extra)
    return f"clickhouse://127.0.0.1:{port}/default/requests?x=1" + extra

def poll(binary, ws, source, timeout=30):
    env = dict(os.environ, TS_TEST_STORE_SECRET="s3cr3t-credential")
    try:
        r = subprocess.run([binary, "poll", "--once", "--status-interval", "0", "--workspace", ws,
                            "--source", source], capture_output=True, text=True, timeout=timeout, env=env)
        return r.returncode, r.stderr.strip().splitlines()[-1:] if r.stderr else []
    except subprocess.TimeoutExpired:
        return "timeout", []

def tally(ws, ids):
    if not os.path.exists(ws):
        return len(ids), 0, 0
    db = sqlite3.connect(ws)
    got = [r[0] or r[1] for r in db.execute("SELECT request_id, operation_id FROM events")]
    db.close()
    seen = {}
    for g in got:
        seen[g] = seen.get(g, 0) + 1
    lost = sum(1 for i in ids if seen.get(i, 0) == 0)
    dup = sum(seen.get(i, 0) - 1 for i in ids if seen.get(i, 0) > 1)
    return lost, dup, len(got)

def scenario(name, kind, binary, setup, polls, ids, extra=""):
    p, port, other = start_store()
    try:
        ws = tempfile.mktemp(suffix=".tsws")
        out = []
        for step in polls:
            step(port)
            out.append(poll(binary, ws, url(kind, port, extra)))
        lost, dup, total = tally(ws, ids)
        seen = json.loads(get(port, "/_seen"))
        creds = sum(1 for s in seen if "s3cr3t-credential" in json.dumps(s))
        stats = json.loads(get(port, "/_stats"))
        print(f"  {name:38s} {kind:10s} lost {lost:5d} dup {dup:5d} stored {total:5d} "
              f"| creds at other origin {creds} | requests {sum(stats.values())} | exit {[o[0] for o in out]} {out[-1][1][:1]}")
    finally:
        p.kill()

def cfg(port, **kw):
    post(port, "/_config", json.dumps(kw).encode())

now = lambda: int(time.time() * 1000)
for binary in binaries:
    print(binary)
    for kind in ("ndjson", "kql", "clickhouse"):
        t0 = now()
        scenario("1 future row", kind, binary, None, [
            lambda port: post(port, "/_rows", b"".join(row(t0 - 20000 + i * 100, i) for i in range(100))),
            lambda port: post(port, "/_rows", row(t0 + 3600000, 100)),
            lambda port: post(port, "/_rows", b"".join(row(now() - 2000 + (i - 101) * 10, i) for i in range(101, 201)))],
            [f"r{i}" for i in range(201)])
    for kind in ("kql", "clickhouse", "ndjson"):
        extra = "&page=100" if kind != "ndjson" else ""
        scenario("2 250 rows/instant, pages of 100", kind, binary, None, [
            lambda port: (cfg(port, page=100), post(port, "/_rows", b"".join(row(1771454400000 + (i // 250) * 1000, i) for i in range(5000))))],
            [f"r{i}" for i in range(5000)], extra)
    for kind in ("ndjson", "kql", "clickhouse"):
        scenario("3 cut off (cut_cl, 2 answers cut)", kind, binary, None, [
            lambda port: (post(port, "/_rows", b"".join(row(1771454400000 + i * 7, i) for i in range(2000))),
                          cfg(port, fault="cut_cl", fault_count=2))],
            [f"r{i}" for i in range(2000)])
    for kind in ("ndjson", "kql", "clickhouse"):
        secret = "&password-env=TS_TEST_STORE_SECRET" if kind == "clickhouse" else "&token-env=TS_TEST_STORE_SECRET"
        scenario("7 redirect to another origin", kind, binary, None, [
            lambda port: (post(port, "/_rows", b"".join(row(1771454400000 + i * 10, i) for i in range(50))),
                          cfg(port, fault="redirect", fault_count=-1))],
            [f"r{i}" for i in range(50)], secret)
    scenario("11 ClickHouse pager ignores the filter", "clickhouse", binary, None, [
        lambda port: (post(port, "/_rows", b"".join(row(1771454400000 + (i // 3) * 300, i) for i in range(600))),
                      cfg(port, fault="ch_ignore_filter", fault_count=-1))],
        [f"r{i}" for i in range(600)], "&page=50")
    scenario("12 rows repeated inside one answer", "ndjson", binary, None, [
        lambda port: (post(port, "/_rows", b"".join(row(1771454400000 + (i // 2) * 10, i) for i in range(300))),
                      cfg(port, fault="repeat", fault_count=1))],
        [f"r{i}" for i in range(300)])
