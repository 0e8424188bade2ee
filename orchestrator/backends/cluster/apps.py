"""App flows whose client and server are on two machines: one fct.csv row from both sides.

Each machine's agent reads only its own hosts' socket stacks (agents/app_flows.py), as
it would on real machines: the client's agent writes the flow's metrics/fct.csv row from
the client's side (its exit, status, the bytes its connections moved); the server's agent
streams the server's side into flow.csv like any stream and sends `app_side` messages
(its bytes, retransmits, timeouts, connections, whether all closed and when). This
merges them before the runner sees the row, so fct.csv and the summary's `apps` mean
what they mean on one machine:

- bytes, retransmits, timeouts: the client's side + the server's side (on one machine
  the agent sums the two hosts' connections the same way);
- a complete flow ends at the later of the client's end and the server's last close
  (one machine: the sampling pass that saw both closed, so up to an interval later);
  a server side still open at the end of the run makes it `incomplete`, as the client
  side still open does on one machine.

A client row is held until the server side has reported its connections closed (or its
final report); rows still held when every machine is done are released with what came.
"""

from __future__ import annotations

import threading
from typing import Any

from xcplab_contract.plan import Plan


def split_app_flows(plan: Plan) -> set[str]:
    """App flows whose client and server hosts are on different machines."""
    where = {n.name: n.machine for n in plan.nodes}
    return {f.id for f in plan.flows if f.tool == "app" and where[f.src] != where[f.dst]}


def merge_row(row: dict[str, Any], side: dict[str, Any] | None) -> dict[str, Any]:
    """The client's fct row with the server's side added (module doc)."""
    out = dict(row)
    if side is None:  # the server's agent never reported: its side unknown, not zero
        if out.get("status") == "complete":
            out.update(status="incomplete", fct_s="")
        return out
    for key in ("bytes", "retransmits", "timeouts"):
        out[key] = int(out.get(key) or 0) + int(side.get(key) or 0)
    if out.get("status") != "complete":
        return out
    if not (side.get("connections") and side.get("closed")):
        out.update(status="incomplete", fct_s="")
        return out
    done = max(float(out["t_s"]), float(side.get("closed_t_s") or 0.0))
    out.update(t_s=round(done, 6), fct_s=round(done - float(out["start_s"]), 6))
    return out


class AppMerge:
    """Thread-safe: every machine's pump offers its messages."""

    def __init__(self, flows: set[str]) -> None:
        self.flows = flows
        self.sides: dict[str, dict[str, Any]] = {}
        self.held: dict[str, list[dict[str, Any]]] = {}
        self.lock = threading.Lock()

    @staticmethod
    def _ready(side: dict[str, Any] | None) -> bool:
        return side is not None and bool(side.get("final") or (side.get("connections")
                                                                and side.get("closed")))

    def offer(self, msg: dict[str, Any]) -> list[dict[str, Any]]:
        """The messages to pass on now in place of `msg`."""
        if msg.get("type") == "app_side":
            fid = str(msg.get("flow"))
            with self.lock:
                self.sides[fid] = msg
                if not self._ready(msg) or fid not in self.held:
                    return []
                rows = [merge_row(r, msg) for r in self.held.pop(fid)]
            return [{"type": "rows", "measurement": "fct", "rows": rows}]
        if msg.get("type") != "rows" or msg.get("measurement") != "fct" or not self.flows:
            return [msg]
        now, out = [], []
        with self.lock:
            for r in msg["rows"]:
                fid = str(r.get("flow"))
                if fid not in self.flows:
                    out.append(r)
                elif self._ready(self.sides.get(fid)):
                    now.append(merge_row(r, self.sides[fid]))
                else:
                    self.held.setdefault(fid, []).append(r)
        rows = out + now
        return [{**msg, "rows": rows}] if rows else []

    def flush(self) -> list[dict[str, Any]]:
        """Rows still held (every machine is done): merged with what their server sent."""
        with self.lock:
            rows = [merge_row(r, self.sides.get(fid))
                    for fid, held in self.held.items() for r in held]
            self.held.clear()
        return [{"type": "rows", "measurement": "fct", "rows": rows}] if rows else []
