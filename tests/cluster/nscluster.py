"""A cluster of N "machines" on one host, for tests and for humans (tools/cluster-ns.sh).

Each machine is a network namespace `xcl-<id>-<machine>` with its own address on a
Linux bridge underlay (172.31.0.0/24, routed nowhere) and its own sshd
(`ip netns exec NS /usr/sbin/sshd -D -f <its config>`, started and stopped by PID).
The controller (ssh, Ansible, `xcplab cluster ...`) runs in `xcl-<id>-ctl`, which holds
the bridge, so no packet of the cluster touches the host's own namespace. Host keys and
the client key are generated into the cluster's directory; the inventory written there
pins the host keys (known_hosts). The machines share this host's filesystem, so each
gets its own install prefix inside the cluster directory.

    python3 tests/cluster/nscluster.py up [--machines 3]   # prints the cluster directory
    python3 tests/cluster/nscluster.py down DIR
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

SUBNET = "172.31.0"
CTL_ADDR = f"{SUBNET}.1"
MAX_MACHINES = 8  # one host: each machine is an sshd and, once provisioned, an agent


def _run(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, text=True)


@dataclass
class NsCluster:
    cluster_id: str
    root: Path
    machines: list[str]
    sshd_pids: dict[str, int] = field(default_factory=dict)

    @property
    def ctl_ns(self) -> str:
        return f"xcl-{self.cluster_id}-ctl"

    def ns(self, machine: str) -> str:
        return f"xcl-{self.cluster_id}-{machine}"

    def address(self, i: int) -> str:
        return f"{SUBNET}.{11 + i}"

    @property
    def inventory(self) -> Path:
        return self.root / "inventory.yaml"

    def prefix(self, machine: str) -> Path:
        return self.root / "opt" / f"xcplab-{machine}"

    def in_ctl(self, argv: list[str]) -> list[str]:
        """argv run in the controller's namespace (where the underlay is reachable)."""
        return ["ip", "netns", "exec", self.ctl_ns, *argv]

    # -- up ----------------------------------------------------------------------------
    def _keys(self) -> None:
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"xcl-{self.cluster_id}",
             "-f", str(self.root / "id_ed25519"))
        shutil.copy(self.root / "id_ed25519.pub", self.root / "authorized_keys")
        known = []
        for i, m in enumerate(self.machines):
            d = self.root / m
            d.mkdir()
            _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", m,
                 "-f", str(d / "host_ed25519"))
            known.append(f"{self.address(i)} {(d / 'host_ed25519.pub').read_text().strip()}")
        (self.root / "known_hosts").write_text("\n".join(known) + "\n")

    def _net(self) -> None:
        _run("ip", "netns", "add", self.ctl_ns)
        _run("ip", "-n", self.ctl_ns, "link", "set", "lo", "up")
        _run("ip", "-n", self.ctl_ns, "link", "add", "underlay", "type", "bridge")
        _run("ip", "-n", self.ctl_ns, "addr", "add", f"{CTL_ADDR}/24", "dev", "underlay")
        _run("ip", "-n", self.ctl_ns, "link", "set", "underlay", "up")
        for i, m in enumerate(self.machines):
            ns = self.ns(m)
            _run("ip", "netns", "add", ns)
            _run("ip", "-n", ns, "link", "set", "lo", "up")
            # veth: `u-<machine>` on the bridge, `eth0` in the machine
            _run("ip", "-n", self.ctl_ns, "link", "add", f"u-{m}", "type", "veth",
                 "peer", "name", "eth0", "netns", ns)
            _run("ip", "-n", self.ctl_ns, "link", "set", f"u-{m}", "master", "underlay", "up")
            _run("ip", "-n", ns, "addr", "add", f"{self.address(i)}/24", "dev", "eth0")
            _run("ip", "-n", ns, "link", "set", "eth0", "up")

    def _sshd(self, i: int, m: str) -> None:
        d = self.root / m
        cfg = d / "sshd_config"
        cfg.write_text("\n".join([
            f"ListenAddress {self.address(i)}", "Port 22", f"HostKey {d / 'host_ed25519'}",
            f"AuthorizedKeysFile {self.root / 'authorized_keys'}",
            "PermitRootLogin prohibit-password", "PasswordAuthentication no",
            "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no",
            f"PidFile {d / 'sshd.pid'}", "Subsystem sftp /usr/lib/openssh/sftp-server",
            # The machine's agent gets the cluster's paths, not the caller's environment.
            "PermitUserEnvironment no", "MaxStartups 32:50:64", ""]))
        Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation directory
        proc = subprocess.Popen(["ip", "netns", "exec", self.ns(m), "/usr/sbin/sshd", "-D",
                                 "-f", str(cfg), "-E", str(d / "sshd.log")],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        self.sshd_pids[m] = proc.pid  # `ip netns exec` execs sshd: same PID

    def _wait_ssh(self, timeout_s: float = 10.0) -> None:
        for i, m in enumerate(self.machines):
            deadline = time.monotonic() + timeout_s
            while True:
                rc = subprocess.run(self.in_ctl(self.ssh_argv(i, ["true"])),
                                    capture_output=True).returncode
                if rc == 0:
                    break
                if time.monotonic() > deadline:
                    log = (self.root / m / "sshd.log").read_text(errors="replace")
                    raise RuntimeError(f"sshd of {m} not answering: {log[-500:]}")
                time.sleep(0.1)

    def ssh_argv(self, i: int, remote: list[str]) -> list[str]:
        return ["ssh", "-o", "BatchMode=yes", "-o", f"UserKnownHostsFile={self.root}/known_hosts",
                "-o", "StrictHostKeyChecking=yes", "-i", str(self.root / "id_ed25519"),
                f"root@{self.address(i)}", *remote]

    def set_underlay_mtu(self, mtu: int) -> Path:
        """Give the whole underlay (bridge, its ports, each machine's eth0) `mtu`, and
        return an inventory saying so (jumbo frames: the cluster backend's VXLAN then
        carries emulated 1500-byte packets unchanged). Undo with set_underlay_mtu(1500)."""
        for m in self.machines:  # the bridge's ports first: it may not exceed them
            _run("ip", "-n", self.ns(m), "link", "set", "eth0", "mtu", str(mtu))
            _run("ip", "-n", self.ctl_ns, "link", "set", f"u-{m}", "mtu", str(mtu))
        _run("ip", "-n", self.ctl_ns, "link", "set", "underlay", "mtu", str(mtu))
        path = self.root / f"inventory-mtu{mtu}.yaml"
        self._write_inventory(mtu, path)
        return path

    def _write_inventory(self, mtu: int = 1500, path: Path | None = None) -> None:
        lines = [f"name: xcl-{self.cluster_id}", "known_hosts: known_hosts", "machines:"]
        for i, m in enumerate(self.machines):
            lines += [f"  - name: {m}", f"    address: {self.address(i)}",
                      "    ssh: {user: root, key: id_ed25519, port: 22}",
                      f"    cores: {os.cpu_count() or 1}", "    nic_capacity: 10Gbps",
                      f"    mtu: {mtu}", f"    roles: [{'routers' if i == 0 else 'hosts'}]",
                      f"    prefix: {self.prefix(m)}",
                      # the interpreter these tests run on has the agent's dependencies
                      f"    python: {sys.executable}"]
        (path or self.inventory).write_text("\n".join(lines) + "\n")

    def save(self) -> None:
        (self.root / "cluster.json").write_text(json.dumps(asdict(self), default=str))

    def up(self) -> NsCluster:
        try:
            self._keys()
            self._net()
            for i, m in enumerate(self.machines):
                self._sshd(i, m)
            self.save()
            self._wait_ssh()
            self._write_inventory()
        except BaseException:
            self.down()
            raise
        return self

    # -- down --------------------------------------------------------------------------
    def _term(self, pid: int, must_contain: str) -> int | None:
        """SIGTERM `pid` if it is still the process we started (its command line names
        this cluster's directory); the pid to wait for."""
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            return None
        if must_contain not in cmdline:
            return None
        os.kill(pid, signal.SIGTERM)
        return pid

    def _wait(self, pid: int) -> None:
        for _ in range(200):
            try:  # gone, or exited and waiting for a parent that is not us (zombie)
                if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                    return
            except OSError:
                return
            try:  # our child: reap it; else wait for it to go
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    return
            except ChildProcessError:
                pass
            time.sleep(0.05)
        os.kill(pid, signal.SIGKILL)

    def down(self) -> None:
        """Stop what provisioning started (the agents' supervisors: their agents destroy
        what they made first) and the sshds, all signalled before any is waited for;
        then the namespaces and the directory."""
        stopping = []
        for m in self.machines:
            pidfile = self.prefix(m) / "run" / "supervisor.pid"
            if pidfile.is_file():
                stopping.append(self._term(int(pidfile.read_text().strip()),
                                           str(self.prefix(m))))
        for m, pid in self.sshd_pids.items():
            stopping.append(self._term(pid, str(self.root / m)))
        for p in stopping:
            if p is not None:
                self._wait(p)
        for m in self.machines:
            subprocess.run(["ip", "netns", "del", self.ns(m)], capture_output=True)
        subprocess.run(["ip", "netns", "del", self.ctl_ns], capture_output=True)
        shutil.rmtree(self.root, ignore_errors=True)


def create(machines: int = 3, parent: Path | None = None) -> NsCluster:
    if not 1 <= machines <= MAX_MACHINES:
        raise ValueError(f"machines must be in 1..{MAX_MACHINES}")
    cid = uuid.uuid4().hex[:6]
    root = Path(parent or "/tmp") / f"xcplab-cluster-{cid}"
    root.mkdir(mode=0o700)
    return NsCluster(cid, root, [f"m{i + 1}" for i in range(machines)]).up()


def load(root: Path) -> NsCluster:
    d = json.loads((root / "cluster.json").read_text())
    return NsCluster(d["cluster_id"], Path(d["root"]), d["machines"], d["sshd_pids"])


def main() -> int:
    p = argparse.ArgumentParser(prog="nscluster", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up")
    up.add_argument("--machines", type=int, default=3)
    down = sub.add_parser("down")
    down.add_argument("dir", type=Path)
    args = p.parse_args()
    if args.cmd == "up":
        c = create(args.machines)
        print(c.root)
        print(f"controller: ip netns exec {c.ctl_ns} <command>   inventory: {c.inventory}",
              file=sys.stderr)
    else:
        load(args.dir).down()
    return 0


if __name__ == "__main__":
    sys.exit(main())
