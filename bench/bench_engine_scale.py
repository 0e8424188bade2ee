"""Start-up time and memory of one xcp-router serving N ports (issue 17: engine scale).

A star in one network namespace `xcplab-es<6hex>`: a centre router `c` with N/2
ports and N/2 leaf routers with one port each, every leaf's port the other end of a
veth pair from one of c's ports (N ports, N/2 pairs, N/2 + 1 routers in one
engine). Every link direction 100 Mb/s, 1 ms, drop-tail 1000 packets: the
star of the issue, whose 1000-node version the engine did not start in 10 s.

Per N the engine is started once (after the namespace is built, so only the
engine's own work is timed):

    start_s   Popen -> the engine's "ready" line (config load, sockets, rings, routers)
    rss_kb    VmRSS once ready (rings are mapped at setsockopt time: idle ports
              weigh all they ever will)

Figures:
    scale.engine_start_s_100_ports, scale.engine_start_s_1000_ports
    scale.engine_stop_s_100_ports, scale.engine_stop_s_1000_ports
                                   SIGTERM -> exit: every port's socket closed (each close
                                   waits out kernel RCU grace periods; Port::close_many
                                   overlaps them)
    scale.port_close_s_1000_{serial,many}  closing xcp-port-open's 1000 ports one after
                                   another vs Port::close_many
    scale.engine_rss_kb_per_port   (rss(1000) - rss(10)) / 990: the slope, what one
                                   more idle port costs
    scale.port_{open_s_1000,rss_kb_per_port}_*  the engine's Port alone (xcp-port-open,
                                   router-image/bench/port_open.cc), 1000 ports: "serial_
                                   unsized" as the engine opens them today (Port(ifname):
                                   rate unknown, 4 MiB ring, one after another);
                                   "many_100mbps" with the link rate and Port::open_many,
                                   what the engine gets once it passes both (the hook in
                                   docs/deployment.md, scale section)

Needs root (namespaces). The namespace carries a unique id and is deleted on the
way out, failure or not. `python3 bench/bench_engine_scale.py 10 100 500 1000`
prints the table for chosen N.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from xcplab_contract.paths import tool

READY_TIMEOUT_S = 120.0
CAPACITY_BPS = 100_000_000
LINK = {"capacity_bps": CAPACITY_BPS, "delay_us": 1000,
        "queue": {"kind": "droptail", "limit_packets": 1000, "limit_bytes": 0, "params": {}},
        "loss": {"model": "none"}}


def _sh(*cmd: str, stdin: str | None = None) -> None:
    p = subprocess.run(list(cmd), check=False, capture_output=True, text=True, input=stdin)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")


def _mac(i: int, end: int) -> str:
    return f"02:{end:02x}:00:{(i >> 16) & 0xff:02x}:{(i >> 8) & 0xff:02x}:{i & 0xff:02x}"


def _addr(i: int, end: int) -> str:
    return f"10.{(i >> 8) & 0xff}.{i & 0xff}.{end}"


def _config(tag: str, netns: str, pairs: int, sock: str) -> dict[str, Any]:
    centre_ports = []
    leaves = []
    for i in range(pairs):
        centre_ports.append({"name": f"c:a{i}", "ifname": f"a{i}", "mac": _mac(i, 1),
                             "ipv4": f"{_addr(i, 1)}/24", "egress": LINK})
        leaves.append({"name": f"l{i}", "netns": netns,
                       "ports": [{"name": f"l{i}:b{i}", "ifname": f"b{i}", "mac": _mac(i, 2),
                                  "ipv4": f"{_addr(i, 2)}/24", "egress": LINK}],
                       "routes": [{"prefix": "0.0.0.0/0", "port": f"l{i}:b{i}",
                                   "next_hop_mac": _mac(i, 1)}]})
    centre = {"name": "c", "netns": netns, "ports": centre_ports,
              "routes": [{"prefix": f"{_addr(i, 0)}/24", "port": f"c:a{i}",
                          "next_hop_mac": _mac(i, 2)} for i in range(pairs)]}
    return {"run": tag, "seed": 1, "control_socket": sock, "routers": [centre, *leaves]}


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


@contextlib.contextmanager
def _namespace(pairs: int) -> Iterator[tuple[str, Path]]:
    """A namespace `xcplab-es<6hex>` holding veth pairs a<i> - b<i>, i < pairs, all up,
    and a scratch directory; both removed on the way out."""
    tag = f"xcplab-es{secrets.token_hex(3)}"
    tmp = Path(tempfile.mkdtemp(prefix=f"{tag}-"))
    _sh("ip", "netns", "add", tag)
    try:
        batch = [f"link add a{i} address {_mac(i, 1)} type veth peer name b{i} address {_mac(i, 2)}"
                 for i in range(pairs)]
        batch += [f"link set a{i} up" for i in range(pairs)]
        batch += [f"link set b{i} up" for i in range(pairs)]
        _sh("ip", "-n", tag, "-batch", "-", stdin="\n".join(batch) + "\n")
        yield tag, tmp
    finally:
        subprocess.run(["ip", "netns", "del", tag], check=False, capture_output=True)
        for p in tmp.glob("*"):
            p.unlink(missing_ok=True)
        os.rmdir(tmp)


def measure(ports: int) -> dict[str, float]:
    """Builds the star of `ports` ports, starts the engine, returns start_s, rss_kb and
    stop_s (SIGTERM -> exit: the ports' sockets closed, Port::close_many)."""
    if ports < 2 or ports % 2:
        raise ValueError("ports must be an even number >= 2")
    with _namespace(ports // 2) as (tag, tmp):
        cfg = tmp / "engine.json"
        sock = str(tmp / "engine.sock")
        cfg.write_text(json.dumps(_config(tag, f"/run/netns/{tag}", ports // 2, sock)))
        t0 = time.perf_counter()
        engine = subprocess.Popen([str(tool("xcp-router")), "--config", str(cfg)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert engine.stdout is not None
            line = engine.stdout.readline()
            start_s = time.perf_counter() - t0
            if line.strip() != "ready":
                err = engine.stderr.read() if engine.stderr else ""
                raise RuntimeError(f"xcp-router with {ports} ports did not start: "
                                   f"{line!r} {err[-2000:]}")
            out: dict[str, float] = {"start_s": round(start_s, 3), "rss_kb": _rss_kb(engine.pid)}
            t1 = time.perf_counter()
            engine.terminate()
            engine.wait(timeout=30)
            out["stop_s"] = round(time.perf_counter() - t1, 3)
            return out
        finally:
            if engine.poll() is None:
                engine.kill()
                engine.wait()


def measure_ports(ports: int, rate_bps: float, mode: str) -> dict[str, Any]:
    """Opens `ports` ports with xcp-port-open (the engine's Port, without routers):
    rings sized for `rate_bps` (0: unknown, the largest), `mode` serial or many."""
    with _namespace(ports) as (tag, _tmp):
        # Built beside the engine (router-image/CMakeLists.txt); not a deployed tool.
        opener = tool("xcp-router").parent / "xcp-port-open"
        args = [str(opener), f"/run/netns/{tag}", "a", str(ports), str(rate_bps), mode]
        out = subprocess.run(args, check=True, capture_output=True, text=True,
                             timeout=READY_TIMEOUT_S).stdout
    result: dict[str, Any] = json.loads(out)
    return result


def run() -> dict[str, dict[str, object]]:
    if os.geteuid() != 0:
        return {"errors": {"bench_engine_scale": "needs root (network namespaces)"}}
    m = {n: measure(n) for n in (10, 100, 1000)}
    per_port = (m[1000]["rss_kb"] - m[10]["rss_kb"]) / 990
    # The port layer alone, as the engine would open its ports with the hook
    # described in docs/deployment.md (rates passed, Port::open_many).
    old = measure_ports(1000, 0, "serial")
    new = measure_ports(1000, CAPACITY_BPS, "many")

    def kb_per_port(r: dict[str, Any]) -> float:
        return round((r["rss_kb"] - r["rss_kb_before"]) / r["ports"], 1)

    return {"scale": {"port_open_s_1000_serial_unsized": old["open_s"],
                      "port_rss_kb_per_port_unsized": kb_per_port(old),
                      "port_open_s_1000_many_100mbps": new["open_s"],
                      "port_rss_kb_per_port_100mbps": kb_per_port(new),
                      "engine_start_s_100_ports": m[100]["start_s"],
                      "engine_start_s_1000_ports": m[1000]["start_s"],
                      "engine_stop_s_100_ports": m[100]["stop_s"],
                      "engine_stop_s_1000_ports": m[1000]["stop_s"],
                      "port_close_s_1000_serial": old["close_s"],
                      "port_close_s_1000_many": new["close_s"],
                      "engine_rss_kb_per_port": round(per_port, 1),
                      "engine_rss_kb_10_ports": m[10]["rss_kb"],
                      "engine_rss_kb_1000_ports": m[1000]["rss_kb"]}}


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "ports":  # ports N RATE_BPS serial|many
        print(measure_ports(int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]))
    elif len(sys.argv) > 1:
        for n in (int(a) for a in sys.argv[1:]):
            print(n, measure(n), flush=True)
    else:
        print(run())
