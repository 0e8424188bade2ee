"""Seeded traffic matrices: which host pairs carry the long-lived flows of a trial.

`pairs(rng, hosts, matrix, n, ...)` draws n (src, dst) host pairs, src != dst:

- `uniform`  every ordered pair equally likely;
- `gravity`  P(src, dst) proportional to m_src x m_dst, the masses drawn once per host
             from an exponential distribution of mean 1 (a gravity model with random
             populations);
- `hotspot`  `hotspots` hosts drawn first; each flow goes to one of them with
             probability `hot_share`, else to any host; its source is any other host.

With `avoid_same_router` (the default), pairs whose two hosts hang off the same router
are redrawn (at most 100 times per flow), so every flow crosses at least one
router-to-router link when the topology allows it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

MATRICES = ("uniform", "gravity", "hotspot")
REDRAWS = 100


def pairs(rng: random.Random, hosts: Sequence[tuple[str, str]], matrix: str, n: int,
          hotspots: int = 1, hot_share: float = 0.5,
          avoid_same_router: bool = True) -> list[tuple[str, str]]:
    """`hosts`: (host, router it hangs off) in a fixed order."""
    if len(hosts) < 2:
        raise ValueError(f"a traffic matrix needs at least two hosts, the topology has "
                         f"{len(hosts)}")
    names = [h for h, _ in hosts]
    router = dict(hosts)
    mass = [rng.expovariate(1.0) for _ in names] if matrix == "gravity" else [1.0] * len(names)
    hot = rng.sample(names, min(hotspots, len(names))) if matrix == "hotspot" else []
    out = []
    for _ in range(n):
        for _attempt in range(REDRAWS):
            if matrix == "hotspot" and rng.random() < hot_share:
                dst = rng.choice(hot)
                src = rng.choice([h for h in names if h != dst])
            else:
                src = rng.choices(names, weights=mass)[0]
                others = [(h, m) for h, m in zip(names, mass, strict=True) if h != src]
                dst = rng.choices([h for h, _ in others], weights=[m for _, m in others])[0]
            if not avoid_same_router or router[src] != router[dst]:
                break
        out.append((src, dst))
    return out
