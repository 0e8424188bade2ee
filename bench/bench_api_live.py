"""What users meet while an experiment runs: `api_live.*` (issue 19).

A real `xcplab serve` with the real runner executes one real experiment
(experiments/quickstart.yaml, netns, `duration` XCPLAB_BENCH_LIVE_RUN_S, default 20 s)
in pool `local` (concurrency 1). Meanwhile CLIENTS users (default 50) each, once a
second, read the status of their own experiment (progress included) and their list of
experiments (what the history page asks), and now and then (every SUBMIT_EVERY_S,
staggered) submit one more; their submissions go to a paused pool (`parked=0`), so
only the measured run executes.

Only requests made while the measured run is in the `running` state count. Target
(issue 19): status p99 < 50 ms. Reported beside it: the same figures with the machine
idle (the run not started yet) as a ratio, the run's own fidelity verdict (did the
API's load disturb the emulation?), and the closed-loop throughput ceiling comes
from bench_api (`api.submissions` / `api.seconds`) in the same results file.
Needs root and the built engine (like every netns run); without them the module says so.
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
sys.path.insert(0, str(REPO / "bench"))

from bench_api import percentile  # noqa: E402
from bench_api_health import latency_figures  # noqa: E402
from server_proc import Server, cli  # noqa: E402

SUBMIT_EVERY_S = 20.0
POLL_PERIOD_S = 1.0


async def _user(url: str, token: str, own: str, k: int, until: float,
                phase: list[str], status: dict[str, list[float]], submit: dict[str, list[float]],
                spec: bytes, errors: list[str]) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30) as c:
        await asyncio.sleep(k * POLL_PERIOD_S / 50)  # spread the clients over the second
        next_submit = time.monotonic() + (k % 20) * SUBMIT_EVERY_S / 20
        while time.monotonic() < until:
            t_loop = time.monotonic()
            for path in (f"/experiments/{own}", "/experiments?limit=20"):
                t = time.perf_counter()
                r = await c.get(path)
                status.setdefault(phase[0], []).append((time.perf_counter() - t) * 1000)
                if r.status_code != 200:
                    errors.append(f"status {r.status_code}")
            if time.monotonic() >= next_submit:
                next_submit += SUBMIT_EVERY_S
                t = time.perf_counter()
                r = await c.post("/experiments", content=spec, params={"pool": "parked"},
                                 headers={"Content-Type": "application/yaml"})
                submit.setdefault(phase[0], []).append((time.perf_counter() - t) * 1000)
                if r.status_code != 201:
                    errors.append(f"submit {r.status_code}: {r.text[:120]}")
            await asyncio.sleep(max(0.0, POLL_PERIOD_S - (time.monotonic() - t_loop)))


def run() -> dict:
    if os.geteuid() != 0:
        return {"errors": {"bench_api_live": "needs root (the measured run is a netns run)"}}
    clients = int(os.environ.get("XCPLAB_BENCH_LIVE_CLIENTS", "50"))
    run_s = float(os.environ.get("XCPLAB_BENCH_LIVE_RUN_S", "20"))
    idle_s = 10.0
    spec = (REPO / "experiments" / "quickstart.yaml").read_bytes()
    with tempfile.TemporaryDirectory(prefix="xcplab-bench-live-") as tmp:
        server = Server(Path(tmp) / "data", stand_in=False,
                        args=("--pools", "local=1,parked=0"),
                        extra_env={"XCPLAB_SUBMIT_RATE_PER_MIN": "1e9",
                                   "XCPLAB_SUBMIT_BURST": "1000000"})
        admin = cli("user", "add", "runner", env=server.env)
        tokens = [cli("user", "add", f"live{i}", env=server.env) for i in range(clients)]
        server.start()
        status: dict[str, list[float]] = {}
        submit: dict[str, list[float]] = {}
        errors: list[str] = []
        summary: dict = {}
        try:
            def post(token: str, pool: str, sets: list[str]) -> str:
                r = httpx.post(f"{server.url}/experiments", content=spec, timeout=30,
                               params={"pool": pool, "set": sets},
                               headers={"Authorization": f"Bearer {token}",
                                        "Content-Type": "application/yaml"})
                r.raise_for_status()
                return str(r.json()["id"])

            own = [post(t, "parked", []) for t in tokens]
            running: list[str] = []  # the measured run's id, once submitted after idle
            phase = ["idle"]

            async def main() -> None:
                until = time.monotonic() + idle_s + run_s + 90
                users = [asyncio.create_task(_user(
                    server.url, tok, own[k], k, until, phase, status, submit, spec,
                    errors)) for k, tok in enumerate(tokens)]
                await asyncio.sleep(idle_s)
                phase[0] = "starting"
                running.append(await asyncio.to_thread(
                    post, admin, "local", [f"duration={run_s:g}s"]))
                async with httpx.AsyncClient(base_url=server.url, timeout=30, headers={
                        "Authorization": f"Bearer {admin}"}) as c:
                    while time.monotonic() < until:
                        e = (await c.get(f"/experiments/{running[0]}")).json()
                        state = e["state"]
                        phase[0] = ("running" if state == "running"
                                    and e["progress"]["phase"] == "run" else
                                    "starting" if state in ("queued", "running") else "done")
                        if phase[0] == "done":
                            summary.update(e.get("summary") or {})
                            summary["_state"] = state
                            break
                        await asyncio.sleep(0.2)
                for u in users:
                    u.cancel()
                await asyncio.gather(*users, return_exceptions=True)

            asyncio.run(main())
        finally:
            server.stop()
    fid = summary.get("fidelity") or {}
    out: dict = {"api_live": {
        "clients": clients, "run_s": run_s,
        "status_idle": latency_figures(status.get("idle", [])),
        "status_while_running": latency_figures(status.get("running", [])),
        "submit_while_running": latency_figures(submit.get("running", [])),
        "run_state": summary.get("_state"),
        "run_fidelity_ok": fid.get("ok"),
        "run_fidelity_problems": [str(p) for p in fid.get("problems") or []][:5],
        "target_status_p99_ms": 50,
    }}
    idle, busy = status.get("idle", []), status.get("running", [])
    if idle and busy:
        out["api_live"]["status_p99_running_over_idle"] = round(
            percentile(busy, 99) / max(percentile(idle, 99), 1e-3), 2)
    if errors or not busy:
        out["errors"] = {"bench_api_live": f"{len(errors)} failed requests, e.g. {errors[:3]}"
                         if errors else "no request was made while the run was running"}
    return out


if __name__ == "__main__":
    import json
    print(json.dumps(run(), indent=2))
