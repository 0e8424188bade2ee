"""Where the reproductions write their runs.

`make reproduce` sets XCPLAB_REPRODUCE_OUT so the runs outlive the tests:
tools/reproductions_doc.py then writes docs/reproductions.md's generated tables from
them. Without it (a developer running one test) they go to pytest's tmp_path."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

OUT_ENV = "XCPLAB_REPRODUCE_OUT"


def _persistent(request: pytest.FixtureRequest, what: str) -> Path | None:
    root = os.environ.get(OUT_ENV)
    if not root:
        return None
    path = Path(root) / re.sub(r"[^A-Za-z0-9_.-]+", "_", what)[:150]
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def run_out(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """This test's run directory parent."""
    return _persistent(request, request.node.name) or tmp_path


@pytest.fixture(scope="module")
def module_run_out(request: pytest.FixtureRequest,
                   tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A module-scoped parent (fixtures shared by several tests, e.g. the buffer sweeps)."""
    return _persistent(request, request.module.__name__) or tmp_path_factory.mktemp("runs")
