"""The cluster backend on the namespace cluster (tests/cluster/nscluster.py): deploy time
and what crossing machines costs.

- `quickstart_*`: `xcplab run experiments/quickstart.yaml --backend cluster` for 5 s (its
  TCP flow starts at 4 s) across three namespace machines on a 9000-byte underlay: the
  runner's deploy/teardown times, the part of the deploy spent opening the SSH channels
  and measuring clocks, the start skew bound, and the bottleneck's utilisation (the run
  must be faithful);
- `vxlan_rtt_added_us`: the round trip of a 1400-byte ping between two machines through
  a VXLAN tunnel (orchestrator/cluster/vxlan.py commands) minus the same ping over the
  underlay itself (median of 200 each): the encapsulation's added latency, both ways;
- `vxlan_tcp_ratio`: one kernel TCP stream's throughput through the tunnel over the same
  stream on the underlay (iperf3 3 s each, 1448-byte segments on both): what
  encapsulation costs in throughput where the CPU is the limit (namespaces on one host).

    run() -> {"cluster": {"quickstart_deploy_s", "quickstart_channels_and_clocks_s",
                          "quickstart_teardown_s", "quickstart_start_skew_bound_ms",
                          "quickstart_bottleneck_utilization", "vxlan_rtt_added_us", ...}}
Root, seconds per figure; the cluster is torn down whatever happens.
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "cluster"))

from nscluster import NsCluster, create  # noqa: E402

from orchestrator.cluster.vxlan import Tunnel  # noqa: E402

PINGS = 200
TCP_SECONDS = 3
IPERF_PORT = 5299
RTT = re.compile(r"time=([0-9.]+) ms")


def _install(c: NsCluster) -> None:
    bundle = c.root / "bundle.tar"
    subprocess.run([sys.executable, "-m", "orchestrator.cli", "cluster", "bundle", str(bundle)],
                   cwd=ROOT, check=True, capture_output=True, timeout=120)
    for i, m in enumerate(c.machines):
        with bundle.open("rb") as f:
            subprocess.run(c.in_ctl(c.ssh_argv(i, [f"mkdir -p {c.prefix(m)} && tar -x -C "
                                                   f"{c.prefix(m)}"])),
                           stdin=f, check=True, capture_output=True, timeout=60)


def _quickstart(c: NsCluster, inv: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="xcplab-bench-cluster-") as out:
        r = subprocess.run(c.in_ctl([sys.executable, "-m", "orchestrator.cli", "run",
                                     str(ROOT / "experiments" / "quickstart.yaml"),
                                     "--backend", "cluster", "--inventory", str(inv),
                                     "--set", "duration=5s", "--out", out, "--no-progress"]),
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError(f"cluster run exited {r.returncode}: {r.stderr[-1000:]}")
        s = json.loads((Path(r.stdout.strip().splitlines()[-1]) / "summary.json").read_text())
    t, d = s["timings"], s["deploy"]
    return {"quickstart_deploy_s": round(t["deploy_s"], 3),
            "quickstart_channels_and_clocks_s": round(d["timings"]["channels_and_clocks_s"], 3),
            "quickstart_apply_s": round(d["timings"]["apply_s"], 3),
            "quickstart_teardown_s": round(t["teardown_s"], 3),
            "quickstart_start_skew_bound_ms": d["cluster"]["start_skew_bound_ms"],
            "quickstart_bottleneck_utilization": round(s["links"]["r1->r2"]["utilization"], 4)}


def _median_rtt_us(c: NsCluster, dst: str) -> float:
    r = subprocess.run(c.in_ctl(c.ssh_argv(0, ["ping", "-n", "-M", "do", "-s", "1372", "-c",
                                               str(PINGS), "-i", "0.005", "-W", "1", dst])),
                       capture_output=True, text=True, timeout=60)
    rtts = [float(x) for x in RTT.findall(r.stdout)]
    if len(rtts) < PINGS // 2:
        raise RuntimeError(f"ping {dst}: {len(rtts)} of {PINGS} answered: {r.stderr[-300:]}")
    return statistics.median(rtts) * 1000


def _vxlan_added(c: NsCluster) -> dict[str, Any]:
    t = Tunnel("bench", 4243, f"vx{c.cluster_id}0001", "m1", c.address(0), "m2", c.address(1),
               9000, 1500, "underlay MTU 9000 carries the 50-byte overhead")
    ends = [("m1", 0, "10.251.0.1/30"), ("m2", 1, "10.251.0.2/30")]
    try:
        for m, i, addr in ends:
            for argv in [*t.commands(m), ["ip", "addr", "add", addr, "dev", t.ifname]]:
                subprocess.run(c.in_ctl(c.ssh_argv(i, argv)), check=True, capture_output=True,
                               timeout=30)
        under = _median_rtt_us(c, c.address(1))
        tunnel = _median_rtt_us(c, "10.251.0.2")
        under_bps = _tcp_bps(c, c.address(1))
        tunnel_bps = _tcp_bps(c, "10.251.0.2")
    finally:
        for _m, i, _addr in ends:
            subprocess.run(c.in_ctl(c.ssh_argv(i, ["ip", "link", "del", t.ifname])),
                           capture_output=True, timeout=30)
    return {"underlay_rtt_us": round(under, 1), "vxlan_rtt_us": round(tunnel, 1),
            "vxlan_rtt_added_us": round(tunnel - under, 1),
            "underlay_tcp_gbps": round(under_bps / 1e9, 3),
            "vxlan_tcp_gbps": round(tunnel_bps / 1e9, 3),
            "vxlan_tcp_ratio": round(tunnel_bps / under_bps, 3)}


def _tcp_bps(c: NsCluster, dst: str) -> float:
    """One kernel TCP stream m1 -> m2 (iperf3, TCP_SECONDS, 1448-byte segments on both
    paths so they carry the same packets: the tunnel's cost is encapsulation alone)."""
    server = subprocess.Popen(["ip", "netns", "exec", c.ns("m2"), "iperf3", "-s", "-1", "-B",
                               dst, "-p", str(IPERF_PORT)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):  # until it listens
            r = subprocess.run(["ip", "netns", "exec", c.ns("m1"), "iperf3", "-c", dst, "-p",
                                str(IPERF_PORT), "-t", str(TCP_SECONDS), "-M", "1448", "-J"],
                               capture_output=True, text=True, timeout=60)
            if r.returncode == 0:
                return float(json.loads(r.stdout)["end"]["sum_received"]["bits_per_second"])
            time.sleep(0.1)
        raise RuntimeError(f"iperf3 to {dst}: {r.stdout[-300:]} {r.stderr[-300:]}")
    finally:
        if server.poll() is None:
            server.terminate()  # ours, by pid
        server.wait(10)


def run() -> dict[str, Any]:
    c = create(3)
    out: dict[str, Any] = {}
    errors: dict[str, str] = {}
    try:
        _install(c)
        inv = c.set_underlay_mtu(9000)
        parts = {"vxlan": lambda: _vxlan_added(c), "quickstart": lambda: _quickstart(c, inv)}
        for name, part in parts.items():
            try:
                out.update(part())
            except (RuntimeError, subprocess.SubprocessError, OSError, KeyError) as e:
                errors[name] = str(e)
    finally:
        c.down()
    return {"cluster": out, **({"errors": {"bench_cluster": "; ".join(
        f"{k}: {v}" for k, v in errors.items())}} if errors else {})}


if __name__ == "__main__":
    print(json.dumps(run(), indent=1))
