"""Text the service stores for users to read (a run's error and message) without the
server's own paths (issue 14, class 7: API errors exposed them).

A run's error often quotes a path (`OSError: [Errno 28] ...: '/var/lib/xcplab/runs/
RUN/metrics/flow.csv'`). What the user needs is the part inside the run; where the
service keeps its data is the operator's business. Each directory of the service (and
the installation's own) is replaced by a short name in angle brackets.
"""

from __future__ import annotations

from pathlib import Path
from typing import overload

from orchestrator.service.settings import Settings
from xcplab_contract.paths import BUILD_DIR, REPO_ROOT


def server_dirs(settings: Settings) -> list[tuple[str, str]]:
    """(path prefix, its public name), longest first so the most specific one wins."""
    dirs = {str(settings.runs_path): "<runs>", str(settings.data_dir): "<data>",
            str(BUILD_DIR): "<build>", str(REPO_ROOT): "<xcplab>"}
    if settings.archives_dir is not None:
        dirs[str(settings.archives_dir)] = "<archives>"
    resolved = {str(Path(p).resolve()): name for p, name in dirs.items()}
    dirs.update({p: n for p, n in resolved.items() if p not in dirs})
    return sorted(((p.rstrip("/"), n) for p, n in dirs.items() if p not in ("", "/")),
                  key=lambda pn: -len(pn[0]))


@overload
def public_text(text: str, settings: Settings) -> str: ...
@overload
def public_text(text: None, settings: Settings) -> None: ...
def public_text(text: str | None, settings: Settings) -> str | None:
    """TEXT with every server directory named, not spelled out."""
    if not text:
        return text
    for prefix, name in server_dirs(settings):
        text = text.replace(prefix, name)
    return text
