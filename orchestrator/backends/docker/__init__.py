"""The docker backend (`--backend docker`): see backend.py; the daemon it uses: daemon.py."""

from orchestrator.backends.docker.backend import DockerBackend

__all__ = ["DockerBackend"]
