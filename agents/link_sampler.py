"""Per-port link samples: from the engine's `stats` (CONTROL.md) or, in kernel router
mode, from the interfaces' netlink counters.

One row per emulated direction: `link` = "A->B", the direction from node A to
node B. Counters are cumulative; rate_bps/utilization are over the last interval.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xcplab_contract.columns import XCP_COLUMNS
from xcplab_contract.plan import Plan


@dataclass(frozen=True)
class PortDir:
    router: str
    port: str  # engine port name "router:ifname"
    ifname: str
    stage: str  # egress | ingress
    label: str  # "A->B"
    capacity_bps: int


def port_directions(plan: Plan, routers: set[str]) -> list[PortDir]:
    out = []
    for n in plan.routers:
        if n.name not in routers:
            continue
        for itf in n.interfaces:
            link = plan.link(itf.link)
            port = f"{n.name}:{itf.ifname}"
            eg = link.direction(n.name)
            out.append(PortDir(n.name, port, itf.ifname, "egress", f"{n.name}->{itf.peer}",
                               eg.capacity_bps))
            ing = link.direction(itf.peer)
            if ing.emulated_by == n.name and ing.stage == "ingress":
                out.append(PortDir(n.name, port, itf.ifname, "ingress",
                                   f"{itf.peer}->{n.name}", ing.capacity_bps))
    return out


# qdisc report key -> column (several spellings accepted: the report is the qdisc's own)
_XCP_KEYS = {
    "d": "xcp_d", "d_s": "xcp_d", "phi": "xcp_phi", "h": "xcp_h", "y": "xcp_y",
    "y_bps": "xcp_y", "q": "xcp_Q", "Q": "xcp_Q", "q_bytes": "xcp_Q", "xi_p": "xcp_xi_p",
    "xi_n": "xcp_xi_n", "pos_pool": "xcp_pos_pool", "r_pos": "xcp_pos_pool",
    "R_pos": "xcp_pos_pool", "neg_pool": "xcp_neg_pool", "r_neg": "xcp_neg_pool",
    "R_neg": "xcp_neg_pool",
}


def _flatten(prefix: str, obj: Any, out: dict[str, float]) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _flatten(f"{prefix}[{i}]", v, out)
    elif isinstance(obj, int | float) and not isinstance(obj, bool):
        out[prefix] = obj


def stage_measurement(key: str) -> str | None:
    """Which measurement a nested qdisc-report object belongs to, by its name."""
    k = key.lower()
    if "fair" in k:
        return "fairness"
    if k == "ixcp":
        return "ixcp"
    if "xcpi" in k or "xcp_i" in k or "virtual" in k or "estimat" in k:
        return "xcpi"
    return None


def stage_rows(qdisc: dict[str, Any] | None, base: dict[str, Any]
               ) -> dict[str, list[dict[str, Any]]]:
    """Long-form rows (key, value) for XCP-i / fairness state nested in a qdisc report."""
    out: dict[str, list[dict[str, Any]]] = {}
    rep = (qdisc or {}).get("xcp", qdisc or {})
    if not isinstance(rep, dict):
        return out
    for name, obj in rep.items():
        meas = stage_measurement(name)
        if meas is None or not isinstance(obj, dict | list):
            continue
        flat: dict[str, float] = {}
        _flatten(name, obj, flat)
        out.setdefault(meas, []).extend(dict(base, key=k, value=v) for k, v in flat.items())
    return out


def xcp_columns(qdisc: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = dict.fromkeys(XCP_COLUMNS, "")
    if not qdisc:
        return out
    rep = qdisc.get("xcp", qdisc)
    if not isinstance(rep, dict):
        return out
    for k, v in rep.items():
        col = _XCP_KEYS.get(k) or _XCP_KEYS.get(k.lower())
        if col and isinstance(v, int | float):
            out[col] = v
    return out


class RateTracker:
    """Cumulative byte counter -> bits/s over the last interval, per key."""

    def __init__(self) -> None:
        self._last: dict[Any, tuple[float, int]] = {}

    def rate(self, key: Any, t: float, total_bytes: int) -> float | str:
        prev = self._last.get(key)
        self._last[key] = (t, total_bytes)
        if prev is None or t <= prev[0]:
            return ""
        return max(0.0, (total_bytes - prev[1]) * 8.0 / (t - prev[0]))


def engine_rows(stats: dict[str, Any], dirs: list[PortDir], t_s: float,
                rates: RateTracker, extra: dict[str, list[dict[str, Any]]] | None = None
                ) -> list[dict[str, Any]]:
    """link rows; XCP-i/fairness stage state goes to `extra` (measurement -> rows)."""
    rows = []
    routers = stats.get("routers", {})
    for d in dirs:
        port = routers.get(d.router, {}).get("ports", {}).get(d.port)
        link = port.get(d.stage) if port else None
        if not link:  # no such port/stage in this engine's answer
            continue
        cfg = link.get("config", {})
        cap = cfg.get("capacity_bps", d.capacity_bps)
        drops = link.get("drops", {})
        pdrops = port.get("drops", {}) if d.stage == "egress" else {}
        out_bytes = int(link.get("out_bytes", 0))
        # the engine's own timestamp of the counters: our sampling jitter cancels out
        t_counter = stats["time_ns"] / 1e9 if "time_ns" in stats else t_s
        rate = rates.rate((d.port, d.stage), t_counter, out_bytes)
        q = link.get("queue", {})
        row = {"t_s": round(t_s, 6), "node": d.router, "port": d.port, "link": d.label,
               "capacity_bps": cap, "tx_bytes": out_bytes,
               "tx_packets": link.get("out_packets", 0), "rx_bytes": link.get("in_bytes", 0),
               "rx_packets": link.get("in_packets", 0), "rate_bps": rate,
               "utilization": (rate / cap) if rate != "" and cap else "",
               "queue_pkts": q.get("packets", 0), "queue_bytes": q.get("bytes", 0),
               "drops_queue": drops.get("queue", 0), "drops_loss": drops.get("loss", 0),
               "drops_ttl": pdrops.get("ttl", 0), "drops_noroute": pdrops.get("no_route", 0),
               "drops_malformed": pdrops.get("malformed", 0),
               "drops_link_down": drops.get("link_down", 0),
               "busy_ns": link.get("busy_ns", "")}
        row.update(xcp_columns(link.get("qdisc")))
        rows.append(row)
        if extra is not None:
            base = {"t_s": row["t_s"], "node": d.router, "port": d.port, "link": d.label}
            for meas, more in stage_rows(link.get("qdisc"), base).items():
                extra.setdefault(meas, []).extend(more)
    return rows


def kernel_rows(stats: dict[str, dict[str, dict[str, int]]], dirs: list[PortDir], t_s: float,
                rates: RateTracker) -> list[dict[str, Any]]:
    """stats: router -> ifname -> netlink IFLA_STATS64 dict. Egress rows only."""
    rows = []
    for d in dirs:
        if d.stage != "egress":
            continue
        s = stats.get(d.router, {}).get(d.ifname)
        if s is None:
            continue
        rate = rates.rate((d.port, "egress"), t_s, int(s["tx_bytes"]))
        util = rate / d.capacity_bps if isinstance(rate, float) and d.capacity_bps else ""
        row: dict[str, Any] = {
               "t_s": round(t_s, 6), "node": d.router, "port": d.port, "link": d.label,
               "capacity_bps": d.capacity_bps, "tx_bytes": s["tx_bytes"],
               "tx_packets": s["tx_packets"], "rx_bytes": s["rx_bytes"],
               "rx_packets": s["rx_packets"], "rate_bps": rate,
               "utilization": util,
               "queue_pkts": "", "queue_bytes": "", "drops_queue": s.get("tx_dropped", 0),
               "drops_loss": 0, "drops_ttl": "", "drops_noroute": "", "drops_malformed": "",
               "drops_link_down": ""}
        row.update(xcp_columns(None))
        rows.append(row)
    return rows
