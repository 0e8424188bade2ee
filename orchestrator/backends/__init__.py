"""Backends by name: `get_backend("netns")`; an unknown name lists the valid ones.

A backend is a module `orchestrator/backends/<name>.py` defining a `Backend`
subclass whose `name` is `<name>` (so docker and cluster plug in by adding their
module), or an explicit `register(name, "module:Class")`.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from orchestrator.backends.base import Backend
from xcplab_contract.errors import XcplabError

_HELPERS = {"base", "agent_link"}  # modules here that are not backends
_REGISTRY: dict[str, str] = {}


def register(name: str, target: str) -> None:
    """Add a backend living elsewhere, as "module:Class"."""
    _REGISTRY[name] = target


def names() -> list[str]:
    found = {m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)])
             if not m.name.startswith("_") and m.name not in _HELPERS}
    return sorted(found | set(_REGISTRY))


def get_backend(name: str) -> type[Backend]:
    if name not in names():
        raise XcplabError(f"unknown backend {name!r} (valid: {', '.join(names())})")
    if name in _REGISTRY:
        module, _, cls = _REGISTRY[name].partition(":")
        return getattr(importlib.import_module(module), cls)
    mod = importlib.import_module(f"orchestrator.backends.{name}")
    for obj in vars(mod).values():
        if (isinstance(obj, type) and issubclass(obj, Backend)
                and getattr(obj, "name", None) == name):
            return obj
    raise XcplabError(f"orchestrator/backends/{name}.py defines no Backend named {name!r}")


__all__ = ["Backend", "get_backend", "names", "register"]
