"""Seals a run directory into `<run_dir>.tar.gz` and verifies archives against their manifest.

The tarball is deterministic for given file contents: members in sorted path
order, owner and permissions normalised, gzip header without a timestamp.
"""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path

from orchestrator.archive.manifest import (
    MANIFEST,
    run_files,
    sha256_bytes,
    sha256_file,
    write_manifest,
)
from xcplab_contract.errors import XcplabError

ARCHIVE_SUFFIX = ".tar.gz"


def _tarinfo(path: Path, arcname: str, mtime: int | None = None) -> tarfile.TarInfo:
    info = tarfile.TarInfo(arcname)
    st = path.stat()
    info.size = st.st_size
    info.mtime = int(st.st_mtime) if mtime is None else mtime
    info.mode = 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def seal(run_dir: Path) -> Path:
    """Writes run_dir/manifest.json and run_dir's sibling `<name>.tar.gz`; returns the archive.
    XcplabError if the archive cannot be written (the partial file is removed)."""
    run_dir = Path(run_dir).resolve()
    if not run_dir.is_dir():
        raise XcplabError(f"{run_dir}: not a run directory")
    write_manifest(run_dir)
    archive = run_dir.parent / f"{run_dir.name}{ARCHIVE_SUFFIX}"
    tmp = archive.with_name(archive.name + ".part")
    files = run_files(run_dir)
    # The manifest is rewritten on every seal; stamping it with the newest data
    # file's time keeps the archive's bytes a function of the run's contents.
    newest = max((int(p.stat().st_mtime) for p in files), default=0)
    members = [run_dir / MANIFEST, *files]
    try:
        with open(tmp, "wb") as raw, \
                gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz, \
                tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for path in members:
                arcname = f"{run_dir.name}/{path.relative_to(run_dir).as_posix()}"
                with open(path, "rb") as fh:
                    stamp = newest if path.name == MANIFEST and path.parent == run_dir else None
                    tar.addfile(_tarinfo(path, arcname, stamp), fh)
        tmp.replace(archive)  # never leave a half-written archive under the final name
    except OSError as e:  # e.g. ENOSPC: no partial archive stays behind
        tmp.unlink(missing_ok=True)
        raise XcplabError(f"{archive}: archive not written: {e.strerror or e}; "
                          f"the run directory {run_dir} is complete") from e
    return archive


def _verify_files(manifest: dict, actual: dict[str, str], where: str) -> list[str]:
    problems = []
    listed = manifest.get("files")
    if not isinstance(listed, dict):
        return [f"{where}: {MANIFEST} has no 'files' table"]
    for rel, meta in sorted(listed.items()):
        want = meta.get("sha256") if isinstance(meta, dict) else None
        if rel not in actual:
            problems.append(f"{where}: {rel} is listed in the manifest but missing")
        elif actual[rel] != want:
            problems.append(f"{where}: {rel} has sha256 {actual[rel][:12]}…, "
                            f"manifest says {str(want)[:12]}…")
    for rel in sorted(set(actual) - set(listed)):
        problems.append(f"{where}: {rel} is not listed in the manifest")
    return problems


def verify(archive_or_dir: Path) -> list[str]:
    """Problems found checking every file against manifest.json ([] = intact)."""
    path = Path(archive_or_dir)
    if path.is_dir():
        mpath = path / MANIFEST
        if not mpath.is_file():
            return [f"{path}: no {MANIFEST}"]
        try:
            manifest = json.loads(mpath.read_text())
        except json.JSONDecodeError as e:
            return [f"{mpath}: not valid JSON: {e}"]
        actual = {p.relative_to(path).as_posix(): sha256_file(p) for p in run_files(path)}
        return _verify_files(manifest, actual, str(path))
    if not path.is_file():
        return [f"{path}: no such archive or directory"]
    try:
        with tarfile.open(path, "r:gz") as tar:
            contents: dict[str, bytes] = {}
            for m in tar.getmembers():
                if not m.isfile():
                    continue
                rel = m.name.split("/", 1)[1] if "/" in m.name else m.name
                fh = tar.extractfile(m)
                contents[rel] = fh.read() if fh else b""
    except (tarfile.TarError, OSError, EOFError) as e:
        return [f"{path}: not a readable .tar.gz: {e}"]
    if MANIFEST not in contents:
        return [f"{path}: no {MANIFEST} inside"]
    try:
        manifest = json.load(io.BytesIO(contents.pop(MANIFEST)))
    except json.JSONDecodeError as e:
        return [f"{path}: {MANIFEST} is not valid JSON: {e}"]
    actual = {rel: sha256_bytes(data) for rel, data in contents.items()}
    return _verify_files(manifest, actual, str(path))
