"""A generated topology as pure data: what `emit` needs to write a spec."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class RouterLink:
    a: str
    b: str
    capacity_bps: int
    delay_s: float


@dataclass(frozen=True)
class FlowDraw:
    """A flow from a host behind router `src` to a host behind router `dst`."""

    id: str
    src: str
    dst: str
    start_s: float = 0.0
    stop_s: float | None = None  # None = the end of the run


@dataclass(frozen=True)
class Topology:
    name: str
    description: str
    routers: tuple[str, ...]
    links: tuple[RouterLink, ...]
    flows: tuple[FlowDraw, ...] = ()
    meta: dict[str, object] = field(default_factory=dict)  # generator, seed, shape
