"""The one way the controller reaches a machine: OpenSSH, key only, never a prompt.

`ssh_options` is shared by direct sessions (`xcplab cluster check`) and Ansible
(`ansible_ssh_common_args`), so both trust the same host keys the same way.
"""

from __future__ import annotations

import shlex

from orchestrator.cluster.inventory import Inventory, Machine

CONNECT_TIMEOUT_S = 5


def ssh_options(inv: Inventory) -> list[str]:
    """-o options for every session: no password prompt, bounded connect time, host keys
    checked strictly against the inventory's known_hosts when it names one."""
    opts = ["-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}",
            "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=2",
            "-o", "IdentitiesOnly=yes", "-o", "LogLevel=ERROR"]
    if inv.known_hosts:
        opts += ["-o", f"UserKnownHostsFile={inv.known_hosts}",
                 "-o", "StrictHostKeyChecking=yes", "-o", "GlobalKnownHostsFile=/dev/null"]
    return opts


def ssh_argv(inv: Inventory, m: Machine, remote: list[str]) -> list[str]:
    """argv running `remote` (quoted for the remote shell) on machine `m`."""
    return ["ssh", *ssh_options(inv), "-i", m.ssh.key, "-p", str(m.ssh.port),
            "-l", m.ssh.user, "--", m.address, shlex.join(remote)]
