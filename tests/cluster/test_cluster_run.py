"""`xcplab run --backend cluster`: the quickstart across the namespace cluster (root).

The agent and binaries are installed on every machine from the bundle provisioning
ships, unpacked over SSH (the Ansible path itself is test_cluster_provision's; this
test does not pay for it twice). The underlay is given jumbo frames for the run, so
the bottleneck's VXLAN tunnel carries the emulated 1500-byte packets unchanged, as the
netns run does.

The figures are compared with stored ones (quickstart_netns.json: netns runs of the
same spec, seed and duration, and the command that made them) instead of a netns run
in the test: CI's budget. Compared within 5 %: the bottleneck's utilisation over the
run and over the expectation's window, and the flows' total goodput — the headline
figures two netns runs reproduce within 1 %. Per-flow rates and the XCP/TCP split over
the last 2 s differ by 6-30 % between two netns runs already; those are judged by the
spec's own expectations, which must pass.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from clusterrun import (
    JUMBO,
    QUICKSTART,
    agent_pid,
    ctl,
    jumbo_inventory,
    run_namespaces,
    wait_file,
)
from nscluster import NsCluster

pytestmark = [pytest.mark.root]

ROOT = Path(__file__).resolve().parents[2]
STORED = Path(__file__).parent / "quickstart_netns.json"
TOLERANCE = 0.05


@pytest.fixture(scope="module")
def inventory(nscluster: NsCluster) -> Iterator[Path]:
    """The machines as a provider gives them: the static provider (an inventory of
    machines that exist) through `xcplab cluster acquire`, the path every provider ends in
    (orchestrator/cluster/providers)."""
    with jumbo_inventory(nscluster) as inv:
        provider = nscluster.root / "static.yaml"
        provider.write_text(f"provider: static\ninventory: {inv.name}\n")
        r = ctl(nscluster, [sys.executable, "-m", "orchestrator.cli", "cluster", "acquire",
                            str(provider), "--out", str(nscluster.root / "acquired")], 60)
        assert r.returncode == 0, r.stderr
        assert Path(r.stdout.strip()) == inv.resolve()
        yield Path(r.stdout.strip())


def _run(c: NsCluster, inv: Path, out: Path, *sets: str) -> subprocess.CompletedProcess[str]:
    return ctl(c, [sys.executable, "-m", "orchestrator.cli", "run", str(QUICKSTART),
                   "--backend", "cluster", "--inventory", str(inv), "--out", str(out),
                   "--no-progress", *[a for s in sets for a in ("--set", s)]], timeout=300)


def _figures(s: dict) -> dict[str, float]:
    link = s["links"]["r1->r2"]
    busy = next(e for e in s["expectations"] if e["name"] == "bottleneck busy")
    goodput = sum(f["bytes"] for f in s["flows"].values()) * 8 / s["duration_s"] / 1e6
    return {"bottleneck_utilization": link["utilization"],
            "bottleneck_busy_from_5s": busy["value"], "goodput_mbps": goodput}


def test_quickstart_across_machines_agrees_with_netns(nscluster: NsCluster, inventory: Path,
                                                      tmp_path: Path) -> None:
    stored = json.loads(STORED.read_text())
    r = _run(nscluster, inventory, tmp_path / "first", *stored["sets"])
    if r.returncode == 3:
        # completed but flagged unfaithful (three SCHED_FIFO engines on two shared cores:
        # a machine stall makes events late): a flagged point is rerun once, as the
        # reproductions do; a cluster that is unfaithful every time still fails here
        r = _run(nscluster, inventory, tmp_path / "again", *stored["sets"])
    run_dir = Path(r.stdout.strip().splitlines()[-1])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]  # completed, faithful
    s = json.loads((run_dir / "summary.json").read_text())
    assert s["status"] == "completed" and s["fidelity"]["ok"], s["fidelity"]
    assert [e["name"] for e in s["expectations"] if e["ok"] is not True] == [], \
        s["expectations"]
    # placement is part of the plan: routers with their hosts, on two machines
    plan = json.loads((run_dir / "plan.json").read_text())
    where = {n["name"]: n["machine"] for n in plan["nodes"]}
    assert where["r1"] != where["r2"] and set(where.values()) <= set(nscluster.machines)
    assert {where[h] for h in ("s1", "s2", "s3")} == {where["r1"]}
    assert {where[h] for h in ("d1", "d2", "d3")} == {where["r2"]}
    # the crossing link is one VXLAN tunnel; its MTU arithmetic and the clocks recorded
    rec = json.loads((run_dir / "cluster.json").read_text())
    assert s["deploy"]["cluster"] == rec
    (t,) = rec["tunnels"]
    assert (t["link"], t["underlay_mtu"], t["emulated_mtu"]) == ("bottleneck", JUMBO, 1500)
    assert t["mtu_choice"] == f"underlay MTU {JUMBO} carries the 50-byte overhead"
    assert sorted(t["ends"]) == sorted({where["r1"], where["r2"]})
    assert set(rec["clock"]) == set(t["ends"])
    for clk in rec["clock"].values():  # one host, one clock: |offset| within its bound
        assert abs(clk["offset_ms"]) <= clk["error_bound_ms"] + 0.05, clk
    assert rec["start_skew_bound_ms"] < 1.0  # below the warning bound: no warning
    # each machine's files came back into the one run directory (netns layout)
    for m in t["ends"]:
        assert (run_dir / "logs" / f"engine-{m}.json").is_file()
    # the metrics of both machines' engines, in one link.csv
    header, *rows = (run_dir / "metrics" / "link.csv").read_text().splitlines()
    node = header.split(",").index("node")
    assert {row.split(",")[node] for row in rows} >= {"r1", "r2"}
    assert run_namespaces(plan["run_tag"]) == []
    # the headline figures within 5 % of the netns ones
    got, want = _figures(s), stored["figures"]
    far = {k: (round(got[k], 4), want[k]) for k in want
           if abs(got[k] - want[k]) > TOLERANCE * want[k]}
    assert far == {}, f"cluster vs netns (stored) beyond {TOLERANCE:.0%}: {far}"


def test_a_machine_lost_mid_run_fails_the_run_and_the_others_are_cleaned(
        nscluster: NsCluster, inventory: Path, tmp_path: Path) -> None:
    c = nscluster
    run_id = "lost-machine-test"
    proc = subprocess.Popen(c.in_ctl([
        sys.executable, "-m", "orchestrator.cli", "run", str(QUICKSTART), "--backend",
        "cluster", "--inventory", str(inventory), "--out", str(tmp_path), "--no-progress",
        "--run-id", run_id, "--set", "duration=30s"]), cwd=ROOT, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        plan = json.loads(wait_file(tmp_path / run_id / "plan.json").read_text())
        where = {n["name"]: n["machine"] for n in plan["nodes"]}
        lost, kept = where["r2"], where["r1"]
        pid = agent_pid(c, lost, tmp_path / run_id)
        t_kill = time.monotonic()
        subprocess.run(["kill", "-KILL", str(pid)], check=True)  # the machine's agent dies
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
    assert proc.returncode == 1, out[-2000:] + err[-2000:]
    s = json.loads((tmp_path / run_id / "summary.json").read_text())
    assert s["status"] == "failed"
    assert f"machine {lost} lost" in s["error"], s["error"]
    assert s["teardown"]["lost"] == [lost] and kept in s["teardown"]["machines"]
    assert time.monotonic() - t_kill < 60
    # the machine still reachable destroyed its share: no state, no process of the run
    assert not (c.prefix(kept) / "state" / run_id).exists()
    # what the lost machine's agent left (its engine, servers) goes with `clean`
    r = ctl(c, [sys.executable, "-c",
                "import json,sys; from orchestrator.backends.cluster import ClusterBackend; "
                "res = ClusterBackend.clean([sys.argv[1]], options={'inventory': sys.argv[2]});"
                "print(json.dumps(res.to_dict()))", run_id, str(inventory)], timeout=120)
    assert r.returncode == 0, r.stderr
    reports = json.loads(r.stdout)["reports"]
    assert any(rep["processes"] for rep in reports), reports  # the orphaned engine and tools
    assert not (c.prefix(lost) / "state" / run_id).exists()
    assert run_namespaces(plan["run_tag"]) == []


def test_an_unreachable_machine_fails_the_run_before_anything_is_made(
        nscluster: NsCluster, inventory: Path, tmp_path: Path) -> None:
    """Nothing answers on the port the inventory gives for m1 and m2 (the two machines the
    quickstart is placed on): the run fails at its channels, naming the machine and ssh's
    reason, within ssh's connect timeout, and no machine has made anything."""
    bad = tmp_path / "inventory.yaml"
    text = inventory.read_text().replace("key: id_ed25519,", f"key: {nscluster.root}/id_ed25519,")
    text = text.replace("known_hosts: known_hosts", f"known_hosts: {nscluster.root}/known_hosts")
    bad.write_text(text.replace("port: 22}", "port: 2}"))
    t0 = time.monotonic()
    r = _run(nscluster, bad, tmp_path / "out", "duration=5s")
    assert r.returncode == 1, r.stdout[-2000:] + r.stderr[-2000:]
    assert time.monotonic() - t0 < 60
    run_dir = Path(r.stdout.strip().splitlines()[-1])
    s = json.loads((run_dir / "summary.json").read_text())
    assert s["status"] == "failed"
    assert "`agent ping` failed" in s["error"] and "Connection refused" in s["error"], s["error"]
    assert s["error"].startswith(("m1:", "m2:")), s["error"]
    plan = json.loads((run_dir / "plan.json").read_text())
    assert run_namespaces(plan["run_tag"]) == []
    for m in nscluster.machines:
        assert not (nscluster.prefix(m) / "state" / plan["run_id"]).exists()

