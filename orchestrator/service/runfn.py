"""What the worker calls: the orchestrator's runner and its clean-up.

The run function has the signature of `orchestrator.runner.execute_run`. It is
injected into the scheduler; tests of the service alone may name a replacement
through the `test_only_run_function` setting.
"""

from __future__ import annotations

import importlib
import logging
import subprocess
import sys
from collections.abc import Callable
from typing import Any, Protocol

from orchestrator.service.settings import Settings
from xcplab_contract.errors import XcplabError

log = logging.getLogger("xcplab.service")


class RunFunction(Protocol):
    def __call__(self, spec_path: Any = None, *, spec_text: str | None = None,
                 out_dir: Any, backend: str = "netns", influx_url: str | None = None,
                 overrides: Any = (), run_id: str | None = None,
                 on_progress: Callable[[Any], None] | None = None,
                 cancel: Any = None) -> Any: ...


def import_dotted(ref: str) -> Any:
    """`package.module:attr` -> the object, or XcplabError saying what is wrong."""
    mod_name, sep, attr = ref.partition(":")
    if not sep:
        raise XcplabError(f"{ref!r}: expected module:function")
    try:
        return getattr(importlib.import_module(mod_name), attr)
    except (ImportError, AttributeError) as e:
        raise XcplabError(f"cannot load {ref!r}: {e}") from e


def resolve_run_function(settings: Settings) -> RunFunction:
    if settings.test_only_run_function:
        log.warning("using test-only run function %s", settings.test_only_run_function)
        fn: RunFunction = import_dotted(settings.test_only_run_function)
        return fn
    return _real_runner


def _real_runner(spec_path: Any = None, **kwargs: Any) -> Any:
    # Imported per call so the service starts (and reports the problem per run)
    # even in a build whose runner cannot be imported.
    runner = importlib.import_module("orchestrator.runner")
    return runner.execute_run(spec_path, **kwargs)


def clean_run(run_id: str, timeout_s: float = 120.0, backend: str = "netns") -> str:
    """Removes everything run RUN_ID left behind via `xcplab clean --backend B RUN`
    (the backend's `clean` verb); returns a note.

    A separate process on purpose: clean-up after a crash must not depend on the
    state of the process that crashed, and this is the same path a user takes.
    """
    try:
        proc = subprocess.run([sys.executable, "-m", "orchestrator.cli", "clean",
                               "--backend", backend, run_id],
                              check=False, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return f"`xcplab clean {run_id}` timed out after {timeout_s:g} s"
    if proc.returncode != 0:
        err = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [""]
        return f"`xcplab clean {run_id}` failed (exit {proc.returncode}): {err[0]}"
    return f"resources of {run_id} cleaned"
