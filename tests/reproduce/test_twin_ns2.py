"""Twins: the same spec in ns-2.35 (the seed papers' simulator) and emulated, part of `make test`.

Each test runs `xcplab run SPEC --twin ns2` (ns-2 first, then the namespaces) and
asserts that xcplab is within TWIN_BOUND (5 %) of ns-2 on the bottleneck's
utilisation and on every flow's share; the bound is the issue's (#16) and is not
loosened when a run misses it: the difference gets found and explained.

Shares are compared in wire bytes: ns-2's XCP agent carries 1450 payload bytes per
1500-byte packet, xcpperf 1424 (its XCP header is 24 bytes longer than ns-2's, which
adds none), so equal wire rates are 1.8 % apart in payload.

Short versions (10 s and 14 s of simulated/emulated time): the fig2b check's
window starts at 2 s (after the start-up, which the emulated flow's handshake and
first feedback delay by ~0.2 s), convergence's shares are compared over [10, 14] s
(2 s after the fifth arrival).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from reproduce_helpers import EXPERIMENTS, _xcplab, expectation, fidelity_problems, need_tools

pytestmark = [pytest.mark.root, pytest.mark.skipif(shutil.which("ns") is None,
                                                   reason="ns-2 not installed (Debian ns2)")]
TWIN_BOUND = 0.05
RUN_TIMEOUT_S = 200.0
# payload bytes per 1500-byte XCP packet: ns-2's Agent/TCP/Reno/XCP (1500 - 40 - 10) and
# xcpperf (docs/ns2-backend.md "Parameter mapping")
PAYLOAD = {"ns2": 1450, "netns": 1424}


def twin(spec: str, out: Path, sets: list[str]) -> tuple[dict, dict]:
    """`xcplab run SPEC --twin ns2`, run again once when the emulated run is flagged
    unfaithful (as run_spec and the sweeps rerun a flagged run; a machine stall is not
    a difference from ns-2): (ns-2 summary, emulated summary), each with `_dir`."""
    ns2, emu = _twin_once(spec, out / "1", sets)
    if fidelity_problems(emu):
        ns2, emu = _twin_once(spec, out / "2", sets)
    assert not fidelity_problems(emu), "flagged unfaithful twice:\n" + _explain(ns2, emu)
    return ns2, emu


def _twin_once(spec: str, out: Path, sets: list[str]) -> tuple[dict, dict]:
    args = ["run", str(EXPERIMENTS / spec), "--twin", "ns2", "--out", str(out), "--no-progress"]
    for s in sets:
        args += ["--set", s]
    res = _xcplab(args, RUN_TIMEOUT_S)
    lines = res.stdout.strip().splitlines()
    assert res.returncode in (0, 3) and lines, (
        f"exit {res.returncode}\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}")
    assert "paper | ns-2 | xcplab" in res.stdout
    twin_line = next(line for line in lines if line.startswith("twin: "))
    dirs = (Path(twin_line.removeprefix("twin: ")), Path(lines[-1]))
    out_summaries = []
    for d in dirs:
        s = json.loads((d / "summary.json").read_text())
        s["_dir"] = str(d)
        out_summaries.append(s)
    ns2, emu = out_summaries
    assert ns2["backend"] == "ns2" and emu["backend"] == "netns"
    assert dirs[0].name == f"{dirs[1].name}-ns2"  # siblings
    return ns2, emu


def window_wire_bytes(summary: dict, start: float, stop: float) -> dict[str, float]:
    """Each flow's payload bytes acknowledged in [start, stop], in wire bytes."""
    df = pd.read_csv(Path(summary["_dir"]) / "metrics" / "flow.csv")
    out = {}
    for fid, g in df.groupby("flow"):
        by_t = g.groupby("t_s")["bytes"].sum().sort_index()
        a = by_t[by_t.index <= start + 1e-9]
        b = by_t[by_t.index <= stop + 1e-9]
        out[str(fid)] = (float(b.iloc[-1]) - (float(a.iloc[-1]) if len(a) else 0.0)) \
            * 1500 / PAYLOAD[summary["backend"]]
    return out


def close(a: float, b: float) -> bool:
    return abs(a - b) <= TWIN_BOUND * abs(b)


def _explain(ns2: dict, emu: dict) -> str:
    return (f"ns-2 run {ns2['_dir']}\nxcplab run {emu['_dir']}\n"
            f"xcplab fidelity: {fidelity_problems(emu) or 'ok'}")


def test_fig2b_twin_utilisation_and_rate_within_5_percent_of_ns2(run_out: Path) -> None:
    need_tools()
    name = "XCP moves >= 95 % of capacity x time"
    ns2, emu = twin("xcpi/fig2b-xcp.yaml", run_out,
                    ["duration=10s", "expect[0].window={start: 2s}"])
    u_ns2, u_emu = expectation(ns2, name)["value"], expectation(emu, name)["value"]
    assert close(u_emu, u_ns2), f"utilisation {u_emu:.3f} vs ns-2 {u_ns2:.3f}\n" + \
        _explain(ns2, emu)
    w_ns2 = window_wire_bytes(ns2, 2.0, 10.0)["xcp"]
    w_emu = window_wire_bytes(emu, 2.0, 10.0)["xcp"]
    assert close(w_emu, w_ns2), f"wire bytes 2-10 s {w_emu:.0f} vs ns-2 {w_ns2:.0f}\n" + \
        _explain(ns2, emu)


def test_convergence_twin_utilisation_and_shares_within_5_percent_of_ns2(run_out: Path) -> None:
    need_tools()
    name = "bottleneck utilisation after the first start-up"
    ns2, emu = twin("sigcomm02/convergence.yaml", run_out, ["duration=14s"])
    u_ns2, u_emu = expectation(ns2, name)["value"], expectation(emu, name)["value"]
    assert close(u_emu, u_ns2), f"utilisation {u_emu:.3f} vs ns-2 {u_ns2:.3f}\n" + \
        _explain(ns2, emu)
    b_ns2, b_emu = window_wire_bytes(ns2, 10.0, 14.0), window_wire_bytes(emu, 10.0, 14.0)
    assert sorted(b_ns2) == sorted(b_emu) == [f"x{k}" for k in range(1, 6)]
    for fid in b_ns2:
        s_ns2 = b_ns2[fid] / sum(b_ns2.values())
        s_emu = b_emu[fid] / sum(b_emu.values())
        assert close(s_emu, s_ns2), (f"{fid}: share {s_emu:.3f} vs ns-2 {s_ns2:.3f} "
                                     f"(C/5 = 0.2)\n" + _explain(ns2, emu))
