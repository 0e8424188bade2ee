"""The validation gate (issue 14): at most WORKERS validations at once, at most WAITING
more queued, the rest refused at once (503 over the API) instead of piling up."""

from __future__ import annotations

import threading

import anyio
import pytest

from orchestrator.api.errors import status_of
from orchestrator.service.errors import Busy
from orchestrator.service.validation_gate import ValidationGate


def test_the_gate_runs_its_workers_queues_its_waiting_and_refuses_the_rest() -> None:
    gate = ValidationGate(workers=1, waiting=1)
    release = threading.Event()
    running: list[int] = []
    most = [0]
    lock = threading.Lock()

    def validate(k: int) -> int:
        with lock:
            running.append(k)
            most[0] = max(most[0], len(running))
        release.wait(10)
        with lock:
            running.remove(k)
        return k

    async def main() -> tuple[list[int], BaseException | None]:
        done: list[int] = []
        refused: BaseException | None = None

        async def submit(k: int) -> None:
            done.append(await gate.run(validate, k))

        async with anyio.create_task_group() as tg:
            tg.start_soon(submit, 1)
            tg.start_soon(submit, 2)
            while gate.in_flight < 2:  # one running, one queued
                await anyio.sleep(0.01)
            try:
                await gate.run(validate, 3)
            except Busy as e:
                refused = e
            release.set()
        return sorted(done), refused

    done, refused = anyio.run(main)
    assert done == [1, 2]  # the queued one ran once the worker was free
    assert most[0] == 1  # never two validations at once
    assert isinstance(refused, Busy) and status_of(refused) == 503
    assert gate.in_flight == 0


def test_gate_sizes_are_bounded() -> None:
    from pydantic import ValidationError

    from orchestrator.service.settings import Settings

    with pytest.raises(ValidationError):
        Settings(validation_workers=0)
    with pytest.raises(ValidationError):
        Settings(validation_queue=100_000)
