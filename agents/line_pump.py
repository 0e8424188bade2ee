"""Reading a child's line-oriented output in a thread (xcpperf's and xcp-stackd's JSON
streams), with a raw copy kept for logs/, and reading one JSON object from a line."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import IO, Any


def json_object(line: str) -> tuple[dict[str, Any] | None, bool]:
    """(the JSON object on `line`, whether the line was bad). A line that does not start
    with "{" (text, blank) is skipped: (None, False); one that does but is no valid JSON
    (a partial line at EOF, garbage) is bad: (None, True)."""
    line = line.strip()
    if not line.startswith("{"):
        return None, False
    try:
        obj = json.loads(line)
    except json.JSONDecodeError:
        return None, True
    return (obj, False) if isinstance(obj, dict) else (None, True)


def pump_lines(stream: IO[bytes], feed: Callable[[str], None], name: str,
               tee: IO[bytes] | None = None) -> threading.Thread:
    """Feed each line of `stream` to `feed` in a daemon thread until EOF; `tee` receives
    the raw bytes as they come and is closed at EOF."""

    def body() -> None:
        for raw in iter(stream.readline, b""):
            if tee is not None:
                tee.write(raw)
                tee.flush()
            feed(raw.decode(errors="replace"))
        if tee is not None:
            tee.close()

    t = threading.Thread(target=body, daemon=True, name=name)
    t.start()
    return t
