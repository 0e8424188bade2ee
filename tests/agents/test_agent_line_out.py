"""agents/line_out.py: the agent's output is written by its own thread, so a caller (the
sampler) does not wait for a reader that falls behind; order is kept, nothing is
dropped, the queue is bounded, and a reader that is gone is reported."""

from __future__ import annotations

import json
import os
import threading
import time
from typing import BinaryIO

import pytest

from agents.line_out import LineOut


def _pipe() -> tuple[BinaryIO, BinaryIO]:
    r, w = os.pipe()
    return os.fdopen(r, "rb"), os.fdopen(w, "wb")


def _read_lines(reader: BinaryIO, n: int) -> list[dict[str, object]]:
    return [json.loads(reader.readline()) for _ in range(n)]


def test_a_sample_larger_than_the_pipe_does_not_wait_for_the_reader() -> None:
    # A pipe holds 64 KiB: a 1 MiB message written by the caller itself blocks until
    # someone reads (the iXCP Fig. 4 sampling gaps). Here nobody reads yet.
    reader, writer = _pipe()
    out = LineOut(writer)
    big = {"type": "rows", "measurement": "ixcp", "rows": ["x" * 1024] * 1024}
    t0 = time.monotonic()
    for i in range(3):
        out({"seq": i, **big})
    assert time.monotonic() - t0 < 0.5
    assert out.pending_bytes > 3 * 1024 * 1024 - 64 * 1024  # still waiting for the reader
    got = _read_lines(reader, 3)
    assert [m["seq"] for m in got] == [0, 1, 2] and got[2]["rows"] == big["rows"]
    assert out.close(timeout_s=5)
    reader.close()


def test_replies_and_samples_keep_their_order_and_close_delivers_everything() -> None:
    reader, writer = _pipe()
    out = LineOut(writer)
    got: list[dict[str, object]] = []
    t = threading.Thread(target=lambda: got.extend(_read_lines(reader, 2000)))
    t.start()
    for i in range(2000):
        out({"type": "reply" if i % 7 == 0 else "rows", "seq": i})
    assert out.close(timeout_s=10)
    t.join(10)
    assert [m["seq"] for m in got] == list(range(2000))
    assert out.pending_bytes == 0
    with pytest.raises(ValueError, match="closed"):
        out({"late": True})
    reader.close()


def test_past_the_bound_the_caller_waits_for_the_reader_and_nothing_is_dropped() -> None:
    reader, writer = _pipe()
    out = LineOut(writer, max_pending_bytes=200 * 1024)
    line = {"rows": ["y" * 1000] * 100}  # ~100 KB each: the pipe takes part of the first
    done = threading.Event()

    def produce() -> None:
        for i in range(6):
            out({"seq": i, **line})
        done.set()

    p = threading.Thread(target=produce)
    p.start()
    assert not done.wait(0.5)  # blocked at the bound: the reader has not read
    assert out.pending_bytes <= 200 * 1024 + 110 * 1024
    got = _read_lines(reader, 6)
    assert done.wait(5)
    p.join(5)
    assert [m["seq"] for m in got] == list(range(6))
    assert out.close(timeout_s=5)
    reader.close()


def test_a_reader_that_is_gone_is_reported_to_the_caller() -> None:
    reader, writer = _pipe()
    out = LineOut(writer)
    reader.close()  # the orchestrator died: writes fail with EPIPE
    out({"first": True})  # queued; the writer thread finds the pipe broken
    deadline = time.monotonic() + 5
    with pytest.raises(OSError, match="the reader is gone"):
        while time.monotonic() < deadline:
            out({"more": True})
            time.sleep(0.01)
    assert not out.close(timeout_s=1)


def test_the_bound_must_be_positive() -> None:
    _, writer = _pipe()
    with pytest.raises(ValueError, match="max_pending_bytes must be > 0"):
        LineOut(writer, max_pending_bytes=0)
    writer.close()
