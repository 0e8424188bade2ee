"""Run ids: `<experiment>-<YYYYmmddTHHMMSS>-<4 hex>` (UTC), unique and sortable by time."""

from __future__ import annotations

import datetime as dt
import re
import secrets

from xcplab_contract.errors import XcplabError

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
RUN_ID_RE = re.compile(r"^[A-Za-z0-9_.-]+-\d{8}T\d{6}-[0-9a-f]{4}$")
# What any run id (generated or given with --run-id) may be: one path component that is
# neither hidden nor a parent reference, so `OUT/<run-id>` and `/run/xcplab/<run-id>`
# stay inside OUT and /run/xcplab, and namespace/interface names built from it are valid.
VALID_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


def check_run_id(text: str) -> str:
    """`text` if it can be a run id; XcplabError naming the rule otherwise."""
    if not VALID_RUN_ID.match(text) or ".." in text:
        shown = text if len(text) <= 80 else text[:80] + "..."
        raise XcplabError(f"run id {shown!r}: a run id is a name, not a path: 1 to 100 "
                          "letters, digits, '_', '-' or '.', starting with a letter or digit, "
                          "without '..' (e.g. dumbbell-20260101T120000-ab12)")
    return text


def new_run_id(experiment: str, now: dt.datetime | None = None, suffix: str | None = None) -> str:
    now = now or dt.datetime.now(dt.UTC)
    # no '.' (so never '..') and at most 60 characters: always a valid run id
    name = _SAFE.sub("-", experiment.replace(".", "-")).strip("-_")[:60] or "run"
    return f"{name}-{now.strftime('%Y%m%dT%H%M%S')}-{suffix or secrets.token_hex(2)}"
