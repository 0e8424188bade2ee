"""Reads a run directory's metrics/*.csv into DataFrames, tolerating what is missing.

A failed run may leave partial files, a run without XCP routers leaves the
xcp_* columns empty, a run without routers has no link.csv at all. Every
loader therefore returns a frame with at least the contract's columns (NaN
where absent) so the analysis never branches on "is the file there".
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from xcplab_contract.columns import COLUMNS
from xcplab_contract.errors import XcplabError

# The contract's layout (xcplab_contract/columns.py), one definition for writers and readers.
LINK_COLUMNS = list(COLUMNS["link"])
FLOW_COLUMNS = list(COLUMNS["flow"])
EVENT_COLUMNS = list(COLUMNS["event"])
ENGINE_COLUMNS = list(COLUMNS["engine"])
PROCS_COLUMNS = list(COLUMNS["procs"])

_TEXT_COLUMNS = {"node", "port", "link", "flow", "stream", "proto", "src", "dst", "kind",
                 "target", "detail", "proc", "tool"}


@dataclass
class Metrics:
    """The measurement tables of one run (possibly empty)."""

    link: pd.DataFrame
    flow: pd.DataFrame
    event: pd.DataFrame
    engine: pd.DataFrame
    procs: pd.DataFrame  # the flow tools' CPU time and scheduling delay
    missing: list[str]  # metrics files that were absent or empty: "flow.csv: absent"
    notes: list[str]    # lines dropped from damaged files: "event.csv: incomplete last line..."


def _read_tolerant(path: Path, notes: list[str]) -> pd.DataFrame:
    """Reads a metrics CSV. A run killed mid-write may leave a cut last line (a
    truncated id would become a bogus flow or link, a cut quote breaks parsing):
    a last line without its newline is dropped and noted, nothing else is."""
    text_dtypes = {c: str for c in _TEXT_COLUMNS}
    text = path.read_text(errors="replace")
    if text and not text.endswith("\n"):
        text = text[:text.rfind("\n") + 1]
        notes.append(f"{path.name}: incomplete last line dropped")
    try:
        return pd.read_csv(io.StringIO(text), dtype=text_dtypes)
    except pd.errors.ParserError:
        pass
    try:
        df = pd.read_csv(io.StringIO(text), dtype=text_dtypes, engine="python",
                         on_bad_lines="skip")
    except pd.errors.ParserError as e:
        raise XcplabError(f"{path}: not a readable CSV: {e}") from e
    notes.append(f"{path.name}: unreadable lines skipped")
    return df


def _load(path: Path, columns: list[str], missing: list[str],
          notes: list[str]) -> pd.DataFrame:
    df: pd.DataFrame
    if not path.is_file():
        missing.append(f"{path.name}: absent")
        df = pd.DataFrame(columns=columns)
    else:
        try:
            df = _read_tolerant(path, notes)
        except pd.errors.EmptyDataError:
            missing.append(f"{path.name}: empty")
            df = pd.DataFrame(columns=columns)
    for c in columns:
        if c not in df.columns:
            df[c] = pd.NA if c in _TEXT_COLUMNS else float("nan")
    for c in columns:
        if c not in _TEXT_COLUMNS:
            df[c] = pd.to_numeric(df[c], errors="coerce")
        else:
            df[c] = df[c].astype("string")
    # A half-written last line (run killed mid-write) has no timestamp: drop it.
    df = df[df["t_s"].notna()]
    return df.sort_values("t_s", kind="stable").reset_index(drop=True)


def load_metrics(run_dir: Path) -> Metrics:
    """Loads run_dir/metrics/{link,flow,event,engine,procs}.csv."""
    mdir = Path(run_dir) / "metrics"
    missing: list[str] = []
    notes: list[str] = []
    return Metrics(
        link=_load(mdir / "link.csv", LINK_COLUMNS, missing, notes),
        flow=_load(mdir / "flow.csv", FLOW_COLUMNS, missing, notes),
        event=_load(mdir / "event.csv", EVENT_COLUMNS, missing, notes),
        engine=_load(mdir / "engine.csv", ENGINE_COLUMNS, missing, notes),
        procs=_load(mdir / "procs.csv", PROCS_COLUMNS, missing, notes),
        missing=missing,
        notes=notes,
    )
