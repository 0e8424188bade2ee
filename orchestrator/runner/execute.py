"""execute_run: spec -> plan -> backend -> timeline + samples -> destroy -> summary -> archive.

Used by `xcplab run` and by the web service. Whatever happens after the run
directory exists (failure, cancel, Ctrl-C, SIGTERM) the backend is destroyed,
the summary is written with the matching status, and the directory is sealed.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrator.backends import get_backend
from orchestrator.backends.base import Backend
from orchestrator.runner.run_id import new_run_id
from orchestrator.runner.signals import cancel_on_signals
from orchestrator.runner.types import Progress, RunResult
from orchestrator.sinks import CsvSink, InfluxSink, Sinks
from xcplab_contract.errors import RunError, XcplabError
from xcplab_contract.naming import check_run_id


def _run_logger(run_id: str) -> logging.Logger:
    """One logger per run: the web service runs several in threads of one process."""
    lg = logging.getLogger(f"xcplab.run.{run_id}")
    lg.setLevel(logging.INFO)
    lg.propagate = False  # the run log goes to logs/runner.log; the CLI shows progress
    return lg

# Fractions of the progress bar spent per phase (run dominates).
_SPAN = {"prepare": (0.0, 0.02), "deploy": (0.02, 0.1), "run": (0.1, 0.9),
         "teardown": (0.9, 0.95), "analyse": (0.95, 0.98), "archive": (0.98, 1.0)}
_DONE_GRACE_S = 30.0  # how long past the duration we wait for the agent's "done"


def _make_plan(resolved: Any, run_id: str) -> Any:
    from orchestrator.plan.planner import make_plan
    return make_plan(resolved, run_id)


class _Run:
    def __init__(self, run_id: str, duration_s: float,
                 on_progress: Callable[[Progress], None] | None):
        self.run_id = run_id
        self.duration_s = duration_s
        self.on_progress = on_progress
        self.t_start = time.monotonic()
        self.log = _run_logger(run_id)

    def progress(self, phase: str, message: str, elapsed_s: float = 0.0) -> None:
        self.log.info("%s: %s", phase, message)
        if self.on_progress is None:
            return
        lo, hi = _SPAN.get(phase, (1.0, 1.0))
        inner = min(1.0, elapsed_s / self.duration_s) if phase == "run" and self.duration_s else 0
        try:
            self.on_progress(Progress(self.run_id, phase, elapsed_s, self.duration_s,
                                      lo + (hi - lo) * inner, message))
        except Exception:
            self.log.exception("progress callback failed")


def _play(backend: Backend, sinks: Sinks, run: _Run, cancel: threading.Event,
          extra: dict[str, Any]) -> str:
    """Run phase: stream the agent's messages into the sinks until done/cancel/failure."""
    backend.start()
    t0 = time.monotonic()
    deadline = t0 + run.duration_s + _DONE_GRACE_S
    last_progress = 0.0
    errors: list[str] = []
    while True:
        if cancel.is_set():
            backend.stop()
            return "cancelled"
        now = time.monotonic()
        if now > deadline:
            raise RunError(run.run_id, f"no end of run from the agent {_DONE_GRACE_S:.0f}s "
                                       f"after the duration ({run.duration_s}s)")
        for msg in backend.messages(timeout_s=0.1):
            kind = msg.get("type")
            if kind == "rows":
                sinks.write(msg["measurement"], msg["rows"])
            elif kind == "done":
                extra["timeline_max_lateness_ms"] = msg.get("timeline_max_lateness_ms")
                if errors:
                    extra["agent_errors"] = errors[:50]
                return "completed"
            elif kind == "error":
                errors.append(msg.get("error", "?"))
                run.log.warning("agent: %s", msg.get("error"))
                if msg.get("fatal"):
                    extra["agent_errors"] = errors[:50]
                    raise RunError(run.run_id, msg.get("error", "agent failed"))
            elif kind == "eof":
                raise RunError(run.run_id, "the agent exited during the run")
        elapsed = time.monotonic() - t0
        if elapsed - last_progress >= 0.5:
            last_progress = elapsed
            run.progress("run", f"t={min(elapsed, run.duration_s):.1f}s / {run.duration_s:g}s",
                         elapsed)


