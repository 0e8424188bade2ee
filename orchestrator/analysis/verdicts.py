"""A recorded check's verdict, read the same way everywhere results are counted.

summary.json `expectations[]` entries carry `status` ("pass", "fail", "skipped")
and `ok` (True, False, None); summaries written before `when:` existed carry
only `ok`. A skipped check (its `when:` did not hold) is neither passed nor
failed, so it never counts towards either.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

Verdict = Literal["pass", "fail", "skipped"]


def verdict(e: dict[str, Any]) -> Verdict:
    if e.get("status") == "skipped":
        return "skipped"
    return "pass" if e.get("ok") is True else "fail"


@dataclass(frozen=True)
class Counts:
    passed: int
    failed: int
    skipped: int

    @property
    def evaluated(self) -> int:
        return self.passed + self.failed


def count(exps: Iterable[dict[str, Any]]) -> Counts:
    vs = [verdict(e) for e in exps]
    return Counts(vs.count("pass"), vs.count("fail"), vs.count("skipped"))
