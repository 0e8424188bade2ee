"""Many flows in one xcpperf process (seed 001 goes to n = 1024 long flows).

One client process carries n connections (`xcpperf -P n`), one server process
receives them all, over an unshaped veth pair between two fresh namespaces (the
transport bench's path, bench_transport.py). For each n the figures are the
aggregate goodput (receiver bytes over the test time), how many of the n streams
delivered data, the smallest stream's share of an equal split, and the aggregate's
ratio to one stream's. `max_flows_carried` is the largest n at which every stream
delivered data. `--cc newreno`: no router on the path to give XCP feedback (as in
bench_transport). A failing n is reported with the reason and ends the ladder.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

from bench.bench_transport import _VethPath
from tests.stop_process import stop_process
from xcplab_contract.paths import tool

FLOWS = (1, 16, 64, 256, 512, 1024)
DURATION_S = 3


def _one(path: _VethPath, xcpperf: str, n: int) -> dict[str, Any]:
    doc = path.run(path.a, xcpperf, "-c", "10.78.0.2", "-P", str(n), "-t", str(DURATION_S),
                   "-i", "0", "--cc", "newreno", "--json", timeout=DURATION_S + 120)
    end = doc["end"]
    rx = [s["receiver"]["bytes"] for s in end.get("streams", [])]
    total = sum(rx)
    return {"goodput_mbps": round(end["sum_received"]["bits_per_second"] / 1e6, 2),
            "streams": len(rx), "streams_with_data": sum(1 for b in rx if b > 0),
            "min_share_of_equal": round(min(rx) * n / total, 3) if total else 0.0}


def run() -> dict[str, Any]:
    xcpperf = str(tool("xcpperf"))
    by_n: dict[str, dict[str, Any]] = {}
    errors: list[str] = []
    with _VethPath() as path:
        server = path.start_server(path.b, xcpperf, "-s")  # "listening": the raw socket is open
        try:
            for n in FLOWS:
                try:
                    by_n[str(n)] = _one(path, xcpperf, n)
                except (RuntimeError, subprocess.TimeoutExpired, KeyError, ValueError) as e:
                    errors.append(f"-P {n}: {e}"[:500])
                    break
        finally:
            stop_process(server)
    carried = [int(n) for n, r in by_n.items() if r["streams_with_data"] == int(n)]
    one = by_n.get("1", {}).get("goodput_mbps")
    out: dict[str, Any] = {"many_flows": {
        "max_flows_carried": max(carried) if carried else 0,
        "by_flows": by_n,
        "ratio_to_one_flow": {n: round(r["goodput_mbps"] / one, 3)
                              for n, r in by_n.items()} if one else {},
        "what": ("one xcpperf client process with n connections (-P n, newreno) to one "
                 f"server process, {DURATION_S} s, unshaped veth between two namespaces"),
    }}
    if errors:
        out["errors"] = {"bench_many_flows": "; ".join(errors)}
    return out


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