def execute_run(spec_path: Path | None = None, *, spec_text: str | None = None, out_dir: Path,
                backend: str = "netns", influx_url: str | None = None,
                overrides: list[str] | tuple[str, ...] = (), run_id: str | None = None,
                on_progress: Callable[[Progress], None] | None = None,
                cancel: threading.Event | None = None,
                backend_options: dict[str, Any] | None = None) -> RunResult:
    """Run one experiment to its archive. SpecError/XcplabError before the run directory
    exists (bad spec, unknown backend, missing tool); afterwards always a RunResult."""
    from orchestrator.spec import load_spec_text

    if (spec_path is None) == (spec_text is None):
        raise XcplabError("execute_run: give exactly one of spec_path or spec_text")
    if spec_text is None:
        assert spec_path is not None
        try:
            spec_text = Path(spec_path).read_text()
        except OSError as e:
            raise XcplabError(f"{spec_path}: cannot read: {e.strerror}") from e
    if run_id is not None:
        check_run_id(run_id)  # before anything: the run directory is OUT/<run_id>
    resolved = load_spec_text(spec_text, str(spec_path or "<spec>"), list(overrides))
    run_id = run_id or new_run_id(resolved.name)
    plan = _make_plan(resolved, run_id)
    backend_cls = get_backend(backend)
    run_dir = Path(out_dir).resolve() / run_id
    be = backend_cls(run_dir, backend_options)
    plan = be.place(plan)  # the cluster backend's machines: part of plan.json
    be.prepare(plan)

    run_dir.mkdir(parents=True, exist_ok=False)
    for sub in ("metrics", "plots", "logs"):
        (run_dir / sub).mkdir()
    (run_dir / "spec.yaml").write_text(spec_text)
    (run_dir / "resolved.json").write_text(json.dumps(resolved.model_dump(mode="json"),
                                                      indent=2) + "\n")
    (run_dir / "plan.json").write_text(plan.to_json() + "\n")
    return _run_in_dir(plan, be, run_dir, influx_url, on_progress, cancel or threading.Event(),
                       backend, backend_options or {}, list(overrides))


def _run_in_dir(plan: Any, be: Backend, run_dir: Path, influx_url: str | None,
                on_progress: Callable[[Progress], None] | None, cancel: threading.Event,
                backend: str, backend_options: dict[str, Any],
                overrides: list[str]) -> RunResult:
    run = _Run(plan.run_id, plan.duration_s, on_progress)
    handler = logging.FileHandler(run_dir / "logs" / "runner.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log = run.log
    log.addHandler(handler)
    influx = (InfluxSink(influx_url, run=plan.run_id, experiment=plan.experiment)
              if influx_url else None)
    sinks = Sinks(CsvSink(run_dir / "metrics"), influx)
    timings: dict[str, float] = {"deploy_s": 0.0, "run_s": 0.0, "teardown_s": 0.0}
    # Recorded so `xcplab reproduce` replays exactly what this run was given.
    extra: dict[str, Any] = {"backend": backend, "backend_kind": be.kind,
                             "backend_options": backend_options, "overrides": overrides}
    status = "failed"
    try:
        with cancel_on_signals(cancel):
            try:
                run.progress("deploy", f"{len(plan.nodes)} nodes, {len(plan.links)} links")
                t = time.monotonic()
                applied = be.apply(plan)
                timings["deploy_s"] = time.monotonic() - t
                extra["deploy"] = applied
                if cancel.is_set():
                    status = "cancelled"
                else:
                    if influx:
                        influx.set_t0(time.time())
                    t = time.monotonic()
                    status = _play(be, sinks, run, cancel, extra)
                    timings["run_s"] = time.monotonic() - t
            except (XcplabError, OSError) as e:
                extra["error"] = str(e)
                log.error("run failed: %s", e)
                status = "failed"
            finally:
                run.progress("teardown", "removing namespaces and processes")
                t = time.monotonic()
                try:
                    extra["teardown"] = be.destroy()
                except Exception as e:  # noqa: BLE001 - reported; `xcplab clean` is the fallback
                    extra["teardown_error"] = f"{e}; run `xcplab clean {plan.run_id}`"
                timings["teardown_s"] = time.monotonic() - t
    except KeyboardInterrupt:
        status = "cancelled"
    finally:
        sink_stats = sinks.close()
        log.removeHandler(handler)
        handler.close()
        logging.Logger.manager.loggerDict.pop(log.name, None)
    extra["metrics_rows"] = sink_stats["rows"]
    if "influx" in sink_stats:
        extra["influx"] = sink_stats["influx"]
        extra["influx_points_dropped"] = sink_stats["influx"]["points_dropped"]
    return _finish(plan, run, run_dir, status, timings, extra)


def _finish(plan: Any, run: _Run, run_dir: Path, status: str, timings: dict[str, float],
            extra: dict[str, Any]) -> RunResult:
    run.progress("analyse", "summary and plots")
    summary: dict[str, Any]
    try:
        from orchestrator.analysis.finalize import finalize_run
        summary = finalize_run(run_dir, status=status, timings=timings, extra=extra)
    except Exception as e:  # noqa: BLE001 - the run must still end with a summary
        run.log.warning("analysis failed (%s): writing a minimal summary.json", e)
        summary = {"run": plan.run_id, "experiment": plan.experiment, "status": status,
                   "timings": timings, "analysis_error": repr(e), **extra}
        (run_dir / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    run.progress("archive", "manifest and tar.gz")
    from orchestrator.archive.seal import seal
    archive: Path | None = None
    try:
        archive = seal(run_dir)
    except XcplabError as e:  # e.g. a full disk: the run keeps its directory and summary
        run.log.warning("%s", e)
        summary.setdefault("warnings", []).append(str(e))
    run.progress("done", status)
    return RunResult(plan.run_id, run_dir, archive, status, summary)
