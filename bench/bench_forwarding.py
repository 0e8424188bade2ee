"""Forwarding benchmark: xcp-router versus Linux kernel forwarding, same run.

Topology (tests/engine/topo.py): h1 -- r1 -- h2, veth, offloads off. A UDP
frame blaster (xcp-pktgen, AF_PACKET + sendmmsg) in h1 sends as fast as it can
towards an address on h2's link whose next-hop MAC nobody owns (h2's veth
counts the frames, its kernel drops them at L2, so receiver work stays out); the
rate is read from h2's interface counters over a window in the middle of the
run, so neither the generator's nor the router's own report is trusted. r1 is
either the engine (links emulated at 100 Gb/s so they never limit) or the kernel
(ip_forward=1, static neighbours).

Run alone on an otherwise idle machine: the blaster needs a core of its own.
*_offered_pps_* is what the blaster managed to send in each run (averaged over
the whole run); engine_socket_drops_* > 0 means the engine, not the blaster,
limited the engine's figure. On 2 cores a polling engine occupies one, so the
blaster has less CPU in the engine runs than in the kernel runs.

rate_error_1g: the engine's r1 -> h2 link emulated at 1 Gb/s, 1500-byte IP
packets offered above line rate; |delivered IP bit rate - 1e9| / 1e9.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.engine.topo import LinearTopo, LinkSpec, mac  # noqa: E402 - REPO on sys.path first
from xcplab_contract.paths import BUILD_DIR  # noqa: E402

WARMUP_S = 0.7
WINDOW_S = 2.0
UNLIMITED_BPS = 100_000_000_000
# The kernel forwards in softirq context, which no process can preempt; the
# engine runs as a process, so on a shared machine it gets SCHED_FIFO to
# compete on equal terms (config "sched_priority", CONFIG.md).
ENGINE_PRIORITY = 10


def _pktgen() -> Path:
    p = Path(os.environ.get("XCPLAB_PKTGEN", BUILD_DIR / "router-image" / "xcp-pktgen"))
    if not (p.is_file() and os.access(p, os.X_OK)):
        raise RuntimeError(f"xcp-pktgen not found at {p}: run `make build` or set XCPLAB_PKTGEN")
    return p


class _RxCounter:
    """Reads h2's interface counters through /proc/<pid>/net/dev of a process
    parked in h2's namespace: microseconds per read, so the sampling instants
    are known to much better than the window's length (an `ip netns exec cat`
    takes tens of milliseconds)."""

    def __init__(self, topo: LinearTopo) -> None:
        self.ifname = f"eth{topo.n}"
        self.proc = topo.popen("h2", "sleep", "120")
        self.path = Path(f"/proc/{self.proc.pid}/net/dev")
        # `ip netns exec` execs sleep in place once it has entered the namespace.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and self.ifname not in self.path.read_text():
            time.sleep(0.01)

    def sample(self) -> tuple[float, int]:
        t0 = time.monotonic()
        text = self.path.read_text()
        t1 = time.monotonic()
        for line in text.splitlines():
            name, _, rest = line.partition(":")
            if name.strip() == self.ifname:
                return (t0 + t1) / 2, int(rest.split()[1])  # rx packets
        raise RuntimeError(f"{self.ifname} not in {self.path}")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def _blast(topo: LinearTopo, frame_bytes: int, pps: float = 0.0) -> dict[str, float]:
    """Runs the blaster (unpaced, or paced to `pps`) and returns received
    packets/s and IP bits/s at h2."""
    seconds = WARMUP_S + WINDOW_S + 0.5
    # The blaster stays SCHED_OTHER: as SCHED_FIFO it starves ksoftirqd, and
    # the receiving namespace then drops frames the routers delivered.
    gen = topo.popen(
        "h1",
        str(_pktgen()),
        "--ifname", "eth0",
        "--src-mac", mac(0, 1),
        "--dst-mac", mac(0, 2),
        "--src-ip", "10.0.0.1",
        "--dst-ip", topo.sink_addr(),
        "--frame-bytes", str(frame_bytes),
        "--seconds", str(seconds),
        *(["--pps", str(pps)] if pps > 0 else []),
    )  # fmt: skip
    counter = _RxCounter(topo)
    try:
        time.sleep(WARMUP_S)
        t0, p0 = counter.sample()
        time.sleep(WINDOW_S)
        t1, p1 = counter.sample()
        dt = t1 - t0
    finally:
        counter.close()
        out, err = gen.communicate(timeout=seconds + 10)
    if gen.returncode != 0:
        raise RuntimeError(f"xcp-pktgen failed: {err.strip()}")
    sent = json.loads(out)
    pps = (p1 - p0) / dt
    return {
        "pps": pps,
        "ip_bps": pps * (frame_bytes - 14) * 8,
        "offered_pps": sent["sent"] / sent["seconds"],
    }


def _forwarding_pps(kernel: bool, frame_bytes: int) -> dict[str, float]:
    link = LinkSpec(capacity_bps=UNLIMITED_BPS, delay_us=0, limit_packets=1000)
    with LinearTopo(
        1, link, host_ingress=False, kernel_routers=kernel, sched_priority=ENGINE_PRIORITY
    ) as topo:
        r = _blast(topo, frame_bytes)
        if not kernel:
            # Frames the kernel dropped before the engine read them: zero means
            # the engine kept up and the blaster set the rate.
            r["socket_drops"] = topo.stats()["fidelity"]["rx_socket_drops"]
        return r


def _rate_error_1g() -> dict[str, Any]:
    fast = LinkSpec(capacity_bps=UNLIMITED_BPS, delay_us=0, limit_packets=1000)
    # A deep buffer (240 ms at 1 Gb/s) rides out the blaster's on/off bursts on
    # a shared machine: the serialiser, not the arrivals, must set the rate.
    gig = LinkSpec(capacity_bps=1_000_000_000, delay_us=0, limit_packets=20_000)
    with LinearTopo(
        1, fast, overrides={(1, "egress1"): gig}, host_ingress=False, sched_priority=ENGINE_PRIORITY
    ) as topo:
        # 25 % above line rate: the link must be the bottleneck, without
        # turning the test into an overload test of the receive path.
        r = _blast(topo, 1514, pps=1.25 * 1e9 / (1500 * 8))
        fidelity = topo.stats()["fidelity"]
    return {
        "rate_error_1g": abs(r["ip_bps"] - 1e9) / 1e9,
        "delivered_bps_1g": r["ip_bps"],
        "offered_pps_1g": r["offered_pps"],
        "engine_busy_fraction_1g": fidelity["busy_fraction"],
        "engine_late_events_1g": fidelity["late_events"],
    }


def run() -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for size, label in ((64, "64"), (1514, "1500")):
        engine = _forwarding_pps(kernel=False, frame_bytes=size)
        kernel = _forwarding_pps(kernel=True, frame_bytes=size)
        figures[f"engine_pps_{label}"] = engine["pps"]
        figures[f"kernel_pps_{label}"] = kernel["pps"]
        figures[f"engine_offered_pps_{label}"] = engine["offered_pps"]
        figures[f"kernel_offered_pps_{label}"] = kernel["offered_pps"]
        figures[f"engine_socket_drops_{label}"] = engine["socket_drops"]
    figures.update(_rate_error_1g())
    return {"forwarding": figures}


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
