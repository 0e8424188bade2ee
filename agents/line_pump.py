"""Reading a child's line-oriented output in a thread (xcpperf's and xcp-stackd's JSON
streams), with a raw copy kept for logs/."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import IO


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
