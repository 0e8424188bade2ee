"""Backends by name: `get_backend("netns")`; an unknown name lists the valid ones."""

from __future__ import annotations

import importlib

from orchestrator.backends.base import Backend
from orchestrator.errors import XcplabError

# name -> "module:Class"; imported lazily so a backend's dependencies load only when used
_REGISTRY: dict[str, str] = {
    "netns": "orchestrator.backends.netns:NetnsBackend",
}


def register(name: str, target: str) -> None:
    """Add a backend (e.g. docker, cluster) as "module:Class"."""
    _REGISTRY[name] = target


def names() -> list[str]:
    return sorted(_REGISTRY)


def get_backend(name: str) -> type[Backend]:
    if name not in _REGISTRY:
        raise XcplabError(f"unknown backend {name!r} (valid: {', '.join(names())})")
    module, _, cls = _REGISTRY[name].partition(":")
    return getattr(importlib.import_module(module), cls)


__all__ = ["Backend", "get_backend", "names", "register"]
