"""The agent's stdout: replies and streamed samples as JSON lines, written by a thread of
their own so that a reader falling behind delays delivery, never the sampler or the
timeline.

The orchestrator reads this pipe (or the SSH channel of a cluster machine) and writes
the sinks. On the netns backend it runs at nice 0 while the flows' tools run at
host_nice (-15) with their autogroups, so while many flows start it can be off the CPU
for a few hundred milliseconds. A pipe holds 64 KiB; one sample of an iXCP run (every
port's `ixcp` counters in long form) is larger, so a sampler that wrote the pipe itself
waited for that reader: seed 001's Fig. 4 with iXCP (20 ports, 70 flows starting at
0 s) had sampling gaps of 0.25-0.8 s in the first second in 5 of 6 runs on
2026-11-28, and was judged unfaithful, while the XCP run of the same spec, whose
samples fit in the pipe, was not. py-spy showed the sampler blocked in the write.

Lines are queued in order (replies and stream messages share the one queue, so a reply
never overtakes the samples before it) up to MAX_PENDING_BYTES; past that the caller
waits for the reader — nothing is dropped. `close()` delivers what is queued.
"""

from __future__ import annotations

import collections
import json
import threading
from typing import Any, BinaryIO

# What may wait for the reader: about 100 s of an iXCP run's samples of Fig. 4 (20
# ports, ~100 KB per 100 ms sample); past it, back-pressure instead of memory.
MAX_PENDING_BYTES = 256 * 1024 * 1024


class LineOut:
    def __init__(self, stream: BinaryIO, max_pending_bytes: int = MAX_PENDING_BYTES) -> None:
        if max_pending_bytes <= 0:
            raise ValueError(f"max_pending_bytes must be > 0, got {max_pending_bytes}")
        self._stream = stream
        self._max = max_pending_bytes
        self._lines: collections.deque[bytes] = collections.deque()
        self._pending = 0
        self._closed = False
        self._error: OSError | ValueError | None = None
        self._cv = threading.Condition()
        self._thread = threading.Thread(target=self._write_loop, name="xcplab-out",
                                        daemon=True)
        self._thread.start()

    @property
    def pending_bytes(self) -> int:
        with self._cv:
            return self._pending

    def __call__(self, msg: dict[str, Any]) -> None:
        """Queue one message as a JSON line. Returns at once unless MAX_PENDING_BYTES are
        already waiting (then when the reader has taken enough); raises the write's
        error once the reader is gone, and after close()."""
        line = (json.dumps(msg, separators=(",", ":"), default=str) + "\n").encode()
        with self._cv:
            # a line larger than the bound goes alone, once the queue is empty
            while (self._pending and self._pending + len(line) > self._max
                   and self._error is None and not self._closed):
                self._cv.wait()
            if self._error is not None:
                raise OSError(f"agent output: the reader is gone ({self._error})")
            if self._closed:
                raise ValueError("agent output: closed")
            self._lines.append(line)
            self._pending += len(line)
            self._cv.notify_all()

    def close(self, timeout_s: float | None = 10.0) -> bool:
        """Write what is queued (up to timeout_s: a reader that stopped reading must not
        keep the agent from exiting) and stop the writer; True if all was written."""
        with self._cv:
            self._closed = True
            self._cv.notify_all()
        self._thread.join(timeout_s)
        with self._cv:
            return not self._pending

    def _write_loop(self) -> None:
        while True:
            with self._cv:
                self._cv.wait_for(lambda: bool(self._lines) or self._closed)
                if not self._lines:
                    return  # closed and drained
                batch = b"".join(self._lines)
                self._lines.clear()
            try:
                self._stream.write(batch)
                self._stream.flush()
            except (OSError, ValueError) as e:  # reader gone (EPIPE) or stream closed
                with self._cv:
                    self._error = e
                    self._cv.notify_all()
                return
            with self._cv:
                self._pending -= len(batch)
                self._cv.notify_all()
