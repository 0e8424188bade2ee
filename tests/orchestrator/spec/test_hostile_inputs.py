"""Issue 14, class 1 and 2 through the CLI: hostile specs, `--set` values and sweep
`--param`s exit 2 with `FILE[:LINE]: path: reason` lines, no traceback, within bounded
time and memory (measured: tracemalloc in process; wall time and max RSS of a child
process under a 1 GiB address-space limit for the inputs that used to crash it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from hostile_cases import SPEC_BODIES, alias_bomb_flow
from spec_cases import BASE

from orchestrator.cli import build_parser, main

# What a problem line looks like: FILE:LINE: path: reason, or FILE: path: reason for
# what has no line (--set, --param).
LINE = re.compile(r"^[^:\n]+(:\d+)?: [^:\n]+: .+$")
MAX_SECONDS = 5.0        # in process, per case (each takes well under 1 s)
MAX_PEAK_BYTES = 64 << 20  # Python allocations during one case
MAX_ERR_CHARS = 20_000   # the answer never echoes unbounded input


def _check_refused(rc: int, err: str) -> None:
    assert rc == 2, err[:2000]
    assert "Traceback" not in err
    assert len(err) < MAX_ERR_CHARS
    lines = err.strip().splitlines()
    assert lines and all(LINE.match(x) for x in lines), lines[:5]


@pytest.fixture(autouse=True, scope="module")
def _imports_done() -> None:
    """Every subcommand module imported before anything is measured."""
    build_parser()


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, float, int]:
    """main(argv) -> (exit code, stderr, seconds, peak bytes allocated). Run twice: timed
    without tracing (tracemalloc slows allocation-heavy code tenfold), then traced."""
    t0 = time.monotonic()
    rc = main(argv)
    seconds = time.monotonic() - t0
    err = capsys.readouterr().err
    tracemalloc.start()
    try:
        assert main(argv) == rc
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert capsys.readouterr().err == err
    return rc, err, seconds, peak


@pytest.mark.parametrize("name", sorted(SPEC_BODIES))
def test_hostile_spec_bodies_exit_2_quickly(name: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / f"{name}.yaml"
    p.write_text(SPEC_BODIES[name])
    rc, err, seconds, peak = _run(["validate", str(p)], capsys)
    _check_refused(rc, err)
    assert err.startswith(f"{p}:")
    assert seconds < MAX_SECONDS and peak < MAX_PEAK_BYTES, (seconds, peak)


def test_the_refusal_names_the_line_of_the_bomb(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "s.yaml"
    p.write_text(BASE + "x-bomb: " + alias_bomb_flow() + "\n")
    rc, err, _, _ = _run(["validate", str(p)], capsys)
    assert rc == 2
    assert err.startswith(f"{p}:{BASE.count(chr(10)) + 1}: (yaml): more than ")


def test_limits_leave_real_specs_alone(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Anchors, merge keys and a 32-deep value are fine: the bounds are not a ban."""
    p = tmp_path / "s.yaml"
    p.write_text("x-link: &l {capacity: 10Mbps, delay: 5ms}\n" + BASE.replace(
        "{a: h1, b: r1, capacity: 10Mbps, delay: 5ms}", "{a: h1, b: r1, <<: *l}")
        + "x-deep: " + "[" * 31 + "]" * 31 + "\n")
    rc, _, _, _ = _run(["validate", str(p)], capsys)
    assert rc == 0


