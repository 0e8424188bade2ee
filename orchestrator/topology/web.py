"""Seeded web-like short flows (issue 17): sessions, their objects, their flows.

- Sessions arrive as a Poisson process: inter-arrival times exponential with mean
  1 / arrival_rate, from `start`; each picks a client and a server uniformly.
- A session fetches K objects, K geometric on {1, 2, ...} with mean m (P(K = k) =
  p (1 - p)^(k-1), p = 1 / m), as HTTP/1.0-era web models (SURGE, ns-2's PagePool)
  draw pages.
- Object sizes: Pareto (shape a > 1, scale x_m = mean (a - 1) / a, so the untruncated
  mean is `mean`), exponential or constant; every draw is cut at `max_bytes`.
- Consecutive objects of a session start a think time apart (exponential or
  constant), counted from the previous object's *start*: the schedule is open loop,
  fixed before the run, so every protocol compared faces the same offered load (a
  closed loop would let a slow protocol offer less). docs/web-traffic.md says more.

Objects that would start at or after `end_s` are dropped (a session can outlast the
run); so are sessions arriving after it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Sizes:
    dist: str  # pareto | exponential | constant
    mean: float  # bytes
    shape: float = 1.2
    max_bytes: int = 10_000_000


@dataclass
class WebFlow:
    """One (server, client) pair's objects: (start s from t = 0, bytes), in start order."""

    server: str
    client: str
    objects: list[tuple[float, int]] = field(default_factory=list)


@dataclass
class Drawn:
    flows: list[WebFlow]
    sessions: int  # arrived before end_s
    objects: int


def draw_size(rng: random.Random, s: Sizes) -> int:
    if s.dist == "pareto":
        scale = s.mean * (s.shape - 1) / s.shape
        x = scale / (1.0 - rng.random()) ** (1.0 / s.shape)
    elif s.dist == "exponential":
        x = rng.expovariate(1.0 / s.mean)
    else:
        x = s.mean
    return max(1, min(s.max_bytes, round(x)))


def draw_count(rng: random.Random, mean: float) -> int:
    """Geometric on {1, 2, ...} with the given mean (>= 1)."""
    if mean <= 1.0:
        return 1
    p = 1.0 / mean
    return max(1, math.ceil(math.log(1.0 - rng.random()) / math.log(1.0 - p)))


def draw_think(rng: random.Random, dist: str, mean_s: float) -> float:
    return rng.expovariate(1.0 / mean_s) if dist == "exponential" and mean_s > 0 else mean_s


def sessions(rng: random.Random, servers: Sequence[str], clients: Sequence[str],
             n_sessions: int, arrival_rate: float, objects_per_session: float,
             sizes: Sizes, think_dist: str, think_mean_s: float, start_s: float,
             end_s: float) -> Drawn:
    """The flows of `n_sessions` sessions between `servers` and `clients` (disjoint)."""
    by_pair: dict[tuple[str, str], WebFlow] = {}
    t = start_s
    arrived = count = 0
    for _ in range(n_sessions):
        t += rng.expovariate(arrival_rate)
        server, client = rng.choice(servers), rng.choice(clients)
        if t >= end_s:
            break  # arrivals only grow; the sessions before are drawn as without the end
        objs = []
        at = t
        for _j in range(draw_count(rng, objects_per_session)):
            objs.append((round(at, 6), draw_size(rng, sizes)))
            at += draw_think(rng, think_dist, think_mean_s)
        arrived += 1
        kept = [o for o in objs if o[0] < end_s]
        count += len(kept)
        by_pair.setdefault((server, client), WebFlow(server, client)).objects.extend(kept)
    flows = sorted(by_pair.values(), key=lambda f: (f.server, f.client))
    for f in flows:
        f.objects.sort()
    return Drawn(flows, arrived, count)
