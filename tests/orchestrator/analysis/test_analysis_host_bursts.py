"""The host-burst rule (analysis/host_procs.judge_host_bursts) against the buffers a
run's timeline changes, the host_nice the run used, and per-thread waits."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest

from orchestrator.analysis.fidelity import Thresholds
from orchestrator.analysis.host_procs import (
    LONGEST_THREAD,
    THREADS_SUMMED,
    host_nice_said,
    host_stats,
    judge_host_bursts,
)
from orchestrator.analysis.run_context import RunContext
from orchestrator.analysis.summary import build_summary
from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec_text

# xcpperf flows over a 20 Mb/s core of 100 packets (150 KB); the timeline cuts r1->r2
# to 10 packets (15 KB) at 12 s, and both directions to 0.5 BDP (35 KB) at 25 s
SPEC = """
name: burst-buffer
duration: 30s
defaults:
  link: {capacity: 100Mbps, delay: 2ms}
  router: {queue: droptail}
  flow: {proto: xcp}
nodes: {a: {role: host}, r1: {role: router}, r2: {role: router}, b: {role: host}}
links:
  - {a: a, b: r1}
  - {id: core, a: r1, b: r2, capacity: 20Mbps, delay: 10ms, buffer: 100pkts}
  - {a: r2, b: b}
flows:
  - {id: f1, src: a, dst: b, stop: STOP}
timeline:
  - {at: 12s, set_link: {link: core, direction: a_to_b, buffer: 10pkts}}
  - {at: 25s, set_link: {link: core, buffer: 0.5BDP}}
