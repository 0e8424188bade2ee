"""How a queue kind says it maps onto ns-2.35, for the simulated twin
(orchestrator/backends/ns2/): each kind's model declares an `Ns2Queue` (the ns-2 queue
it becomes and how its engine params translate) or an `Ns2Refused` (why ns-2.35 has no
such queue). A kind that declares neither is refused by name, so a new kind is never
run on ns-2 as something else; derived kinds (xcpi, ixcp from xcp) declare their own.

Pure data about the kind; the backend interprets it (mapping.py, script.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


def _same(v: Any) -> Any:
    return v


@dataclass(frozen=True)
class Ns2Variable:
    """One engine param of the kind as an ns-2 queue variable (`$q set VAR VALUE`), with
    the engine's default for it (ns-2's defaults differ) and the conversion of the value."""

    param: str  # engine param (router-image/QUEUES.md)
    var: str  # ns-2 variable, e.g. thresh_
    engine_default: Any
    convert: Callable[[Any], Any] = _same


@dataclass(frozen=True)
class Ns2Queue:
    """The ns-2.35 queue a kind becomes."""

    cls: str  # `$ns simplex-link ... <cls>`: DropTail, RED, XCP
    # ns-2's qlim_ minus the packets it holds waiting (the engine's limit L holds L):
    # DropTail::enque drops when length() + 1 >= qlim_, RED's when length >= qlim_
    qlim_extra: int
    variables: tuple[Ns2Variable, ...] = ()
    # engine params ns-2 has compiled in (not settable from Tcl): another value is refused
    fixed: Mapping[str, float] = field(default_factory=dict)
    # the engine param of the queue's own capacity, when ns-2 takes it as
    # `set-link-capacity` (XCP); without it the queue follows the link's bandwidth
    own_capacity: str | None = None
    # engine params ns-2 has no counterpart of, when on (truthy): the sentence saying so
    refused: Mapping[str, str] = field(default_factory=dict)
    # engine params moot while a refused one is off (the fairness dropper's settings)
    ignored_prefixes: tuple[str, ...] = ()
    # what the run's manifest says about the ns-2 queue beside `fixed` (how it differs)
    notes: Mapping[str, str] = field(default_factory=dict)

    def settings(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """`variables` as ns-2 takes them: the plan's value, else the engine's default."""
        return {v.var: v.convert(params.get(v.param, v.engine_default)) for v in self.variables}

    def capacity(self, params: Mapping[str, Any], link_bps: int) -> int | None:
        """What `set-link-capacity` gets (None: the kind takes none): its own capacity
        param when set (non-zero), else the link's."""
        if self.own_capacity is None:
            return None
        return int(params.get(self.own_capacity) or link_bps)

    def follows_link(self, params: Mapping[str, Any]) -> bool:
        """Whether a change of the link's capacity changes the queue's C too."""
        return self.own_capacity is not None and not params.get(self.own_capacity)


@dataclass(frozen=True)
class Ns2Refused:
    """A kind ns-2.35 cannot run: the sentence naming it (`link X: <what>: ns-2.35 has
    no such queue`)."""

    what: str  # e.g. "XCP-i (queue kind xcpi)"
