"""The `ns2` backend: every plan ns-2.35 can express, simulated instead of emulated."""

from orchestrator.backends.ns2.backend import Ns2Backend

__all__ = ["Ns2Backend"]
