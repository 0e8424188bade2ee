"""The one bound table of engine values (bounds.json beside this file).

The spec validator checks every engine value against it (orchestrator/spec/bounded.py,
through the typed queue models and orchestrator/spec/bounds.py), and the engine is
built with the same rows (router-image/cmake/contract_bounds.cmake turns the file into
contract_bounds.hh): a spec that validates is one the engine accepts, and a limit is
changed in one place. JSON rather than Python so CMake reads it without Python.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True)
class Bound:
    """A closed range [lo, hi] in SI units; `why` is shown with the problem."""

    lo: float
    hi: float
    unit: str  # how to print lo/hi: "bps", "s", "B", "pkts", "BDP", ""
    why: str
    integer: bool = False  # whole numbers only

    def contains(self, x: float) -> bool:
        return self.lo <= x <= self.hi and (not self.integer or float(x).is_integer())


def _load() -> dict[str, Bound]:
    data = json.loads(resources.files(__package__).joinpath("bounds.json").read_text())
    return {name: Bound(lo=float(row["lo"]), hi=float(row["hi"]), unit=row["unit"],
                        why=row["why"], integer=bool(row.get("integer", False)))
            for name, row in data["bounds"].items()}


TABLE: dict[str, Bound] = _load()


def bound(name: str) -> Bound:
    """The row `name` ("link.capacity_bps"); KeyError names the rows there are."""
    try:
        return TABLE[name]
    except KeyError:
        raise KeyError(f"no bound {name!r} in xcplab_contract/bounds.json "
                       f"(rows: {', '.join(TABLE)})") from None
