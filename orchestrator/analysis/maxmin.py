"""Exact max-min fair allocation by progressive filling (water-filling).

Pure arithmetic, no plan: a `Problem` is a set of flows, each with the links it
crosses, a weight and an optional demand cap, and the capacity of every link.
`max_min(problem)` returns each flow's rate and what limits it; every number is
a `fractions.Fraction`, so there is no tolerance anywhere: a link is saturated
when its load equals its capacity exactly.

Weights: a flow of weight w is w identical streams on the same route (a flow
with `parallel: w`); the streams, not the flows, are what max-min equalises, so
on a shared bottleneck a weight-2 flow gets twice a weight-1 flow's rate.

Demand cap: the most a flow can use (a UDP sender's rate, an XCP sender's
desired rate), for the whole flow (all its streams). A flow whose cap binds
strictly before any link on its route saturates is demand-limited (bottleneck
None); a cap equal to the rate at which a link saturates reports the link.

Algorithm (Bertsekas & Gallager, Data Networks §6.5.2): every unfrozen flow
runs at w·L for a common per-stream level L. The next level is the smallest of
each link's (capacity − frozen load) / (unfrozen weight) and each unfrozen
cap / w; flows capped at that level freeze as demand-limited, flows on links
that saturate at it freeze with that link as their bottleneck. At most
|flows| + |links| rounds; levels never decrease.

`violations(problem, allocation)` states the defining properties and returns
what does not hold (empty = a max-min fair allocation): feasibility, caps, and
for every flow either its cap, or a saturated link on its route where no
stream is faster than its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from numbers import Rational


def _frac(x: int | Fraction | Rational) -> Fraction:
    if isinstance(x, float):
        raise TypeError(f"{x!r}: give an int or a Fraction (floats are not exact)")
    return Fraction(x)


@dataclass(frozen=True)
class FlowDemand:
    """One flow: the links it crosses (each once), its weight, its cap (None = none)."""

    links: tuple[str, ...]
    weight: int = 1
    cap: Fraction | None = None

    def __post_init__(self) -> None:
        if self.weight < 1:
            raise ValueError(f"weight {self.weight} must be >= 1")
        if self.cap is not None:
            object.__setattr__(self, "cap", _frac(self.cap))
            if self.cap < 0:
                raise ValueError(f"cap {self.cap} must be >= 0")
        if len(set(self.links)) != len(self.links):
            raise ValueError(f"route {self.links} crosses a link twice")


@dataclass(frozen=True)
class Problem:
    flows: Mapping[str, FlowDemand]
    capacity: Mapping[str, Fraction]  # every link a flow crosses; >= 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "capacity",
                           {k: _frac(v) for k, v in self.capacity.items()})
        for fid, f in self.flows.items():
            missing = [link for link in f.links if link not in self.capacity]
            if missing:
                raise ValueError(f"flow {fid}: no capacity for link(s) {', '.join(missing)}")
            if not f.links and f.cap is None:
                raise ValueError(f"flow {fid} crosses no link and has no cap: its rate "
                                 "is unbounded")
        bad = [k for k, v in self.capacity.items() if v < 0]
        if bad:
            raise ValueError(f"negative capacity on {', '.join(bad)}")


@dataclass(frozen=True)
class Allocation:
    rate: dict[str, Fraction]  # flow -> rate (capacity units)
    bottleneck: dict[str, str | None]  # flow -> link, None = demand-limited
    load: dict[str, Fraction] = field(default_factory=dict)  # link -> Σ rates

    def saturated(self, problem: Problem) -> set[str]:
        return {k for k, c in problem.capacity.items() if self.load.get(k, 0) == c}


def max_min(problem: Problem) -> Allocation:
    """The max-min fair rates of `problem` (see module doc)."""
    flows = problem.flows
    on_link: dict[str, list[str]] = {k: [] for k in problem.capacity}
    for fid, demand in flows.items():
        for link in demand.links:
            on_link[link].append(fid)
    rate: dict[str, Fraction] = {}
    bottleneck: dict[str, str | None] = {}
    frozen_load = {k: Fraction(0) for k in problem.capacity}
    live = set(flows)
    while live:
        levels: dict[str, Fraction] = {}
        for link, fids in on_link.items():
            w = sum(flows[f].weight for f in fids if f in live)
            if w:
                levels[link] = (problem.capacity[link] - frozen_load[link]) / w
        caps: dict[str, Fraction] = {}
        for f in live:
            cap = flows[f].cap
            if cap is not None:
                caps[f] = cap / flows[f].weight
        level = min([*levels.values(), *caps.values()])
        done: dict[str, str | None] = {}
        for link in sorted(levels):  # a flow on several saturating links: first by name
            if levels[link] == level:
                for f in on_link[link]:
                    if f in live and f not in done:
                        done[f] = link
        for f, c in caps.items():
            if c == level and f not in done:
                done[f] = None
        for f, where in done.items():
            rate[f] = flows[f].weight * level
            bottleneck[f] = where
            for k in flows[f].links:
                frozen_load[k] += rate[f]
        live -= set(done)
    return Allocation({f: rate[f] for f in flows}, {f: bottleneck[f] for f in flows},
                      frozen_load)


def violations(problem: Problem, alloc: Allocation) -> list[str]:
    """What keeps `alloc` from being the max-min fair allocation of `problem`."""
    out: list[str] = []
    load = {k: Fraction(0) for k in problem.capacity}
    for fid, f in problem.flows.items():
        r = alloc.rate[fid]
        if r < 0:
            out.append(f"flow {fid}: negative rate {r}")
        if f.cap is not None and r > f.cap:
            out.append(f"flow {fid}: rate {r} above its cap {f.cap}")
        for k in f.links:
            load[k] += r
    for k, c in problem.capacity.items():
        if load[k] > c:
            out.append(f"link {k}: load {load[k]} above capacity {c}")
    for fid, f in problem.flows.items():
        per_stream = alloc.rate[fid] / f.weight
        if f.cap is not None and alloc.rate[fid] == f.cap:
            continue
        ok = [k for k in f.links if load[k] == problem.capacity[k] and all(
            alloc.rate[g] / problem.flows[g].weight <= per_stream
            for g, h in problem.flows.items() if k in h.links)]
        if not ok:
            out.append(f"flow {fid}: neither at its cap nor on a saturated link where "
                       "it has the largest per-stream rate")
        b = alloc.bottleneck.get(fid)
        if b is not None and b not in ok:
            out.append(f"flow {fid}: reported bottleneck {b} is not one")
    return out
