"""`xcplab clean --inventory INV` after a controller killed mid-run (root).

The orchestrator of a quickstart across two machines is killed with SIGKILL while the
run plays. One machine's SSH channel is frozen first (SIGSTOP on its ssh client): that
machine sees nothing, as if the controller had vanished without closing its sessions,
so its agent keeps playing the run. The other channel closes with the controller: its
agent destroys its share at the end of its input, and its run directory stays behind,
never copied back. Then, from the controller's namespace:

- `clean --list --inventory` names the run;
- `clean --all --inventory` removes the orphaned run directory and leaves the live run
  alone, naming its machine and agent (its processes still run);
- `clean --all --include-running --inventory` stops the live agent (which destroys its
  share on SIGTERM; what it does not stop, the clean does) and removes its run directory;
- nothing of the run is left on any machine: no process, namespace, state or run
  directory, and `clean --list` is empty.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from clusterrun import QUICKSTART, ROOT, agent_pid, jumbo_inventory, run_namespaces, wait_file
from clusterrun import xcplab as cli
from nscluster import NsCluster

pytestmark = [pytest.mark.root]
RUN = "clean-after-crash"


@pytest.fixture(scope="module")
def inventory(nscluster: NsCluster) -> Iterator[Path]:
    with jumbo_inventory(nscluster) as inv:
        yield inv


def _children(pid: int) -> dict[int, str]:
    """{pid: command line} of `pid`'s children."""
    out = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out[int(d.name)] = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError, IndexError):
            continue
    return out


def _starttime(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _alive(pid: int, starttime: int) -> bool:
    """The same process (pid and start time) still exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return stat[0] != "Z" and int(stat[19]) == starttime


def test_clean_inventory_after_the_controller_is_killed(nscluster: NsCluster, inventory: Path,
                                                         tmp_path: Path) -> None:
    c = nscluster
    inv = str(inventory)
    proc = subprocess.Popen(c.in_ctl([
        sys.executable, "-m", "orchestrator.cli", "run", str(QUICKSTART), "--backend",
        "cluster", "--inventory", inv, "--out", str(tmp_path), "--no-progress",
        "--run-id", RUN, "--set", "duration=30s"]), cwd=ROOT, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)  # `ip netns exec` execs python: proc.pid is the controller
    frozen: list[int] = []
    try:
        plan = json.loads(wait_file(tmp_path / RUN / "plan.json").read_text())
        where = {n["name"]: n["machine"] for n in plan["nodes"]}
        live, closed = where["r2"], where["r1"]  # frozen channel / closed channel
        live_agent = agent_pid(c, live, tmp_path / RUN)
        address = c.address(c.machines.index(live))
        frozen = [p for p, cmd in _children(proc.pid).items()
                  if cmd.startswith("ssh ") and f" {address} " in cmd]
        assert len(frozen) == 1, _children(proc.pid)
        os.kill(frozen[0], signal.SIGSTOP)
        proc.kill()  # SIGKILL: no teardown, no copy-back
        proc.wait(10)

        state = c.prefix(live) / "state" / RUN / "state.json"
        recorded = json.loads(state.read_text())
        pids = [(live_agent, _starttime(live_agent))] + [
            (p["pid"], p["starttime"]) for p in recorded["processes"]]
        assert len(pids) >= 3 and all(_alive(p, t) for p, t in pids if t), pids  # engine, tools
        # the closed channel's agent destroys its share; its run directory stays
        closed_state = c.prefix(closed) / "state" / RUN
        deadline = time.monotonic() + 30
        while closed_state.exists():
            assert time.monotonic() < deadline, "the closed channel's agent kept its run"
            time.sleep(0.2)
        assert (c.prefix(closed) / "runs" / RUN / "logs").is_dir()

        r = cli(c, "clean", "--list", "--inventory", inv, timeout=120)
        assert (r.returncode, r.stdout.split()) == (0, [RUN]), r.stdout + r.stderr

        r = cli(c, "clean", "--all", "--inventory", inv, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        assert f"{closed}: {RUN}: removed run directory" in r.stdout, r.stdout
        assert f"{live}: {RUN}: still running (agent pid {live_agent}), left alone" \
            in r.stdout, r.stdout
        assert not (c.prefix(closed) / "runs" / RUN).exists()
        assert all(_alive(p, t) for p, t in pids if t), "--all stopped a live run"
        assert state.is_file() and (c.prefix(live) / "runs" / RUN).is_dir()

        r = cli(c, "clean", "--all", "--include-running", "--inventory", inv, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        (line,) = [ln for ln in r.stdout.splitlines() if ln.startswith(f"{live}: {RUN}:")]
        # the agent is stopped first (SIGTERM: it destroys its own share, engine and tools
        # included, and its state; a hung agent is killed after 3 s and the clean stops
        # what it recorded): at least the agent is counted, and every recorded process
        # is gone either way
        assert int(line.split(" namespaces, ")[1].split()[0]) >= 1, r.stdout
        assert line.endswith(", run directory"), r.stdout
        assert not any(_alive(p, t) for p, t in pids if t), pids
        assert not state.exists()
    finally:
        for p in frozen:
            os.kill(p, signal.SIGKILL)  # ours; the session it held is already cleaned
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    for m in c.machines:
        assert not (c.prefix(m) / "state" / RUN).exists(), m
        assert not (c.prefix(m) / "runs" / RUN).exists(), m
    assert run_namespaces(plan["run_tag"]) == []
    r = cli(c, "clean", "--list", "--inventory", inv, timeout=120)
    assert (r.returncode, r.stdout.strip()) == (0, ""), r.stdout + r.stderr
