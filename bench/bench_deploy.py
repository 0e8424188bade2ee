"""Deploy/teardown time of the netns backend on a generated topology.

Topology: N/2 routers in a chain, one host hanging off each router (N nodes,
N-1 links). The spec goes through the real planner; the namespaces, veths,
addresses, routes, neighbours, offloads and sysctls are made by the agent's
deployer exactly as in a run (engine router mode: the engine processes are not
part of this figure). "deploy" includes waiting until every link is
operationally up (the kernel's linkwatch delays carrier by up to ~1 s);
"teardown" removes every namespace the deployment made.

The docker backend's figures (`docker_<n>_s`, `docker_teardown_<n>_s`, beside
`netns_<n>_s`/`netns_teardown_<n>_s` for n = 20, 50, 200) take the same path as a
run: one container per node from the `make images` images (create, start, inspect),
then the same deployer naming each container's namespace instead of creating one;
teardown unnames them and removes the containers. Without a daemon or the images
they are reported under "errors" with the fix.

    run() -> {"deploy": {"nodes_200_s", "teardown_200_s", "nodes_1000_s", "nodes_2000_s", ...}}
"""

from __future__ import annotations

import secrets
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents import deploy as dep_mod
from agents.from_plan import share_for
from orchestrator.backends.docker import containers, images
from orchestrator.backends.docker.cli import DockerCli
from orchestrator.backends.docker.daemon import connect
from orchestrator.backends.docker.options import Limits
from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec_text
from xcplab_contract.errors import XcplabError


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


def measure_docker(cli: DockerCli, n_nodes: int) -> dict[str, float]:
    """Deploy then tear down n_nodes containers and their links, as a docker run does."""
    run_id = f"bench-docker-{n_nodes}-{secrets.token_hex(2)}"
    plan = make_plan(load_spec_text(chain_spec(n_nodes), f"<bench {n_nodes}>"), run_id)
    share = share_for(plan, "local", "engine")
    names = [ns.name for ns in share.namespaces]
    dep = None
    try:
        t = time.monotonic()
        ids = containers.create_all(cli, run_id, [(n.name, n.netns, n.role)
                                                  for n in plan.nodes], Limits())
        containers.start_all(cli, ids)
        pids = {plan.node(node).netns: pid
                for node, (_, pid) in containers.inspect(cli, ids).items()}
        containers_s = time.monotonic() - t
        dep = dep_mod.deploy(share, attach=pids)
        dep_mod.wait_operational(dep, timeout_s=30)
        deploy_s = time.monotonic() - t
    finally:
        if dep is not None:
            dep.close()
        t = time.monotonic()
        dep_mod.remove_namespaces(names)
        containers.remove(cli, containers.of_run(cli, run_id).get(run_id, []))
        teardown_s = time.monotonic() - t
    return {"deploy_s": deploy_s, "containers_s": containers_s, "teardown_s": teardown_s}


def docker_figures(sizes: tuple[int, ...] = (20, 50, 200)) -> dict:
    try:
        cli = DockerCli(connect(start=False))
        images.check(cli, {"router", "host"})
    except XcplabError as e:
        return {"errors": {"bench_deploy.docker": str(e)}}
    out: dict[str, float] = {}
    for n in sizes:
        d, m = measure_docker(cli, n), measure(n)
        out.update({f"docker_{n}_s": round(d["deploy_s"], 3),
                    f"docker_teardown_{n}_s": round(d["teardown_s"], 3),
                    f"docker_containers_{n}_s": round(d["containers_s"], 3),
                    f"netns_{n}_s": round(m["deploy_s"], 3),
                    f"netns_teardown_{n}_s": round(m["teardown_s"], 3)})
    return {"deploy": out}


def run() -> dict:
    m200 = measure(200)
    m1000 = measure(1000)
    m2000 = measure(2000)  # the node bound (orchestrator/spec/bounds.py MAX_NODES)
    docker = docker_figures()
    return {**docker, "deploy": {**docker.get("deploy", {}),
        "nodes_200_s": round(m200["deploy_s"], 3),
        "teardown_200_s": round(m200["teardown_s"], 3),
        "nodes_1000_s": round(m1000["deploy_s"], 3),
        "teardown_1000_s": round(m1000["teardown_s"], 3),
        "nodes_2000_s": round(m2000["deploy_s"], 3),
        "teardown_2000_s": round(m2000["teardown_s"], 3),
        "plan_2000_s": round(m2000["plan_s"], 3),
        "netlink_200_s": round(m200["created_s"], 3),  # before links come up
        "netlink_1000_s": round(m1000["created_s"], 3),
        "plan_200_s": round(m200["plan_s"], 3),
        "plan_1000_s": round(m1000["plan_s"], 3),
    }}


if __name__ == "__main__":
    import json
    print(json.dumps(run(), indent=2))
