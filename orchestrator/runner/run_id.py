"""Run ids: `<experiment>-<YYYYmmddTHHMMSS>-<4 hex>` (UTC), unique and sortable by time.

What any run id may be (`check_run_id`) is the contract's (`xcplab_contract.naming`):
the agent checks the ids it is asked to clean by the same rule.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
RUN_ID_RE = re.compile(r"^[A-Za-z0-9_.-]+-\d{8}T\d{6}-[0-9a-f]{4}$")


def new_run_id(experiment: str, now: dt.datetime | None = None, suffix: str | None = None) -> str:
    now = now or dt.datetime.now(dt.UTC)
    # no '.' (so never '..') and at most 60 characters: always a valid run id
    name = _SAFE.sub("-", experiment.replace(".", "-")).strip("-_")[:60] or "run"
    return f"{name}-{now.strftime('%Y%m%dT%H%M%S')}-{suffix or secrets.token_hex(2)}"
