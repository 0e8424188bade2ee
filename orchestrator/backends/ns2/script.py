"""The ns-2.35 Tcl script of a plan, and the index that names what its samples refer to.

Pure: `write_script(plan, samples_file)` returns the script text and the mapping
(`mapping.json`). The script builds one simplex link per plan direction (so each
direction keeps its own capacity, delay, queue and loss), one agent pair per flow
stream, and samples every `metrics_interval_s`:

    L t dir barrivals parrivals bdepartures pdepartures pdrops qbytes qpkts lossdrops
    F t flow stream ack cwnd t_srtt nrexmitpack nrexmit tcpTick

Queue monitors count at the queue's input, output and drop points; losses are
applied after the link's delay line (ns-2 `link-lossmodel`), as the engine applies
them at the link's far end, so a lost packet has used the capacity. Lost packets go
to their own counter, not the queue's drops.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from orchestrator.backends.ns2.mapping import (
    RECEIVER_WINDOW_PACKETS,
    WIRE_BYTES,
    agent_for,
    ns2_queue,
    ns2_queue_limit,
    ns2_seed,
    queue_limit_packets,
)
from xcplab_contract.plan import Direction, Plan


def _num(v: float) -> str:
    return f"{v:.9g}"


def _key(router: str, port: str, stage: str) -> tuple[str, str, str]:
    return (router, port, stage)


def _loss_changed(plan: Plan) -> set[tuple[str, str, str]]:
    """Directions whose loss a timeline event changes: they get an error model from t = 0."""
    return {_key(c.router, c.request["port"], c.request["direction"])
            for e in plan.timeline if e.action == "set_link" for c in e.commands
            if "loss" in c.request}


def _timeline(plan: Plan, directions: list[dict[str, Any]],
              by_key: dict[tuple[str, str, str], Direction]) -> tuple[list[str], list[Any]]:
    """`$ns at` lines replaying the plan's set_link events on the directions they name
    (capacity: the link's bandwidth_ and, unless the queue has its own capacity, the XCP
    queue's; delay: delay_; buffer: queue-limit in packets; Bernoulli loss: the error
    model's rate_), and the mapping.json entries saying so."""
    index = {_key(d["node"], d["port"], d["stage"]): d for d in directions}
    lines: list[str] = []
    record: list[dict[str, Any]] = []
    for e in plan.timeline:
        if e.action != "set_link":
            continue
        for c in e.commands:
            req = c.request
            k = _key(c.router, req["port"], req["direction"])
            entry, d = index[k], by_key[k]
            a, b = entry["tcl_nodes"]
            link, queue = f"[$ns link {a} {b}]", f"[[$ns link {a} {b}] queue]"
            cmds = []
            if "capacity_bps" in req:
                cmds.append(f"[{link} link] set bandwidth_ {req['capacity_bps']}")
                if ns2_queue(d.queue).follows_link(d.queue.params):
                    cmds.append(f"{queue} set-link-capacity {req['capacity_bps']}")
            if "delay_us" in req:
                cmds.append(f"[{link} link] set delay_ {_num(req['delay_us'] / 1e6)}")
            if "limit_packets" in req or "limit_bytes" in req:
                limit = ns2_queue_limit(replace(d, queue=replace(
                    d.queue, limit_packets=req.get("limit_packets", 0),
                    limit_bytes=req.get("limit_bytes", 0))))
                cmds.append(f"$ns queue-limit {a} {b} {limit}")
            if "loss" in req:
                p = req["loss"].get("p", 0.0) if req["loss"].get("model") == "bernoulli" else 0.0
                cmds.append(f"$em({entry['index']}) set rate_ {_num(p)}")
            for cmd in cmds:
                lines.append(f"$ns at {_num(e.t_s)} {{{cmd}}} ;# set_link {entry['link']}")
            record.append({"t_s": e.t_s, "link": entry["link"], "change": {
                k2: v for k2, v in req.items() if k2 not in ("cmd", "router", "port",
                                                            "direction")},
                "ns2": cmds})
    return lines, record


def write_script(plan: Plan, samples_file: str) -> tuple[str, dict[str, Any]]:
    node_ix = {n.name: i for i, n in enumerate(plan.nodes)}
    loss_changes = _loss_changed(plan)
    by_key: dict[tuple[str, str, str], Direction] = {}
    lines = [
        f"# ns-2.35 script of xcplab run {plan.run_id} (experiment {plan.experiment}),",
        "# written from plan.json by orchestrator/backends/ns2; mapping.json says how.",
        "set ns [new Simulator]",
        "global defaultRNG",
        f"$defaultRNG seed {ns2_seed(plan.seed)}",
        f"Agent/TCP set window_ {RECEIVER_WINDOW_PACKETS}",
        f"set out [open {{{samples_file}}} w]",
    ]
    for n in plan.nodes:
        lines.append(f"set n({node_ix[n.name]}) [$ns node] ;# {n.name}")

    directions: list[dict[str, Any]] = []
    for link in plan.links:
        for side, d in (("a_to_b", link.a_to_b), ("b_to_a", link.b_to_a)):
            i = len(directions)
            a, b = f"$n({node_ix[d.src]})", f"$n({node_ix[d.dst]})"
            limit = queue_limit_packets(d)
            qlim = ns2_queue_limit(d)
            ns = ns2_queue(d.queue)  # what the kind's model says it is in ns-2
            entry: dict[str, Any] = {
                "index": i, "link": f"{d.src}->{d.dst}", "link_id": link.id, "side": side,
                "node": d.emulated_by, "port": d.port, "stage": d.stage,
                "tcl_nodes": [a, b], "capacity_bps": d.capacity_bps,
                "delay_s": d.delay_us / 1e6, "queue": ns.cls, "kind": d.queue.kind,
                "limit_packets": limit, "qlim_": qlim, "loss": d.loss.to_engine()}
            lines.append(f"$ns simplex-link {a} {b} {d.capacity_bps} {_num(d.delay_us / 1e6)} "
                         f"{ns.cls} ;# {d.src}->{d.dst}")
            lines.append(f"$ns queue-limit {a} {b} {qlim}")
            q = f"[[$ns link {a} {b}] queue]"
            cap = ns.capacity(d.queue.params, d.capacity_bps)
            if cap is not None:
                lines.append(f"{q} set-link-capacity {cap}")
                entry[d.queue.kind] = {"set-link-capacity": cap, **ns.fixed}
            if ns.variables:
                settings = ns.settings(d.queue.params)
                for var, value in settings.items():
                    lines.append(f"{q} set {var} {value}")
                entry[d.queue.kind] = settings
            lines.append(f"set qm({i}) [new QueueMonitor]")
            lines.append(f"[$ns link {a} {b}] attach-monitors [new SnoopQueue/In] "
                         f"[new SnoopQueue/Out] [new SnoopQueue/Drop] $qm({i})")
            by_key[_key(d.emulated_by, d.port, d.stage)] = d
            p0 = d.loss.p if d.loss.model == "bernoulli" else 0.0
            if p0 > 0 or _key(d.emulated_by, d.port, d.stage) in loss_changes:
                lines += [
                    f"set em({i}) [new ErrorModel]",
                    f"$em({i}) unit pkt",
                    f"$em({i}) set rate_ {_num(p0)}",
                    f"$em({i}) ranvar [new RandomVariable/Uniform]",
                    f"$ns link-lossmodel $em({i}) {a} {b}",
                    f"set lm({i}) [new QueueMonitor]",
                    f"set ls({i}) [new SnoopQueue/Drop]",
                    f"$ls({i}) set-monitor $lm({i})",
                    f"$ls({i}) target [$ns set nullAgent_]",
                    f"$em({i}) drop-target $ls({i})",
                ]
                entry["error_model"] = {"ErrorModel": "unit pkt", "rate_": p0,
                                        "where": "after the delay line (link-lossmodel)"}
            directions.append(entry)

    flows: list[dict[str, Any]] = []
    for fi, f in enumerate(plan.flows):
        amap = agent_for(f)
        streams = []
        for s in range(1, f.parallel + 1):
            t, k = f"tcp({fi},{s})", f"sink({fi},{s})"
            lines += [
                f"set {t} [new {amap.agent}] ;# flow {f.id} stream {s}",
                f"${t} set packetSize_ {amap.payload_bytes}",
                f"${t} set fid_ {fi}",
            ]
            if amap.window_option is not None:
                lines.append(f"${t} set windowOption_ {amap.window_option}")
            if amap.ts_reset_rto:  # the flow's rto_backoff: sample (ns-2's default: new_data)
                lines.append(f"${t} set ts_resetRTO_ true")
            lines += [
                f"$ns attach-agent $n({node_ix[f.src]}) ${t}",
                f"set {k} [new {amap.sink}]",
                f"$ns attach-agent $n({node_ix[f.dst]}) ${k}",
                f"$ns connect ${t} ${k}",
                f"set ftp({fi},{s}) [${t} attach-app FTP]",
            ]
            per_stream = None if f.size_bytes is None else -(-f.size_bytes // f.parallel)
            start = "start" if per_stream is None else f"send {per_stream}"
            lines.append(f"$ns at {_num(f.start_s)} \"$ftp({fi},{s}) {start}\"")
            if f.stop_s is not None and f.stop_s < plan.duration_s:
                lines.append(f"$ns at {_num(f.stop_s)} \"$ftp({fi},{s}) stop\"")
            streams.append(s)
        flows.append({"index": fi, "id": f.id, "proto": f.proto, "src": f.src, "dst": f.dst,
                      "start_s": f.start_s, "stop_s": f.stop_s, "streams": streams,
                      **amap.to_dict()})

    timeline_lines, timeline = _timeline(plan, directions, by_key)
    lines += timeline_lines
    n_samples = max(1, round(plan.duration_s / plan.metrics_interval_s))
    lines += _sampler(directions, flows, plan.metrics_interval_s, n_samples)
    lines += [
        "proc finish {} {",
        "    global out",
        "    close $out",
        "    exit 0",
        "}",
        f"$ns at {_num(plan.metrics_interval_s)} \"sample 1\"",
        f"$ns at {_num(n_samples * plan.metrics_interval_s + 1e-6)} \"finish\"",
        "$ns run",
    ]
    mapping = {
        "simulator": "ns-2.35",
        "seed": {"plan": plan.seed, "ns2_defaultRNG": ns2_seed(plan.seed)},
        "wire_packet_bytes": WIRE_BYTES,
        "receiver_window_packets": RECEIVER_WINDOW_PACKETS,
        "routing": "ns-2 static (fewest hops; every flow's plan route is the only such path)",
        "metrics_interval_s": plan.metrics_interval_s,
        "samples": n_samples,
        "nodes": {n.name: node_ix[n.name] for n in plan.nodes},
        "directions": directions,
        "flows": flows,
        "timeline": timeline,
    }
    return "\n".join(lines) + "\n", mapping


def _sampler(directions: list[dict[str, Any]], flows: list[dict[str, Any]], dt: float,
             n: int) -> list[str]:
    lines = [
        "proc sample {k} {",
        "    global ns out qm lm tcp",
        f"    set t [format %.6f [expr {{$k * {_num(dt)}}}]]",
    ]
    for d in directions:
        i = d["index"]
        loss = f"[$lm({i}) set pdrops_]" if "error_model" in d else "0"
        lines.append(
            f"    puts $out \"L $t {i} [$qm({i}) set barrivals_] [$qm({i}) set parrivals_] "
            f"[$qm({i}) set bdepartures_] [$qm({i}) set pdepartures_] [$qm({i}) set pdrops_] "
            f"[$qm({i}) set size_] [$qm({i}) set pkts_] {loss}\"")
    for f in flows:
        for s in f["streams"]:
            t = f"$tcp({f['index']},{s})"
            lines.append(
                f"    puts $out \"F $t {f['index']} {s} [{t} set ack_] [{t} set cwnd_] "
                f"[{t} set srtt_] [{t} set nrexmitpack_] [{t} set nrexmit_] "
                f"[{t} set tcpTick_]\"")
    lines += [
        f"    if {{$k < {n}}} {{",
        f"        $ns at [expr {{($k + 1) * {_num(dt)}}}] \"sample [expr {{$k + 1}}]\"",
        "    }",
        "}",
    ]
    return lines
