"""Past runs under an output directory: one record per run directory (or lone archive).

A run directory is recognised by its spec.yaml or resolved.json; runs inside
sweep directories (`<out>/sweep-*/`) are listed too. A run without summary.json
is shown as "incomplete" (killed before its analysis, or still running).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.analysis import verdicts
from orchestrator.archive.seal import ARCHIVE_SUFFIX

_STAMP = re.compile(r"-(\d{8}T\d{6})-[0-9a-f]{4}$")


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    path: Path
    experiment: str
    status: str
    duration_s: float | None
    started: dt.datetime | None  # UTC
    fidelity_ok: bool | None
    expectations: str  # "passed/evaluated" (checks skipped by `when:` left out) or ""
    archived: bool
    goodput_mbps: float | None = None  # sum of the flows' throughput


def _started(run_id: str, fallback: Path) -> dt.datetime | None:
    m = _STAMP.search(run_id)
    if m:
        return dt.datetime.strptime(m.group(1), "%Y%m%dT%H%M%S").replace(tzinfo=dt.UTC)
    try:
        return dt.datetime.fromtimestamp(fallback.stat().st_mtime, dt.UTC)
    except OSError:
        return None


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, json.JSONDecodeError):
        return {}


def _info(run_id: str, path: Path, summary: dict[str, Any], resolved: dict[str, Any],
          archived: bool) -> RunInfo:
    exps = summary.get("expectations") or []
    fid = summary.get("fidelity") or {}
    dur = summary.get("duration_s")
    return RunInfo(
        run_id=run_id, path=path,
        experiment=str(summary.get("experiment") or resolved.get("name") or "?"),
        status=str(summary.get("status") or "incomplete"),
        duration_s=float(dur) if isinstance(dur, (int, float)) else None,
        started=_started(run_id, path),
        fidelity_ok=fid.get("ok") if isinstance(fid.get("ok"), bool) else None,
        expectations=_passed_of_evaluated(exps),
        archived=archived,
        goodput_mbps=_goodput(summary))


def _goodput(summary: dict[str, Any]) -> float | None:
    flows = summary.get("flows")
    if not isinstance(flows, dict) or not flows:
        return None
    vals = [f.get("throughput_mbps") for f in flows.values() if isinstance(f, dict)]
    return float(sum(v for v in vals if isinstance(v, (int, float))))


def _from_archive(path: Path) -> RunInfo | None:
    """A `.tar.gz` whose run directory is gone: read its summary without unpacking to disk."""
    run_id = path.name.removesuffix(ARCHIVE_SUFFIX)
    try:
        with tarfile.open(path, "r:gz") as tar:
            docs = {}
            for name in ("summary.json", "resolved.json"):
                try:
                    fh = tar.extractfile(f"{run_id}/{name}")
                    docs[name] = json.load(fh) if fh else {}
                except (KeyError, json.JSONDecodeError):
                    docs[name] = {}
    except (tarfile.TarError, OSError, EOFError):
        return None
    return _info(run_id, path, docs["summary.json"], docs["resolved.json"], True)


def list_runs(out_dir: Path) -> list[RunInfo]:
    """Runs under out_dir (and its sweep directories), oldest first."""
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        return []
    roots = [out_dir, *sorted(d for d in out_dir.iterdir() if d.is_dir() and
                             (d / "sweep.json").is_file())]
    runs: list[RunInfo] = []
    for root in roots:
        for d in sorted(root.iterdir()):
            if d.is_dir() and ((d / "spec.yaml").is_file() or (d / "resolved.json").is_file()):
                archived = (d.parent / f"{d.name}{ARCHIVE_SUFFIX}").is_file()
                runs.append(_info(d.name, d, _load(d / "summary.json"),
                                  _load(d / "resolved.json"), archived))
            elif d.is_file() and d.name.endswith(ARCHIVE_SUFFIX) and not (
                    d.parent / d.name.removesuffix(ARCHIVE_SUFFIX)).is_dir():
                info = _from_archive(d)
                if info:
                    runs.append(info)
    epoch = dt.datetime.min.replace(tzinfo=dt.UTC)
    return sorted(runs, key=lambda r: (r.started or epoch, r.run_id))


def _passed_of_evaluated(exps: list[dict[str, Any]]) -> str:
    """"3/4": checks that passed of those evaluated (a `when:`-skipped one is neither)."""
    if not exps:
        return ""
    c = verdicts.count(exps)
    return f"{c.passed}/{c.evaluated}"
