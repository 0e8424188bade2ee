"""The scheduler and its local worker threads.

One scheduler thread per server process: it recovers orphans (runs whose owning
server died), enforces cancels and time limits, and hands queued runs to free
slots of each pool. Each run executes in a worker thread calling the injected
run function with a cancel Event; its progress goes to the database, which is
what the API (and its SSE stream) reads.
"""

from __future__ import annotations

import logging
import shutil
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from orchestrator.service import queue
from orchestrator.service.db import PRIVATE_DIR_MODE
from orchestrator.service.models import Experiment, State, utcnow
from orchestrator.service.public_text import public_text
from orchestrator.service.runfn import RunFunction, clean_run
from orchestrator.service.settings import Settings

log = logging.getLogger("xcplab.service")

PROGRESS_MIN_INTERVAL_S = 0.5  # at most two progress writes per second and run
# The final state write: 6 attempts over ~15 s (0.5, 1, 2, 4, 8 s apart).
FINAL_WRITE_ATTEMPTS = 6
FINAL_WRITE_FIRST_RETRY_S = 0.5


@dataclass
class _Active:
    cancel: threading.Event
    thread: threading.Thread
    started: float  # monotonic
    reason: str | None = None  # why cancel was set: "cancelled", "time limit", "stopping"


class Scheduler:
    def __init__(self, settings: Settings, sessions: sessionmaker[Session],
                 run_fn: RunFunction, *, clean_fn: Callable[[str], str] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self._sessions = sessions
        self._run_fn = run_fn
        self._clean_fn = clean_fn or partial(clean_run, backend=settings.backend)
        self._clock = clock
        self._active: dict[str, _Active] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._recover_due = threading.Event()  # a worker could not write its final state
        self._thread: threading.Thread | None = None
        self._pid, self._pstart = queue.self_identity()

    # --- lifecycle -------------------------------------------------------
    def start(self) -> None:
        self.recover_orphans()
        self._thread = threading.Thread(target=self._loop, name="xcplab-scheduler", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 30.0) -> None:
        """Stops taking runs; runs in progress are torn down and marked failed."""
        self._stop.set()
        self._wake.set()
        if self._thread:
            self._thread.join(timeout_s)
        with self._lock:
            active = list(self._active.items())
        for _, a in active:
            a.reason = a.reason or "stopping"
            a.cancel.set()
        for _, a in active:
            a.thread.join(timeout_s)

    def wake(self) -> None:
        self._wake.set()

    def request_cancel(self, exp_id: str) -> None:
        with self._lock:
            a = self._active.get(exp_id)
        if a is not None:
            a.reason = a.reason or "cancelled"
            a.cancel.set()
        self._wake.set()

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def active_ids(self) -> list[str]:
        with self._lock:
            return list(self._active)

    # --- the loop --------------------------------------------------------
    def _loop(self) -> None:
        last_recover = self._clock()
        while not self._stop.is_set():
            try:
                self.tick()
                if self._recover_due.is_set() or self._clock() - last_recover > 30.0:
                    self._recover_due.clear()
                    self.recover_orphans()
                    last_recover = self._clock()
            except Exception:
                log.exception("scheduler tick failed")
            self._wake.wait(self.settings.scheduler_poll_s)
            self._wake.clear()

    def tick(self) -> None:
        self._enforce_cancels_and_limits()
        if self._stop.is_set():
            return
        for pool, slots in self.settings.pools.items():
            with self._sessions() as db:
                while queue.running_count(db, pool) < slots:
                    exp_id = queue.claim_next(db, pool, self._pid, self._pstart)
                    if exp_id is None:
                        break
                    self._launch(exp_id)

    def _enforce_cancels_and_limits(self) -> None:
        with self._lock:
            active = dict(self._active)
        if not active:
            return
        with self._sessions() as db:
            flagged = set(db.scalars(select(Experiment.id).where(
                Experiment.id.in_(list(active)), Experiment.cancel_requested.is_(True))))
        now = self._clock()
        for exp_id, a in active.items():
            if exp_id in flagged and not a.cancel.is_set():
                a.reason = a.reason or "cancelled"
                a.cancel.set()
            elif now - a.started > self.settings.run_time_limit_s and not a.cancel.is_set():
                a.reason = a.reason or "time limit"
                a.cancel.set()

    # --- orphans ---------------------------------------------------------
    def recover_orphans(self) -> list[str]:
        """Fails every running row whose owner process is gone, and cleans its resources."""
        with self._sessions() as db:
            rows = db.execute(select(Experiment.id, Experiment.worker_pid, Experiment.worker_start,
                                     Experiment.worker_host)
                              .where(Experiment.state == State.running.value)).all()
        with self._lock:
            mine = set(self._active)
        host = socket.gethostname()

        def ours(r: Any) -> bool:  # claimed by this process, which has no worker for it
            return (r.worker_pid, r.worker_start, r.worker_host) == (self._pid, self._pstart, host)

        orphans = [r.id for r in rows
                   if r.id not in mine and (ours(r) or not queue.owner_alive(
                       r.worker_pid, r.worker_start, r.worker_host))]
        owners = {r.id: r.worker_pid for r in rows}
        lost = {r.id for r in rows if ours(r)}
        for exp_id in orphans:
            reason = (f"interrupted: server process {owners[exp_id]} stopped while the run "
                      f"was in progress") if exp_id not in lost else (
                "its final state could not be written to the database; the run's directory "
                "may still hold its results")
            with self._sessions() as db:
                res = db.execute(update(Experiment).where(
                    Experiment.id == exp_id, Experiment.state == State.running.value)
                    .values(state=State.failed.value, finished_at=utcnow(), error=reason,
                            message="cleaning up"))
                db.commit()
                if res.rowcount != 1:  # type: ignore[attr-defined]
                    continue  # someone else recovered it
            note = self._clean_fn(exp_id)
            log.warning("%s: %s; %s", exp_id, reason, note)
            with self._sessions() as db:
                db.execute(update(Experiment).where(Experiment.id == exp_id)
                           .values(message=public_text(note, self.settings)))
                db.commit()
        return orphans

    # --- one run ---------------------------------------------------------
    def _launch(self, exp_id: str) -> None:
        cancel = threading.Event()
        t = threading.Thread(target=self._execute, args=(exp_id, cancel),
                             name=f"xcplab-run-{exp_id}", daemon=True)
        with self._lock:
            self._active[exp_id] = _Active(cancel=cancel, thread=t, started=self._clock())
        t.start()

    def _progress_writer(self, exp_id: str) -> Callable[[Any], None]:
        last: dict[str, Any] = {"t": 0.0, "phase": ""}

        def on_progress(p: Any) -> None:
            now = self._clock()
            phase = str(getattr(p, "phase", ""))
            if phase == last["phase"] and now - last["t"] < PROGRESS_MIN_INTERVAL_S:
                return
            last["t"], last["phase"] = now, phase
            try:
                with self._sessions() as db:
                    db.execute(update(Experiment).where(Experiment.id == exp_id).values(
                        phase=phase[:64], fraction=float(getattr(p, "fraction", 0.0) or 0.0),
                        elapsed_s=float(getattr(p, "elapsed_s", 0.0) or 0.0),
                        message=public_text(str(getattr(p, "message", "")),
                                            self.settings)[:2000]))
                    db.commit()
            except Exception:
                log.exception("%s: progress update failed", exp_id)
        return on_progress

    def _store_archive(self, path: str | None) -> str | None:
        """Moves a finished archive to archives_dir when one is configured."""
        dest_dir = self.settings.archives_dir
        if path is None or dest_dir is None or not Path(path).is_file():
            return path
        dest_dir.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
        dest = dest_dir / Path(path).name
        shutil.move(path, dest)
        return str(dest)

    def _execute(self, exp_id: str, cancel: threading.Event) -> None:
        """One run to its final state. Whatever fails (the database, the archive move),
        the run's slot is given back and the final state is written, retried."""
        try:
            values = self._run_one(exp_id, cancel)
            self._write_final(exp_id, values)
        except Exception:
            log.exception("%s: the worker failed outside the run", exp_id)
            self._recover_due.set()  # its row still says running: fail it as an orphan
        finally:
            with self._lock:
                self._active.pop(exp_id, None)
            self._wake.set()

    def _run_one(self, exp_id: str, cancel: threading.Event) -> dict[str, Any]:
        values: dict[str, Any] = {"finished_at": None}
        try:
            with self._sessions() as db:
                exp = db.scalar(select(Experiment).where(Experiment.id == exp_id))
                assert exp is not None
                spec_text, overrides = exp.spec_text, list(exp.overrides or [])
            out_dir = Path(self.settings.runs_path)
            out_dir.mkdir(parents=True, exist_ok=True)
            result = self._run_fn(spec_text=spec_text, out_dir=out_dir,
                                  backend=self.settings.backend,
                                  influx_url=self.settings.influx_url, overrides=tuple(overrides),
                                  run_id=exp_id, on_progress=self._progress_writer(exp_id),
                                  cancel=cancel)
            status = str(getattr(result.status, "value", result.status))
            values.update(state=status if status in ("completed", "failed", "cancelled")
                          else State.failed.value,
                          run_dir=str(result.run_dir) if result.run_dir else None,
                          archive_path=str(result.archive_path) if result.archive_path else None,
                          summary=result.summary if isinstance(result.summary, dict) else None)
            if values["state"] == State.failed.value and isinstance(result.summary, dict):
                # what failed the run (engine start, agent...), else its fidelity problems
                problems = (result.summary.get("fidelity") or {}).get("problems") or []
                values["error"] = (str(result.summary.get("error") or "")
                                   or "; ".join(map(str, problems)))[:2000] or None
        except Exception as e:
            log.exception("%s failed", exp_id)
            values.update(state=State.failed.value, error=f"{type(e).__name__}: {e}"[:4000])
            values["message"] = self._clean_fn(exp_id)
        with self._lock:
            a = self._active.get(exp_id)
            reason = a.reason if a else None
        if reason == "cancelled":
            values["state"] = State.cancelled.value
        elif reason == "time limit":
            values.update(state=State.failed.value,
                          error=f"exceeded the run time limit of "
                                f"{self.settings.run_time_limit_s:g} s; torn down")
        elif reason == "stopping":
            values.update(state=State.failed.value, error="interrupted: the server stopped")
        try:
            values["archive_path"] = self._store_archive(values.get("archive_path"))
        except OSError as e:  # e.g. ENOSPC on the archives volume: the archive stays put
            log.exception("%s: archive not moved", exp_id)
            values["message"] = f"archive left at {values.get('archive_path')}: {e.strerror}"
        values["finished_at"] = utcnow()
        if values["state"] == State.completed.value:
            values["fraction"] = 1.0
        return values

    def _write_final(self, exp_id: str, values: dict[str, Any]) -> None:
        """The final state, retried with backoff while the database refuses it (locked,
        pool exhausted, restarting); a run is never left `running` by one failed write."""
        for key in ("error", "message"):
            if key in values:
                values[key] = public_text(values[key], self.settings)
        delay = FINAL_WRITE_FIRST_RETRY_S
        for attempt in range(1, FINAL_WRITE_ATTEMPTS + 1):
            try:
                with self._sessions() as db:
                    db.execute(update(Experiment).where(Experiment.id == exp_id)
                               .values(**values))
                    db.commit()
                return
            except Exception:
                if attempt == FINAL_WRITE_ATTEMPTS or (self._stop.is_set() and attempt >= 2):
                    raise  # logged by _execute; recover_orphans fails the run at restart
                log.warning("%s: final state not written (attempt %d), retrying in %.1f s",
                            exp_id, attempt, delay, exc_info=True)
                self._stop.wait(delay)
                delay *= 2
