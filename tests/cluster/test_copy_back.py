"""Copying a machine's run directory back (backend._copy_bounded): spooled to a file as
it comes, cut off past MAX_COPY_BYTES, killed after COPY_TIMEOUT_S, each failure a
BackendError naming the machine. Real processes stand in for `ssh MACHINE tar`."""

from __future__ import annotations

import sys
import tempfile
import time

import pytest

from orchestrator.backends.cluster import backend
from xcplab_contract.errors import BackendError


def _py(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_the_bytes_arrive_in_the_file() -> None:
    with tempfile.TemporaryFile() as out:
        backend._copy_bounded(_py("import sys; sys.stdout.buffer.write(b'x' * 3_000_000)"),
                              out, "m1", "copy RUN")
        assert out.tell() == 3_000_000


def test_more_than_the_bound_is_cut_off_not_read_to_the_end(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backend, "MAX_COPY_BYTES", 2 << 20)
    with tempfile.TemporaryFile() as out:
        with pytest.raises(BackendError) as e:  # an endless stream: only the bound ends it
            backend._copy_bounded(_py("import sys\nwhile True: "
                                      "sys.stdout.buffer.write(b'x' * 65536)"),
                                  out, "m1", "copy RUN")
        assert out.tell() <= 2 << 20
    assert e.value.node == "m1" and "more than 2097152 bytes" in str(e.value)


def test_a_stalled_copy_is_killed_and_a_failed_one_says_why(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backend, "COPY_TIMEOUT_S", 0.3)
    t0 = time.monotonic()
    with tempfile.TemporaryFile() as out, pytest.raises(BackendError, match="killed after 0.3 s"):
        backend._copy_bounded(_py("import time; time.sleep(30)"), out, "m2", "copy RUN")
    assert time.monotonic() - t0 < 10
    with tempfile.TemporaryFile() as out, pytest.raises(BackendError, match="no such dir") as e:
        backend._copy_bounded(_py("import sys; sys.stderr.write('tar: no such dir'); "
                                  "sys.exit(2)"), out, "m2", "copy RUN")
    assert e.value.rc == 2
