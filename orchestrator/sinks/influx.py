"""InfluxDB 1.x sink: line protocol to `/write?db=...`, batched, in a background thread.

`write()` never blocks the run: points go into a bounded buffer; when it is full
the oldest points are dropped and counted. The writer thread posts batches,
retrying with back-off; a batch that still fails is dropped and counted.
`stats()` reports points written/dropped (the summary shows them).
"""

from __future__ import annotations

import collections
import json
import threading
import time
import urllib.parse
from typing import Any

import httpx

from xcplab_contract.columns import COLUMNS, TAGS


def _esc_tag(v: str) -> str:
    return v.replace("\\", "\\\\").replace(",", r"\,").replace("=", r"\=").replace(" ", r"\ ")


def _field(v: Any) -> str | None:
    if v is None or v == "":
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return f"{v}i"
    if isinstance(v, float):
        return repr(v)
    s = str(v).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{s}"'


def to_line(measurement: str, row: dict[str, Any], base_tags: dict[str, str],
            t0_ns: int) -> str | None:
    """One line-protocol point; timestamp = run start (wall clock) + t_s."""
    tags = dict(base_tags)
    for k in TAGS.get(measurement, ()):
        v = row.get(k)
        if v not in (None, ""):
            tags[k] = str(v)
    fields = []
    for k in COLUMNS.get(measurement, tuple(row)):
        if k == "t_s" or k in TAGS.get(measurement, ()):
            continue
        v = row.get(k)
        if isinstance(v, dict | list):  # e.g. event details: the same JSON as event.csv
            v = json.dumps(v, separators=(",", ":"), sort_keys=True, default=str)
        # Long-form series (xcpi, fairness) put counters and rates in one `value`
        # field; InfluxDB fixes a field's type at its first point and refuses the
        # other type afterwards, so every number there is written as a float.
        if k == "value" and isinstance(v, int) and not isinstance(v, bool):
            v = float(v)
        fv = _field(v)
        if fv is not None:
            fields.append(f"{_esc_tag(k)}={fv}")
    if not fields:
        return None
    tag_s = "".join(f",{_esc_tag(k)}={_esc_tag(v)}" for k, v in sorted(tags.items()))
    ts = t0_ns + int(float(row.get("t_s", 0.0)) * 1e9)
    return f"{measurement}{tag_s} {','.join(fields)} {ts}"


def parse_url(url: str) -> tuple[str, str]:
    """`http://host:8086/db` or `http://host:8086?db=name` -> (base, db). Default db xcplab."""
    u = urllib.parse.urlsplit(url)
    q = urllib.parse.parse_qs(u.query)
    db = q.get("db", [u.path.strip("/") or "xcplab"])[0]
    return f"{u.scheme}://{u.netloc}", db


class InfluxSink:
    def __init__(self, url: str, *, run: str, experiment: str, t0_wall_s: float | None = None,
                 batch: int = 2000, max_buffer: int = 200_000, flush_s: float = 0.5,
                 retries: int = 3, timeout_s: float = 2.0, create_db: bool = True):
        self.base, self.db = parse_url(url)
        self.tags = {"run": run, "experiment": experiment}
        self.t0_ns = int((t0_wall_s if t0_wall_s is not None else time.time()) * 1e9)
        self.batch, self.flush_s, self.retries = batch, flush_s, retries
        self.buf: collections.deque[str] = collections.deque()
        self.max_buffer = max_buffer
        self.lock = threading.Condition()
        self.written = 0
        self.dropped = 0
        self.last_error: str | None = None
        self._closing = False
        self.client = httpx.Client(timeout=timeout_s)
        self.create_db = create_db
        self.thread = threading.Thread(target=self._run, daemon=True, name="influx-sink")
        self.thread.start()

    def set_t0(self, t0_wall_s: float) -> None:
        self.t0_ns = int(t0_wall_s * 1e9)

    def write(self, measurement: str, rows: list[dict[str, Any]]) -> None:
        lines = [ln for r in rows if (ln := to_line(measurement, r, self.tags, self.t0_ns))]
        with self.lock:
            self.buf.extend(lines)
            over = len(self.buf) - self.max_buffer
            for _ in range(max(0, over)):
                self.buf.popleft()
            if over > 0:
                self.dropped += over
            self.lock.notify()

    def _post(self, lines: list[str]) -> bool:
        body = "\n".join(lines).encode()
        delay = 0.1
        for attempt in range(self.retries + 1):
            try:
                r = self.client.post(f"{self.base}/write",
                                     params={"db": self.db, "precision": "ns"}, content=body)
                if r.status_code == 204:
                    return True
                self.last_error = f"HTTP {r.status_code}: {r.text[:200]}"
                if 400 <= r.status_code < 500:
                    return False  # the points are bad; retrying will not help
            except httpx.HTTPError as e:
                self.last_error = f"{type(e).__name__}: {e}"
            if attempt < self.retries and not self._closing:
                time.sleep(delay)
                delay *= 2
        return False

    def _run(self) -> None:
        if self.create_db:  # here, not in __init__: an unreachable server must not delay the run
            try:
                self.client.post(f"{self.base}/query",
                                 params={"q": f'CREATE DATABASE "{self.db}"'})
            except httpx.HTTPError as e:
                self.last_error = f"create database: {e}"
        while True:
            with self.lock:
                if not self.buf and not self._closing:
                    self.lock.wait(self.flush_s)
                if not self.buf and self._closing:
                    return
                n = min(self.batch, len(self.buf))
                lines = [self.buf.popleft() for _ in range(n)]
            if lines:
                if self._post(lines):
                    self.written += len(lines)
                else:
                    self.dropped += len(lines)

    def close(self, timeout_s: float = 10.0) -> dict[str, Any]:
        with self.lock:
            self._closing = True
            self.lock.notify()
        self.thread.join(timeout_s)
        with self.lock:
            left = len(self.buf)
            self.buf.clear()
        self.dropped += left
        self.client.close()
        return self.stats()

    def stats(self) -> dict[str, Any]:
        return {"url": f"{self.base}/write?db={self.db}", "points_written": self.written,
                "points_dropped": self.dropped, "last_error": self.last_error}
