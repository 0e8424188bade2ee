"""The trial sections of a spec (issue 17): `topology:`, `deployment:`, `traffic:`.

They are expanded into ordinary `nodes`, `links` and `flows` (and router queues)
before the spec is validated (orchestrator/spec/trial.py), so everything a generated
topology produces is checked like a hand-written one. Every size-driving number has
its bound in orchestrator/spec/bounds.py. `RTrial` is what the expansion chose,
recorded in the resolved spec and the plan.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from orchestrator.spec import bounds
from orchestrator.spec.queues import KINDS, queue_model
from orchestrator.spec.types import BufferSize, Duration, Probability, Rate, Size

Strategy = Literal["core-first", "edge-first", "peering", "random", "highest-degree",
                   "highest-betweenness"]
# What a deployment deploys: the kinds whose routers give XCP feedback (their models say).
if TYPE_CHECKING:
    Protocol = str
else:
    Protocol = Literal[tuple(k for k in KINDS if queue_model(k).xcp_feedback)]
Matrix = Literal["uniform", "gravity", "hotspot"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LinkRule(_Strict):
    """Capacity, delay and buffer of the generated links of one tier (a GraphML file's
    own LinkSpeed and coordinates win over the rule)."""

    capacity: Rate | None = None
    delay: Duration | None = None
    buffer: BufferSize | None = None


class LinkRules(_Strict):
    """Per tier: core-core links take `core`, links reaching an aggregation router
    `aggregation`, links reaching an edge router `edge`, host links `access`."""

    core: LinkRule | None = None
    aggregation: LinkRule | None = None
    edge: LinkRule | None = None
    access: LinkRule | None = None


class _Topo(_Strict):
    seed: int | None = Field(default=None, ge=0, le=2**63 - 1)  # default: the spec's seed
    hosts_per_edge: int = Field(default=1, ge=0, le=bounds.MAX_HOSTS_PER_EDGE)
    links: LinkRules | None = None


class TiersTopo(_Topo):
    generator: Literal["tiers"]
    core: int = Field(ge=1, le=bounds.MAX_TIER_ROUTERS)
    aggregation: int = Field(default=2, ge=0, le=bounds.MAX_TIER_FANOUT)  # per core router
    edge: int = Field(default=2, ge=0, le=bounds.MAX_TIER_FANOUT)  # per aggregation router
    redundancy: Probability = 0.0


class _Flat(_Topo):
    routers: int = Field(ge=2, le=bounds.MAX_ROUTERS)
    edge_routers: int | None = Field(default=None, ge=1, le=bounds.MAX_ROUTERS)  # None: half


class WaxmanTopo(_Flat):
    generator: Literal["waxman"]
    alpha: float = Field(default=0.4, gt=0, le=1)
    beta: float = Field(default=0.4, gt=0, le=1)


class BarabasiAlbertTopo(_Flat):
    generator: Literal["barabasi-albert"]
    degree: int = Field(default=2, ge=1, le=bounds.MAX_GENERATED_DEGREE)


class DumbbellsTopo(_Topo):
    generator: Literal["dumbbells"]
    dumbbells: int = Field(ge=1, le=bounds.MAX_TIER_FANOUT)


class GraphMLTopo(_Topo):
    generator: Literal["graphml"]
    file: str = Field(min_length=1)  # relative to the spec's directory
    keep_largest: bool = False
    edge_routers: int | None = Field(default=None, ge=1, le=bounds.MAX_ROUTERS)


TopologySpec = Annotated[TiersTopo | WaxmanTopo | BarabasiAlbertTopo | DumbbellsTopo
                         | GraphMLTopo, Field(discriminator="generator")]


class DeploymentSpec(_Strict):
    """`fraction` of the routers (rounded half up) get `protocol`'s queue, chosen by
    `strategy`; the others keep defaults.router.queue (built-in droptail)."""

    protocol: Protocol
    fraction: float = Field(ge=0, le=1)
    strategy: Strategy
    seed: int | None = Field(default=None, ge=0, le=2**63 - 1)  # default: the spec's seed


class ObjectSizes(_Strict):
    """Object sizes: `pareto` (shape > 1; scale from the mean), `exponential` or
    `constant`; every draw is cut at `max` (a truncated Pareto's mean is below `mean`)."""

    dist: Literal["pareto", "exponential", "constant"] = "pareto"
    mean: Size
    shape: float = Field(default=1.2, gt=1, le=10)  # pareto only
    max: Size = Field(default="10MB", validate_default=True)


class ThinkTime(_Strict):
    dist: Literal["exponential", "constant"] = "exponential"
    mean: Duration


# hosts named in a web section: distinct names, at most as many as a spec has nodes
HostNames = Annotated[list[str], Field(min_length=1, max_length=bounds.MAX_NODES)]


class WebSpec(_Strict):
    """Web-like short flows (docs/web-traffic.md): `sessions` arriving as a Poisson
    process of `arrival_rate` per second from `start`, each between a random client and
    a random server, fetching a geometric number of objects (mean `objects_per_session`)
    `think_time` apart. Every (server, client) pair in use becomes one flow w<n> whose
    objects are its sessions' objects."""

    sessions: int = Field(ge=1, le=bounds.MAX_WEB_SESSIONS)
    arrival_rate: float = Field(gt=0, le=bounds.MAX_WEB_ARRIVAL_RATE)  # sessions per second
    objects_per_session: float = Field(default=1.0, ge=1,
                                       le=bounds.MAX_WEB_OBJECTS_PER_SESSION)
    size: ObjectSizes
    think_time: ThinkTime = ThinkTime.model_validate({"mean": "1s"})
    # a count of hosts drawn with the seed, or the hosts by name (seed 003 places its web
    # servers and clients at given nodes); clients None: every host that is not a server
    servers: Annotated[int, Field(ge=1, le=bounds.MAX_NODES)] | HostNames = 1
    clients: Annotated[int, Field(ge=1, le=bounds.MAX_NODES)] | HostNames | None = None
    proto: Literal["xcp", "newreno", "hstcp", "tcp"] | None = None  # None: defaults.flow
    start: Duration = 0.0
    max_concurrent: int = Field(default=32, ge=1, le=bounds.MAX_CONCURRENT_OBJECTS)
    seed: int | None = Field(default=None, ge=0, le=2**63 - 1)  # default: the spec's seed


class TrafficSpec(_Strict):
    """`flows` long-lived flows between the spec's hosts, pairs from a traffic matrix,
    and/or `web` short flows."""

    matrix: Matrix = "uniform"
    flows: int = Field(default=0, ge=0, le=bounds.MAX_FLOWS)
    web: WebSpec | None = None
    proto: Literal["xcp", "newreno", "hstcp", "tcp"] | None = None  # None: defaults.flow
    seed: int | None = Field(default=None, ge=0, le=2**63 - 1)  # default: the spec's seed
    hotspots: int = Field(default=1, ge=1, le=bounds.MAX_NODES)
    hot_share: Probability = 0.5
    start_spread: Duration = 0.0  # starts uniform in [0, start_spread]
    avoid_same_router: bool = True


class TrialSections(BaseModel):
    """The three sections alone (the rest of the spec is validated after expansion)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    topology: TopologySpec | None = None
    deployment: DeploymentSpec | None = None
    traffic: TrafficSpec | None = None


class RTrial(_Strict):
    """What the expansion chose: in resolved.json and (as `trial`) in plan.json."""

    generator: str | None = None
    topology_seed: int | None = None
    tiers: dict[str, str] = Field(default_factory=dict)  # router -> core|aggregation|edge
    protocol: str | None = None
    fraction: float | None = None
    strategy: str | None = None
    deployment_seed: int | None = None
    deployed: list[str] = Field(default_factory=list)  # in rank order
    default_queue: str | None = None
    matrix: str | None = None
    traffic_seed: int | None = None
    traffic_flows: list[str] = Field(default_factory=list)
    web_seed: int | None = None
    web_flows: list[str] = Field(default_factory=list)
    web_sessions: int = 0  # sessions that arrived before the end of the run
    web_objects: int = 0  # their objects that start before the end of the run
