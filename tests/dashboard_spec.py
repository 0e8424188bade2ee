"""The small run whose data reaches every panel of the overview dashboard: XCP-i routers
r1 and r3 (XCP controller state) at the edges of a DropTail cloud r2, so r3 tracks
upstream r1 with the oracle estimator (the `xcpi` series: estimate, truth, session),
one XCP and one kernel TCP flow through r1's XCP-TCP fairness dropper (the `fairness`
series), and a timeline (annotations). Shared by
tests/service/test_dashboards.py (every query) and tests/dashboards/ (the server)."""

from __future__ import annotations


def dashboard_spec(name: str, duration: str, timeline: list[str],
                   t1_start: str | None = None) -> str:
    """The spec text; `timeline` holds its events as flow-style YAML mappings."""
    start = f", start: {t1_start}" if t1_start else ""
    return f"""\
name: {name}
duration: {duration}
metrics_interval: 100ms
defaults:
  link: {{capacity: 50Mbps, delay: 2ms, buffer: 1BDP}}
nodes:
  s1: {{role: host}}
  s2: {{role: host}}
  r1: {{role: router, queue: {{kind: xcpi, estimator: oracle, tcp_fairness: true}}}}
  r2: {{role: router, queue: droptail}}
  r3: {{role: router, queue: {{kind: xcpi, estimator: oracle}}}}
  d1: {{role: host}}
  d2: {{role: host}}
links:
  - {{a: s1, b: r1}}
  - {{a: s2, b: r1}}
  - {{id: bn, a: r1, b: r2, capacity: 10Mbps, delay: 5ms, buffer: 20pkts}}
  - {{a: r2, b: r3}}
  - {{a: r3, b: d1}}
  - {{a: r3, b: d2}}
flows:
  - {{id: x1, proto: xcp, src: s1, dst: d1}}
  - {{id: t1, proto: tcp, cc: cubic, src: s2, dst: d2{start}}}
timeline:
""" + "".join(f"  - {e}\n" for e in timeline)
