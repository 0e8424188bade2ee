"""Runs ON a machine (sent as `python3 -c`): standard library only, Python >= 3.7.

argv: ADDRESS MTU PREFIX [PEER_ADDRESS ...]
Prints one JSON line of facts (versions, the MTU of the interface holding ADDRESS,
whether a don't-fragment packet of MTU bytes reaches each peer, the supervised agent),
then answers each line on stdin with its wall clock in ns until stdin ends.
"""

from __future__ import annotations

import json
import os
import platform
import socket
import subprocess
import sys
import time


def _mtu_of(address: str) -> tuple[int | None, str]:
    try:
        ip = str(socket.getaddrinfo(address, None)[0][4][0])
        out = subprocess.run(["ip", "-o", "addr", "show"], capture_output=True, text=True,
                             timeout=5).stdout
    except (OSError, subprocess.SubprocessError) as e:
        return None, str(e)
    for line in out.splitlines():
        parts = line.split()
        if len(parts) > 3 and parts[3].split("/")[0] == ip:
            with open(f"/sys/class/net/{parts[1]}/mtu") as f:
                return int(f.read()), parts[1]
    return None, f"no interface holds {ip}"


def _agent(prefix: str) -> dict[str, object]:
    info: dict[str, object] = {"version": None, "pid": None}
    try:
        with open(os.path.join(prefix, "VERSION")) as f:
            info["version"] = f.read().strip()
    except OSError:
        pass
    try:
        with open(os.path.join(prefix, "run", "supervisor.pid")) as f:
            pid = int(f.read().strip())
        os.kill(pid, 0)
        info["pid"] = pid
    except (OSError, ValueError):
        pass
    return info


def main() -> None:
    address, mtu, prefix, peers = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
    # IPv4: 20 B IP header + 8 B ICMP header; DF set, so a smaller path MTU fails.
    pings = {p: subprocess.Popen(["ping", "-n", "-q", "-M", "do", "-s", str(mtu - 28), "-c", "1",
                                  "-W", "2", p], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL) for p in peers}
    measured, iface = _mtu_of(address)
    facts = {"python": platform.python_version(), "kernel": platform.release(),
             "mtu": measured, "iface": iface, "agent": _agent(prefix),
             "pmtu_ok": {p: proc.wait() == 0 for p, proc in pings.items()}}
    print(json.dumps(facts), flush=True)
    for _line in sys.stdin:
        print(time.time_ns(), flush=True)


if __name__ == "__main__":
    main()
