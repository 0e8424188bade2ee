"""Pure grid expansion: `--param path=v1,v2` options × repetitions → run points.

The first parameter varies slowest (itertools.product order), repetitions
fastest, so a table reads naturally and the order is deterministic. Each
repetition gets its own seed, base_seed + repetition, unless a parameter
sets `seed` itself; the seed is recorded in every point.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from xcplab_contract.errors import SpecError, SpecProblem, XcplabError


@dataclass(frozen=True)
class Param:
    path: str            # dotted spec path, as `--set` takes it
    values: tuple[str, ...]


@dataclass(frozen=True)
class Point:
    index: int                     # 0-based position in the sweep
    params: tuple[tuple[str, str], ...]  # (path, value) in --param order
    repetition: int                # 0-based
    seed: int | None               # None when a parameter sets the seed

    @property
    def overrides(self) -> list[str]:
        """`--set`-style overrides for execute_run: the parameters, then the seed."""
        out = [f"{p}={v}" for p, v in self.params]
        if self.seed is not None:
            out.append(f"seed={self.seed}")
        return out


def parse_param(text: str) -> Param:
    """`links[0].loss=1%,2%` → Param("links[0].loss", ("1%", "2%")); SpecError (exit 2,
    as a bad --set) naming the parameter otherwise."""
    path, sep, values = text.partition("=")
    path = path.strip()

    def bad(reason: str) -> SpecError:
        return SpecError([SpecProblem("--param", None, text, reason)])

    if not sep or not path:
        raise bad("expected PATH=V1,V2,... e.g. links[0].capacity=10Mbps,20Mbps")
    vals = tuple(v.strip() for v in values.split(","))
    if not vals or any(v == "" for v in vals):
        raise bad("empty value in the list (write PATH=V1,V2,...)")
    if len(set(vals)) != len(vals):
        raise bad("a value is listed twice")
    return Param(path, vals)


def check_run_count(sizes: list[int], repeat: int, limit: int) -> int:
    """Runs a grid of axes of these sizes makes (their product x repeat), computed before
    any point exists; SpecError (exit 2, as a bad value) past `limit`."""
    runs = math.prod(sizes) * max(repeat, 1)
    if runs > limit:
        shape = " x ".join(str(n) for n in sizes) or "1"
        raise SpecError([SpecProblem("--param", None, "(grid)",
                                     f"the sweep makes {runs} runs ({shape} values x {repeat} "
                                     f"repetitions); at most {limit}")])
    return runs


def expand(params: list[Param], repeat: int, base_seed: int) -> list[Point]:
    """Every (combination × repetition) point, in a fixed order."""
    if repeat < 1:
        raise XcplabError(f"--repeat {repeat}: must be at least 1")
    paths = [p.path for p in params]
    if len(set(paths)) != len(paths):
        raise XcplabError(f"--param: {', '.join(sorted({p for p in paths if paths.count(p) > 1}))}"
                          " given more than once; list all its values in one --param")
    seeded = "seed" in paths
    points: list[Point] = []
    combos = itertools.product(*(p.values for p in params)) if params else [()]
    for combo in combos:
        for rep in range(repeat):
            points.append(Point(len(points), tuple(zip(paths, combo, strict=True)), rep,
                                None if seeded else base_seed + rep))
    return points