def test_non_utf8_spec_is_a_problem_line(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "s.yaml"
    p.write_bytes(b"name: t\ndescription: caf\xe9\n")
    rc, err, _, _ = _run(["validate", str(p)], capsys)
    _check_refused(rc, err)
    assert err.startswith(f"{p}:2: (file): not UTF-8")


OVERRIDES: dict[str, list[str]] = {
    "alias-bomb": ["description=" + alias_bomb_flow()],
    "deep-value": ["description=" + "[" * 20_000 + "]" * 20_000],
    "deep-unclosed": ["description=" + "{a: " * 30_000],
    "huge-value": ["description=" + "x" * 200_000],
    "long-path": ["a" + ".a" * 5_000 + "=1"],
    "huge-index": ["links[" + "9" * 5_000 + "].capacity=1Mbps"],
    "too-many": [f"description=d{i}" for i in range(300)],
}


@pytest.mark.parametrize("name", sorted(OVERRIDES))
def test_hostile_set_values_exit_2_quickly(name: str, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "s.yaml"
    p.write_text(BASE)
    argv = ["validate", str(p)]
    for o in OVERRIDES[name]:
        argv += ["--set", o]
    rc, err, seconds, peak = _run(argv, capsys)
    _check_refused(rc, err)
    assert err.startswith("--set: ")
    assert seconds < MAX_SECONDS and peak < MAX_PEAK_BYTES, (seconds, peak)


@pytest.mark.parametrize("params", [
    ["description=" + alias_bomb_flow() + ",x"],
    ["description=" + "[" * 10_000 + ",x"],
    # 10**8 combinations: refused from the axis lengths, before one point is built
    *[[f"x-p{i}=" + ",".join(f"v{j}" for j in range(10)) for i in range(8)]],
], ids=["alias-bomb", "deep", "10^8-runs"])
def test_hostile_sweep_params_exit_2_before_building_the_grid(
        params: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "s.yaml"
    p.write_text(BASE)
    argv = ["sweep", str(p), "--dry-run", "--out", str(tmp_path / "out")]
    for x in params:
        argv += ["--param", x]
    rc, err, seconds, peak = _run(argv, capsys)
    _check_refused(rc, err)
    assert seconds < MAX_SECONDS and peak < MAX_PEAK_BYTES, (seconds, peak)
    assert not (tmp_path / "out").exists()


# The child sets its own address-space limit, then runs the CLI as `python -m` would.
# The child reports its own peak RSS (VmHWM of its own address space) when it exits: a
# parent's wait4 ru_maxrss would include the parent's RSS at fork (Linux carries the old
# mm's high-water mark across exec), so under a 400 MB pytest process it read 412 MB.
_CHILD = ("import atexit, os, resource, runpy, sys; "
          "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)); "
          "hwm = lambda: [l.split()[1] for l in open('/proc/self/status') "
          "if l.startswith('VmHWM:')][0]; "
          "atexit.register(lambda: open(os.environ['HWM_FILE'], 'w').write(hwm())); "
          "sys.argv = ['xcplab', *sys.argv[1:]]; "
          "runpy.run_module('orchestrator.cli', run_name='__main__')")


def _run_child(argv: list[str], tmp_path: Path, timeout_s: float = 60.0
               ) -> tuple[int, str, float, int]:
    """A child `python -m orchestrator.cli ARGV` under a 1 GiB address-space limit ->
    (exit code, stderr, seconds, max RSS in KiB of that child alone)."""
    err_path = tmp_path / "stderr"
    t0 = time.monotonic()
    with open(err_path, "wb") as err, open(os.devnull, "wb") as out:
        hwm_path = tmp_path / "vmhwm_kib"
        proc = subprocess.Popen([sys.executable, "-c", _CHILD, *argv], stdout=out, stderr=err,
                                env={**os.environ, "HWM_FILE": str(hwm_path)})
    while True:
        pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - t0 > timeout_s:
            proc.kill()
            pid, status, rusage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.02)
    proc.returncode = os.waitstatus_to_exitcode(status)  # already reaped
    del rusage  # its ru_maxrss counts the parent's RSS at fork (see _CHILD)
    hwm = int(hwm_path.read_text()) if hwm_path.is_file() else -1  # -1: died before atexit
    return proc.returncode, err_path.read_text(errors="replace"), time.monotonic() - t0, hwm


@pytest.mark.parametrize("name", ["deep-seq-30000-unclosed", "alias-bomb-doc"])
def test_the_process_survives_what_used_to_kill_it(name: str, tmp_path: Path) -> None:
    """Before: 30 000 `[` segfaulted `xcplab validate` (exit -11); the alias bomb grew it
    to 5.8 GB (MemoryError under this 1 GiB limit). Now the child exits 2 in seconds."""
    p = tmp_path / f"{name}.yaml"
    p.write_text(SPEC_BODIES[name])
    rc, err, seconds, maxrss_kib = _run_child(["validate", str(p)], tmp_path)
    _check_refused(rc, err)
    assert seconds < 30, seconds  # mostly interpreter start and imports
    assert 0 < maxrss_kib < 400 * 1024, maxrss_kib  # the child alone peaks near 50 MB here
