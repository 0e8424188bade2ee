"""Runs under `--backend docker` against a real dockerd and the `make images` images
(opt-in: `make test-docker`): what a run creates, where its processes live, what it
records, and that teardown and `xcplab clean` leave nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from run_helpers import (
    fidelity_note,
    netns_with,
    run_spec,
    wait_client_recorded,
    write_spec,
    xcplab,
)

from agents.from_plan import HOST_SYSCTLS
from agents.state import proc_starttime
from orchestrator.backends.docker import containers, images
from orchestrator.backends.docker.cli import DockerCli
from orchestrator.backends.docker.options import Limits
from xcplab_contract.errors import XcplabError
from xcplab_contract.naming import run_tag

pytestmark = [pytest.mark.docker, pytest.mark.root, pytest.mark.timeout(300)]
REPO = Path(__file__).resolve().parents[2]


def _left(cli: DockerCli, run_id: str) -> list[str]:
    return containers.of_run(cli, run_id).get(run_id, [])


def test_three_node_run(tmp_path: Path, docker_cli: DockerCli) -> None:
    spec = write_spec(tmp_path, "4s")
    run_dir, s = run_spec(spec, tmp_path / "runs", timeout=240,
                          extra=("--backend", "docker", "--backend-opt", "memory=256m"))
    assert s["status"] == "completed", s.get("error")
    f1 = s["flows"]["f1"]
    # 2 x (5 ms + 10 ms) of propagation: no RTT below it; the 20 then 10 Mb/s bottleneck
    # caps the goodput
    assert f1["srtt_mean_ms"] >= 30.0, fidelity_note(s)
    assert 1.0 < f1["throughput_mbps"] <= 20.0, fidelity_note(s)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    be = manifest["backend"]
    assert be["name"] == "docker" and be["limits"]["memory_bytes"] == 256 << 20
    assert set(be["images"]) == {"xcplab/router:latest", "xcplab/host:latest"}
    assert all(i["id"].startswith("sha256:") for i in be["images"].values())
    assert be["dockerd"]["source"] in ("DOCKER_HOST", "project")
    assert set(s["deploy"]["containers"]) == {"h1", "r1", "h2"}
    assert _left(docker_cli, s["run"]) == []
    assert netns_with(run_tag(s["run"])) == []
    # the same run directory as netns, plus the container facts
    netns_dir, _ = run_spec(spec, tmp_path / "runs-netns", timeout=240)
    assert _files(run_dir) - _files(netns_dir) == {"logs/docker.json"}
    assert _files(netns_dir) <= _files(run_dir)


def _net_sysctls(enter: list[str]) -> dict[str, str]:
    """net.core and net.ipv4 sysctls of a namespace, without per-device (conf, neigh) and
    netfilter keys; `enter` is the command prefix that runs `sysctl` inside it."""
    out = subprocess.run([*enter, "sysctl", "-a", "-r", r"^net\.(core|ipv4)\."],
                         capture_output=True, text=True, check=True).stdout
    pairs = (line.split(" = ", 1) for line in out.splitlines() if " = " in line)
    return {k: v for k, v in pairs if ".conf." not in k and ".neigh." not in k
            and k != "net.ipv4.ip_forward"}  # the agent's: 0 on hosts, 1 on routers


def _files(run_dir: Path) -> set[str]:
    return {p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*") if p.is_file()}


def _alive(procs: list[dict]) -> list[dict]:
    """The recorded processes still running (same pid and start time, not a zombie)."""
    out = []
    for p in procs:
        if proc_starttime(p["pid"]) != p["starttime"]:
            continue
        stat = Path(f"/proc/{p['pid']}/stat").read_text()
        if stat[stat.rindex(")") + 2] != "Z":
            out.append(p)
    return out


def test_limits_bind_and_sigkill_then_clean(tmp_path: Path, docker_cli: DockerCli) -> None:
    spec = write_spec(tmp_path, "60s")
    run_id = "three-20260101T000002-" + os.urandom(2).hex()
    cli = subprocess.Popen([sys.executable, "-m", "orchestrator.cli", "run", str(spec),
                            "--out", str(tmp_path / "runs"), "--run-id", run_id,
                            "--backend", "docker", "--backend-opt", "cpuset=0",
                            "--backend-opt", "memory=128m", "--no-progress",
                            # h1's own memory limit (spec nodes.h1.limits) over the option's
                            "--set", "nodes.h1.limits.memory=96MiB"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        st = wait_client_recorded(run_id, 60)
        ids = _left(docker_cli, run_id)
        assert len(ids) == 3
        # the flow's client runs in h1's container cgroups: its limits bind it
        client = next(p for p in st["processes"] if p["key"] == "f1.client")
        h1 = docker_cli.run("inspect", "--format", "{{.Id}} {{.HostConfig.Memory}} "
                            "{{.HostConfig.CpusetCpus}}", f"xcplab-{run_tag(run_id)}-h1")
        cid, mem, cpus = h1.split()
        assert (int(mem), cpus) == (96 << 20, "0")
        r1 = docker_cli.run("inspect", "--format", "{{.HostConfig.Memory}} "
                            "{{.HostConfig.CpusetCpus}}", f"xcplab-{run_tag(run_id)}-r1")
        assert r1.split() == [str(128 << 20), "0"]
        (facts,) = (tmp_path / "runs").glob("*/logs/docker.json")
        assert json.loads(facts.read_text())["limits"] == {
            "cpuset": "0", "memory_bytes": 128 << 20,
            "per_node": {"h1": {"cpuset": "0", "memory_bytes": 96 << 20}}}
        cgroups = Path(f"/proc/{client['pid']}/cgroup").read_text()
        assert f"memory:/docker/{cid}" in cgroups and f"cpuset:/docker/{cid}" in cgroups
        assert os.sched_getaffinity(client["pid"]) == {0}
        # links as netns makes them: MTU, offloads off (the engine sees whole frames)
        ns = f"--net=/run/netns/xcplab-{run_tag(run_id)}-h1"
        link = subprocess.run(["nsenter", ns, "ip", "-o", "link", "show", "eth0"],
                              capture_output=True, text=True, check=True).stdout
        assert " mtu 1500 " in link and "state UP" in link
        k = subprocess.run(["nsenter", ns, "ethtool", "-k", "eth0"], capture_output=True,
                           text=True, check=True).stdout
        for feature in ("tx-tcp-segmentation", "generic-segmentation-offload",
                        "generic-receive-offload", "tx-checksumming"):
            assert f"{feature}: off" in k, k
        # the namespace's own sysctls are a fresh namespace's with the agent's host
        # settings, as a netns host's (docker's two OCI defaults set back)
        assert _net_sysctls(["nsenter", ns]) == {**_net_sysctls(["unshare", "--net"]),
                                                 **dict(HOST_SYSCTLS)}
        # the agent first, so nothing tidies up, then the orchestrator
        os.kill(st["agent_pid"], signal.SIGKILL)
        cli.send_signal(signal.SIGKILL)
        cli.wait(10)
        assert len(_left(docker_cli, run_id)) == 3
        assert len(netns_with(run_tag(run_id))) == 3
        # plain clean, no --backend: the daemon answers, so the containers go too
        assert run_id in xcplab("clean", "--list", timeout=60).stdout.split()
        res = xcplab("clean", run_id, timeout=120)
        assert res.returncode == 0, res.stderr
        assert "removed 3 namespaces" in res.stdout and "3 containers" in res.stdout
        assert _left(docker_cli, run_id) == []
        assert netns_with(run_tag(run_id)) == []
        deadline = time.monotonic() + 5  # signalled by clean; gone once reaped
        while time.monotonic() < deadline and _alive(st["processes"]):
            time.sleep(0.05)
        assert not _alive(st["processes"])
        assert not Path(f"/run/xcplab/{run_id}").exists()
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait(10)
        xcplab("clean", "--backend", "docker", run_id, timeout=120)


def test_tools_from_the_image(tmp_path: Path, docker_cli: DockerCli) -> None:
    """tools=image: the flow's iperf3 is the image's, run in h1's container's mount
    namespace (not this machine's file system); the run still measures the path."""
    spec = write_spec(tmp_path, "6s")
    run_id = "three-20260101T000005-" + os.urandom(2).hex()
    cli = subprocess.Popen([sys.executable, "-m", "orchestrator.cli", "run", str(spec),
                            "--out", str(tmp_path / "runs"), "--run-id", run_id,
                            "--backend", "docker", "--backend-opt", "tools=image",
                            "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    try:
        st = wait_client_recorded(run_id, 60)
        client = next(p for p in st["processes"] if p["key"] == "f1.client")
        deadline = time.monotonic() + 10  # a shell on the start gate until t = 0.2 s
        while time.monotonic() < deadline and \
                not os.readlink(f"/proc/{client['pid']}/exe").endswith("iperf3"):
            time.sleep(0.05)
        assert os.readlink(f"/proc/{client['pid']}/exe") == "/usr/bin/iperf3"
        init = int(docker_cli.run("inspect", "--format", "{{.State.Pid}}",
                                  f"xcplab-{run_tag(run_id)}-h1").strip())
        assert os.stat(f"/proc/{client['pid']}/ns/mnt").st_ino == \
            os.stat(f"/proc/{init}/ns/mnt").st_ino != os.stat("/proc/self/ns/mnt").st_ino
        assert os.stat(f"/proc/{client['pid']}/ns/net").st_ino == \
            os.stat(f"/proc/{init}/ns/net").st_ino
        out, err = cli.communicate(timeout=120)
        assert cli.returncode in (0, 3), err
        run_dir = Path(out.strip().splitlines()[-1])
        s = json.loads((run_dir / "summary.json").read_text())
        assert 1.0 < s["flows"]["f1"]["throughput_mbps"] <= 20.0, fidelity_note(s)
        be = json.loads((run_dir / "manifest.json").read_text())["backend"]
        assert be["tools"].startswith("each container's image")
        assert _left(docker_cli, run_id) == []
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait(10)
        xcplab("clean", run_id, timeout=120)


def test_clean_finds_containers_by_label_alone(docker_cli: DockerCli) -> None:
    """Killed between creating its containers and starting its agent, a run has no state
    file: clean still finds its containers by label, and only them."""
    run_id = "three-20260101T000003-" + os.urandom(2).hex()
    other = run_id + "-other"
    tag = run_tag(run_id)
    ids = containers.create_all(docker_cli, run_id, [("h1", f"xcplab-{tag}-h1", "host"),
                                                     ("r1", f"xcplab-{tag}-r1", "router")],
                                Limits())
    kept = containers.create_all(docker_cli, other,
                                 [("h1", f"xcplab-{run_tag(other)}-h1", "host")], Limits())
    try:
        assert run_id in xcplab("clean", "--backend", "docker", "--list",
                                timeout=60).stdout.split()
        res = xcplab("clean", "--backend", "docker", run_id, timeout=120)
        assert res.returncode == 0, res.stderr
        assert f"{run_id}: removed 0 namespaces, 0 processes, 0 interfaces, 2 containers" \
            in res.stdout
        assert _left(docker_cli, run_id) == [] and len(ids) == 2
        assert _left(docker_cli, other) == kept
    finally:
        containers.remove(docker_cli, _left(docker_cli, run_id) + _left(docker_cli, other))


def test_missing_image_names_make_images(docker_cli: DockerCli,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(containers.IMAGES, "host", "xcplab/no-such-image:latest")
    with pytest.raises(XcplabError) as e:
        images.check(docker_cli, {"router", "host"})
    assert str(e.value).endswith("xcplab/no-such-image:latest not found on "
                                 f"{docker_cli.daemon.host}: run `make images`")


def test_quickstart_same_verdicts(tmp_path: Path, docker_cli: DockerCli) -> None:
    """The quickstart's expectations hold under docker as under netns (docs/docker.md)."""
    _, s = run_spec(REPO / "experiments" / "quickstart.yaml", tmp_path / "runs", timeout=240,
                    extra=("--backend", "docker"))
    assert s["status"] == "completed"
    failed = [e for e in s["expectations"] if not e["ok"]]
    assert s["expectations"] and not failed, (failed, fidelity_note(s))
    assert _left(docker_cli, s["run"]) == []
