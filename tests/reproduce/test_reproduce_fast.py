"""Fast subset of the seed reproductions, part of `make test` (~2 min on 2 cores).

The same specs as the full runs, shortened with --set. A 10 s run still contains the
start-up transient that a 60 s run averages away (handshake, XCP's first feedback
interval, TCP's slow-start overshoot), so the steady-state checks get a window that
starts after it: `--set expect[N].window.start=...`. Only checks that hold reliably
at this length are asserted; each is the spec's own check read from summary.json.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from reproduce_helpers import expectation, fidelity_problems, need_tools, run_spec

pytestmark = pytest.mark.root
RUN_TIMEOUT_S = 150.0


def _assert_ok(summary: dict, name: str) -> None:
    e = expectation(summary, name)
    assert e["ok"], f"{e['check']}\nrun: {summary['_dir']}\nfidelity: {fidelity_problems(summary)}"


def test_fig2b_xcp_fills_the_bottleneck_without_steady_state_drops(tmp_path: Path) -> None:
    need_tools()
    s = run_spec("xcpi/fig2b-xcp.yaml", tmp_path, [
        "duration=10s", "expect[0].window={start: 2s}", "expect[1].window={start: 2s}"],
        RUN_TIMEOUT_S)
    assert s["status"] == "completed"
    _assert_ok(s, "XCP moves >= 95 % of capacity x time")
    drops = expectation(s, "no drops anywhere")
    # XCP drops nothing in steady state; an engine stall (late timers, recorded by the
    # fidelity check) bursts the link and may overflow the queue, so drops then only
    # count as a failure when the emulation was faithful.
    assert drops["ok"] or fidelity_problems(s), drops["check"]


def test_fig2a_tcp_keeps_the_bottleneck_busy(tmp_path: Path) -> None:
    need_tools()
    # NewReno's slow-start overshoot can end in a cwnd far below the BDP, and the
    # climb back at one segment per RTT takes up to ~6 s; the window starts after it.
    s = run_spec("xcpi/fig2a-tcp.yaml", tmp_path, [
        "duration=20s", "expect[0].window={start: 8s}"], RUN_TIMEOUT_S)
    assert s["status"] == "completed"
    _assert_ok(s, "TCP moves >= 85 % of capacity x time")
    assert s["flows"]["tcp"]["retransmits"] > 0, "NewReno through DropTail must see losses"


def test_convergence_shares_settle_after_each_arrival(tmp_path: Path) -> None:
    need_tools()
    s = run_spec("sigcomm02/convergence.yaml", tmp_path, ["duration=10s"], RUN_TIMEOUT_S)
    assert s["status"] == "completed"
    _assert_ok(s, "bottleneck utilisation after the first start-up")
    # Convergence to C/k within 1.5 s of each arrival is not reproduced (the spec says
    # why): the verdict must say so, never PASS, and a time must have been measured.
    for k in (2, 3, 4):
        e = expectation(s, f"x{k} converges before the next arrival")
        assert e["status"] == "not_reproduced" and e["ok"] is False, e["check"]
        assert "cannot evaluate" not in e["check"], e["check"]
    # every flow that started got a share, the latest one included
    for k in range(1, 6):
        assert s["flows"][f"x{k}"]["bytes"] > 0, f"x{k} moved nothing"


def test_fig2c_xcp_across_droptail_collapses_into_timeouts(tmp_path: Path) -> None:
    # The paper's Reno-based XCP sender (recovery: reno, rto_backoff: new_data,
    # xcp_feedback: new_acks in the spec: ns-2's XcpAgent) overshoots the DropTail
    # bottleneck its XCP routers cannot see, loses several packets per window and
    # waits for retransmission timeouts.
    need_tools()
    s = run_spec("xcpi/fig2c-xcp-legacy.yaml", tmp_path, ["duration=15s"], RUN_TIMEOUT_S)
    assert s["status"] == "completed"
    # The spec's first check states the paper's 0.233 and is marked not reproduced
    # (xcplab delivers 0.22-0.33); what this test keeps asserting is the collapse: at most
    # half of what a passing (b) delivers, 0.5 x 0.95 x 1424/1500 = 0.45 of capacity.
    paper = expectation(s, "XCP across a non-XCP bottleneck delivers about 0.233 of capacity")
    assert paper["status"] == "not_reproduced" and paper["value"] is not None, paper["check"]
    assert paper["value"] <= 0.45, f"{paper['check']}\nrun: {s['_dir']}"
    _assert_ok(s, "losses at the DropTail bottleneck")
    _assert_ok(s, "retransmission timeouts at the sender")
