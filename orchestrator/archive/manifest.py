"""manifest.json: what a run directory contains and what produced it."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any

from orchestrator.archive.provenance import machine, versions

MANIFEST = "manifest.json"
FORMAT_VERSION = 1


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def run_files(run_dir: Path) -> list[Path]:
    """Every regular file under run_dir except the manifest, sorted by relative path."""
    files = [p for p in run_dir.rglob("*") if p.is_file() and not p.is_symlink()]
    return sorted((p for p in files if p.relative_to(run_dir).as_posix() != MANIFEST),
                  key=lambda p: p.relative_to(run_dir).as_posix())


def _seed(run_dir: Path) -> int | None:
    for name in ("resolved.json", "plan.json"):
        try:
            data = json.loads((run_dir / name).read_text())
        except (OSError, json.JSONDecodeError):
            continue
        for src in (data, data.get("spec") if isinstance(data, dict) else None):
            if isinstance(src, dict) and isinstance(src.get("seed"), int):
                return int(src["seed"])
    return None


def _backend(run_dir: Path) -> dict[str, Any] | None:
    """Which backend realised the run, and what it recorded of itself (`deploy.provenance`:
    e.g. the ns2 backend's ns version, package and exact parameter mapping)."""
    try:
        s = json.loads((run_dir / "summary.json").read_text())
    except (OSError, json.JSONDecodeError):
        return None
    if not isinstance(s, dict) or "backend" not in s:
        return None
    deploy = s.get("deploy")
    provenance = deploy.get("provenance") if isinstance(deploy, dict) else None
    return {"name": s.get("backend"), "kind": s.get("backend_kind"),
            "options": s.get("backend_options"), **(provenance or {})}


def build_manifest(run_dir: Path) -> dict[str, Any]:
    files = {p.relative_to(run_dir).as_posix(): {"sha256": sha256_file(p),
                                                 "bytes": p.stat().st_size}
             for p in run_files(run_dir)}
    return {
        "format": FORMAT_VERSION,
        "run": run_dir.name,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "seed": _seed(run_dir),
        "versions": versions(),
        "backend": _backend(run_dir),
        "machine": machine(),
        "files": files,
    }


def write_manifest(run_dir: Path) -> dict[str, Any]:
    manifest = build_manifest(run_dir)
    (run_dir / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest
