"""The experiment spec as written (YAML), as pydantic models.

Fields left out are None here; `orchestrator.spec.resolve` applies the one
precedence rule (the most specific setting wins: link direction > link >
router (queue only) > `defaults:` > built-in) and produces the ResolvedSpec
that the planner and the analysis consume. Quantities are parsed at the edge
(see `types.py`): the models hold SI numbers.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from orchestrator.spec.apps import AppSpec
from orchestrator.spec.bounds import (
    MAX_CONCURRENT_OBJECTS,
    MAX_OBJECTS_PER_FLOW,
    MAX_PARALLEL_XCPPERF,
)
from orchestrator.spec.captures import CaptureSpec
from orchestrator.spec.node_limits import NodeLimits
from orchestrator.spec.queues import QueueSpec
from orchestrator.spec.trial_models import DeploymentSpec, TopologySpec, TrafficSpec
from orchestrator.spec.types import BufferSize, Duration, Name, Probability, Rate, Size

Proto = Literal["xcp", "newreno", "hstcp", "tcp", "udp"]
KernelCC = Literal["reno", "cubic", "bbr"]
# Loss recovery: SACK-based (default), NewReno (RFC 6582, no SACK), Reno (one hole per
# fast recovery). Kernel TCP offers sack and newreno (net.ipv4.tcp_sack per namespace).
Recovery = Literal["sack", "newreno", "reno"]
RtoBackoff = Literal["sample", "new_data"]
XcpFeedback = Literal["all_acks", "new_acks"]
Op = Literal[">=", "<=", ">", "<", "=="]
Metric = Literal[
    # per flow (flow:, or flows: for their sum)
    "throughput", "bytes", "retransmits", "timeouts", "srtt", "cwnd", "convergence_time",
    # per link direction (link:)
    "utilization", "drops", "drops_queue", "drops_loss", "mean_queue", "max_queue",
    # over a group of flows (flows:)
    "jain", "ratio", "min_share", "maxmin_error",
    # web-like short flows (flows with objects:; default all of them): FCT percentiles
    # and mean in seconds, the fraction of scheduled objects completed
    "fct_p50", "fct_p99", "fct_mean", "objects_completed",
]
FLOW_METRICS = ("throughput", "bytes", "retransmits", "timeouts", "srtt", "cwnd",
                "convergence_time")
LINK_METRICS = ("utilization", "drops", "drops_queue", "drops_loss", "mean_queue", "max_queue")
GROUP_METRICS = ("jain", "ratio", "min_share", "maxmin_error", "fct_p50", "fct_p99", "fct_mean",
                 "objects_completed")


class Strict(BaseModel):
    """Unknown keys are errors: they are almost always typos."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class LossSpec(Strict):
    """`loss: 1%`, `{model: bernoulli, p: 1%}` or `{model: gilbert_elliott, p, r, loss_bad}`."""

    model: Literal["none", "bernoulli", "gilbert_elliott"]
    p: Probability | None = None
    r: Probability | None = None
    loss_bad: Probability | None = None
    loss_good: Probability | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, v: Any) -> Any:
        if isinstance(v, str) and v.strip() == "none":
            return {"model": "none"}
        if isinstance(v, str | int | float) and not isinstance(v, bool):
            return {"model": "bernoulli", "p": v}
        return v

    @classmethod
    def __get_pydantic_json_schema__(cls, core: CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        full = handler.resolve_ref_schema(handler(core))
        return {"anyOf": [{"type": "string", "pattern": r"^([0-9]*\.?[0-9]+\s*%|none)$",
                           "description": "Bernoulli loss as a percentage, or none"},
                          {"type": "number", "minimum": 0, "maximum": 1}, full]}

    @model_validator(mode="after")
    def _fields_match_model(self) -> LossSpec:
        extra = {"none": ("p", "r", "loss_bad", "loss_good"),
                 "bernoulli": ("r", "loss_bad", "loss_good"),
                 "gilbert_elliott": ()}[self.model]
        given = [k for k in extra if getattr(self, k) is not None]
        if given:
            raise ValueError(f"model {self.model} takes no {', '.join(given)}")
        if self.model in ("bernoulli", "gilbert_elliott") and self.p is None:
            raise ValueError(f"model {self.model} needs p")
        if self.model == "gilbert_elliott" and self.r is None:
            raise ValueError("model gilbert_elliott needs r (probability bad -> good)")
        return self


class LinkParams(Strict):
    """What a link direction has; settable in defaults.link, a link, a direction."""

    capacity: Rate | None = None
    delay: Duration | None = None
    buffer: BufferSize | None = None
    loss: LossSpec | None = None
    queue: QueueSpec | None = None
    up: bool | None = None


class LinkSpec(LinkParams):
    """A link between two nodes (`a`, `b`), or a `chain` of links sharing settings."""

    id: Name | None = None
    a: Name | None = None
    b: Name | None = None
    chain: list[Name] | None = Field(default=None, min_length=2)
    a_to_b: LinkParams | None = None
    b_to_a: LinkParams | None = None

    @model_validator(mode="after")
    def _ends(self) -> LinkSpec:
        if self.chain is not None:
            if self.a is not None or self.b is not None:
                raise ValueError("give either a and b, or chain, not both")
            if self.id is not None:
                raise ValueError("a chain has no id: its links are named '<a>-<b>'")
            if self.a_to_b is not None or self.b_to_a is not None:
                raise ValueError("per-direction overrides are for single links, not chains")
        elif self.a is None or self.b is None:
            raise ValueError("a link needs both ends: a: NODE and b: NODE "
                             "(or chain: [N1, N2, ...])")
        return self


# How a host's xcpperf flows reach the wire (orchestrator/spec/host_io.py): `kernel`
# (default) a raw IP socket; `xdp` an AF_XDP socket (xcpperf --xdp), all of the host's
# xcpperf flows in one process.
HostIo = Literal["kernel", "xdp"]


class NodeSpec(Strict):
    role: Literal["host", "router"]
    queue: QueueSpec | None = None  # routers: discipline of every direction they emulate
    limits: NodeLimits | None = None  # CPU set, memory (docker backend; node_limits.py)
    io: HostIo | None = None  # hosts: overrides defaults.host.io

    @model_validator(mode="after")
    def _queue_on_routers(self) -> NodeSpec:
        if self.role == "host" and self.queue is not None:
            raise ValueError("a host has no queue (queues live on routers and links)")
        if self.role == "router" and self.io is not None:
            raise ValueError("io is a host's (how its flows reach the wire); routers are "
                             "the engine's")
        return self


class FlowParams(Strict):
    """Settable in defaults.flow and on each flow."""

    proto: Proto | None = None
    cc: KernelCC | None = None
    start: Duration | None = None
    stop: Duration | None = None
    size: Size | None = None
    # Connections of one tool process: xcpperf -P carries up to 1024 (seed 001's
    # n = 1024 long flows); iperf3 (proto tcp, udp) refuses -P past 128 (flows.py).
    parallel: int | None = Field(default=None, ge=1, le=MAX_PARALLEL_XCPPERF)
    rate: Rate | None = None
    recovery: Recovery | None = None
    # false: the receiver acknowledges every segment, as ns-2's TCPSink (and the
    # seeds' XCP sinks built on it) do; true (default): every second segment or
    # 40 ms, as TCP stacks do. xcpperf flows only (xcp, newreno, hstcp).
    delayed_ack: bool | None = None
    # When the sender's timeout back-off ends: `sample` (default) at the next RTT
    # sample, as Linux; `new_data` once data sent after the timeout is ACKed, as
    # ns-2's TcpAgent. xcpperf flows only (xcpperf --rto-backoff).
    rto_backoff: RtoBackoff | None = None
    # Which ACKs' XCP feedback the sender applies: `all_acks` (default) or
    # `new_acks` (a duplicate ACK's is dropped, as ns-2's XcpAgent). xcp flows only.
    xcp_feedback: XcpFeedback | None = None


class ObjectItem(Strict):
    """One object of a web-like flow: sent `at` (from the flow's start) on its own
    connection, `size` bytes (docs/web-traffic.md)."""

    at: Duration
    size: Size


class FlowSpec(FlowParams):
    id: Name
    src: Name
    dst: Name
    port: int | None = Field(default=None, ge=1024, le=65535)
    # Web-like short flows: one connection per object (xcpperf --objects), at most
    # max_concurrent open at once; src serves the objects, dst fetches them.
    objects: list[ObjectItem] | None = Field(default=None, min_length=1,
                                             max_length=MAX_OBJECTS_PER_FLOW)
    max_concurrent: int | None = Field(default=None, ge=1, le=MAX_CONCURRENT_OBJECTS)
    # A command pair run unmodified over the XCP socket stack: server on dst, client on
    # src (orchestrator/spec/apps.py, docs/socket-stack.md).
    app: AppSpec | None = None


class RouterDefaults(Strict):
    queue: QueueSpec | None = None


class HostDefaults(Strict):
    io: HostIo | None = None


class Defaults(Strict):
    link: LinkParams | None = None
    router: RouterDefaults | None = None
    host: HostDefaults | None = None
    flow: FlowParams | None = None


class SetLink(LinkParams):
    link: str
    direction: Literal["a_to_b", "b_to_a", "both"] = "both"

    @model_validator(mode="after")
    def _something_to_set(self) -> SetLink:
        if self.queue is not None:
            raise ValueError("the queue kind of a running link cannot change; "
                             "valid keys to change: capacity, delay, buffer, loss, up")
        if all(getattr(self, k) is None for k in ("capacity", "delay", "buffer", "loss", "up")):
            raise ValueError("nothing to set: give at least one of capacity, delay, buffer, "
                             "loss, up")
        return self


# One flow id or a list of them.
FlowIds = Annotated[list[str], WithJsonSchema(
    {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]})]

