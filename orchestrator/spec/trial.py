"""Expand a spec's `topology:`, `deployment:` and `traffic:` into ordinary data.

Runs on the YAML data after `--set` overrides and before validation, so sweeps over
`deployment.fraction` or `topology.seed` are plain overrides, and every generated
node, link and flow is then validated, resolved and bounded like a written one:

1. `topology:` draws a router graph (orchestrator.topology.generators / graphml),
   gives each router-router link its tier's rule, hangs `hosts_per_edge` hosts
   (h1, h2, ...) off every edge router, and appends the routers, hosts and links to
   `nodes` and `links` (written nodes and links stay: they may attach to generated
   routers).
2. `deployment:` ranks the routers of the resulting graph (generated or written:
   orchestrator.topology.deployment) and writes `queue: <protocol>` on the chosen
   ones; a router whose queue is written by hand is an error (one source per queue).
3. `traffic:` draws host pairs from a matrix (orchestrator.topology.traffic) and
   appends flows t1, t2, ...; `traffic.web:` draws sessions of short flows
   (orchestrator.topology.web) and appends one flow w1, w2, ... with `objects:` per
   (server, client) pair.

Problems point at the section's key (`FILE:LINE: topology.file: ...`); a generated
node, link or flow carries the line of the section that made it.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import networkx as nx
from pydantic import BaseModel, ValidationError, create_model

from orchestrator import units
from orchestrator.spec import bounds
from orchestrator.spec.loader import Lines, PathT
from orchestrator.spec.problems import from_validation_error
from orchestrator.spec.queues import DEFAULT_KIND
from orchestrator.spec.trial_models import (
    BarabasiAlbertTopo,
    DumbbellsTopo,
    GraphMLTopo,
    LinkRule,
    RTrial,
    TiersTopo,
    TopologySpec,
    TrialSections,
    WaxmanTopo,
    WebSpec,
)
from orchestrator.topology import deployment, generators, graphml, traffic, web
from xcplab_contract.errors import SpecError, SpecProblem

# Built-in link rules per tier (each key overridable in topology.links.<tier>).
RULES: dict[str, dict[str, float]] = {
    "core": {"capacity": 20e6, "delay": 0.010},
    "aggregation": {"capacity": 20e6, "delay": 0.005},
    "edge": {"capacity": 10e6, "delay": 0.002},
    "access": {"capacity": 100e6, "delay": 0.001},
}


def _seed(section: int | None, data: dict[str, Any]) -> int:
    if section is not None:
        return section
    s = data.get("seed", 1)
    return s if isinstance(s, int) and not isinstance(s, bool) and s >= 0 else 1


def _router_count(t: Any) -> int:
    if isinstance(t, TiersTopo):
        return t.core * (1 + t.aggregation * (1 + t.edge))
    if isinstance(t, DumbbellsTopo):
        return 2 + 2 * t.dumbbells
    return int(getattr(t, "routers", 0))


class _Expander:
    def __init__(self, data: dict[str, Any], lines: Lines, file: str) -> None:
        self.data = data
        self.lines = lines
        self.file = file
        self.problems: list[SpecProblem] = []
        self.record: dict[str, Any] = {}
        self.graph: nx.Graph | None = None  # the generated routers, with tier/domain

    def bad(self, path: PathT, reason: str) -> None:
        self.problems.append(self.lines.problem(path, reason))

    def _line(self, key: str) -> int | None:
        return self.lines.line((key,))

    # -- topology ------------------------------------------------------------
    def _graph(self, t: Any, rng: random.Random) -> nx.Graph | None:
        if isinstance(t, TiersTopo):
            return generators.tiers(rng, t.core, t.aggregation, t.edge, t.redundancy)
        if isinstance(t, DumbbellsTopo):
            return generators.dumbbells(t.dumbbells)
        if isinstance(t, GraphMLTopo):
            return self._graphml(t)
        edge = t.edge_routers if t.edge_routers is not None else (t.routers + 1) // 2
        if edge > t.routers:
            self.bad(("topology", "edge_routers"), f"{edge} edge routers of {t.routers} "
                     "routers; at most all of them")
            return None
        if isinstance(t, WaxmanTopo):
            return generators.waxman(rng, t.routers, t.alpha, t.beta, edge)
        if t.degree >= t.routers:
            self.bad(("topology", "degree"), f"degree {t.degree} needs more than "
                     f"{t.degree} routers (routers: {t.routers})")
            return None
        return generators.barabasi_albert(rng, t.routers, t.degree, edge)

    def _graphml(self, t: GraphMLTopo) -> nx.Graph | None:
        where: PathT = ("topology", "file")
        spec_path = Path(self.file)
        rel = Path(t.file)
        if not spec_path.is_file():
            self.bad(where, "a GraphML import needs a spec read from a file (the file is "
                     "found relative to it)")
            return None
        if rel.is_absolute() or ".." in rel.parts:
            self.bad(where, f"{t.file!r}: give a path relative to the spec's directory, "
                     "without '..'")
            return None
        path = spec_path.parent / rel
        try:
            size = path.stat().st_size
        except OSError as e:
            self.bad(where, f"{t.file!r}: cannot read: {e.strerror}")
            return None
        if size > bounds.MAX_GRAPHML_BYTES:
            self.bad(where, f"{t.file!r} is {units.fmt_size(size)}; at most "
                     f"{units.fmt_size(bounds.MAX_GRAPHML_BYTES)} (orchestrator/spec/bounds.py)")
            return None
        try:
            g = graphml.read(path, t.edge_routers, t.keep_largest)
        except graphml.GraphMLError as e:
            self.bad(where, f"{t.file!r}: {e}")
            return None
        if g.number_of_nodes() > bounds.MAX_ROUTERS:
            self.bad(where, f"{t.file!r} has {g.number_of_nodes()} routers; at most "
                     f"{bounds.MAX_ROUTERS} (orchestrator/spec/bounds.py)")
            return None
        return g

    def _rule(self, t: Any, tier: str) -> dict[str, Any]:
        written: LinkRule | None = getattr(t.links, tier) if t.links else None
        out: dict[str, Any] = {"capacity": units.fmt_rate(RULES[tier]["capacity"]),
                               "delay": units.fmt_duration(RULES[tier]["delay"])}
        if written is not None:
            if written.capacity is not None:
                out["capacity"] = units.fmt_rate(written.capacity)
            if written.delay is not None:
                out["delay"] = units.fmt_duration(written.delay)
            if written.buffer is not None:
                out["buffer"] = str(written.buffer)
        return out

    def topology(self, t: Any) -> None:
        count = _router_count(t)
        if count > bounds.MAX_ROUTERS:
            self.bad(("topology",), f"{count} routers; at most {bounds.MAX_ROUTERS} on one "
                     "machine (orchestrator/spec/bounds.py)")
            return
        seed = _seed(t.seed, self.data)
        g = self._graph(t, random.Random(f"{seed}:topology"))
        if g is None:
            return
        order = sorted(g.nodes, key=deployment.natural)
        edges = [n for n in order if g.nodes[n]["tier"] == "edge"]
        hosts = [(f"h{i + 1}", r) for i, r in enumerate(
            r for r in edges for _ in range(t.hosts_per_edge))]
        if g.number_of_nodes() + len(hosts) > bounds.MAX_NODES:
            self.bad(("topology", "hosts_per_edge"), f"{g.number_of_nodes()} routers and "
                     f"{len(hosts)} hosts; at most {bounds.MAX_NODES} nodes on one machine "
                     "(orchestrator/spec/bounds.py)")
            return
        nodes = self.data.setdefault("nodes", {})
        links = self.data.setdefault("links", [])
        if not isinstance(nodes, dict) or not isinstance(links, list):
            return  # validation reports the written sections
        line = self._line("topology")
        for name in [*order, *(h for h, _ in hosts)]:
            if name in nodes:
                self.bad(("nodes", name), f"node {name!r} is also generated by topology: "
                         "(routers c/a/e/r/l<n>, hosts h<n>); rename it")
                continue
            nodes[name] = {"role": "router"} if name in g else {"role": "host"}
            if line is not None:
                self.lines.by_path[("nodes", name)] = line
        rules = {tier: self._rule(t, tier) for tier in RULES}
        new = []
        for a, b in sorted((tuple(sorted(e, key=deployment.natural)) for e in g.edges),
                           key=lambda e: (deployment.natural(e[0]), deployment.natural(e[1]))):
            link = {"a": a, "b": b, **rules[generators.tier_of_edge(g, a, b)]}
            attrs = g.edges[a, b]
            if attrs.get("capacity_bps"):
                link["capacity"] = units.fmt_rate(attrs["capacity_bps"])
            if attrs.get("delay_s") is not None:
                link["delay"] = units.fmt_duration(round(attrs["delay_s"], 6))
            new.append(link)
        new += [{"a": h, "b": r, **rules["access"]} for h, r in hosts]
        for link in new:
            if line is not None:
                self.lines.by_path[("links", len(links))] = line
            links.append(link)
        self.graph = g
        self.record.update(generator=t.generator, topology_seed=seed,
                           tiers={n: g.nodes[n]["tier"] for n in order})

    # -- the router graph of the whole spec -----------------------------------
    def router_graph(self) -> nx.Graph:
        nodes = self.data.get("nodes")
        links = self.data.get("links")
        nodes = nodes if isinstance(nodes, dict) else {}
        role = {n: v.get("role") for n, v in nodes.items() if isinstance(v, dict)}
        g = nx.Graph()
        g.add_nodes_from(n for n, r in role.items() if r == "router")
        host_routers = set()
        for link in links if isinstance(links, list) else []:
            if not isinstance(link, dict):
                continue
            chain = link.get("chain")
            ends = chain if isinstance(chain, list) else [link.get("a"), link.get("b")]
            for a, b in zip(ends, ends[1:], strict=False):
                if not isinstance(a, str) or not isinstance(b, str) or a == b:
                    continue
                ra, rb = role.get(a), role.get(b)
                if ra == rb == "router":
                    g.add_edge(a, b)
                elif ra == "router" and rb == "host":
                    host_routers.add(a)
                elif rb == "router" and ra == "host":
                    host_routers.add(b)
        if self.graph is not None:
            for n in self.graph.nodes:
                if n in g:
                    g.nodes[n].update(self.graph.nodes[n])
        return deployment.annotate(g, host_routers)

    # -- deployment -----------------------------------------------------------
    def deploy(self, d: Any) -> None:
        g = self.router_graph()
        nodes = self.data.get("nodes")
        if not isinstance(nodes, dict) or g.number_of_nodes() == 0:
            self.bad(("deployment",), "the spec has no routers to deploy on")
            return
        written = [n for n in sorted(g.nodes, key=deployment.natural)
                   if isinstance(nodes[n], dict) and "queue" in nodes[n]]
        for n in written:
            self.bad(("nodes", n, "queue"), "with deployment: the routers' queues come from "
                     "the deployment (chosen routers) and defaults.router.queue (the rest); "
                     "remove this queue or the deployment")
        if written:
            return
        seed = _seed(d.seed, self.data)
        chosen = deployment.choose(g, d.fraction, d.strategy, seed)
        for n in chosen:
            nodes[n]["queue"] = d.protocol
        defaults = self.data.get("defaults")
        router = defaults.get("router") if isinstance(defaults, dict) else None
        queue = router.get("queue") if isinstance(router, dict) else None
        kind = queue.get("kind") if isinstance(queue, dict) else queue
        self.record.update(protocol=d.protocol, fraction=d.fraction, strategy=d.strategy,
                           deployment_seed=seed, deployed=chosen,
                           default_queue=str(kind or DEFAULT_KIND))
        if not self.record.get("tiers"):
            self.record["tiers"] = {n: g.nodes[n]["tier"]
                                    for n in sorted(g.nodes, key=deployment.natural)}

    # -- traffic --------------------------------------------------------------
    def traffic(self, tr: Any) -> None:
        nodes = self.data.get("nodes")
        links = self.data.get("links")
        if not isinstance(nodes, dict) or not isinstance(links, list):
            return
        role = {n: v.get("role") for n, v in nodes.items() if isinstance(v, dict)}
        hosts: dict[str, str] = {}
        for link in links:
            if isinstance(link, dict) and isinstance(link.get("a"), str) \
                    and isinstance(link.get("b"), str):
                a, b = link["a"], link["b"]
                if role.get(a) == "host" and role.get(b) == "router":
                    hosts.setdefault(a, b)
                elif role.get(b) == "host" and role.get(a) == "router":
                    hosts.setdefault(b, a)
        order = sorted(hosts.items(), key=lambda h: deployment.natural(h[0]))
        if tr.flows == 0 and tr.web is None:
            self.bad(("traffic",), "no traffic: give flows: N (long-lived flows over the "
                     "matrix) and/or web: {...} (short flows)")
            return
        if tr.flows > 0:
            self.long_lived(tr, order)
        if tr.web is not None and not self.problems:
            self.web(tr.web, order)

    def long_lived(self, tr: Any, order: list[tuple[str, str]]) -> None:
        seed = _seed(tr.seed, self.data)
        rng = random.Random(f"{seed}:traffic")
        try:
            pairs = traffic.pairs(rng, order, tr.matrix, tr.flows, tr.hotspots, tr.hot_share,
                                  tr.avoid_same_router)
        except ValueError as e:
            self.bad(("traffic",), str(e))
            return
        flows = self.data.setdefault("flows", [])
        if not isinstance(flows, list):
            return
        taken = {f.get("id") for f in flows if isinstance(f, dict)}
        line = self._line("traffic")
        ids = []
        for i, (src, dst) in enumerate(pairs):
            fid = f"t{i + 1}"
            if fid in taken:
                self.bad(("traffic",), f"flow id {fid!r} is written in flows: and generated "
                         "by traffic: (t<n>); rename the written flow")
                return
            flow: dict[str, Any] = {"id": fid, "src": src, "dst": dst}
            if tr.proto:
                flow["proto"] = tr.proto
            if tr.start_spread > 0:
                flow["start"] = units.fmt_duration(round(rng.uniform(0, tr.start_spread), 3))
            if line is not None:
                self.lines.by_path[("flows", len(flows))] = line
            flows.append(flow)
            ids.append(fid)
        self.record.update(matrix=tr.matrix, traffic_seed=seed, traffic_flows=ids)

    def _web_hosts(self, servers_field: int | list[str], clients_field: int | list[str] | None,
                   names: list[str], rng: random.Random) -> tuple[list[str], list[str]] | None:
        """The web servers and clients: named hosts as written, or counts drawn with the
        web seed (servers first, clients among the rest); None after a problem."""
        path = ("traffic", "web")
        for field, value in (("servers", servers_field), ("clients", clients_field)):
            if isinstance(value, list):
                unknown = [h for h in value if h not in names]
                if unknown:
                    self.bad((*path, field), f"{', '.join(map(repr, unknown))} is not a host "
                             f"of this spec; hosts: {', '.join(names[:12])}"
                             + (" ..." if len(names) > 12 else ""))
                    return None
                if len(set(value)) != len(value):
                    self.bad((*path, field), "a host is named twice")
                    return None
        if isinstance(servers_field, list):
            servers = sorted(servers_field, key=deployment.natural)
        else:
            if servers_field >= len(names):
                self.bad((*path, "servers"), f"{servers_field} servers among {len(names)} "
                         "hosts leave no client")
                return None
            servers = sorted(rng.sample(names, servers_field), key=deployment.natural)
        rest = [h for h in names if h not in servers]
        if isinstance(clients_field, list):
            both = sorted(set(clients_field) & set(servers))
            if both:
                self.bad((*path, "clients"), f"{', '.join(both)} named as server and client; "
                         "a session's two ends are different hosts")
                return None
            return servers, sorted(clients_field, key=deployment.natural)
        if not rest:
            self.bad((*path, "servers"), f"{len(servers)} servers among {len(names)} hosts "
                     "leave no client")
            return None
        if clients_field is not None and clients_field > len(rest):
            self.bad((*path, "clients"), f"{clients_field} clients, but only {len(rest)} "
                     "hosts are not servers")
            return None
        clients = rest if clients_field is None else sorted(rng.sample(rest, clients_field),
                                                            key=deployment.natural)
        return servers, clients

    def web(self, w: WebSpec, order: list[tuple[str, str]]) -> None:
        """traffic.web: sessions drawn by orchestrator.topology.web, one flow w<n> per
        (server, client) pair with its objects."""
        flows = self.data.setdefault("flows", [])
        if not isinstance(flows, list):
            return
        try:
            end_s = units.parse_duration(self.data.get("duration"))
        except (TypeError, ValueError):
            return  # validation reports the duration
        names = [h for h, _ in order]
        if w.proto == "tcp":
            self.bad(("traffic", "web", "proto"), "web objects are played by xcpperf (one "
                     "connection per object); kernel TCP (iperf3) cannot play an object "
                     "schedule: use xcp, or newreno / hstcp for the TCP baseline")
            return
        seed = _seed(w.seed, self.data)
        rng = random.Random(f"{seed}:web")
        picked = self._web_hosts(w.servers, w.clients, names, rng)
        if picked is None:
            return
        servers, clients = picked
        sizes = web.Sizes(w.size.dist, float(w.size.mean), w.size.shape, int(w.size.max))
        drawn = web.sessions(rng, servers, clients, w.sessions, w.arrival_rate,
                             w.objects_per_session, sizes, w.think_time.dist,
                             w.think_time.mean, w.start, end_s)
        if not drawn.flows:
            self.bad(("traffic", "web"), f"no session arrives before the end of the run "
                     f"({end_s:g}s): raise arrival_rate or lower start")
            return
        taken = {f.get("id") for f in flows if isinstance(f, dict)}
        line = self.lines.line(("traffic", "web")) or self._line("traffic")
        ids = []
        for i, wf in enumerate(drawn.flows):
            fid = f"w{i + 1}"
            if fid in taken:
                self.bad(("traffic", "web"), f"flow id {fid!r} is written in flows: and "
                         "generated by traffic.web: (w<n>); rename the written flow")
                return
            if len(wf.objects) > bounds.MAX_OBJECTS_PER_FLOW:
                self.bad(("traffic", "web"), f"flow {fid} ({wf.server} -> {wf.client}) would "
                         f"carry {len(wf.objects)} objects; at most "
                         f"{bounds.MAX_OBJECTS_PER_FLOW} per flow (one xcpperf process): "
                         "fewer sessions, or more servers or clients")
                return
            flow: dict[str, Any] = {
                "id": fid, "src": wf.server, "dst": wf.client,
                "objects": [{"at": f"{t:.6f}s", "size": f"{b}B"} for t, b in wf.objects],
                "max_concurrent": w.max_concurrent}
            if w.proto:
                flow["proto"] = w.proto
            if line is not None:
                self.lines.by_path[("flows", len(flows))] = line
            flows.append(flow)
            ids.append(fid)
        self.record.update(web_seed=seed, web_flows=ids, web_sessions=drawn.sessions,
                           web_objects=drawn.objects)


def expand(data: dict[str, Any], lines: Lines, file: str) -> RTrial | None:
    """Expand the trial sections of `data` in place; None when it has none."""
    if not any(k in data for k in ("topology", "deployment", "traffic")):
        return None
    root = _root(data.get("topology"))
    if root is None:
        valid = ", ".join(GENERATORS)
        raise SpecError([lines.problem(("topology", "generator"), "unknown or missing "
                                       f"generator; valid: {valid}")])
    try:
        sections = root.model_validate(data)
    except ValidationError as e:
        raise SpecError(from_validation_error(e, data, lines, root)) from None
    x = _Expander(data, lines, file)
    if sections.topology is not None:
        x.topology(sections.topology)
    if not x.problems and sections.deployment is not None:
        x.deploy(sections.deployment)
    if not x.problems and sections.traffic is not None:
        x.traffic(sections.traffic)
    if x.problems:
        raise SpecError(sorted(x.problems, key=lambda p: p.line or 0))
    return RTrial(**x.record)


GENERATORS: dict[str, type[BaseModel]] = {
    "tiers": TiersTopo, "waxman": WaxmanTopo, "barabasi-albert": BarabasiAlbertTopo,
    "dumbbells": DumbbellsTopo, "graphml": GraphMLTopo}
_ROOTS: dict[str | None, type[TrialSections]] = {}


def _root(topology: Any) -> type[TrialSections] | None:
    """The sections' model with `topology` typed as its generator's model (so problems
    read `topology.core`, not a union branch), None for an unknown generator."""
    gen = topology.get("generator") if isinstance(topology, dict) else None
    if topology is not None and isinstance(topology, dict) and gen not in GENERATORS:
        return None
    key = gen if isinstance(gen, str) else None
    if key not in _ROOTS:
        model = GENERATORS[key] if key else None
        _ROOTS[key] = TrialSections if model is None else create_model(
            f"TrialSections_{key}", __base__=TrialSections,
            topology=(model | None, None))
    return _ROOTS[key]


__all__ = ["TopologySpec", "expand"]
