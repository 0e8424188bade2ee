"""A plan as plain-text tables for people (`xcplab plan`)."""

from __future__ import annotations

from orchestrator.plan.trial import render_trial
from orchestrator.units import fmt_duration, fmt_rate, fmt_size
from xcplab_contract.plan import Direction, Link, Plan


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    out = [line.rstrip(), "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return out


def _buffer(d: Direction) -> str:
    q = d.queue
    if q.limit_packets:
        return f"{q.limit_packets}pkts"
    return fmt_size(q.limit_bytes)


def _loss(d: Direction) -> str:
    if d.loss.model == "none":
        return "-"
    if d.loss.model == "bernoulli":
        return f"{d.loss.p * 100:g}%"
    return f"GE p={d.loss.p:g} r={d.loss.r:g} (mean {d.loss.mean() * 100:.3g}%)"


def render(plan: Plan) -> str:
    out = [(f"experiment {plan.experiment}  run {plan.run_id} (tag {plan.run_tag})  "
           f"seed {plan.seed}  duration {fmt_duration(plan.duration_s)}  "
           f"interval {fmt_duration(plan.metrics_interval_s)}  scale {plan.scale:g}"), ""]
    if plan.trial is not None:
        out += render_trial(plan.trial)
    out.append("NODES")
    rows = []
    by_id: dict[str, Link] = {}
    for link in plan.links:  # plan.link() is a scan: the first link of an id, once
        by_id.setdefault(link.id, link)
    for n in plan.nodes:
        ifs = ", ".join(f"{i.ifname}={i.ipv4}" for i in n.interfaces)
        queue = ""
        if n.engine:
            queue = "/".join(sorted({by_id[p["link"]].direction(n.name).queue.kind
                                     for p in n.engine["ports"]}))
        rows.append([n.name, n.role, n.netns, queue, ifs])
    out += _table(["node", "role", "netns", "queue", "interfaces"], rows) + [""]
    out.append("LINK DIRECTIONS")
    rows = []
    for link in plan.links:
        for d in (link.a_to_b, link.b_to_a):
            rows.append([link.id, f"{d.src}->{d.dst}", fmt_rate(d.capacity_bps),
                         fmt_duration(d.delay_us / 1e6), _buffer(d),
                         fmt_size(d.bdp_bytes), d.queue.kind, _loss(d),
                         f"{d.port} {d.stage}", "up" if d.up else "DOWN"])
    out += _table(["link", "direction", "capacity", "delay", "buffer", "BDP", "queue", "loss",
                   "emulated at", "state"], rows) + [""]
    out.append("ROUTES (hosts)")
    rows = [[n.name, r.prefix, r.via, r.dev] for n in plan.hosts for r in n.routes]
    out += _table(["host", "prefix", "via", "dev"], rows) + [""]
    out.append("FLOWS")
    rows = []
    for f in plan.flows:
        until = fmt_duration(f.stop_s) if f.stop_s is not None else fmt_size(f.size_bytes or 0)
        rows.append([f.id, f.proto + (f"/{f.cc}" if f.cc else ""), f"{f.src}->{f.dst}",
                     f"{f.dst_addr}:{f.port}", f"{fmt_duration(f.start_s)}..{until}",
                     str(f.parallel), f.recovery if f.proto != "udp" else "-",
                     ("delayed" if f.delayed_ack else "every") if f.tool == "xcpperf" else "-",
                     fmt_rate(f.rate_bps) if f.rate_bps else "-",
                     fmt_duration(f.rtt_s), " ".join(f.path)])
    out += _table(["flow", "proto", "hosts", "to", "time", "P", "recovery", "ACKs", "rate",
                   "RTT", "path"],
                  rows) + [""]
    out.append("TIMELINE")
    rows = []
    for e in plan.timeline:
        detail = ", ".join(f"{k}={v}" for k, v in e.params.items())
        rows.append([fmt_duration(e.t_s), e.action, e.target, detail,
                     str(len(e.commands)) if e.commands else ""])
    out += _table(["t", "action", "target", "params", "cmds"], rows)
    return "\n".join(out)
