"""A Topology as an ordinary xcplab spec (dict, then YAML with a schema header).

Every flow gets its own sender and receiver host (`<flow>s`, `<flow>d`) on
access links fast enough never to bind (100 Mb/s, 1 ms), so the router links
are the only constraints. The routers' queue kind is `defaults.router.queue.kind`
and the flows' protocol `defaults.flow.proto`: one `--set` each switches a whole
spec (e.g. `--set defaults.router.queue.kind=ixcp`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from orchestrator.topology.model import Topology

ACCESS = {"capacity": "100Mbps", "delay": "1ms"}


@dataclass(frozen=True)
class RunShape:
    """How a generated topology is run and judged."""

    queue: str = "xcp"
    proto: str = "xcp"
    duration_s: float = 15.0
    metrics_interval_s: float = 0.1
    maxmin_tolerance: float = 0.1
    settle_s: float = 5.0


def _s(x: float) -> str:
    return f"{x:g}s"


def _mbps(bps: int) -> str:
    return f"{bps / 1e6:g}Mbps"


def host_names(flow_id: str) -> tuple[str, str]:
    return f"{flow_id}s", f"{flow_id}d"


def to_spec(t: Topology, run: RunShape) -> dict[str, Any]:
    nodes: dict[str, Any] = {r: {"role": "router"} for r in t.routers}
    links: list[dict[str, Any]] = [
        {"a": link.a, "b": link.b, "capacity": _mbps(link.capacity_bps),
         "delay": f"{link.delay_s * 1000:g}ms"} for link in t.links]
    flows: list[dict[str, Any]] = []
    for f in t.flows:
        src, dst = host_names(f.id)
        nodes[src] = {"role": "host"}
        nodes[dst] = {"role": "host"}
        links += [{"a": src, "b": f.src}, {"a": f.dst, "b": dst}]
        entry: dict[str, Any] = {"id": f.id, "src": src, "dst": dst}
        if f.start_s:
            entry["start"] = _s(f.start_s)
        if f.stop_s is not None:
            entry["stop"] = _s(f.stop_s)
        flows.append(entry)
    return {
        "name": t.name,
        "description": t.description,
        "duration": _s(run.duration_s),
        "metrics_interval": f"{run.metrics_interval_s * 1000:g}ms",
        "defaults": {"link": dict(ACCESS), "router": {"queue": {"kind": run.queue}},
                     "flow": {"proto": run.proto}},
        "nodes": nodes,
        "links": links,
        "flows": flows,
        "expect": [{"name": "distance from max-min", "metric": "maxmin_error", "op": "<=",
                    "value": run.maxmin_tolerance, "settle": _s(run.settle_s)}],
    }


def to_yaml(spec: dict[str, Any], header: str = "") -> str:
    """YAML under a comment header; short mappings inline, as specs are written."""
    lines = [f"# {h}" if h else "#" for h in header.splitlines()]

    class _Flow(yaml.SafeDumper):
        pass

    def _inline(dumper: yaml.SafeDumper, data: dict[str, Any]) -> yaml.Node:
        flow = all(not isinstance(v, (dict, list)) for v in data.values())
        return dumper.represent_mapping("tag:yaml.org,2002:map", data, flow_style=flow)

    _Flow.add_representer(dict, _inline)
    body = yaml.dump(spec, Dumper=_Flow, sort_keys=False, width=100)
    return "\n".join(lines) + "\n" + body
