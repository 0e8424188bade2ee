"""The docker CLI against one daemon: argv in, stdout out, BackendError naming the command."""

from __future__ import annotations

import subprocess

from orchestrator.backends.docker.daemon import Daemon, docker_cli
from xcplab_contract.errors import BackendError


class DockerCli:
    def __init__(self, daemon: Daemon):
        self.daemon = daemon
        self._argv0 = docker_cli()
        self._env = daemon.env()

    def run(self, *argv: str, node: str = "(docker)", timeout_s: float = 120.0,
            check: bool = True) -> str:
        try:
            p = subprocess.run([self._argv0, *argv], env=self._env, capture_output=True,
                               text=True, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired as e:
            raise BackendError(node=node, cmd=f"docker {' '.join(argv[:3])}", rc=None,
                               stderr=f"no answer within {timeout_s:g}s") from e
        if check and p.returncode != 0:
            raise BackendError(node=node, cmd=f"docker {' '.join(argv[:3])}", rc=p.returncode,
                               stderr=p.stderr.strip()[-2000:])
        return p.stdout
