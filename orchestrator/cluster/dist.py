"""What provisioning ships to every machine: one bundle.tar, built on the controller.

    lib/xcplab_contract/, lib/agents/     the agent and its contract (no orchestrator)
    bin/xcp-router, bin/xcpperf           the binaries `make build` made, without debug
                                          information (36 MB -> 1.2 MB: the copy and
                                          the checksums of every provisioning shrink)
    bin/xcp-stackd, bin/libxcpsock_preload.so   the socket stack of `app:` flows
                                          (docs/socket-stack.md), likewise stripped
    bin/xcplab-agent, bin/xcplab-agent-supervise   launcher and supervisor
                                          (cluster/ansible/roles/xcplab_agent/files)
    VERSION                               package version + hash of all of the above

Fixed metadata (mtime 0, root, sorted): the same tree gives the same bytes, so
Ansible's checksum says "unchanged" and a second provisioning changes nothing.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from orchestrator import __version__
from xcplab_contract import paths

PACKAGES = ("xcplab_contract", "agents")
BINARIES = ("xcp-router", "xcpperf", "xcp-stackd", "libxcpsock_preload.so")
SUFFIXES = (".py", ".json")
ROLE_FILES = paths.REPO_ROOT / "cluster" / "ansible" / "roles" / "xcplab_agent" / "files"
SCRIPTS = {"xcplab-agent": "xcplab-agent", "xcplab-agent-supervise": "xcplab-agent-supervise.py"}


def _contents(root: Path) -> list[tuple[str, Path, int]]:
    """(name in the bundle, source, mode), sorted by name."""
    out: list[tuple[str, Path, int]] = []
    for pkg in PACKAGES:
        out += [(f"lib/{p.relative_to(root)}", p, 0o644) for p in (root / pkg).rglob("*")
                if p.is_file() and p.suffix in SUFFIXES and "__pycache__" not in p.parts]
    out += [(f"bin/{name}", paths.tool(name), 0o755) for name in BINARIES]  # XcplabError
    out += [(f"bin/{name}", ROLE_FILES / src, 0o755) for name, src in SCRIPTS.items()]
    return sorted(out)


def _read(name: str, src: Path) -> bytes:
    """A binary's bytes without debug sections (`strip --strip-debug` is deterministic:
    same input, same output); as built where binutils is missing."""
    if not name.startswith("bin/") or name.removeprefix("bin/") not in BINARIES \
            or shutil.which("strip") is None:
        return src.read_bytes()
    with tempfile.TemporaryDirectory(prefix="xcplab-bundle-") as tmp:
        out = Path(tmp) / "stripped"
        subprocess.run(["strip", "--strip-debug", "-o", str(out), str(src)], check=True,
                       capture_output=True)
        return out.read_bytes()


def _add(tar: tarfile.TarFile, name: str, data: bytes, mode: int) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), mode, 0
    tar.addfile(info, io.BytesIO(data))


def bundle(root: Path = paths.REPO_ROOT) -> tuple[bytes, str]:
    """The bundle's bytes and its version stamp (so `cluster check` can tell machines
    provisioned from different trees apart)."""
    h = hashlib.sha256()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, src, mode in _contents(root):
            data = _read(name, src)
            h.update(name.encode() + b"\0" + data)
            _add(tar, name, data, mode)
        version = f"{__version__}+{h.hexdigest()[:12]}"
        _add(tar, "VERSION", f"{version}\n".encode(), 0o644)
    return buf.getvalue(), version
