"""Where xcplab finds its native tools.

Order: an explicit environment variable, the repository's CMake build tree
(`make build` puts binaries there), then $PATH (the Docker images install
them system-wide).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from xcplab_contract.errors import XcplabError

REPO_ROOT = Path(__file__).resolve().parent.parent
BUILD_DIR = Path(os.environ.get("XCPLAB_BUILD_DIR", REPO_ROOT / "build"))

_TOOLS = {
    # name: (environment variable, path inside the build tree)
    "xcp-router": ("XCPLAB_ENGINE", "router-image/xcp-router"),
    "xcpperf": ("XCPLAB_XCPPERF", "host-image/xcpperf"),
    # The socket stack (docs/socket-stack.md): its daemon and LD_PRELOAD interposer.
    "xcp-stackd": ("XCPLAB_STACKD", "host-image/xcp-stackd"),
    "libxcpsock_preload.so": ("XCPLAB_XCPSOCK_PRELOAD", "host-image/libxcpsock_preload.so"),
}


def tool(name: str) -> Path:
    """Absolute path of a native tool, or XcplabError saying how to get it."""
    env_var, rel = _TOOLS[name]
    if env_var in os.environ:
        p = Path(os.environ[env_var])
        if p.is_file() and os.access(p, os.X_OK):
            return p
        raise XcplabError(f"{env_var}={p} is not an executable file")
    built = BUILD_DIR / rel
    if built.is_file() and os.access(built, os.X_OK):
        return built
    found = shutil.which(name)
    if found:
        return Path(found)
    raise XcplabError(f"{name} not found: run `make build` (expected {built}) or set {env_var}")
