"""`xcplab cluster provision` on the namespace cluster: real Ansible over real SSH, the
real agent under its supervisor. A second run changes nothing; the supervised agent
answers and comes back when killed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from nscluster import NsCluster

pytestmark = [pytest.mark.root]

ROOT = Path(__file__).resolve().parents[2]
RECAP = re.compile(r"^(\w+): ok=(\d+), changed=(\d+), failures=(\d+), unreachable=(\d+)")


def _xcplab(c: NsCluster, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(c.in_ctl([sys.executable, "-m", "orchestrator.cli", "cluster", *args]),
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def _provision(c: NsCluster) -> dict[str, tuple[int, ...]]:
    # One bundle for both runs: in a tree being edited (or rebuilt) between the runs, a
    # fresh bundle would rightly change things.
    r = _xcplab(c, "provision", "--no-packages", "--bundle", str(c.root / "bundle.tar"),
                str(c.inventory))
    assert r.returncode == 0, r.stdout + r.stderr
    recap = {}
    for line in r.stdout.splitlines():
        m = RECAP.match(line)
        assert m, line
        recap[m.group(1)] = tuple(int(x) for x in m.groups()[1:])
    assert sorted(recap) == c.machines, r.stdout
    return recap


def _ssh(c: NsCluster, i: int, script: str) -> str:
    r = subprocess.run(c.in_ctl(c.ssh_argv(i, [script])), capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture(scope="module")
def provisioned(nscluster: NsCluster) -> NsCluster:
    r = _xcplab(nscluster, "bundle", str(nscluster.root / "bundle.tar"))
    assert r.returncode == 0, r.stderr
    (nscluster.root / "bundle.version").write_text(r.stdout.split(": ")[1].split()[0])
    first = _provision(nscluster)
    for m, (_ok, changed, failures, unreachable) in first.items():
        assert failures == unreachable == 0 and changed > 0, (m, first)
    return nscluster


def test_second_run_changes_nothing(provisioned: NsCluster) -> None:
    second = _provision(provisioned)
    assert {m: r[1] for m, r in second.items()} == {m: 0 for m in provisioned.machines}


def test_each_machine_runs_its_own_agent_copy(provisioned: NsCluster) -> None:
    version = (provisioned.root / "bundle.version").read_text()
    for i, m in enumerate(provisioned.machines):
        prefix = provisioned.prefix(m)
        assert (prefix / "VERSION").read_text().strip() == version
        agent_pid = int((prefix / "run" / "agent.pid").read_text())
        env = Path(f"/proc/{agent_pid}/environ").read_bytes().split(b"\0")
        assert f"PYTHONPATH={prefix}/lib".encode() in env  # not the repository's tree
        # the agent runs in the machine's namespace (started over SSH into it)
        assert _ssh(provisioned, i, "readlink /proc/self/ns/net") == \
            subprocess.run(["readlink", f"/proc/{agent_pid}/ns/net"], capture_output=True,
                           text=True).stdout


def _ping(c: NsCluster, i: int, req_id: int) -> dict[str, object]:
    """A request through the supervised agent's FIFO (over SSH), its reply from the log."""
    prefix = c.prefix(c.machines[i])
    out = _ssh(c, i, f"""echo '{{"id":{req_id},"cmd":"ping"}}' > {prefix}/run/agent.in
for _ in $(seq 100); do grep -s '"id":{req_id},' {prefix}/log/agent.log && exit 0; sleep 0.05; done
exit 1""")
    return dict(json.loads(out.splitlines()[-1]))


def test_supervised_agent_answers_and_is_restarted(provisioned: NsCluster) -> None:
    c = provisioned
    reply = _ping(c, 0, 101)
    assert {k: reply[k] for k in ("type", "id", "ok")} == {"type": "reply", "id": 101,
                                                          "ok": True}
    result = reply["result"]
    assert isinstance(result, dict) and result["pong"] is True
    assert abs(result["wall_ns"] / 1e9 - time.time()) < 60  # the agent's clock (same host)
    pidfile = c.prefix(c.machines[0]) / "run" / "agent.pid"
    old = int(pidfile.read_text())
    subprocess.run(["kill", "-KILL", str(old)], check=True)
    deadline = time.monotonic() + 10  # first restart after 1 s of backoff
    while time.monotonic() < deadline:
        text = pidfile.read_text().strip() if pidfile.exists() else ""
        if text and int(text) != old and Path(f"/proc/{text}").exists():
            break
        time.sleep(0.1)
    else:
        pytest.fail("the supervisor did not restart the agent within 10 s")
    assert _ping(c, 0, 102)["ok"] is True


def test_stop_ends_every_supervised_agent(provisioned: NsCluster) -> None:
    c = provisioned
    pids = [int((c.prefix(m) / "run" / "agent.pid").read_text()) for m in c.machines]
    r = _xcplab(c, "stop", str(c.inventory))
    assert r.returncode == 0, r.stdout + r.stderr
    assert all(", changed=1," in line for line in r.stdout.splitlines()), r.stdout
    for m, pid in zip(c.machines, pids, strict=True):
        assert not (c.prefix(m) / "run" / "supervisor.pid").exists()
        assert not Path(f"/proc/{pid}").exists()  # the agent went with its supervisor
    again = _xcplab(c, "stop", str(c.inventory))
    assert again.returncode == 0 and again.stdout.count(", changed=0,") == 3, again.stdout
