"""Helpers of the dashboard tests: hand computations, the seed's events, in-process and live clients."""

from __future__ import annotations

import hashlib
import math
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "web"
#: Debian's Chromium, where the Makefile's `browser` target (a prerequisite of `make test`) installs it.
CHROMIUM = "/usr/bin/chromium"
#: The command named when it is missing; tests/test_setup.py checks that it installs Chromium on a machine without it.
INSTALL_BROWSER = "make browser"


def require_chromium() -> str:
    """The path of Chromium, or a failure (never a skip) that says how to install it."""
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: the browser tests need Debian's Chromium. Run `{INSTALL_BROWSER}` "
                    "(apt-get install chromium and the fonts; `make test` runs it first).", pytrace=False)
    return CHROMIUM


def dcg(gains: list[float], k: int | None = None) -> float:
    """DCG with linear gains and 1 / log2(i + 1) discounts, by hand."""
    g = gains[:k] if k else gains
    return sum(x / math.log2(i + 2) for i, x in enumerate(g))


def ndcg(gains: list[float], k: int | None = None) -> float:
    ideal = dcg(sorted(gains, reverse=True), k)
    return dcg(gains, k) / ideal


# The seed ("Demystifying NDCG", Arize): groups x, y, z with the gains of their five ranked items.
SEED = {"x": [0, 0, 1, 1, 1], "y": [1, 0, 1, 0, 1], "z": [1, 0, 0, 0, 0]}
# model version v2 in production, a day later
V2 = {"x2": [1, 0, 0, 0, 0], "y2": [0, 1, 0, 0, 0], "u2": [0, 0, 1, 1, 0]}
# the training baseline: copies of x and y
TRAIN = {"tx": [0, 0, 1, 1, 1], "ty": [1, 0, 1, 0, 1]}
COUNTRY = {"x": "US", "y": "US", "z": "BR", "x2": "US", "y2": "BR", "u2": "BR", "tx": "US", "ty": "BR"}


def seed_events() -> Any:
    rows: dict[str, list[Any]] = {c: [] for c in ("timestamp", "model", "model_version", "environment", "group_id",
                                                  "item_id", "rank", "relevance", "country")}
    for groups, version, env, day in ((TRAIN, "v1", "training", "2026-10-01"), (SEED, "v1", "production", "2026-10-02"),
                                      (V2, "v2", "production", "2026-10-03")):
        for g, gains in groups.items():
            for i, gain in enumerate(gains):
                rows["timestamp"].append(f"{day}T12:00:00")
                rows["model"].append("ranker")
                rows["model_version"].append(version)
                rows["environment"].append(env)
                rows["group_id"].append(g)
                rows["item_id"].append(f"{g}_item{i + 1}")
                rows["rank"].append(i + 1)
                rows["relevance"].append(float(gain))
                rows["country"].append(COUNTRY[g])
    return pa.table(rows)


def file_digest(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    for p in (Path(path), Path(str(path) + ".wal")):
        if p.exists():
            h.update(p.read_bytes())
    return h.hexdigest()


class Client:
    """An in-process client: httpx over the ASGI transport (no socket), one event loop per call."""

    def __init__(self, app: Any, base_url: str = "http://127.0.0.1") -> None:
        self.app = app
        self.base_url = base_url

    def get(self, url: str, **kw: Any) -> Any:
        return self.request("GET", url, **kw)

    def request(self, method: str, url: str, **kw: Any) -> Any:
        import asyncio

        import httpx

        async def go() -> Any:
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(transport=transport, base_url=self.base_url) as c:
                return await c.request(method, url, **kw)

        return asyncio.run(go())


async def _raw(app: Any, method: str, raw_path: bytes,
               headers: list[tuple[bytes, bytes]] | None = None) -> tuple[int, bytes]:
    """One request straight into the ASGI app, with the path exactly as given (no client-side normalisation)."""
    from urllib.parse import unquote_to_bytes

    path, _, query = raw_path.partition(b"?")
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
             "path": unquote_to_bytes(path).decode("utf-8", "replace"), "raw_path": path, "query_string": query,
             "root_path": "", "headers": headers or [(b"host", b"127.0.0.1")], "client": ("127.0.0.1", 1234),
             "server": ("127.0.0.1", 80)}
    sent: list[dict[str, Any]] = []
    received = False

    async def receive() -> dict[str, Any]:
        nonlocal received
        if not received:
            received = True
            return {"type": "http.request", "body": b"", "more_body": False}
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body


def raw_get(app: Any, raw_path: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> tuple[int, bytes]:
    import asyncio

    return asyncio.run(_raw(app, "GET", raw_path, headers))


def client_for(path: str, **kw: Any) -> Client:
    from ranklens.web import create_app

    return Client(create_app(path, **kw))


class LiveServer:
    """uvicorn serving an app in a background thread on a free loopback port."""

    def __init__(self, app: Any) -> None:
        import uvicorn

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    access_log=False))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.05)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
