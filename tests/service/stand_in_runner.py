"""A stand-in for `orchestrator.runner.execute_run`, for tests of the service alone.

Same signature and contract: it writes a run directory (spec.yaml, summary.json,
metrics/*.csv) and the .tar.gz beside it, reports progress, and honours the
cancel Event. It runs for the spec's `duration` (seconds, default 0.2) so tests
can hold a run in the running state; a description "fail: WHY" makes it raise.
Used through `create_app(run_fn=...)` or the `test_only_run_function` setting
(`stand_in_runner:execute_run` with this directory on PYTHONPATH) for the server
started as a subprocess.
"""

from __future__ import annotations

import json
import tarfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


@dataclass
class Progress:
    run_id: str
    phase: str
    elapsed_s: float
    duration_s: float
    fraction: float
    message: str


@dataclass
class RunResult:
    run_id: str
    run_dir: Path
    archive_path: Path | None
    status: str
    summary: dict[str, Any]


def _seconds(v: Any) -> float:
    if isinstance(v, (int, float)):
        return float(v)
    s = str(v).strip()
    if s.endswith("ms"):
        return float(s[:-2]) / 1000
    return float(s.rstrip("s"))


def execute_run(spec_path: Any = None, *, spec_text: str | None = None, out_dir: Any,
                backend: str = "netns", influx_url: str | None = None, overrides: Any = (),
                run_id: str | None = None, on_progress: Any = None,
                cancel: threading.Event | None = None) -> RunResult:
    assert spec_text is not None and run_id is not None
    doc = yaml.safe_load(spec_text)
    duration = _seconds(doc.get("duration", 0.2))
    if str(doc.get("description", "")).startswith("fail:"):
        raise RuntimeError(doc["description"][5:].strip())
    run_dir = Path(out_dir) / run_id
    (run_dir / "metrics").mkdir(parents=True, exist_ok=True)
    (run_dir / "spec.yaml").write_text(spec_text)
    t0 = time.monotonic()
    status = "completed"
    while (elapsed := time.monotonic() - t0) < duration:
        if cancel is not None and cancel.wait(0.02):
            status = "cancelled"
            break
        if on_progress:
            on_progress(Progress(run_id, "running", elapsed, duration,
                                 min(1.0, elapsed / duration), f"{elapsed:.1f}/{duration:g} s"))
    with open(run_dir / "metrics" / "flow.csv", "w") as f:
        f.write("t_s,flow,stream,proto,throughput_bps,cwnd_bytes\n")
        f.writelines(f"{i * 0.1:.1f},f1,0,xcp,{1e6 * (i + 1)},{1500 * (i + 1)}\n" for i in range(5))
    summary = {"run": run_id, "experiment": doc.get("name", ""), "status": status,
               "duration_s": duration, "overrides": list(overrides),
               "flows": {"f1": {"proto": "xcp", "src": "h1", "dst": "h2", "bytes": 1000,
                                "throughput_mbps": 3.0, "retransmits": 0,
                                "srtt_mean_ms": 20.0, "cwnd_mean_bytes": 4500.0}},
               "links": {}, "expectations": [], "fidelity": {"ok": True, "problems": []},
               "timings": {"deploy_s": 0.0, "run_s": duration, "teardown_s": 0.0}}
    (run_dir / "summary.json").write_text(json.dumps(summary))
    archive = Path(out_dir) / f"{run_id}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(run_dir, arcname=run_id)
    return RunResult(run_id, run_dir, archive, status, summary)
