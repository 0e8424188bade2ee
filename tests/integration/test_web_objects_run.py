"""Web-like short flows end to end (issue 17), root, one 4 s run of
experiments/web/dumbbell-objects.yaml: 20 hand-written objects from s1 to c1 across one
XCP router whose 10 Mb/s, 10 ms link they share with a long-lived XCP flow.

Asserts physics and bookkeeping, not a paper's number: every object completes with
exactly its bytes (xcpperf marks an object complete only when the server's report
counted them), no FCT beats the floor of an object alone on the path (two round trips,
SYN/SYN-ACK then the last byte's ACK, plus its bytes at 10 Mb/s), metrics/fct.csv has
one row per object in run time, and the summary's FCT figures and expectations agree
with those rows. Run under `flock /tmp/xcplab-timing.lock`.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from run_helpers import fidelity_note, router_mode, run_spec

from orchestrator.spec import load_spec

pytestmark = [pytest.mark.root, pytest.mark.slow, pytest.mark.timeout(240)]

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "experiments" / "web" / "dumbbell-objects.yaml"
BOTTLENECK_BPS = 10e6


def test_every_object_completes_intact_and_no_fct_beats_physics(tmp_path: Path) -> None:
    if router_mode() != "engine":
        pytest.skip("the XCP queue needs the xcp-router engine (make build)")
    run_dir, summary = run_spec(SPEC, tmp_path, timeout=200)
    why = fidelity_note(summary)
    assert summary["status"] == "completed", why
    plan = json.loads((run_dir / "plan.json").read_text())
    flow = next(f for f in plan["flows"] if f["id"] == "web")
    rtt = flow["rtt_s"]
    assert rtt == pytest.approx(0.022)  # 2 x (1 ms + 10 ms) as planned
    asked = load_spec(SPEC).flow("web").objects or []
    with (run_dir / "metrics" / "fct.csv").open() as fh:
        rows = sorted(csv.DictReader(fh), key=lambda r: int(r["object"]))
    assert len(rows) == len(asked) == 20
    for r, (at, size) in zip(rows, asked, strict=True):
        assert r["status"] == "complete", (r, why)
        assert int(r["bytes"]) == size
        # scheduled start in run time: the client's start (a few ms) + the offset
        assert at <= float(r["start_s"]) < at + 0.2
        floor = 2 * rtt + size * 8 / BOTTLENECK_BPS
        assert float(r["fct_s"]) >= floor, (r, floor)
        assert float(r["t_s"]) >= float(r["start_s"]) + float(r["fct_s"]) - 1e-6
    fcts = np.array([float(r["fct_s"]) for r in rows])
    web = summary["web"]["all"]
    assert (web["objects"], web["started"], web["completed"]) == (20, 20, 20)
    assert web["fct_p50_s"] == pytest.approx(np.percentile(fcts, 50))
    assert web["fct_p99_s"] == pytest.approx(np.percentile(fcts, 99))
    assert web["slowdown_p50"] >= 1.0
    status = {e["name"]: e["status"] for e in summary["expectations"]}
    if summary["fidelity"]["ok"]:
        assert status["every object completes"] == "pass", summary["expectations"]


def test_two_web_flows_of_one_host_share_one_process_and_keep_their_own_rows(
        tmp_path: Path) -> None:
    """The spec's objects split over two flows from s1, started together: the agent plays
    them in one `xcpperf --job` process (agents/client_groups.py) and demultiplexes its
    output, so each flow keeps exactly its own objects in fct.csv, its own flow_end, and
    its own web figures."""
    if router_mode() != "engine":
        pytest.skip("the XCP queue needs the xcp-router engine (make build)")
    import yaml

    doc = yaml.safe_load(SPEC.read_text())
    web = next(f for f in doc["flows"] if f["id"] == "web")
    objects = web["objects"]
    web["objects"] = objects[0::2]
    doc["flows"].append({**web, "id": "web2", "objects": objects[1::2]})
    spec = tmp_path / "two-web.yaml"
    spec.write_text(yaml.safe_dump(doc, sort_keys=False))
    run_dir, summary = run_spec(spec, tmp_path / "out", timeout=200)
    why = fidelity_note(summary)
    assert summary["status"] == "completed", why
    with (run_dir / "metrics" / "procs.csv").open() as fh:
        keys = {r["proc"] for r in csv.DictReader(fh)}
    assert "web+web2.client" in keys and not keys & {"web.client", "web2.client"}, keys
    with (run_dir / "metrics" / "fct.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    for fid, asked in (("web", objects[0::2]), ("web2", objects[1::2])):
        mine = sorted((r for r in rows if r["flow"] == fid), key=lambda r: int(r["object"]))
        planned = load_spec(spec).flow(fid).objects or []
        assert len(planned) == len(asked)
        assert [int(r["bytes"]) for r in mine] == [size for _, size in planned], fid
        assert all(r["status"] == "complete" for r in mine), (fid, why)
        starts = [float(r["start_s"]) for r in mine]
        ats = [at for at, _ in planned]
        assert all(at <= s < at + 0.2 for at, s in zip(ats, starts, strict=True)), (fid, starts)
        assert summary["web"]["flows"][fid]["completed"] == len(asked) == 10
    with (run_dir / "metrics" / "event.csv").open() as fh:
        ended = {r["target"] for r in csv.DictReader(fh) if r["kind"] == "flow_end"}
    assert {"web", "web2"} <= ended, ended
