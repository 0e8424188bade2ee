"""How many emulated 100 Mb/s routers one core carries faithfully.

N independent h1 -- r1 -- h2 chains (tests/engine/topo.py), one engine each, every
engine pinned to the same CPU (the last one) with `taskset`; the blasters run on
the other CPUs. Each r1 emulates a 100 Mb/s, 2 ms link towards h2 (the other
direction unlimited, 2 ms) and xcp-pktgen sends it 1514-byte frames paced at that
rate, one frame per send. N doubles from 1 until a step is not faithful, then
bisects; the figure is the largest faithful N.

Faithful, for every engine over the measured window (the rule of
orchestrator/analysis/engine_timing.py where it applies): no frame dropped by the
kernel before the engine read it (rx_socket_drops), h2 received at least 98 % of
what the blaster offered, at most 1 % of deliveries more than 1 ms late and none
more than 20 ms late.

    scale.routers_per_core_100mbps        largest faithful N (0: not even one)
    scale.routers_per_core_cpu            CPU of the pinned core at that N (sum of
                                          the engines' busy fractions)
    scale.routers_per_core_why            what broke at the next step

The routers carry the UDP stream, not XCP flows: the engines' work per packet is
the forwarding path's (an XCP qdisc adds ~100 ns per packet, bench_xcp). Needs
root, 2+ CPUs, and an otherwise idle machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.bench_engine_cpu import FRAME_BYTES, percentile_bound_us  # noqa: E402
from bench.bench_forwarding import ENGINE_PRIORITY, UNLIMITED_BPS, _pktgen, _RxCounter  # noqa: E402
from tests.engine.topo import LinearTopo, LinkSpec, mac  # noqa: E402

LINK_BPS = 100_000_000
DELAY_US = 2000
WARMUP_S = 1.0
WINDOW_S = 3.0
MAX_N = 16  # bounds the namespaces and processes one step creates


def _late_fraction(f0: dict[str, Any], f1: dict[str, Any], bound_us: int) -> float:
    h0, h1 = f0["event_lateness"], f1["event_lateness"]
    counts = [b - a for a, b in zip(h0["counts"], h1["counts"], strict=True)]
    total = sum(counts)
    late = sum(
        c
        for i, c in enumerate(counts)
        if i >= len(h1["bounds_us"]) or h1["bounds_us"][i] > bound_us
    )
    return late / total if total else float("nan")


def _step(n: int, core: int, others: str) -> tuple[bool, float, str]:
    """Runs n chains at once; returns (faithful, CPU of the core, why not)."""
    pps = LINK_BPS / ((FRAME_BYTES - 14) * 8)
    seconds = WARMUP_S + WINDOW_S + 0.5
    fast = LinkSpec(capacity_bps=UNLIMITED_BPS, delay_us=DELAY_US, limit_packets=1000)
    link = LinkSpec(capacity_bps=LINK_BPS, delay_us=DELAY_US, limit_packets=1000)
    with contextlib.ExitStack() as stack:
        topos = []
        for _ in range(n):
            topo = stack.enter_context(
                LinearTopo(
                    1,
                    fast,
                    overrides={(1, "egress1"): link},
                    host_ingress=False,
                    sched_priority=ENGINE_PRIORITY,
                )
            )
            assert topo.engine is not None
            subprocess.run(
                ["taskset", "-pc", str(core), str(topo.engine.pid)], check=True, capture_output=True
            )
            topos.append(topo)
        gens = [
            t.popen("h1", "taskset", "-c", others, str(_pktgen()),
                    "--ifname", "eth0", "--src-mac", mac(0, 1), "--dst-mac", mac(0, 2),
                    "--src-ip", "10.0.0.1", "--dst-ip", t.sink_addr(),
                    "--frame-bytes", str(FRAME_BYTES), "--seconds", str(seconds),
                    "--pps", str(pps), "--batch", "1")
            for t in topos
        ]  # fmt: skip
        counters = [_RxCounter(t) for t in topos]
        try:
            time.sleep(WARMUP_S)
            f0 = [t.stats()["fidelity"] for t in topos]
            s0 = [c.sample() for c in counters]
            time.sleep(WINDOW_S)
            f1 = [t.stats()["fidelity"] for t in topos]
            s1 = [c.sample() for c in counters]
        finally:
            for c in counters:
                c.close()
            outs = [g.communicate(timeout=seconds + 10) for g in gens]
    for g, (_, err) in zip(gens, outs, strict=True):
        if g.returncode != 0:
            raise RuntimeError(f"xcp-pktgen failed with {n} chains: {err.strip()}")
    cpu = sum(
        (b["cpu_seconds"] - a["cpu_seconds"]) / (b["wall_seconds"] - a["wall_seconds"])
        for a, b in zip(f0, f1, strict=True)
    )
    problems = []
    for i in range(n):
        offered = json.loads(outs[i][0])
        offered_pps = offered["sent"] / offered["seconds"]
        got = (s1[i][1] - s0[i][1]) / (s1[i][0] - s0[i][0])
        drops = f1[i]["rx_socket_drops"]
        late1 = _late_fraction(f0[i], f1[i], 1000)
        worst = f1[i]["event_lateness"]["max_us"]
        if drops > 0:
            problems.append(f"chain {i}: {drops} frames dropped before the engine read them")
        if got < 0.98 * offered_pps:
            problems.append(f"chain {i}: delivered {got:.0f} of {offered_pps:.0f} pps")
        if not late1 <= 0.01:
            problems.append(f"chain {i}: {late1:.2%} of deliveries > 1 ms late")
        if worst > 20_000:
            problems.append(f"chain {i}: a delivery {worst / 1000:.1f} ms late")
    p99 = max(
        percentile_bound_us(
            b["event_lateness"]["bounds_us"],
            [
                y - x
                for x, y in zip(
                    a["event_lateness"]["counts"], b["event_lateness"]["counts"], strict=True
                )
            ],
            0.99,
        )
        for a, b in zip(f0, f1, strict=True)
    )
    print(
        f"bench_routers_per_core: N={n}: core at {cpu:.2f}, worst p99 lateness <= {p99:g} us, "
        f"{'faithful' if not problems else '; '.join(problems)}",
        file=sys.stderr,
    )
    return not problems, cpu, "; ".join(problems)


def run() -> dict[str, Any]:
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return {
            "errors": {
                "bench_routers_per_core": f"needs 2+ CPUs (the blasters run beside "
                f"the measured core), has {len(cpus)}"
            }
        }
    core, others = cpus[-1], ",".join(str(c) for c in cpus[:-1])
    best, best_cpu, why = 0, float("nan"), f"reached the bound of {MAX_N} chains"
    # Doubling up to the first unfaithful step, then bisection below it.
    lo, hi, n = 0, MAX_N + 1, 1
    while lo + 1 < hi:
        ok, cpu, problems = _step(n, core, others)
        if ok:
            lo, best, best_cpu = n, n, cpu
        else:
            hi, why = n, f"{n} routers: {problems}"
        n = min(2 * n, MAX_N) if hi == MAX_N + 1 else (lo + hi) // 2
    return {
        "scale": {
            "routers_per_core_100mbps": best,
            "routers_per_core_cpu": best_cpu,
            "routers_per_core_why": why,
        }
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