"""


def _plan(stop: str = "30s") -> dict[str, Any]:
    """plan.json as the planner writes it (not a hand-made imitation of its events)."""
    plan = make_plan(load_spec_text(SPEC.replace("STOP", stop), "burst-buffer.yaml", []),
                     "burst-buffer-1")
    return dict(json.loads(plan.to_json()))


def _judge(ctx: RunContext) -> tuple[list[str], list[str]]:
    """f1 at 8 of its 10 Mb/s max-min rate, its client and server each waiting 15 % of
    the time over a 60 ms RTT: 1 MB/s x 30 % x 60 ms = 18 KB of bursts per round trip."""
    b = ctx.buffers_bytes()
    return judge_host_bursts(
        {"f1.client": {"wait_fraction": 0.15}, "f1.server": {"wait_fraction": 0.15}},
        {"f1": {"throughput_mbps": 8.0, "maxmin_mbps": 10.0}},
        {"f1": ctx.flow_path("f1")}, b.bytes, {"r1->r2": 0.4}, {"f1": 0.06},
        tolerance=Thresholds().rate_tolerance, buffer_notes=b.notes,
        unknown_buffers=b.unknown)


def test_a_buffer_the_timeline_cuts_while_the_flow_runs_is_judged_at_its_smallest():
    # Before: the planner's set_link params (limit_packets/limit_bytes) were not seen as
    # a buffer change, so r1->r2 was judged against its first 150 KB, which holds 18 KB
    ctx = RunContext(plan=_plan())
    b = ctx.buffers_bytes()
    assert b.bytes["r1->r2"] == 15_000.0 and not b.unknown
    assert b.notes["r1->r2"] == ("the smallest while its flows ran; the timeline sets "
                                 "150.0 KB from 0 s, 15.0 KB from 12 s, 35.0 KB from 25 s")
    found, warned = _judge(ctx)
    assert found == [
        "hosts: r1->r2: its flows' tools waited for a CPU up to 18.0 KB of bursts per round "
        "trip together (1.20 times its 15.0 KB buffer (the smallest while its flows ran; the "
        "timeline sets 150.0 KB from 0 s, 15.0 KB from 12 s, 35.0 KB from 25 s); the worst, "
        "f1, 30.0% of the time over a 60 ms RTT), and flows fell short of their max-min rate "
        "(f1 8 of its 10 Mb/s): the waits could have moved the result (the run did not "
        "record the tools' host_nice (the agent's default: 0 before 20b2d03, -15 since)). "
        "Rerun on a quieter machine, or with a lower host_nice (down to -20)"], found
    assert warned == []


def test_a_buffer_cut_after_its_flows_stopped_is_not_the_one_they_met():
    ctx = RunContext(plan=_plan(stop="10s"))  # f1 stops before the 12 s cut
    assert ctx.buffers_bytes().bytes["r1->r2"] == 150_000.0
    assert _judge(ctx) == ([], [])


def test_a_buffer_change_the_plan_does_not_give_for_a_direction_is_said_not_skipped():
    # the 25 s change for both directions without its control commands: its params are
    # one side's, so r1->r2's limit from 25 s is not known, while f1 ran
    plan = _plan()
    (ev,) = [e for e in plan["timeline"] if e["action"] == "set_link" and e["t_s"] == 25.0]
    ev["commands"] = []
    ctx = RunContext(plan=plan)
    assert ctx.buffers_bytes().unknown == {
        "r1->r2": "the timeline's set_link at 25 s does not give this direction's new limit",
        "r2->r1": "the timeline's set_link at 25 s does not give this direction's new limit"}
    found, warned = _judge(ctx)
    assert found == [] and warned == [
        "hosts: r1->r2: flows fell short of their max-min rate (f1 8 of its 10 Mb/s), and its "
        "flows' tools waited for a CPU (up to 18.0 KB of bursts per round trip together), but "
        "its buffer while they ran is not known (the timeline's set_link at 25 s does not "
        "give this direction's new limit): the host-burst check cannot judge this "
        "direction"], warned
    # the one direction a single-sided change names is read from its params alone
    ev["params"]["direction"] = "a_to_b"
    assert RunContext(plan=plan).buffers_bytes().bytes["r1->r2"] == 15_000.0


def test_host_messages_name_the_nice_the_run_used_not_the_default(make_run):
    # the fidelity suite's burst case (21.6 KB against a 12 KB buffer, the link at 0.88,
    # f1's tools waiting 22.5 %), run at host_nice 0 as the agent's apply reply records
    # it: the problem and the wait warning say 0 (they said "default -15" whatever the run)
    run = make_run(sender_wait_per_s=0.15, sender_cpu_per_s=0.05, buffer_bytes=12000)
    s = build_summary(run, status="completed", timings={"run_s": 10.0},
                      extra={"backend_options": {"host_nice": "0"}, "deploy": {"host_nice": 0}})
    said = [m for m in s["fidelity"]["problems"] + s["warnings"] if m.startswith("hosts:")]
    assert len(said) == 2 and all("(the tools ran at host_nice 0)" in m for m in said) and \
        not any("-15" in m for m in said), said


def test_the_runs_nice_is_read_from_what_its_agents_replied_then_from_its_options():
    assert host_nice_said({"deploy": {"host_nice": -15}}) == "the tools ran at host_nice -15"
    # a cluster run: each machine's agent replied
    assert host_nice_said({"deploy": {"machines": {"m1": {"host_nice": -5},
                                                   "m2": {"host_nice": -5}}}}) == \
        "the tools ran at host_nice -5"
    # runs recorded before the agent replied it: the option given, else said unknown
    assert host_nice_said({"backend_options": {"host_nice": "-15"}, "deploy": {}}) == \
        "the run was given host_nice -15"
    assert host_nice_said({"backend_options": {}, "deploy": {"engines": []}}) == (
        "the run did not record the tools' host_nice (the agent's default: 0 before "
        "20b2d03, -15 since)")


def _procs(per_thread: bool, client_threads: int = 2, thread_wait: float = 0.047,
           ) -> pd.DataFrame:
    """procs.csv of hstcp/buffer-sweep's 4 flows (test_analysis_fidelity._sweep_point),
    sampled every 100 ms for 10 s: each client has `client_threads` threads, each runnable
    but waiting `thread_wait` of the time, all at the same time; servers never wait."""
    rows = []
    for i in range(101):
        t = round(i * 0.1, 3)
        for f in range(1, 5):
            for role, n in (("client", client_threads), ("server", 1)):
                w = thread_wait * t if role == "client" else 0.0
                rows.append({"t_s": t, "proc": f"f{f}.{role}", "flow": f"f{f}", "kind": role,
                             "tool": "xcpperf", "pid": 100 + f, "cpu_s": 0.2 * t,
                             "sched_wait_s": n * w, "sched_slices": int(2000 * t),
                             "sched_wait_thread_s": w if per_thread else float("nan")})
    return pd.DataFrame(rows)


def _sweep(st: dict[str, dict[str, Any]]) -> list[str]:
    """The 4 flows at 9.8 of their 11.9 Mb/s over r1->r2's 12.5 KB, RTT 29.5 ms."""
    flows = {f"f{i}": {"throughput_mbps": 9.8, "maxmin_mbps": 11.866} for i in range(1, 5)}
    return judge_host_bursts(st, flows, {f: ["h", "r1", "r2", "d"] for f in flows},
                             {"r1->r2": 12_500.0}, {"r1->r2": 0.784},
                             {f: 0.0295 for f in flows},
                             tolerance=Thresholds().rate_tolerance)[0]


def test_threads_waiting_at_the_same_time_delay_a_tool_once():
    # two threads of each client waiting 4.7 % of the time together: the tool was held
    # 4.7 %, 4 x 1.225 MB/s x 4.7 % x 29.5 ms = 6.8 KB of bursts, 0.54 of the 12.5 KB
    # buffer. Summed per process (before) it was 9.4 %, 13.6 KB, 1.09 buffers: unfaithful
    st = host_stats(_procs(per_thread=True))
    assert st["f1.client"]["wait_fraction"] == pytest.approx(0.047)
    assert st["f1.client"]["wait_of"] == LONGEST_THREAD
    assert _sweep(st) == []
    # the same with one thread each waiting 9.4 %: the waits that do overflow it
    found = _sweep(host_stats(_procs(per_thread=True, client_threads=1, thread_wait=0.094)))
    assert len(found) == 1 and "(1.09 times its 12.5 KB buffer" in found[0], found


def test_runs_recorded_without_per_thread_waits_use_the_sum():
    # older procs.csv (no sched_wait_thread_s): the threads' sum, an upper bound of the
    # longest thread's wait, so a problem is not missed (those tools were single-threaded:
    # the sum was the one thread's); wait_of says which figure it is
    st = host_stats(_procs(per_thread=False))
    assert st["f1.client"]["wait_fraction"] == pytest.approx(0.094)
    assert st["f1.client"]["wait_of"] == THREADS_SUMMED
    assert len(_sweep(st)) == 1
