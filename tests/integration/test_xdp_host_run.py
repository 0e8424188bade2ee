"""`io: xdp` end to end (issue 22), root, one 4 s run of experiments/examples/xdp-dumbbell.yaml
through the engine: s1 sends three XCP flows (one with two connections) as jobs of one
`xcpperf --xdp` process, s2 one flow, d1 serves all four in one `--xdp` server.

Asserts that the run completed faithful, every flow moved data and the bottleneck was
busy, and that the packets really went through the AF_XDP sockets: each xcpperf process
on an xdp host reports its frames sent through the XSK (`tx_xdp_packets`, none through
the packet socket) and every packet it received taken from it (`rx.xdp.packets` ==
`rx.packets`), one process per host. Run under `flock /tmp/xcplab-timing.lock`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from run_helpers import fidelity_note, router_mode, run_spec

pytestmark = [pytest.mark.root, pytest.mark.timeout(240)]

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "experiments" / "examples" / "xdp-dumbbell.yaml"


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{")]


def test_xdp_hosts_run_every_flow_through_their_one_xsk(tmp_path: Path) -> None:
    if router_mode() != "engine":
        pytest.skip("the XCP queue needs the xcp-router engine (make build)")
    run_dir, summary = run_spec(SPEC, tmp_path, timeout=200)
    why = fidelity_note(summary)
    assert summary["status"] == "completed" and summary["fidelity"]["ok"], why
    flows = summary["flows"]
    assert set(flows) == {"a1", "a2", "a3", "b1"}
    for fid, f in flows.items():
        assert f["bytes"] > 1_000_000 and f["throughput_mbps"] > 5, (fid, f)
    assert flows["a2"]["streams"] == 2
    assert {e["name"]: e["status"] for e in summary["expectations"]} == \
        {"bottleneck busy": "pass"}, summary["expectations"]
    logs = run_dir / "logs"
    clients = sorted(logs.glob("*.client.stdout"))
    assert [p.name for p in clients] == ["a1+a2+a3.client.stdout", "b1.client.stdout"]
    for path in clients:
        ends = [e for e in _events(path) if e.get("event") == "end"]
        assert len(ends) == (3 if path.name.startswith("a1") else 1), path
        for e in ends:  # the process's counters, in each of its jobs' end report
            d = e["data"]
            assert d["tx_xdp_packets"] > 1000 and d["tx_link_packets"] == 0, (path, d)
            assert d["tx_errors"] == 0, (path, d)
            rx = d["rx"]
            assert rx["xdp"]["packets"] == rx["packets"] > 100, (path, rx)
            assert rx["xdp"]["rx_dropped"] == 0, (path, rx)
    servers = sorted(logs.glob("*.server.stdout"))
    assert [p.name for p in servers] == ["a1+a2+a3+b1.server.stdout"]
    streams = [e["data"] for e in _events(servers[0]) if e.get("event") == "stream_end"]
    assert len(streams) == 5  # a2's two connections
    assert sum(s["bytes"] for s in streams) >= sum(f["bytes"] for f in flows.values())
    # the server's receive counters go to stderr as it exits
    rx = next(e["data"] for e in _events(servers[0].with_suffix(".stderr"))
              if e.get("event") == "rx")
    assert rx["xdp"]["packets"] == rx["packets"] > 10_000, rx
