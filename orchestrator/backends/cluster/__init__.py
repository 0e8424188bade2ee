"""The cluster backend (`--backend cluster --inventory INV.yaml`): see backend.py; its SSH
channel to each machine's agent: channel.py; the start barrier: barrier.py."""

from orchestrator.backends.cluster.backend import ClusterBackend

__all__ = ["ClusterBackend"]
