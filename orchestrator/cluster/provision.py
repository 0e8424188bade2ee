"""`xcplab cluster provision`: run cluster/ansible/provision.yml over the inventory.

Ansible's inventory is written from ours (same SSH user, key, port and host-key
policy as `cluster check`), the files to ship are staged in a temporary directory
(`dist.bundle`), and the play's result comes back through Ansible's json callback:
per machine ok/changed/failed/unreachable counts, and on failure the failing task
and its message.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from orchestrator.cluster import bounds
from orchestrator.cluster.dist import bundle
from orchestrator.cluster.inventory import Inventory
from orchestrator.cluster.ssh import ssh_options
from xcplab_contract import paths
from xcplab_contract.errors import XcplabError

PLAYBOOK = paths.REPO_ROOT / "cluster" / "ansible" / "provision.yml"
STOP_PLAYBOOK = paths.REPO_ROOT / "cluster" / "ansible" / "stop.yml"
CALLBACKS = paths.REPO_ROOT / "cluster" / "ansible" / "callback_plugins"
TIMEOUT_S = 1800  # a first run with apt on a slow mirror; bounded all the same
Recap = dict[str, dict[str, int]]


def ansible_inventory(inv: Inventory) -> dict[str, Any]:
    hosts = {m.name: {"ansible_host": m.address, "ansible_port": m.ssh.port,
                      "ansible_user": m.ssh.user, "ansible_ssh_private_key_file": m.ssh.key,
                      "xcplab_prefix": m.prefix, "xcplab_python_cmd": m.python,
                      "ansible_python_interpreter": m.python if m.python.startswith("/")
                      else f"/usr/bin/env {m.python}"} for m in inv.machines}
    return {"xcplab": {"hosts": hosts, "vars": {
        "ansible_ssh_common_args": shlex.join(ssh_options(inv))}}}


def _failures(events: dict[str, Any]) -> list[str]:
    out = []
    for play in events.get("plays", []):
        for task in play.get("tasks", []):
            for host, res in task.get("hosts", {}).items():
                if res.get("failed") or res.get("unreachable"):
                    msg = res.get("msg") or res.get("stderr") or ""
                    out.append(f"{host}: {task['task']['name']}: {str(msg).strip()[:500]}")
    return out


def _close_masters(cp: Path) -> None:
    """End the run's SSH master connections now rather than ControlPersist later."""
    if not cp.is_dir():
        return
    for sock in cp.iterdir():
        subprocess.run(["ssh", "-o", f"ControlPath={sock}", "-O", "exit", "xcplab-master"],
                       capture_output=True, timeout=10, check=False)


def _play(inv: Inventory, playbook: Path, extra: dict[str, Any], d: Path, what: str) -> Recap:
    (d / "inventory.json").write_text(json.dumps(ansible_inventory(inv)))
    # the play's result as one JSON document: our callback (cluster/ansible/
    # callback_plugins), as ansible-core alone has no JSON stdout callback
    env = {**os.environ, "ANSIBLE_STDOUT_CALLBACK": "xcplab_json",
           "ANSIBLE_CALLBACK_PLUGINS": str(CALLBACKS), "ANSIBLE_PIPELINING": "1",
           "ANSIBLE_FORKS": str(min(bounds.MAX_PARALLEL, len(inv.machines))),
           # always: an unknown host key fails the play (give known_hosts, or accept the
           # keys with ssh once); never trust whatever answers on a shared network
           "ANSIBLE_HOST_KEY_CHECKING": "1",
           "ANSIBLE_RETRY_FILES_ENABLED": "0", "ANSIBLE_NOCOLOR": "1",
           # SSH master connections of this run only: Ansible's default directory is
           # shared by every run, and a master kept alive for another cluster with the
           # same address:port (two namespace clusters, a re-created machine) would
           # carry this run's commands to that machine.
           "ANSIBLE_SSH_CONTROL_PATH_DIR": str(d / "cp")}
    try:
        r = subprocess.run(["ansible-playbook", "-i", str(d / "inventory.json"),
                            "-e", json.dumps(extra), str(playbook)],
                           capture_output=True, text=True, env=env, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        raise XcplabError(f"{what} took longer than {TIMEOUT_S} s") from e
    finally:
        _close_masters(d / "cp")
    try:
        events = json.loads(r.stdout)
    except json.JSONDecodeError:
        raise XcplabError(f"ansible-playbook exited {r.returncode}: "
                          f"{(r.stderr or r.stdout).strip()[-1000:]}") from None
    recap: Recap = {h: {k: int(s.get(k, 0)) for k in ("ok", "changed", "failures",
                                                     "unreachable", "skipped")}
                    for h, s in events.get("stats", {}).items()}
    if r.returncode != 0:
        raise XcplabError(f"{what} failed:\n  " + "\n  ".join(
            _failures(events) or [r.stderr.strip()[-1000:]]))
    return recap


def _ansible_ready() -> None:
    if shutil.which("ansible-playbook") is None:
        raise XcplabError("ansible-playbook not found: apt-get install ansible-core "
                          "(or ansible)")


def provision(inv: Inventory, install_packages: bool = True,
              bundle_file: Path | None = None) -> Recap:
    """Run the playbook; `bundle_file` ships a bundle made earlier (`xcplab cluster
    bundle`: one build for many provisionings, or a tree that keeps changing), else one
    is made from this tree now."""
    _ansible_ready()
    # A short path: SSH control sockets live in it (108-byte limit on socket paths).
    with tempfile.TemporaryDirectory(prefix="xcplab-prov-") as tmp:
        d = Path(tmp)
        if bundle_file is None:
            bundle_file = d / "bundle.tar"
            bundle_file.write_bytes(bundle()[0])
        elif not bundle_file.is_file():
            raise XcplabError(f"no such bundle {bundle_file}")
        return _play(inv, PLAYBOOK, {"xcplab_bundle": str(bundle_file.resolve()),
                                     "xcplab_install_packages": install_packages},
                     d, "provisioning")


def stop(inv: Inventory) -> Recap:
    """Stop every machine's supervised agent (cluster/ansible/stop.yml); the install
    stays. Idempotent: stopping stopped agents changes nothing."""
    _ansible_ready()
    with tempfile.TemporaryDirectory(prefix="xcplab-prov-") as tmp:
        return _play(inv, STOP_PLAYBOOK, {}, Path(tmp), "stopping the agents")
