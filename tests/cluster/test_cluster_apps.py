"""An app flow whose client and server are on two machines (pure; the run across the
namespace cluster is test_cluster_slow.py's): the server machine's agent reports its side
from its own stack's lines (agents/app_flows.ServerSides over a real StackdReader), and
the controller merges it into the client's one fct.csv row
(orchestrator/backends/cluster/apps.py)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from agents.app_flows import AppStacks, ServerSides, served_here
from agents.stackd_reader import StackdReader
from orchestrator.backends.cluster.apps import AppMerge, merge_row, split_app_flows
from orchestrator.plan.planner import make_plan
from orchestrator.spec import load_spec
from xcplab_contract.plan import Plan

ROOT = Path(__file__).resolve().parents[2]
HTTP = ROOT / "experiments" / "apps" / "http-over-xcp.yaml"


def _plan(client_on: str = "m2") -> Plan:
    plan = make_plan(load_spec(str(HTTP)), "apps")
    d = plan.to_dict()
    for n in d["nodes"]:
        n["machine"] = client_on if n["name"] in ("client", "r1") else "m1"
    return Plan.from_dict(d)


def _conn(f_port: int, src: str, byts: int, state: str = "established") -> dict[str, object]:
    return {"socket": f"{f_port}-{src}:55300", "local_port": f_port, "remote_addr": src,
            "remote_port": 55300, "bytes": byts, "bytes_received": 84, "retransmits": 1,
            "timeouts": 0, "state": state}


def test_the_server_machine_reports_its_side_from_its_stack(tmp_path: Path) -> None:
    plan = _plan()
    (f,) = plan.flows
    assert split_app_flows(plan) == {"web"} and split_app_flows(_plan("m1")) == set()
    assert served_here(plan, {"server", "r2"}) == [f] and served_here(plan, {"client"}) == []
    clock = [100.0]  # the agent's clock (a fake one: AgentRuntime.clock.now)
    apps = AppStacks(plan, {"server", "r2"}, None, str, tuple, tmp_path,  # type: ignore[arg-type]
                     now=lambda: clock[0])
    reader = apps.add_reader("server")  # on the agent's clock, as start_stacks makes it
    sides = ServerSides(apps, served_here(plan, {"server", "r2"}))
    assert [s["connections"] for s in sides.reports(0.1, 100.0)] == [0]
    assert sides.reports(0.2, 100.1) == []  # nothing changed: nothing sent
    reader.feed(json.dumps({"event": "interval", "data": {"streams": [
        _conn(f.port, f.src_addr, 1629), _conn(f.port, "10.9.9.9", 7)]}}))
    (side,) = sides.reports(0.3, 100.2)
    assert (side["bytes"], side["connections"], side["closed"]) == (1629, 1, False)
    clock[0] = 102.5  # the close is read at run time 2.5 (t0 = 100.0)
    reader.feed(json.dumps({"event": "closed",
                            "data": _conn(f.port, f.src_addr, 6831941, "closed")}))
    clock[0] = 104.0
    (side,) = sides.reports(4.0, clock[0])  # run time 4.0 is `now`
    assert (side["bytes"], side["retransmits"], side["closed"]) == (6831941, 1, True)
    # stamped with the agent's clock: exactly the run time of the close
    assert side["closed_t_s"] == 2.5, side
    # a reader on its own gets the monotonic clock
    assert StackdReader("h").now is time.monotonic
    (last,) = sides.final(6.0, lambda: clock[0], settle_s=3.0)
    assert last["final"] and last["closed"]


def test_the_controller_merges_the_client_row_with_the_server_side() -> None:
    row = {"t_s": 3.7, "flow": "web", "object": 0, "start_s": 0.5, "bytes": 84,
           "fct_s": 3.2, "status": "complete", "retransmits": 0, "timeouts": 0}
    side = {"type": "app_side", "flow": "web", "bytes": 6831941, "retransmits": 2,
            "timeouts": 1, "connections": 1, "closed": True, "closed_t_s": 3.9,
            "final": False}
    merged = merge_row(row, side)
    assert (merged["bytes"], merged["retransmits"], merged["timeouts"]) == (6832025, 2, 1)
    assert (merged["t_s"], merged["fct_s"], merged["status"]) == (3.9, 3.4, "complete")
    assert merge_row(row, {**side, "closed_t_s": 3.0})["fct_s"] == 3.2  # client ended later
    # the server's side still open at the end, or never reported: not complete
    assert merge_row(row, {**side, "closed": False, "final": True})["status"] == "incomplete"
    assert merge_row(row, None)["status"] == "incomplete"
    # the stream: the client's row waits for the server's close, other rows pass
    m = AppMerge({"web"})
    other = {"type": "rows", "measurement": "fct", "rows": [{**row, "flow": "x"}]}
    assert m.offer(other) == [other]
    flow_rows = {"type": "rows", "measurement": "flow", "rows": [{"flow": "web"}]}
    assert m.offer(flow_rows) == [flow_rows]
    assert m.offer({"type": "rows", "measurement": "fct", "rows": [row]}) == []
    assert m.offer({**side, "closed": False}) == []
    (out,) = m.offer(side)
    assert out["rows"][0]["bytes"] == 6832025 and m.flush() == []
    # a row after the side: merged at once; a row whose side never closes: at the end
    assert m.offer({"type": "rows", "measurement": "fct", "rows": [row]})[0]["rows"][0][
        "bytes"] == 6832025
    m2 = AppMerge({"web"})
    assert m2.offer({"type": "rows", "measurement": "fct", "rows": [row]}) == []
    (out,) = m2.flush()
    assert out["rows"][0]["status"] == "incomplete"
