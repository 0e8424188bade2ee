"""A small XCP/DropTail chain spec for the ns2 backend's tests, with holes to fill."""

from __future__ import annotations

BASE = """\
name: refuse
duration: DURATION
defaults:
  link: {capacity: 10Mbps, delay: 5ms, buffer: 1BDP}
nodes:
  s: {role: host}
  r1: {role: router, queue: QUEUE}
  r2: {role: router, queue: droptail}
  d: {role: host}
links:
  - {a: s, b: r1}
  - {a: r1, b: r2LOSS}
  - {a: r2, b: d}
flows:
  - FLOW
TIMELINE
"""


def spec(queue: str = "xcp", flow: str = "{id: f, proto: xcp, src: s, dst: d}",
         loss: str = "", timeline: str = "", duration: str = "2s") -> str:
    """s - r1 (QUEUE) - r2 (droptail) - d at 10 Mb/s, 5 ms, 1 BDP; one XCP flow."""
    return (BASE.replace("QUEUE", queue).replace("FLOW", flow).replace("LOSS", loss)
            .replace("TIMELINE", timeline).replace("DURATION", duration))