ACTIONS = ("set_link", "link_down", "link_up", "flow_start", "flow_stop")


class EventSpec(Strict):
    """One timeline event: `at` and exactly one action."""

    at: Duration
    set_link: SetLink | None = None
    link_down: str | None = None
    link_up: str | None = None
    flow_start: FlowIds | None = None
    flow_stop: FlowIds | None = None
    note: str | None = None

    @field_validator("flow_start", "flow_stop", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v

    @model_validator(mode="after")
    def _one_action(self) -> EventSpec:
        given = [a for a in ACTIONS if getattr(self, a) is not None]
        if len(given) != 1:
            raise ValueError(f"an event needs exactly one action of {', '.join(ACTIONS)}; "
                             f"got {', '.join(given) or 'none'}")
        return self

    @property
    def action(self) -> str:
        return next(a for a in ACTIONS if getattr(self, a) is not None)


class Window(Strict):
    start: Duration = 0.0
    stop: Duration | None = None  # None = end of run


WhenOp = Literal[">=", "<=", ">", "<", "==", "!="]


class Condition(Strict):
    """`when:` item: the check applies only if the spec's field at `path` (the path
    syntax of --set/--param) compares true with `value`, read in the field's unit."""

    path: str
    op: WhenOp
    value: bool | int | float | str


class Check(Strict):
    """One expectation (issue 6). Parsed and validated here; evaluated by the analysis.

    Value units: throughput bit/s (or a fraction with `relative_to: capacity`:
    of `link`'s capacity, or of the flow's bottleneck without link), bytes bytes,
    srtt/convergence_time seconds, utilization/jain/ratio a fraction,
    drops/retransmits/timeouts counts, queues packets, cwnd bytes. Strings with units
    (`25Mbps`, `95%`, `2s`, `200MB`) are accepted and converted. `jain` without
    flows covers all flows; drops without link count every link. Semantics of
    each metric: orchestrator/analysis/expectations.py. `when` (all must hold)
    makes the check conditional on the spec after overrides (orchestrator.spec.when);
    otherwise it is skipped, neither passed nor failed. `min_share` (flows, default
    all) is the smallest flow's throughput as a fraction of the fair share C/k
    (C: `link`'s capacity, or the first flow's bottleneck; k: the flows named).
    `not_reproduced: REASON` marks a paper's number xcplab does not reproduce: the
    check is measured and reported "not reproduced" with the reason, never passed.
    `maxmin_error` (flows, default all) is the worst relative distance of a flow's
    goodput from its exact max-min fair rate, judged in every interval the max-min
    allocation is constant, from `settle` (default 2 s) after the interval begins.
    """

    name: str | None = None
    metric: Metric
    flow: str | None = None
    flows: list[str] | None = None
    link: str | None = None
    direction: Literal["a_to_b", "b_to_a"] | None = None
    op: Op
    value: float | str
    relative_to: Literal["capacity"] | None = None
    window: Window | None = None
    settle: Duration | None = None  # maxmin_error only: unjudged time after each change
    paper: str | None = None
    when: list[Condition] | None = None
    # xcplab does not reproduce the paper's number, and why: the check is still
    # measured, but its verdict is "not reproduced", never a pass.
    not_reproduced: str | None = Field(default=None, min_length=1)


class Spec(Strict):
    name: Name
    description: str | None = None
    duration: Duration
    seed: int = Field(default=1, ge=0, le=2**63 - 1)
    metrics_interval: Duration = 0.1
    scale: float = Field(default=1.0, gt=0, le=1000)
    defaults: Defaults | None = None
    nodes: dict[Name, NodeSpec] = Field(min_length=1)
    links: list[LinkSpec] = Field(min_length=1)
    flows: list[FlowSpec] = Field(default_factory=list)
    timeline: list[EventSpec] = Field(default_factory=list)
    expect: list[Check] = Field(default_factory=list)
    captures: list[CaptureSpec] = Field(default_factory=list)  # docs/captures.md
    # incremental-deployment trials (docs/deployment.md): expanded into nodes, links,
    # flows and router queues before validation (orchestrator/spec/trial.py)
    topology: TopologySpec | None = None
    deployment: DeploymentSpec | None = None
    traffic: TrafficSpec | None = None
