"""Helpers of the tests that run experiments across the namespace cluster
(test_cluster_run.py, test_cluster_clean.py): the agent installed on every machine from
the provisioning bundle, runs started from the controller's namespace, and what a run
left (namespaces, state, run directories, processes)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from nscluster import NsCluster

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "experiments" / "quickstart.yaml"
HTTP = ROOT / "experiments" / "apps" / "http-over-xcp.yaml"
JUMBO = 9000


def ctl(c: NsCluster, argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    """argv in the controller's namespace, from the repository."""
    return subprocess.run(c.in_ctl(argv), cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def xcplab(c: NsCluster, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return ctl(c, [sys.executable, "-m", "orchestrator.cli", *args], timeout)


def install_agents(c: NsCluster) -> None:
    """The provisioning bundle unpacked into every machine's prefix over SSH (the Ansible
    path is test_cluster_provision's; these tests do not pay for it again)."""
    bundle = c.root / "bundle.tar"  # test_cluster_provision's, when it ran first
    if not bundle.is_file():
        r = subprocess.run([sys.executable, "-m", "orchestrator.cli", "cluster", "bundle",
                            str(bundle)], cwd=ROOT, capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0, r.stderr
    with tarfile.open(bundle) as tar:
        member = tar.extractfile("VERSION")
        assert member is not None
        version = member.read()
    for i, m in enumerate(c.machines):
        prefix = c.prefix(m)
        installed = prefix / "VERSION"  # the machines share this host's file system
        if installed.is_file() and installed.read_bytes() == version:
            continue  # this bundle, unpacked by an earlier module: the same bytes again
        with bundle.open("rb") as f:
            untar = subprocess.run(c.in_ctl(c.ssh_argv(i, [f"mkdir -p {prefix} && tar -x -C "
                                                           f"{prefix}"])),
                                   stdin=f, capture_output=True, timeout=60)
        assert untar.returncode == 0, untar.stderr


@contextmanager
def jumbo_inventory(c: NsCluster, mtu: int = JUMBO) -> Iterator[Path]:
    """The agents installed, the underlay at `mtu` for the block, its inventory."""
    install_agents(c)
    inv = c.set_underlay_mtu(mtu)
    try:
        yield inv
    finally:
        c.set_underlay_mtu(1500)


def run_namespaces(tag: str) -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if f"-{tag}-" in line]


def wait_file(p: Path, timeout_s: float = 60) -> Path:
    deadline = time.monotonic() + timeout_s
    while not p.is_file():
        assert time.monotonic() < deadline, f"{p} never appeared"
        time.sleep(0.1)
    return p


def agent_pid(c: NsCluster, machine: str, run_dir: Path, timeout_s: float = 60) -> int:
    """The pid of `machine`'s agent once the run streams samples (it is playing)."""
    state = c.prefix(machine) / "state" / run_dir.name / "state.json"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if len((run_dir / "metrics" / "link.csv").read_text().splitlines()) > 10:
                return int(json.loads(state.read_text())["agent_pid"])
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.1)
    raise AssertionError(f"no agent of {run_dir.name} playing on {machine}")


def assert_app_flow_counted(run_dir: Path) -> None:
    """http-over-xcp.yaml's flow `web` across two machines, counted as on one: curl on
    one machine fetched python3 from python3 -m http.server on another (both over the
    socket stack, across the VXLAN tunnel); each machine's agent read only its own
    host's stack, and the server's side (the file) came from the server machine's agent,
    merged by the controller into the flow's one fct.csv row."""
    s = json.loads((run_dir / "summary.json").read_text())
    plan = json.loads((run_dir / "plan.json").read_text())
    where = {n["name"]: n["machine"] for n in plan["nodes"]}
    assert where["client"] != where["server"]  # the flow crosses machines
    (t,) = json.loads((run_dir / "cluster.json").read_text())["tunnels"]
    assert t["link"] == "bottleneck"
    # the file the server sends: its size on the server machine (this host's file system)
    size = (Path("/usr/bin") / "python3").resolve().stat().st_size
    (row,) = list(csv.DictReader((run_dir / "metrics" / "fct.csv").open()))
    assert (row["flow"], row["status"]) == ("web", "complete"), row
    # both directions: curl's request (~100 bytes) + the response (file + headers); the
    # client's side alone is the request (84 bytes)
    assert size < int(row["bytes"]) < size + 4096, (row["bytes"], size)
    assert 0 < float(row["fct_s"]) < 5.5, row  # the run is 6 s, curl starts at 0.5 s
    app = s["apps"]["web"]
    assert (app["status"], app["exit_status"], app["bytes"]) == ("complete", 0,
                                                                  int(row["bytes"]))
    # flow.csv has both hosts' streams, each sampled by its own machine's agent
    streams = {r["stream"].split(":")[0]
               for r in csv.DictReader((run_dir / "metrics" / "flow.csv").open())
               if r["flow"] == "web"}
    assert streams == {"client", "server"}, streams
    assert s["flows"]["web"]["bytes"] >= size
    (done,) = [e for e in s["expectations"] if e["name"] == "the transfer completes"]
    assert done["value"] is not None and done["value"] > size * 0.99, done
