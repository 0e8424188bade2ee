"""End to end (root): a real run is archived, verifies, and `xcplab reproduce` reruns it;
`xcplab sweep` runs a 2-point grid. Kernel-forwarding routers and iperf3 keep it short
and independent of the engine build; the analysis flags such runs as not emulated."""

from __future__ import annotations

import csv
import json
import shutil
import tarfile
from pathlib import Path

import pytest

from orchestrator.archive.seal import verify
from orchestrator.cli import main

pytestmark = [pytest.mark.root,
              pytest.mark.skipif(shutil.which("iperf3") is None, reason="needs iperf3")]

SPEC = """\
name: c3e2e
duration: 1500ms
seed: 11
metrics_interval: 100ms
defaults:
  link: {capacity: 50Mbps, delay: 2ms, buffer: 1BDP}
nodes:
  h1: {role: host}
  r1: {role: router, queue: droptail}
  h2: {role: host}
links:
  - {a: h1, b: r1}
  - {id: bn, a: r1, b: h2, capacity: 20Mbps}
flows:
  - {id: t1, proto: tcp, cc: reno, src: h1, dst: h2}
expect:
  - {metric: bytes, flow: t1, op: ">", value: 0}
"""


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    p = tmp_path / "c3e2e.yaml"
    p.write_text(SPEC)
    return p


def test_run_archive_verify_reproduce(spec, tmp_path, capsys):
    out = tmp_path / "runs"
    # Completed but not emulated (kernel forwarding): exit 3, not 0.
    assert main(["run", str(spec), "--out", str(out), "--no-progress",
                 "--backend-opt", "router_mode=kernel"]) == 3
    run_dir = Path(capsys.readouterr().out.strip().splitlines()[-1])
    archive = run_dir.parent / f"{run_dir.name}.tar.gz"
    assert verify(archive) == [] and verify(run_dir) == []
    with tarfile.open(archive) as tar:
        names = tar.getnames()
    for f in ("manifest.json", "spec.yaml", "resolved.json", "plan.json", "summary.json",
              "metrics/flow.csv", "metrics/link.csv"):
        assert f"{run_dir.name}/{f}" in names
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["flows"]["t1"]["bytes"] > 0
    # Kernel forwarding does not emulate the 20 Mb/s link: the summary must say so,
    # and the check's numbers judge nothing.
    assert not summary["fidelity"]["ok"]
    assert any(p.startswith("router_mode=kernel") for p in summary["fidelity"]["problems"])
    e = summary["expectations"][0]
    assert (e["status"], e["ok"], e["measured_status"]) == ("unjudged", None, "pass")

    shutil.rmtree(run_dir)  # reproduce from the archive alone
    assert main(["reproduce", str(archive), "--out", str(tmp_path / "again")]) == 3
    captured = capsys.readouterr()
    assert "flow.t1.throughput_mbps" in captured.out
    assert "seed=11" in captured.err and "differs" not in captured.err
    new_dir = Path(captured.out.strip().splitlines()[-1])
    assert json.loads((new_dir / "resolved.json").read_text())["seed"] == 11
    # Both runs are listed: the original from its archive alone, the rerun from its directory.
    assert main(["runs", "--out", str(out)]) == 0
    assert run_dir.name in capsys.readouterr().out
    assert main(["runs", "--out", str(tmp_path / "again")]) == 0
    assert new_dir.name in capsys.readouterr().out


def test_sweep_two_points(spec, tmp_path, capsys):
    rc = main(["sweep", str(spec), "--param", "links[bn].capacity=10Mbps,20Mbps",
               "--out", str(tmp_path), "--backend-opt", "router_mode=kernel"])
    captured = capsys.readouterr()
    sweep_dir = Path(captured.out.strip().splitlines()[-1])
    assert rc == 3  # every point completed, none was emulated
    err = " ".join(captured.err.split())  # the console wraps long lines
    assert "2 of 2 points UNFAITHFUL" in err
    assert err.count(" UNFAITHFUL; checks 0 pass, 0 fail, 0 skipped, 1 unjudged") == 2, err
    with open(sweep_dir / "sweep.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["param.links[bn].capacity"] for r in rows] == ["10Mbps", "20Mbps"]
    assert all(r["status"] == "completed" and r["seed"] == "11" for r in rows)
    assert all(r["fidelity_ok"] == "False" and r["expectations_unjudged"] == "1"
               and r["expectations_passed"] == "0" for r in rows)
    assert (sweep_dir / "sweep.png").stat().st_size > 10_000
    assert all((sweep_dir / r["run_id"]).is_dir() for r in rows)
