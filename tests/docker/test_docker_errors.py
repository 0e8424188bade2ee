"""Bad input to the docker backend: one line naming the fix, nothing created (no daemon
needed: these run in `make test`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.backends.docker.containers import cgroup_procs_of
from orchestrator.backends.docker.options import parse_tools, split_options
from orchestrator.spec.node_limits import MEMORY_MAX
from xcplab_contract.errors import OptionError

SPEC = Path(__file__).resolve().parents[2] / "experiments" / "quickstart.yaml"


def _run(tmp: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "orchestrator.cli", "run", str(SPEC),
                           "--backend", "docker", "--out", str(tmp / "runs"), *args],
                          capture_output=True, text=True, check=False, timeout=60,
                          env={**os.environ, **env})


@pytest.mark.root
@pytest.mark.parametrize("env,says", [
    ({"DOCKER_HOST": "unix:///nonexistent/docker.sock"},
     "no docker daemon answers at DOCKER_HOST=unix:///nonexistent/docker.sock"),
    ({"XCPLAB_DOCKERD_RUN": "/nonexistent/xcplab-docker"},
     "no docker daemon: start one with `tools/dockerd-local.sh start` or set DOCKER_HOST"),
])
def test_no_daemon_one_line_nothing_left(tmp_path: Path, env: dict[str, str],
                                         says: str) -> None:
    if shutil.which("docker") is None:
        pytest.skip("no docker CLI (Debian package docker.io)")
    env = dict(env)
    if "DOCKER_HOST" not in env:
        env["DOCKER_HOST"] = ""  # the project's daemon, looked for where there is none
    res = _run(tmp_path, env=env)
    assert res.returncode != 0
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], res.stderr
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("opts,says", [
    ({"cpuset": "0-"}, "cpuset='0-' (valid: CPU numbers like 0, 0-1 or 0,2-3)"),
    ({"cpuset": "2-1"}, "cpuset='2-1' (valid: a range is low-high)"),
    ({"cpuset": "4096"}, "cpuset='4096' (valid: CPU numbers 0 to 1023)"),
    ({"cpuset": "1000"}, "cpuset='1000' (valid: CPUs of this machine"),
    ({"memory": "8m"}, "memory='8m' (valid: an integer with unit k, m or g, from 16m"),
    ({"memory": "17g"}, "from 16m to 16g"),
    ({"memory": "lots"}, "memory='lots'"),
    ({"engine_per": "node"}, "engine_per='node' (valid: machine, router)"),
    ({"ram": "1g"}, "unknown option 'ram' (valid: router_mode, engine_per, engine_priority, "
                    "host_nice, cpuset, memory, tools)"),
    ({"tools": "both"}, "tools='both' (valid: host, image)"),
])
def test_bad_options_refused(opts: dict[str, str], says: str) -> None:
    with pytest.raises(OptionError) as e:
        split_options(opts)
        parse_tools(opts)
    assert says in str(e.value)


def test_options_split_and_bounded() -> None:
    limits, agent = split_options({"cpuset": "0", "memory": "256m", "engine_per": "router"})
    assert agent == {"engine_per": "router"}
    assert limits.run_args() == ["--cpuset-cpus", "0", "--memory", str(256 << 20)]
    assert split_options({"memory": "16g"})[0].memory_bytes == MEMORY_MAX


def test_cgroup_procs_of_this_process() -> None:
    """Every file named is a cgroup.procs listing this very process."""
    files = cgroup_procs_of(os.getpid())
    for f in files:
        assert f.endswith("/cgroup.procs")
        assert str(os.getpid()) in Path(f).read_text().split()


@pytest.mark.root
@pytest.mark.parametrize("env", [{"DOCKER_HOST": "unix:///nonexistent/docker.sock"},
                                 {"DOCKER_HOST": "",
                                  "XCPLAB_DOCKERD_RUN": "/nonexistent/xcplab-docker"}])
def test_plain_clean_without_a_daemon_says_nothing_of_docker(env: dict[str, str]) -> None:
    """Plain `xcplab clean` also removes docker runs' containers when a daemon answers;
    when none does, it cleans the netns part as before, with no word about docker."""
    run_id = "three-20260101T000004-" + os.urandom(2).hex()  # never ran: nothing to clean
    res = subprocess.run([sys.executable, "-m", "orchestrator.cli", "clean", run_id],
                         capture_output=True, text=True, check=False, timeout=60,
                         env={**os.environ, **env})
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert "docker" not in res.stdout.lower() and "container" not in res.stdout, res.stdout
