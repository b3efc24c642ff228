"""Security of the dashboard: token, bind address, host header, read-only store, SQL injection, path traversal."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from ranklens.web.app import ENDPOINTS
from web_support import Client, LiveServer, client_for, file_digest, raw_get

TOKEN = "s3cret-token-for-tests"

INJECTIONS = [
    "' OR '1'='1",
    "x' OR 1=1 --",
    "'; DROP TABLE groups; --",
    "v1'); DELETE FROM items; --",
    "ranker' UNION SELECT table_name, 1, 1 FROM information_schema.tables --",
    "\\'; COPY groups TO '/tmp/ranklens-leak.csv'; --",
    "' || (SELECT count(*) FROM groups) || '",
]
FILTERS = ["model", "model_version", "environment", "group_id", "country", "device", "query_type"]


def _params_of(path: str) -> list[str]:
    ep = next(e for e in ENDPOINTS if e.path == path)
    names = [p.name for p in ep.params]
    if ep.filters:
        names += FILTERS
    if ep.prefixed_filters:
        names += [pre + f for pre in ep.prefixed_filters for f in FILTERS]
    return names


@pytest.mark.slow
def test_sql_injection_in_every_parameter(sim_store: str) -> None:
    """Every parameter of every endpoint, with injection strings: a clean 4xx or an (empty) answer, never a 500,
    and the store file is not changed."""
    before = file_digest(sim_store)
    client = client_for(sim_store, config={}, cache=False)
    base = {"/api/explain": {"group_id": "g1"}, "/api/slices": {"start": "2026-10-09", "end": "2026-10-15"},
            "/api/report": {"ci": "none"}, "/api/compare": {"n_resamples": "50"}, "/api/heatmap": {"limit": "3"}}
    tried = 0
    clean_baseline = client.get("/api/baseline").json()
    for ep in ENDPOINTS:
        for name in _params_of(ep.path):
            for evil in INJECTIONS:
                params = {**base.get(ep.path, {}), name: evil}
                r = client.get(ep.path, params=params)
                tried += 1
                assert r.status_code in (200, 400, 404), (ep.path, name, evil, r.status_code, r.text)
                body = r.json()
                if r.status_code == 200 and name in FILTERS + [f"a_{f}" for f in FILTERS] + [f"b_{f}" for f in FILTERS]:
                    # a filter value that matches nothing selects nothing
                    rows = body.get("rows")
                    if isinstance(rows, list):
                        assert rows == [], (ep.path, name, evil)
                    if ep.path == "/api/baseline":
                        # the baseline's own environment (training) replaces an environment filter; a version
                        # without training lists (this one exists nowhere) gets the model's, by the monitors'
                        # rule, and the answer says so
                        assert body["n_groups"] == 0 or (name == "environment" and body == clean_baseline) or (
                            name == "model_version" and body["spec"]["selection"].endswith(
                                "(the model's versions together: this version has none)"))
                    if ep.path == "/api/compare":
                        assert body["a"]["n_groups"] == 0 or body["b"]["n_groups"] == 0
                else:
                    assert "error" in body or r.status_code == 200
        # and as a parameter *name*
        r = client.get(ep.path, params={**base.get(ep.path, {}), "country' OR 1=1 --": "US"})
        assert r.status_code == 400 and r.json()["parameter"] == "country' OR 1=1 --"
    assert tried > 500
    assert file_digest(sim_store) == before
    assert not Path("/tmp/ranklens-leak.csv").exists()
    # the store still answers as before
    assert client.get("/api/info").json()["groups"] > 0


@pytest.mark.parametrize("raw", [
    b"/static/../../pyproject.toml",
    b"/static/../app.py",
    b"/static/..%2fapp.py",
    b"/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    b"/static/%2e%2e%2f%2e%2e%2fcli.py",
    b"/static/..%5c..%5capp.py",
    b"/static/..\\app.py",
    b"/static//etc/passwd",
    b"/static/%2fetc%2fpasswd",
    b"/static/....//....//etc/passwd",
    b"/static/%252e%252e/app.py",
    b"/static/app.py",
    b"/static/__init__.py",
    b"/static/",
    b"/static/style.css%00.py",
    b"/../../../../etc/passwd",
])
def test_path_traversal_is_404(seed_store: str, raw: bytes) -> None:
    from ranklens.web import create_app

    status, body = raw_get(create_app(seed_store, config={}), raw)
    assert status == 404, (raw, status, body[:200])
    assert b"root:" not in body and b"import" not in body


def test_path_traversal_over_a_real_socket(seed_store: str) -> None:
    """The same through uvicorn, with request lines that no client library would normalise."""
    from ranklens.web import create_app

    srv = LiveServer(create_app(seed_store, config={}))
    try:
        for raw in (b"/static/../../../../etc/passwd", b"/static/..%2f..%2f..%2fweb%2fapp.py", b"/static/%2e%2e/app.py",
                    b"/static/../app.py"):
            with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
                s.sendall(b"GET " + raw + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                data = b""
                while chunk := s.recv(65536):
                    data += chunk
            status = int(data.split(b" ", 2)[1])
            assert status in (400, 404), (raw, data[:200])
            assert b"root:" not in data and b"def create_app" not in data
        with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
            s.sendall(b"GET /static/style.css HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            assert s.recv(64).startswith(b"HTTP/1.1 200")
    finally:
        srv.stop()


def test_token_is_required_on_every_route(seed_store: str) -> None:
    from ranklens.web import create_app

    app = create_app(seed_store, config={}, token=TOKEN)
    client = Client(app, base_url="http://192.0.2.10:8000")  # any Host: the token is what counts
    routes = ["/", "/slices", "/groups", "/compare", "/api/docs", "/api/openapi.json", "/static/app.js",
              "/favicon.ico", "/static/../app.py"] + [ep.path for ep in ENDPOINTS]
    for path in routes:
        for headers in ({}, {"Authorization": "Bearer wrong-token"}, {"Authorization": f"Bearer {TOKEN}x"},
                        {"Authorization": "Basic " + TOKEN}, {"Cookie": "ranklens_token=nope"}):
            r = client.get(path, headers=headers)
            assert r.status_code == 401, (path, headers, r.status_code)
            assert r.headers["www-authenticate"].startswith("Bearer")
        assert client.get(path + "?token=wrong").status_code == 401
    ok = {"Authorization": f"Bearer {TOKEN}"}
    assert client.get("/api/info", headers=ok).status_code == 200
    assert client.get("/api/info", headers={"X-Ranklens-Token": TOKEN}).status_code == 200
    assert client.get(f"/api/info?token={TOKEN}").status_code == 200
    assert client.get("/", headers={"Cookie": f"ranklens_token={TOKEN}"}).status_code == 200
    # a browser opening ?token= gets the cookie and an address without the token
    r = client.get(f"/slices?metric=ndcg%4010&token={TOKEN}")
    assert r.status_code == 303
    assert r.headers["location"] == "/slices?metric=ndcg%4010"
    cookie = r.headers["set-cookie"]
    assert cookie.startswith(f"ranklens_token={TOKEN}") and "HttpOnly" in cookie and "SameSite=Strict" in cookie


def test_without_token_only_loopback_host_names_are_answered(seed_store: str) -> None:
    from ranklens.web import create_app

    app = create_app(seed_store, config={})
    for host in ("127.0.0.1:8000", "localhost", "localhost:9", "[::1]:8000"):
        status, _ = raw_get(app, b"/api/info", [(b"host", host.encode())])
        assert status == 200, host
    for host in ("evil.example", "evil.example:8000", "127.0.0.1.evil.example", "10.0.0.5", ""):
        status, body = raw_get(app, b"/api/info", [(b"host", host.encode())])
        assert status == 400 and b"Host" in body, host


def test_the_app_is_read_only(seed_store: str) -> None:
    import duckdb

    from ranklens.errors import InvalidParameterError
    from ranklens.web import create_app
    from web_support import seed_events

    before = file_digest(seed_store)
    app = create_app(seed_store, config={})
    client = Client(app)
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        for path in ("/api/report", "/api/info", "/", "/static/app.js"):
            r = client.request(method, path, content=b"{}")
            assert r.status_code == 405, (method, path)
    store = app.state.store
    assert store.read_only
    with pytest.raises(InvalidParameterError, match="read-only"):
        store.ingest(seed_events())
    con = duckdb.connect(seed_store, read_only=True)  # what the store opens: a write fails there
    try:
        with pytest.raises(duckdb.Error):
            con.execute("CREATE TABLE intruder (a INTEGER)")
    finally:
        con.close()
    assert file_digest(seed_store) == before


def test_security_headers(seed_client: Any) -> None:
    for path in ("/", "/api/info", "/static/app.js"):
        h = seed_client.get(path).headers
        assert "default-src 'self'" in h["content-security-policy"]
        assert "frame-ancestors 'none'" in h["content-security-policy"]
        assert h["x-content-type-options"] == "nosniff"
    assert seed_client.get("/api/info").headers["cache-control"] == "no-store"


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    e = {k: v for k, v in os.environ.items() if k != "RANKLENS_TOKEN"}
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "ranklens.cli", *args], check=False, capture_output=True, text=True,
                          env=e, timeout=120)


@pytest.mark.slow
def test_serve_refuses_a_public_address_without_token(seed_store: str) -> None:
    for host in ("0.0.0.0", "::", "192.0.2.10", "example.org"):
        r = _cli("serve", "--store", seed_store, "--host", host, "--port", "0")
        assert r.returncode == 2, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("ranklens: error:") and "--token" in lines[0]
    for bad in ("short", "has space inside", "semi;colon-token", "comma,separated", 'quote"token12'):
        r = _cli("serve", "--store", seed_store, "--host", "0.0.0.0", "--token", bad)
        assert r.returncode == 2 and "at least 8 printable" in r.stderr, bad
    # not a store: one line, before serving
    bogus = Path(seed_store).with_name("not-a-store.duckdb")
    bogus.write_text("hello")
    r = _cli("serve", "--store", str(bogus), "--port", "0")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "not-a-store" in r.stderr, r.stderr
    # the token may come from the environment: then the next check (the store) is what fails
    r = _cli("serve", "--store", seed_store + ".missing", "--host", "0.0.0.0", env={"RANKLENS_TOKEN": TOKEN})
    assert r.returncode == 2 and "no such store" in r.stderr and "--token" not in r.stderr


def test_serve_binds_loopback_and_serves(seed_store: str) -> None:
    """`ranklens serve` for real: 127.0.0.1 by default, the store read-only, a request answered."""
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    before = file_digest(seed_store)
    proc = subprocess.Popen([sys.executable, "-m", "ranklens.cli", "serve", "--store", seed_store, "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/info", timeout=5) as resp:
                    assert resp.status == 200
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise AssertionError(proc.stderr.read() if proc.poll() is not None else "no answer") from None
                time.sleep(0.2)
        # the listening socket of that port is bound to 127.0.0.1 only (Linux: /proc/net/tcp, tcp6)
        listening = []
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            for line in Path(table).read_text().splitlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                addr, _, hexport = local.rpartition(":")
                if state == "0A" and int(hexport, 16) == port:
                    listening.append(addr)
        assert listening == ["0100007F"], listening  # 127.0.0.1, little-endian hex
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert "read-only" in proc.stderr.read()
    assert file_digest(seed_store) == before
