"""paused_gc: collection is off inside, restored by the last block to leave, even when
blocks in two threads overlap (the service validates and plans in threads)."""

from __future__ import annotations

import gc
import threading

from orchestrator.spec.nogc import paused_gc


def test_overlapping_blocks_in_two_threads_leave_collection_on() -> None:
    assert gc.isenabled()
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()

    def thread_b() -> None:
        a_in.wait()
        with paused_gc():  # enters while A holds the pause
            b_in.set()
            a_out.wait()   # and leaves after A left: the interleaving that leaked
    t = threading.Thread(target=thread_b)
    t.start()
    with paused_gc():
        assert not gc.isenabled()
        a_in.set()
        b_in.wait()
    assert not gc.isenabled()  # B is still inside
    a_out.set()
    t.join()
    assert gc.isenabled()


def test_a_block_leaves_collection_off_if_it_was_off() -> None:
    gc.disable()
    try:
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
