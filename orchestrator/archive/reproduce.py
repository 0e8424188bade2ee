"""Rerun a run from its archive and compare the summaries figure by figure.

The archive holds the spec as given (spec.yaml) and the resolved spec with its
seed (resolved.json); the summary records the backend and its options. The
rerun uses the spec text with `seed=<resolved seed>`, then checks that the new
resolved spec equals the archived one, so an input that was not reproduced
(e.g. a `--set` override the archive does not record) is reported, not hidden.
"""

from __future__ import annotations

import json
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.analysis.flatten import flatten_summary, relative_difference
from xcplab_contract.errors import XcplabError


@dataclass(frozen=True)
class Archived:
    """What a rerun needs from an archive, read into memory."""

    name: str
    spec_text: str
    resolved: dict[str, Any]
    summary: dict[str, Any]

    @property
    def seed(self) -> int | None:
        s = self.resolved.get("seed")
        return s if isinstance(s, int) and not isinstance(s, bool) else None

    def overrides(self) -> list[str]:
        """`--set` overrides to pass: those the run recorded (if any), then the seed."""
        recorded = self.summary.get("overrides") or self.resolved.get("overrides") or []
        out = [str(o) for o in recorded if isinstance(o, str) and not o.startswith("seed=")]
        if self.seed is not None:
            out.append(f"seed={self.seed}")
        return out


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise XcplabError(f"{path.name} in the archive is unreadable: {e}") from e
    return data if isinstance(data, dict) else {}


def _from_dir(run_dir: Path) -> Archived:
    spec = run_dir / "spec.yaml"
    if not spec.is_file():
        raise XcplabError(f"{run_dir}: no spec.yaml: not a run directory or archive")
    summary = _read_json(run_dir / "summary.json") if (run_dir / "summary.json").is_file() else {}
    return Archived(run_dir.name, spec.read_text(), _read_json(run_dir / "resolved.json"),
                    summary)


def load_archive(path: Path) -> Archived:
    """Reads a `.tar.gz` (unpacked safely into a temporary directory) or a run directory."""
    path = Path(path)
    if path.is_dir():
        return _from_dir(path)
    if not path.is_file():
        raise XcplabError(f"{path}: no such archive or run directory")
    with tempfile.TemporaryDirectory(prefix="xcplab-reproduce-") as tmp:
        try:
            with tarfile.open(path, "r:gz") as tar:
                tar.extractall(tmp, filter="data")  # no absolute paths, links out, devices
        except (tarfile.TarError, OSError, EOFError) as e:
            raise XcplabError(f"{path}: not a readable .tar.gz: {e}") from e
        dirs = [d for d in Path(tmp).iterdir() if d.is_dir()]
        if len(dirs) != 1:
            raise XcplabError(f"{path}: expected one run directory inside, found {len(dirs)}")
        return _from_dir(dirs[0])


def diff_paths(a: Any, b: Any, prefix: str = "") -> list[str]:
    """Dotted paths at which two JSON values differ (run-specific keys excluded by caller)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            p = f"{prefix}.{k}" if prefix else str(k)
            if k not in a or k not in b:
                out.append(p)
            else:
                out += diff_paths(a[k], b[k], p)
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [prefix or "(root)"]
        return [p for i, (x, y) in enumerate(zip(a, b, strict=True))
                for p in diff_paths(x, y, f"{prefix}[{i}]")]
    return [] if a == b else [prefix or "(root)"]


def compare(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, Any, Any, float | None]]:
    """(figure, old, new, relative difference) for every figure of either summary."""
    fo, fn = flatten_summary(old), flatten_summary(new)
    keys = list(dict.fromkeys([*fo, *fn]))
    return [(k, fo.get(k), fn.get(k), relative_difference(fo.get(k), fn.get(k))) for k in keys]
