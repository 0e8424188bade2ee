"""API latency under load: `api.{submit,status}_{p50,p99}_ms`.

A real `xcplab serve` (uvicorn, one process) on loopback with a temp SQLite
database. 50 concurrent clients (one user each) loop for 30 s: submit
experiments/quickstart.yaml, then read that experiment's status. The pool has
concurrency 0 (`--pools local=0`), so submissions are validated, stored and
queued but never executed: the bench measures the API and the queue, not runs.
The per-user rate limit is raised out of the way. Override the duration and
client count with XCPLAB_BENCH_API_S / XCPLAB_BENCH_API_CLIENTS.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "service"))

from server_proc import Server, cli  # noqa: E402 - tests/service is put on sys.path above


def percentile(xs: list[float], p: float) -> float:
    """The nearest-rank P-th percentile of XS (also used by bench_api_health)."""
    s = sorted(xs)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))]


async def _client(url: str, token: str, spec: bytes, until: float,
                  submit: list[float], status: list[float], errors: list[str]) -> None:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/yaml"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as c:
        while time.monotonic() < until:
            t = time.perf_counter()
            r = await c.post("/experiments", content=spec)
            submit.append((time.perf_counter() - t) * 1000)
            if r.status_code != 201:
                errors.append(f"submit {r.status_code}: {r.text[:200]}")
                continue
            exp_id = r.json()["id"]
            t = time.perf_counter()
            r = await c.get(f"/experiments/{exp_id}")
            status.append((time.perf_counter() - t) * 1000)
            if r.status_code != 200:
                errors.append(f"status {r.status_code}")


def run() -> dict:
    seconds = float(os.environ.get("XCPLAB_BENCH_API_S", "30"))
    clients = int(os.environ.get("XCPLAB_BENCH_API_CLIENTS", "50"))
    spec = (REPO / "experiments" / "quickstart.yaml").read_bytes()
    with tempfile.TemporaryDirectory(prefix="xcplab-bench-api-") as tmp:
        server = Server(Path(tmp) / "data", stand_in=False, args=("--pools", "local=0"),
                        extra_env={"XCPLAB_SUBMIT_RATE_PER_MIN": "1e9",
                                   "XCPLAB_SUBMIT_BURST": "1000000"})
        tokens = [cli("user", "add", f"bench{i}", env=server.env) for i in range(clients)]
        server.start()
        try:
            submit: list[float] = []
            status: list[float] = []
            errors: list[str] = []
            until = time.monotonic() + seconds

            async def main() -> None:
                await asyncio.gather(*(_client(server.url, tok, spec, until, submit, status,
                                               errors) for tok in tokens))

            asyncio.run(main())
        finally:
            server.stop()
    if errors or not submit or not status:
        raise RuntimeError(f"{len(errors)} failed requests, e.g. {errors[:3]}")
    return {"api": {"submit_p50_ms": round(percentile(submit, 50), 2),
                    "submit_p99_ms": round(percentile(submit, 99), 2),
                    "status_p50_ms": round(percentile(status, 50), 2),
                    "status_p99_ms": round(percentile(status, 99), 2),
                    "submissions": len(submit), "clients": clients, "seconds": seconds}}


if __name__ == "__main__":
    import json
    print(json.dumps(run(), indent=2))
