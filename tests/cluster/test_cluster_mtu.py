"""A run across machines whose underlay has MTU 1500 (root): with the inventory's
`vxlan_overhead: reduce_mtu`, every emulated link carries 1450 bytes instead of being
refused, the plan and cluster.json say so, and the hosts use it — measured by their own
stacks: xcpperf sends 1374-byte segments (1450 - 76 bytes of headers), the kernel's TCP
(iperf3) reports a path MTU of 1450 and an MSS of 1398 (1450 - 40 - 12 of timestamps).

The run must complete faithfully with the bottleneck kept busy (the spec's expectation)
and its utilisation within 5 % of the stored netns figure. The XCP/TCP split over the
last 2 s is not asserted here: it varies 0.53-0.76 between runs at MTU 1500 already (see
test_cluster_run.py); its values at 1450 are in docs/cluster.md.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from clusterrun import QUICKSTART, ctl, install_agents
from nscluster import NsCluster

pytestmark = [pytest.mark.root]
STORED = Path(__file__).parent / "quickstart_netns.json"
REDUCED = 1500 - 50


@pytest.fixture(scope="module")
def inventory(nscluster: NsCluster) -> Iterator[Path]:
    install_agents(nscluster)
    text = nscluster.inventory.read_text()  # the underlay as created: MTU 1500
    assert "mtu: 1500" in text and "vxlan_overhead" not in text
    path = nscluster.root / "inventory-reduce.yaml"
    path.write_text(text.replace("machines:\n", "vxlan_overhead: reduce_mtu\nmachines:\n", 1))
    yield path


def _run(c: NsCluster, inv: Path, out: Path, sets: list[str]
         ) -> subprocess.CompletedProcess[str]:
    return ctl(c, [sys.executable, "-m", "orchestrator.cli", "run", str(QUICKSTART),
                   "--backend", "cluster", "--inventory", str(inv), "--out", str(out),
                   "--no-progress", *[a for s in sets for a in ("--set", s)]], timeout=300)


def test_a_1500_byte_underlay_runs_with_the_emulated_mtu_reduced(
        nscluster: NsCluster, inventory: Path, tmp_path: Path) -> None:
    stored = json.loads(STORED.read_text())
    r = _run(nscluster, inventory, tmp_path / "first", stored["sets"])
    if r.returncode == 3:  # flagged unfaithful (shared cores): rerun once, as the run test
        r = _run(nscluster, inventory, tmp_path / "again", stored["sets"])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    run_dir = Path(r.stdout.strip().splitlines()[-1])
    s = json.loads((run_dir / "summary.json").read_text())
    assert s["status"] == "completed" and s["fidelity"]["ok"], s["fidelity"]
    busy = next(e for e in s["expectations"] if e["name"] == "bottleneck busy")
    assert busy["ok"] is True, busy
    want = stored["figures"]["bottleneck_utilization"]
    got = s["links"]["r1->r2"]["utilization"]
    assert abs(got - want) <= 0.05 * want, (got, want)
    # the plan and the run's record say what the links carry, and why
    plan = json.loads((run_dir / "plan.json").read_text())
    assert plan["link_mtu"] == REDUCED
    rec = json.loads((run_dir / "cluster.json").read_text())
    assert (rec["link_mtu"], rec["vxlan_overhead"]) == (REDUCED, "reduce_mtu")
    (t,) = rec["tunnels"]
    assert (t["underlay_mtu"], t["emulated_mtu"]) == (1500, REDUCED)
    assert t["mtu_choice"].startswith(f"emulated MTU reduced to {REDUCED} on every link")
    # what the hosts use, from their own stacks' reports
    xcp = [f for f in plan["flows"] if f["tool"] == "xcpperf"]
    tcp = [f for f in plan["flows"] if f["tool"] == "iperf3"]
    assert xcp and tcp
    for f in xcp:
        report = (run_dir / "logs" / f"{f['id']}.client.stdout").read_text()
        assert set(re.findall(r'"mss":\s*(\d+)', report)) == {str(REDUCED - 76)}, f["id"]
    for f in tcp:
        report = json.loads((run_dir / "logs" / f"{f['id']}.client.stdout").read_text())
        assert report["start"]["tcp_mss_default"] == REDUCED - 40 - 12
        pmtus = {st["pmtu"] for iv in report["intervals"] for st in iv["streams"]}
        assert pmtus == {REDUCED}, pmtus
