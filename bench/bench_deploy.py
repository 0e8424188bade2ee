"""Deploy/teardown time of the netns backend on a generated topology.

Topology: N/2 routers in a chain, one host hanging off each router (N nodes,
N-1 links). The spec goes through the real planner; the namespaces, veths,
addresses, routes, neighbours, offloads and sysctls are made by the agent's
deployer exactly as in a run (engine router mode: the engine processes are not
part of this figure). "deploy" includes waiting until every link is
operationally up (the kernel's linkwatch delays carrier by up to ~1 s);
"teardown" removes every namespace the deployment made.

    run() -> {"deploy": {"nodes_200_s", "teardown_200_s", "nodes_1000_s", ...}}
"""

from __future__ import annotations

import secrets
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents import deploy as dep_mod
from agents.from_plan import share_for
from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec_text


def chain_spec(n_nodes: int) -> str:
    routers = n_nodes // 2
    lines = ["name: bench-deploy", "duration: 1s", "nodes:"]
    lines += [f"  r{i}: {{role: router, queue: droptail}}" for i in range(routers)]
    lines += [f"  h{i}: {{role: host}}" for i in range(n_nodes - routers)]
    lines.append("links:")
    lines.append("  - chain: [" + ", ".join(f"r{i}" for i in range(routers)) + "]")
    lines += [f"  - {{a: h{i}, b: r{i % routers}}}" for i in range(n_nodes - routers)]
    lines.append("defaults: {link: {capacity: 100Mbps, delay: 1ms}}")
    return "\n".join(lines) + "\n"


def measure(n_nodes: int) -> dict[str, float]:
    t = time.monotonic()
    plan = make_plan(load_spec_text(chain_spec(n_nodes), f"<bench {n_nodes}>"),
                     f"bench-{n_nodes}-{secrets.token_hex(2)}")
    share = share_for(plan, "local", "engine")
    plan_s = time.monotonic() - t
    names = [ns.name for ns in share.namespaces]
    try:
        t = time.monotonic()
        dep = dep_mod.deploy(share)
        created_s = time.monotonic() - t
        dep_mod.wait_operational(dep, timeout_s=30)
        deploy_s = time.monotonic() - t
        dep.close()
    finally:
        t = time.monotonic()
        dep_mod.remove_namespaces(names)
        teardown_s = time.monotonic() - t
    return {"plan_s": plan_s, "created_s": created_s, "deploy_s": deploy_s,
            "teardown_s": teardown_s, "links": len(share.veths)}


def run() -> dict:
    m200 = measure(200)
    m1000 = measure(1000)
    return {"deploy": {
        "nodes_200_s": round(m200["deploy_s"], 3),
        "teardown_200_s": round(m200["teardown_s"], 3),
        "nodes_1000_s": round(m1000["deploy_s"], 3),
        "teardown_1000_s": round(m1000["teardown_s"], 3),
        "netlink_200_s": round(m200["created_s"], 3),  # before links come up
        "netlink_1000_s": round(m1000["created_s"], 3),
        "plan_200_s": round(m200["plan_s"], 3),
        "plan_1000_s": round(m1000["plan_s"], 3),
    }}


if __name__ == "__main__":
    import json
    print(json.dumps(run(), indent=2))
