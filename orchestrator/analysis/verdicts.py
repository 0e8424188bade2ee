"""A recorded check's verdict, read the same way everywhere results are counted.

summary.json `expectations[]` entries carry `status` and `ok`:

- `pass` (ok True): measured, within the bound;
- `fail` (ok False): measured, outside the bound (or not measurable);
- `skipped` (ok None): its `when:` did not hold at this point;
- `unjudged` (ok None): the run was unfaithful (`fidelity.ok` false): its numbers say
  nothing about the protocol; `measured_status` keeps what they gave;
- `not_reproduced` (ok False): xcplab does not reproduce the paper's number; `reason`
  says why (never a PASS, whatever was measured).

Summaries written before `when:` existed carry only `ok`. Only pass and fail
count as evaluated; the other states are counted apart.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

Verdict = Literal["pass", "fail", "skipped", "unjudged", "not_reproduced"]
_APART = ("skipped", "unjudged", "not_reproduced")
LABELS: dict[str, str] = {"pass": "PASS", "fail": "FAIL", "skipped": "SKIP",
                          "unjudged": "UNJUDGED (unfaithful)",
                          "not_reproduced": "NOT REPRODUCED"}


def verdict(e: dict[str, Any]) -> Verdict:
    status = e.get("status")
    if status in _APART:
        return status
    return "pass" if e.get("ok") is True else "fail"


def label(e: dict[str, Any]) -> str:
    """The verdict as reports print it (PASS, FAIL, SKIP, UNJUDGED (unfaithful), ...)."""
    return LABELS[verdict(e)]


@dataclass(frozen=True)
class Counts:
    passed: int
    failed: int
    skipped: int
    unjudged: int = 0
    not_reproduced: int = 0

    @property
    def evaluated(self) -> int:
        return self.passed + self.failed


def count(exps: Iterable[dict[str, Any]]) -> Counts:
    vs = [verdict(e) for e in exps]
    return Counts(vs.count("pass"), vs.count("fail"), vs.count("skipped"),
                  vs.count("unjudged"), vs.count("not_reproduced"))


def unjudge(exps: list[dict[str, Any]], why: str = "unfaithful") -> list[dict[str, Any]]:
    """Every measured entry of an unfaithful run becomes `unjudged`; what the numbers
    gave stays in `measured_status` / `measured_ok`. Skipped entries stay skipped."""
    out = []
    for e in exps:
        if verdict(e) == "skipped":
            out.append(e)
            continue
        out.append({**e, "status": "unjudged", "ok": None, "unjudged": why,
                    "measured_status": verdict(e), "measured_ok": e.get("ok")})
    return out
